"""PHDStreamTree (001-alg1), with counters (001-alg3), PHDStream (001-alg2): releases recomputed from the tape.

The expected trees and node values are recomputed here from the printed lines and the noise
tape alone (PrivTree's BFS with b(v) + tape value > theta, d(v, t) = nabla F(v, t) + tape value,
G = sum of extensions with the weights of section 3.2 computed by brute force), not by
calling the package's tree or extension code.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pytest

from dpstream.claims import Measure, Neighbour
from dpstream.counters import BlockCounter
from dpstream.errors import DPStreamInputError, StreamRangeError
from dpstream.insecure import InsecureSeededNoise, InsecureZeroNoise, TapeRecorder
from dpstream.noise import data_rng
from dpstream.phdstream import (
    HypercubePartition,
    LambdaRule,
    PHDStream,
    PHDStreamTree,
    PHDStreamTreeWithCounters,
    PointEvents,
    privtree_scales,
    simple_counter_factory,
)
from dpstream.phdstream.partition import Node, Partition
from dpstream.phdstream.stream import synthetic_count
from dpstream.tape import Tape

P = HypercubePartition(2, 3)
EPS = 1.0


def label(v: Node) -> str:
    return "root" if not v else ".".join(map(str, v))


def stream_with_deletions(seed: int, steps: int, per_step: int = 25) -> list[PointEvents]:
    rng = data_rng(seed)
    present: list[list[float]] = []
    out = []
    for _ in range(steps):
        new = (rng.random((per_step, 2)) ** 2).tolist()
        gone = [present.pop(int(rng.integers(0, len(present)))) for _ in range(min(8, len(present)))]
        present += new
        out.append(PointEvents.of(new + gone, [1] * len(new) + [-1] * len(gone)))
    return out


def brute_counts(partition: Partition, batch: PointEvents) -> dict[Node, float]:
    """nabla F(v, t) for every vertex, by counting the points whose leaf path starts with v."""
    paths = [tuple(int(i) for i in p) for p in partition.locate(batch.points)]
    return {v: float(sum(m for p, m in zip(paths, batch.moves.tolist(), strict=True) if p[:len(v)] == v))
            for v in partition.nodes()}


def weight(partition: Partition, v: Node, u: Node) -> float:
    if u[:len(v)] == v:
        return float(partition.beta) ** -(len(u) - len(v))
    return 1.0 if v[:len(u)] == u else 0.0


def replay_expected(partition: Partition, batches: list[PointEvents], tape: Tape, eps: float, theta: float,
                    count_site: Callable[[Node, int, int], str], rule: LambdaRule = LambdaRule.GENERAL,
                    ) -> list[tuple[frozenset[Node], dict[Node, float]]]:
    noise = {d.site: d.value for d in tape}
    _, delta = privtree_scales(partition, eps / 2, rule)
    nodes = list(partition.nodes())
    G = {v: 0.0 for v in nodes}
    activations: dict[Node, int] = {}
    out: list[tuple[frozenset[Node], dict[Node, float]]] = []
    for t, batch in enumerate(batches, start=1):
        dF = brute_counts(partition, batch)
        tree: list[Node] = []
        queue: list[Node] = [()]
        while queue:
            v = queue.pop(0)
            tree.append(v)
            b = max(G[v] + dF[v] - len(v) * delta, theta - delta)
            if b + noise[f"001-alg5 L11 t={t} v={label(v)}"] > theta:
                queue += partition.children(v)
        leaves = [v for v in tree if not any(c in tree for c in partition.children(v))]
        d = {}
        for v in leaves:
            activations[v] = activations.get(v, 0) + 1
            d[v] = dF[v] + noise[count_site(v, t, activations[v])]
        G = {u: G[u] + sum(x * weight(partition, v, u) for v, x in d.items()) for u in nodes}
        out.append((frozenset(tree), dict(G)))
    return out


def test_algorithm_1_releases_what_the_tape_prescribes() -> None:
    batches = stream_with_deletions(1, 5)
    recorder = TapeRecorder(InsecureSeededNoise(7))
    alg = PHDStreamTree(P, EPS, 1.0, noise=recorder)
    releases = [alg.step(brute_counts(P, b)) for b in batches]
    expected = replay_expected(P, batches, recorder.tape, EPS, 1.0, lambda v, t, k: f"001-alg1 L6 t={t} v={label(v)}")
    for release, (tree, G) in zip(releases, expected, strict=True):
        assert release.tree.nodes == tree
        for v in P.nodes():
            assert release.values[v] == pytest.approx(G[v], abs=1e-9)
    assert all(d.params["scale"] == pytest.approx(2 / EPS) for d in recorder.tape if "L6" in d.site)


@pytest.mark.parametrize("rule", [LambdaRule.GENERAL, LambdaRule.PRINTED])
def test_algorithm_3_with_simple_counters(rule: LambdaRule) -> None:
    batches = stream_with_deletions(2, 6)
    recorder = TapeRecorder(InsecureSeededNoise(8))
    alg = PHDStream(P, EPS, 0.0, noise=recorder, counter=simple_counter_factory, lambda_rule=rule)
    releases = [alg.step(b) for b in batches]
    expected = replay_expected(P, batches, recorder.tape, EPS, 0.0,
                               lambda v, t, k: f"001-alg3 L7 v={label(v)} / 001-alg8 L4 t={k}", rule)
    for release, (tree, G) in zip(releases, expected, strict=True):
        assert release.tree.nodes == tree
        for v in tree:
            assert release.node_values[v] == pytest.approx(G[v], abs=1e-9)
    # the counters have budget eps/2: Lap(2/eps), as Algorithm 1 L6
    assert all(d.params["scale"] == pytest.approx(2 / EPS) for d in recorder.tape if "001-alg8" in d.site)


def test_rule_5_samples_ceil_g_points_in_each_leaf() -> None:
    alg = PHDStream(P, EPS, 0.0, noise=InsecureSeededNoise(3))
    for batch in stream_with_deletions(3, 4):
        release = alg.step(batch)
        for v, g in release.leaf_values.items():
            assert release.counts[v] == max(0, math.ceil(g - 1e-9))
        assert release.size == sum(release.counts.values())
        located = [tuple(int(i) for i in p) for p in P.locate(release.points)]
        for v, k in release.counts.items():
            assert sum(1 for p in located if p[:len(v)] == v) == k


def test_synthetic_count_guard() -> None:
    assert synthetic_count(3.0000000000000004) == 3
    assert synthetic_count(3.2) == 4
    assert synthetic_count(-0.5) == 0
    with pytest.raises(DPStreamInputError):
        synthetic_count(math.nan)


def test_noiseless_total_is_exact() -> None:
    """Without privacy noise, G(root, t) = |f(., t)| (Ext keeps the total; Lap draws are 0)."""
    alg = PHDStream(P, EPS, 0.0, noise=InsecureZeroNoise(), counter=simple_counter_factory)
    total = 0
    for batch in stream_with_deletions(4, 5):
        total += int(batch.moves.sum())
        release = alg.step(batch)
        assert sum(release.leaf_values.values()) == pytest.approx(total, abs=1e-9)


def test_algorithm_3_as_printed_counts_inputs_again() -> None:
    """E-phdstream-5: with d(v, t) = C_v's output, an input is added to G at every later activation."""
    batch = PointEvents.of([[0.1, 0.1]] * 10)
    empty = PointEvents.of(np.zeros((0, 2)))
    default = PHDStream(P, EPS, 1e6, noise=InsecureZeroNoise(),
                        counter=simple_counter_factory)  # theta huge: T(t) = root
    printed = PHDStream(P, EPS, 1e6, noise=InsecureZeroNoise(), counter=simple_counter_factory, as_printed=True)
    for alg in (default, printed):
        alg.step(batch)
        alg.step(empty)
        alg.step(empty)
    assert default.releases[-1].leaf_values[()] == pytest.approx(10.0)
    assert printed.releases[-1].leaf_values[()] == pytest.approx(30.0)


