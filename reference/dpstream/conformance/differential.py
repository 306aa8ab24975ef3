"""Differential mode of ``dpstream conform``: fresh random cases on the reference and the program, shrunk on a
difference.

The known-answer vectors are fixed in advance; a program can pass them all and still be wrong elsewhere. For every
algorithm the program announces (in tape mode) whose catalog entry draws cases (``Entry.cases``,
:mod:`dpstream.catalog.cases`):

* **cases.** Hypothesis draws fresh cases from the entry's generator (:func:`dpstream.testing.strategies.catalog_cases`:
  parameters and inputs weighted toward the edges the vectors care about) and the seed of a fresh random tape, one
  short seeded run per case (:func:`_search` says why); the first case is the entry's simplest. The reference runs
  the case under ``TapeRecorder(InsecureSeededNoise(seed))``, which makes it a known-answer vector
  (:func:`dpstream.vectors.generate.known_answer_vector`); a case the reference refuses is no case (dropped). The
  program replays the vector in tape mode through :func:`~dpstream.conformance.vector_checks.check_known_answer`:
  draw requests and releases are compared exactly as for the shipped vectors.
* **shrinking.** On the first difference Hypothesis shrinks the case -- parameters, inputs and the tape seed (a
  smaller seed is kept only where the case still fails, so the seed is part of the shrunk data) -- while the program
  keeps being driven through the protocol. The smallest failing case is then replayed alone on a fresh copy of the
  program (``reproduced`` in the details), written as a known-answer vector in the corpus format to
  ``<out>/<anchor>/differential-seed<seed>.json`` (listed in ``<out>/manifest.json``, so ``dpstream conform --mode
  known-answer --vectors <out>`` replays it), and reported with its first divergence.
* **budget**, per algorithm: ``cases`` fresh cases, or ``differential_seconds`` (the first half for new cases, the
  rest for shrinking), whichever ends first.
* **reproducible.** The cases are a function of the seed and the algorithm: every Hypothesis run is seeded, has no
  example database and reads no constants from local source files (:func:`fixed_generation`). The same seed gives
  the same cases and the same shrunk vector unless the time budget cuts the run (the details say ``"cut": true``),
  with the same versions of dpstream and Hypothesis; the vector file is the durable record.

A program that crashes, hangs or breaks the protocol on a fresh case gets ``protocol-error`` for the algorithm (the
case is written and reported as above, unshrunk); a shrink candidate that breaks the protocol is not kept (the
program is restarted; after a timeout shrinking stops).
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hypothesis import HealthCheck, Phase, Verbosity, given, reject, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st

from dpstream.catalog import Entry, entry
from dpstream.catalog.cases import Case
from dpstream.conformance.outcome import Mode, Outcome, Verdict
from dpstream.conformance.vector_checks import check_known_answer
from dpstream.conformance.wire import Program, ProtocolError
from dpstream.errors import DPStreamInputError, StateError
from dpstream.files import write_atomically
from dpstream.noise import derived_seed
from dpstream.testing.strategies import catalog_cases
from dpstream.vectors.corpus import CORPUS_FORMAT, MANIFEST, CorpusError, ManifestRow, load_manifest, sha256_of
from dpstream.vectors.format import KnownAnswerVector, dumps
from dpstream.vectors.generate import AmbiguousCaseError, known_answer_vector

if TYPE_CHECKING:
    from dpstream.conformance.runner import ConformConfig

__all__ = ["NAME", "check_differential", "fixed_generation", "fresh_cases", "output_problem", "run_seed",
           "write_vector"]

NAME = "fresh cases"
"""The outcome's name (one check per algorithm)."""
TAPE_SEEDS = st.integers(0, 2**32 - 1)
MAX_RUNS_PER_CASE = 20
"""Hypothesis runs per requested case at most (cases the reference refuses are drawn again)."""
SHOWN = 300
"""Characters of the minimal case's parameters and inputs shown in the one-line message (all of it in the details)."""


class _DivergedError(Exception):
    """A case on which the program differs from the reference (Hypothesis shrinks it)."""


class _Stop(BaseException):
    """Ends the Hypothesis run at once (not an ``Exception``: Hypothesis lets it through without shrinking it)."""


@dataclass
class _Finding:
    vector: KnownAnswerVector
    outcome: Outcome
    case: Case


