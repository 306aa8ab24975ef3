"""The statistical privacy check tests the design pair's composed event beside its search on both profiles
(docs/conformance.md, "Statistical checks": composed event), within the time it is given (transcript mode's step 6
gives it what the check has left, without the event where transcript mode tested one)."""

from __future__ import annotations

import math
import sys
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

from dpstream.audit.registry import Profile
from dpstream.audit.stats import eps_lower_bound
from dpstream.conformance import composed_tests, statistical
from dpstream.conformance.composed_tests import EventTest
from dpstream.conformance.outcome import Verdict
from dpstream.conformance.runner import ConformConfig
from dpstream.conformance.statistical import PAIR_SHARE, TIME_LIMIT, plan_for, privacy_check
from dpstream.conformance.wire import Program

SERVE = (sys.executable, "-m", "dpstream.cli", "serve")


@dataclass
class _Searched:
    """What the search returns, where only its verdict matters (the search itself is stubbed)."""

    verdict: str = "inconclusive"
    trials: int = 1000

    def detail(self) -> str:
        return "searched (stub)"

    def to_data(self) -> dict[str, Any]:
        return {"verdict": self.verdict, "trials": self.trials}


def _stubbed(monkeypatch: pytest.MonkeyPatch, favoured: int) -> tuple[list[float], list[dict[str, Any]]]:
    """The search stubbed (inconclusive; its time limit recorded) and the event test stubbed (its arguments
    recorded; ``favoured`` of 10000 runs against 1000 on the other side)."""
    limits: list[float] = []
    events: list[dict[str, Any]] = []

    def fit(plan: Any, budget: Any, speed: float, limit: float, *, grow: bool = False) -> Any:
        limits.append(limit)
        return budget, 1.0

    def event(config: Any, plan: Any, si: int, pair: Any, level: float, bulk: bool, profile: Profile, seed: int,
              seconds: float | None = None, holdout: int | None = None,
              deadline: float = math.inf) -> EventTest:
        events.append({"level": level, "seconds": seconds, "profile": profile, "holdout": holdout,
                       "deadline": deadline - time.perf_counter()})
        bound = eps_lower_bound(favoured, 10_000, 1000, 10_000, level)
        return EventTest(pair.label, "{stub}", True, favoured, 1000, 10_000, bound, float(pair.claim), level, 0.1)

    monkeypatch.setattr(statistical, "probe_speed", lambda *a, **k: 1000.0)
    monkeypatch.setattr(statistical, "fit_to_time", fit)
    monkeypatch.setattr(statistical, "run_search", lambda *a, **k: _Searched())
    monkeypatch.setattr(composed_tests, "event_test", event)
    return limits, events


def _check(**kw: Any) -> Any:
    plan = plan_for("001-alg1", Profile.QUICK)
    assert not isinstance(plan, str)
    return privacy_check(ConformConfig(command=SERVE), plan, 1e-3, False, Program(SERVE), **kw)


def test_the_quick_profile_tests_the_design_pairs_event_and_a_certified_event_is_a_violation(
        monkeypatch: pytest.MonkeyPatch) -> None:
    plan = plan_for("001-alg1", Profile.QUICK)
    assert not isinstance(plan, str) and statistical._composed_pair(plan) is not None
    limits, events = _stubbed(monkeypatch, favoured=5000)  # e^eps >= about 5 / 1.2 against the claim e^0.5
    outcome = _check()
    assert limits == [pytest.approx(TIME_LIMIT[Profile.QUICK] * (1 - PAIR_SHARE))]
    assert [e["level"] for e in events] == [pytest.approx(5e-4)] and events[0]["profile"] is Profile.QUICK
    assert events[0]["seconds"] >= TIME_LIMIT[Profile.QUICK] * PAIR_SHARE
    assert events[0]["holdout"] == statistical.PAIR_HOLDOUT
    # no run begun after the check's time limit less the margin, however busy the machine gets
    assert 0 < events[0]["deadline"] <= TIME_LIMIT[Profile.QUICK] * statistical.PAIR_STOP[Profile.QUICK]
    assert outcome.privacy is Verdict.VIOLATION and outcome.details["composed_event"]["verdict"] == "violation"
    assert outcome.details["eps_lower_bound"] > outcome.details["claimed_eps"]
    assert {"runs_per_second", "probe_runs_per_second", "budget", "pair_test_seconds"} <= set(outcome.details)


