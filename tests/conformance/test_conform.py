"""`dpstream conform` against the reference (`dpstream serve`) and against deliberately faulty programs.

Known-answer and must-reject checks are deterministic: no false-alarm probability to state. The faulty
programs are `tests/conformance/fake_program.py` (001-alg8 in tape mode with one fault each).
"""

from __future__ import annotations

import json
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from dpstream.catalog import entries, entry
from dpstream.cli import main
from dpstream.conformance.outcome import Mode, Outcome, Verdict, exit_status
from dpstream.conformance.report import format_table, to_json
from dpstream.conformance.runner import ConformConfig, conform
from dpstream.vectors.corpus import known_answer, load_manifest

FAKE = Path(__file__).resolve().parent / "fake_program.py"
SERVE = [sys.executable, "-m", "dpstream.cli", "serve"]
QUICK = frozenset({Mode.KNOWN_ANSWER, Mode.MUST_REJECT})


def fake(fault: str) -> list[str]:
    return [sys.executable, str(FAKE), fault]


def run(command: list[str], *, modes: frozenset[Mode] = QUICK, algorithms: tuple[str, ...] = (),
        timeout: float = 10.0) -> tuple[int, list[Outcome]]:
    report = conform(ConformConfig(command=tuple(command), modes=modes, algorithms=algorithms, timeout=timeout,
                                   cases=3))  # the differential mode's own tests are in test_differential.py
    return report.exit_status, report.outcomes


ONE_PER_FAMILY = ("001-alg10", "001-alg5", "002-alg1", "003-alg2", "004-alg1", "000-alg1")
"""The default run replays these algorithms' vectors through the protocol (one per family; 1.5 s); every vector of
every algorithm under ``slow`` (5 s). The catalog test regenerates the whole corpus in-process in the default run."""


@pytest.mark.parametrize("algorithms", [ONE_PER_FAMILY, pytest.param((), marks=pytest.mark.slow, id="all")])
def test_the_reference_conforms_to_every_vector_of_the_corpus(algorithms: tuple[str, ...]) -> None:
    status, outcomes = run(SERVE, algorithms=algorithms)
    assert status == 0, [o.message for o in outcomes if o.verdict is not Verdict.PASS][:5]
    checked = {o.name for o in outcomes}
    rows = [row for row in load_manifest() if not algorithms or row.algorithm in algorithms]
    assert checked == {row.id for row in rows}  # every vector of the algorithms, nothing skipped
    assert all(o.verdict is Verdict.PASS for o in outcomes)


def test_the_printed_binary_tree_deviates_and_the_report_names_the_first_divergence() -> None:
    status, outcomes = run([*SERVE, "--as-printed"], modes=frozenset({Mode.KNOWN_ANSWER}), algorithms=("001-alg10",))
    assert status == 1
    failed = [o for o in outcomes if o.verdict is Verdict.DEVIATION]
    assert len(failed) == len(outcomes) > 0  # every vector: scale log2(T)/eps instead of (floor(log2 T)+1)/eps
    t8 = next(o for o in failed if o.name == "001-alg10/T8-bits-eps2")
    first = t8.details["draw_issues"][0]
    assert first == {"step": 1, "site": "001-alg10 L8 t=1", "what": "params", "expected": {"scale": 2.0},
                     "got": {"scale": 1.5}}  # eps = 2, T = 8: 4/2 expected, log2(8)/2 printed
    assert "001-alg10 L8 t=1" in t8.message and "1.5" in t8.message


def test_a_correct_outside_program_conforms() -> None:
    status, outcomes = run(fake("none"), algorithms=("001-alg8",))
    assert status == 0
    assert {o.mode for o in outcomes} == {Mode.KNOWN_ANSWER, Mode.MUST_REJECT}


@pytest.mark.parametrize(("fault", "status", "what"), [
    ("wrong-scale", 1, "params"),
    ("extra-draw", 1, "unexpected-site"),
    ("accept-everything", 1, "accepted"),
    ("crash-on-step", 3, "crash"),
    ("garbage", 3, "bad-json"),
    ("bad-hello", 3, "bad-reply"),
    ("exit-1", 3, "exited with status 1"),
])
def test_faults_get_their_exit_status(fault: str, status: int, what: str) -> None:
    got, outcomes = run(fake(fault), algorithms=("001-alg8",))
    assert got == status
    bad = [o for o in outcomes if o.verdict.exit_code == status]
    assert bad and any(what in o.message or what in json.dumps(o.details) for o in bad)


