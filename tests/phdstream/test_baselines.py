"""Section 5.3 baselines and section 5.2 initialization."""

from __future__ import annotations

import pytest

from dpstream.claims import Measure
from dpstream.errors import DPStreamInputError
from dpstream.insecure import InsecureSeededNoise, InsecureZeroNoise, TapeRecorder
from dpstream.phdstream import HypercubePartition, PointEvents
from dpstream.phdstream.baselines import (
    InitPrivTreeThenCounters,
    OfflinePrivTreeOnDifferential,
    OfflinePrivTreeOnStream,
    apportion,
    privtree_counting,
)
from dpstream.phdstream.initialization import initialize, initialize_by_ratio
from dpstream.phdstream.tree_function import tree_function

P = HypercubePartition(2, 4)
B1 = PointEvents.of([[0.1, 0.1]] * 20 + [[0.9, 0.8]] * 10)
B2 = PointEvents.of([[0.1, 0.1]] * 5 + [[0.3, 0.6]] * 4, [-1] * 5 + [1] * 4)
B3 = PointEvents.of([[0.7, 0.2]] * 6)


def test_privtree_counting_adds_lap_2_over_eps_to_leaf_counts() -> None:
    recorder = TapeRecorder(InsecureSeededNoise(1))
    F = tree_function(P, B1.points)
    S, counts = privtree_counting(P, F, 0.5, 0.0, noise=recorder, t=3)
    noise = {d.site: d for d in recorder.tape}
    for v, c in counts.items():
        d = noise[f"001-sec5.3 count t=3 v={'root' if not v else '.'.join(map(str, v))}"]
        assert d.params["scale"] == pytest.approx(4.0)
        assert c == pytest.approx(F.get(v, 0.0) + d.value)
    assert len(counts) == len(S.leaves)


def test_baseline_1_uses_the_current_data_and_is_not_private() -> None:
    alg = OfflinePrivTreeOnStream(P, 1.0, 0.0, noise=InsecureZeroNoise())
    for b in (B1, B2, B3):
        alg.step(b)
    assert sum(alg.releases[-1].leaf_values.values()) == pytest.approx(20 - 5 + 10 + 4 + 6)
    claim = alg.claim
    assert claim.measure is Measure.NOT_PRIVATE and "k*eps" in claim.note


def test_baseline_2_scaling() -> None:
    printed = OfflinePrivTreeOnDifferential(P, 1.0, 0.0, noise=InsecureSeededNoise(2), as_printed=True)
    recorder = TapeRecorder(InsecureSeededNoise(2))
    private = OfflinePrivTreeOnDifferential(P, 1.0, 0.0, noise=recorder)
    true_sizes = [30, 29, 35]
    for b, n in zip((B1, B2, B3), true_sizes, strict=True):
        r = printed.step(b)
        assert r.size == n  # as printed: exactly the true |f(., t)| points (a leak, E-phdstream-9)
        q = private.step(b)
        assert q.size == round(max(private.N_hat, 0.0))
    removal = {d.site: d.value for d in recorder.tape}["001-sec5.3 removals t=2"]
    synthetic_added = [sum(r.leaf_values.values()) for r in private.releases]
    expected = synthetic_added[0] - (0 + {d.site: d.value for d in recorder.tape}["001-sec5.3 removals t=1"])
    expected += synthetic_added[1] - (5 + removal)
    expected += synthetic_added[2] - (0 + {d.site: d.value for d in recorder.tape}["001-sec5.3 removals t=3"])
    assert private.N_hat == pytest.approx(expected)
    assert private.claim.measure is Measure.PURE_DP
    assert printed.claim.measure is Measure.NOT_PRIVATE  # the claim says what holds (E-phdstream-9)


def test_baseline_3_fixes_the_tree_and_counts_with_counters() -> None:
    alg = InitPrivTreeThenCounters(P, 1.0, 0.0, noise=InsecureZeroNoise())
    r1 = alg.step(B1)
    r2 = alg.step(B2)
    r3 = alg.step(B3)
    assert r1.tree == r2.tree == r3.tree
    F = tree_function(P, [*B1.points.tolist()])
    for b in (B2, B3):
        dF = tree_function(P, b.points, b.moves)
        for v in r1.tree.leaves:
            F[v] = F.get(v, 0.0) + dF.get(v, 0.0)
    for v in r1.tree.leaves:
        assert r3.leaf_values[v] == pytest.approx(F.get(v, 0.0))


def test_apportion() -> None:
    assert apportion({(0,): 1.0, (1,): 3.0}, 8) == {(0,): 2, (1,): 6}
    assert apportion({(0,): 1.0, (1,): 1.0, (2,): -5.0}, 3) in ({(0,): 2, (1,): 1, (2,): 0},
                                                                 {(0,): 1, (1,): 2, (2,): 0})
    assert apportion({(0,): -1.0, (1,): -2.0}, 5) in ({(0,): 3, (1,): 2}, {(0,): 2, (1,): 3})
    assert apportion({(0,): 1.0}, 0) == {(0,): 0}


def test_initialization() -> None:
    merged = initialize([B1, B2, B3], 2)
    assert len(merged) == 2 and len(merged[0]) == len(B1) + len(B2) and merged[1] is B3
    with pytest.raises(DPStreamInputError):
        initialize([B1], 0)
    with pytest.raises(DPStreamInputError):
        initialize([B1], 2)
    events = PointEvents.of([[0.1, 0.1]] * 10)
    parts = initialize_by_ratio(events, 0.3, 4)
    assert [len(b) for b in parts] == [3, 4, 3]
    assert [len(b) for b in initialize_by_ratio(events, 0.0, 5)] == [5, 5]
    with pytest.raises(DPStreamInputError):
        initialize_by_ratio(events, 1.5, 4)