def test_block_counter_per_vertex() -> None:
    alg = PHDStream(P, EPS, 0.0, noise=InsecureSeededNoise(1), counter=lambda e, n: BlockCounter(e, 8, noise=n))
    for batch in stream_with_deletions(5, 3):
        alg.step(batch)
    assert alg.claim.parameter == EPS


def test_claims() -> None:
    c = PHDStream(P, 0.5).claim
    assert c.measure is Measure.PURE_DP and c.parameter == 0.5 and c.neighbour is Neighbour.EVENT
    deep = HypercubePartition(2, 8)
    proof_scale = PHDStream(deep, 1.0, lambda_rule=LambdaRule.PROOF)
    note = proof_scale.claim.note
    assert "worst case" in note and "1.833" in note  # 1/2 + 8/6 = 1.833 eps
    assert "does NOT hold" in note
    # the claim states what holds; the paper's statement stays readable
    assert proof_scale.claim.parameter == pytest.approx(0.5 + 8 / 6)
    assert proof_scale.paper_claim.parameter == 1.0 and proof_scale.paper_claim.source == "001-thm3.2"
    with_counters = PHDStream(P, 1.0, counter=simple_counter_factory).claim
    assert with_counters.parameter == pytest.approx(1.0) and with_counters.source == "001-thm4.2"
    assert "does NOT" not in with_counters.note
    # Algorithm 3 (counters) with the App. A scale says it too (the note was lost in the composition before)
    counters_claim = PHDStream(deep, 1.0, counter=simple_counter_factory, lambda_rule=LambdaRule.PROOF).claim
    assert "does NOT hold" in counters_claim.note and "1.833" in counters_claim.note
    assert counters_claim.parameter == pytest.approx(0.5 + 8 / 6)  # Theorem 4.2 with PrivTree's true cost
    # at D = 3 the App. A scale gives exactly eps/2 + 3/6 = eps: no warning
    assert "does NOT" not in PHDStream(P, 1.0, lambda_rule=LambdaRule.PROOF).claim.note


