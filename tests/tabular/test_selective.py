"""003-alg3 is an instance of online selective counting (001-alg4): same tape, same releases.

:class:`SelectiveMainAlgorithm` runs 003-alg3's selection (the counter-selecting M) and counters through the
generic :class:`dpstream.selective_counting.SelectiveCounting` of the PHDStream family; the direct
:class:`MainAlgorithm` runs its own loop. Both replay one noise tape here (``replay_run`` fails unless every
site of the tape is used, so the two draw exactly the same things) and must release the same datasets, select
the same queries and leave every counter in the same state -- over several streams with removals, several k,
marginal queries and workloads, Simple, block and unbounded block counters, and both sign conventions of the
selection law.
"""

from __future__ import annotations

import numpy as np
import pytest

from dpstream.counters import BlockCounter, UnboundedBlockCounter
from dpstream.counters.base import Counter, CounterFactory
from dpstream.counters.multidim import MultiDimensionalCounter
from dpstream.insecure import InsecureSeededNoise, TapeReplay
from dpstream.noise import NoiseSource
from dpstream.selective_counting import SelectiveCounting
from dpstream.tabular.datasets import answer
from dpstream.tabular.domain import Domain
from dpstream.tabular.main_algorithm import MainAlgorithm, simple_factory
from dpstream.tabular.queries import Query, all_marginal_queries, all_workloads
from dpstream.tabular.selection import SelectionLaw
from dpstream.tabular.selective import SelectiveMainAlgorithm
from dpstream.tabular.stream import StreamStep, generate_stream
from dpstream.tabular.totals import TotalRule
from dpstream.tape import Tape, TapeSiteMissingError
from dpstream.testing import record_run, replay_run

DOM = Domain(("a", "b", "c"), (2, 3, 2))
STREAM = generate_stream(DOM, 6, 30, seed=2, removal_rate=0.1)
COUNTERS: dict[str, CounterFactory] = {
    "simple": simple_factory,
    "block-2": lambda e, n: BlockCounter(e, 2, noise=n),
    "unbounded-block": lambda e, n: UnboundedBlockCounter(e, noise=n),
}
QUERIES: dict[str, list[Query]] = {
    "1-way queries": list(all_marginal_queries(DOM, 1)), "2-way queries": list(all_marginal_queries(DOM, 2)),
    "2-way workloads": list(all_workloads(DOM, 2)), "1-way workloads": list(all_workloads(DOM, 1)),
}


def _counter_releases(alg: MainAlgorithm) -> list[list[float]]:
    out = []
    for c in alg.counters:
        parts = c.counters if isinstance(c, MultiDimensionalCounter) else [c]
        out.extend([list(p.releases) for p in parts])
    return out


def _check_same(queries: list[Query], k: int, counter: str, stream: list[StreamStep], seed: int,
                law: SelectionLaw = SelectionLaw.DEF_3_8) -> None:
    total = TotalRule.measured() if queries[0].dim > 1 else TotalRule.public(30)
    built: list[MainAlgorithm] = []

    def build(noise: NoiseSource) -> MainAlgorithm:
        alg = MainAlgorithm(DOM, queries, k, 1.0, noise=noise, total=total, counter_factory=COUNTERS[counter],
                            selection_law=law, keep_trace=True)
        built.append(alg)
        return alg

    direct, tape = record_run(build, stream, seed=seed)
    via_meta = replay_run(lambda n: SelectiveMainAlgorithm(build(n)), stream, tape)  # every tape site is used
    a, b = built
    for ga, gb in zip(direct, via_meta, strict=True):
        for q in queries:
            assert np.array_equal(answer(q, ga), answer(q, gb))
    assert a.trace is not None and b.trace is not None
    assert [s.selected for s in a.trace] == [s.selected for s in b.trace]
    for sa, sb in zip(a.trace, b.trace, strict=True):
        for x, y in zip(sa.r + sa.C + sa.m, sb.r + sb.C + sb.m, strict=True):
            assert np.array_equal(x, y)
    assert _counter_releases(a) == _counter_releases(b)
    # every counter stepped exactly at the times it was selected (J_l of Algorithm 4)
    selected_times: dict[int, int] = {}
    for s in a.trace:
        for j in s.selected:
            selected_times[j] = selected_times.get(j, 0) + 1
    for i, c in enumerate(a.counters):
        parts = c.counters if isinstance(c, MultiDimensionalCounter) else [c]
        assert all(p.t == selected_times.get(i, 0) for p in parts)


