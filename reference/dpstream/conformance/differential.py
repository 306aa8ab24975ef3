"""Differential mode of ``dpstream conform``: fresh cases on the reference and the program, coverage-guided, shrunk
on a difference.

The known-answer vectors are fixed in advance; a program can pass them all and still be wrong elsewhere, often only in
larger cases (a deeper tree, a longer stream). For every algorithm the program announces (in tape mode) whose catalog
entry draws cases (``Entry.cases``, :mod:`dpstream.catalog.cases`):

* **fresh cases, the whole domain.** The fuzzer of :mod:`dpstream.conformance.fuzz` draws cases from the entry's
  generator through choice sequences: small cases first, larger ones as the run goes on (the size level ramps over
  the first :data:`RAMP_CASES` cases from the vectors' range to the largest the docs allow: deep trees, horizons in
  the hundreds and thousands, many records, wide domains; then half of the fresh cases are of the largest sizes),
  random features switched off per case (swarm testing). The reference runs every case under
  ``TapeRecorder(InsecureSeededNoise(seed))`` with a coverage tracer, which makes it a known-answer vector
  (:func:`dpstream.vectors.generate.known_answer_vector`); a case the reference refuses is no case (dropped), nor is
  an ambiguous one (a decision within rounding of its threshold: docs/conformance.md "The error model"). The program
  replays the vector in tape mode through :func:`~dpstream.conformance.vector_checks.check_known_answer`.
* **coverage-guided.** A case that reaches a printed line, a branch of the algorithm modules or a size bucket no
  earlier case reached is kept, and later cases are often mutations of kept ones. The outcome's details hold the
  coverage table (printed lines of the entry's box reached, branches, the largest D, T, n, fanout reached, cases per
  second), which the reports print.
* **shrinking.** On the first difference the case is shrunk (:func:`dpstream.conformance.fuzz.shrink`) while the
  program keeps being driven through the protocol: only simplifications that still differ are kept, so a mistake at
  depth 6 shrinks to depth 6, not below. The smallest case is replayed alone on a fresh copy of the program
  (``reproduced``), written as a known-answer vector to ``<out>/<anchor>/differential-seed<seed>.json`` (listed in
  ``<out>/manifest.json``, so ``dpstream conform --mode known-answer --vectors <out>`` replays it), and reported.
* **budget**, per algorithm: new cases until ``differential_seconds`` x :data:`GENERATION_SHARE` is spent (or
  ``cases`` cases ran, when given), shrinking until ``differential_seconds``.
* **reproducible.** The cases are a function of the seed and the algorithm (:func:`run_seed`; the size ramp counts
  cases, not seconds), so the same seed finds the same first difference on any machine that gets that far in its
  budget; the time budget decides how many cases run and how far shrinking gets (the details say ``"cut": true``);
  the vector file is the durable record.

A program that crashes, hangs or breaks the protocol on a fresh case gets ``protocol-error`` for the algorithm (the
case is written and reported as above, unshrunk); a shrink candidate that breaks the protocol is not kept (the
program is restarted; after a timeout shrinking stops).
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from dpstream.arithmetic import FAST
from dpstream.catalog import Entry, entry
from dpstream.catalog.cases import Case
from dpstream.conformance.fuzz import (
    Candidate,
    Tracer,
    coverage_keys,
    materialize,
    mutate,
    shrink,
    size_buckets,
    tag_map,
    wide_choices,
)
from dpstream.conformance.outcome import Mode, Outcome, Verdict
from dpstream.conformance.vector_checks import check_known_answer
from dpstream.conformance.wire import Program, ProtocolError
from dpstream.errors import DPStreamInputError, StateError
from dpstream.files import write_atomically
from dpstream.noise import data_rng, derived_seed
from dpstream.vectors.corpus import CORPUS_FORMAT, MANIFEST, CorpusError, ManifestRow, load_manifest, sha256_of
from dpstream.vectors.format import KnownAnswerVector, dumps
from dpstream.vectors.generate import AmbiguousCaseError, known_answer_vector

if TYPE_CHECKING:
    from dpstream.conformance.runner import ConformConfig

__all__ = ["GENERATION_SHARE", "NAME", "check_differential", "fresh_cases", "output_problem",
           "run_seed", "write_vector"]

NAME = "fresh cases"
"""The outcome's name (one check per algorithm)."""
GENERATION_SHARE = 0.8
"""New cases stop at this share of ``--differential-seconds``; a difference found later still has the rest to shrink."""
RAMP_CASES = 300
"""The size level reaches 1 (the largest cases the docs allow) after this many cases: 3 to 10 s of a run."""
RAMP_SHARE = 0.35
"""... or after this share of a smaller case budget (``--cases``)."""
MUTATE = 0.6
"""Share of the new cases that are mutations of kept (coverage-increasing) cases once there are some."""
SHOWN = 300
"""Characters of the minimal case's parameters and inputs shown in the one-line message (all of it in the details)."""


