"""Hypothesis properties of PHDStream (seed 001): consistency, rule (5), true counts, subtrees, equivalence."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from dpstream.counters import BinaryTreeCounter, BlockCounter, CounterFactory
from dpstream.noise import InsecureSeededNoise
from dpstream.phdstream import (
    EfficientPHDStream,
    HypercubePartition,
    LambdaRule,
    PHDStream,
    PointEvents,
    consistent_extension,
    is_consistent,
    privtree,
    simple_counter_factory,
)
from dpstream.phdstream.partition import Node, Partition
from dpstream.phdstream.stream import TrueStream, sample_rule5, synthetic_count
from dpstream.tape import TapeRecorder, TapeReplay

coords = st.sampled_from([0.0, 0.05, 0.2, 0.33, 0.5, 0.51, 0.75, 0.9, 1.0])
points = st.tuples(coords, coords)


@st.composite
def partitions(draw: st.DrawFn) -> Partition:
    return HypercubePartition(draw(st.integers(1, 2)), draw(st.integers(0, 3)), fanout=draw(st.integers(2, 3)))


@st.composite
def sparse_functions(draw: st.DrawFn, partition: Partition) -> dict[Node, float]:
    nodes = list(partition.nodes())
    keys = draw(st.lists(st.sampled_from(nodes), max_size=8))
    values = st.floats(-50, 50, allow_nan=False, allow_infinity=False)
    return {v: draw(values) for v in keys}


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_ext_output_is_always_consistent(data: st.DataObject) -> None:
    P = data.draw(partitions())
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
    s.commit(s.prepare(PointEvents.of(np.asarray(base, dtype=float).reshape(-1, 2))))
    before = dict(s.F)
    s.commit(s.prepare(PointEvents.of(extra)))
    s.commit(s.prepare(PointEvents.of(extra, [-1] * len(extra))))
    after = dict(s.F)
    assert after == before
    assert sum(s.present.values()) == len(base)


@settings(max_examples=60, deadline=None)
@given(data=st.data(), seed=st.integers(0, 2**31), eps=st.floats(0.05, 5.0),
       theta=st.floats(0, 20), rule=st.sampled_from(list(LambdaRule)))
def test_selected_subtree_is_valid_and_contains_the_root(data: st.DataObject, seed: int, eps: float,
                                                         theta: float, rule: LambdaRule) -> None:
    P = data.draw(partitions())
    leaf_values = data.draw(sparse_functions(P))
    F = consistent_extension(P, {v: x for v, x in leaf_values.items() if len(v) == P.max_depth})
    S = privtree(P, F, eps, theta, InsecureSeededNoise(seed), lambda_rule=rule)
    assert () in S.nodes and S.is_valid(P)


@st.composite
def event_streams(draw: st.DrawFn) -> list[PointEvents]:
    present: list[tuple[float, float]] = []
    out = []
    for _ in range(draw(st.integers(1, 5))):
        new = draw(st.lists(points, max_size=12))
        k = draw(st.integers(0, len(present)))
        idx = sorted(draw(st.lists(st.integers(0, max(len(present) - 1, 0)), max_size=k, unique=True)), reverse=True)
        gone = [present.pop(i) for i in idx if present]
        present += new
        pts = np.asarray(new + gone, dtype=float).reshape(-1, 2)
        out.append(PointEvents.of(pts, [1] * len(new) + [-1] * len(gone)))
    return out


COUNTERS: dict[str, CounterFactory] = {
    "simple": simple_counter_factory,
    "block-2": lambda e, n: BlockCounter(e, 2, n),
    "binary-tree-8": lambda e, n: BinaryTreeCounter(e, 8, n),
}


@settings(max_examples=60, deadline=None)
@given(batches=event_streams(), seed=st.integers(0, 2**31), depth=st.integers(1, 4), fanout=st.sampled_from([2, 3]),
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
    naive = PHDStream(P, eps, theta, recorder, counter=COUNTERS[counter], lambda_rule=rule)
    a = [naive.step(b) for b in batches]
    with TapeReplay(recorder.tape) as replay:
        efficient = EfficientPHDStream(P, eps, theta, replay, counter=COUNTERS[counter], lambda_rule=rule)
        b = [efficient.step(x) for x in batches]
    for ra, rb in zip(a, b, strict=True):
        assert ra.tree == rb.tree
        assert set(ra.node_values) == set(rb.node_values) == set(ra.tree.nodes)
        for v in ra.tree.nodes:
            assert math.isclose(ra.node_values[v], rb.node_values[v], rel_tol=1e-9, abs_tol=1e-9)
        assert ra.counts == rb.counts
        assert np.array_equal(ra.points, rb.points)