def test_a_hanging_program_times_out_and_is_reported() -> None:
    status, outcomes = run(fake("hang"), modes=frozenset({Mode.KNOWN_ANSWER}), algorithms=("001-alg8",), timeout=0.5)
    assert status == 3
    assert "timeout" in outcomes[0].message and len(outcomes) == len(list(known_answer("001-alg8")))
    assert all(o.verdict is Verdict.PROTOCOL_ERROR and "timed out" in o.message for o in outcomes[1:])


def test_a_program_that_cannot_start_is_a_protocol_error() -> None:
    status, outcomes = run(["/nonexistent/program"])
    assert status == 3 and "cannot start" in outcomes[0].message


def test_unannounced_algorithms_and_modes_are_skipped() -> None:
    status, outcomes = run(fake("none"), modes=frozenset(Mode), algorithms=("001-alg8", "001-alg10"))
    skipped = {(o.algorithm, o.mode) for o in outcomes if o.verdict is Verdict.SKIPPED}
    assert ("001-alg10", Mode.KNOWN_ANSWER) in skipped  # asked for, not announced
    assert ("001-alg8", Mode.STATISTICAL) in skipped  # the fake program has no own-noise mode
    assert status == 0


def test_the_worst_verdict_decides() -> None:
    def o(v: Verdict) -> Outcome:
        return Outcome(Mode.KNOWN_ANSWER, "x", "y", v)

    assert exit_status([o(Verdict.PASS), o(Verdict.SKIPPED), o(Verdict.INCONCLUSIVE)]) == 0
    assert exit_status([o(Verdict.PASS), o(Verdict.DEVIATION)]) == 1
    assert exit_status([o(Verdict.DEVIATION), o(Verdict.VIOLATION)]) == 2
    assert exit_status([o(Verdict.VIOLATION), o(Verdict.PROTOCOL_ERROR)]) == 3
    assert Outcome(Mode.STATISTICAL, "x", "y", Verdict.PASS, Verdict.VIOLATION).verdict is Verdict.VIOLATION


