"""`dpstream conform` itself: bad harness arguments are refused before anything runs (exit 4, one line), a program
that crashes on every request is reported quickly (a circuit breaker, not one restart per check), and the terminal
report shows the tail of the program's stderr. Deterministic: no false-alarm probability.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from dpstream.cli import main
from dpstream.conformance.outcome import Mode, Verdict
from dpstream.conformance.report import format_table
from dpstream.conformance.runner import BREAKER, ConformConfig, conform

FAKE = Path(__file__).resolve().parent / "fake_program.py"
QUICK = frozenset({Mode.KNOWN_ANSWER, Mode.MUST_REJECT})


def fake(fault: str) -> list[str]:
    return [sys.executable, str(FAKE), fault]


def starts(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines()) if path.exists() else 0


@pytest.fixture
def counted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The file the fake program appends a line to at every start."""
    path = tmp_path / "starts"
    monkeypatch.setenv("FAKE_STARTS", str(path))
    return path


def _places(tmp_path: Path) -> dict[str, str]:
    not_executable = tmp_path / "not-executable"
    not_executable.write_text("#!/bin/sh\n", encoding="utf-8")
    not_executable.chmod(0o644)
    not_a_program = tmp_path / "not-a-program"
    not_a_program.write_bytes(b"\x00\x01 not an executable format")
    not_a_program.chmod(0o755)
    return {"tmp": str(tmp_path), "not_executable": str(not_executable), "fake": str(FAKE), "python": sys.executable,
            "not_a_program": str(not_a_program)}


# (arguments before the program's command line, the program's command line, text the error line names)
BAD = [
    pytest.param(["--timeout", "nan"], None, "--timeout", id="timeout-nan"),
    pytest.param(["--timeout", "inf"], None, "--timeout", id="timeout-inf"),
    pytest.param(["--timeout", "-1"], None, "--timeout", id="timeout-negative"),
    pytest.param(["--timeout", "0"], None, "--timeout", id="timeout-0"),
    pytest.param(["--timeout", "1e300"], None, "--timeout", id="timeout-huge"),
    pytest.param(["--timeout", "ten"], None, "--timeout", id="timeout-text"),
    pytest.param(["--seed", "-1"], None, "--seed", id="seed-negative"),
    pytest.param(["--seed", "1.5"], None, "--seed", id="seed-float"),
    pytest.param(["--jobs", "0"], None, "--jobs", id="jobs-0"),
    pytest.param(["--jobs", "x"], None, "--jobs", id="jobs-text"),
    pytest.param(["--mode", "nonsense"], None, "--mode", id="mode-unknown"),
    pytest.param(["--profile", "slow"], None, "--profile", id="profile-unknown"),
    pytest.param(["--algorithm", "no-such-anchor"], None, "no-such-anchor", id="algorithm-unknown"),
    pytest.param(["--algorithm", "001-alg8", "--algorithm", "002-alg9"], None, "002-alg9", id="algorithm-one-unknown"),
    pytest.param(["--algorithm", "001-alg4"], None, "001-alg4", id="algorithm-not-served"),
    pytest.param(["--vectors", "{tmp}"], None, "--vectors", id="vectors-no-manifest"),
    pytest.param(["--json", "{tmp}/missing/r.json"], None, "r.json", id="json-folder-missing"),
    pytest.param(["--junit", "{tmp}"], None, "folder", id="junit-is-a-folder"),
    pytest.param(["--bogus"], None, "--bogus", id="unknown-option"),
    pytest.param([], [], "COMMAND", id="no-program"),
    pytest.param([], ["{tmp}/no-such-program"], "not found", id="program-missing"),
    pytest.param([], ["no-such-program-on-path-xyz"], "not found", id="program-not-on-path"),
    pytest.param([], ["{not_executable}"], "not executable", id="program-not-executable"),
    pytest.param([], ["{tmp}"], "folder", id="program-is-a-folder"),
    pytest.param([], ["{not_a_program}"], "cannot start", id="program-not-a-program"),
]


