"""The exact-loss tools (paper model of PrivTree and of a PHDStream step) and the findings they give."""

from __future__ import annotations

import math

import pytest

from dpstream.audit.phdstream.loss import (
    enumerate_subtrees,
    laplace_log_cdf,
    laplace_log_sf,
    phdstream_step_sup_loss,
    privtree_log_probability,
    privtree_sup_loss,
)
from dpstream.noise import data_rng
from dpstream.phdstream import HypercubePartition, LambdaRule, is_consistent, privtree_scales, tree_function
from dpstream.phdstream.partition import Node, Partition


def from_leaves(partition: Partition, leaves: dict[Node, float]) -> dict[Node, float]:
    """The consistent function with these leaf values (sums up the tree; independent of the package)."""
    F: dict[Node, float] = {}
    for v, x in leaves.items():
        for k in range(len(v) + 1):
            F[v[:k]] = F.get(v[:k], 0.0) + x
    return F


def adversarial(partition: Partition, delta: float, theta: float) -> tuple[dict[Node, float], dict[Node, float]]:
    """A consistent F, not path-monotone, with b(v_i) = theta - 1 along the path 0...0; F' adds one point there."""
    D = partition.max_depth
    vals = [theta + i * delta - 1.0 for i in range(D + 1)]
    leaves = {(0,) * D: vals[D]}
    for i in range(1, D + 1):
        leaves[(0,) * (i - 1) + (1,) + (0,) * (D - i)] = vals[i - 1] - vals[i]
    F = from_leaves(partition, leaves)
    F2 = from_leaves(partition, {**leaves, (0,) * D: leaves[(0,) * D] + 1.0})
    return F, F2


def test_laplace_tails() -> None:
    assert math.exp(laplace_log_sf(0.0, 2.0)) == pytest.approx(0.5)
    assert math.exp(laplace_log_sf(1.0, 2.0)) == pytest.approx(0.5 * math.exp(-0.5))
    assert math.exp(laplace_log_sf(-1.0, 2.0)) == pytest.approx(1 - 0.5 * math.exp(-0.5))
    assert math.exp(laplace_log_cdf(3.0, 1.0)) + math.exp(laplace_log_sf(3.0, 1.0)) == pytest.approx(1.0)


@pytest.mark.parametrize("depth", [1, 2, 3])
def test_dynamic_programme_equals_enumeration(depth: int) -> None:
    P = HypercubePartition(2, depth)
    rng = data_rng(depth)
    subtrees = list(enumerate_subtrees(P))
    lam, delta = privtree_scales(P, 1.0, LambdaRule.PROOF)
    for _ in range(5):
        pts = rng.random((int(rng.integers(0, 30)), 2)) ** 2
        F = tree_function(P, pts)
        F2 = tree_function(P, [*pts.tolist(), rng.random(2).tolist()])
        theta = float(rng.integers(0, 4))
        probs = [math.exp(privtree_log_probability(P, F, S, lam, delta, theta)) for S in subtrees]
        assert sum(probs) == pytest.approx(1.0, abs=1e-12)
        enum = max(privtree_log_probability(P, F2, S, lam, delta, theta)
                   - privtree_log_probability(P, F, S, lam, delta, theta) for S in subtrees)
        assert privtree_sup_loss(P, F2, F, lam, delta, theta) == pytest.approx(enum, abs=1e-12)


def test_proof_scale_meets_eps_on_counts() -> None:
    """App. A: with lambda = (2b-1)/((b-1) eps) the loss on counts (path-monotone F) is <= eps."""
    P = HypercubePartition(2, 8)
    lam, delta = privtree_scales(P, 1.0, LambdaRule.PROOF)
    rng = data_rng(3)
    worst = 0.0
    for _ in range(200):
        n = int(rng.integers(1, 400))
        pts = rng.random((n, 2)) ** float(rng.uniform(1, 8))  # clustered near 0: deep paths
        F = tree_function(P, pts)
        x = pts[int(rng.integers(0, n))]
        F2 = tree_function(P, [*pts.tolist(), x.tolist()])
        theta = float(rng.choice([0.0, 1.0, 5.0]))
        worst = max(worst, privtree_sup_loss(P, F2, F, lam, delta, theta),
                    privtree_sup_loss(P, F, F2, lam, delta, theta))
    assert worst <= 1.0


@pytest.mark.parametrize("depth", [4, 6, 8])
def test_non_monotone_inputs_reach_depth_over_lambda(depth: int) -> None:
    """E-phdstream-3: on a consistent but non-monotone F every split on the path loses 1/lambda."""
    P = HypercubePartition(2, depth)
    for rule in LambdaRule:
        lam, delta = privtree_scales(P, 1.0, rule)
        F, F2 = adversarial(P, delta, 0.0)
        assert is_consistent(P, F) and is_consistent(P, F2)
        loss = privtree_sup_loss(P, F2, F, lam, delta, 0.0)
        assert loss == pytest.approx(depth / lam, rel=1e-9)
    lam_proof = privtree_scales(P, 1.0, LambdaRule.PROOF)[0]
    assert depth / lam_proof > 1.0  # the App. A scale breaks eps for D >= 4 (b = 2)
    lam_general = privtree_scales(P, 1.0, LambdaRule.GENERAL)[0]
    assert depth / lam_general == pytest.approx(1.0)


def test_step_loss_adds_the_count_part() -> None:
    P = HypercubePartition(2, 3)
    eps = 1.0
    lam, delta = privtree_scales(P, eps / 2, LambdaRule.GENERAL)
    F, F2 = adversarial(P, delta, 0.0)
    dF: dict[Node, float] = {(0, 0, 0): 0.0}
    dF2: dict[Node, float] = {(0, 0, 0): 1.0}
    loss = phdstream_step_sup_loss(P, F, F2, dF, dF2, lam, delta, 0.0, 2.0 / eps)
    assert loss.parts["backward"] == pytest.approx(3 / lam + eps / 2, rel=1e-9)
    assert loss.value == pytest.approx(eps, rel=1e-9)
