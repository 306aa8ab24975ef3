"""Drive one program through the selected checks (what ``dpstream conform`` runs).

The program is started once and restarted after any check that ends in a protocol error, so one
crash costs one check, not the run. Restarts have a circuit breaker: after a timeout, or after
:data:`BREAKER` protocol errors in a row, the rest of that algorithm and mode is not run; after
:data:`BREAKER` checks in a row in which the program answered nothing at all (it crashes on every
request), no check is run any more. Checks not run are reported as protocol errors saying why, with
the tail of the program's stderr. Algorithms the program announces but the reference does not
know, modes it does not announce, and algorithms asked for with ``--algorithm`` that it does not
announce are reported as ``skipped``. The known-answer checks keep each vector's replay (``Replays``) for the
must-reject cases that replay it after a refusal; with must-reject but not known-answer mode, the vectors those
cases replay are checked (and reported) once each.
announce are reported as ``skipped``. A Ctrl-C (or SIGTERM) ends the run at once: the report holds
the checks done and the interrupt (:attr:`ConformReport.interrupted`), and the program is killed.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dpstream.catalog import entries
from dpstream.conformance.outcome import Mode, Outcome, Verdict
from dpstream.conformance.vector_checks import Replays, check_known_answer, check_must_reject, protocol_outcome
from dpstream.conformance.wire import Hello, Program, ProtocolError, kill_all
from dpstream.vectors import corpus
from dpstream.vectors.format import KnownAnswerVector, MustRejectVector

if TYPE_CHECKING:
    from dpstream.conformance.progress import Progress

__all__ = ["BREAKER", "ConformConfig", "ConformReport", "Task", "conform", "plan"]

BREAKER = 3
"""Protocol errors in a row after which the harness stops restarting the program (see the module docstring)."""


@dataclass(frozen=True)
class ConformConfig:
    command: Sequence[str]
    modes: frozenset[Mode] = frozenset(Mode)
    profile: str = "quick"
    algorithms: tuple[str, ...] = ()
    timeout: float = 10.0
    seed: int = 0
    jobs: int = 1
    scheduler: str | None = None
    corpus_root: Path | None = None
    power_table: Path | None = None
    """The power table that backs ``pass`` verdicts (default: the shipped one; dpstream.conformance.power)."""
    cases: int | None = None
    """Differential mode: at most this many fresh cases per algorithm (None: the time budget decides;
    docs/conformance.md, "Differential checks")."""
    differential_seconds: float = 60.0
    """Differential mode: seconds per algorithm, shrinking included."""
    differential_out: Path = Path("dpstream-differential")
    """Differential mode: the folder the shrunk cases are written to."""


@dataclass
class ConformReport:
    config: ConformConfig
    hello: Hello | None
    outcomes: list[Outcome] = field(default_factory=list)
    seconds: float = 0.0
    stderr_tail: str = ""
    planned: int = 0
    """Checks planned (run, skipped or not run); fewer are in :attr:`outcomes` when the run was interrupted."""
    interrupted: KeyboardInterrupt | None = None
    """The Ctrl-C or SIGTERM that ended the run early (then the report is partial), else None."""

    @property
    def exit_status(self) -> int:
        from dpstream.conformance.outcome import exit_status

        return exit_status(self.outcomes)

    @property
    def done(self) -> int:
        return len(self.outcomes)

    @property
    def partial(self) -> bool:
        return self.interrupted is not None


@dataclass(frozen=True)
class Task:
    """One planned check: ``run(program)`` gives its outcome (``None`` for statistical tasks that start
    their own programs)."""

    mode: Mode
    algorithm: str
    name: str
    run: Callable[[Program], Outcome]


def _skipped(mode: Mode, algorithm: str, name: str, why: str) -> Outcome:
    return Outcome(mode, algorithm, name, Verdict.SKIPPED, message=why)


def plan(config: ConformConfig, hello: Hello) -> tuple[list[Task], list[Outcome]]:
    """The checks to run for this program, and the skipped ones (already decided)."""
    known = {e.anchor: e for e in entries(streaming=True)}
    announced = list(hello.algorithms)
    skipped: list[Outcome] = []
    for anchor in config.algorithms:
        if anchor not in announced:
            skipped.append(_skipped(Mode.KNOWN_ANSWER, anchor, "*", "asked for with --algorithm, not announced"))
    chosen = [a for a in announced if not config.algorithms or a in config.algorithms]
    tasks: list[Task] = []
    replays: Replays = {}  # shared by the known-answer checks and the must-reject cases that replay their vectors
    ka = {a: list(corpus.known_answer(a, config.corpus_root)) for a in chosen if a in known}
    for anchor in chosen:
        if anchor not in known:
            skipped.append(_skipped(Mode.KNOWN_ANSWER, anchor, "*", "announced, but unknown to the reference"))
            continue
        vectors = ka[anchor]
        by_id = {v.id: v for v in vectors}
        tape = "tape" in hello.modes
        rejects = list(corpus.must_reject(anchor, config.corpus_root)) if Mode.MUST_REJECT in config.modes else []
        if Mode.KNOWN_ANSWER in config.modes:
            if not tape:
                skipped.append(_skipped(Mode.KNOWN_ANSWER, anchor, "*", "the program has no tape mode"))
            checked = vectors
        else:  # the vectors the init cases replay after a refusal: checked, and reported, once each
            named = {r.then for r in rejects if r.at == "init"}
            checked = [v for v in vectors if v.id in named]
        for v in checked if tape else ():
            tasks.append(Task(Mode.KNOWN_ANSWER, anchor, v.id, partial(_known, v, replays)))
        for r in rejects:
            tasks.append(Task(Mode.MUST_REJECT, anchor, r.id, partial(_reject, r, tape, by_id, replays)))
        if Mode.DIFFERENTIAL in config.modes:
            from dpstream.conformance.differential import NAME, check_differential

            if not tape:
                skipped.append(_skipped(Mode.DIFFERENTIAL, anchor, "*", "the program has no tape mode"))
            elif known[anchor].cases is None:
                skipped.append(_skipped(Mode.DIFFERENTIAL, anchor, "*", "its catalog entry draws no cases"))
            else:
                tasks.append(Task(Mode.DIFFERENTIAL, anchor, NAME, partial(check_differential, config, anchor)))
    tasks.extend(_statistical(config, [a for a in chosen if a in known], hello, skipped))
    return tasks, skipped


def _statistical(config: ConformConfig, anchors: list[str], hello: Hello, skipped: list[Outcome]) -> list[Task]:
    """The statistical and transcript tasks; they share the false-alarm budget
    :data:`~dpstream.conformance.statistical.FALSE_ALARM` (Bonferroni; each privacy search at least the level its
    power was measured at: :func:`~dpstream.conformance.statistical.levels`)."""
    from dpstream.conformance.statistical import levels, statistical_checks, statistical_checks_count, statistical_tasks
    from dpstream.conformance.transcript import transcript_tasks

    plans: list[Any] = []
    if Mode.STATISTICAL in config.modes:
        plans, not_applicable = statistical_checks(config, anchors, hello.modes, hello.ops)
        skipped.extend(not_applicable)
    transcripts: list[Task] = []
    if Mode.TRANSCRIPT in config.modes:
        transcripts, not_applicable = transcript_tasks(config, anchors, hello.modes, hello.ops, 1.0)
        skipped.extend(not_applicable)
    searches = len(plans)
    search_level, level = levels(searches, statistical_checks_count(plans) - searches + len(transcripts))
    if transcripts:
        transcripts, _ = transcript_tasks(config, anchors, hello.modes, hello.ops, level)
    return [*statistical_tasks(config, plans, "runs" in hello.ops, level, search_level), *transcripts]


def _known(vector: KnownAnswerVector, replays: Replays, program: Program) -> Outcome:
    return check_known_answer(program, vector, replays)


def _reject(vector: MustRejectVector, tape: bool, by_id: Mapping[str, KnownAnswerVector], replays: Replays,
            program: Program) -> Outcome:
    return check_must_reject(program, vector, tape, by_id.get, replays)


def conform(config: ConformConfig, progress: Progress | None = None) -> ConformReport:
    """Run every selected check against the program; never raises for anything the program does (a Ctrl-C ends
    the run with the checks done so far, see :attr:`ConformReport.interrupted`). ``progress`` hears the plan (each
    check's expected seconds, :func:`dpstream.conformance.progress.expected_seconds`) and every check done."""
    started = time.perf_counter()
    report = ConformReport(config, None)
    program = Program(config.command, timeout=config.timeout)
    try:
        _run(config, report, program, progress)
    except KeyboardInterrupt as interrupt:
        report.interrupted = interrupt
        kill_all()  # this run's program and those of the statistical checks run here
    finally:
        report.seconds = time.perf_counter() - started
    return report


def _not_run(task: Task, why: str, tail: str) -> Outcome:
    return Outcome(task.mode, task.algorithm, task.name, Verdict.PROTOCOL_ERROR, message=f"not run: {why}",
                   details={"kind": "not-run", "stderr_tail": tail})


def _run(config: ConformConfig, report: ConformReport, program: Program,
         progress: Progress | None) -> None:
    try:
        program.start()
        report.hello = program.hello()
    except ProtocolError as exc:
        report.planned = 1
        report.outcomes.append(protocol_outcome(Mode.KNOWN_ANSWER, "*", "hello", exc, time.perf_counter()))
        report.stderr_tail = exc.stderr[-4000:]
        program.close()
        return
    tasks, skipped = plan(config, report.hello)
    report.planned = len(tasks) + len(skipped)
    report.outcomes.extend(skipped)
    if progress is not None:
        from dpstream.conformance.progress import expected_seconds

        progress.planned([expected_seconds(task, config) for task in tasks])
    stopped: dict[tuple[str, Mode], str] = {}  # (algorithm, mode) -> why its remaining checks are not run
    failures: dict[tuple[str, Mode], int] = {}  # protocol errors in a row, per algorithm and mode
    silent = 0  # checks in a row that ended in a protocol error without a single answer of the program
    tail = ""
    for i, task in enumerate(tasks, start=1):
        key = (task.algorithm, task.mode)
        if silent >= BREAKER:
            outcome = _not_run(task, f"the program answered nothing in {silent} checks in a row (it crashes on "
                                     "every request); no more restarts", tail)
        elif key in stopped:
            outcome = _not_run(task, stopped[key], tail)
        else:
            if not program.alive:
                program.close()
                program = Program(config.command, timeout=config.timeout)
            sent, answered = program.messages, program.replies
            try:
                outcome = task.run(program.start() if not program.alive else program)
            except ProtocolError as exc:  # the program could not be started again
                outcome = protocol_outcome(task.mode, task.algorithm, task.name, exc, time.perf_counter())
            if outcome.verdict is Verdict.PROTOCOL_ERROR:
                program.kill()
                tail = str(outcome.details.get("stderr_tail", "")) or tail
                failures[key] = failures.get(key, 0) + 1
                if program.messages > sent or outcome.details.get("kind") == "crash":  # (statistical checks
                    silent = silent + 1 if program.replies == answered else 0  # drive programs of their own)
                if outcome.details.get("kind") == "timeout":
                    stopped[key] = "an earlier check of this algorithm and mode timed out"
                elif failures[key] >= BREAKER:
                    stopped[key] = f"{failures[key]} earlier checks of this algorithm and mode broke the protocol"
            else:
                failures[key], silent = 0, 0
        report.outcomes.append(outcome)
        if progress is not None:
            progress(outcome, i, len(tasks))
    report.stderr_tail = program.stderr[-4000:] or tail
    status = program.close()
    if status not in (0, None):
        report.outcomes.append(Outcome(Mode.KNOWN_ANSWER, "*", "exit", Verdict.PROTOCOL_ERROR,
                                       message=f"the program exited with status {status} at end of input",
                                       details={"stderr_tail": report.stderr_tail}))