@pytest.mark.parametrize("queries", list(QUERIES), ids=list(QUERIES))
@pytest.mark.parametrize("k", [1, 2, 3])
def test_meta_algorithm_reproduces_algorithm_3(queries: str, k: int) -> None:
    _check_same(QUERIES[queries], k, "simple", STREAM, seed=3 + k)


@pytest.mark.parametrize("counter", ["block-2", "unbounded-block"])
@pytest.mark.parametrize("seed", [5, 6])
def test_meta_algorithm_with_counters_that_remember(counter: str, seed: int) -> None:
    """Counters with memory (block sums carried over activations): still identical, on other streams."""
    stream = generate_stream(DOM, 8, 12, seed=seed, removal_rate=0.25)
    assert sum(s.removed.shape[0] for s in stream) > 0
    _check_same(QUERIES["2-way workloads"], 2, counter, stream, seed)
    _check_same(QUERIES["2-way queries"], 3, counter, stream, seed + 100)


def test_meta_algorithm_with_the_printed_sign() -> None:
    _check_same(QUERIES["1-way queries"], 2, "simple", STREAM, 9, SelectionLaw.PRINTED_DEF_3_8)


def test_meta_driver_is_atomic() -> None:
    """A draw that fails in the second iteration of a time step leaves the meta-algorithm, the counters and the
    main algorithm's state exactly as they were (the k meta-steps are committed together after L21)."""
    queries = QUERIES["1-way queries"]

    def build(noise: NoiseSource) -> MainAlgorithm:
        return MainAlgorithm(DOM, queries, 2, 1.0, noise=noise, total=TotalRule.public(30))

    _, tape = record_run(build, STREAM[:2], seed=4)
    cut = [d.site for d in tape].index("003-alg3 L12 t=2 l=2")  # keep t = 2, l = 1 (selection and counter)
    short = Tape(tape.draws[:cut])
    alg = build(TapeReplay(short))
    meta = SelectiveMainAlgorithm(alg)
    meta.step(STREAM[0])
    before = (meta.meta.t, {i: list(ts) for i, ts in meta.meta.J.items()}, len(meta.meta.releases),
              [c.t for c in alg.counters if isinstance(c, Counter)], alg.t, [x.copy() for x in alg.r])
    with pytest.raises(TapeSiteMissingError):
        meta.step(STREAM[1])  # l = 1 is drawn (a counter prepared), l = 2 has no draw on the tape
    after = (meta.meta.t, {i: list(ts) for i, ts in meta.meta.J.items()}, len(meta.meta.releases),
             [c.t for c in alg.counters if isinstance(c, Counter)], alg.t, [x.copy() for x in alg.r])
    assert before[:5] == after[:5]
    assert all(np.array_equal(a, b) for a, b in zip(before[5], after[5], strict=True))


def test_decomposition_and_claim() -> None:
    alg = MainAlgorithm(DOM, all_marginal_queries(DOM, 1), 2, 1.0, noise=InsecureSeededNoise(0),
                        total=TotalRule.public(30))
    meta = SelectiveMainAlgorithm(alg)
    assert isinstance(meta.meta, SelectiveCounting)
    for x in STREAM[:3]:
        meta.step(x)
    # one meta-step per (t, l); the activation times J_l are those of the counters
    assert meta.meta.t == 3 * 2
    assert sum(len(v) for v in meta.meta.J.values()) == 6
    assert all(alg.counters[i].t == len(times) for i, times in meta.meta.J.items())
    assert meta.claim.parameter == pytest.approx(alg.claim.parameter) == pytest.approx(1.0)
