"""Ctrl-C and SIGTERM stop every long command quickly and cleanly.

Each test starts ``dpstream ...`` in a new session (its own process group, as a shell starts a job), waits until
it is working, sends the signal to the whole group as a terminal does (workers and child programs receive it too),
and checks: exit status 130 (143 for SIGTERM) within 5 s, one line saying so and no traceback, no process of the
group left running, no staging folder left, and what was finished kept (``audit`` and ``conform`` write their
reports marked partial). The experiments read generated data or the samples of ``tests/data``. Deterministic
except for timing: every wait has a generous deadline; the 5 s limit is the issue's.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from dpstream.cli_args import STAGING_PREFIX

REPO_TESTS = Path(__file__).resolve().parents[1]
FAKE = REPO_TESTS / "conformance" / "fake_program.py"
DPSTREAM = [sys.executable, "-m", "dpstream.cli"]
LIMIT = 5.0
"""Seconds from the signal to the exit (the issue's limit)."""


def group_members(pgid: int) -> list[tuple[int, str]]:
    """(pid, state) of every process of the process group (read from /proc)."""
    members = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid:
            members.append((int(entry.name), fields[0]))
    return members


def running(pgid: int) -> list[int]:
    return [pid for pid, state in group_members(pgid) if state not in ("Z", "X")]


@dataclass
class Stopped:
    status: int
    stdout: str
    stderr: str
    seconds: float
    left: list[int] = field(default_factory=list)


def _reader(stream: object, lines: list[str], seen: threading.Event, ready: str) -> None:
    for raw in stream:  # type: ignore[attr-defined]
        line = raw.decode("utf-8", "replace")
        lines.append(line)
        if ready and ready in line:
            seen.set()


def interrupt(argv: list[str], *, ready: str = "", members: int = 0, delay: float = 1.0, sig: int = signal.SIGINT,
              cwd: Path | None = None, env: dict[str, str] | None = None) -> Stopped:
    """Run ``dpstream ARGV``; once ``ready`` appeared on stderr (and the group has ``members`` processes), wait
    ``delay`` s, signal the group, and collect what happened."""
    process = subprocess.Popen([*DPSTREAM, *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               start_new_session=True, cwd=cwd, env={**os.environ, "CI": "1", **(env or {})})
    out: list[str] = []
    err: list[str] = []
    seen = threading.Event()
    readers = [threading.Thread(target=_reader, args=(process.stdout, out, threading.Event(), "")),
               threading.Thread(target=_reader, args=(process.stderr, err, seen, ready))]
    for reader in readers:
        reader.start()
    try:
        deadline = time.monotonic() + 120
        if ready:
            assert seen.wait(120), "".join(err)
        while len(running(process.pid)) < members and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.05)
        time.sleep(delay)
        assert process.poll() is None, "the command ended before the signal: " + "".join(err)
        sent = time.monotonic()
        os.killpg(process.pid, sig)
        status = process.wait(timeout=60)
        seconds = time.monotonic() - sent
        for reader in readers:
            reader.join(timeout=10)
        left = running(process.pid)
        for _ in range(60):  # a process that exited with the command may take a moment to vanish from /proc
            if not left:
                break
            time.sleep(0.05)
            left = running(process.pid)
        return Stopped(status, "".join(out), "".join(err), seconds, left)
    finally:
        if running(process.pid):
            os.killpg(process.pid, signal.SIGKILL)


def assert_stopped(stopped: Stopped, command: str, sig: int = signal.SIGINT) -> str:
    """The common checks; returns the one line the command printed about it."""
    word, status = ("terminated", 143) if sig == signal.SIGTERM else ("interrupted", 130)
    assert stopped.status == status, stopped.stderr
    assert stopped.seconds < LIMIT, stopped.seconds
    assert "Traceback" not in stopped.stderr and "Traceback" not in stopped.stdout, stopped.stderr
    lines = stopped.stderr.strip().splitlines()
    assert lines[-1].startswith(f"dpstream {command}: {word}"), stopped.stderr
    assert sum(word in line for line in lines) == 1, stopped.stderr
    assert not stopped.left, f"left running: {stopped.left}"
    return lines[-1]


def no_staging(folder: Path) -> bool:
    return not any(p.name.startswith(STAGING_PREFIX) for p in folder.rglob("*"))


# ----------------------------------------------------------------------------------------------------------- audit
@pytest.mark.slow  # a second process-level interrupt test; conform's stays in the default run
def test_audit_stops_its_workers_and_keeps_the_finished_cases(tmp_path: Path) -> None:
    out = tmp_path / "report"
    stopped = interrupt(["audit", "--jobs", "2", "--no-plots", "--out", str(out)], ready="case(s)", members=3,
                        delay=1.5)
    line = assert_stopped(stopped, "audit")
    assert "cases finished" in line and "partial report" in line
    doc = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert doc["partial"] is True and doc["cases_selected"] == 42 and len(doc["components"]) < 42
    assert "PARTIAL" in (out / "report.md").read_text(encoding="utf-8")


@pytest.mark.slow
def test_audit_on_sigterm(tmp_path: Path) -> None:
    out = tmp_path / "report"
    stopped = interrupt(["audit", "--jobs", "2", "--no-plots", "--out", str(out)], ready="case(s)", members=3,
                        delay=1.5, sig=signal.SIGTERM)
    assert_stopped(stopped, "audit", signal.SIGTERM)
    assert json.loads((out / "report.json").read_text(encoding="utf-8"))["partial"] is True


# --------------------------------------------------------------------------------------------------------- conform
def test_conform_kills_the_program_and_writes_a_partial_report(tmp_path: Path) -> None:
    report = tmp_path / "r.json"
    stopped = interrupt(["conform", "--json", str(report), "--", sys.executable, str(FAKE), "slow"], members=2,
                        delay=1.5)
    line = assert_stopped(stopped, "conform")
    assert "checks done" in line and str(report) in line
    doc = json.loads(report.read_text(encoding="utf-8"))
    assert doc["partial"] is True and doc["checks_done"] < doc["checks_planned"]
    assert "PARTIAL: interrupted after" in stopped.stdout  # the table of the checks done


@pytest.mark.slow
def test_serve_waiting_for_input() -> None:
    process = subprocess.Popen([*DPSTREAM, "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, start_new_session=True)
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(b'{"op":"hello"}\n')
    process.stdin.flush()
    assert process.stdout.readline().startswith(b'{"protocol"')  # it is up, now waiting for the next line
    sent = time.monotonic()
    os.killpg(process.pid, signal.SIGINT)
    _, err = process.communicate(timeout=30)
    stopped = Stopped(process.returncode, "", err.decode(), time.monotonic() - sent, running(process.pid))
    assert_stopped(stopped, "serve")


@pytest.mark.slow
def test_conform_in_statistical_mode_stops_its_workers_and_their_programs(tmp_path: Path) -> None:
    stopped = interrupt(["conform", "--mode", "statistical", "--jobs", "2", "--algorithm", "001-alg8", "--",
                         *DPSTREAM, "serve"], members=6, delay=1.0)
    assert_stopped(stopped, "conform")


@pytest.mark.slow
def test_conform_kills_a_program_that_ignores_the_signals(tmp_path: Path) -> None:
    stopped = interrupt(["conform", "--mode", "known-answer", "--", sys.executable, str(FAKE), "ignore-signals"],
                        members=2, delay=1.0, sig=signal.SIGTERM)
    assert_stopped(stopped, "conform", signal.SIGTERM)


# ------------------------------------------------------------------------------------------------------- reproduce
BUN = ["reproduce", "bun-simulated", "--n", "2000", "--reps", "100000"]


@pytest.mark.slow
def test_reproduce_leaves_no_output_and_keeps_an_earlier_result(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "summary.json").write_text("an earlier complete result", encoding="utf-8")
    stopped = interrupt([*BUN, "--out", str(out)], ready="bun-simulated: ", delay=0.5)
    assert_stopped(stopped, "reproduce bun-simulated")
    assert "holds an earlier result" in stopped.stderr  # it wrote (would have written) beside it
    assert (out / "summary.json").read_text(encoding="utf-8") == "an earlier complete result"
    assert sorted(p.name for p in out.iterdir()) == ["summary.json"]
    beside = tmp_path / "out-2"
    assert not beside.exists() or (not any(beside.iterdir()))


@pytest.mark.slow  # a third process-level interrupt test
def test_sigterm_leaves_no_staging_folder(tmp_path: Path) -> None:
    out = tmp_path / "out"
    stopped = interrupt([*BUN, "--out", str(out)], ready="bun-simulated: ", delay=0.5, sig=signal.SIGTERM)
    assert_stopped(stopped, "reproduce bun-simulated", signal.SIGTERM)
    assert no_staging(tmp_path) and not any(out.iterdir())


def tabular_sample_dir(root: Path) -> Path:
    """A --data-dir holding the 300-row Adult sample of tests/data (with its SHA256SUMS, as the shipped data)."""
    folder = root / "adult_liu2021"
    folder.mkdir(parents=True)
    sums = []
    for name, source in (("adult.csv", "adult_liu2021_sample.csv"),
                         ("adult-domain.json", "adult_liu2021_sample-domain.json")):
        data = (REPO_TESTS / "data" / "tabular" / source).read_bytes()
        (folder / name).write_bytes(data)
        sums.append(f"{hashlib.sha256(data).hexdigest()}  {name}")
    (folder / "SHA256SUMS").write_text("\n".join(sums) + "\n", encoding="utf-8")
    return root


EXPERIMENTS = {
    "phdstream-circles": (["--source", "generated"], "phdstream-circles: "),
    "hypercube-rate": (["--full"], "hypercube-rate: online runs"),
    "tabular-adult": (["--data-dir", "{sample}", "--horizon", "100000"], "tabular-adult: "),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(EXPERIMENTS))
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_every_experiment_stops_cleanly(name: str, sig: int, tmp_path: Path) -> None:
    options, ready = EXPERIMENTS[name]
    sample = str(tabular_sample_dir(tmp_path / "data"))
    out = tmp_path / "out"
    stopped = interrupt(["reproduce", name, *[o.format(sample=sample) for o in options], "--out", str(out)],
                        ready=ready, delay=1.0, sig=sig, cwd=REPO_TESTS.parent)
    assert_stopped(stopped, f"reproduce {name}", sig)
    assert no_staging(tmp_path) and not any(out.iterdir())


@pytest.mark.slow
def test_the_checks_catch_a_command_that_ignores_the_interrupt(tmp_path: Path) -> None:
    """The helper is shown failing: the fake program ignoring SIGINT, run directly, does not stop."""
    process = subprocess.Popen([sys.executable, str(FAKE), "ignore-signals"], stdin=subprocess.PIPE,
                               stdout=subprocess.DEVNULL, start_new_session=True)
    try:
        time.sleep(0.5)
        os.killpg(process.pid, signal.SIGINT)
        with pytest.raises(subprocess.TimeoutExpired):
            process.wait(timeout=1.0)
        assert running(process.pid) == [process.pid]
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    assert not running(process.pid)