@dataclass
class _Finding:
    vector: KnownAnswerVector
    outcome: Outcome
    case: Case
    candidate: Candidate


@cache
def _tags() -> dict[tuple[str, int], tuple[str, ...]]:
    return tag_map()


@dataclass
class _Coverage:
    """What the cases of one algorithm reached (the report's coverage table)."""

    keys: set[tuple[Any, ...]] = field(default_factory=set)
    largest: dict[str, float] = field(default_factory=dict)

    def add(self, keys: set[tuple[Any, ...]], sizes: dict[str, float]) -> bool:
        """Record a case's coverage; whether it reached anything new."""
        new = keys - self.keys
        self.keys |= new
        for name, value in sizes.items():
            self.largest[name] = max(self.largest.get(name, 0.0), value)
        return bool(new)

    def table(self, anchor: str, cases: int, seconds: float, kept: int) -> dict[str, Any]:
        box = sorted({label for labels in _tags().values() for label in labels if label.startswith(anchor + " ")})
        reached = sorted({k[1] for k in self.keys if k[0] == "tag" and k[1].startswith(anchor + " ")})
        return {"cases": cases, "printed_lines": [len(reached), len(box)],
                "unreached": [x for x in box if x not in reached],
                "all_printed_lines_reached": len({k[1] for k in self.keys if k[0] == "tag"}),
                "lines": sum(1 for k in self.keys if k[0] == "line"),
                "branches": sum(1 for k in self.keys if k[0] == "arc"),
                "largest": {k: int(v) if float(v).is_integer() else v for k, v in sorted(self.largest.items())},
                "cases_per_second": round(cases / seconds, 2) if seconds > 0 else None, "kept": kept}


