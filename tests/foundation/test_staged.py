"""The staged-step type and batched drawing (dpstream.staged): efficient = printed under one tape.

Every algorithm that batches its draws for an order-free source (the secure one, a tape replay) keeps its
line-by-line path for order-dependent sources (the seeded one). The checks below record a seeded tape through
the line-by-line path and replay it through the batched path (``TapeReplay`` is order free) and through the
line-by-line path again (``OrderedReplay``): the releases must be identical. A spy counts the batch calls.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpstream.counters import (
    BinaryTreeCounter,
    BlockCounter,
    Counter,
    HybridCounter,
    InhomogeneousSparseCounter,
    MultiDimensionalCounter,
    SimpleCounter,
    SparseCounter,
    TreeAggregationCounter,
    UnboundedBlockCounter,
)
from dpstream.insecure import InsecureSeededNoise, TapeRecorder, TapeReplay
from dpstream.longitudinal.cumulative import CumulativeSynthesizer
from dpstream.noise import NoiseSource, SecureNoise, data_rng, scoped
from dpstream.phdstream.baselines import InitPrivTreeThenCounters
from dpstream.phdstream.counters_tree import simple_counter_factory
from dpstream.phdstream.data import concentric_circles_stream
from dpstream.phdstream.efficient import EfficientPHDStream
from dpstream.phdstream.initialization import initialize_by_ratio
from dpstream.phdstream.partition import HypercubePartition
from dpstream.phdstream.phdstream import PHDStream
from dpstream.phdstream.privtree import privtree, privtree_by_level
from dpstream.phdstream.stream import PointEvents, TrueStream
from dpstream.staged import Staged, laplace, order_free, run, run_all, staged_now
from dpstream.tabular.domain import Domain
from dpstream.tabular.main_algorithm import MainAlgorithm
from dpstream.tabular.queries import all_workloads
from dpstream.tabular.stream import generate_stream
from dpstream.tabular.totals import TotalRule
from dpstream.tape import Tape, TapeSiteMissingError
from dpstream.testing import record_run


class OrderedReplay(TapeReplay):
    """A replay that algorithms treat as order dependent: they take their line-by-line path."""

    order_free = False


class SpySeeded(InsecureSeededNoise):
    """An order-free seeded source (so algorithms batch) that counts its scalar and batch calls."""

    order_free = True

    def __init__(self, seed: int) -> None:
        super().__init__(seed)
        self.scalar_calls = 0
        self.batch_sizes: list[int] = []

    def add_laplace(self, site: str, value: float, scale: float) -> float:
        self.scalar_calls += 1
        return super().add_laplace(site, value, scale)

    def add_laplace_many(self, sites: Sequence[str], values: Any, scale: float) -> Any:
        self.batch_sizes.append(len(sites))
        return super().add_laplace_many(sites, values, scale)


def _replays(factory: Callable[[NoiseSource], Any], inputs: Sequence[Any], seed: int
             ) -> tuple[list[Any], list[Any], list[Any]]:
    """(seeded line-by-line releases, batched replay, line-by-line replay) of one recorded tape."""
    direct, tape = record_run(factory, inputs, seed)
    with TapeReplay(tape) as batched_noise:
        alg = factory(batched_noise)
        batched = [alg.step(x) for x in inputs]
    with OrderedReplay(tape) as ordered_noise:
        alg = factory(ordered_noise)
        ordered = [alg.step(x) for x in inputs]
    return direct, batched, ordered


# --- the staged-step contract ------------------------------------------------------------------------------


def test_staged_commit_applies_once_and_returns_the_release() -> None:
    applied: list[int] = []
    step = Staged(3.5, lambda: applied.append(1))
    assert applied == [] and step.release == 3.5
    assert step.commit() == 3.5 and applied == [1]
    assert staged_now("x").commit() == "x"


def test_sources_declare_whether_their_order_is_free() -> None:
    assert order_free(SecureNoise()) and order_free(scoped(SecureNoise(), "a"))
    assert not order_free(InsecureSeededNoise(0)) and not order_free(scoped(InsecureSeededNoise(0), "a"))
    assert order_free(TapeRecorder(SecureNoise())) and not order_free(TapeRecorder(InsecureSeededNoise(0)))
    assert order_free(TapeReplay(Tape(()))) and not order_free(OrderedReplay(Tape(())))


COUNTERS: dict[str, Callable[[NoiseSource], Counter]] = {
    "simple": lambda n: SimpleCounter(1.0, noise=n),
    "block": lambda n: BlockCounter(1.0, 3, noise=n),
    "binary": lambda n: BinaryTreeCounter(1.0, 40, noise=n),
    "binary-discrete": lambda n: BinaryTreeCounter(1.0, 40, noise=n, discrete=True),
    "hybrid": lambda n: HybridCounter(1.0, noise=n),
    "unbounded-block": lambda n: UnboundedBlockCounter(1.0, noise=n),
    "tree-aggregation": lambda n: TreeAggregationCounter(1.0, 40, noise=n),
    "sparse": lambda n: SparseCounter(4.0, 40, noise=n),
    "inhomogeneous": lambda n: InhomogeneousSparseCounter(1.0, 1, lambda r: 4.0, noise=n),
}
BOOLEAN = {"sparse", "inhomogeneous"}


def _bank(make: Callable[[NoiseSource], Counter], noise: NoiseSource, k: int) -> list[Counter]:
    return [make(scoped(noise, f"c={i}")) for i in range(k)]


def _bank_run(make: Callable[[NoiseSource], Counter], noise: NoiseSource, inputs: np.ndarray, batched: bool
              ) -> list[list[float]]:
    """k counters stepped together through ``run_all`` (one row of ``inputs`` per step)."""
    bank = _bank(make, noise, inputs.shape[1])
    out = []
    for row in inputs:
        steps = run_all([c.staging(float(x)) for c, x in zip(bank, row, strict=True)], batched)
        out.append([s.commit() for s in steps])
    return out


@pytest.mark.parametrize("name", sorted(COUNTERS))
def test_many_counters_batched_equal_line_by_line_under_one_tape(name: str) -> None:
    """Counters with one or several (data-dependent) draws per step: the rounds of run_all give the same releases."""
    inputs = np.asarray(data_rng(7).integers(0, 2 if name in BOOLEAN else 4, size=(30, 6)), dtype=float)
    recorder = TapeRecorder(InsecureSeededNoise(11))
    direct = _bank_run(COUNTERS[name], recorder, inputs, batched=False)
    with TapeReplay(recorder.tape) as replay:
        assert _bank_run(COUNTERS[name], replay, inputs, batched=True) == direct


def test_run_all_makes_one_batch_call_per_round() -> None:
    spy = SpySeeded(0)
    bank = [SimpleCounter(1.0, noise=scoped(spy, f"c={i}")) for i in range(25)]
    steps = run_all([c.staging(1.0) for c in bank], order_free(spy))
    assert spy.batch_sizes == [25] and spy.scalar_calls == 0
    assert [s.commit() for s in steps] == [c.g for c in bank]


def test_a_failing_draw_in_one_of_many_batched_steps_leaves_all_unchanged() -> None:
    def bank(noise: NoiseSource) -> list[BinaryTreeCounter]:
        return [BinaryTreeCounter(1.0, 16, noise=scoped(noise, f"c={i}")) for i in range(5)]

    recorder = TapeRecorder(InsecureSeededNoise(3))
    recorded = bank(recorder)
    first = [c.step(1.0) for c in recorded]
    for c in recorded:
        c.step(2.0)
    # a tape without counter 3's draw at t=2: the batched step of all five must fail and change nothing
    partial = Tape(tuple(d for d in recorder.tape if d.site != "c=3 / 001-alg10 L8 t=2"))
    fresh = bank(TapeReplay(partial))
    assert [c.step(1.0) for c in fresh] == first
    before = [(c.t, list(c.alpha), list(c.alpha_hat), list(c.releases)) for c in fresh]
    with pytest.raises(TapeSiteMissingError):
        run_all([c.staging(2.0) for c in fresh], batched=True)
    assert [(c.t, list(c.alpha), list(c.alpha_hat), list(c.releases)) for c in fresh] == before


def test_a_bad_input_is_refused_before_any_draw() -> None:
    spy = SpySeeded(0)
    bank = _bank(lambda n: SimpleCounter(1.0, noise=n), spy, 3)
    with pytest.raises(ValueError):
        run_all([c.staging(x) for c, x in zip(bank, [1.0, float("nan"), 2.0], strict=True)], True)
    assert spy.batch_sizes == [] and all(c.t == 0 for c in bank)


def test_run_fulfils_requests_line_by_line() -> None:
    noise = InsecureSeededNoise(5)

    def staging() -> Any:
        a = yield laplace(noise, "a", 1.0, 1.0)
        b = yield laplace(noise, "b", 2.0, 1.0)
        return staged_now((a, b))

    expected = InsecureSeededNoise(5)
    assert run(staging()).release == (expected.add_laplace("a", 1.0, 1.0), expected.add_laplace("b", 2.0, 1.0))


# --- algorithms: efficient = printed under one tape --------------------------------------------------------


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**16), theta=st.sampled_from([0.0, 2.0]), n=st.integers(0, 60))
def test_privtree_by_level_equals_privtree(seed: int, theta: float, n: int) -> None:
    P = HypercubePartition(2, 5)
    pts = InsecureSeededNoise(seed).uniform_box("data", [0.0, 0.0], [1.0, 1.0], n)
    truth = TrueStream(P)
    F = dict(truth.stage(PointEvents.of(pts)).release.dF.items())
    recorder = TapeRecorder(InsecureSeededNoise(seed))
    S = privtree(P, F, 1.0, theta, noise=recorder)
    with TapeReplay(recorder.tape) as replay:
        assert privtree_by_level(P, F, 1.0, theta, noise=replay) == S
    # and the by-level form draws in exactly the line-by-line order: the same tree from the same seed
    assert privtree_by_level(P, F, 1.0, theta, noise=InsecureSeededNoise(seed)) == S


def _circles(n: int = 600, batch: int = 60) -> list[Any]:
    return initialize_by_ratio(concentric_circles_stream(n, deletion=True, seed=1).as_events(), 0.2, batch)


def _same_synthetic(a: Sequence[Any], b: Sequence[Any]) -> bool:
    return all(x.tree == y.tree and dict(x.leaf_values) == dict(y.leaf_values) and dict(x.counts) == dict(y.counts)
               for x, y in zip(a, b, strict=True)) and len(a) == len(b)


PHD: dict[str, Callable[[NoiseSource], Any]] = {
    "alg6/7 simple": lambda n: EfficientPHDStream(HypercubePartition(2, 6), 2.0, 0.0, noise=n),
    "alg6/7 block": lambda n: EfficientPHDStream(HypercubePartition(2, 6), 2.0, 0.0, noise=n,
                                                 counter=lambda e, m: BlockCounter(e, 3, noise=m)),
    "alg3": lambda n: PHDStream(HypercubePartition(2, 5), 2.0, 0.0, noise=n, counter=simple_counter_factory),
    "alg1": lambda n: PHDStream(HypercubePartition(2, 5), 2.0, 0.0, noise=n),
    "baseline 3": lambda n: InitPrivTreeThenCounters(HypercubePartition(2, 5), 2.0, 0.0, noise=n),
}


@pytest.mark.parametrize("name", sorted(PHD))
def test_phdstream_batched_equals_line_by_line_under_one_tape(name: str) -> None:
    direct, batched, ordered = _replays(PHD[name], _circles(), seed=4)
    assert _same_synthetic(direct, batched) and _same_synthetic(direct, ordered)


def test_efficient_phdstream_batches_its_draws() -> None:
    """Alg 7 by level: one batch per level of T(t) and one for the leaf counters; no scalar draw."""
    spy = SpySeeded(2)
    alg = EfficientPHDStream(HypercubePartition(2, 8), 2.0, 0.0, noise=spy)
    batches = _circles()
    release = alg.step(batches[0])
    depth = max(len(v) for v in release.tree.nodes)
    assert spy.scalar_calls == 0 and len(spy.batch_sizes) == depth + 2
    assert sum(spy.batch_sizes) == len(release.tree) + len(release.tree.leaves)


def test_multidimensional_counter_batched_equals_line_by_line() -> None:
    def factory(n: NoiseSource) -> MultiDimensionalCounter:
        return MultiDimensionalCounter.build(lambda e, m: BinaryTreeCounter(e, 20, noise=m), 8, 1.0, noise=n)

    inputs = [list(map(float, range(i, i + 8))) for i in range(12)]
    direct, batched, ordered = _replays(factory, inputs, seed=9)
    assert [list(x) for x in direct] == [list(x) for x in batched] == [list(x) for x in ordered]
    spy = SpySeeded(0)
    factory(spy).step(inputs[0])
    assert spy.batch_sizes == [8] and spy.scalar_calls == 0


def test_longitudinal_cumulative_batched_equals_line_by_line() -> None:
    columns = list(data_rng(1).integers(0, 2, size=(6, 40)))
    direct, batched, ordered = _replays(lambda n: CumulativeSynthesizer(6, 1.0, noise=n), columns, seed=1)
    assert [r.column.tolist() for r in direct] == [r.column.tolist() for r in batched] == \
        [r.column.tolist() for r in ordered]
    assert [r.S_tilde for r in direct] == [r.S_tilde for r in batched]


def test_tabular_workload_counters_batched_equal_line_by_line() -> None:
    dom = Domain(("a", "b", "c"), (2, 3, 2))
    stream = generate_stream(dom, 4, 20, seed=3, removal_rate=0.1)

    def factory(n: NoiseSource) -> MainAlgorithm:
        return MainAlgorithm(dom, all_workloads(dom, 2), 2, 1.0, noise=n, total=TotalRule.public(20))

    direct, batched, ordered = _replays(factory, stream, seed=5)
    cliques = [(0, 1), (1, 2), (0, 2)]
    for a, b, c in zip(direct, batched, ordered, strict=True):
        for clique in cliques:
            assert np.array_equal(a.marginal(clique), b.marginal(clique))
            assert np.array_equal(a.marginal(clique), c.marginal(clique))
