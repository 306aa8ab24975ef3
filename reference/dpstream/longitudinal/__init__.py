"""Seed 002: continual release of synthetic data from longitudinal collections (Bun et al. 2024).

Algorithms: :class:`FixedWindowSynthesizer` (002-alg1), its categorical extension
:class:`CategoricalFixedWindowSynthesizer`, :class:`CumulativeSynthesizer` (002-alg2); queries on the
released data (:mod:`~dpstream.longitudinal.queries`), the padding population
(:mod:`~dpstream.longitudinal.padding`) and test generators (:mod:`~dpstream.longitudinal.generators`).
Documentation: docs/longitudinal.md; errata: docs/errata/longitudinal.md.
"""

from dpstream.longitudinal.categorical import CategoricalFixedWindowSynthesizer
from dpstream.longitudinal.cumulative import CumulativeRelease, CumulativeSynthesizer
from dpstream.longitudinal.data import LongitudinalData
from dpstream.longitudinal.fixed_window import FixedWindowSynthesizer, PaddingExhaustedError, WindowRelease
from dpstream.longitudinal.generators import all_ones, random_matrix
from dpstream.longitudinal.padding import de_bruijn, padding_matrix
from dpstream.longitudinal.queries import (
    CumulativeQuery,
    WindowQuery,
    debiased_answer,
    histogram_queries,
    poverty_queries,
)

__all__ = [
    "CategoricalFixedWindowSynthesizer",
    "CumulativeQuery",
    "CumulativeRelease",
    "CumulativeSynthesizer",
    "FixedWindowSynthesizer",
    "LongitudinalData",
    "PaddingExhaustedError",
    "WindowQuery",
    "WindowRelease",
    "all_ones",
    "de_bruijn",
    "debiased_answer",
    "histogram_queries",
    "padding_matrix",
    "poverty_queries",
    "random_matrix",
]
