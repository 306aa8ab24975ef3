"""Vectorised samplers of our own counters: many runs at once from a noise matrix.

Every counter of :mod:`dpstream.counters` releases r = W (S f + z) (its
:class:`~dpstream.audit.linear_model.LinearReleaseModel`: noisy statistics S f + z, releases as fixed
combinations W of them). :class:`LinearModelSampler` draws the noise of ``runs`` runs as one matrix
Z (``runs x m``, column j from law j, :class:`dpstream.insecure.batch.BulkNoise`) and returns
(S f + Z) W^T: the releases of ``runs`` independent runs. ``releases(f, Z)`` is the deterministic
part; ``tests/audit/test_vectorised.py`` records the noise tape of a line-by-line run of each counter,
puts the tape's values in a one-row Z by site (the model's sites are the counter's draw sites) and
checks that the releases agree, so the vectorised sampler *is* the implementation, not only its model.

:data:`COUNTERS` names the samplers (``counter_sampler(name, epsilon, T)``; zCDP counters read
``epsilon`` as rho) and, for the equality test, the line-by-line factory of the same counter.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from dpstream.audit.counters.models import (
    binary_tree_counter_model,
    block_counter_model,
    hybrid_counter_model,
    multidimensional_model,
    simple_counter_model,
    tree_aggregation_model,
    unbounded_block_model,
)
from dpstream.audit.linear_model import LinearReleaseModel, NoiseLaw
from dpstream.audit.protocol import MechanismFactory, flatten
from dpstream.counters import (
    BinaryTreeCounter,
    BlockCounter,
    HybridCounter,
    MultiDimensionalCounter,
    SimpleCounter,
    TreeAggregationCounter,
    UnboundedBlockCounter,
)
from dpstream.errors import DPStreamInputError, require_int_at_least
from dpstream.insecure.batch import BulkNoise
from dpstream.noise import NoiseSource

__all__ = ["COUNTERS", "CounterEntry", "LinearModelSampler", "counter_sampler", "noise_matrix"]

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


@dataclass(frozen=True)
class CounterEntry:
    """One of our counters: its model and its line-by-line factory, for parameters (epsilon or rho, T)."""

    anchor: str
    model: Callable[[float, int], LinearReleaseModel]
    factory: Callable[[float, int], MechanismFactory]
    integer_input: bool = False
    dimension: int = 1


_MULTI_D, _MULTI_B = 2, 2


def _multi_model(eps: float, T: int) -> LinearReleaseModel:
    return multidimensional_model([block_counter_model(eps, _MULTI_B, T)] * _MULTI_D)


def _multi_factory(eps: float, T: int) -> MechanismFactory:
    def make(n: NoiseSource) -> MultiDimensionalCounter:
        return MultiDimensionalCounter.build(lambda e, s: BlockCounter(e, _MULTI_B, noise=s), _MULTI_D, eps, noise=n)
    return make


COUNTERS: Mapping[str, CounterEntry] = {
    "simple": CounterEntry("001-alg8", simple_counter_model, lambda e, T: lambda n: SimpleCounter(e, noise=n)),
    "block": CounterEntry("001-alg9", lambda e, T: block_counter_model(e, 4, T),
                          lambda e, T: lambda n: BlockCounter(e, 4, noise=n)),
    "binary tree": CounterEntry("001-alg10", binary_tree_counter_model,
                                lambda e, T: lambda n: BinaryTreeCounter(e, T, noise=n)),
    "binary tree as printed": CounterEntry(
        "001-alg10", lambda e, T: binary_tree_counter_model(e, T, as_printed=True),
        lambda e, T: lambda n: BinaryTreeCounter(e, T, noise=n, as_printed=True)),
    "binary mechanism discrete": CounterEntry(
        "004-lem3.1", lambda e, T: binary_tree_counter_model(e, T, discrete=True),
        lambda e, T: lambda n: BinaryTreeCounter(e, T, noise=n, discrete=True), integer_input=True),
    "tree aggregation": CounterEntry("002-alg3", tree_aggregation_model,
                                     lambda r, T: lambda n: TreeAggregationCounter(r, T, noise=n), integer_input=True),
    "tree aggregation as printed": CounterEntry(
        "002-alg3", lambda r, T: tree_aggregation_model(r, T, as_printed=True),
        lambda r, T: lambda n: TreeAggregationCounter(r, T, noise=n, as_printed=True), integer_input=True),
    "unbounded block": CounterEntry("003-alg4", unbounded_block_model,
                                    lambda e, T: lambda n: UnboundedBlockCounter(e, noise=n)),
    "hybrid": CounterEntry("CSS11-hybrid", hybrid_counter_model, lambda e, T: lambda n: HybridCounter(e, noise=n)),
    "multi-dimensional": CounterEntry("001-sec4.3", _multi_model, _multi_factory, dimension=_MULTI_D),
}
"""Our counters with a vectorised sampler (block counters: B = 4; multi-dimensional: d = 2 block counters B = 2)."""


def counter_sampler(name: str, epsilon: float, T: int) -> LinearModelSampler:
    """The vectorised sampler of ``COUNTERS[name]`` at (epsilon or rho, T)."""
    if name not in COUNTERS:
        raise DPStreamInputError("name", f"must be one of {sorted(COUNTERS)}", name)
    return LinearModelSampler(COUNTERS[name].model(epsilon, T))
