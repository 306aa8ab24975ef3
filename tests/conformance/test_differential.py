"""`dpstream conform --mode differential`: fresh cases on the reference and on programs whose planted mistakes the
shipped vectors never see (tests/conformance/mistaken_program.py; fake_program.py ``no-horizon-is-1``).

Deterministic: every case is a function of ``--seed`` and the algorithm, and the programs are deterministic in tape
mode, so there is no false-alarm probability to state. The mistaken programs run with the default budget (100 cases,
60 s), not a budget chosen for them; the search stops at the first difference.
"""

from __future__ import annotations

import importlib
import json
import sys
from collections.abc import Callable, Mapping
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as hypothesis_seed

from dpstream.catalog import entry
from dpstream.catalog.cases import Case
from dpstream.catalog.codecs import compare
from dpstream.cli import main
from dpstream.conformance.outcome import Mode, Outcome, Verdict
from dpstream.conformance.runner import ConformConfig, ConformReport, conform, plan
from dpstream.conformance.wire import Hello
from dpstream.insecure import TapeReplay
from dpstream.testing.strategies import catalog_cases, fixed_generation
from dpstream.vectors.format import KnownAnswerVector
from dpstream.vectors.generate import run_inputs

HERE = Path(__file__).resolve().parent
SERVE = (sys.executable, "-m", "dpstream.cli", "serve")
DIFFERENTIAL = frozenset({Mode.DIFFERENTIAL})
VECTOR_CHECKS = frozenset({Mode.KNOWN_ANSWER, Mode.MUST_REJECT})


def fake(fault: str) -> tuple[str, ...]:
    return sys.executable, str(HERE / "fake_program.py"), fault


def mistaken(mistake: str) -> tuple[str, ...]:
    return sys.executable, str(HERE / "mistaken_program.py"), mistake


def run(command: tuple[str, ...], anchors: tuple[str, ...], out: Path, *, modes: frozenset[Mode] = DIFFERENTIAL,
        **budget: Any) -> ConformReport:
    return conform(ConformConfig(command=command, modes=modes, algorithms=anchors, differential_out=out, **budget))


def only(report: ConformReport, mode: Mode = Mode.DIFFERENTIAL) -> Outcome:
    (outcome,) = [o for o in report.outcomes if o.mode is mode]
    return outcome


def schema_errors(doc: Any) -> list[str]:
    schema = json.loads((resources.files("dpstream.vectors") / "schema.json").read_text(encoding="utf-8"))
    return [e.message for e in jsonschema.Draft202012Validator(schema).iter_errors(doc)]


def replays_on_the_reference(vector: KnownAnswerVector) -> bool:
    """The vector's expected releases are what the reference computes from its tape (in this process)."""
    e = entry(vector.algorithm)
    assert e.codec is not None
    with TapeReplay(vector.tape) as replay:
        got = run_inputs(e, vector.params, vector.inputs, replay)
    return all(compare(w, g, vector.tolerance) is None for w, g in zip(vector.expected, got, strict=True))


def test_the_reference_passes_fresh_cases(tmp_path: Path) -> None:
    anchors = ("001-alg10", "001-alg3", "003-alg2")  # a counter, a PHDStream box, a tabular stream
    report = run(SERVE, anchors, tmp_path / "out", cases=3)
    assert report.exit_status == 0, [o.message for o in report.outcomes]
    assert {o.algorithm for o in report.outcomes} == set(anchors)
    for o in report.outcomes:
        assert o.verdict is Verdict.PASS and o.details["cases"] == 3, o.message
    assert not (tmp_path / "out").exists()  # nothing to write


def _no_horizon(p: Mapping[str, Any], inputs: list[Any]) -> bool:
    return "T" not in p and len(inputs) == 2  # a second step is the first one the program refuses


def _unit_coordinate(p: Mapping[str, Any], inputs: list[Any]) -> bool:
    return len(inputs) == 1 and len(inputs[0]["points"]) == 1 and 1.0 in inputs[0]["points"][0]


def _privtree_scale(p: Mapping[str, Any], inputs: list[Any]) -> bool:
    return p.get("fanout", 2) >= 3 and p.get("lambda_rule") in ("proof", "printed") and len(inputs) == 1