@pytest.mark.parametrize(("options", "program", "names"), BAD)
def test_bad_harness_arguments_exit_4_in_one_line_before_anything_runs(
        options: list[str], program: list[str] | None, names: str, tmp_path: Path, counted: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    places = _places(tmp_path)
    command = ["{python}", "{fake}", "none"] if program is None else program
    argv = ["conform", *options, "--", *command]
    with pytest.raises(SystemExit) as info:
        main([a.format(**places) for a in argv])
    assert info.value.code == 4
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and names in err and "Traceback" not in err, err
    assert starts(counted) == 0  # the program was never started


def test_the_process_exits_4_for_a_bad_argument() -> None:
    done = subprocess.run([sys.executable, "-m", "dpstream.cli", "conform", "--timeout", "nan", "--", "true"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 4 and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "--timeout" in done.stderr and "Traceback" not in done.stderr


def test_a_program_that_crashes_on_every_request_is_reported_quickly(counted: Path) -> None:
    """The issue's case: a program that answers hello, then dies at every request. Restarted at most BREAKER times
    (once per check, before: dozens of restarts and a minute); every check is reported, the ones not run say why."""
    started = time.monotonic()
    report = conform(ConformConfig(command=tuple(fake("crash-always")), modes=QUICK))
    elapsed = time.monotonic() - started
    assert elapsed < 10, elapsed
    assert report.exit_status == 3 and report.done == report.planned > 2 * BREAKER
    assert starts(counted) == BREAKER  # the first start, then BREAKER - 1 restarts
    not_run = [o for o in report.outcomes if o.message.startswith("not run")]
    assert len(not_run) == report.done - BREAKER and all(o.verdict is Verdict.PROTOCOL_ERROR for o in not_run)
    assert "answered nothing" in not_run[0].message
    assert "fake-crash-always: cannot handle 'init'" in str(not_run[0].details["stderr_tail"])
    table = format_table(report)
    assert "The program's stderr" in table and "fake-crash-always: cannot handle 'init', giving up" in table
    assert max(len(line) for line in table.splitlines()) <= 100


def test_the_terminal_report_shows_the_tail_of_the_programs_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    status = main(["conform", "--mode", "known-answer", "--", *fake("crash-always")])
    assert status == 3
    out = capsys.readouterr().out
    assert "fake-crash-always: cannot handle 'init', giving up" in out


def test_a_crash_on_every_step_stops_that_algorithm_and_mode_after_a_few_checks(counted: Path) -> None:
    """A program that answers init but dies at its second step: each algorithm and mode is given up after BREAKER
    protocol errors in a row, and the checks that pass in between (one-step vectors) reset the count."""
    report = conform(ConformConfig(command=tuple(fake("crash-on-step")), modes=frozenset({Mode.KNOWN_ANSWER})))
    crashes = [o for o in report.outcomes if o.details.get("kind") == "crash"]
    assert report.exit_status == 3 and 0 < len(crashes) <= starts(counted)
    assert any(o.message.startswith("not run") and "broke the protocol" in o.message for o in report.outcomes)
    assert starts(counted) < report.done


def test_the_breaker_is_shown_catching_what_it_should(counted: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With the breaker set beyond the number of checks, the same program is restarted for every check: the count
    above is the breaker's doing, not the program's."""
    from dpstream.conformance import runner

    monkeypatch.setattr(runner, "BREAKER", 10**6)
    report = conform(ConformConfig(command=tuple(fake("crash-always")), modes=frozenset({Mode.MUST_REJECT}),
                                   timeout=5.0))
    assert starts(counted) == report.done
    assert not any(o.message.startswith("not run") for o in report.outcomes)


@pytest.mark.slow
def test_a_program_that_ignores_end_of_input_and_signals_is_killed(tmp_path: Path) -> None:
    """The harness closes the program's input at the end and kills it after the timeout (a protocol error: a program
    exits at end of input): nothing is left running."""
    pid_file = tmp_path / "starts"
    env = {**os.environ, "FAKE_STARTS": str(pid_file)}
    done = subprocess.run([sys.executable, "-m", "dpstream.cli", "conform", "--mode", "known-answer", "--timeout",
                           "1", "--algorithm", "001-alg8", "--", *fake("ignore-signals")],
                          capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 3 and "at end of input" in done.stdout, done.stdout + done.stderr
    for pid in pid_file.read_text(encoding="utf-8").split():
        assert not Path(f"/proc/{pid}").exists() or "Z" in Path(f"/proc/{pid}/stat").read_text().split(")")[1][:3]


@pytest.mark.parametrize("given", [["--mode", "known-answer", "--mode", "must-reject"],
                                   ["--mode", "known-answer,must-reject"], ["--mode", "must-reject, known-answer"]])
def test_several_modes_run_together(tmp_path: Path, given: list[str]) -> None:
    """`--mode` is repeatable and takes comma-separated lists: known-answer and must-reject in one run, nothing
    else (docs/conformance.md, "The checks")."""
    out = tmp_path / "r.json"
    status = main(["conform", *given, "--algorithm", "001-alg8", "--no-progress", "--json", str(out), "--",
                   *fake("none")])
    assert status == 0
    modes = {o["mode"] for o in json.loads(out.read_text())["outcomes"]}
    assert modes == {"known-answer", "must-reject"}


def test_an_answer_nested_too_deeply_is_a_protocol_error_not_a_harness_crash(tmp_path: Path) -> None:
    """Python's parser raises RecursionError (not ValueError) on `[` x 100000: the harness reports bad JSON."""
    program = tmp_path / "deep.py"
    program.write_text('import sys\nfor line in sys.stdin:\n    print("[" * 100000, flush=True)\n', encoding="utf-8")
    report = conform(ConformConfig(command=(sys.executable, str(program)), modes=frozenset({Mode.KNOWN_ANSWER})))
    assert report.exit_status == 3
    assert any(o.verdict is Verdict.PROTOCOL_ERROR and "not JSON" in o.message for o in report.outcomes)


ECHO_RUNS = """import json, sys
for i, line in enumerate(sys.stdin):
    m = json.loads(line)
    reply = {SHAPE}
    sys.stdout.write(json.dumps(reply) + "\\n")
    if i % 7 == 0:
        sys.stdout.flush()
sys.stdout.flush()
"""


def test_own_mode_runs_come_back_in_order_through_the_batched_writer_and_block_reader(tmp_path: Path) -> None:
    """run_many writes WRITE_BATCH messages per write and the reader hands over blocks of lines: every reply comes
    back, in order, for counts that are not multiples of the batch and windows smaller than it."""
    from dpstream.conformance.wire import Program

    program = tmp_path / "count.py"
    program.write_text(ECHO_RUNS.replace("{SHAPE}", '{"releases": [i, len(m["inputs"])]}'), encoding="utf-8")
    for count, window in ((1, 256), (1000, 256), (77, 3), (500, 64)):
        with Program([sys.executable, str(program)]) as p:
            values = [r.value for r in p.run_many([1, 2, 3], count, window=window)]
        assert values == [[i, 3] for i in range(count)]


CHUNKED = """import json, sys
for line in sys.stdin:
    n = json.loads(line)["n"]
    text = json.dumps({"x": "a" * n}) + "\\n" + json.dumps({"x": "b"}) + "\\n" + json.dumps({"x": "c" * n})
    for i in range(0, len(text), 4093):  # in pieces that split lines anywhere, each flushed
        sys.stdout.write(text[i:i + 4093])
        sys.stdout.flush()
    sys.stdout.write("\\n")
    sys.stdout.flush()
"""


def test_long_lines_in_many_pieces_come_back_whole_and_in_order(tmp_path: Path) -> None:
    """The reader joins a line's pieces once, when it ends (wire.READ_SIZE): lines of several MB written in flushed
    pieces of 4093 bytes, a short line between them, come back whole, in order, twice over."""
    from dpstream.conformance.wire import Program

    program = tmp_path / "chunked.py"
    program.write_text(CHUNKED, encoding="utf-8")
    with Program([sys.executable, str(program)], timeout=30) as p:
        for n in (3_000_000, 10):
            p.send({"n": n})
            assert [p.receive()["x"] for _ in range(3)] == ["a" * n, "b", "c" * n]


@pytest.mark.parametrize("shape", ['{"releases": 5}', '{"releases": [1], "draws": "x"}', '{"runs": [1, 2]}'])
def test_a_malformed_run_reply_is_still_a_bad_reply_after_the_fast_path(tmp_path: Path, shape: str) -> None:
    from dpstream.conformance.wire import Program, ProtocolError

    program = tmp_path / "bad.py"
    program.write_text(ECHO_RUNS.replace("{SHAPE}", shape), encoding="utf-8")
    with Program([sys.executable, str(program)]) as p, pytest.raises(ProtocolError, match="bad-reply"):
        if shape.startswith('{"runs"'):
            p.runs([1], 2)
        else:
            list(p.run_many([1], 2))


def test_a_killed_programs_reader_never_takes_the_next_programs_answers() -> None:
    """A program broken by a bad line is killed and the next check starts a new one; the old reader thread must not
    read from a descriptor the new program's pipe reuses (it did once, and the next `init` waited its whole
    patience: 60 s). Eight runs in a row, each a protocol error within seconds."""
    program = Path(__file__).resolve().parent / "fake_program.py"
    for _ in range(8):
        started = time.perf_counter()
        report = conform(ConformConfig(command=(sys.executable, str(program), "garbage"), algorithms=("001-alg8",),
                                       modes=frozenset({Mode.KNOWN_ANSWER})))
        assert report.exit_status == 3 and time.perf_counter() - started < 20.0