def test_reports_parse_and_the_table_fits_100_columns(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    paths = {k: tmp_path / f"r.{k}" for k in ("json", "xml", "md")}
    status = main(["conform", "--mode", "known-answer", "--algorithm", "001-alg8", "--json", str(paths["json"]),
                   "--junit", str(paths["xml"]), "--markdown", str(paths["md"]), "--", *fake("wrong-scale")])
    assert status == 1
    table = capsys.readouterr().out
    assert max(len(line) for line in table.splitlines()) <= 100
    doc = json.loads(paths["json"].read_text())
    assert doc["exit_status"] == 1 and doc["outcomes"][0]["conformance"] == "deviation"
    suites = ET.parse(paths["xml"]).getroot()
    cases = suites.findall(".//testcase")
    assert cases and all(c.find("failure") is not None for c in cases)
    assert cases[0].get("classname") == "001-alg8.known-answer"
    assert "| 001-alg8 | known-answer |" in paths["md"].read_text()


@pytest.mark.parametrize("argv", [
    ["conform", "--mode", "nonsense", "--", "true"],
    ["conform", "--timeout", "0", "--", "true"],
    ["conform", "--json", "/nonexistent-folder/r.json", "--", "true"],
    ["conform", "--mode", "known-answer"],  # no program
])
def test_usage_errors_exit_4_before_any_work(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 4
    err = capsys.readouterr().err
    assert "error" in err and "Traceback" not in err


def test_the_table_lists_a_certified_violation_before_deviations() -> None:
    """A violation found last is listed first (the terminal shows at most MAX_FINDINGS findings)."""
    from dpstream.conformance.report import MAX_FINDINGS

    report = conform(ConformConfig(command=("/nonexistent/program",), modes=QUICK))
    many = [Outcome(Mode.KNOWN_ANSWER, "001-alg8", f"v{i}", Verdict.DEVIATION) for i in range(MAX_FINDINGS + 5)]
    leak = Outcome(Mode.STATISTICAL, "001-alg8", "witness", None, Verdict.VIOLATION, message="the witness")
    report.outcomes[:] = [*many, leak]
    findings = format_table(report).split("Findings", 1)[1].splitlines()
    assert findings[1].startswith("[violation] 001-alg8 statistical witness: the witness")
    assert findings[2].startswith("[deviation] 001-alg8 known-answer v0")


def test_table_of_a_report_without_hello() -> None:
    report = conform(ConformConfig(command=("/nonexistent/program",), modes=QUICK))
    text = format_table(report)
    assert "no valid hello" in text and "exit 3" in text
    assert to_json(report)["exit_status"] == 3


@pytest.mark.parametrize("anchors", [pytest.param(("001-alg5",), marks=pytest.mark.slow),
                                     pytest.param(("001-alg10", "001-alg5"), marks=pytest.mark.slow)],
                         ids=["001-alg5", "001-alg10+001-alg5"])
def test_the_reference_passes_the_statistical_checks_of_a_counter_and_a_synthesizer(anchors: tuple[str, ...]) -> None:
    """Slow (9 and 20 s; the default run's controls of the statistical machinery: the reference passes transcript
    mode, which aims the same search, and the outside JavaScript synthesizer's `rounded` control): 001-alg5
    (PrivTree, a designed search) and 001-alg10 (a counter with its law checks, vectorised through the bulk op,
    and the shipped power behind its `pass`) at the quick profile, seed 0: no violation, no deviation, and no
    `pass` without measured power (docs/conformance.md, "What backs a pass"). False alarm <= 1e-3."""
    report = conform(ConformConfig(command=tuple(SERVE), modes=frozenset({Mode.STATISTICAL}), jobs=1,
                                   algorithms=anchors))
    assert report.exit_status == 0, [o.message for o in report.outcomes if o.verdict.exit_code][:3]
    privacy = [o for o in report.outcomes if o.privacy is not None]
    assert {o.algorithm for o in privacy} == set(anchors)
    for o in privacy:
        assert o.privacy in (Verdict.PASS, Verdict.INCONCLUSIVE)
        assert (o.privacy is Verdict.PASS) == bool(o.details["power"] and o.details["power"]["backs_pass"])
        assert "classes: threshold" in o.message
    assert [o.conformance for o in report.outcomes if o.name.startswith("law")] == [Verdict.PASS] * len(anchors[1:])
    if "001-alg10" in anchors:  # the shipped power table backs the counter's pass (measured through `runs`)
        assert [o.privacy for o in privacy if o.algorithm == "001-alg10"] == [Verdict.PASS]


@pytest.mark.slow
def test_the_reference_passes_the_statistical_checks() -> None:
    """`dpstream conform -- dpstream serve` in statistical mode (quick profile, seed 0): no violation and no
    deviation. A correct program gets a violation or a deviation with probability <= 1e-3 in total (the run's
    false-alarm budget, split over its checks); the seed is fixed, so this test is deterministic. Slow (about 6
    minutes on 2 cores): the default run checks two entries (above)."""
    report = conform(ConformConfig(command=tuple(SERVE), modes=frozenset({Mode.STATISTICAL}), jobs=1))
    assert report.exit_status == 0, [o.message for o in report.outcomes if o.verdict.exit_code][:3]
    searched = {o.algorithm for o in report.outcomes if o.privacy is not None}
    designed = {e.anchor for e in entries() if e.streaming and e.statistical is not None}
    assert len(designed) == 25 and searched == designed  # every streaming entry but 004-alg4 (deterministic)
    assert {o.algorithm for o in report.outcomes if o.verdict is Verdict.SKIPPED} == {"004-alg4"}
    assert all(o.privacy in (Verdict.PASS, Verdict.INCONCLUSIVE) for o in report.outcomes if o.privacy is not None)
    laws = [o for o in report.outcomes if o.name.startswith("law")]
    assert laws and all(o.conformance is Verdict.PASS for o in laws)
    assert all(o.details["law"].startswith("not applicable") for o in report.outcomes
               if o.algorithm in designed and entry(o.algorithm).model is None)
    for o in report.outcomes:  # every skipped algorithm says why
        assert o.verdict is not Verdict.SKIPPED or o.message