def _default_fitter(p: Mapping[str, Any], inputs: list[Any]) -> bool:
    return "A_Dataset" not in p and p["k"] >= 2 and len(inputs) == 1  # with k = 1, mw and mw-all agree


def _levels(p: Mapping[str, Any], inputs: list[Any]) -> bool:
    return p["T"] in (65, 129) and len(inputs) == 1


MISTAKES = [
    pytest.param(fake("no-horizon-is-1"), "001-alg8", _no_horizon, id="no-horizon-is-1"),
    pytest.param(mistaken("unit-coordinate"), "001-alg1", _unit_coordinate, id="unit-coordinate",
                 marks=pytest.mark.slow),
    pytest.param(mistaken("privtree-binary-scale"), "001-alg5", _privtree_scale, id="privtree-binary-scale",
                 marks=pytest.mark.slow),
    pytest.param(mistaken("offline-default-fitter"), "000-alg1", _default_fitter, id="offline-default-fitter",
                 marks=pytest.mark.slow),
    pytest.param(mistaken("tree-levels-above-64"), "001-alg10", _levels, id="tree-levels-above-64",
                 marks=pytest.mark.slow),
]


@pytest.mark.parametrize(("command", "anchor", "corner"), MISTAKES)
def test_a_mistake_the_vectors_miss_is_convicted_with_a_shrunk_case(
        command: tuple[str, ...], anchor: str, corner: Callable[[Mapping[str, Any], list[Any]], bool],
        tmp_path: Path) -> None:
    report = run(command, (anchor,), tmp_path / "out", modes=VECTOR_CHECKS | DIFFERENTIAL)
    vector_checks = [o for o in report.outcomes if o.mode in VECTOR_CHECKS]
    assert vector_checks and all(o.verdict is Verdict.PASS for o in vector_checks)  # the shipped vectors pass
    found = only(report)
    assert report.exit_status == 1 and found.verdict is Verdict.DEVIATION, found.message
    assert found.details["reproduced"] is True  # the shrunk case alone, on a fresh copy of the program
    path = Path(found.details["vector"])
    assert path == tmp_path / "out" / anchor / "differential-seed0.json"
    assert schema_errors(json.loads(path.read_text())) == []
    vector = KnownAnswerVector.load(path)
    assert vector.id == f"{anchor}/differential-seed0" and vector.params == found.details["minimal_case"]["params"]
    assert corner(vector.params, vector.inputs), (vector.params, vector.inputs)  # small, and in the mistake's corner
    assert len(vector.inputs) <= found.details["first_failing_case"]["steps"]
    assert replays_on_the_reference(vector)
    assert str(path) in found.message and json.dumps(vector.params, separators=(",", ":"))[:50] in found.message


