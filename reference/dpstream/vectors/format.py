"""The two vector documents of the corpus: known-answer (format version 3) and must-reject (version 2).

A **known-answer vector** lets another implementation check itself without running our code: build
``algorithm`` with ``params``, feed ``inputs`` (JSON INPUTs of the conformance protocol) drawing
noise from ``tape`` site by site (its draw parameters within ``draw_tolerance``), and compare every release with
``expected`` within ``tolerance``. Both tolerances come from the entry's error model
(:mod:`dpstream.catalog.error_model`): what rounding can explain for this case, and nothing more.

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
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from dpstream.catalog.codecs import Tolerance
from dpstream.files import write_atomically
from dpstream.tape import Tape, TapeFormatError

__all__ = [
    "LEGACY_DRAW_TOLERANCE",
    "MUST_REJECT_FORMAT",
    "MUST_REJECT_VERSION",
    "VECTOR_FORMAT",
    "VECTOR_VERSION",
    "KnownAnswerVector",
    "MustRejectVector",
    "dumps",
]

VECTOR_FORMAT = "dpstream-known-answer"
VECTOR_VERSION = 3
MUST_REJECT_FORMAT = "dpstream-must-reject"
MUST_REJECT_VERSION = 2
READABLE_VERSIONS = {VECTOR_FORMAT: (2, 3), MUST_REJECT_FORMAT: (1, 2)}
"""Versions the readers accept: the earlier ones have no ``draw_tolerance`` and are read with the tolerance they
were written for (:data:`LEGACY_DRAW_TOLERANCE`)."""
LEGACY_DRAW_TOLERANCE = Tolerance(0.0, 1e-12)
"""How known-answer vectors of version 2 (must-reject 1) compared draw parameters: relative 1e-12."""


def dumps(doc: Any) -> str:
    """The one JSON layout of corpus files (stable, so regeneration is byte-identical)."""
    return json.dumps(doc, indent=1, allow_nan=False, ensure_ascii=False) + "\n"


def _require(doc: Any, fmt: str, version: int, keys: set[str], required: tuple[str, ...]) -> dict[str, Any]:
    if not isinstance(doc, dict) or doc.get("format") != fmt:
        raise TapeFormatError(f"not a {fmt} document")
    if doc.get("version") not in READABLE_VERSIONS[fmt]:
        raise TapeFormatError(f"unsupported {fmt} version {doc.get('version')!r} (this reader knows "
                              f"{', '.join(map(str, READABLE_VERSIONS[fmt]))})")
    if doc.get("version") != version and "draw_tolerance" in doc:
        raise TapeFormatError(f"draw_tolerance needs {fmt} version {version}")
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
                            ("tolerance", dict, "an object"), ("draw_tolerance", dict, "an object"),
                            ("description", str, "a string"),
                            ("reason", str, "a string"), ("edges", list, "a list"), ("then", str, "a string")):
        if key in doc and not isinstance(doc[key], kind):
            raise TapeFormatError(f"{key} must be {name}")
    for key in ("tolerance", "draw_tolerance"):
        tolerance = doc.get(key, {"absolute": 0.0, "relative": 0.0})
        if set(tolerance) != {"absolute", "relative"} or not all(
                isinstance(v, int | float) and not isinstance(v, bool) and v >= 0 for v in tolerance.values()):
            raise TapeFormatError(f"{key} must be {{absolute, relative}}, two numbers >= 0")
    return doc


def _draw_tolerance(doc: Mapping[str, Any], current: int) -> Tolerance:
    if doc.get("version") != current:
        return LEGACY_DRAW_TOLERANCE
    if "draw_tolerance" not in doc:
        raise TapeFormatError("a vector lacks 'draw_tolerance' (the tolerance of its draw parameters)")
    return Tolerance.from_json(doc["draw_tolerance"])


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
    draw_tolerance: Tolerance = LEGACY_DRAW_TOLERANCE
    """Float draw parameters (scales, scores, cell bounds) match within ``absolute + relative * |tape's|``."""

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
            "draw_tolerance": self.draw_tolerance.to_json(),
            "meta": self.meta,
            "tape": self.tape.to_json(),
        }

    def save(self, path: str | Path) -> None:
        write_atomically(path, dumps(self.to_json()))

    @classmethod
    def from_json(cls, doc: Any) -> KnownAnswerVector:
        keys = {"format", "version", "id", "algorithm", "description", "edges", "params", "inputs", "expected",
                "tolerance", "draw_tolerance", "meta", "tape"}
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
            meta=dict(doc.get("meta", {})), draw_tolerance=_draw_tolerance(doc, VECTOR_VERSION),
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
    draw_tolerance: Tolerance = LEGACY_DRAW_TOLERANCE

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
                        "draw_tolerance": self.draw_tolerance.to_json(),
                        "tape": self.tape.to_json() if self.tape is not None else None})
        return doc

    def save(self, path: str | Path) -> None:
        write_atomically(path, dumps(self.to_json()))

    @classmethod
    def from_json(cls, doc: Any) -> MustRejectVector:
        keys = {"format", "version", "id", "algorithm", "reason", "at", "params", "then", "before", "bad_input",
                "after", "expected", "tolerance", "draw_tolerance", "tape"}
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
                   tolerance=Tolerance.from_json(doc.get("tolerance", Tolerance().to_json())),
                   draw_tolerance=_draw_tolerance(doc, MUST_REJECT_VERSION))

    @classmethod
    def load(cls, path: str | Path) -> MustRejectVector:
        return cls.from_json(json.loads(Path(path).read_text(encoding="utf-8")))
