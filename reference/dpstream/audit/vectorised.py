"""Vectorised samplers of our own counters: many runs at once from a noise matrix.

Every counter of :mod:`dpstream.counters` releases r = W (S f + z) (its
:class:`~dpstream.audit.linear_model.LinearReleaseModel`: noisy statistics S f + z, releases as fixed
combinations W of them). :class:`LinearModelSampler` draws the noise of ``runs`` runs as one matrix
Z (``runs x m``, column j from law j, :class:`dpstream.insecure.batch.BulkNoise`) and returns
(S f + Z) W^T: the releases of ``runs`` independent runs. ``releases(f, Z)`` is the deterministic
part; ``tests/audit/test_vectorised.py`` records the noise tape of a line-by-line run of each counter,
puts the tape's values in a one-row Z by site (the model's sites are the counter's draw sites) and
checks that the releases agree, so the vectorised sampler *is* the implementation, not only its model.

The models themselves come from the catalog (``Entry.model`` / ``Entry.printed_model``, built by
:mod:`dpstream.audit.counters.models`); the equality test runs every catalog entry that has a linear model on
its own known-answer vectors' parameters and inputs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import numpy.typing as npt

from dpstream.audit.linear_model import LinearReleaseModel, NoiseLaw
from dpstream.audit.protocol import flatten
from dpstream.errors import DPStreamInputError, require_int_at_least
from dpstream.insecure.batch import BulkNoise
from dpstream.insecure.planted import PlantedLeak

__all__ = ["LinearModelSampler", "PlantedModelSampler", "noise_matrix"]

FloatArray = npt.NDArray[np.float64]


def noise_matrix(laws: Sequence[NoiseLaw], runs: int, seed: int) -> FloatArray:
    """``runs x m`` noise: column j from ``laws[j]``; equal laws are drawn together, in order of first use."""
    runs = require_int_at_least("runs", runs, 1)
    bulk = BulkNoise(seed)
    Z = np.empty((runs, len(laws)), dtype=np.float64)
    groups: dict[NoiseLaw, list[int]] = {}
    for j, law in enumerate(laws):
        groups.setdefault(law, []).append(j)
    for law, cols in groups.items():
        Z[:, cols] = bulk.draw(law.kind, law.parameter, (runs, len(cols)))
    return Z


class LinearModelSampler:
    """Vectorised runs of an algorithm with releases r = W (S f + z) (see the module docstring)."""

    chunk = 50_000

    def __init__(self, model: LinearReleaseModel) -> None:
        self.model = model
        self._St = np.ascontiguousarray(model.statistics)
        self._Wt = np.ascontiguousarray(model.combination.T)

    def releases(self, f: Sequence[Any], Z: npt.ArrayLike) -> FloatArray:
        """The releases of one run per row of the noise matrix ``Z`` on input ``f``."""
        fv = flatten(f)
        if fv.size != self.model.input_length:
            raise DPStreamInputError("inputs", f"must have {self.model.input_length} numbers", fv.size)
        s = np.asarray(Z, dtype=np.float64) + self._St @ fv
        return np.asarray(s @ self._Wt)

    def sample(self, inputs: Sequence[Any], runs: int, seed: int) -> FloatArray:
        return self.releases(inputs, noise_matrix(self.model.laws, runs, seed))


class PlantedModelSampler(LinearModelSampler):
    """INSECURE: :class:`LinearModelSampler` with a :class:`~dpstream.insecure.planted.PlantedLeak` planted into its
    noise matrix, as :class:`~dpstream.insecure.planted.PlantedNoise` plants it into a line-by-line run: every law's
    scale at a matching site divided by c (``scale/c``), the first term at a matching site without noise
    (``noiseless``), the second matching term given the first's noise (``shared``; terms in the model's order, which
    is the draw order). The vectorised runs the power calibration uses for the counters
    (:mod:`dpstream.conformance.power`)."""

    def __init__(self, model: LinearReleaseModel, leak: PlantedLeak) -> None:
        if leak.kind == "scale":
            model = replace(model, laws=tuple(law.scaled(1.0 / leak.factor) if leak.matches(site) else law
                                              for site, law in zip(model.sites, model.laws, strict=True)))
        super().__init__(model)
        self.leak = leak
        self._terms = [j for j, site in enumerate(model.sites) if leak.matches(site)]

    def plant(self, Z: npt.ArrayLike) -> FloatArray:
        """The noise matrix with the leak planted (a copy)."""
        out = np.array(Z, dtype=np.float64)
        if self.leak.kind == "noiseless" and self._terms:
            out[:, self._terms[0]] = 0.0
        if self.leak.kind == "shared" and len(self._terms) >= 2:
            first, second = self._terms[:2]
            if self.model.laws[first].kind == self.model.laws[second].kind:
                out[:, second] = out[:, first]
        return out

    def sample(self, inputs: Sequence[Any], runs: int, seed: int) -> FloatArray:
        return self.releases(inputs, self.plant(noise_matrix(self.model.laws, runs, seed)))