@dataclass
class _Search:
    """The state of one algorithm's differential check, shared with the Hypothesis test function."""

    e: Entry
    config: ConformConfig
    program: Program
    vid: str
    started: float = field(default_factory=time.perf_counter)
    results: dict[str, _Finding] = field(default_factory=dict)
    dropped: set[str] = field(default_factory=set)
    """The cases the reference refuses (no cases)."""
    ambiguous: set[str] = field(default_factory=set)
    """The cases with a decision within rounding of its threshold (no ground truth: neither convicted nor counted)."""
    cases: int = 0
    runs: int = 0
    shrink_runs: int = 0
    found_after: float = 0.0
    first: _Finding | None = None
    best: _Finding | None = None
    broken: _Finding | None = None
    restarts: int = 0
    cut: bool = False

    @property
    def new_until(self) -> float:
        return self.started + self.config.differential_seconds / 2

    @property
    def until(self) -> float:
        return self.started + self.config.differential_seconds

    def vector(self, case: Case, seed: int) -> KnownAnswerVector | None:
        """The case recorded on the reference (None: the reference refuses it; :class:`AmbiguousCaseError`: a decision
        within rounding of its threshold)."""
        meta = {"tape_seed": seed, "differential": {"seed": self.config.seed, "algorithm": self.e.anchor}}
        try:
            return known_answer_vector(self.e, self.vid, case.params, case.inputs, seed, case.edges,
                                       f"{self.e.title}: a fresh case of `dpstream conform --mode differential "
                                       f"--seed {self.config.seed}` on which a program differed", meta)
        except (DPStreamInputError, StateError):
            return None

    def test(self, case: Case, seed: int) -> None:
        """Hypothesis's test function: raises :class:`_DivergedError` when the program differs on the case."""
        key = json.dumps([case.params, case.inputs, seed], sort_keys=True)
        finding = self.results.get(key)
        if finding is None:
            if key in self.dropped or key in self.ambiguous:
                reject()
            if self.best is None and self.cases >= self.config.cases:
                raise _Stop
            if time.perf_counter() > (self.new_until if self.best is None else self.until):
                self.cut = True
                raise _Stop
            try:
                vector = self.vector(case, seed)
            except AmbiguousCaseError:
                self.ambiguous.add(key)
                reject()
            if vector is None:
                self.dropped.add(key)
                reject()
            finding = self.results[key] = self._run(vector, case)
        if finding.outcome.verdict is Verdict.DEVIATION:
            # Hypothesis runs only candidates smaller than its current best, and replays the smallest last: the
            # latest failing case is the smallest so far
            self.best = finding
            raise _DivergedError

    def _run(self, vector: KnownAnswerVector, case: Case) -> _Finding:
        if self.best is None:
            self.cases += 1
        else:
            self.shrink_runs += 1
        if not self.program.alive:
            self._restart()
        outcome = check_known_answer(self.program, vector)
        finding = _Finding(vector, _renamed(outcome), case)
        if outcome.verdict is Verdict.PROTOCOL_ERROR:
            self.program.kill()
            if self.best is None:  # a broken protocol on a fresh case ends the check
                self.broken = finding
                raise _Stop
            if outcome.details.get("kind") == "timeout":
                self.cut = True
                raise _Stop
        elif outcome.verdict is Verdict.DEVIATION and self.first is None:
            self.first, self.found_after = finding, time.perf_counter() - self.started
        return finding  # while shrinking, a candidate that broke the protocol is not kept (not a deviation)

    def _restart(self) -> None:
        self.program.kill()
        self.program = Program(self.config.command, timeout=self.config.timeout).start()
        self.restarts += 1


def _renamed(outcome: Outcome) -> Outcome:
    return Outcome(Mode.DIFFERENTIAL, outcome.algorithm, NAME, outcome.conformance, outcome.privacy, outcome.message,
                   outcome.details, outcome.seconds)


@contextlib.contextmanager
def fixed_generation() -> Iterator[None]:
    """Hypothesis without the constants it reads from 'local' source files.

    Hypothesis mixes integers and floats found in the source of local modules (not in site-packages) into its draws,
    and caches them in ``.hypothesis/`` of the working directory: the cases of a seed would depend on how dpstream is
    installed, on the working directory and on the modules loaded so far. Inside this block the local constants are
    empty (Hypothesis's own global constants stay) and nothing is written."""
    try:
        from hypothesis.internal.conjecture import providers
        from hypothesis.internal.constants_ast import Constants
    except ImportError:  # pragma: no cover - a Hypothesis without local constants
        yield
        return
    original = getattr(providers, "_get_local_constants", None)
    cache = getattr(providers, "CONSTANTS_CACHE", None)
    if original is None or cache is None:  # pragma: no cover - idem
        yield
        return
    empty = Constants()
    cache.cache.clear()
    providers._get_local_constants = lambda: empty
    try:
        yield
    finally:
        providers._get_local_constants = original
        cache.cache.clear()


