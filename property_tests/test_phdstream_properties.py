"""Hypothesis properties of PHDStream (seed 001): consistency, rule (5), true counts, subtrees, equivalence."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from dpstream.audit.phdstream.loss import adversarial_past, privtree_sup_loss
from dpstream.claims import Measure, Neighbour, PrivacyClaim
from dpstream.counters import BinaryTreeCounter, BlockCounter, CounterFactory, SimpleCounter
from dpstream.insecure import InsecureSeededNoise, InsecureZeroNoise, TapeRecorder, TapeReplay
from dpstream.noise import data_rng, scoped
from dpstream.phdstream import (
    EfficientPHDStream,
    HypercubePartition,
    LambdaRule,
    PHDStream,
    PointEvents,
    consistent_extension,
    is_consistent,
    privtree,
    privtree_scales,
    simple_counter_factory,
)
from dpstream.phdstream.baselines import OfflinePrivTreeOnDifferential
from dpstream.phdstream.metric import RangeQueries, relative_error
from dpstream.phdstream.partition import Node, Partition
from dpstream.phdstream.stream import TrueStream, sample_rule5, synthetic_count
from dpstream.selective_counting import SelectiveCounting, SelectiveRelease
from dpstream.testing import pins
from dpstream.testing.strategies import (
    GRID,
    counter_streams,
    depths,
    epsilons,
    event_batches,
    fanouts,
    hypercube_partitions,
)

points = st.tuples(st.sampled_from(GRID), st.sampled_from(GRID))


@st.composite
def sparse_functions(draw: st.DrawFn, partition: Partition) -> dict[Node, float]:
    nodes = list(partition.nodes())
    keys = draw(st.lists(st.sampled_from(nodes), max_size=8))
    values = st.floats(-50, 50, allow_nan=False, allow_infinity=False)
    return {v: draw(values) for v in keys}


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_ext_output_is_always_consistent(data: st.DataObject) -> None:
    P = data.draw(hypercube_partitions())
    F = data.draw(sparse_functions(P))
    G = consistent_extension(P, F)
    assert is_consistent(P, G, tol=1e-9)
    # the total is preserved: Ext(F)(root) = sum of F
    assert math.isclose(G[()], math.fsum(F.values()), rel_tol=1e-9, abs_tol=1e-9)


@settings(max_examples=40, deadline=None)
@given(data=st.data(), seed=st.integers(0, 2**31))
def test_synthetic_data_has_the_rule_5_leaf_counts(data: st.DataObject, seed: int) -> None:
    P = HypercubePartition(2, data.draw(st.integers(1, 4)))
    leaves = data.draw(st.lists(st.sampled_from(list(P.leaves())), unique=True, min_size=1, max_size=6))
    values = {v: data.draw(st.floats(-5, 30, allow_nan=False)) for v in leaves}
    counts, pts = sample_rule5(P, values, InsecureSeededNoise(seed), t=1)
    located = [tuple(int(i) for i in p) for p in P.locate(pts)]
    for v, g in values.items():
        assert counts[v] == max(0, math.ceil(g - 1e-9)) == synthetic_count(g)
        assert sum(1 for p in located if p == v) == counts[v]
    assert pts.shape[0] == sum(counts.values())


@settings(max_examples=40, deadline=None)
@given(base=st.lists(points, max_size=10), extra=st.lists(points, min_size=1, max_size=5))
def test_insert_then_delete_leaves_the_true_tree_counts_unchanged(
        base: list[tuple[float, float]], extra: list[tuple[float, float]]) -> None:
    P = HypercubePartition(2, 3)
    s = TrueStream(P, track_counts=True)
    s.stage(PointEvents.of(np.asarray(base, dtype=float).reshape(-1, 2))).commit()
    before = dict(s.F)
    s.stage(PointEvents.of(extra)).commit()
    s.stage(PointEvents.of(extra, [-1] * len(extra))).commit()
    after = dict(s.F)
    assert after == before
    assert sum(s.present.values()) == len(base)


@settings(max_examples=60, deadline=None)
@given(data=st.data(), seed=st.integers(0, 2**31), eps=st.floats(0.05, 5.0),
       theta=st.floats(0, 20), rule=st.sampled_from(list(LambdaRule)))
def test_selected_subtree_is_valid_and_contains_the_root(data: st.DataObject, seed: int, eps: float,
                                                         theta: float, rule: LambdaRule) -> None:
    P = data.draw(hypercube_partitions())
    leaf_values = data.draw(sparse_functions(P))
    F = consistent_extension(P, {v: x for v, x in leaf_values.items() if len(v) == P.max_depth})
    S = privtree(P, F, eps, theta, noise=InsecureSeededNoise(seed), lambda_rule=rule)
    assert () in S.nodes and S.is_valid(P)


COUNTERS: dict[str, CounterFactory] = {
    "simple": simple_counter_factory,
    "block-2": lambda e, n: BlockCounter(e, 2, noise=n),
    "binary-tree-8": lambda e, n: BinaryTreeCounter(e, 8, noise=n),
}


@settings(max_examples=60, deadline=None)
@given(batches=event_batches(), seed=st.integers(0, 2**31), depth=st.integers(1, 4), fanout=st.sampled_from([2, 3]),
       theta=st.sampled_from([0.0, 2.0]), rule=st.sampled_from([LambdaRule.GENERAL, LambdaRule.PROOF]),
       counter=st.sampled_from(sorted(COUNTERS)), eps=st.sampled_from([0.5, 1.0, 4.0]))
def test_efficient_and_naive_release_identical_trees_and_values(
        batches: list[PointEvents], seed: int, depth: int, fanout: int, theta: float, rule: LambdaRule,
        counter: str, eps: float) -> None:
    """001 section C.1: same stream, same noise tape -> same T(t) and same G(v, t) on T(t), at every t.

    Over fanouts 2 and 3, several budgets, and counters with memory (Block, Binary Tree) as well as Simple:
    the efficient algorithm steps each vertex's counter exactly when the naive Algorithm 3 does.
    """
    P = HypercubePartition(2, depth, fanout=fanout)
    recorder = TapeRecorder(InsecureSeededNoise(seed))
    naive = PHDStream(P, eps, theta, noise=recorder, counter=COUNTERS[counter], lambda_rule=rule)
    a = [naive.step(b) for b in batches]
    with TapeReplay(recorder.tape) as replay:
        efficient = EfficientPHDStream(P, eps, theta, noise=replay, counter=COUNTERS[counter], lambda_rule=rule)
        b = [efficient.step(x) for x in batches]
    for ra, rb in zip(a, b, strict=True):
        assert ra.tree == rb.tree
        assert set(ra.node_values) == set(rb.node_values) == set(ra.tree.nodes)
        for v in ra.tree.nodes:
            assert math.isclose(ra.node_values[v], rb.node_values[v], rel_tol=1e-9, abs_tol=1e-9)
        assert ra.counts == rb.counts
        assert np.array_equal(ra.points, rb.points)


# --- errata pinned: the property the default meets for every input, with the erratum's case as @example ----

UNIT_AT_0 = [(0, 1.0)]


@pins("E-phdstream-1", "E-phdstream-2")
@settings(max_examples=40, deadline=None)
@given(depth=depths(1, 3), fanout=fanouts(3), values=st.lists(st.tuples(st.integers(0, 26), st.floats(-50, 50)),
                                                             min_size=1, max_size=6))
@example(depth=2, fanout=2, values=UNIT_AT_0)
def test_extension_of_leaf_values_is_consistent_and_keeps_them(depth: int, fanout: int,
                                                              values: list[tuple[int, float]]) -> None:
    """(6) holds at every vertex with children (not at leaves: a non-zero leaf is consistent), and Ext_T gives
    weight 1 to ancestors, beta^-k to descendants, 0 to the rest; the printed formula (weight 1 to every
    non-descendant) is not consistent for a unit at (0,) (its sibling (1,) gets 1 too)."""
    P = HypercubePartition(2, depth, fanout=fanout)
    leaves = list(P.leaves())
    F: dict[Node, float] = {}
    for i, x in values:
        F[leaves[i % len(leaves)]] = F.get(leaves[i % len(leaves)], 0.0) + x
    G = consistent_extension(P, F)
    assert is_consistent(P, G, tol=1e-9)
    assert all(math.isclose(G.get(v, 0.0), x, abs_tol=1e-9) for v, x in F.items())  # leaves keep their values
    unit = consistent_extension(P, {(0,): 1.0})
    assert unit.get((1,), 0.0) == 0.0 and unit[()] == 1.0
    if depth >= 2:
        assert all(math.isclose(unit[(0, w)], 1 / fanout) for w in range(fanout))  # descendants: beta^-1
    if values == UNIT_AT_0 and (depth, fanout) == (2, 2):
        printed = consistent_extension(P, {(0,): 1.0}, as_printed=True)
        assert printed[(1,)] == 1.0 and not is_consistent(P, printed, tol=1e-9)


@pins("E-phdstream-3")
@settings(max_examples=25, deadline=None)
@given(depth=depths(1, 5), eps=epsilons(0.2, 2.0), theta=st.sampled_from([0.0, 3.0]),
       spread=st.floats(0.0, 20.0), seed=st.integers(0, 2**16))
@example(depth=4, eps=1.0, theta=0.0, spread=0.0, seed=0)
def test_privtree_default_scale_is_eps_dp_on_non_monotone_inputs(depth: int, eps: float, theta: float,
                                                                 spread: float, seed: int) -> None:
    """One point added to a consistent, not path-monotone input (the adversarial past of PHDStream, perturbed by
    ``spread``): the exact loss of PrivTree is <= eps with lambda = D/eps, and <= D/lambda under every rule; with
    spread 0 every split decision sits where the tail ratio is e^(1/lambda), so the App. A scale (lambda = 3/eps
    for beta = 2) loses D/lambda = 4/3 eps > eps at D = 4."""
    P = HypercubePartition(2, depth)
    leaf = (0,) * depth
    dF = {leaf[:i]: 1.0 for i in range(depth + 1)}
    rng = data_rng(seed)
    extra = consistent_extension(P, {v: spread * float(rng.normal()) for v in list(P.leaves())[:4]})
    for rule in LambdaRule:
        lam, delta = privtree_scales(P, eps, rule)
        G = adversarial_past(P, leaf, dF, delta, theta)
        for v, x in extra.items():
            G[v] = G.get(v, 0.0) + x
        F2 = {v: G.get(v, 0.0) + dF.get(v, 0.0) for v in set(G) | set(dF)}
        loss = max(privtree_sup_loss(P, F2, G, lam, delta, theta), privtree_sup_loss(P, G, F2, lam, delta, theta))
        assert loss <= depth / lam * (1 + 1e-9)
        if rule is LambdaRule.GENERAL:
            assert loss <= eps * (1 + 1e-9)
        if (depth, eps, theta, spread) == (4, 1.0, 0.0, 0.0) and rule is LambdaRule.PROOF:
            assert loss == pytest.approx(4 / 3, rel=1e-9)


@pins("E-phdstream-4")
@settings(max_examples=30, deadline=None)
@given(depth=depths(1, 12), fanout=fanouts(4), eps=epsilons())
@example(depth=8, fanout=2, eps=1.0)
def test_printed_privtree_scale_is_twice_the_proofs(depth: int, fanout: int, eps: float) -> None:
    """001-alg5 L3 prints twice the lambda of the proof: the proof's bound (2b-1)/((b-1) lambda) is eps with the
    proof's scale and eps/2 with the printed one; Algorithm 1 as printed (PrivTree at eps/2, Lap(2/eps) counts)
    then loses eps/2 + D/lambda on non-monotone inputs, 7/6 eps at D = 8 (b = 2)."""
    P = HypercubePartition(1, depth, fanout=fanout)
    b = fanout
    lam_proof, delta = privtree_scales(P, eps, LambdaRule.PROOF)
    lam_printed, _ = privtree_scales(P, eps, LambdaRule.PRINTED)
    assert lam_printed == pytest.approx(2 * lam_proof) and delta == pytest.approx(lam_proof * math.log(b))
    assert (2 * b - 1) / ((b - 1) * lam_proof) == pytest.approx(eps)
    assert (2 * b - 1) / ((b - 1) * lam_printed) == pytest.approx(eps / 2)
    alg1_printed = eps / 2 + depth / privtree_scales(P, eps / 2, LambdaRule.PRINTED)[0]
    assert alg1_printed == pytest.approx(eps / 2 + depth * eps * (b - 1) / (4 * (2 * b - 1)))
    if (depth, fanout, eps) == (8, 2, 1.0):
        assert alg1_printed == pytest.approx(7 / 6) and alg1_printed > eps


TEN_THEN_NOTHING = [PointEvents.of([[0.1, 0.1]] * 10), PointEvents.empty(2), PointEvents.empty(2)]


@pins("E-phdstream-5")
@settings(max_examples=25, deadline=None)
@given(batches=event_batches(), counter=st.sampled_from(sorted(COUNTERS)))
@example(batches=TEN_THEN_NOTHING, counter="simple")
def test_algorithm_3_adds_counter_increments(batches: list[PointEvents], counter: str) -> None:
    """Noiseless, with T(t) = root (theta huge): G(root, t) is the number of points present at every t, for counters
    with memory too; the literal reading (d = the counter's output) counts earlier inputs again (30 for 10 points
    followed by two empty batches)."""
    P = HypercubePartition(2, 2)
    alg = PHDStream(P, 1.0, 1e6, noise=InsecureZeroNoise(), counter=COUNTERS[counter])
    truth = TrueStream(P)
    for batch in batches:
        release = alg.step(batch)
        truth.stage(batch).commit()
        assert release.leaf_values[()] == pytest.approx(truth.size, abs=1e-9)
    if batches is TEN_THEN_NOTHING:
        printed = PHDStream(P, 1.0, 1e6, noise=InsecureZeroNoise(), counter=COUNTERS[counter], as_printed=True)
        assert [printed.step(b).leaf_values[()] for b in batches] == pytest.approx([10.0, 20.0, 30.0])


@pins("E-phdstream-6")
@settings(max_examples=15, deadline=None)
@given(depth=depths(1, 5), eps=epsilons(0.2, 4.0), rule=st.sampled_from([LambdaRule.GENERAL, LambdaRule.PROOF]))
@example(depth=4, eps=1.0, rule=LambdaRule.GENERAL)
def test_efficient_phdstream_draws_at_algorithm_1s_scales(depth: int, eps: float, rule: LambdaRule) -> None:
    """Algorithm 6/7 by default draws at Algorithm 1's scales (PrivTree at eps/2 under ``rule``, Lap(2/eps) leaf
    counts); as printed it uses lambda of the full eps and Lap(2/eps') = Lap(4/eps) (6 and 4 at eps = 1, b = 2)."""
    P = HypercubePartition(2, depth)
    batch = PointEvents.of([[0.1, 0.1]] * 50 + [[0.7, 0.6]] * 5)
    for printed in (False, True):
        recorder = TapeRecorder(InsecureSeededNoise(0))
        EfficientPHDStream(P, eps, 0.0, noise=recorder, lambda_rule=rule, as_printed=printed).step(batch)
        tree = {d.params["scale"] for d in recorder.tape if "001-alg5" in d.site}
        leaf = {d.params["scale"] for d in recorder.tape if "001-alg8" in d.site}
        if printed:
            assert sorted(tree) == pytest.approx([3 * 2 / eps]) and sorted(leaf) == pytest.approx([4 / eps])
        else:
            assert sorted(tree) == pytest.approx([privtree_scales(P, eps / 2, rule)[0]])
            assert sorted(leaf) == pytest.approx([2 / eps])


class _HistorySelector:
    """M of 001-alg4: picks a counter by the input's parity and records how much history it was shown."""

    def __init__(self) -> None:
        self.seen: list[int] = []

    @property
    def claim(self) -> PrivacyClaim:
        return PrivacyClaim.pure(0.1, Neighbour.STREAM_ENTRY, "test")

    def select(self, t: int, x: int, history: Sequence[SelectiveRelease[Any]]) -> str:
        self.seen.append(len(history))
        return "even" if x % 2 == 0 else "odd"


@pins("E-phdstream-7")
@settings(max_examples=20, deadline=None)
@given(f=counter_streams("integer", max_size=12))
@example(f=[1, 2, 3])
def test_selective_counting_shows_the_selector_the_whole_history(f: list[int]) -> None:
    """M(f(t), g|[t-1]): the selector sees every earlier release (the printed M(f(t), g(t-1)) sees only the last)."""
    noise = InsecureZeroNoise()
    for printed in (False, True):
        selector = _HistorySelector()
        alg: SelectiveCounting[int, str] = SelectiveCounting(
            selector, lambda l: SimpleCounter(0.5, noise=scoped(noise, l)),
            PrivacyClaim.pure(0.5, Neighbour.STREAM_ENTRY, "test"), as_printed=printed)
        for x in f:
            alg.step(x)
        assert selector.seen == ([min(t, 1) for t in range(len(f))] if printed else list(range(len(f))))


@pins("E-phdstream-8")
@settings(max_examples=30, deadline=None)
@given(true=st.lists(points, min_size=1, max_size=30), synthetic=st.lists(points, max_size=30),
       boxes=st.lists(st.tuples(points, points), min_size=1, max_size=6))
@example(true=[(0.9, 0.9)] * 10, synthetic=[(0.1, 0.1)], boxes=[((0.0, 0.0), (0.2, 0.2))])
def test_relative_error_uses_one_thousandth_of_the_size(true: list[tuple[float, float]],
                                                        synthetic: list[tuple[float, float]],
                                                        boxes: list[tuple[tuple[float, float], ...]]) -> None:
    """r(Q, f, g, t) divides by max(q(f), 0.001 |f|) (section 5.4's formula; its "1%" would be 0.01): a box with no
    true point and one synthetic point among 10 true ones has error 1/0.01 = 100, not 10."""
    low = np.asarray([np.minimum(a, b) for a, b in boxes])
    high = np.asarray([np.maximum(a, b) for a, b in boxes])
    queries = RangeQueries(low, high)

    def count(pts: list[tuple[float, float]]) -> np.ndarray:
        arr = np.asarray(pts, dtype=float).reshape(-1, 2)
        return np.asarray([np.all((arr >= lo) & (arr <= hi), axis=1).sum() for lo, hi in zip(low, high, strict=True)])

    qf, qg = count(true), count(synthetic)
    by_hand = float(np.mean(np.abs(qf - qg) / np.maximum(qf, 0.001 * len(true))))
    assert relative_error(queries, true, synthetic) == pytest.approx(by_hand, rel=1e-12)
    if len(true) == 10 and synthetic == [(0.1, 0.1)] and len(boxes) == 1:
        assert by_hand == pytest.approx(100.0)
        assert relative_error(queries, true, synthetic, floor=0.01) == pytest.approx(10.0)


@pins("E-phdstream-9")
@settings(max_examples=20, deadline=None)
@given(batches=event_batches(), seed=st.integers(0, 2**16))
@example(batches=[PointEvents.of([[0.1, 0.1]] * 20 + [[0.9, 0.8]] * 10),
                  PointEvents.of([[0.1, 0.1]] * 5 + [[0.3, 0.6]] * 4, [-1] * 5 + [1] * 4)], seed=2)
def test_baseline_2_size_is_estimated_not_the_true_size(batches: list[PointEvents], seed: int) -> None:
    """Baseline 2 by default releases round(max(N^(t), 0)) points, N^ a private estimate; as printed it releases
    exactly the true |f(., t)| (a leak: one event changes the output size)."""
    P = HypercubePartition(2, 3)
    default = OfflinePrivTreeOnDifferential(P, 1.0, 0.0, noise=InsecureSeededNoise(seed))
    printed = OfflinePrivTreeOnDifferential(P, 1.0, 0.0, noise=InsecureSeededNoise(seed), as_printed=True)
    truth = TrueStream(P)
    for batch in batches:
        truth.stage(batch).commit()
        assert default.step(batch).size == round(max(default.N_hat, 0.0))
        assert printed.step(batch).size == truth.size
    assert default.claim.measure is Measure.PURE_DP and printed.claim.measure is Measure.NOT_PRIVATE
