"""The two vector documents of the corpus: known-answer and must-reject (format version 2).

A **known-answer vector** lets another implementation check itself without running our code: build
``algorithm`` with ``params``, feed ``inputs`` (JSON INPUTs of the conformance protocol) drawing
noise from ``tape`` site by site, and compare every release with ``expected`` within ``tolerance``.

A **must-reject vector** names an invalid parameter object (``at == "init"``) or an invalid input
sent after valid ones (``at == "step"``): the implementation must answer with an error and stay
usable. For step rejections, ``before`` and ``after`` are valid inputs and ``expected`` holds the
releases of ``before + after`` under ``tape``, i.e. of a run that never saw the bad input. For init
rejections, ``then`` names a known-answer vector to run afterwards.

The formats are documented in ``docs/tape-format.md`` and specified by ``dpstream/vectors/schema.json``.
Our tests recompute expected releases from the tape by independent closed forms or from-scratch
renderings of the printed boxes, so a vector never merely echoes the implementation.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from dpstream.catalog.codecs import Tolerance
from dpstream.tape import Tape, TapeFormatError

__all__ = [
    "MUST_REJECT_FORMAT",
    "MUST_REJECT_VERSION",
    "VECTOR_FORMAT",
    "VECTOR_VERSION",
    "KnownAnswerVector",
    "MustRejectVector",
    "dumps",
]

VECTOR_FORMAT = "dpstream-known-answer"
VECTOR_VERSION = 2
MUST_REJECT_FORMAT = "dpstream-must-reject"
MUST_REJECT_VERSION = 1


def dumps(doc: Any) -> str:
    """The one JSON layout of corpus files (stable, so regeneration is byte-identical)."""
    return json.dumps(doc, indent=1, allow_nan=False, ensure_ascii=False) + "\n"


def _require(doc: Any, fmt: str, version: int, keys: set[str], required: tuple[str, ...]) -> dict[str, Any]:
    if not isinstance(doc, dict) or doc.get("format") != fmt:
        raise TapeFormatError(f"not a {fmt} document")
    if doc.get("version") != version:
        raise TapeFormatError(f"unsupported {fmt} version {doc.get('version')!r} (this reader knows {version})")
    unknown = set(doc) - keys
    if unknown:
        raise TapeFormatError(f"unknown top-level keys {sorted(unknown)}")
    for key in required:
        if key not in doc:
            raise TapeFormatError(f"{fmt} document lacks {key!r}")
    if not isinstance(doc["algorithm"], str) or not doc["algorithm"]:
        raise TapeFormatError("algorithm must be a non-empty string (the algorithm's anchor)")
    if not isinstance(doc["id"], str) or not doc["id"].startswith(doc["algorithm"] + "/"):
        raise TapeFormatError("id must be '<algorithm>/<name>'")
    for key, kind, name in (("params", dict, "an object"), ("meta", dict, "an object"),
                            ("tolerance", dict, "an object"), ("description", str, "a string"),
                            ("reason", str, "a string"), ("edges", list, "a list"), ("then", str, "a string")):
        if key in doc and not isinstance(doc[key], kind):
            raise TapeFormatError(f"{key} must be {name}")
    tolerance = doc.get("tolerance", {"absolute": 0.0, "relative": 0.0})
    if set(tolerance) != {"absolute", "relative"} or not all(
            isinstance(v, int | float) and not isinstance(v, bool) and v >= 0 for v in tolerance.values()):
        raise TapeFormatError("tolerance must be {absolute, relative}, two numbers >= 0")
    return doc


@dataclass(frozen=True)
class KnownAnswerVector:
    """One known-answer vector. ``inputs`` and ``expected`` are JSON values, one per time step."""

    id: str
    algorithm: str
    params: dict[str, Any]
    inputs: list[Any]
    tape: Tape
    expected: list[Any]
    tolerance: Tolerance = field(default_factory=Tolerance)
    edges: tuple[str, ...] = ()
    description: str = ""
    meta: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "format": VECTOR_FORMAT,
            "version": VECTOR_VERSION,
            "id": self.id,
            "algorithm": self.algorithm,
            "description": self.description,
            "edges": list(self.edges),
            "params": self.params,
            "inputs": self.inputs,
            "expected": self.expected,
            "tolerance": self.tolerance.to_json(),
            "meta": self.meta,
            "tape": self.tape.to_json(),
        }

    def save(self, path: str | Path) -> None:
        Path(path).write_text(dumps(self.to_json()), encoding="utf-8")

    @classmethod
    def from_json(cls, doc: Any) -> KnownAnswerVector:
        keys = {"format", "version", "id", "algorithm", "description", "edges", "params", "inputs", "expected",
                "tolerance", "meta", "tape"}
        doc = _require(doc, VECTOR_FORMAT, VECTOR_VERSION, keys, ("id", "algorithm", "params", "inputs", "expected",
                                                                   "tape"))
        for key in ("inputs", "expected"):
            if not isinstance(doc[key], list):
                raise TapeFormatError(f"{key} must be a list")
        if len(doc["inputs"]) != len(doc["expected"]):
            raise TapeFormatError("inputs and expected must have one entry per time step")
        return cls(
            id=doc["id"], algorithm=doc["algorithm"], params=dict(doc["params"]), inputs=list(doc["inputs"]),
            tape=Tape.from_json(doc["tape"]), expected=list(doc["expected"]),
            tolerance=Tolerance.from_json(doc.get("tolerance", Tolerance().to_json())),
            edges=tuple(doc.get("edges", ())), description=str(doc.get("description", "")),
            meta=dict(doc.get("meta", {})),
        )

    @classmethod
    def load(cls, path: str | Path) -> KnownAnswerVector:
        return cls.from_json(json.loads(Path(path).read_text(encoding="utf-8")))


@dataclass(frozen=True)
class MustRejectVector:
    """One must-reject vector (see the module docstring)."""

    id: str
    algorithm: str
    params: dict[str, Any]
    at: Literal["init", "step"]
    reason: str
    before: list[Any] = field(default_factory=list)
    bad_input: Any = None
    after: list[Any] = field(default_factory=list)
    expected: list[Any] = field(default_factory=list)
    tape: Tape | None = None
    then: str = ""
    tolerance: Tolerance = field(default_factory=Tolerance)

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "format": MUST_REJECT_FORMAT, "version": MUST_REJECT_VERSION, "id": self.id,
            "algorithm": self.algorithm, "reason": self.reason, "at": self.at, "params": self.params,
        }
        if self.at == "init":
            doc["then"] = self.then
        else:
            doc.update({"before": self.before, "bad_input": self.bad_input, "after": self.after,
                        "expected": self.expected, "tolerance": self.tolerance.to_json(),
                        "tape": self.tape.to_json() if self.tape is not None else None})
        return doc

    def save(self, path: str | Path) -> None:
        Path(path).write_text(dumps(self.to_json()), encoding="utf-8")

    @classmethod
    def from_json(cls, doc: Any) -> MustRejectVector:
        keys = {"format", "version", "id", "algorithm", "reason", "at", "params", "then", "before", "bad_input",
                "after", "expected", "tolerance", "tape"}
        doc = _require(doc, MUST_REJECT_FORMAT, MUST_REJECT_VERSION, keys, ("id", "algorithm", "reason", "at",
                                                                             "params"))
        at = doc["at"]
        if at == "init":
            if not isinstance(doc.get("then"), str):
                raise TapeFormatError("an init rejection names the known-answer vector to run next ('then')")
            return cls(doc["id"], doc["algorithm"], dict(doc["params"]), "init", str(doc["reason"]), then=doc["then"])
        if at != "step":
            raise TapeFormatError("at must be 'init' or 'step'")
        for key in ("before", "after", "expected", "tape"):
            if key not in doc:
                raise TapeFormatError(f"a step rejection needs {key!r}")
        if len(doc["expected"]) != len(doc["before"]) + len(doc["after"]):
            raise TapeFormatError("expected must hold one release per input of before + after")
        return cls(doc["id"], doc["algorithm"], dict(doc["params"]), "step", str(doc["reason"]),
                   before=list(doc["before"]), bad_input=doc["bad_input"], after=list(doc["after"]),
                   expected=list(doc["expected"]), tape=Tape.from_json(doc["tape"]),
                   tolerance=Tolerance.from_json(doc.get("tolerance", Tolerance().to_json())))

    @classmethod
    def load(cls, path: str | Path) -> MustRejectVector:
        return cls.from_json(json.loads(Path(path).read_text(encoding="utf-8")))
