"""Write the corpus from the catalog (``dpstream vectors generate``) and replay it (``... verify``).

Generation runs every :class:`~dpstream.catalog.VectorSpec` of every catalog entry once on the
reference with a seeded source under a :class:`~dpstream.insecure.TapeRecorder`, and every
:class:`~dpstream.catalog.RejectSpec` after checking that the reference does refuse it. Everything
is a pure function of the catalog, so the files are byte-identical from run to run, and from machine to
machine: the reference runs under the specified arithmetic (:data:`dpstream.arithmetic.SPECIFIED`: correctly
rounded elementary functions and sums), so no CPU feature (AVX-512 or not) or libm changes a bit.

Each vector's ``tolerance`` and ``draw_tolerance`` are its entry's error model evaluated on the case
(:mod:`dpstream.catalog.error_model`), and a case with an ambiguous decision (a branch taken within rounding
of its threshold) is never written: :class:`AmbiguousCaseError`.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dpstream.arithmetic import SPECIFIED, Decision, Kernel, Notes, recording, using
from dpstream.catalog import Entry, RejectSpec, VectorSpec, entries, entry
from dpstream.catalog.codecs import compare
from dpstream.catalog.error_model import Bounds, ambiguous_decisions
from dpstream.errors import DPStreamInputError
from dpstream.insecure import InsecureSeededNoise, TapeRecorder, TapeReplay
from dpstream.noise import NoiseSource
from dpstream.tape import Tape
from dpstream.vectors.corpus import (
    CORPUS_FORMAT,
    CORPUS_VERSION,
    MANIFEST,
    ManifestRow,
    corpus_dir,
    known_answer,
    load_manifest,
    must_reject,
    sha256_of,
)
from dpstream.vectors.format import KnownAnswerVector, MustRejectVector, dumps

__all__ = ["AmbiguousCaseError", "Problem", "RecordedCase", "generate", "known_answer_vector", "record_case",
           "run_inputs", "verify"]


class AmbiguousCaseError(ValueError):
    """A case that takes a branch within rounding of its threshold: another correct evaluation order may take the
    other branch, so the case is no ground truth (never a vector; the differential mode skips it)."""

    def __init__(self, anchor: str, decisions: Sequence[Decision]) -> None:
        first = decisions[0]
        super().__init__(f"{anchor}: {len(decisions)} decision(s) within rounding of their threshold, e.g. "
                         f"{first.what}: {first.value!r} is {first.distance:.3g} from {first.boundary!r} (band "
                         f"{first.band:.3g})")
        self.decisions = list(decisions)


def run_inputs(e: Entry, params: Mapping[str, Any], inputs: Sequence[Any], noise: NoiseSource) -> list[Any]:
    """Build ``e`` with ``params`` on ``noise`` and step it through JSON ``inputs``; JSON releases."""
    assert e.codec is not None
    algorithm, valid = e.make(params, noise), e.params.validate(params)
    codec = e.codec
    return [codec.encode_release(algorithm.step(codec.decode_input(x, valid))) for x in inputs]


@dataclass(frozen=True)
class RecordedCase:
    """One case run on the reference under the specified arithmetic: its releases, tape, what it noted (decisions,
    operand sizes) and the bounds of its entry's error model."""

    expected: list[Any]
    tape: Tape
    notes: Notes
    bounds: Bounds

    @property
    def ambiguous(self) -> list[Decision]:
        return ambiguous_decisions(self.notes.decisions, self.bounds)


def record_case(e: Entry, params: Mapping[str, Any], inputs: Sequence[Any], seed: int,
                arithmetic: Kernel = SPECIFIED) -> RecordedCase:
    """``inputs`` run on the reference under ``TapeRecorder(InsecureSeededNoise(seed))`` and the specified arithmetic
    (raises what the reference raises on invalid parameters or inputs). ``arithmetic``: another kernel where the
    bytes need not be the same on every machine (the differential mode's fresh cases: the ordinary arithmetic is
    faster, and its vectors are compared within their error model anyway)."""
    recorder = TapeRecorder(InsecureSeededNoise(seed), meta={"seed": seed})
    with using(arithmetic), recording() as notes:
        expected = run_inputs(e, params, inputs, recorder)
    assert e.error_model is not None, f"{e.anchor} has no error model"
    return RecordedCase(expected, recorder.tape, notes, e.error_model.bounds(params, inputs, recorder.tape, notes))


