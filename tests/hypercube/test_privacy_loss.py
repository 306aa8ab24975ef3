"""Exact privacy loss of 004-alg2 / alg3 / alg1 (dpstream.audit.hypercube.loss).

The law of the segment ends must be a probability law (it sums to 1 over all partitions), the
losses must respect the bounds of the proofs (partition <= eps/2, total <= eps, per level eps_r,
two paths <= eps), and deliberately broken variants must exceed the claim.
"""

from __future__ import annotations

import dataclasses
import itertools
import math

import numpy as np
import pytest

from dpstream.audit.hypercube.loss import (
    SparseLaw,
    boolean_pairs,
    dlap_cdf,
    dlap_pmf,
    dlap_sf,
    inhomogeneous_view_loss,
    online_view_loss,
    segment_end_patterns,
    segments_of,
    sparse_view_loss,
)
from dpstream.hypercube.online import OnlineSyntheticData
from dpstream.hypercube.schedule import PrivacySchedule
from dpstream.insecure import InsecureZeroNoise


def test_integer_laplace_helpers_against_direct_sums() -> None:
    for scale in (0.5, 2.0, 7.3):
        p = math.exp(-1.0 / scale)
        z = np.arange(-400, 401)
        direct = (1 - p) / (1 + p) * p ** np.abs(z)
        assert direct.sum() == pytest.approx(1.0, abs=1e-12)
        assert np.allclose(dlap_pmf(z, scale), direct, rtol=1e-12, atol=0)
        for a in (-5, -1, 0, 3, 11):
            assert float(dlap_cdf(np.array([a]), scale)[0]) == pytest.approx(direct[z <= a].sum(), abs=1e-12)
            assert float(dlap_sf(np.array([a]), scale)[0]) == pytest.approx(direct[z > a].sum(), abs=1e-12)


def _partition_probability(law: SparseLaw, x: tuple[int, ...], ends: tuple[int, ...]) -> float:
    n = len(x)
    total = 1.0
    for s, u in segments_of(ends, n):
        first = s if law.empty_tests else s + 1
        last = n - 1 if u is None else u
        counts = tuple(sum(x[s:v]) for v in range(first, last + 1))
        total *= law.segment_probability(counts, u is not None)
    return total


