"""`dpstream conform` states its expected duration and shows progress (docs/conformance.md, "Duration and
progress"): a bar on a terminal, plain lines in CI and logs, nothing with --no-progress."""

from __future__ import annotations

import pytest
from tests.conformance.test_harness_robustness import fake

from dpstream.cli import main
from dpstream.conformance.outcome import Mode, Outcome, Verdict
from dpstream.conformance.progress import EXPECTED, ConformProgress, duration, expected_seconds, paired
from dpstream.conformance.runner import ConformConfig, Task
from dpstream.experiments import progress as progress_module


def test_durations_read_as_a_person_reads_them() -> None:
    assert [duration(s) for s in (0.4, 45, 190, 600, 1500, 3900)] == [
        "0 s", "45 s", "3 min 10 s", "10 min", "25 min", "1 h 5 min"]


def test_a_differential_check_is_expected_to_take_its_budget_and_the_others_their_measured_time() -> None:
    config = ConformConfig(command=("x",), differential_seconds=17.0, profile="thorough")
    task = Task(Mode.DIFFERENTIAL, "001-alg8", "fresh cases", lambda program: None)  # type: ignore[arg-type,return-value]
    assert expected_seconds(task, config) == 17.0
    statistical = Task(Mode.STATISTICAL, "001-alg8", "privacy: witness search", task.run)
    assert expected_seconds(statistical, config) == EXPECTED[(Mode.STATISTICAL, "thorough")]
    vector = Task(Mode.KNOWN_ANSWER, "001-alg8", "v", task.run)
    assert expected_seconds(vector, config) == EXPECTED[(Mode.KNOWN_ANSWER, "quick")]


def test_a_check_with_a_pair_test_is_expected_to_take_what_that_test_plans_to() -> None:
    """004-alg1's check on the reference took 107 s at quick (2026-11-29): its pair test runs to 0.8 of 120 s."""
    task = Task(Mode.STATISTICAL, "004-alg1", "privacy: witness search", lambda program: None)  # type: ignore[arg-type,return-value]
    assert paired("004-alg1") and paired("004-alg3") and not paired("001-alg10") and not paired("004-alg2")
    assert expected_seconds(task, ConformConfig(command=("x",))) == pytest.approx(96.0)
    assert expected_seconds(task, ConformConfig(command=("x",), profile="thorough")) == pytest.approx(243.0)
    law = Task(Mode.STATISTICAL, "004-alg1", "law: calibration and accuracy", task.run)
    assert expected_seconds(law, ConformConfig(command=("x",))) == EXPECTED[(Mode.STATISTICAL, "quick")] * 0.03


def test_in_ci_the_plan_and_progress_are_plain_lines(capsys: pytest.CaptureFixture[str],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "1")
    monkeypatch.setattr(progress_module, "LOG_INTERVAL", 0.0)
    shown = ConformProgress()
    shown.planned([1.0] * 4 + [100.0])
    for i in range(1, 6):
        shown(Outcome(Mode.KNOWN_ANSWER, "001-alg8", f"v{i}", Verdict.PASS), i, 5)
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == ("conform: expected about 1 min 44 s for the reference on a quiet 2-core machine (longer for a "
                        "slower program or on a busy machine) (5 checks)")
    assert lines[1].startswith("conform: 20% (1/5 checks, ") and "001-alg8 known-answer: pass; about " in lines[1]
    assert lines[-1].startswith("conform: done, 5/5 checks in ")


def test_the_command_states_the_plan_unless_told_not_to(capsys: pytest.CaptureFixture[str],
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "1")
    assert main(["conform", "--mode", "must-reject", "--algorithm", "001-alg8", "--", *fake("none")]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("conform: expected about ") and err[-1].startswith("conform: done, ")
    assert main(["conform", "--mode", "must-reject", "--algorithm", "001-alg8", "--no-progress", "--",
                 *fake("none")]) == 0
    assert capsys.readouterr().err == ""
