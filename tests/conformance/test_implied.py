"""The loss a transcript implies (dpstream.conformance.implied): strength ratios per kind and measure, composed as
the reference's accountant composes its sites (docs/conformance.md, "Transcript mode")."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpstream.claims import Measure, Neighbour, PrivacyClaim
from dpstream.conformance.implied import implied_loss, strength_ratio
from dpstream.conformance.tape_mode import DrawIssue
from dpstream.noise import DrawKind

PURE = PrivacyClaim.pure(0.5, Neighbour.EVENT, "test")
ZCDP = PrivacyClaim.zcdp(0.5, Neighbour.EVENT, "test")


def params_issue(site: str, reported: dict[str, object], reference: dict[str, object],
                 kind: str = "laplace") -> DrawIssue:
    return DrawIssue(1, site, "params", reported, reference, kind)  # tape (the program's) in expected, request in got


def test_ratios_per_kind_and_measure() -> None:
    assert strength_ratio(DrawKind.LAPLACE, {"scale": 2.0}, {"scale": 3.0}, Measure.PURE_DP) == 1.5
    assert strength_ratio(DrawKind.LAPLACE, {"scale": 2.0}, {"scale": 3.0}, Measure.ZCDP) == 2.25
    assert strength_ratio(DrawKind.DISCRETE_GAUSSIAN, {"sigma2": 1.0}, {"sigma2": 2.25}, Measure.ZCDP) == 2.25
    assert math.isinf(strength_ratio(DrawKind.DISCRETE_GAUSSIAN, {"sigma2": 1.0}, {"sigma2": 1.0}, Measure.PURE_DP))
    em = {"scores": [0.0, 1.0], "sensitivity": 1.0}
    assert strength_ratio(DrawKind.EXPONENTIAL_MECHANISM, {**em, "epsilon": 0.5}, {**em, "epsilon": 0.25},
                          Measure.PURE_DP) == 2.0
    assert math.isinf(strength_ratio(DrawKind.LAPLACE, None, {"scale": 1.0}, Measure.PURE_DP))
    assert strength_ratio(DrawKind.COIN, {}, {}, Measure.PURE_DP) == 1.0


def test_every_scale_divided_implies_the_claim_times_the_ratio() -> None:
    issues = [params_issue(f"s{i}", {"scale": 2.0}, {"scale": 3.0}) for i in range(4)]
    implied = implied_loss(PURE, issues, compared=4)
    assert implied.uniform and implied.exceeds and implied.at_most == pytest.approx(0.75)
    assert "every one of its 4 privacy-relevant draws x1.5" in implied.describe()


def test_one_site_of_several_gives_an_upper_bound_and_names_the_site() -> None:
    issues = [params_issue("level 3", {"scale": 1.0}, {"scale": 2.0})]
    implied = implied_loss(PURE, issues, compared=10)
    assert not implied.uniform and implied.at_most == 1.0
    assert "1 of 10 privacy-relevant draws" in implied.describe() and "'level 3'" in implied.describe()


def test_a_missing_draw_implies_an_unbounded_loss_and_weaker_draws_none() -> None:
    missing = DrawIssue(2, "count t=2", "unexpected-site", None, "laplace {'scale': 2.0}", "laplace")
    assert math.isinf(implied_loss(PURE, [missing], compared=3).at_most)
    coin = DrawIssue(2, "coin t=2", "unexpected-site", None, "coin {}", "coin")
    assert not implied_loss(PURE, [coin], compared=3).exceeds  # a coin carries no privacy
    weaker = params_issue("s", {"scale": 4.0}, {"scale": 2.0})  # more noise than the reference: no leak
    implied = implied_loss(ZCDP, [weaker], compared=1)
    assert not implied.exceeds and "no loss above the claim" in implied.describe()


@settings(max_examples=50, deadline=None)
@given(st.lists(st.floats(0.1, 10.0), min_size=1, max_size=6), st.floats(0.1, 10.0))
def test_the_implied_loss_is_the_claim_times_the_largest_ratio_above_one(reported: list[float], ref: float) -> None:
    issues = [params_issue(f"s{i}", {"scale": b}, {"scale": ref}) for i, b in enumerate(reported)]
    implied = implied_loss(PURE, issues, compared=len(reported))
    largest = max(ref / b for b in reported)
    assert implied.at_most == pytest.approx(PURE.parameter * max(largest, 1.0))
    assert implied.exceeds == (largest > 1.0)
