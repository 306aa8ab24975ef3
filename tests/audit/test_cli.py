"""``dpstream audit`` on a filtered subset: table, Markdown, JSON and plots; exit statuses."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from dpstream.audit.registry import (
    AuditCase,
    AuditContext,
    CheckKind,
    CheckResult,
    ComponentReport,
    Profile,
    Verdict,
)
from dpstream.audit.report import format_table, status, to_json, write_report
from dpstream.audit.runner import case_seed, run_case, select_cases
from dpstream.claims import Neighbour, PrivacyClaim
from dpstream.cli import main


def test_cli_smoke_filtered(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "report"
    code = main(["audit", "--only", "Laplace mechanism", "--only", "Baseline 2 as printed",  # 1 s (the printed
                 "--out", str(out), "--seed", "3", "--jobs", "1"])  # binary tree's exact violation: registered audits
    printed = capsys.readouterr().out
    assert code == 0, printed
    for column in ("component", "privacy", "law", "time", "status"):
        assert column in printed.splitlines()[0]
    assert max(len(line) for line in printed.splitlines()[:5]) <= 100
    assert "Legend:" in printed and re.search(r"violation LB \d\.\d\d>1 ", printed)
    assert "Laplace mechanism" in printed and "expected failure" in printed
    doc = json.loads((out / "report.json").read_text())
    assert doc["seed"] == 3 and doc["profile"] == "quick"
    names = [c["component"] for c in doc["components"]]
    assert len(names) == 2 and all(("Laplace" in n or "as printed" in n) for n in names)
    assert {k["kind"] for c in doc["components"] for k in c["checks"]} >= {"exact-loss", "black-box", "calibration"}
    md = (out / "report.md").read_text()
    assert md.count("\n| ") >= 3 and "## Details" in md
    for column in ("anchor", "claim", "privacy", "law", "exact loss", "black-box eps LB", "witness search",
                   "calibration", "accuracy", "errata"):
        assert f" {column} |" in md
    assert {("Laplace" in c["component"], c["privacy"]) for c in doc["components"]} == {(True, "pass"),
                                                                                        (False, "violation")}
    plots = sorted((out / "plots").glob("*.png"))
    assert len(plots) == 2 and all(p.stat().st_size > 1000 for p in plots)


@pytest.mark.slow  # two more audit runs, one of them in worker processes (5 s)
def test_the_same_cases_in_worker_processes_give_the_same_numbers(tmp_path: Path) -> None:
    """Seeds depend on names, not on scheduling: --jobs 2 and --jobs 1 give the same values."""
    values = []
    for jobs in ("2", "1"):
        out = tmp_path / f"jobs{jobs}"
        assert main(["audit", "--only", "Laplace mechanism", "--only", "Baseline 2 as printed", "--out", str(out),
                     "--seed", "3", "--jobs", jobs, "--no-plots"]) == 0
        doc = json.loads((out / "report.json").read_text())
        values.append([[k["value"] for k in c["checks"]] for c in doc["components"]])
    assert values[0] == values[1]


def test_cli_nothing_selected_and_list(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["audit", "--only", "no-such-component-xyz"]) == 2
    assert main(["audit", "--list", "--only", "counters"]) == 0
    assert "001-alg8" in capsys.readouterr().out


def _fake(expect_failure: bool, passed: bool) -> AuditCase:
    def run(ctx: AuditContext) -> list[CheckResult]:
        return [CheckResult(CheckKind.EXACT_LOSS, passed, 1.0, 1.0, "fake")]

    return AuditCase("fake", "x", PrivacyClaim.pure(1.0, Neighbour.EVENT, "x"), run, 1e-6,
                     expect_failure=expect_failure, family="counters")


def test_status_semantics(tmp_path: Path) -> None:
    reports = [run_case(_fake(False, True), Profile.QUICK, 0), run_case(_fake(False, False), Profile.QUICK, 0),
               run_case(_fake(True, False), Profile.QUICK, 0), run_case(_fake(True, True), Profile.QUICK, 0)]
    assert [status(r) for r in reports] == ["pass", "FAIL", "expected failure", "UNEXPECTED PASS"]
    assert "UNEXPECTED PASS" in format_table(reports)
    assert len(to_json(reports, Profile.QUICK, 0)["components"]) == 4
    written = write_report(reports, tmp_path, Profile.QUICK, 0, plots=True)
    assert [p.name for p in written] == ["report.md", "report.json"]  # fake cases have nothing to plot


def _checks(*checks: tuple[CheckKind, bool | None, dict[str, object]]) -> AuditCase:
    def run(ctx: AuditContext) -> list[CheckResult]:
        return [CheckResult(kind, passed, 0.5, 1.0, "fake", data) for kind, passed, data in checks]

    return AuditCase("fake", "x", PrivacyClaim.pure(1.0, Neighbour.EVENT, "x"), run, 1e-6, family="counters")


def test_verdicts_are_reported_separately() -> None:
    ok: tuple[CheckKind, bool | None, dict[str, object]] = (CheckKind.BLACK_BOX, True, {})
    bad_cal: tuple[CheckKind, bool | None, dict[str, object]] = (CheckKind.CALIBRATION, False, {})
    exact: tuple[CheckKind, bool | None, dict[str, object]] = (CheckKind.EXACT_LOSS, True, {})
    good_cal: tuple[CheckKind, bool | None, dict[str, object]] = (CheckKind.CALIBRATION, True, {})
    cases = {
        "deviation only": _checks(ok, bad_cal),
        "violation": _checks((CheckKind.SEARCH, False, {"verdict": "violation"}), (CheckKind.CALIBRATION, True, {})),
        "inconclusive": _checks((CheckKind.SEARCH, None, {"verdict": "inconclusive", "detectable_excess": 0.6,
                                                          "target_excess": 0.25})),
        "exact and calibrated": _checks(exact, ok, good_cal),
        "powered search": _checks((CheckKind.SEARCH, True, {"verdict": "pass"})),
    }
    reports = {name: run_case(case, Profile.QUICK, 0) for name, case in cases.items()}
    assert [(r.privacy, r.law) for r in reports.values()] == [
        (Verdict.INCONCLUSIVE, Verdict.DEVIATION),  # a black-box bound below the claim backs no pass
        (Verdict.VIOLATION, Verdict.PASS), (Verdict.INCONCLUSIVE, None),
        (Verdict.PASS, Verdict.PASS), (Verdict.PASS, None)]
    assert [r.pass_backed_by for r in reports.values()] == [None, None, None, "exact+cal", "power"]
    table = format_table(list(reports.values()))
    assert "deviation cal" in table and "violation LB" in table and "inconclusive LB" in table
    assert "pass (exact+cal)" in table and "pass (power)" in table
    assert status(reports["inconclusive"]) == "pass"  # inconclusive is not a failure


def test_profiles_and_full_alias(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert Profile("full") is Profile.THOROUGH and Profile("thorough") is Profile.THOROUGH
    assert main(["audit", "--full", "--profile", "quick", "--only", "Laplace mechanism"]) == 2


def test_a_raising_case_is_a_failure() -> None:
    def run(ctx: AuditContext) -> list[CheckResult]:
        raise ValueError("boom")

    case = AuditCase("raises", "x", PrivacyClaim.pure(1.0, Neighbour.EVENT, "x"), run, 1e-6, family="counters")
    report = run_case(case, Profile.QUICK, 0)
    assert status(report) == "ERROR" and "boom" in report.checks[0].detail and not report.passed


def test_a_raising_expect_failure_case_is_not_a_caught_violation() -> None:
    """A crash of an ``expect_failure`` case must not read as "expected failure" (it proves nothing)."""
    def run(ctx: AuditContext) -> list[CheckResult]:
        raise ValueError("boom")

    case = AuditCase("raises", "x", PrivacyClaim.pure(1.0, Neighbour.EVENT, "x"), run, 1e-6,
                     expect_failure=True, family="counters")
    report = run_case(case, Profile.QUICK, 0)
    assert status(report) == "ERROR" and not report.passed
    assert "ERROR" in format_table([report])
    assert to_json([report], Profile.QUICK, 0)["components"][0]["status"] == "ERROR"


def test_case_seed_independent_of_selection() -> None:
    a, b = _fake(False, True), _fake(True, True)
    assert case_seed(0, a) == case_seed(0, b)  # same family and name
    assert case_seed(0, a) != case_seed(1, a)
    assert select_cases([a], ["FAKE"]) == [a] and select_cases([a], ["zzz"]) == []


def _widest(report_case: AuditCase, seconds: float) -> ComponentReport:
    """A report of a registered case whose verdict cells are as wide as they get (nothing is run)."""
    checks = (CheckResult(CheckKind.SEARCH, None, 0.1, 1.0, "search",
                          {"verdict": "inconclusive", "detectable_excess": 0.123456, "target_excess": 0.0512345}),
              CheckResult(CheckKind.CALIBRATION, False, 0.0001, 0.001, "cal"),
              CheckResult(CheckKind.ACCURACY, False, 0.5, 0.05, "acc"))
    return ComponentReport(case=report_case, checks=checks, seconds=seconds)


@pytest.mark.parametrize("seconds", [0.04, 123.45, 98765.4])
def test_the_table_names_every_registered_case_by_its_anchor_within_100_columns(seconds: float) -> None:
    """Over the real registered cases (not run): every line fits 100 columns, every row starts with the case's
    anchor, and a name that does not fit is shortened at a word boundary (before a space, after a hyphen)."""
    from dpstream.audit.registry import discover

    cases = discover()
    table = format_table([_widest(c, seconds) for c in cases])
    lines = table.splitlines()
    assert max(len(line) for line in lines) <= 100, max(lines, key=len)
    head = lines[0].split()
    assert head[:2] == ["anchor", "component"]
    width = len(lines[1].split()[1])  # the component column's dashes
    for case, line in zip(cases, lines[2:2 + len(cases)], strict=True):
        assert line.startswith(case.anchor + " ")
        shown = line[len(lines[1].split()[0]) + 2:][:width].rstrip()
        if shown.endswith("~"):
            prefix = shown[:-1]
            assert prefix and case.component.startswith(prefix), (shown, case.component)
            rest = case.component[len(prefix):]
            assert rest[:1] in (" ", ",", ";", ":", "(", "/") or prefix.endswith("-"), (shown, case.component)
        else:
            assert shown == case.component
    assert re.search(r"inconclusive LB 0\.10<=\S+ ", table) and "deviation acc+cal" in table  # verdict cells whole


def test_a_cut_name_in_the_middle_of_a_word_is_caught() -> None:
    """The check above, on a table that cuts mid-word (the old 32-column clip): it fails."""
    from dpstream.audit.report import shorten_name

    name = "Binary tree counter (eps=1, T=16)"
    clipped = name[:31] + "~"  # what the table printed before: "Binary tree counter (eps=1, T=1~"
    prefix = clipped[:-1]
    assert not (name[len(prefix):][:1] in (" ", ",", ";", ":", "(", "/") or prefix.endswith("-"))
    assert shorten_name(name, 32) == "Binary tree counter (eps=1~" and shorten_name(name, 40) == name