@dataclass
class _Search:
    """The state of one algorithm's differential check."""

    e: Entry
    config: ConformConfig
    program: Program
    vid: str
    started: float = field(default_factory=time.perf_counter)
    cases: int = 0
    dropped: int = 0
    ambiguous: int = 0
    shrink_runs: int = 0
    found_after: float = 0.0
    first: _Finding | None = None
    best: _Finding | None = None
    broken: _Finding | None = None
    restarts: int = 0
    cut: bool = False
    coverage: _Coverage = field(default_factory=_Coverage)
    corpus: list[Candidate] = field(default_factory=list)
    tracer: Tracer = field(default_factory=lambda: Tracer(tags=_tags()))

    @property
    def generate_until(self) -> float:
        return self.started + self.config.differential_seconds * GENERATION_SHARE

    @property
    def until(self) -> float:
        return self.started + self.config.differential_seconds

    def level(self) -> float:
        """How large cases may be now: 0 at the first case, 1 after :data:`RAMP_CASES` cases (or :data:`RAMP_SHARE`
        of a smaller case budget): a function of the case number, so that a seed gives the same cases whatever the
        machine's speed (the time budget only decides how many run)."""
        ramp = float(RAMP_CASES)
        if self.config.cases is not None:
            ramp = min(ramp, self.config.cases * RAMP_SHARE)
        return min(1.0, self.cases / max(1.0, ramp))

    def vector(self, case: Case, seed: int, traced: bool) -> tuple[KnownAnswerVector | None, set[tuple[Any, ...]]]:
        """The case recorded on the reference (None: refused; :class:`AmbiguousCaseError`: no ground truth), and
        what it exercised (when ``traced``)."""
        meta = {"tape_seed": seed, "differential": {"seed": self.config.seed, "algorithm": self.e.anchor}}

        def record() -> KnownAnswerVector | None:
            try:
                return known_answer_vector(self.e, self.vid, case.params, case.inputs, seed, case.edges,
                                           f"{self.e.title}: a fresh case of `dpstream conform --mode differential "
                                           f"--seed {self.config.seed}` on which a program differed", meta,
                                           arithmetic=FAST)
            except (DPStreamInputError, StateError):
                return None

        if not traced:
            return record(), set()
        return self.tracer.run(record)

    def attempt(self, candidate: Candidate, rng: np.random.Generator | None, traced: bool
                ) -> tuple[_Finding | None, Candidate]:
        """Run one candidate (``rng``: a fresh or mutated case, extended where its choices run out) on both sides."""
        assert self.e.cases is not None
        case, exact = materialize(self.e.cases, candidate, rng)
        seed = tape_seed(self.config.seed, self.e.anchor, exact)
        try:
            vector, keys = self.vector(case, seed, traced)
        except AmbiguousCaseError:
            self.ambiguous += 1
            return None, exact
        if vector is None:
            self.dropped += 1
            return None, exact
        if traced:
            sizes = size_buckets(case.params, case.inputs)
            if self.coverage.add(keys | coverage_keys(sizes), sizes):
                self.corpus.append(exact)
        if not self.program.alive:
            self._restart()
        outcome = check_known_answer(self.program, vector)
        return _Finding(vector, _renamed(outcome), case, exact), exact

    def _restart(self) -> None:
        self.program.kill()
        self.program = Program(self.config.command, timeout=self.config.timeout).start()
        self.restarts += 1


def _renamed(outcome: Outcome) -> Outcome:
    return Outcome(Mode.DIFFERENTIAL, outcome.algorithm, NAME, outcome.conformance, outcome.privacy, outcome.message,
                   outcome.details, outcome.seconds)


def _search(s: _Search) -> None:
    """Fresh and mutated cases until the generation budget (or the case budget) is spent or a case differs; then
    shrink it (module docstring)."""
    rng = data_rng(run_seed(s.config.seed, s.e.anchor, 0))
    first = True
    while s.cases < (s.config.cases if s.config.cases is not None else 2**62):
        if time.perf_counter() > s.generate_until:
            s.cut = True
            break
        level = s.level()
        if first:  # the entry's simplest case comes first
            candidate: Candidate = Candidate()
            found, _ = s.attempt(candidate, None, traced=True)
            first = False
        else:
            if s.corpus and rng.random() < MUTATE:
                parent = s.corpus[int(rng.integers(0, len(s.corpus)))]
                candidate = mutate(parent, s.corpus, rng, level)
            else:  # small cases first; once the ramp is done, half of the fresh cases at the largest sizes
                top = level >= 1.0 and rng.random() < 0.5
                candidate = Candidate(level=1.0 if top else float(level * np.sqrt(rng.random())))
            found, _ = s.attempt(candidate, rng, traced=True)
        if found is None:
            if s.dropped + s.ambiguous > 50 * (s.cases + 1) + 200:  # the reference refuses nearly every case
                break
            continue
        s.cases += 1
        if found.outcome.verdict is Verdict.PROTOCOL_ERROR:
            s.program.kill()
            s.broken = found
            return
        if found.outcome.verdict is Verdict.DEVIATION:
            s.first = s.best = found
            s.found_after = time.perf_counter() - s.started
            break
    if s.best is not None:
        _shrink(s)


