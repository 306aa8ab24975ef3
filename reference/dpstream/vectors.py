"""Known-answer vectors: (component, parameters, input stream, noise tape, expected releases).

A vector lets another implementation check itself without running our code: feed
``inputs`` through your implementation of ``component`` with ``params``, drawing
noise from ``tape`` (site by site), and compare with ``expected``. The format is
documented in ``docs/tape-format.md`` (section "Known-answer vectors").

Our own tests recompute every expected release from the tape by the component's
closed form (its :class:`~dpstream.linear_model.LinearReleaseModel` or an
equivalent formula), so a vector never merely echoes the implementation.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dpstream.tape import Tape, TapeFormatError

__all__ = ["VECTOR_FORMAT", "VECTOR_VERSION", "KnownAnswerVector"]

VECTOR_FORMAT = "dpstream-known-answer"
VECTOR_VERSION = 1


@dataclass(frozen=True)
class KnownAnswerVector:
    """One known-answer vector. ``inputs`` and ``expected`` are JSON values, one per time step."""

    component: str
    params: dict[str, Any]
    inputs: list[Any]
    tape: Tape
    expected: list[Any]
    description: str = ""
    meta: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "format": VECTOR_FORMAT,
            "version": VECTOR_VERSION,
            "component": self.component,
            "description": self.description,
            "params": self.params,
            "inputs": self.inputs,
            "expected": self.expected,
            "meta": self.meta,
            "tape": self.tape.to_json(),
        }

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_json(), indent=1, allow_nan=False) + "\n", encoding="utf-8")

    @classmethod
    def from_json(cls, doc: Any) -> KnownAnswerVector:
        if not isinstance(doc, dict) or doc.get("format") != VECTOR_FORMAT:
            raise TapeFormatError(f"not a {VECTOR_FORMAT} document")
        if doc.get("version") != VECTOR_VERSION:
            raise TapeFormatError(f"unsupported vector version {doc.get('version')!r}")
        allowed = {"format", "version", "component", "description", "params", "inputs", "expected", "meta", "tape"}
        unknown = set(doc) - allowed
        if unknown:
            raise TapeFormatError(f"unknown top-level keys {sorted(unknown)}")
        for key in ("component", "params", "inputs", "expected", "tape"):
            if key not in doc:
                raise TapeFormatError(f"known-answer vector lacks {key!r}")
        # the same types as docs/tape-schema.json ("vector")
        if not isinstance(doc["component"], str) or not doc["component"]:
            raise TapeFormatError("component must be a non-empty string (the algorithm's anchor)")
        for key, kind, name in (("params", dict, "an object"), ("inputs", list, "a list"),
                                ("expected", list, "a list"), ("meta", dict, "an object")):
            if key in doc and not isinstance(doc[key], kind):
                raise TapeFormatError(f"{key} must be {name}")
        if not isinstance(doc.get("description", ""), str):
            raise TapeFormatError("description must be a string")
        if len(doc["inputs"]) != len(doc["expected"]):
            raise TapeFormatError("inputs and expected must have one entry per time step")
        return cls(
            component=str(doc["component"]),
            params=dict(doc["params"]),
            inputs=list(doc["inputs"]),
            tape=Tape.from_json(doc["tape"]),
            expected=list(doc["expected"]),
            description=str(doc.get("description", "")),
            meta=dict(doc.get("meta", {})),
        )

    @classmethod
    def load(cls, path: str | Path) -> KnownAnswerVector:
        return cls.from_json(json.loads(Path(path).read_text(encoding="utf-8")))
