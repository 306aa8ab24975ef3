"""PrivTree_T (001-alg5): the scales of L3, the printed lines, sites, its law, bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dpstream.audit.phdstream.loss import enumerate_subtrees, privtree_log_probability
from dpstream.claims import Measure, Neighbour
from dpstream.errors import DPStreamInputError
from dpstream.insecure import InsecureSeededNoise, InsecureZeroNoise, TapeRecorder, TapeReplay
from dpstream.phdstream import HypercubePartition, LambdaRule, PrivTree, privtree, privtree_scales, tree_function

P = HypercubePartition(2, 3)


@pytest.mark.parametrize(("rule", "expected"), [
    (LambdaRule.PRINTED, 3 * 2 / 0.5),   # (2b-1)/(b-1) * 2/eps, b = 2
    (LambdaRule.PROOF, 3 / 0.5),          # (2b-1)/((b-1) eps)
    (LambdaRule.GENERAL, 3 / 0.5),        # D/eps with D = 3
])
def test_scales_of_line_3(rule: LambdaRule, expected: float) -> None:
    lam, delta = privtree_scales(P, 0.5, rule)
    assert lam == pytest.approx(expected, rel=1e-15)
    assert delta == pytest.approx(expected * math.log(2), rel=1e-15)
    assert privtree_scales(HypercubePartition(2, 10, fanout=4), 1.0, LambdaRule.PROOF)[0] == pytest.approx(7 / 3)
    assert privtree_scales(HypercubePartition(2, 10), 1.0, LambdaRule.GENERAL)[0] == 10.0


def test_noiseless_split_rule() -> None:
    """Zero noise: split iff max(F(v) - depth delta, theta - delta) > theta (L9-L13)."""
    lam, delta = privtree_scales(P, 1.0, LambdaRule.GENERAL)  # lambda = 3, delta = 3 ln 2 = 2.079
    pts = [[0.1, 0.1]] * 5 + [[0.9, 0.9]] * 2
    F = tree_function(P, pts)
    S = privtree(P, F, 1.0, 0.0, noise=InsecureZeroNoise())
    # root: 7 > 0 split; (0,): 5 - 2.08 > 0 split; (1,): 2 - 2.08 < 0 leaf;
    # (0,0): 5 - 4.16 > 0 split; (0,1): 0 - 4.16 -> clamped to theta - delta < 0 leaf; depth-3 vertices: leaves
    assert S.internal() == [(), (0,), (0, 0)]
    assert set(S.leaves) == {(1,), (0, 1), (0, 0, 0), (0, 0, 1)}
    assert S.is_valid(P)
    assert lam == 3.0 and delta == pytest.approx(3 * math.log(2))


def test_sites_and_scale_on_the_tape() -> None:
    recorder = TapeRecorder(InsecureSeededNoise(0))
    S = privtree(P, tree_function(P, [[0.2, 0.3]] * 20), 1.0, 0.0, noise=recorder, t=4)
    sites = [d.site for d in recorder.tape]
    assert sites[0] == "001-alg5 L11 t=4 v=root"
    assert len(sites) == len(S)  # one Lap(lambda) per visited vertex
    assert all(d.params["scale"] == 3.0 for d in recorder.tape)
    again = privtree(P, tree_function(P, [[0.2, 0.3]] * 20), 1.0, 0.0, noise=TapeReplay(recorder.tape), t=4)
    assert again == S


def test_law_matches_the_product_of_laplace_tails() -> None:
    """Sampled subtree frequencies vs the exact law (chi-square, false-alarm 1e-6 at a fixed seed)."""
    F = tree_function(P, [[0.1, 0.2]] * 6 + [[0.7, 0.6]] * 3)
    lam, delta = privtree_scales(P, 1.0, LambdaRule.GENERAL)
    law = {S.nodes: math.exp(privtree_log_probability(P, F, S, lam, delta, 1.0)) for S in enumerate_subtrees(P)}
    assert sum(law.values()) == pytest.approx(1.0, abs=1e-12)
    n = 4000
    counts: dict[frozenset[tuple[int, ...]], int] = {}
    for src in InsecureSeededNoise.independent(11, n):
        S = privtree(P, F, 1.0, 1.0, noise=src)
        counts[S.nodes] = counts.get(S.nodes, 0) + 1
    keys = [k for k in law if law[k] * n >= 5]
    rare = [k for k in law if law[k] * n < 5]
    observed = [counts.get(k, 0) for k in keys]
    expected = [law[k] * n for k in keys]
    if rare:
        observed.append(sum(counts.get(k, 0) for k in rare))
        expected.append(sum(law[k] for k in rare) * n)
    _, p = stats.chisquare(observed, expected)
    assert set(counts) <= set(law)
    assert p > 1e-6


def test_claim() -> None:
    claim = PrivTree(P, 0.7).claim
    assert claim.measure is Measure.PURE_DP and claim.parameter == 0.7
    assert claim.neighbour is Neighbour.EVENT and claim.source == "001-thm3.1"
    assert "path-monotone" in PrivTree(P, 0.7, lambda_rule=LambdaRule.PROOF).claim.note
    # a deep tree with the App. A scale: the claim is the worst case D/lambda over general F in C(T)
    deep = HypercubePartition(2, 8)
    proof = PrivTree(deep, 0.7, lambda_rule=LambdaRule.PROOF)
    lam = 3 / 0.7  # App. A: (2b-1)/(b-1) / eps with b = 2 (the printed L3 doubles it, E-phdstream-4)
    assert proof.claim.parameter == pytest.approx(8 / lam) and proof.claim.parameter > 0.7
    assert proof.paper_claim.parameter == 0.7


@pytest.mark.parametrize(("kwargs", "field"), [
    ({"theta": -1.0}, "theta"),
    ({"epsilon": 0.0}, "epsilon"),
    ({"epsilon": math.inf}, "epsilon"),
    ({"F": {(): 1.0, (0,): 3.0}}, "F"),          # not consistent (6)
    ({"F": {(0, 0, 0, 0): 1.0}}, "F"),           # not a vertex of T
])
def test_bad_input_raises_before_any_draw(kwargs: dict[str, object], field: str) -> None:
    args: dict[str, object] = {"F": {}, "epsilon": 1.0, "theta": 0.0}
    args.update(kwargs)
    recorder = TapeRecorder(InsecureSeededNoise(0))
    with pytest.raises(DPStreamInputError) as info:
        privtree(P, args["F"], args["epsilon"], args["theta"], noise=recorder)  # type: ignore[arg-type]
    assert info.value.field == field
    assert len(recorder.tape) == 0


def test_every_output_is_a_valid_subtree() -> None:
    F = tree_function(P, np.array([[0.3, 0.3]] * 40))
    for src in InsecureSeededNoise.independent(5, 50):
        S = privtree(P, F, 0.5, 0.0, noise=src)
        assert S.is_valid(P) and () in S.nodes
