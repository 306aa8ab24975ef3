"""An independent exact check of E-phdstream-3 (review of issue 4): PrivTree_T on a non-monotone F.

Nothing here uses the package's PrivTree, scales, subtree enumeration or exact-loss code: the law
of PrivTree_T's output (001-alg5) is written again from the printed lines. A subtree S is output
with probability

    prod_{v in S, depth(v) < D} P[b(v) + Lap(lambda) > theta]^[v split in S] P[... <= theta]^[v leaf of S],
    b(v) = max(F(v) - depth(v) delta, theta - delta),  delta = lambda ln beta   (L9-L12),

(a vertex at the maximum depth D draws, but its draw decides nothing), so the exact privacy loss of
neighbours F, F' is max over all subtrees S of |log P[S | F] - log P[S | F']|, computed here by
enumerating every subtree of a small tree (677 for beta = 2, D = 4; 730 for beta = 3, D = 3).

Findings checked (E-phdstream-3, docs/errata/phdstream.md):

* on a consistent F that grows along a path (F(v_i) = theta - 1.5 + i delta, siblings negative),
  adding one point at the path's leaf moves every split decision on the path by exactly 1/lambda:
  the loss is D/lambda -- 4/3 eps > eps with the Appendix A scale lambda = (2b-1)/((b-1) eps), b = 2;
* the default scale lambda = D/eps keeps the loss <= eps on every consistent F tried (random signs);
* the Appendix A scale keeps it <= eps on counts (path-monotone F), as the appendix proves;
* a PHDStream step with the default scale at eps/2 plus Lap(2/eps) leaf counts loses exactly eps.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator

import pytest

from dpstream.audit.phdstream.loss import privtree_sup_loss
from dpstream.noise import data_rng
from dpstream.phdstream import HypercubePartition, LambdaRule, privtree_scales

Vertex = tuple[int, ...]
EPS = 1.0


def log_tail(a: float, lam: float) -> float:
    """log P[Lap(lam) > a] (= log P[Lap(lam) < -a] by symmetry), without cancellation."""
    return -a / lam - math.log(2.0) if a >= 0 else math.log1p(-0.5 * math.exp(a / lam))


def all_subtrees(beta: int, D: int, v: Vertex = ()) -> Iterator[frozenset[Vertex]]:
    """Every vertex set PrivTree can output below v: v alone, or v split into all of its children."""
    yield frozenset([v])
    if len(v) < D:
        for parts in itertools.product(*(list(all_subtrees(beta, D, (*v, i))) for i in range(beta))):
            yield frozenset([v]).union(*parts)


def log_probability(S: frozenset[Vertex], F: dict[Vertex, float], beta: int, D: int, lam: float,
                    theta: float) -> float:
    delta = lam * math.log(beta)
    total = 0.0
    for v in S:
        if len(v) == D:
            continue
        b = max(F.get(v, 0.0) - len(v) * delta, theta - delta)
        # split iff b + Lap > theta; leaf iff b + Lap <= theta, i.e. Lap < theta - b (a null event apart)
        total += log_tail(theta - b, lam) if (*v, 0) in S else log_tail(b - theta, lam)
    return total


def sup_loss(F: dict[Vertex, float], F2: dict[Vertex, float], beta: int, D: int, lam: float, theta: float) -> float:
    return max(abs(log_probability(S, F, beta, D, lam, theta) - log_probability(S, F2, beta, D, lam, theta))
               for S in all_subtrees(beta, D))


def from_leaves(leaves: dict[Vertex, float]) -> dict[Vertex, float]:
    """The consistent function (6) with these leaf values: every vertex sums its leaves."""
    F: dict[Vertex, float] = {}
    for leaf, x in leaves.items():
        for k in range(len(leaf) + 1):
            F[leaf[:k]] = F.get(leaf[:k], 0.0) + x
    return F


def growing_path(beta: int, D: int, path: Vertex, lam: float, theta: float) -> dict[Vertex, float]:
    """F(v_i) = theta - 1.5 + i delta on the path; each path vertex's siblings share F(v_{i-1}) - F(v_i) < 0
    evenly over all their leaves (so F is consistent and not path-monotone)."""
    delta = lam * math.log(beta)
    target = [theta - 1.5 + i * delta for i in range(D + 1)]
    leaves: dict[Vertex, float] = {path: target[D]}
    for i in range(1, D + 1):
        siblings = [(*path[: i - 1], j) for j in range(beta) if j != path[i - 1]]
        below = [s + rest for s in siblings for rest in itertools.product(range(beta), repeat=D - i)]
        for leaf in below:
            leaves[leaf] = (target[i - 1] - target[i]) / len(below)
    return from_leaves(leaves)


def add_point(F: dict[Vertex, float], leaf: Vertex) -> dict[Vertex, float]:
    return {v: x + (1.0 if leaf[: len(v)] == v else 0.0) for v, x in F.items()}


def app_a_scale(beta: int, eps: float) -> float:
    return (2 * beta - 1) / ((beta - 1) * eps)


@pytest.mark.parametrize(("beta", "D", "path"), [(2, 4, (1, 0, 1, 1)), (3, 3, (2, 0, 1))])
def test_growing_path_loses_depth_over_lambda(beta: int, D: int, path: Vertex) -> None:
    theta = 2.0
    for lam, expected_over_eps in ((app_a_scale(beta, EPS), None), (D / EPS, 1.0)):
        assert lam * math.log(beta) >= 1.5  # every b(v_i) = theta - 1.5 is above the clamp theta - delta
        F = growing_path(beta, D, path, lam, theta)
        F2 = add_point(F, path)
        loss = sup_loss(F, F2, beta, D, lam, theta)
        assert loss == pytest.approx(D / lam, rel=1e-12)
        if expected_over_eps is not None:
            assert loss == pytest.approx(expected_over_eps * EPS, rel=1e-12)
    # the Appendix A scale breaks Theorem 3.1 here: D / lambda = 4/3 (b = 2, D = 4) and 6/5 (b = 3, D = 3)
    assert D / app_a_scale(beta, EPS) > EPS
    # the package's exact dynamic programme (used by the audits) agrees with this enumeration
    P = HypercubePartition(2, D, fanout=beta)
    lam = app_a_scale(beta, EPS)
    F = growing_path(beta, D, path, lam, theta)
    assert privtree_sup_loss(P, add_point(F, path), F, lam, lam * math.log(beta), theta) == pytest.approx(
        sup_loss(F, add_point(F, path), beta, D, lam, theta), rel=1e-12)
    # and the package's scales are the formulas above
    assert privtree_scales(P, EPS, LambdaRule.PROOF)[0] == pytest.approx(app_a_scale(beta, EPS))
    assert privtree_scales(P, EPS, LambdaRule.GENERAL)[0] == pytest.approx(D / EPS)


def test_default_scale_meets_eps_on_random_consistent_functions() -> None:
    """lambda = D/eps: <= eps for consistent F of both signs (one point added at a random leaf).

    Deterministic (fixed data seed); the bound is a theorem, so any excess would be a real failure.
    """
    beta, D = 2, 4
    lam = D / EPS
    rng = data_rng(11)
    leaves_of_T = list(itertools.product(range(beta), repeat=D))
    worst = 0.0
    for _ in range(40):
        values = rng.normal(0.0, float(rng.choice([1.0, 5.0, 20.0])), len(leaves_of_T))
        F = from_leaves(dict(zip(leaves_of_T, values.tolist(), strict=True)))
        leaf = leaves_of_T[int(rng.integers(0, len(leaves_of_T)))]
        theta = float(rng.choice([0.0, 1.0, 4.0]))
        worst = max(worst, sup_loss(F, add_point(F, leaf), beta, D, lam, theta))
    assert 0.0 < worst <= EPS * (1 + 1e-12)


def test_app_a_scale_meets_eps_on_counts() -> None:
    """Appendix A's setting: F counts points (non-negative leaves), and there lambda = 3/eps is enough."""
    beta, D = 2, 4
    lam = app_a_scale(beta, EPS)
    rng = data_rng(12)
    leaves_of_T = list(itertools.product(range(beta), repeat=D))
    worst = 0.0
    for _ in range(40):
        n = len(leaves_of_T)
        counts = rng.poisson(float(rng.choice([0.5, 3.0, 12.0])), n) * (rng.random(n) < 0.5)
        F = from_leaves(dict(zip(leaves_of_T, counts.astype(float).tolist(), strict=True)))
        leaf = leaves_of_T[int(rng.integers(0, len(leaves_of_T)))]
        theta = float(rng.choice([0.0, 1.0, 4.0]))
        worst = max(worst, sup_loss(F, add_point(F, leaf), beta, D, lam, theta),
                    sup_loss(add_point(F, leaf), F, beta, D, lam, theta))
    assert 0.0 < worst <= EPS * (1 + 1e-12)


def test_phdstream_step_with_the_default_scale_loses_exactly_eps() -> None:
    """One PHDStream step: PrivTree (eps/2, lambda = 2D/eps) on the growing path, plus Lap(2/eps) on the leaf
    counts. Every subtree has exactly one leaf holding the added point, whose count moves by 1: the count part
    adds 1/(2/eps) = eps/2 to every S, so the sup is D/lambda + eps/2 = eps."""
    beta, D, theta = 2, 4, 0.0
    lam = 2 * D / EPS
    F = growing_path(beta, D, (0, 1, 1, 0), lam, theta)
    tree_part = sup_loss(F, add_point(F, (0, 1, 1, 0)), beta, D, lam, theta)
    assert tree_part + EPS / 2 == pytest.approx(EPS, rel=1e-12)
    # with the Appendix A scale at eps/2 (what Algorithm 6 L3 and the authors' code use): 4/6 + 1/2 > eps
    lam_a = app_a_scale(beta, EPS / 2)
    F = growing_path(beta, D, (0, 1, 1, 0), lam_a, theta)
    assert sup_loss(F, add_point(F, (0, 1, 1, 0)), beta, D, lam_a, theta) + EPS / 2 == pytest.approx(7 / 6, rel=1e-12)