def test_an_event_that_certifies_nothing_leaves_the_searchs_verdict(monkeypatch: pytest.MonkeyPatch) -> None:
    _, events = _stubbed(monkeypatch, favoured=1100)  # e^0.1: below the claim
    outcome = _check()
    assert len(events) == 1 and outcome.privacy is Verdict.INCONCLUSIVE
    assert outcome.details["composed_event"]["verdict"] == "inconclusive"
    bound = outcome.details["composed_event"]["eps_lower_bound"]
    assert outcome.message.endswith(f"; the pair's test (composed event): eps >= {bound:.4g} vs 0.5, inconclusive")


def test_the_check_keeps_to_the_seconds_it_is_given_and_can_leave_the_event_out(
        monkeypatch: pytest.MonkeyPatch) -> None:
    limits, events = _stubbed(monkeypatch, favoured=5000)
    outcome = _check(seconds=20.0)
    assert limits == [pytest.approx(20.0 * (1 - PAIR_SHARE))]
    assert 20.0 * PAIR_SHARE <= events[0]["seconds"] <= 20.0 * statistical.PAIR_END[Profile.QUICK]
    assert outcome.details.get("budget") is None or outcome.details["budget"]["time_limit"] == 20.0
    limits.clear()
    events.clear()
    outcome = _check(seconds=20.0, event=False)
    assert limits == [pytest.approx(20.0)] and events == [] and "composed_event" not in outcome.details
    assert outcome.privacy is Verdict.INCONCLUSIVE and outcome.details["budget"]["time_limit"] == 20.0


@pytest.mark.slow
@pytest.mark.parametrize(("plant", "certified"), [(("--plant", "scale/1.5"), True), (("--plant", "scale/2:L6"), True),
                                                 (("--perturb", "all"), False)])
def test_the_quick_check_certifies_a_leak_of_1_5x_and_never_a_correct_program(plant: tuple[str, ...],
                                                                             certified: bool) -> None:
    """``dpstream serve --plant scale/1.5`` (every scale / 1.5: loss 0.75 against 0.5) on PHDStream 001-alg1 at
    quick: certified by the design pair's composed event (measured 2026-11-29: eps >= 0.622, 67 s); one level
    under-noised, ``--plant scale/2:L6`` (the leaf counts at half their scale, PrivTree's splits as they should be:
    0.5 + 0.25 against 0.5; measured eps >= 0.664, 95 s), likewise; the reference in another correct floating-point
    order: never a violation (false alarm at most the run's level, 1e-3)."""
    from dpstream.conformance.outcome import Mode
    from dpstream.conformance.runner import conform

    report = conform(ConformConfig(command=(*SERVE, *plant), modes=frozenset({Mode.STATISTICAL}),
                                   algorithms=("001-alg1",), seed=0, jobs=2))
    (privacy,) = [o for o in report.outcomes if o.name == "privacy: witness search"]
    event = privacy.details["composed_event"]
    assert (privacy.privacy is Verdict.VIOLATION) is certified, privacy.message
    assert (event["verdict"] == "violation") is certified
    assert event["counts"]["runs"] >= 50_000


def test_a_zcdp_pair_is_tested_by_the_renyi_divergence_of_its_composed_ratio(monkeypatch: pytest.MonkeyPatch) -> None:
    """002-alg1 (zCDP): the design pair is tested by the Renyi divergence test on the pair's composed log-likelihood
    ratio (``renyi_pair_test``), not by a pure-DP event; a pair without a composed ratio falls back on the witness
    search with its composed statistics (``composed_search``)."""
    from dataclasses import replace

    from dpstream.claims import Measure

    plan = plan_for("002-alg1", Profile.QUICK)
    assert not isinstance(plan, str)
    pair = statistical._composed_pair(plan)
    assert pair is not None and plan.entry.claim(plan.settings[pair[0]]).measure is Measure.ZCDP
    called: list[str] = []

    def recorder(name: str, answer: Any = None) -> Any:
        def record(*args: Any, **kwargs: Any) -> Any:
            called.append(name)
            return name if answer is None else answer
        return record

    monkeypatch.setattr(composed_tests, "composed_search", recorder("searched"))
    monkeypatch.setattr(composed_tests, "event_test", recorder("event"))
    def runs(*args: Any, **kwargs: Any) -> Any:
        called.append("runs")
        decide, level = args[10:12]
        return decide(1000, np.linspace(-1.0, 0.0, 1000), np.linspace(0.0, 1.0, 1000), level)

    monkeypatch.setattr(composed_tests, "_pair_runs", runs)
    si, c = pair
    assert c.ratio is not None
    tested: Any = composed_tests.pair_test(ConformConfig(command=SERVE), plan, si, [c], 1e-3, False, Profile.QUICK, 0,
                                           1e3, 30.0)
    assert called == ["runs"] and tested.to_data()["test"] == "renyi divergence"
    assert tested.selection_runs == 200 and tested.runs == 800
    called.clear()
    tested = composed_tests.pair_test(ConformConfig(command=SERVE), plan, si, [replace(c, ratio=None)], 1e-3, False,
                                      Profile.QUICK, 0, 1e3, 30.0)
    assert tested == "searched" and called == ["searched"]


