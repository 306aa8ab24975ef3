"""The streaming protocol an audited implementation must follow, and how audits run it.

An audited object needs only ``step(x) -> release`` (:class:`dpstream.convention.Streaming`)
and must be built by a *factory* that receives the noise source,
``factory(noise) -> mechanism``, drawing all its randomness from that source. Nothing
else of the library is required: a third-party or deliberately broken implementation
is audited exactly like ours (docs/audits.md, "The protocol").

A *transcript* is the list of releases of one run, one per step. Audits that work on
numbers turn a transcript into a flat float vector with :func:`flatten` (scalars, arrays
and nested lists of numbers are concatenated in order); algorithms with other outputs
pass their own ``encode``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from dpstream.convention import Streaming
from dpstream.errors import require_int_at_least
from dpstream.insecure import InsecureSeededNoise
from dpstream.noise import NoiseSource, derived_seed

__all__ = [
    "Encoder",
    "MechanismFactory",
    "Streaming",
    "Transcript",
    "derive_seed",
    "flatten",
    "run_once",
    "sample_transcripts",
]

FloatArray = npt.NDArray[np.float64]
Transcript = list[Any]
"""The releases of one run, in order (one per ``step``)."""
MechanismFactory = Callable[[NoiseSource], Streaming]
"""Builds a fresh mechanism drawing from the given source."""
Encoder = Callable[[Sequence[Any]], FloatArray]
"""Turns a transcript (or an input sequence) into a flat float vector."""


def flatten(items: Sequence[Any]) -> FloatArray:
    """Concatenate the numbers of every item (scalars, arrays, nested lists) into one vector."""
    try:  # fast path: scalars, or arrays of one shape
        return np.asarray(items, dtype=np.float64).ravel()
    except ValueError:
        pass
    parts = [np.asarray(item, dtype=np.float64).ravel() for item in items]
    if not parts:
        return np.zeros(0, dtype=np.float64)
    return np.concatenate(parts)


def run_once(factory: MechanismFactory, inputs: Sequence[Any], noise: NoiseSource) -> Transcript:
    """Build a fresh mechanism on ``noise`` and step it through ``inputs``."""
    mechanism = factory(noise)
    return [mechanism.step(x) for x in inputs]


def derive_seed(seed: int, *labels: int | str) -> int:
    """A child seed of ``seed`` for the purpose named by ``labels`` (:func:`dpstream.noise.derived_seed`)."""
    return derived_seed(seed, *labels)


def sample_transcripts(
    factory: MechanismFactory,
    inputs: Sequence[Any],
    runs: int,
    seed: int,
    progress: Callable[[str], None] | None = None,
) -> list[Transcript]:
    """``runs`` independent runs on ``inputs``; run i draws from ``InsecureSeededNoise.independent(seed, runs)[i]``."""
    runs = require_int_at_least("runs", runs, 1)
    sources = InsecureSeededNoise.independent(seed, runs)
    out: list[Transcript] = []
    step = max(1, runs // 10)
    for i, source in enumerate(sources):
        out.append(run_once(factory, inputs, source))
        if progress is not None and (i + 1) % step == 0:
            progress(f"{i + 1}/{runs} runs")
    return out