def test_the_shrunk_vectors_are_a_corpus_and_the_reports_show_them(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    out, files = tmp_path / "out", {k: tmp_path / f"r.{k}" for k in ("json", "xml", "md")}
    status = main(["conform", "--mode", "differential", "--differential-out", str(out), "--json", str(files["json"]),
                   "--junit", str(files["xml"]), "--markdown", str(files["md"]), "--", *fake("no-horizon-is-1")])
    assert status == 1
    table = capsys.readouterr().out
    assert max(len(line) for line in table.splitlines()) <= 100
    joined = "".join(table.split())  # the table wraps lines at 100 columns
    assert "inputs[0,0]" in joined and str(out / "001-alg8" / "differential-seed0.json") in joined
    assert '"inputs": [' in files["md"].read_text() and "Minimal case" in files["md"].read_text()
    assert "minimal_case" in files["xml"].read_text()
    assert json.loads(files["json"].read_text())["outcomes"][0]["details"]["minimal_case"]["steps"] == 2
    assert schema_errors(json.loads((out / "manifest.json").read_text())) == []
    # the folder is a corpus: the shrunk case convicts the program again, and a correct program passes it
    replay = ["conform", "--mode", "known-answer", "--vectors", str(out), "--"]
    assert main([*replay, *fake("no-horizon-is-1")]) == 1
    assert main([*replay, *fake("none")]) == 0


def test_a_manifest_in_the_output_folder_keeps_its_rows_or_is_refused(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    run(fake("no-horizon-is-1"), ("001-alg8",), out, seed=1)
    run(fake("no-horizon-is-1"), ("001-alg8",), out, seed=2)  # the second run keeps the first one's row
    assert [r["id"] for r in json.loads((out / "manifest.json").read_text())["vectors"]] == [
        "001-alg8/differential-seed1", "001-alg8/differential-seed2"]
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "manifest.json").write_text('{"not": "a corpus"}')
    with pytest.raises(SystemExit) as info:
        main(["conform", "--differential-out", str(foreign), "--", *fake("none")])
    assert info.value.code == 4 and "not a dpstream corpus manifest" in capsys.readouterr().err


def test_the_same_seed_gives_the_same_cases_and_the_same_vector(tmp_path: Path) -> None:
    reports = [run(fake("no-horizon-is-1"), ("001-alg8",), tmp_path / name, seed=seed)
               for name, seed in (("a", 7), ("b", 7), ("c", 8))]
    files = [tmp_path / name / "001-alg8" / f"differential-seed{seed}.json" for name, seed in (("a", 7), ("b", 7),
                                                                                               ("c", 8))]
    assert files[0].read_bytes() == files[1].read_bytes()
    same = ("cases", "found_at_case", "shrink_runs", "minimal_case")
    assert [only(reports[0]).details[k] for k in same] == [only(reports[1]).details[k] for k in same]
    assert files[2].is_file() and files[2].read_bytes() != files[0].read_bytes()  # another seed, other cases


def test_a_crash_on_a_fresh_case_is_a_protocol_error_with_its_case(tmp_path: Path) -> None:
    report = run(fake("crash-on-step"), ("001-alg8",), tmp_path / "out")
    broken = only(report)
    assert report.exit_status == 3 and broken.verdict is Verdict.PROTOCOL_ERROR
    assert broken.details["kind"] == "crash" and Path(broken.details["vector"]).is_file()


def test_a_hang_is_a_protocol_error(tmp_path: Path) -> None:
    report = conform(ConformConfig(command=fake("hang"), modes=DIFFERENTIAL, algorithms=("001-alg8",), timeout=0.5,
                                   differential_out=tmp_path / "out"))
    assert only(report).verdict is Verdict.PROTOCOL_ERROR and only(report).details["kind"] == "timeout"


def test_the_time_budget_is_kept(tmp_path: Path) -> None:
    report = run(fake("none"), ("001-alg8",), tmp_path / "out", cases=10**6, differential_seconds=1.0)
    outcome = only(report)
    assert outcome.details["cut"] is True and outcome.verdict is Verdict.PASS and outcome.details["cases"] > 1
    assert outcome.seconds < 1.0 + 0.5  # new cases stop at half the budget; one case takes milliseconds


def test_programs_without_tape_mode_are_skipped() -> None:
    hello = Hello("own-only", ("001-alg8",), ("own",), {})
    tasks, skipped = plan(ConformConfig(command=("x",), modes=DIFFERENTIAL), hello)
    assert not tasks and [(o.mode, o.verdict) for o in skipped] == [(Mode.DIFFERENTIAL, Verdict.SKIPPED)]
    assert "tape" in skipped[0].message



def _cases_of_seeds(anchor: str, seeds: range) -> list[Any]:
    """The random case of a 2-example Hypothesis run per seed (no fixed_generation)."""
    drawn: list[Any] = []
    for s in seeds:
        @settings(database=None, max_examples=2, deadline=None, phases=(Phase.generate,),
                  suppress_health_check=list(HealthCheck))
        @hypothesis_seed(s)
        @given(catalog_cases(anchor))
        def collect(case: Case) -> None:
            drawn.append((case.params, case.inputs))

        collect()
    return drawn


def test_the_cases_of_a_seed_ignore_constants_in_local_source(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Hypothesis mixes constants of 'local' modules into its draws; fixed_generation turns that off, so loading a
    module full of constants (here: a file outside site-packages) changes nothing, and without it the cases change."""
    with fixed_generation():
        before = _cases_of_seeds("001-alg9", range(8))
    (tmp_path / "constants_for_hypothesis.py").write_text(
        "VALUES = " + repr([*range(-3, 130), 0.37, 1.75, 2.5, 0.0625, 31.5, 613.25]) + "\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.import_module("constants_for_hypothesis")
    with fixed_generation():
        assert _cases_of_seeds("001-alg9", range(8)) == before
    assert _cases_of_seeds("001-alg9", range(8)) != before  # the broken variant: Hypothesis's local constants
