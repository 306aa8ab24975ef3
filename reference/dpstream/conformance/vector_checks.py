"""Known-answer and must-reject checks of a program, from the shipped corpus.

* known-answer: ``init`` in tape mode with the vector's parameters, every input stepped, every draw
  answered from the tape; the outcome names the first divergence (step, site, expected vs got, the
  tolerance) and lists the missing and unexpected draw sites.
* must-reject: the invalid parameters (or the invalid input after valid ones) must be answered
  with an error, and the program must stay usable: after a rejected step the valid inputs that
  follow must give the releases of a run that never saw the bad input; after a rejected init the
  vector named by ``then`` must pass. Programs without tape mode are checked in own mode (an error,
  then releases of the right shape).

A :class:`~dpstream.conformance.wire.ProtocolError` ends the check with ``protocol-error`` (the
caller restarts the program for the next one).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from dpstream.catalog import entry
from dpstream.catalog.codecs import Tolerance, compare
from dpstream.conformance.outcome import Mode, Outcome, Verdict
from dpstream.conformance.tape_mode import TapeAnswerer
from dpstream.conformance.wire import Program, ProtocolError
from dpstream.vectors.format import KnownAnswerVector, MustRejectVector

__all__ = ["check_known_answer", "check_must_reject", "protocol_outcome"]

MAX_LISTED = 10


def protocol_outcome(mode: Mode, algorithm: str, name: str, error: ProtocolError, started: float) -> Outcome:
    return Outcome(mode, algorithm, name, Verdict.PROTOCOL_ERROR, message=str(error),
                   details={"kind": error.kind, "stderr_tail": error.stderr[-2000:]},
                   seconds=time.perf_counter() - started)


def _stream(program: Program, inputs: Sequence[Any], expected: Sequence[Any], tolerance: Tolerance,
            answerer: TapeAnswerer | None, first_step: int = 1) -> tuple[str | None, dict[str, Any] | None]:
    """Step through ``inputs``; (a refusal message, the first release divergence) — both None when all match."""
    first: dict[str, Any] | None = None
    for t, (x, want) in enumerate(zip(inputs, expected, strict=True), start=first_step):
        if answerer is not None:
            answerer.begin_step(t)
        reply = program.step(x, answerer.answer if answerer is not None else None)
        if reply.kind == "error":
            return f"step {t}: a valid input {x!r} was refused: {reply.value}", first
        if answerer is None:
            continue
        diff = compare(want, reply.value, tolerance)
        if diff is not None and first is None:
            first = {"step": t, "difference": diff, "expected": want, "got": reply.value,
                     "tolerance": tolerance.to_json()}
    return None, first


def _draw_report(answerer: TapeAnswerer) -> dict[str, Any]:
    issues = answerer.issues
    return {
        "draw_issues": [i.to_json() for i in issues[:MAX_LISTED]],
        "draw_issue_count": len(issues),
        "missing_sites": answerer.missing()[:MAX_LISTED],
        "missing_site_count": len(answerer.missing()),
        "unexpected_sites": [i.site for i in issues if i.what == "unexpected-site"][:MAX_LISTED],
    }


def _summary(refusal: str | None, first: Mapping[str, Any] | None, draws: Mapping[str, Any],
             answerer: TapeAnswerer) -> str:
    parts = []
    if refusal:
        parts.append(refusal)
    issues = answerer.issues
    if issues:
        parts.append(f"first draw divergence: {issues[0].describe()}")
    if first is not None:
        parts.append(f"first release divergence at step {first['step']}: {first['difference']}")
    if draws["missing_site_count"]:
        parts.append(f"{draws['missing_site_count']} tape site(s) never requested, e.g. {draws['missing_sites'][0]!r}")
    return "; ".join(parts)


def check_known_answer(program: Program, vector: KnownAnswerVector) -> Outcome:
    started = time.perf_counter()
    mode, alg = Mode.KNOWN_ANSWER, vector.algorithm
    try:
        refused = program.init(alg, vector.params, "tape", 0)
        if refused is not None:
            return Outcome(mode, alg, vector.id, Verdict.DEVIATION, message=f"valid parameters refused: {refused}",
                           details={"params": vector.params}, seconds=time.perf_counter() - started)
        answerer = TapeAnswerer(vector.tape)
        refusal, first = _stream(program, vector.inputs, vector.expected, vector.tolerance, answerer)
    except ProtocolError as exc:
        return protocol_outcome(mode, alg, vector.id, exc, started)
    draws = _draw_report(answerer)
    message = _summary(refusal, first, draws, answerer)
    verdict = Verdict.DEVIATION if message else Verdict.PASS
    details: dict[str, Any] = {"steps": len(vector.inputs), "edges": list(vector.edges), **draws}
    if first is not None:
        details["first_divergence"] = {**first, "vector": vector.id,
                                       "site": answerer.issues[0].site if answerer.issues else None}
    if refusal:
        details["refusal"] = refusal
    return Outcome(mode, alg, vector.id, verdict, message=message or f"{len(vector.inputs)} releases match",
                   details=details, seconds=time.perf_counter() - started)


def check_must_reject(program: Program, vector: MustRejectVector, tape_mode: bool,
                      then: Callable[[str], KnownAnswerVector | None]) -> Outcome:
    started = time.perf_counter()
    mode, alg = Mode.MUST_REJECT, vector.algorithm
    try:
        if vector.at == "init":
            return _init_rejection(program, vector, tape_mode, then, started)
        return _step_rejection(program, vector, tape_mode, started)
    except ProtocolError as exc:
        return protocol_outcome(mode, alg, vector.id, exc, started)


def _init_rejection(program: Program, vector: MustRejectVector, tape_mode: bool,
                    then: Callable[[str], KnownAnswerVector | None], started: float) -> Outcome:
    mode, alg = Mode.MUST_REJECT, vector.algorithm
    refused = program.init(alg, vector.params, "tape" if tape_mode else "own", 0)
    if refused is None:
        return Outcome(mode, alg, vector.id, Verdict.DEVIATION,
                       message=f"invalid parameters accepted ({vector.reason}): {vector.params}",
                       details={"params": vector.params, "reason": vector.reason},
                       seconds=time.perf_counter() - started)
    follow = then(vector.then)
    if follow is None:
        return Outcome(mode, alg, vector.id, Verdict.PASS, message=f"refused: {refused}",
                       seconds=time.perf_counter() - started)
    usable = (check_known_answer(program, follow) if tape_mode else _own_usable(program, follow))
    if usable.conformance is not Verdict.PASS:
        return Outcome(mode, alg, vector.id, usable.verdict,
                       message=f"refused, but not usable afterwards: {usable.message}",
                       details={"refusal": refused, "afterwards": usable.to_json()},
                       seconds=time.perf_counter() - started)
    return Outcome(mode, alg, vector.id, Verdict.PASS, message=f"refused ({refused}) and usable afterwards",
                   details={"refusal": refused}, seconds=time.perf_counter() - started)


def _own_usable(program: Program, vector: KnownAnswerVector) -> Outcome:
    """Own mode: a valid init and steps must give releases of the right JSON shape."""
    started = time.perf_counter()
    refused = program.init(vector.algorithm, vector.params, "own", 0)
    if refused is not None:
        return Outcome(Mode.MUST_REJECT, vector.algorithm, vector.id, Verdict.DEVIATION,
                       message=f"valid parameters refused: {refused}", seconds=time.perf_counter() - started)
    return _own_steps(program, vector.algorithm, vector.id, vector.inputs, vector.expected, started)


def _own_steps(program: Program, alg: str, name: str, inputs: Sequence[Any], expected: Sequence[Any],
               started: float) -> Outcome:
    codec = entry(alg).codec
    for t, (x, want) in enumerate(zip(inputs, expected, strict=True), start=1):
        reply = program.step(x, None)
        if reply.kind == "error":
            return Outcome(Mode.MUST_REJECT, alg, name, Verdict.DEVIATION,
                           message=f"step {t}: a valid input {x!r} was refused: {reply.value}",
                           seconds=time.perf_counter() - started)
        if codec is not None and len(codec.features(reply.value)) != len(codec.features(want)):
            return Outcome(Mode.MUST_REJECT, alg, name, Verdict.DEVIATION,
                           message=f"step {t}: release of the wrong shape {reply.value!r}",
                           seconds=time.perf_counter() - started)
    return Outcome(Mode.MUST_REJECT, alg, name, Verdict.PASS, seconds=time.perf_counter() - started)


def _step_rejection(program: Program, vector: MustRejectVector, tape_mode: bool, started: float) -> Outcome:
    mode, alg = Mode.MUST_REJECT, vector.algorithm
    refused = program.init(alg, vector.params, "tape" if tape_mode else "own", 0)
    if refused is not None:
        return Outcome(mode, alg, vector.id, Verdict.DEVIATION, message=f"valid parameters refused: {refused}",
                       seconds=time.perf_counter() - started)
    n_before = len(vector.before)
    if not tape_mode:
        return _own_step_rejection(program, vector, started)
    assert vector.tape is not None
    answerer = TapeAnswerer(vector.tape)
    refusal, first = _stream(program, vector.before, vector.expected[:n_before], vector.tolerance, answerer)
    if refusal is None:
        answerer.begin_step(n_before + 1)
        reply = program.step(vector.bad_input, answerer.answer)
        if reply.kind != "error":
            return Outcome(mode, alg, vector.id, Verdict.DEVIATION,
                           message=f"invalid input {vector.bad_input!r} accepted ({vector.reason}): "
                                   f"released {reply.value!r}",
                           details={"bad_input": vector.bad_input, "reason": vector.reason},
                           seconds=time.perf_counter() - started)
        answerer.forget_step()
        refusal, first_after = _stream(program, vector.after, vector.expected[n_before:], vector.tolerance, answerer,
                                       first_step=n_before + 1)
        first = first or first_after
    draws = _draw_report(answerer)
    message = _summary(refusal, first, draws, answerer)
    if message:
        return Outcome(mode, alg, vector.id, Verdict.DEVIATION, message=f"refused, but then {message}",
                       details={**draws, "first_divergence": first}, seconds=time.perf_counter() - started)
    return Outcome(mode, alg, vector.id, Verdict.PASS,
                   message=f"refused {vector.bad_input!r}; the run went on as if it had not been sent",
                   seconds=time.perf_counter() - started)


def _own_step_rejection(program: Program, vector: MustRejectVector, started: float) -> Outcome:
    mode, alg = Mode.MUST_REJECT, vector.algorithm
    n_before = len(vector.before)
    before = _own_steps(program, alg, vector.id, vector.before, vector.expected[:n_before], started)
    if before.conformance is not Verdict.PASS:
        return before
    reply = program.step(vector.bad_input, None)
    if reply.kind != "error":
        return Outcome(mode, alg, vector.id, Verdict.DEVIATION,
                       message=f"invalid input {vector.bad_input!r} accepted ({vector.reason})",
                       seconds=time.perf_counter() - started)
    return _own_steps(program, alg, vector.id, vector.after, vector.expected[n_before:], started)