def known_answer_vector(e: Entry, vid: str, params: Mapping[str, Any], inputs: Sequence[Any], seed: int,
                        edges: Sequence[str] = (), description: str = "",
                        meta: Mapping[str, Any] | None = None, arithmetic: Kernel = SPECIFIED) -> KnownAnswerVector:
    """The known-answer vector ``vid``: ``inputs`` run on the reference under
    ``TapeRecorder(InsecureSeededNoise(seed))`` (raises what the reference raises on invalid parameters or inputs,
    and :class:`AmbiguousCaseError` for a case that is no ground truth)."""
    case = record_case(e, params, inputs, seed, arithmetic)
    if case.ambiguous:
        raise AmbiguousCaseError(e.anchor, case.ambiguous)
    return KnownAnswerVector(vid, e.anchor, dict(params), list(inputs), case.tape, case.expected,
                             case.bounds.release, tuple(edges),
                             description or f"{e.title}; {len(inputs)} steps, seed {seed}", dict(meta or {}),
                             case.bounds.draws)


def _known_answer(e: Entry, spec: VectorSpec) -> KnownAnswerVector:
    return known_answer_vector(e, f"{e.anchor}/{spec.name}", spec.params, spec.inputs, spec.seed, spec.edges,
                               spec.description)


def _refused(call: Callable[[], object]) -> bool:
    try:
        call()
    except DPStreamInputError:
        return True
    return False


def _must_reject(e: Entry, spec: RejectSpec, first_vector: str) -> MustRejectVector:
    vid = f"{e.anchor}/reject-{spec.name}"
    if spec.at_init:
        if not _refused(lambda: e.make(spec.params, InsecureSeededNoise(0))):
            raise RuntimeError(f"{vid}: the reference accepts these parameters: {spec.params}")
        return MustRejectVector(vid, e.anchor, dict(spec.params), "init", spec.reason, then=first_vector)
    assert e.codec is not None
    codec = e.codec
    algorithm, valid = e.make(spec.params, InsecureSeededNoise(0)), e.params.validate(spec.params)
    for x in spec.before:
        algorithm.step(codec.decode_input(x, valid))
    if not _refused(lambda: algorithm.step(codec.decode_input(spec.bad_input, valid))):
        raise RuntimeError(f"{vid}: the reference accepts the input {spec.bad_input!r}")
    case = record_case(e, spec.params, [*spec.before, *spec.after], spec.seed)
    if case.ambiguous:
        raise AmbiguousCaseError(e.anchor, case.ambiguous)
    return MustRejectVector(vid, e.anchor, dict(spec.params), "step", spec.reason, list(spec.before),
                            spec.bad_input, list(spec.after), case.expected, case.tape, tolerance=case.bounds.release,
                            draw_tolerance=case.bounds.draws)


def _documents() -> list[tuple[ManifestRow, str]]:
    out: list[tuple[ManifestRow, str]] = []
    for e in entries(streaming=True):
        vectors = [_known_answer(e, spec) for spec in e.vectors()]
        names = [v.id for v in vectors]
        if len(set(names)) != len(names):
            raise RuntimeError(f"{e.anchor}: duplicate vector names {names}")
        for v in vectors:
            text = dumps(v.to_json())
            out.append((ManifestRow(v.id, "known-answer", e.anchor, v.params, v.edges,
                                    f"{e.anchor}/{v.id.split('/', 1)[1]}.json", ""), text))
        if not vectors:
            continue
        for spec in e.must_reject():
            r = _must_reject(e, spec, vectors[0].id)
            out.append((ManifestRow(r.id, "must-reject", e.anchor, r.params, (), f"{e.anchor}/{r.id.split('/', 1)[1]}"
                                    ".json", ""), dumps(r.to_json())))
    return out


