"""The five papers behind dpstream and every printed line of their 25 algorithm boxes.

The data is ``algorithms.json`` next to this module: per paper its title, authors, year and
arXiv reference; per algorithm (anchor ``001-alg5``, ...) its title and the printed lines code
must cite, each with a short paraphrase in our own words (notation, not the papers' text; the
papers themselves are the authority). ``L<n>`` is a printed line number, ``u<n>`` a label added
for boxes printed without numbers.

>>> alg = algorithm("001-alg5")
>>> alg.paper.arxiv, alg.line("L9").tag
('2401.14577', '[001-alg5 L9]')

:mod:`dpstream.papers.tags` finds the line tags in the comments of source code and reports which
printed lines are not cited (``tools/trace_coverage.py`` is its command line).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from dpstream.errors import DPStreamInputError

__all__ = ["Algorithm", "Paper", "PrintedLine", "algorithm", "algorithms", "paper", "papers", "transcription"]

DATA_FILE = "algorithms.json"


@dataclass(frozen=True)
class Paper:
    """One of the five papers (``id`` is ``"000"`` .. ``"004"``)."""

    id: str
    title: str
    authors: tuple[str, ...]
    year: int | None
    arxiv: str | None
    venue: str
    note: str
    source_file: str
    source_sha256: str

    @property
    def arxiv_url(self) -> str | None:
        return None if self.arxiv is None else f"https://arxiv.org/abs/{self.arxiv}"


@dataclass(frozen=True)
class PrintedLine:
    """A printed line of an algorithm box: its label (``L9``, ``u12``) and what it does, paraphrased."""

    anchor: str
    label: str
    does: str

    @property
    def tag(self) -> str:
        """How code cites it in a comment, e.g. ``[001-alg5 L9]``."""
        return f"[{self.anchor} {self.label}]"

    @property
    def number(self) -> int:
        return int(self.label[1:])


@dataclass(frozen=True)
class Algorithm:
    """An algorithm box: anchor, printed title, paper and the lines code must cite (in printed order)."""

    anchor: str
    title: str
    paper: Paper
    lines: tuple[PrintedLine, ...]
    last_printed: str
    """The box's last label, end-of-loop lines included (they may be cited but need not be)."""

    @property
    def labels(self) -> tuple[str, ...]:
        return tuple(line.label for line in self.lines)

    @property
    def prefix(self) -> str:
        """``"L"`` for printed line numbers, ``"u"`` for the labels of unnumbered boxes."""
        return self.last_printed[0]

    def line(self, label: str) -> PrintedLine:
        for line in self.lines:
            if line.label == label:
                return line
        raise DPStreamInputError("label", f"not a line of {self.anchor} that code must cite", label)


@cache
def transcription() -> dict[str, Any]:
    """The raw JSON document (format ``dpstream-papers/1``), including ``derived_from`` checksums."""
    text = resources.files(__package__).joinpath(DATA_FILE).read_text(encoding="utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


@cache
def papers() -> dict[str, Paper]:
    """All papers by id, in order."""
    out: dict[str, Paper] = {}
    for pid, p in transcription()["papers"].items():
        out[pid] = Paper(pid, p["title"], tuple(p["authors"]), p["year"], p["arxiv"], p["venue"], p["note"],
                         p["source_file"], p["source_sha256"])
    return out


@cache
def algorithms() -> dict[str, Algorithm]:
    """All algorithms by anchor, in the papers' order (000-alg1 .. 004-alg4)."""
    out: dict[str, Algorithm] = {}
    by_id = papers()
    for anchor, a in transcription()["algorithms"].items():
        lines = tuple(PrintedLine(anchor, x["line"], x["does"]) for x in a["lines"])
        out[anchor] = Algorithm(anchor, a["title"], by_id[a["paper"]], lines, a["last_printed"])
    return out


def paper(pid: str) -> Paper:
    """The paper ``"000"`` .. ``"004"``."""
    try:
        return papers()[pid]
    except KeyError:
        raise DPStreamInputError("paper", f"must be one of {sorted(papers())}", pid) from None


def algorithm(anchor: str) -> Algorithm:
    """The algorithm with this anchor, e.g. ``algorithm("001-alg5")``."""
    try:
        return algorithms()[anchor]
    except KeyError:
        raise DPStreamInputError("anchor", "not an algorithm of the transcription (000-alg1 .. 004-alg4)",
                                 anchor) from None