@pytest.mark.parametrize(("batch", "field"), [
    (PointEvents.of([[1.5, 0.2]]), "points"),
    (PointEvents.of([[0.3, 0.3]], [-1]), "moves"),
    (PointEvents.of([[0.2, 0.2], [0.2, 0.2]], [1, -1]), None),  # add then remove in one batch: valid
    ("not a batch", "batch"),
])
def test_bad_input_no_draw_no_state_change(batch: object, field: str | None) -> None:
    recorder = TapeRecorder(InsecureSeededNoise(0))
    alg = PHDStream(P, EPS, 0.0, noise=recorder, counter=simple_counter_factory)
    alg.step(PointEvents.of([[0.25, 0.25]] * 3))
    before = (alg.t, len(recorder.tape), dict(alg._true.present), dict(alg.tree.G))
    if field is None:
        alg.step(batch)  # type: ignore[arg-type]
        assert alg.t == 2
        return
    with pytest.raises(DPStreamInputError) as info:
        alg.step(batch)  # type: ignore[arg-type]
    assert info.value.field == field
    assert (alg.t, len(recorder.tape), dict(alg._true.present), dict(alg.tree.G)) == before


@pytest.mark.parametrize("make", [lambda n: PHDStreamTree(P, EPS, 0.0, noise=n),
                                  lambda n: PHDStreamTreeWithCounters(P, EPS, 0.0, noise=n)])
def test_tree_level_counts_stay_within_the_range(make: Callable[[TapeRecorder], PHDStreamTree]) -> None:
    """nabla F given directly (not from points) may hold any finite counts; the running F(v, t) is a float64 sum, so
    one point more beyond 2^53 could move it by 2. A nabla F or an F(v, t) outside +-(2^53 - 1) is refused before any
    draw, nothing changed (docs/counters.md, "Range")."""
    M = 2**53 - 1
    path = [(), (0,), (0, 0), (0, 0, 0)][: P.max_depth + 1]

    def along(x: float) -> dict[Node, float]:
        return {v: x for v in path}

    recorder = TapeRecorder(InsecureSeededNoise(0))
    alg = make(recorder)
    alg.step(along(M))  # F(v, 1) = M on the path: inside
    drawn, G = len(recorder.tape), dict(alg.G)
    for bad in (along(1.0), along(2.0**53), along(-(2.0**53))):
        with pytest.raises(StreamRangeError) as info:
            alg.step(bad)
        assert info.value.field == "nabla F"
        assert (alg.t, len(recorder.tape), dict(alg.G)) == (1, drawn, G)
    alg.step(along(-1.0))  # F(v, 2) = M - 1: still usable
    assert alg.t == 2


def test_tree_level_input_validation() -> None:
    alg = PHDStreamTree(P, EPS, 0.0, noise=InsecureSeededNoise(0))
    with pytest.raises(DPStreamInputError):
        alg.step({(): 1.0})  # inconsistent: the children do not sum to 1
    with pytest.raises(DPStreamInputError):
        alg.step({(): -1.0, (0,): -1.0, (0, 0): -1.0, (0, 0, 0): -1.0})  # removes an absent point
    assert alg.t == 0
    with pytest.raises(DPStreamInputError) as info:
        PHDStreamTreeWithCounters(P, EPS, theta=-0.5)
    assert info.value.field == "theta"
