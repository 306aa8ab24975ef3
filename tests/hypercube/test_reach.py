"""What a check could certify of the sparse counters from their exact laws (dpstream.audit.hypercube.reach), and the
pair of 004-alg3 the statistical check tests besides its search."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpstream.audit.hypercube.loss import SparseLaw, inhomogeneous_view_loss
from dpstream.audit.hypercube.reach import (
    LAW_FACTOR,
    LevelStatistics,
    inhomogeneous_law_pair,
    inhomogeneous_views,
    reach,
    sparse_views,
)
from dpstream.audit.registry import Profile
from dpstream.catalog import entry
from dpstream.conformance.statistical import _law_pair, horizon_of, plan_for

EPS2 = {"epsilon": 2.0, "r0": 1, "eps_r": 2.0}


def test_the_views_are_a_law_on_each_input() -> None:
    """Every view with at most T - 1 ends: the probabilities on the favoured input sum to 1 (A_sub lowers the other
    side's only), and with S~'s two atoms too."""
    x = [1, 1, 0, 1, 1, 1]
    y = [1, 1, 1, 1, 1, 1]
    views = sparse_views(SparseLaw.printed(1.0, 6), x, y, 3, 5)
    assert sum(pa for pa, _ in views) == pytest.approx(1.0, abs=1e-9)
    x16 = [1] * 16
    y16 = list(x16)
    y16[1] = 0
    both = inhomogeneous_views(EPS2, x16, y16, 2, 1.0, 3)
    assert sum(pa for pa, _ in both) == pytest.approx(1.0, abs=1e-9)


def test_no_view_of_the_reference_exceeds_its_claim_and_the_oracle_stays_below_it() -> None:
    """On the 004-alg3 design's pair the views' losses stay within the exact loss (004-lem3.3: at most eps_r), so
    no view exceeds the claim and the oracle's bound is below it; the planted scale/1.5 has views above it."""
    x = [1] * 16
    y = list(x)
    y[1] = 0
    exact = inhomogeneous_view_loss(2.0, 1, lambda r: 2.0, x, y).upper
    for a, b in ((x, y), (y, x)):
        views = inhomogeneous_views(EPS2, a, b, 2, 1.0, 3)
        assert max(math.log(pa / pb) for pa, pb in views) <= exact + 1e-9 <= 2.0 + 1e-9
        mass, oracle = reach(views, 2.0, 400_000, 0.001)
        assert mass == 0.0 and oracle < 2.0
    mass, oracle = reach(inhomogeneous_views(EPS2, x, y, 2, LAW_FACTOR, 3), 2.0, 400_000, 0.001)
    assert mass > 0.01 and oracle > 2.0


def test_the_law_pair_of_004_alg3_is_a_segment_end_in_a_short_level() -> None:
    plan = plan_for("004-alg3", Profile.QUICK)
    assert not isinstance(plan, str)
    named = _law_pair(plan)
    assert named is not None
    si, pair = named
    assert dict(plan.settings[si]) == EPS2
    assert pair.label == "ones stream, t=2 -1" and pair.oracle > pair.claim == 2.0
    assert pair.statistics == LevelStatistics(2, 4, 16)
    assert sum(a != b for a, b in zip(pair.f, pair.g, strict=True)) == 1
    # the other setting's best pair shows scale/1.5 only at the edge (0.513 against 0.5): ranked below
    other = inhomogeneous_law_pair(plan.settings[1 - si], horizon_of(plan.entry, plan.settings[1 - si]),
                                   plan.spaces[1 - si].families)
    assert other is not None and other.oracle / other.claim < pair.oracle / pair.claim


def test_entries_without_an_exact_law_name_no_pair() -> None:
    for anchor in ("001-alg10", "001-alg1", "004-alg2"):
        plan = plan_for(anchor, Profile.QUICK)
        assert not isinstance(plan, str)
        assert _law_pair(plan) is None
    assert entry("004-alg3").statistical is not None


def test_the_level_statistics_read_the_update_of_s_tilde_and_the_level_counter() -> None:
    """Releases r_t = S~ + c_t: r_2 = S~ (the level counter releases 0 at its first step), r_3 = S~ + c_3 (a segment
    ended: A_sub's release 3), r_4 = S~ + the level's noisy sum (a new level: its counter releases 0)."""
    R = np.array([[0.0, 1.0, 4.0, 3.0, 3.0], [0.0, 2.0, 2.0, 1.0, 1.0]])
    stats = LevelStatistics(2, 4, 5)
    assert stats.names[0] == "level sum r_4 - r_2" and stats.names[1].startswith("largest level release")
    assert stats(R).tolist() == [[2.0, 3.0], [-1.0, 0.0]]
    assert LevelStatistics(2, 8, 5)(R).tolist() == [[3.0], [0.0]]  # the level has not ended: its counter only
