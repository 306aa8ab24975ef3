"""Known-answer and must-reject checks of a program, from the shipped corpus.

* known-answer: ``init`` in tape mode with the vector's parameters, every input stepped, every draw
  answered from the tape; the outcome names the first divergence (step, site, expected vs got, the
  tolerance) and lists the missing and unexpected draw sites.
* must-reject: the invalid parameters (or the invalid input after valid ones) must be answered
  with an error, and the program must stay usable: after a rejected step the valid inputs that
  follow must give the releases of a run that never saw the bad input; after a rejected init the
  replay of the vector named by ``then`` must be the program's replay of it without a refusal (the
  same :class:`Replay`). Whether that replay matches the vector is the known-answer check's verdict,
  reported once by that check, never by the must-reject cases that replay it. Programs without tape
  mode are checked in own mode (an error, then releases of the right shape).

A :class:`~dpstream.conformance.wire.ProtocolError` ends the check with ``protocol-error`` (the
caller restarts the program for the next one).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, MutableMapping, Sequence
from dataclasses import dataclass
from typing import Any

from dpstream.catalog import entry
from dpstream.catalog.codecs import Tolerance, compare
from dpstream.conformance.outcome import Mode, Outcome, Verdict
from dpstream.conformance.tape_mode import TapeAnswerer
from dpstream.conformance.wire import Program, ProtocolError
from dpstream.vectors.format import KnownAnswerVector, MustRejectVector

__all__ = ["Replay", "Replays", "check_known_answer", "check_must_reject", "protocol_outcome"]

MAX_LISTED = 10


@dataclass(frozen=True)
class Replay:
    """What a program did with one known-answer vector in tape mode, to compare two runs of it: whether it
    accepted the parameters, its releases, the step whose valid input it refused (if any), and its draw issues
    and missing sites (canonical JSON, sorted: the order of draws is free)."""

    accepted: bool
    releases: tuple[Any, ...] = ()
    refused_at: int | None = None
    draws: tuple[str, ...] = ()

    def difference(self, other: Replay, tolerance: Tolerance) -> str | None:
        """``None`` when ``other`` did the same as this replay, else the first difference."""
        if self.accepted != other.accepted:
            return f"the parameters were {'refused' if self.accepted else 'accepted'}"
        if self.refused_at != other.refused_at:
            at = ["none" if t is None else f"step {t}" for t in (other.refused_at, self.refused_at)]
            return f"a valid input refused at {at[0]} (without the refusal: {at[1]})"
        diff = compare(list(self.releases), list(other.releases), tolerance, "releases")
        if diff is not None:
            return diff
        if self.draws != other.draws:
            new, gone = sorted(set(other.draws) - set(self.draws)), sorted(set(self.draws) - set(other.draws))
            example = f"now {new[0]}" if new else f"no longer {gone[0]}" if gone else "the same notes, other counts"
            return f"the draw requests differ ({len(other.draws)} noted against {len(self.draws)}; {example})"[:500]
        return None


Replays = MutableMapping[str, Replay | None]
"""The replay of each known-answer vector without a refusal, by vector id, shared by the checks of one run
(``None``: that replay broke the protocol, reported by its own check)."""


def protocol_outcome(mode: Mode, algorithm: str, name: str, error: ProtocolError, started: float) -> Outcome:
    return Outcome(mode, algorithm, name, Verdict.PROTOCOL_ERROR, message=str(error),
                   details={"kind": error.kind, "stderr_tail": error.stderr[-2000:]},
                   seconds=time.perf_counter() - started)


def _stream(program: Program, inputs: Sequence[Any], expected: Sequence[Any], tolerance: Tolerance,
            answerer: TapeAnswerer, first_step: int = 1,
            releases: list[Any] | None = None) -> tuple[str | None, dict[str, Any] | None]:
    """Step through ``inputs`` (appending the releases to ``releases``); (a refusal message, the first release
    divergence) — both None when all match."""
    first: dict[str, Any] | None = None
    for t, (x, want) in enumerate(zip(inputs, expected, strict=True), start=first_step):
        answerer.begin_step(t)
        reply = program.step(x, answerer.answer)
        if reply.kind == "error":
            return f"step {t}: a valid input {x!r} was refused: {reply.value}", first
        if releases is not None:
            releases.append(reply.value)
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


def check_known_answer(program: Program, vector: KnownAnswerVector, replays: Replays | None = None) -> Outcome:
    """The known-answer check of ``vector``; its :class:`Replay` goes into ``replays`` (for the must-reject
    cases that replay the vector after a refusal)."""
    started = time.perf_counter()
    try:
        replay, outcome = _known_answer(program, vector, started)
    except ProtocolError as exc:
        replay, outcome = None, protocol_outcome(Mode.KNOWN_ANSWER, vector.algorithm, vector.id, exc, started)
    if replays is not None:
        replays[vector.id] = replay
    return outcome


def _known_answer(program: Program, vector: KnownAnswerVector, started: float) -> tuple[Replay, Outcome]:
    mode, alg = Mode.KNOWN_ANSWER, vector.algorithm
    refused = program.init(alg, vector.params, "tape", 0)
    if refused is not None:
        return Replay(accepted=False), Outcome(
            mode, alg, vector.id, Verdict.DEVIATION, message=f"valid parameters refused: {refused}",
            details={"params": vector.params}, seconds=time.perf_counter() - started)
    answerer = TapeAnswerer(vector.tape, vector.draw_tolerance)
    releases: list[Any] = []
    refusal, first = _stream(program, vector.inputs, vector.expected, vector.tolerance, answerer,
                             releases=releases)
    draws = _draw_report(answerer)
    noted = [i.to_json() for i in answerer.issues] + [{"what": "missing", "site": s} for s in answerer.missing()]
    replay = Replay(True, tuple(releases), len(releases) + 1 if refusal else None,
                    tuple(sorted(json.dumps(n, sort_keys=True) for n in noted)))
    message = _summary(refusal, first, draws, answerer)
    verdict = Verdict.DEVIATION if message else Verdict.PASS
    details: dict[str, Any] = {"steps": len(vector.inputs), "edges": list(vector.edges), **draws}
    if first is not None:
        details["first_divergence"] = {**first, "vector": vector.id,
                                       "site": answerer.issues[0].site if answerer.issues else None}
    if refusal:
        details["refusal"] = refusal
    outcome = Outcome(mode, alg, vector.id, verdict, message=message or f"{len(vector.inputs)} releases match",
                      details=details, seconds=time.perf_counter() - started)
    return replay, outcome


def check_must_reject(program: Program, vector: MustRejectVector, tape_mode: bool,
                      then: Callable[[str], KnownAnswerVector | None], replays: Replays | None = None) -> Outcome:
    """The must-reject check of ``vector``. An init case in tape mode compares the replay of its ``then``
    vector after the refusal with the replay without one, taken from ``replays`` (filled by the known-answer
    checks) or, when missing, replayed here first (and added to ``replays``)."""
    started = time.perf_counter()
    mode, alg = Mode.MUST_REJECT, vector.algorithm
    try:
        if vector.at == "init":
            return _init_rejection(program, vector, tape_mode, then, {} if replays is None else replays, started)
        return _step_rejection(program, vector, tape_mode, started)
    except ProtocolError as exc:
        return protocol_outcome(mode, alg, vector.id, exc, started)


def _init_rejection(program: Program, vector: MustRejectVector, tape_mode: bool,
                    then: Callable[[str], KnownAnswerVector | None], replays: Replays, started: float) -> Outcome:
    mode, alg = Mode.MUST_REJECT, vector.algorithm
    follow = then(vector.then)
    if tape_mode and follow is not None and follow.id not in replays:  # the replay without a refusal, first
        first = check_known_answer(program, follow, replays)
        if first.verdict is Verdict.PROTOCOL_ERROR:
            return Outcome(mode, alg, vector.id, Verdict.PROTOCOL_ERROR,
                           message=f"the replay of {follow.id} (without a refusal) broke the protocol: "
                                   f"{first.message}", details=first.details, seconds=time.perf_counter() - started)
    refused = program.init(alg, vector.params, "tape" if tape_mode else "own", 0)
    if refused is None:
        return Outcome(mode, alg, vector.id, Verdict.DEVIATION,
                       message=f"invalid parameters accepted ({vector.reason}): {vector.params}",
                       details={"params": vector.params, "reason": vector.reason},
                       seconds=time.perf_counter() - started)
    if follow is None:
        return Outcome(mode, alg, vector.id, Verdict.PASS, message=f"refused: {refused}",
                       seconds=time.perf_counter() - started)
    if not tape_mode:
        usable = _own_usable(program, follow)
        if usable.conformance is not Verdict.PASS:
            return Outcome(mode, alg, vector.id, usable.verdict,
                           message=f"refused, but not usable afterwards: {usable.message}",
                           details={"refusal": refused, "afterwards": usable.to_json()},
                           seconds=time.perf_counter() - started)
        return Outcome(mode, alg, vector.id, Verdict.PASS, message=f"refused ({refused}) and usable afterwards",
                       details={"refusal": refused}, seconds=time.perf_counter() - started)
    return _replay_after_refusal(program, vector, follow, refused, replays[follow.id], started)


def _replay_after_refusal(program: Program, vector: MustRejectVector, follow: KnownAnswerVector, refused: str,
                          without: Replay | None, started: float) -> Outcome:
    """Usable after the refusal: the replay of ``follow`` is the replay without the refusal (``without``; when
    that broke the protocol, the program must at least answer a valid init)."""
    mode, alg = Mode.MUST_REJECT, vector.algorithm
    details: dict[str, Any] = {"refusal": refused, "replayed": follow.id}
    if without is None:
        program.init(follow.algorithm, follow.params, "tape", 0)
        return Outcome(mode, alg, vector.id, Verdict.PASS,
                       message=f"refused ({refused}); the program answers afterwards (its replay of {follow.id} "
                               "broke the protocol without a refusal too: reported by that known-answer check)",
                       details=details, seconds=time.perf_counter() - started)
    after, outcome = _known_answer(program, follow, started)
    diff = without.difference(after, follow.tolerance)
    if diff is not None:
        return Outcome(mode, alg, vector.id, Verdict.DEVIATION,
                       message=f"refused, but not usable afterwards: the replay of {follow.id} differs from its "
                               f"replay without the refusal: {diff}",
                       details={**details, "difference": diff, "afterwards": outcome.to_json()},
                       seconds=time.perf_counter() - started)
    note = "" if outcome.verdict is Verdict.PASS else (
        f" (its own difference from the vector is reported once, by the known-answer check of {follow.id})")
    return Outcome(mode, alg, vector.id, Verdict.PASS,
                   message=f"refused ({refused}); the replay of {follow.id} afterwards is the one without a "
                           f"refusal{note}", details=details, seconds=time.perf_counter() - started)


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
    answerer = TapeAnswerer(vector.tape, vector.draw_tolerance)
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