def _search(s: _Search) -> None:
    """Hypothesis over the entry's cases, one short run per fresh case; ``s`` records what it found.

    A Hypothesis run copies parts of earlier examples into later ones (after its first 10 examples), so that 100
    examples hold only about 20 values of the first parameter drawn; runs of 2 examples, each with its own seed, give
    independent fresh cases (the first example of every run, the entry's simplest case, is run once). A run whose case
    differs shrinks it and ends the search."""
    with fixed_generation():
        while s.best is None and s.broken is None and not s.cut and s.cases < s.config.cases:
            if s.runs >= MAX_RUNS_PER_CASE * s.config.cases:  # the reference refuses nearly every case
                break
            if time.perf_counter() > s.new_until:
                s.cut = True
                break
            _hypothesis_run(s.e.anchor, run_seed(s.config.seed, s.e.anchor, s.runs), s.test)
            s.runs += 1


def _hypothesis_run(anchor: str, run_seed: int, test: Callable[[Case, int], None]) -> None:
    """One seeded Hypothesis run of two examples of ``anchor``'s cases and tape seeds: the simplest case, then a
    random one; a case on which ``test`` raises :class:`_DivergedError` is shrunk."""
    @settings(database=None, max_examples=2, deadline=None, phases=(Phase.generate, Phase.shrink),
              suppress_health_check=list(HealthCheck), report_multiple_bugs=False, verbosity=Verbosity.quiet,
              print_blob=False, derandomize=False)
    @hypothesis_seed(run_seed)
    @given(case=catalog_cases(anchor), seed=TAPE_SEEDS)
    def differential(case: Case, seed: int) -> None:
        test(case, seed)

    with contextlib.suppress(_DivergedError, _Stop):
        differential()


def run_seed(seed: int, anchor: str, run: int) -> int:
    """The seed of the differential mode's Hypothesis run number ``run`` for ``anchor`` under ``--seed seed``."""
    return derived_seed(seed, "differential", anchor, run)


def fresh_cases(anchor: str, seed: int, count: int) -> list[tuple[Case, int]]:
    """The random cases (and tape seeds) of the differential mode's first ``count`` runs for ``anchor`` under
    ``--seed seed``, without the reference (where it refuses a case, the mode draws another in that run)."""
    out: list[tuple[Case, int]] = []

    def keep(case: Case, tape: int) -> None:
        out.append((case, tape))

    with fixed_generation():
        for run in range(count):
            _hypothesis_run(anchor, run_seed(seed, anchor, run), keep)
    return out[1::2]  # every run draws the simplest case first


def write_vector(out: Path, vector: KnownAnswerVector) -> Path:
    """Write ``vector`` into the folder ``out`` (``<out>/<algorithm>/<name>.json``) and list it in
    ``<out>/manifest.json`` (made, or kept with its other rows), so that ``--vectors <out>`` replays it."""
    path = out / f"{vector.id}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomically(path, dumps(vector.to_json()))
    manifest = out / MANIFEST
    before: dict[str, Any] = json.loads(manifest.read_text(encoding="utf-8")) if manifest.is_file() else {}
    rows = {r.id: r for r in load_manifest(out)} if before else {}
    rows[vector.id] = ManifestRow(vector.id, "known-answer", vector.algorithm, vector.params, vector.edges,
                                  path.relative_to(out).as_posix(), sha256_of(path))
    write_atomically(manifest, dumps({"format": CORPUS_FORMAT, "version": 1,
                                      "corpus": before.get("corpus", "differential"),
                                      "vectors": [r.to_json() for r in sorted(rows.values(), key=lambda r: r.id)]}))
    return path


def _shown(value: Any) -> str:
    text = json.dumps(value, separators=(",", ":"))
    return text if len(text) <= SHOWN else text[:SHOWN] + "..."


def _case_json(finding: _Finding) -> dict[str, Any]:
    v = finding.vector
    return {"params": v.params, "inputs": v.inputs, "steps": len(v.inputs), "tape_seed": v.meta.get("tape_seed"),
            "draws": len(v.tape.draws), "edges": list(v.edges)}


REPLAY_PATIENCE = 3
"""The replay on a fresh copy waits this many ``--timeout`` for an answer (the copy starts while the machine may be
busy; the replay is one case)."""


