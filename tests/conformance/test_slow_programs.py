"""A slow answer is not a broken protocol, and a program that timed out never poisons the next check.

The program under test is the reference with some answers held back (tests/conformance/slow_program.py): late but
correct, or held beyond any patience (as good as hung). Deterministic (the delays are far from the timeouts they
are compared with; no statistical test).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from dpstream.conformance.outcome import Mode, Verdict
from dpstream.conformance.runner import ConformConfig, conform
from dpstream.conformance.statistical import ProtocolSampler
from dpstream.conformance.wire import PATIENCE, Program, ProtocolError

HERE = Path(__file__).resolve().parent
SLOW = [sys.executable, str(HERE / "slow_program.py")]


def test_a_late_answer_within_the_patience_is_no_protocol_error() -> None:
    """The answer to the 3rd step comes 1.5 s late with a 0.5 s timeout: within the patience (0.5 s + 5 x 0.5 s),
    so the run conforms and the late answer is counted, not reported as a timeout."""
    with Program([*SLOW, "1.5", "step", "3"], timeout=0.5) as program:
        program.hello()
        assert program.init("001-alg8", {"epsilon": 1.0, "T": 4}, "own", 0) is None
        releases = [program.step(1, None).kind for _ in range(4)]
        assert releases == ["release"] * 4 and any(1.4 < late < 3.0 for late in program.late)  # (the start-up of
        # Python and dpstream, answering hello, may be late too on a busy machine)
    config = ConformConfig(command=(*SLOW, "1.5", "step", "3"), modes=frozenset({Mode.KNOWN_ANSWER}),
                           algorithms=("001-alg8",), timeout=0.5)
    report = conform(config)
    assert report.exit_status == 0, [o.message for o in report.outcomes if o.verdict is not Verdict.PASS]


def test_a_timed_out_program_is_killed_and_never_read_again() -> None:
    """The 2nd init is held for 60 s, far beyond 0.3 s x (1 + patience): a timeout, and the program is killed at
    once, so its late answer cannot be read as the answer to a later request."""
    program = Program([*SLOW, "60", "init", "2"], timeout=10.0).start()
    program.hello()  # a generous timeout for the start (a loaded machine: 1.8 s was once too short under xdist)
    assert program.init("001-alg8", {"epsilon": 1.0}, "own", 0) is None
    program.timeout = 0.3
    started = time.monotonic()
    try:
        program.init("001-alg8", {"epsilon": 1.0}, "own", 0)
    except ProtocolError as exc:
        assert exc.kind == "timeout" and "then 5 times as long again" in str(exc)
    else:
        raise AssertionError("a held answer must time out")
    assert time.monotonic() - started < 0.3 * (1 + PATIENCE) + 2.0
    assert not program.alive


def test_a_timeout_in_one_statistical_sample_does_not_poison_the_next(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """The issue's run: one `runs` reply of an entry came after the timeout, the same live program was reused and
    its late reply read as the next answer, so every later algorithm got a protocol error. Now the sampler's program
    is killed with the timeout and the next sample (another algorithm) starts a fresh copy and gets its own answer."""
    monkeypatch.setenv("SLOW_ONCE", str(tmp_path / "held"))  # only the first copy holds its answer
    command = (*SLOW, "3", "runs", "1")  # late by 3 s: after 0.3 s x (1 + patience), before the next answer
    first = ProtocolSampler(command, "001-alg8", {"epsilon": 1.0, "T": 4}, timeout=0.3, bulk=True)
    try:
        first.sample([0, 1, 0, 1], 50, seed=1)
    except ProtocolError as exc:
        assert exc.kind == "timeout"
    else:
        raise AssertionError("the held `runs` reply must time out")
    second = ProtocolSampler(command, "001-alg10", {"epsilon": 1.0, "T": 4}, timeout=0.3, bulk=True)
    second = ProtocolSampler(command, "001-alg10", {"epsilon": 1.0, "T": 4}, timeout=0.3, bulk=True)
    assert second.sample([0, 1, 0, 1], 50, seed=2).shape == (50, 4)


@pytest.mark.slow  # the same kill-and-restart as the test above, through a whole conform run
def test_the_conform_run_after_a_timeout_reports_only_that_check(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Known-answer mode on two algorithms, the first vector's first step held beyond the patience: that check is a
    timeout, the rest of that algorithm is not run (the breaker), and the other algorithm passes every vector."""
    monkeypatch.setenv("SLOW_ONCE", str(tmp_path / "held"))
    config = ConformConfig(command=(*SLOW, "60", "step", "1"), modes=frozenset({Mode.KNOWN_ANSWER}),
                           algorithms=("001-alg8", "001-alg9"), timeout=0.3)
    report = conform(config)
    by_alg: dict[str, list[Verdict]] = {}
    for o in report.outcomes:
        by_alg.setdefault(o.algorithm, []).append(o.verdict)
    timeouts = [o for o in report.outcomes if o.details.get("kind") == "timeout"]
    assert len(timeouts) == 1 and timeouts[0].algorithm in ("001-alg8", "001-alg9")
    other = "001-alg9" if timeouts[0].algorithm == "001-alg8" else "001-alg8"
    assert by_alg[other] and all(v is Verdict.PASS for v in by_alg[other])
    assert not [o for o in report.outcomes if o.details.get("kind") == "bad-reply"]
