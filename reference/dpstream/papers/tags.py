"""Line tags in source code: which printed lines the code cites, and which tags are wrong.

Code cites a printed line with a comment holding the line's anchor and label in brackets:
``[001-alg5 L9]`` after the statement of line L9 of 001-alg5, a range ``[001-alg7 L23-L26]``,
or a transcriber's label ``[002-alg1 u3]`` for boxes printed without numbers.

Only tags in comments count as citations (found with :mod:`tokenize`, so a ``#`` inside a
string is not a comment). Every bracket of the form ``[<anchor> ...]`` anywhere in a file,
comment or string, is checked: the anchor must be an algorithm of the transcription and the
labels must lie in its box (a typo such as line L99 of 001-alg5 is reported). A range cites every line of the
box between its ends.
"""

from __future__ import annotations

import io
import re
import tokenize
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dpstream.papers import Algorithm, algorithms

__all__ = ["AlgorithmCoverage", "CoverageReport", "Problem", "Tag", "cited_lines", "coverage", "scan_file"]

# any bracket that starts like a tag; its inside is then parsed strictly
_BRACKET = re.compile(r"\[(?P<anchor>\d{3}-alg\d+)(?P<rest>[^\]\n]*)\]")
_LABELS = re.compile(r"^ (?P<p1>[Lu])(?P<n1>\d+)(?:-(?P<p2>[Lu])?(?P<n2>\d+))?$")


@dataclass(frozen=True)
class Tag:
    """One ``[anchor labels]`` bracket in a file; ``in_comment`` says whether it cites (comments only)."""

    path: Path
    lineno: int
    text: str
    anchor: str
    in_comment: bool


@dataclass(frozen=True)
class Problem:
    """A tag that cites nothing that exists: unknown anchor, label outside the box, malformed."""

    tag: Tag
    reason: str

    def __str__(self) -> str:
        return f"{self.tag.path}:{self.tag.lineno}: {self.tag.text}: {self.reason}"


def _cited(tag: Tag, known: dict[str, Algorithm]) -> tuple[list[str], str | None]:
    """The labels ``tag`` cites, or the reason it is wrong."""
    alg = known.get(tag.anchor)
    if alg is None:
        return [], f"no algorithm {tag.anchor} in the transcription"
    inner = tag.text[1 + len(tag.anchor):-1]
    m = _LABELS.match(inner)
    if m is None:
        return [], "expected ' L<n>', ' u<n>' or a range ' L<a>-L<b>'"
    prefix, last = alg.prefix, int(alg.last_printed[1:])
    first_n = int(m["n1"])
    last_n = int(m["n2"]) if m["n2"] is not None else first_n
    if m["p1"] != prefix or (m["p2"] is not None and m["p2"] != prefix):
        return [], f"{tag.anchor} labels its lines {prefix}1..{alg.last_printed}"
    if not 1 <= first_n <= last_n <= last:
        return [], f"{tag.anchor} has lines {prefix}1..{alg.last_printed}"
    return [f"{prefix}{n}" for n in range(first_n, last_n + 1)], None


def _comments(text: str) -> dict[int, str]:
    """Comment text by line number (1-based)."""
    out: dict[int, str] = {}
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.COMMENT:
                out[tok.start[0]] = tok.string
    except (tokenize.TokenError, SyntaxError):
        return {i: line for i, line in enumerate(text.splitlines(), start=1) if "#" in line}
    return out


def scan_file(path: Path) -> list[Tag]:
    """Every tag-like bracket of a Python file, with whether it sits in a comment."""
    text = path.read_text(encoding="utf-8")
    comments = _comments(text)
    tags: list[Tag] = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        if "-alg" not in line:
            continue
        comment = comments.get(lineno, "")
        for m in _BRACKET.finditer(line):
            tags.append(Tag(path, lineno, m.group(0), m["anchor"], m.group(0) in comment))
    return tags


def cited_lines(path: Path) -> dict[int, tuple[str, ...]]:
    """The printed lines each source line of ``path`` carries out (``{12: ("001-alg5 L9",)}``): a tag in a comment at
    the end of a statement cites that statement's line; a tag on a comment line of its own cites the next line of
    code (the statement it heads). For execution coverage: which printed lines a run reached."""
    known = algorithms()
    lines = path.read_text(encoding="utf-8").splitlines()
    out: dict[int, list[str]] = {}
    pending: list[str] = []
    tags_by_line: dict[int, list[str]] = {}
    for tag in scan_file(path):
        labels, reason = _cited(tag, known)
        if reason is None and tag.in_comment:
            tags_by_line.setdefault(tag.lineno, []).extend(f"{tag.anchor} {label}" for label in labels)
    for lineno, line in enumerate(lines, start=1):
        stripped = line.strip()
        cited = tags_by_line.get(lineno, [])
        if not stripped or stripped.startswith("#"):
            pending.extend(cited)
            continue
        if cited or pending:
            out.setdefault(lineno, []).extend([*pending, *cited])
            pending = []
    return {k: tuple(dict.fromkeys(v)) for k, v in out.items()}


def _python_files(roots: Iterable[Path]) -> list[Path]:
    files: list[Path] = []
    for root in roots:
        files.extend([root] if root.is_file() else sorted(root.rglob("*.py")))
    return files


@dataclass(frozen=True)
class AlgorithmCoverage:
    """Which of an algorithm's printed lines are cited by a comment tag."""

    algorithm: Algorithm
    cited: frozenset[str]

    @property
    def missing(self) -> tuple[str, ...]:
        return tuple(label for label in self.algorithm.labels if label not in self.cited)

    @property
    def need(self) -> int:
        return len(self.algorithm.lines)

    @property
    def have(self) -> int:
        return self.need - len(self.missing)


@dataclass(frozen=True)
class CoverageReport:
    """Coverage of every algorithm, and the tags that cite nothing."""

    algorithms: tuple[AlgorithmCoverage, ...]
    problems: tuple[Problem, ...]

    @property
    def need(self) -> int:
        return sum(a.need for a in self.algorithms)

    @property
    def have(self) -> int:
        return sum(a.have for a in self.algorithms)

    @property
    def percent(self) -> float:
        return 100.0 * self.have / self.need if self.need else 100.0

    @property
    def complete(self) -> bool:
        """Every printed line cited and no wrong tag."""
        return self.have == self.need and not self.problems

    def as_json(self) -> dict[str, Any]:
        return {
            "need": self.need,
            "have": self.have,
            "coverage_pct": round(self.percent, 2),
            "algorithms": [{"anchor": a.algorithm.anchor, "title": a.algorithm.title, "need": a.need,
                            "have": a.have, "missing": list(a.missing)} for a in self.algorithms],
            "problems": [{"path": str(p.tag.path), "line": p.tag.lineno, "tag": p.tag.text, "reason": p.reason}
                         for p in self.problems],
        }


def coverage(roots: Sequence[Path]) -> CoverageReport:
    """Scan every ``*.py`` under ``roots``: comment tags cite lines; every tag-like bracket is checked."""
    known = algorithms()
    cited: dict[str, set[str]] = {anchor: set() for anchor in known}
    problems: list[Problem] = []
    for path in _python_files(roots):
        for tag in scan_file(path):
            labels, reason = _cited(tag, known)
            if reason is not None:
                problems.append(Problem(tag, reason))
            elif tag.in_comment:
                cited[tag.anchor].update(labels)
    rows = tuple(AlgorithmCoverage(alg, frozenset(cited[anchor])) for anchor, alg in known.items())
    return CoverageReport(rows, tuple(problems))