def test_a_search_that_must_be_scaled_leaves_most_of_the_time_to_the_pairs_event(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A scaled search backs no pass: with a design pair it is fitted again to SCALED_SEARCH_SHARE of the limit, and
    the event is planned on what that frees, up to PAIR_END of the limit (more than PAIR_SHARE)."""
    limits, events = _stubbed(monkeypatch, favoured=1100)

    def fit(plan: Any, budget: Any, speed: float, limit: float, *, grow: bool = False) -> Any:
        limits.append(limit)
        return budget, 0.5

    monkeypatch.setattr(statistical, "fit_to_time", fit)
    monkeypatch.setattr("dpstream.conformance.in_turn.search_in_turn", lambda *a, **k: _Searched())
    outcome = _check(seconds=20.0)
    assert limits == [pytest.approx(20.0 * (1 - PAIR_SHARE)), pytest.approx(20.0 * statistical.SCALED_SEARCH_SHARE)]
    assert events[0]["seconds"] >= 20.0 * (statistical.PAIR_END[Profile.QUICK] - statistical.SCALED_SEARCH_SHARE) - 2.0
    assert events[0]["seconds"] <= 20.0 * statistical.PAIR_END[Profile.QUICK]
    assert outcome.details["budget"]["scale"] == 0.5 and outcome.privacy is Verdict.INCONCLUSIVE


def test_an_entry_without_a_design_pair_tests_the_pair_its_exact_law_names(monkeypatch: pytest.MonkeyPatch) -> None:
    """004-alg3 (a counter: no design pair) has a law pair (``StatisticalSpec.law_pair``): the check gives it the
    pair's share of the time and half the level, as a design pair's event, and a certificate is a violation with
    the bound of the selected event test."""
    from dpstream.audit.selected_event import SelectedEventTest

    limits, _ = _stubbed(monkeypatch, favoured=5000)
    tested: list[dict[str, Any]] = []

    def law(config: Any, plan: Any, si: int, pair: Any, level: float, bulk: bool, profile: Profile, seed: int,
            seconds: float | None = None, holdout: int | None = None,
            deadline: float = math.inf) -> SelectedEventTest:
        tested.append({"level": level, "seconds": seconds, "pair": pair.label, "setting": si, "holdout": holdout})
        return SelectedEventTest(pair.label, "{stub}", True, favoured=3000, other=100, runs=100_000,
                                 selection_runs=25_000, eps_lower_bound=2.5, claimed=pair.claim, level=level,
                                 detectable_excess=0.1, why=pair.why)

    monkeypatch.setattr(composed_tests, "law_pair_test", law)
    plan = plan_for("004-alg3", Profile.QUICK)
    assert not isinstance(plan, str) and statistical._composed_pair(plan) is None
    outcome = privacy_check(ConformConfig(command=SERVE), plan, 1e-3, False, Program(SERVE))
    assert limits == [pytest.approx(TIME_LIMIT[Profile.QUICK] * (1 - PAIR_SHARE))]
    assert tested == [{"level": pytest.approx(5e-4), "seconds": pytest.approx(tested[0]["seconds"]),
                       "pair": "ones stream, t=2 -1", "setting": 1, "holdout": statistical.PAIR_HOLDOUT}]
    assert tested[0]["seconds"] >= TIME_LIMIT[Profile.QUICK] * PAIR_SHARE
    assert outcome.privacy is Verdict.VIOLATION and outcome.details["composed_event"]["test"] == "selected event"
    assert outcome.details["eps_lower_bound"] == 2.5 and outcome.details["claimed_eps"] == 2.0
    assert "chosen on 25000 selection runs" in outcome.message


@pytest.mark.slow
@pytest.mark.parametrize(("plant", "certified"), [(("--plant", "scale/1.5"), True), (("--perturb", "all"), False)])
def test_the_quick_check_certifies_004_alg3_at_1_5x_through_its_law_pair(plant: tuple[str, ...],
                                                                         certified: bool) -> None:
    """``dpstream serve --plant scale/1.5`` on 004-alg3 at quick: its law pair's selected event (a segment end in
    the level [2, 4) of eps_r = 2 and S~'s update; 1.17x the claim there) certifies it (measured 2026-11-29: eps >=
    2.184 vs 2, 104 s); the reference in another correct floating-point order never (false alarm at most 1e-3)."""
    from dpstream.conformance.outcome import Mode
    from dpstream.conformance.runner import conform

    report = conform(ConformConfig(command=(*SERVE, *plant), modes=frozenset({Mode.STATISTICAL}),
                                   algorithms=("004-alg3",), seed=0, jobs=2))
    (privacy,) = [o for o in report.outcomes if o.name == "privacy: witness search"]
    assert (privacy.privacy is Verdict.VIOLATION) is certified, privacy.message
    assert privacy.details["composed_event"]["test"] == "selected event"


def _looked_pair(monkeypatch: pytest.MonkeyPatch, certify_at: int | None) -> tuple[Any, list[tuple[int, float]]]:
    """``_pair_runs`` on 002-alg1's design pair with the runs stubbed: 1000 timed runs, then three looks of 1000 more
    runs each and 1000 last ones; ``decide`` certifies from the look ``certify_at`` on (None: never). Returns the
    test and the (runs, level) of every decision."""
    plan = plan_for("002-alg1", Profile.QUICK)
    assert not isinstance(plan, str)
    pair = statistical._composed_pair(plan)
    assert pair is not None
    zeros = np.zeros((1000, 1))
    monkeypatch.setattr(composed_tests, "own_speed", lambda *a, **k: (1e3, [zeros, zeros]))

    def until(sampler: Any, inputs: Any, runs: int, seeds: Any, executor: Any, end: float, *, looks: Any,
              look: Any) -> list[Any]:
        assert len(looks) == len(composed_tests.LOOKS[Profile.QUICK]) and list(looks) == sorted(looks)
        for k in range(1, len(looks) + 1):
            if look([np.zeros((1000 * k, 1))] * 2):
                return [np.zeros((1000 * k, 1))] * 2
        return [np.zeros((4000, 1))] * 2

    monkeypatch.setattr(composed_tests, "run_trials_until", until)
    decided: list[tuple[int, float]] = []

    def decide(n: int, on_f: Any, on_g: Any, level: float) -> Any:
        decided.append((n, level))
        verdict = "violation" if certify_at is not None and len(decided) >= certify_at else "inconclusive"
        return type("Tested", (), {"verdict": verdict, "runs": n})()

    tested = composed_tests._pair_runs(ConformConfig(command=SERVE), plan, pair[0], pair[1].g, lambda R: R, False,
                                       Profile.QUICK, 0, 30.0, None, decide, 1e-3)
    return tested, decided


def test_a_pair_test_looks_at_its_runs_and_spends_its_level_within_the_level(monkeypatch: pytest.MonkeyPatch) -> None:
    """The pair test's looks (``composed_tests.LOOKS``): each early look decides at its share of LOOK_LEVEL of the
    level, the last test on every run at the rest, so the levels of all the decisions sum to the test's level (the
    union bound behind its false-alarm probability); a look that certifies ends the test with its own decision."""
    tested, decided = _looked_pair(monkeypatch, None)
    assert [n for n, _ in decided] == [2000, 3000, 4000, 5000] and tested.verdict == "inconclusive"
    assert math.isclose(sum(level for _, level in decided), 1e-3, rel_tol=1e-12)
    assert decided[-1][1] == pytest.approx(1e-3 * (1 - composed_tests.LOOK_LEVEL[Profile.QUICK]))
    tested, decided = _looked_pair(monkeypatch, 2)
    assert tested.verdict == "violation" and tested.runs == 3000 and len(decided) == 2
