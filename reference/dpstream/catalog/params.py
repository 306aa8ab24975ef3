"""Parameter schemas of the catalog: the papers' symbols in ASCII, with their rules.

A :class:`ParamSchema` is the one statement of which parameters an algorithm takes in the
conformance protocol and in the vectors (``epsilon``, ``rho``, ``T``, ``B``, ``D``, ``k``, ...).
It gives the JSON Schema shipped with the protocol (:meth:`ParamSchema.json_schema`) and checks a
parameter object the same way (:meth:`ParamSchema.validate`), raising
:class:`~dpstream.errors.DPStreamInputError` naming the parameter and the rule. The algorithms
check their parameters again in their constructors; the schema exists so that a program in
another language, and the harness, see the rules without reading Python.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from dpstream.catalog.codecs import is_json_number
from dpstream.errors import DPStreamInputError, require_integer_value

__all__ = ["Param", "ParamSchema", "boolean", "integer", "number", "positive", "string"]

JsonType = Literal["number", "integer", "boolean", "string", "array", "object"]

_MISSING: Any = object()


@dataclass(frozen=True)
class Param:
    """One parameter. ``default`` is used when the key is absent (only for optional parameters)."""

    name: str
    type: JsonType
    doc: str
    required: bool = True
    default: Any = None
    minimum: float | None = None
    exclusive_minimum: float | None = None
    maximum: float | None = None
    enum: tuple[Any, ...] | None = None
    items: Mapping[str, Any] | None = None
    """JSON Schema of the items of an ``array`` parameter."""

    def json_schema(self) -> dict[str, Any]:
        schema: dict[str, Any] = {"type": self.type, "description": self.doc}
        for key, value in (("minimum", self.minimum), ("exclusiveMinimum", self.exclusive_minimum),
                           ("maximum", self.maximum)):
            if value is not None:
                schema[key] = value
        if self.enum is not None:
            schema["enum"] = list(self.enum)
        if self.items is not None:
            schema["items"] = dict(self.items)
        if not self.required and self.default is not None:  # no default: the key is absent; null is no value
            schema["default"] = self.default
        return schema

    def check(self, value: Any) -> Any:
        """The value if it satisfies this parameter's rule, else :class:`DPStreamInputError`. JSON numbers are read by
        value: an integer parameter written ``4.0`` is the integer 4, and is returned as the int 4 (fractions,
        booleans and strings are refused)."""
        if self.enum is not None:
            if value not in self.enum or isinstance(value, bool) != isinstance(self.enum[0], bool):
                raise DPStreamInputError(self.name, f"must be one of {list(self.enum)}", value)
            return value
        if self.type in ("number", "integer"):
            if self.type == "integer" and (isinstance(value, bool) or not isinstance(value, int)):
                value = require_integer_value(self.name, value)  # JSON numbers by value: 4.0 is the integer 4
            if not is_json_number(value):  # a finite float or an int within the float range
                raise DPStreamInputError(self.name, "must be a finite number", value)
            if self.minimum is not None and value < self.minimum:
                raise DPStreamInputError(self.name, f"must be >= {self.minimum:g}", value)
            if self.exclusive_minimum is not None and not value > self.exclusive_minimum:
                raise DPStreamInputError(self.name, f"must be > {self.exclusive_minimum:g}", value)
            if self.maximum is not None and value > self.maximum:
                raise DPStreamInputError(self.name, f"must be <= {self.maximum:g}", value)
            return value
        expected: type | tuple[type, ...] = {"boolean": bool, "string": str, "array": list, "object": dict}[self.type]
        if not isinstance(value, expected):
            raise DPStreamInputError(self.name, f"must be a JSON {self.type}", value)
        return value


def number(name: str, doc: str, **rules: Any) -> Param:
    return Param(name, "number", doc, **rules)


def positive(name: str, doc: str, **rules: Any) -> Param:
    """A finite number > 0 (privacy parameters, scales)."""
    return Param(name, "number", doc, exclusive_minimum=0.0, **rules)


def integer(name: str, doc: str, minimum: int = 1, **rules: Any) -> Param:
    return Param(name, "integer", doc, minimum=minimum, **rules)


def boolean(name: str, doc: str, default: bool = False) -> Param:
    return Param(name, "boolean", doc, required=False, default=default)


def string(name: str, doc: str, choices: tuple[str, ...], default: str | None = None) -> Param:
    return Param(name, "string", doc, required=default is None, default=default, enum=choices)


@dataclass(frozen=True)
class ParamSchema:
    """The parameters of one algorithm, in the order the docs list them."""

    params: tuple[Param, ...]

    def __post_init__(self) -> None:
        names = [p.name for p in self.params]
        if len(set(names)) != len(names):
            raise ValueError(f"duplicate parameter names in {names}")

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.params)

    def json_schema(self) -> dict[str, Any]:
        """A JSON Schema (draft 2020-12) object schema: every key listed, unknown keys refused."""
        return {
            "type": "object",
            "properties": {p.name: p.json_schema() for p in self.params},
            "required": [p.name for p in self.params if p.required],
            "additionalProperties": False,
        }

    def validate(self, raw: object) -> dict[str, Any]:
        """The parameters with defaults filled in; refuses missing, unknown and invalid keys."""
        if not isinstance(raw, Mapping):
            raise DPStreamInputError("params", "must be a JSON object", raw)
        unknown = sorted(set(raw) - set(self.names))
        if unknown:
            raise DPStreamInputError("params", f"unknown parameter(s) {unknown}; expected {list(self.names)}", raw)
        out: dict[str, Any] = {}
        for p in self.params:
            value = raw.get(p.name, _MISSING)
            if value is _MISSING:
                if p.required:
                    raise DPStreamInputError(p.name, "is required", None)
                out[p.name] = p.default
            else:
                out[p.name] = p.check(value)
        return out