def _replay(s: _Search, vector: KnownAnswerVector) -> Outcome:
    """The shrunk case replayed alone on a fresh copy of the program."""
    program = Program(s.config.command, timeout=REPLAY_PATIENCE * s.config.timeout)
    try:
        program.start()
        return check_known_answer(program, vector)
    except ProtocolError as exc:  # the copy cannot even start: not reproduced
        return Outcome(Mode.DIFFERENTIAL, vector.algorithm, NAME, Verdict.PROTOCOL_ERROR, message=str(exc))
    finally:
        program.kill()


def check_differential(config: ConformConfig, anchor: str, program: Program) -> Outcome:
    """The differential check of one algorithm (see the module docstring)."""
    started = time.perf_counter()
    e = entry(anchor)
    s = _Search(e, config, program, f"{anchor}/differential-seed{config.seed}")
    try:
        _search(s)
    finally:
        if s.program is not program:  # a copy started by the search
            s.program.kill()
    searched = time.perf_counter() - started
    budget = {"cases": config.cases, "seconds": config.differential_seconds, "seed": config.seed}
    details: dict[str, Any] = {"cases": s.cases, "refused_by_reference": len(s.dropped),
                               "ambiguous": len(s.ambiguous), "cut": s.cut, "budget": budget}
    finding = s.broken or s.best
    if finding is None:
        verdict = Verdict.PASS if s.cases else Verdict.INCONCLUSIVE
        why = " (the time budget ended the search)" if s.cut else ""
        skipped = f"{len(s.dropped)} refused by the reference" + (
            f", {len(s.ambiguous)} ambiguous (a decision within rounding) skipped" if s.ambiguous else "")
        message = (f"{s.cases} fresh case(s) match the reference ({skipped}){why}"
                   if s.cases else f"no fresh case ran: {skipped}{why}")
        return Outcome(Mode.DIFFERENTIAL, anchor, NAME, verdict, message=message, details=details,
                       seconds=time.perf_counter() - started)
    try:
        written: str = str(write_vector(config.differential_out, finding.vector))
    except OSError as exc:  # a full disk: the finding is reported all the same, its vector is in the details
        written = f"(not written: {exc.strerror or exc})"
        details["vector_json"] = finding.vector.to_json()
    path = written
    details.update(minimal_case=_case_json(finding), vector=str(path), check=finding.outcome.to_json(),
                   first_divergence=finding.outcome.details.get("first_divergence"),
                   draw_issues=finding.outcome.details.get("draw_issues", []), restarts=s.restarts)
    case = f"params {_shown(finding.vector.params)}, inputs {_shown(finding.vector.inputs)}"
    if s.broken is not None:
        details["kind"] = finding.outcome.details.get("kind")
        return Outcome(Mode.DIFFERENTIAL, anchor, NAME, Verdict.PROTOCOL_ERROR,
                       message=f"fresh case {s.cases} broke the protocol: {finding.outcome.message}; case: {case}; "
                               f"vector {path}", details=details, seconds=time.perf_counter() - started)
    assert s.first is not None
    replay = _replay(s, finding.vector)
    reproduced = replay.verdict is Verdict.DEVIATION
    details.update(found_at_case=s.cases, found_after_seconds=round(s.found_after, 3), shrink_runs=s.shrink_runs,
                   shrink_seconds=round(searched - s.found_after, 3),
                   first_failing_case={"steps": len(s.first.vector.inputs), "draws": len(s.first.vector.tape.draws)},
                   reproduced=reproduced, replay=replay.message)
    again = "" if reproduced else " (NOT reproduced when replayed alone on a fresh copy of the program)"
    steps = len(finding.vector.inputs)
    return Outcome(Mode.DIFFERENTIAL, anchor, NAME, Verdict.DEVIATION,
                   message=f"fresh case {s.cases} differs; shrunk in {s.shrink_runs} runs to {steps} step(s), {case}: "
                           f"{finding.outcome.message}{again}; vector {path}",
                   details=details, seconds=time.perf_counter() - started)


def output_problem(out: Path) -> str | None:
    """Why shrunk cases could not be written to ``out`` (``None``: they can); checked before anything runs."""
    if out.exists():
        if not out.is_dir():
            return f"--differential-out {out}: not a folder"
        if (out / MANIFEST).exists():
            try:
                load_manifest(out)
            except (CorpusError, OSError, ValueError, KeyError, TypeError):
                return f"--differential-out {out}: its {MANIFEST} is not a dpstream corpus manifest"
        return None if os.access(out, os.W_OK) else f"--differential-out {out}: not writable"
    parent = out.parent if str(out.parent) else Path(".")
    if not parent.is_dir():
        return f"--differential-out {out}: folder {parent} does not exist"
    return None if os.access(parent, os.W_OK) else f"--differential-out {out}: {parent} is not writable"

