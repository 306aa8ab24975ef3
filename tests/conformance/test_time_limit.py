"""A privacy search fits its profile's time limit at the program's measured speed (docs/conformance.md, "Statistical
checks": time limit and runs per second); a search scaled down cannot back ``pass``."""

from __future__ import annotations

import sys

import pytest

from dpstream.audit.registry import Profile
from dpstream.audit.search import SearchBudget
from dpstream.conformance import statistical
from dpstream.conformance.outcome import Mode, Verdict
from dpstream.conformance.runner import ConformConfig, conform
from dpstream.conformance.statistical import MIN_HOLDOUT, MIN_SPLIT, fit_to_time, plan_for, planned_runs

SERVE = (sys.executable, "-m", "dpstream.cli", "serve")


def test_the_budget_is_kept_when_the_program_is_fast_and_scaled_to_the_limit_when_slow() -> None:
    plan = plan_for("001-alg10", Profile.THOROUGH)
    assert not isinstance(plan, str)
    budget = SearchBudget(fit=5000, select=5000, holdout=200_000, carried=8, tail=4)
    runs = planned_runs(plan, budget)
    assert runs > 200_000
    same, scale = fit_to_time(plan, budget, speed=runs, limit=10.0)  # 1 s of runs against 8 s allowed
    assert same == budget and scale == 1.0
    slow_speed = runs / 1000.0  # the full budget would take 1000 s
    fitted, scale = fit_to_time(plan, budget, speed=slow_speed, limit=270.0)
    assert scale == pytest.approx(0.8 * 270.0 / 1000.0)
    assert planned_runs(plan, fitted) / slow_speed <= 0.8 * 270.0 * 1.001
    tiny, _ = fit_to_time(plan, budget, speed=1.0, limit=1.0)  # never below the floors
    assert (tiny.fit, tiny.select, tiny.holdout) == (MIN_SPLIT, MIN_SPLIT, MIN_HOLDOUT)


def test_a_scaled_search_reports_its_speed_and_never_passes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(statistical.TIME_LIMIT, Profile.QUICK, 0.5)  # the reference is "too slow" for 0.5 s
    report = conform(ConformConfig(command=SERVE, modes=frozenset({Mode.STATISTICAL}), algorithms=("001-alg8",)))
    (privacy,) = [o for o in report.outcomes if o.name == "privacy: witness search"]
    assert privacy.details["budget"]["scale"] < 1.0 and "budget scaled to" in privacy.message
    assert privacy.details["budget"]["settings_in_turn"] and "setting by setting" in privacy.message  # 2 settings
    assert privacy.details["runs_per_second"] > 0 and "runs/s" in privacy.message
    assert privacy.privacy is Verdict.INCONCLUSIVE  # the power table backs the full budget only
    assert "scaled" in privacy.details["power"]["source"]


def test_a_fast_program_gets_a_larger_held_out_split_on_the_thorough_profile() -> None:
    """``grow``: the fit and select splits (the events tested) are kept, only the held-out split grows, at most
    MAX_GROWTH times, to fill 80 % of the limit at the program's speed."""
    plan = plan_for("001-alg10", Profile.THOROUGH)
    assert not isinstance(plan, str)
    budget = SearchBudget(fit=5000, select=5000, holdout=200_000, carried=8, tail=4)
    runs = planned_runs(plan, budget)
    grown, factor = fit_to_time(plan, budget, speed=runs / 150.0, limit=270.0, grow=True)  # 150 s of 216 allowed
    assert (grown.fit, grown.select, grown.carried, grown.tail) == (5000, 5000, 8, 4)
    assert 1.0 < factor < statistical.MAX_GROWTH and grown.holdout == int(200_000 * factor)
    assert planned_runs(plan, grown) / (runs / 150.0) == pytest.approx(0.8 * 270.0, rel=1e-3)
    capped, factor = fit_to_time(plan, budget, speed=runs * 1000.0, limit=270.0, grow=True)
    assert factor == statistical.MAX_GROWTH and capped.holdout == int(200_000 * statistical.MAX_GROWTH)
    kept, factor = fit_to_time(plan, budget, speed=runs / 250.0, limit=270.0, grow=True)  # already 250 s: scaled
    assert factor < 1.0 and kept.holdout < budget.holdout


@pytest.mark.parametrize(("searches", "others"), [(0, 5), (5, 0), (3, 4), (25, 43), (40, 40), (1, 200)])
def test_each_search_gets_the_level_its_power_was_measured_at_when_the_budget_allows(searches: int,
                                                                                   others: int) -> None:
    """The false-alarm budget of a run stays within FALSE_ALARM (Bonferroni), and a privacy search never gets less
    than SEARCH_LEVEL (the power table's level) while the searches need at most half the budget."""
    search_level, level = statistical.levels(searches, others)
    assert searches * search_level + others * level <= statistical.FALSE_ALARM * (1 + 1e-12)
    if searches and searches * statistical.SEARCH_LEVEL <= statistical.FALSE_ALARM / 2:
        assert search_level >= statistical.SEARCH_LEVEL
    assert statistical.SEARCH_LEVEL == statistical.FALSE_ALARM / 64
