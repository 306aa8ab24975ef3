"""The witness search setting by setting where its budget is scaled (dpstream.conformance.in_turn): each setting is
planned on the time the ones before it left, at the speed they achieved, and the results merge into one."""

from __future__ import annotations

from functools import partial
from typing import Any

import pytest

from dpstream.audit.registry import Profile
from dpstream.conformance import in_turn, statistical
from dpstream.conformance.entry_sampler import EntrySampler
from dpstream.conformance.in_turn import search_in_turn
from dpstream.conformance.statistical import StatisticalPlan, plan_for, setting_label
from dpstream.insecure.planted import PlantedLeak

SECONDS = 3.0


def _run(monkeypatch: pytest.MonkeyPatch, leak: PlantedLeak | None
         ) -> tuple[StatisticalPlan, Any, list[tuple[float, float]]]:
    plan = plan_for("001-alg8", Profile.QUICK)
    assert not isinstance(plan, str) and len(plan.settings) == 2
    planned: list[tuple[float, float]] = []
    real = statistical.fit_to_time

    def fit(one: Any, budget: Any, speed: float, limit: float, *, grow: bool = False) -> Any:
        planned.append((speed, limit))
        return real(one, budget, speed, limit, grow=grow)

    monkeypatch.setattr(in_turn, "fit_to_time", fit)
    result = search_in_turn(plan, partial(EntrySampler, "001-alg8", leak=leak), Profile.QUICK, False, level=1e-3,
                            seed=0, executor=None, speed=5000.0, seconds=SECONDS)
    return plan, result, planned


def test_each_setting_gets_its_share_of_the_time_left_at_the_speed_achieved(monkeypatch: pytest.MonkeyPatch) -> None:
    plan, result, planned = _run(monkeypatch, None)
    assert result.verdict == "inconclusive"  # the reference (a false alarm has probability <= 1e-3; seed fixed)
    assert result.settings == tuple(setting_label(p) for p in plan.settings) and result.power is None  # none given
    assert len(planned) == 2 and planned[0][0] == 5000.0 and planned[0][1] == pytest.approx(SECONDS / 2, rel=0.05)
    speed, limit = planned[1]
    assert speed != 5000.0 and 0 <= limit < SECONDS  # the first setting's own rate; what it left (floors at 0)
    assert result.trials > 0 and result.pairs > 0 and result.level == 1e-3


def test_a_violation_ends_the_search_and_its_witness_names_its_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    plan, result, planned = _run(monkeypatch, PlantedLeak("scale", 4.0))
    assert result.verdict == "violation" and result.best is not None
    assert result.best.eps_lb > result.best.claimed
    assert len(result.settings) == len(planned)  # no setting after the one that certified
    assert result.settings[result.best.witness.setting] == setting_label(plan.settings[len(planned) - 1])
