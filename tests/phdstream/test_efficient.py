"""Compute-efficient PHDStream (001-alg6/alg7): equivalence with the naive Algorithm 3, work per step, as printed."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpstream.counters import BlockCounter
from dpstream.errors import DPStreamInputError
from dpstream.insecure import InsecureSeededNoise, TapeRecorder, TapeReplay
from dpstream.noise import data_rng
from dpstream.phdstream import (
    EfficientPHDStream,
    HypercubePartition,
    LambdaRule,
    PHDStream,
    PointEvents,
    simple_counter_factory,
)
from dpstream.phdstream.counters_tree import CounterFactory


def stream(seed: int, steps: int) -> list[PointEvents]:
    rng = data_rng(seed)
    present: list[list[float]] = []
    out = []
    for _ in range(steps):
        new = (rng.random((40, 2)) ** 3).tolist()
        gone = [present.pop(int(rng.integers(0, len(present)))) for _ in range(min(15, len(present)))]
        present += new
        out.append(PointEvents.of(new + gone, [1] * len(new) + [-1] * len(gone)))
    return out


@pytest.mark.parametrize(("counter", "rule"), [
    (simple_counter_factory, LambdaRule.GENERAL),
    (simple_counter_factory, LambdaRule.PROOF),
    (lambda e, n: BlockCounter(e, 2, noise=n), LambdaRule.GENERAL),
])
def test_same_tape_same_trees_and_values(counter: CounterFactory, rule: LambdaRule) -> None:
    P = HypercubePartition(2, 5)
    batches = stream(1, 8)
    recorder = TapeRecorder(InsecureSeededNoise(4))
    naive = PHDStream(P, 1.0, 0.0, noise=recorder, counter=counter, lambda_rule=rule)
    a = [naive.step(b) for b in batches]
    with TapeReplay(recorder.tape) as replay:  # every site used, none missing, parameters equal
        efficient = EfficientPHDStream(P, 1.0, 0.0, noise=replay, counter=counter, lambda_rule=rule)
        b = [efficient.step(x) for x in batches]
    for ra, rb in zip(a, b, strict=True):
        assert ra.tree == rb.tree
        assert set(rb.node_values) == set(ra.tree.nodes)
        for v in ra.tree.nodes:
            assert math.isclose(ra.node_values[v], rb.node_values[v], rel_tol=1e-9, abs_tol=1e-9)
        assert ra.counts == rb.counts
        assert np.array_equal(ra.points, rb.points)


def test_work_is_the_size_of_the_selected_subtree() -> None:
    P = HypercubePartition(2, 20)  # |V(T)| = 2^21 - 1: the naive algorithm could not even store G
    recorder = TapeRecorder(InsecureSeededNoise(0))
    alg = EfficientPHDStream(P, 1.0, 0.0, noise=recorder)
    for batch in stream(2, 5):
        release = alg.step(batch)
        assert alg.work_log()[-1] == len(release.tree)
    privtree_draws = [d for d in recorder.tape if d.site.startswith("001-alg5 L11")]
    assert len(privtree_draws) == sum(alg.work_log())
    assert max(alg.work_log()) < 1000


def test_as_printed_scales() -> None:
    """E-phdstream-6: L3 uses the full eps, L20 adds Lap(2/eps') with eps' = eps/2, i.e. Lap(4/eps)."""
    P = HypercubePartition(2, 4)
    recorder = TapeRecorder(InsecureSeededNoise(0))
    alg = EfficientPHDStream(P, 1.0, 0.0, noise=recorder, as_printed=True)
    alg.step(PointEvents.of([[0.1, 0.1]] * 50))
    assert alg.lam == pytest.approx(3 * 2 / 1.0)
    tree_scales = {d.params["scale"] for d in recorder.tape if "001-alg5" in d.site}
    count_scales = {d.params["scale"] for d in recorder.tape if "001-alg8" in d.site}
    assert sorted(tree_scales) == pytest.approx([6.0]) and sorted(count_scales) == pytest.approx([4.0])
    default = EfficientPHDStream(P, 1.0, 0.0, noise=InsecureSeededNoise(0))
    assert default.lam == pytest.approx(4 / 0.5)  # D / (eps/2)
    assert "worst case" in alg.claim.note


def test_bad_batch_leaves_everything_unchanged() -> None:
    P = HypercubePartition(2, 6)
    recorder = TapeRecorder(InsecureSeededNoise(0))
    alg = EfficientPHDStream(P, 1.0, 0.0, noise=recorder)
    alg.step(PointEvents.of([[0.2, 0.2]] * 5))
    state = (alg.t, dict(alg.C_a), dict(alg.C_n), dict(alg.C_d), len(recorder.tape))
    for bad in (PointEvents.of([[0.3, 0.3]], [-1]), PointEvents.of([[0.3, 1.3]])):
        with pytest.raises(DPStreamInputError):
            alg.step(bad)
        assert (alg.t, dict(alg.C_a), dict(alg.C_n), dict(alg.C_d), len(recorder.tape)) == state


def test_failed_draw_leaves_everything_unchanged() -> None:
    P = HypercubePartition(2, 4)
    batch = PointEvents.of([[0.2, 0.2]] * 30)
    recorder = TapeRecorder(InsecureSeededNoise(0))
    EfficientPHDStream(P, 1.0, 0.0, noise=recorder).step(batch)
    draws = list(recorder.tape.draws)
    truncated = type(recorder.tape)(tuple(draws[:-1]))  # the last draw is missing
    alg = EfficientPHDStream(P, 1.0, 0.0, noise=TapeReplay(truncated))
    with pytest.raises(Exception, match="not on the tape"):
        alg.step(batch)
    assert alg.t == 0 and alg.C_n == {} and alg.C_d == {} and alg.C_a == {}
    assert all(c.t == 0 for c in alg.counters.counters.values())


def test_boolean_cube_stream_end_to_end() -> None:
    """PHDStream on Omega = {0,1}^4 (a vertex fixes a coordinate): naive and efficient agree on one tape."""
    from dpstream.phdstream import BooleanCubePartition

    P = BooleanCubePartition(4)
    batches = [PointEvents.of([[0, 1, 1, 0]] * 20 + [[1, 1, 0, 0]] * 5),
               PointEvents.of([[0, 1, 1, 0]] * 4, [-1] * 4)]
    recorder = TapeRecorder(InsecureSeededNoise(6))
    naive = PHDStream(P, 1.0, 0.0, noise=recorder, counter=simple_counter_factory)
    a = [naive.step(b) for b in batches]
    with TapeReplay(recorder.tape) as replay:
        efficient = EfficientPHDStream(P, 1.0, 0.0, noise=replay)
        b = [efficient.step(x) for x in batches]
    for ra, rb in zip(a, b, strict=True):
        assert ra.tree == rb.tree and np.array_equal(ra.points, rb.points)
        assert set(np.unique(rb.points)) <= {0.0, 1.0}
