"""The reference itself as a statistical sampler, in process, optionally with a planted leak.

:class:`EntrySampler` gives the rows the statistical mode would get from ``dpstream serve`` (or ``dpstream serve
--plant LEAK``) for one catalog entry and parameters, without the protocol: each run builds the entry on a fresh
seeded source (wrapped in :class:`~dpstream.insecure.planted.PlantedNoise` when a leak is planted), steps it
through the JSON inputs and featurises the JSON releases exactly as :class:`~dpstream.conformance.statistical.
ProtocolSampler` does (the entry's design features, or the codec's numbers release by release). It is how the
power of the search is calibrated (:mod:`dpstream.conformance.power`): the same search, the same budget, the same
features, on runs whose law is the reference's with a leak of known size.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from dpstream.audit.vectorised import LinearModelSampler, PlantedModelSampler
from dpstream.catalog import Entry, entry
from dpstream.catalog.codecs import NUMBER
from dpstream.errors import DPStreamInputError, require_int_at_least
from dpstream.insecure import InsecureSeededNoise
from dpstream.insecure.planted import PlantedLeak, PlantedNoise
from dpstream.noise import NoiseSource

__all__ = ["EntrySampler", "Run", "entry_run", "featurise"]

FloatArray = npt.NDArray[np.float64]


Run = Callable[[NoiseSource, Sequence[Any]], list[Any]]
"""The reference's releases on an input, drawing from the given source (raises DPStreamInputError or StateError
where it refuses the input)."""


def entry_run(e: Entry, params: Mapping[str, Any]) -> Run:
    """The reference of ``e`` with ``params`` as a :data:`Run` (releases encoded as on the wire; the parameters are
    validated here, once: refused ones raise DPStreamInputError)."""
    assert e.codec is not None
    codec = e.codec
    valid = e.params.validate(params)  # refused parameters raise here, before any run

    def run(source: NoiseSource, inputs: Sequence[Any]) -> list[Any]:
        algorithm = e.make(params, source)
        return [codec.encode_release(algorithm.step(codec.decode_input(x, valid))) for x in inputs]

    return run


def featurise(anchor: str, params: Mapping[str, Any], releases: Sequence[Sequence[Any]]) -> FloatArray:
    """Rows of the statistical features of runs given as JSON releases (one list of releases per run)."""
    e = entry(anchor)
    assert e.codec is not None
    codec = e.codec
    design = e.statistical.design if e.statistical is not None else None
    if design is None:
        rows = [[x for r in run for x in codec.features(r)] for run in releases]
    else:
        features = design.features(e.params.validate(params), len(releases[0]) if releases else 0)
        rows = [[float(x) for x in features.of(run)] for run in releases]
    return np.asarray(rows, dtype=np.float64).reshape(len(rows), -1)


class EntrySampler:
    """Runs of the reference for ``anchor`` with ``params`` (seeded; ``leak`` planted when given). Picklable."""

    chunk = 2000

    def __init__(self, anchor: str, params: Mapping[str, Any], leak: PlantedLeak | None = None) -> None:
        self.anchor = anchor
        self.params = dict(params)
        self.leak = leak

    def noise(self, source: InsecureSeededNoise) -> NoiseSource:
        return source if self.leak is None else PlantedNoise(source, self.leak)

    def releases(self, inputs: Sequence[Any], runs: int, seed: int) -> list[list[Any]]:
        """The JSON releases of ``runs`` runs on ``inputs`` (run i on ``InsecureSeededNoise.independent(seed)[i]``)."""
        runs = require_int_at_least("runs", runs, 1)
        run = entry_run(entry(self.anchor), self.params)
        return [run(self.noise(source), inputs) for source in InsecureSeededNoise.independent(seed, runs)]

    def sample(self, inputs: Sequence[Any], runs: int, seed: int) -> FloatArray:
        vectorised = self._vectorised(len(inputs))
        if vectorised is not None:
            return vectorised.sample(inputs, runs, seed)
        return featurise(self.anchor, self.params, self.releases(inputs, runs, seed))

    def _vectorised(self, length: int) -> LinearModelSampler | None:
        """For a counter with an exact linear model (the catalog's), its vectorised sampler (the leak planted into
        the noise matrix): the same law as the line-by-line runs (tests/audit/test_vectorised.py), much faster."""
        e = entry(self.anchor)
        if e.model is None or e.codec is not NUMBER:
            return None
        try:
            model = e.model({**self.params, "T": self.params.get("T") or length})
        except (DPStreamInputError, KeyError):
            return None
        if model.input_length != length:
            return None
        return LinearModelSampler(model) if self.leak is None else PlantedModelSampler(model, self.leak)