def generate(root: Path | None = None, progress: Callable[[str], None] = lambda _: None) -> list[ManifestRow]:
    """Rewrite the corpus under ``root`` (default: the package's) from the catalog; returns the manifest rows.

    The new corpus is written to a temporary folder first and swapped in whole, so a failure leaves the
    old corpus untouched.
    """
    root = corpus_dir() if root is None else root
    docs = _documents()
    root.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".corpus-", dir=root.parent))
    try:
        rows: list[ManifestRow] = []
        for row, text in docs:
            path = staging / row.file
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            rows.append(ManifestRow(row.id, row.kind, row.algorithm, row.params, row.edges, row.file,
                                    sha256_of(path)))
            progress(row.id)
        manifest = {"format": CORPUS_FORMAT, "version": 1, "corpus": CORPUS_VERSION,
                    "vectors": [r.to_json() for r in rows]}
        (staging / MANIFEST).write_text(dumps(manifest), encoding="utf-8")
        if root.exists():
            shutil.rmtree(root)
        staging.rename(root)
    finally:
        if staging.exists():
            shutil.rmtree(staging)
    return rows


@dataclass(frozen=True)
class Problem:
    """One vector that failed verification, and why."""

    id: str
    message: str


def _replay(e: Entry, v: KnownAnswerVector) -> list[Problem]:
    with TapeReplay(v.tape, v.draw_tolerance.relative, v.draw_tolerance.absolute) as replay:
        got = run_inputs(e, v.params, v.inputs, replay)
    for t, (want, have) in enumerate(zip(v.expected, got, strict=True), start=1):
        diff = compare(want, have, v.tolerance)
        if diff is not None:
            return [Problem(v.id, f"step {t}: {diff}")]
    return []


def verify(root: Path | None = None, progress: Callable[[str], None] = lambda _: None) -> list[Problem]:
    """Check every checksum and replay every vector on the reference; the problems found (empty: all good)."""
    problems: list[Problem] = []
    rows = load_manifest(root)
    for v in known_answer(root=root):
        try:
            problems += _replay(entry(v.algorithm), v)
        except Exception as exc:  # report every vector, do not stop at the first
            problems.append(Problem(v.id, f"{type(exc).__name__}: {exc}"))
        progress(v.id)
    ids = {v.id for v in known_answer(root=root)}
    for r in must_reject(root=root):
        e = entry(r.algorithm)
        try:
            if r.at == "init":
                if not _refused(lambda e=e, r=r: e.make(r.params, InsecureSeededNoise(0))):  # type: ignore[misc]
                    problems.append(Problem(r.id, "the reference accepts the parameters"))
                if r.then not in ids:
                    problems.append(Problem(r.id, f"'then' names no known-answer vector: {r.then!r}"))
            else:
                assert r.tape is not None
                problems += _replay_reject(e, r)
        except Exception as exc:
            problems.append(Problem(r.id, f"{type(exc).__name__}: {exc}"))
        progress(r.id)
    if len(rows) != len({row.id for row in rows}):
        problems.append(Problem("manifest", "duplicate ids"))
    return problems


def _replay_reject(e: Entry, r: MustRejectVector) -> list[Problem]:
    assert e.codec is not None and r.tape is not None
    codec = e.codec
    with TapeReplay(r.tape, r.draw_tolerance.relative, r.draw_tolerance.absolute) as replay:
        algorithm, valid = e.make(r.params, replay), e.params.validate(r.params)
        got = [codec.encode_release(algorithm.step(codec.decode_input(x, valid))) for x in r.before]
        if not _refused(lambda: algorithm.step(codec.decode_input(r.bad_input, valid))):
            return [Problem(r.id, f"the reference accepts the input {r.bad_input!r}")]
        got += [codec.encode_release(algorithm.step(codec.decode_input(x, valid))) for x in r.after]
    for t, (want, have) in enumerate(zip(r.expected, got, strict=True), start=1):
        diff = compare(want, have, r.tolerance)
        if diff is not None:
            return [Problem(r.id, f"accepted step {t}: {diff}")]
    return []