@pytest.mark.parametrize("printed", [False, True])
@pytest.mark.parametrize(("eps", "T"), [(1.0, 5), (4.0, 5), (8.0, 4)])
def test_partition_law_sums_to_one(eps: float, T: int, printed: bool) -> None:
    law = SparseLaw.printed(eps, T, as_printed=printed)
    for x in [(0,) * T, (1,) * T, (1, 0) * (T // 2) + (1,) * (T % 2)]:
        # printed: unboundedly many empty segments; enumerate up to 12 ends (the rest has mass < 1e-9 here)
        ends_cap = 12 if printed else T
        total = math.fsum(_partition_probability(law, x, e) for e in segment_end_patterns(T, printed, ends_cap))
        assert total == pytest.approx(1.0, abs=1e-8 if printed else 1e-12)


def test_binary_mechanism_node_losses_by_hand() -> None:
    # A_sub = Binary Mechanism(eps/2 = 0.5, T = 4): scale (floor(log2 4) + 1) / 0.5 = 6.
    # Input 1 is in nodes 1 and 2 after 3 steps (2/6), also in node 4 after 4 steps (3/6).
    law = SparseLaw.printed(1.0, 4)
    assert law.sub_loss[3][0] == pytest.approx(2 / 6) and law.sub_loss[4][0] == pytest.approx(3 / 6)
    assert law.sub_loss[4][2] == pytest.approx(2 / 6)  # input 3: nodes 3 and 4


@pytest.mark.parametrize("printed", [False, True])
@pytest.mark.parametrize(("eps", "T"), [(0.5, 5), (1.0, 6), (3.0, 5)])
def test_sparse_counting_meets_lemma_3_2(eps: float, T: int, printed: bool) -> None:
    """Over every neighbouring Boolean pair: partition part <= eps/2, total view loss <= eps (004-lem3.2)."""
    law = SparseLaw.printed(eps, T, as_printed=printed)
    for x, y in boolean_pairs(T):
        loss = sparse_view_loss(law, x, y)
        assert loss.lower <= loss.upper <= eps * (1 + 1e-9)
        assert loss.parts["partition_only_max"] <= eps / 2 * (1 + 1e-9)
        assert loss.upper - loss.lower <= 1e-9


def test_identical_streams_have_no_loss() -> None:
    assert sparse_view_loss(SparseLaw.printed(1.0, 4), (1, 0, 1, 1), (1, 0, 1, 1)).upper == 0.0


@pytest.mark.parametrize(("variant", "T"), [("test scale halved", 6), ("A_sub printed scale", 6)])
def test_broken_variants_exceed_the_claim(variant: str, T: int) -> None:
    """Deliberately broken laws: the same exhaustive search finds a loss above eps = 1.

    Test noise Lap_Z(1/eps): the partition of a monotone AboveThreshold may cost up to
    max(eps/2, eps); Binary Mechanism with the printed scale log2(T)/eps: (floor(log2 T)+1)/log2 T > 1.
    """
    law = SparseLaw.printed(1.0, T)
    broken = {"test scale halved": dataclasses.replace(law, test_scale=law.test_scale / 2),
              "A_sub printed scale": SparseLaw.printed(1.0, T, sub_as_printed=True)}[variant]
    worst = max(sparse_view_loss(broken, x, y).lower for x, y in boolean_pairs(T))
    assert worst > 1.0


def test_inhomogeneous_loss_per_level() -> None:
    """004-lem3.3: a change in level r costs at most eps_r; after the level ended, the S~ part is eps_r/2."""
    eps_levels = {0: 0.6, 1: 0.4, 2: 0.8, 3: 0.3}
    x = [1, 0, 1, 1, 0, 1, 0, 1, 1, 1]
    for i in range(len(x)):
        y = list(x)
        y[i] = 1 - y[i]
        loss = inhomogeneous_view_loss(1.0, 0, eps_levels.__getitem__, x, y)
        t = i + 1
        r = math.floor(math.log2(t))  # eps = 1: level r is [2^r, 2^{r+1})
        assert loss.upper <= eps_levels[r] * (1 + 1e-9)
        ended = 2 ** (r + 1) <= len(x)
        assert loss.parts["S_tilde"] == (eps_levels[r] / 2 if ended else 0.0)
        before = inhomogeneous_view_loss(1.0, 2, eps_levels.__getitem__, x, y)
        if t < 4:
            assert before.upper == 0.0  # before t_{r0}: X_t is not used (004-lem3.3 (2))


@pytest.mark.parametrize("d", [1, 2, 3])
def test_online_loss_meets_the_claim(d: int) -> None:
    eps = 1.0
    schedule = PrivacySchedule(eps, d)
    cells = [np.full(d, 0.1), np.full(d, 0.9), np.array([0.9] + [0.1] * (d - 1))]

    def make(rc):  # type: ignore[no-untyped-def]
        return OnlineSyntheticData(eps, d, noise=InsecureZeroNoise(), region_counter=rc)

    for base in itertools.product(range(2), repeat=5):
        if base[0] == 1:  # x_1 is never used for d >= 2 (before t_1) and is symmetric for d = 1
            continue
        points = [cells[b] for b in base]
        for tau in range(1, 6):
            other = list(points)
            other[tau - 1] = cells[2] if base[tau - 1] == 0 else cells[0]
            loss = online_view_loss(make, points, other)
            assert loss.upper <= schedule.total_budget_bound() * (1 + 1e-9)
    assert schedule.total_budget_bound() <= eps * (1 + 1e-9)
    assert online_view_loss(make, points, points).upper == 0.0


@dataclasses.dataclass(frozen=True)
class _FullBudgetEverywhere(PrivacySchedule):
    """BROKEN on purpose: every region's counter gets the whole eps (no split along the path)."""

    def __call__(self, j: int, r: int) -> float:
        return self.epsilon


def test_online_loss_catches_a_broken_schedule() -> None:
    def make(rc):  # type: ignore[no-untyped-def]
        return OnlineSyntheticData(1.0, 2, noise=InsecureZeroNoise(), schedule=_FullBudgetEverywhere(1.0, 2),
                                   region_counter=rc)

    points = [np.array([0.1, 0.1])] * 8
    other = list(points)
    other[3] = np.array([0.9, 0.9])
    loss = online_view_loss(make, points, other)
    assert loss.lower > 1.0


def test_a_divided_law_is_the_printed_law_with_smaller_scales() -> None:
    """SparseLaw.divided(c): the planted scale/<c> of 004-alg2, every field but the scales (and A_sub's node
    losses, c times larger) kept; c = 1 gives the same probabilities and losses."""
    law = SparseLaw.printed(1.0, 6)
    same, half = law.divided(1.0), law.divided(2.0)
    assert (same.T0, same.threshold_scale, same.sub_loss) == (law.T0, law.threshold_scale, law.sub_loss)
    assert (half.T, half.T0, half.empty_tests) == (law.T, law.T0, law.empty_tests)
    assert half.threshold_scale == law.threshold_scale / 2 and half.test_scale == law.test_scale / 2
    assert half.sub_loss == tuple(tuple(2 * v for v in row) for row in law.sub_loss)
    x, y = (1, 1, 0, 1, 1, 1), (1, 1, 1, 1, 1, 1)
    assert sparse_view_loss(same, x, y).upper == pytest.approx(sparse_view_loss(law, x, y).upper, rel=1e-12)
    # a loud variant: the same exhaustive search that bounds the printed law by eps finds it above
    assert max(sparse_view_loss(half, a, b).lower for a, b in boolean_pairs(6)) > 1.0
    with pytest.raises(ValueError):
        law.divided(0.0)


def test_a_planted_factor_multiplies_the_s_tilde_part_and_reaches_the_level() -> None:
    """inhomogeneous_view_loss(factor=c): S~'s part is c eps_r / 2 once the level ended (Lap_Z(2 / (c eps_r)) on a
    sum that moves by one); the level's 004-alg2 part is that of the divided law."""
    eps_levels = {0: 0.6, 1: 0.4, 2: 0.8, 3: 0.3}
    x = [1, 0, 1, 1, 0, 1, 0, 1, 1, 1]
    for i in range(len(x)):
        y = list(x)
        y[i] = 1 - y[i]
        plain = inhomogeneous_view_loss(1.0, 0, eps_levels.__getitem__, x, y)
        assert inhomogeneous_view_loss(1.0, 0, eps_levels.__getitem__, x, y, factor=1.0).upper == plain.upper
        loud = inhomogeneous_view_loss(1.0, 0, eps_levels.__getitem__, x, y, factor=3.0)
        assert loud.parts["S_tilde"] == pytest.approx(3 * plain.parts["S_tilde"], rel=1e-12)
        assert loud.parts["alg2"] >= plain.parts["alg2"] - 1e-12
    cells = [np.full(1, 0.1), np.full(1, 0.9)]

    def make(rc):  # type: ignore[no-untyped-def]
        return OnlineSyntheticData(1.0, 1, noise=InsecureZeroNoise(), region_counter=rc)

    points, other = [cells[0]] * 5, [cells[0], cells[0], cells[1], cells[0], cells[0]]
    base = online_view_loss(make, points, other)
    assert base.upper > 0
    assert online_view_loss(make, points, other, factor=2.0).parts["S_tilde"] == pytest.approx(
        2 * base.parts["S_tilde"], rel=1e-12)