def _shrink(s: _Search) -> None:
    assert s.best is not None
    stop = False
    seen: set[str] = set()  # the cases already tried (other choices can make the same case)

    def fails(candidate: Candidate) -> bool | None:
        nonlocal stop
        if stop:
            return None
        assert s.e.cases is not None
        case, exact = materialize(s.e.cases, candidate)
        key = json.dumps([case.params, case.inputs, exact.choices[:8]], sort_keys=True)
        if key in seen:
            return False  # the same case again: no simplification
        seen.add(key)
        s.shrink_runs += 1
        found, _ = s.attempt(candidate, None, traced=False)
        if found is None:
            return False
        if found.outcome.verdict is Verdict.PROTOCOL_ERROR:  # not kept; the program is restarted
            s.program.kill()
            if found.outcome.details.get("kind") == "timeout":
                s.cut = stop = True
            return False
        if found.outcome.verdict is Verdict.DEVIATION and _size(found) < _size(s.best):  # type: ignore[arg-type]
            s.best = found
            return True
        return False

    generator = s.e.cases
    assert generator is not None
    _, _tried = shrink(s.best.candidate, fails, s.until, lambda c: wide_choices(generator, c))
    if time.perf_counter() >= s.until:
        s.cut = True


def _size(f: _Finding) -> tuple[int, int, int, tuple[int, int, float]]:
    """How large a failing case is (the shrinker keeps a case only when it is smaller): its steps, draws and text,
    then how complex its choices are (the same size with simpler choices: a simpler case)."""
    text = json.dumps([f.vector.params, f.vector.inputs], separators=(",", ":"))
    return len(f.vector.inputs), len(f.vector.tape.draws), len(text), f.candidate.weight


def run_seed(seed: int, anchor: str, run: int) -> int:
    """The seed of the differential mode's generator number ``run`` for ``anchor`` under ``--seed seed``."""
    return derived_seed(seed, "differential", anchor, run)


def tape_seed(seed: int, anchor: str, candidate: Candidate) -> int:
    """The seed of the tape a case is recorded with: a function of ``--seed`` and the case's leading choices (so a
    shrunk case keeps its tape where its first choices stay)."""
    return int(np.uint32(derived_seed(seed, "tape", anchor, *candidate.choices[:8])))


def fresh_cases(anchor: str, seed: int, count: int) -> list[tuple[Case, int]]:
    """``count`` fresh random cases of ``anchor`` (and the seeds of their tapes) at the smallest size level (the
    vectors' range), drawn as the differential mode draws its fresh cases (from a stream of its own), without the
    reference (it may refuse some)."""
    e = entry(anchor)
    if e.cases is None:
        raise ValueError(f"{anchor} draws no cases")
    rng = data_rng(run_seed(seed, anchor, 1))
    out: list[tuple[Case, int]] = []
    for _ in range(count):
        case, exact = materialize(e.cases, Candidate(), rng)
        out.append((case, tape_seed(seed, anchor, exact)))
    return out


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
    generated = (s.found_after if s.first is not None else searched) or searched
    details: dict[str, Any] = {"cases": s.cases, "refused_by_reference": s.dropped, "ambiguous": s.ambiguous,
                               "cut": s.cut, "budget": budget,
                               "coverage": s.coverage.table(anchor, s.cases, generated, len(s.corpus))}
    finding = s.broken or s.best
    if finding is None:
        verdict = Verdict.PASS if s.cases else Verdict.INCONCLUSIVE
        why = " (the time budget ended the search)" if s.cut else ""
        skipped = f"{s.dropped} refused by the reference" + (
            f", {s.ambiguous} ambiguous (a decision within rounding) skipped" if s.ambiguous else "")
        largest = ", ".join(f"{k} {v}" for k, v in details["coverage"]["largest"].items() if k in ("D", "T", "n"))
        message = (f"{s.cases} fresh case(s) match the reference ({skipped}; largest {largest}){why}"
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

