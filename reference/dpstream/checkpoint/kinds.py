"""The kinds of values in a checkpoint state: how each is written in JSON, read back, checked and described.

Every parameter and variable of a documented state (:mod:`dpstream.checkpoint.spec`) has a kind. A kind writes
plain JSON a reader can follow (numbers, lists, objects with fixed keys), reads it back into exactly the Python
value the algorithm holds (float stays float, tuple stays tuple, a read-only array stays read-only) and refuses a
value that breaks its rule (``t: must be an integer >= 0``) with a :class:`CheckpointError` naming the path. Its
``doc`` is the type column of the state tables (docs/checkpoint-states.md).

Floats are written as JSON numbers (the shortest text that reads back to the same double; finite only), arrays as
``{"shape": [...], "values": [...]}`` with the values flat in C order, maps with non-string keys (a vertex of T, a
subtree) as lists of ``[key, value]`` pairs in the map's order.
"""

from __future__ import annotations

import enum
import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from dpstream.checkpoint.names import CheckpointError

if TYPE_CHECKING:
    from dpstream.checkpoint.engine import Reader, Writer

__all__ = [
    "BOOL",
    "COUNT",
    "INT",
    "NODE",
    "NUMBER",
    "POSITIVE",
    "REAL",
    "STR",
    "Array",
    "Component",
    "ComponentList",
    "ComponentPairs",
    "EnumOf",
    "Function",
    "Int",
    "Kind",
    "ListOf",
    "Nullable",
    "Pairs",
    "Real",
    "Record",
    "SetOf",
    "Str",
    "TupleOf",
    "Variant",
    "fail",
]


def fail(path: str, rule: str, value: object = None) -> CheckpointError:
    """The refusal of a value at ``path`` (raise it)."""
    return CheckpointError(f"{path}: {rule}", _short(value))


def _short(value: object) -> object:
    text = repr(value)
    return value if len(text) <= 80 else text[:77] + "..."


class Kind:
    """One kind of value: ``encode`` (Python -> JSON), ``decode`` (JSON -> Python, checked), ``doc`` (for the docs)."""

    doc: str = ""

    def encode(self, value: Any, w: Writer, path: str) -> Any:
        raise NotImplementedError

    def decode(self, raw: Any, r: Reader, path: str) -> Any:
        raise NotImplementedError


# --- numbers, flags, text ---------------------------------------------------------------------------------------

def _is_int(value: Any) -> bool:
    return isinstance(value, int | np.integer) and not isinstance(value, bool | np.bool_)


@dataclass(frozen=True)
class Int(Kind):
    """A Python int in [low, high] (``None``: unbounded)."""

    low: int | None = None
    high: int | None = None

    @property
    def doc(self) -> str:  # type: ignore[override]
        if self.low is not None and self.high is not None:
            return f"integer in [{self.low}, {self.high}]"
        if self.low is not None:
            return f"integer >= {self.low}"
        return "integer"

    def encode(self, value: Any, w: Writer, path: str) -> Any:
        if not _is_int(value):
            raise fail(path, "expected an integer", value)
        return int(value)

    def decode(self, raw: Any, r: Reader, path: str) -> Any:
        if not _is_int(raw) or (self.low is not None and raw < self.low) or (self.high is not None and raw > self.high):
            raise fail(path, f"must be an {self.doc}", raw)
        return int(raw)


INT = Int()
COUNT = Int(0)


@dataclass(frozen=True)
class Real(Kind):
    """A finite float (written as a JSON number; an int in the file is read as the same float); with ``infinite``
    also +inf, written ``"inf"``."""

    positive: bool = False
    non_negative: bool = False
    infinite: bool = False

    @property
    def doc(self) -> str:  # type: ignore[override]
        text = "real > 0" if self.positive else "real >= 0" if self.non_negative else "real"
        return f"{text} or `\"inf\"`" if self.infinite else text

    def encode(self, value: Any, w: Writer, path: str) -> Any:
        if self.infinite and isinstance(value, float) and value == math.inf:
            return "inf"
        if not isinstance(value, float | int | np.floating | np.integer) or isinstance(value, bool | np.bool_) \
                or not math.isfinite(value):
            raise fail(path, "expected a finite real", value)
        return float(value)

    def decode(self, raw: Any, r: Reader, path: str) -> Any:
        if self.infinite and raw == "inf":
            return math.inf
        if not isinstance(raw, int | float) or isinstance(raw, bool) or not math.isfinite(raw) \
                or (self.positive and raw <= 0) or (self.non_negative and raw < 0):
            raise fail(path, f"must be a finite {self.doc}", raw)
        return float(raw)


REAL = Real()
POSITIVE = Real(positive=True)


class _Number(Kind):
    """An int or a float, kept as it is (releases of counters on integer inputs may be either)."""

    doc = "number"

    def encode(self, value: Any, w: Writer, path: str) -> Any:
        if _is_int(value):
            return int(value)
        return REAL.encode(value, w, path)

    def decode(self, raw: Any, r: Reader, path: str) -> Any:
        if isinstance(raw, int) and not isinstance(raw, bool):
            return raw
        return REAL.decode(raw, r, path)


NUMBER = _Number()


class _Bool(Kind):
    doc = "true or false"

    def encode(self, value: Any, w: Writer, path: str) -> Any:
        if not isinstance(value, bool | np.bool_):
            raise fail(path, "expected a bool", value)
        return bool(value)

    def decode(self, raw: Any, r: Reader, path: str) -> Any:
        if not isinstance(raw, bool):
            raise fail(path, "must be true or false", raw)
        return raw


BOOL = _Bool()


@dataclass(frozen=True)
class Str(Kind):
    """A string (one of ``choices`` when given)."""

    choices: tuple[str, ...] = ()

    @property
    def doc(self) -> str:  # type: ignore[override]
        return "one of " + ", ".join(f"`{c}`" for c in self.choices) if self.choices else "text"

    def encode(self, value: Any, w: Writer, path: str) -> Any:
        if not isinstance(value, str):
            raise fail(path, "expected a string", value)
        return value

    def decode(self, raw: Any, r: Reader, path: str) -> Any:
        if not isinstance(raw, str) or (self.choices and raw not in self.choices):
            raise fail(path, f"must be {self.doc}", raw)
        return raw


STR = Str()


@dataclass(frozen=True)
class EnumOf(Kind):
    """A member of a dpstream enum, written as its value (e.g. ``"general"``)."""

    cls: type[enum.Enum]

    @property
    def doc(self) -> str:  # type: ignore[override]
        return "one of " + ", ".join(f"`{m.value}`" for m in self.cls)

    def encode(self, value: Any, w: Writer, path: str) -> Any:
        if not isinstance(value, self.cls):
            raise fail(path, f"expected a {self.cls.__name__}", value)
        return value.value

    def decode(self, raw: Any, r: Reader, path: str) -> Any:
        for member in self.cls:
            if member.value == raw and type(member.value) is type(raw):
                return member
        raise fail(path, f"must be {self.doc}", raw)


# --- containers ---------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Nullable(Kind):
    """``null`` or a value of ``kind``."""

    kind: Kind

    @property
    def doc(self) -> str:  # type: ignore[override]
        return f"null or {self.kind.doc}"

    def encode(self, value: Any, w: Writer, path: str) -> Any:
        return None if value is None else self.kind.encode(value, w, path)

    def decode(self, raw: Any, r: Reader, path: str) -> Any:
        return None if raw is None else self.kind.decode(raw, r, path)


def _items(raw: Any, path: str) -> list[Any]:
    if not isinstance(raw, list):
        raise fail(path, "must be a list", type(raw).__name__)
    return raw


@dataclass(frozen=True)
class ListOf(Kind):
    """A list of values of ``kind``."""

    kind: Kind

    @property
    def doc(self) -> str:  # type: ignore[override]
        return f"list of ({self.kind.doc})"

    def encode(self, value: Any, w: Writer, path: str) -> Any:
        if not isinstance(value, list):
            raise fail(path, "expected a list", type(value).__name__)
        return [self.kind.encode(v, w, f"{path}[{i}]") for i, v in enumerate(value)]

    def decode(self, raw: Any, r: Reader, path: str) -> Any:
        return [self.kind.decode(v, r, f"{path}[{i}]") for i, v in enumerate(_items(raw, path))]


@dataclass(frozen=True)
class TupleOf(Kind):
    """A tuple of values of ``kind`` (written as a list)."""

    kind: Kind

    @property
    def doc(self) -> str:  # type: ignore[override]
        return f"tuple of ({self.kind.doc})"

    def encode(self, value: Any, w: Writer, path: str) -> Any:
        if not isinstance(value, tuple):
            raise fail(path, "expected a tuple", type(value).__name__)
        return [self.kind.encode(v, w, f"{path}[{i}]") for i, v in enumerate(value)]

    def decode(self, raw: Any, r: Reader, path: str) -> Any:
        return tuple(self.kind.decode(v, r, f"{path}[{i}]") for i, v in enumerate(_items(raw, path)))


@dataclass(frozen=True)
class SetOf(Kind):
    """A set or frozenset of values of ``kind``, written as a sorted list (no element twice)."""

    kind: Kind
    frozen: bool = True

    @property
    def doc(self) -> str:  # type: ignore[override]
        return f"set of ({self.kind.doc})"

    def encode(self, value: Any, w: Writer, path: str) -> Any:
        if not isinstance(value, frozenset if self.frozen else set):
            raise fail(path, "expected a set", type(value).__name__)
        items = [self.kind.encode(v, w, f"{path}{{}}") for v in value]
        return sorted(items, key=lambda x: json.dumps(x, sort_keys=True))

    def decode(self, raw: Any, r: Reader, path: str) -> Any:
        items = [self.kind.decode(v, r, f"{path}[{i}]") for i, v in enumerate(_items(raw, path))]
        out = frozenset(items) if self.frozen else set(items)
        if len(out) != len(items):
            raise fail(path, "holds an element twice", raw)
        return out


@dataclass(frozen=True)
class Pairs(Kind):
    """A dict, written as ``[[key, value], ...]`` in its order (keys of any kind; no key twice)."""

    key: Kind
    value: Kind

    @property
    def doc(self) -> str:  # type: ignore[override]
        return f"[key, value] pairs: key {self.key.doc}; value {self.value.doc}"

    def encode(self, value: Any, w: Writer, path: str) -> Any:
        if not isinstance(value, Mapping):
            raise fail(path, "expected a mapping", type(value).__name__)
        return [[self.key.encode(k, w, f"{path}{{key}}"), self.value.encode(v, w, f"{path}[{k!r}]")]
                for k, v in value.items()]

    def decode(self, raw: Any, r: Reader, path: str) -> Any:
        out: dict[Any, Any] = {}
        for i, pair in enumerate(_items(raw, path)):
            if not isinstance(pair, list) or len(pair) != 2:
                raise fail(f"{path}[{i}]", "must be a [key, value] pair", pair)
            key = self.key.decode(pair[0], r, f"{path}[{i}][0]")
            if key in out:
                raise fail(f"{path}[{i}][0]", "is a key given twice", pair[0])
            out[key] = self.value.decode(pair[1], r, f"{path}[{i}][1]")
        return out


class _Node(Kind):
    """A vertex of the tree T: its path of child indices from the root (the root is ``[]``)."""

    doc = "vertex of T"

    def encode(self, value: Any, w: Writer, path: str) -> Any:
        if not isinstance(value, tuple) or not all(_is_int(i) for i in value):
            raise fail(path, "expected a vertex (a tuple of ints)", value)
        return [int(i) for i in value]

    def decode(self, raw: Any, r: Reader, path: str) -> Any:
        items = _items(raw, path)
        if not all(isinstance(i, int) and not isinstance(i, bool) and i >= 0 for i in items):
            raise fail(path, "a vertex is a list of child indices >= 0", raw)
        return tuple(items)


NODE = _Node()


@dataclass(frozen=True)
class Array(Kind):
    """A numpy array of ``dtype``, written as ``{"shape": [...], "values": [...]}`` (values flat, C order).

    ``ndim``: the number of dimensions it must have (None: any); ``writeable``: whether the algorithm keeps it
    writeable (the flag is the algorithm's convention, restored as such, not stored).
    """

    dtype: str
    ndim: int | None = None
    writeable: bool = True

    @property
    def doc(self) -> str:  # type: ignore[override]
        dims = "" if self.ndim is None else f"{self.ndim}-d "
        return f"{dims}{self.dtype} array"

    def encode(self, value: Any, w: Writer, path: str) -> Any:
        if not isinstance(value, np.ndarray) or value.dtype != np.dtype(self.dtype) or \
                (self.ndim is not None and value.ndim != self.ndim):
            raise fail(path, f"expected a {self.doc}", getattr(value, "dtype", type(value).__name__))
        if value.dtype.kind == "f" and not np.isfinite(value).all():
            raise fail(path, "expected finite values", "non-finite entry")
        return {"shape": list(value.shape), "values": value.reshape(-1).tolist()}

    def decode(self, raw: Any, r: Reader, path: str) -> Any:
        if not isinstance(raw, dict) or set(raw) != {"shape", "values"}:
            raise fail(path, "an array is {\"shape\": [...], \"values\": [...]}", raw)
        shape, values = raw["shape"], _items(raw["values"], f"{path}.values")
        dims_ok = isinstance(shape, list) and all(isinstance(s, int) and not isinstance(s, bool) and s >= 0
                                                  for s in shape)
        if not dims_ok or (self.ndim is not None and len(shape) != self.ndim):
            raise fail(f"{path}.shape", f"must be the shape of a {self.doc}", shape)
        if len(values) != math.prod(shape):
            raise fail(path, f"holds {len(values)} values for shape {shape}", None)
        kind = np.dtype(self.dtype).kind
        bad = next((v for v in values if not _fits(kind, v)), None)
        if bad is not None or any(not _fits(kind, v) for v in values):
            raise fail(path, f"values must be {self.dtype} numbers", bad)
        try:
            arr = np.array(values, dtype=self.dtype).reshape(shape)
        except OverflowError as exc:
            raise fail(path, f"a value does not fit {self.dtype}", str(exc)) from exc
        arr.setflags(write=self.writeable)
        return arr


def _fits(kind: str, v: Any) -> bool:
    """Whether a JSON value is an element of an array of this numpy dtype kind (finite reals for floats)."""
    if isinstance(v, bool):
        return kind == "b"
    if isinstance(v, int):
        return kind == "i" or kind == "f" or (kind == "u" and v >= 0)
    return kind == "f" and isinstance(v, float) and math.isfinite(v)


# --- records -----------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Record(Kind):
    """An object with fixed fields, written as a JSON object ``{field: value}``.

    ``read(value)`` gives the fields (default: the attributes of the same names), ``make(**fields)`` rebuilds it
    (default: ``cls(**fields)``, whose own checks then run).
    """

    cls: type
    fields: tuple[tuple[str, Kind], ...]
    make: Callable[..., Any] | None = None
    read: Callable[[Any], Mapping[str, Any]] | None = None
    name: str = ""

    @property
    def doc(self) -> str:  # type: ignore[override]
        return self.name or self.cls.__name__

    @property
    def structure(self) -> str:
        """Its fields and their kinds (the value types of docs/checkpoint-states.md)."""
        return "{" + "; ".join(f"`{n}`: {k.doc}" for n, k in self.fields) + "}"

    def encode(self, value: Any, w: Writer, path: str) -> Any:
        if type(value) is not self.cls:
            raise fail(path, f"expected a {self.cls.__name__}", type(value).__name__)
        values = self.read(value) if self.read is not None else {n: getattr(value, n) for n, _ in self.fields}
        return {n: kind.encode(values[n], w, f"{path}.{n}") for n, kind in self.fields}

    def decode(self, raw: Any, r: Reader, path: str) -> Any:
        names = [n for n, _ in self.fields]
        if not isinstance(raw, dict) or set(raw) != set(names):
            raise fail(path, f"a {self.name or self.cls.__name__} has exactly the fields {names}",
                       sorted(raw) if isinstance(raw, dict) else raw)
        values = {n: kind.decode(raw[n], r, f"{path}.{n}") for n, kind in self.fields}
        return r.call(self.make or self.cls, values, path)


@dataclass(frozen=True)
class Variant(Kind):
    """One of several records, written with a ``"type"`` key naming which (e.g. the datasets of the tabular family)."""

    options: tuple[tuple[str, Record], ...]

    @property
    def doc(self) -> str:  # type: ignore[override]
        return " or ".join(f"{rec.doc} (type `{name}`)" for name, rec in self.options)

    def encode(self, value: Any, w: Writer, path: str) -> Any:
        for name, rec in self.options:
            if type(value) is rec.cls:
                return {"type": name, **rec.encode(value, w, path)}
        raise fail(path, f"expected one of {[rec.cls.__name__ for _, rec in self.options]}", type(value).__name__)

    def decode(self, raw: Any, r: Reader, path: str) -> Any:
        if not isinstance(raw, dict) or "type" not in raw:
            raise fail(path, "must name its type", raw)
        fields = {k: v for k, v in raw.items() if k != "type"}
        for name, rec in self.options:
            if raw["type"] == name:
                return rec.decode(fields, r, path)
        raise fail(f"{path}.type", f"must be one of {[n for n, _ in self.options]}", raw["type"])


# --- functions -----------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Function(Kind):
    """A function the algorithm was given: ``{"dpstream": "module:qualname"}`` (dpstream's own, public),
    ``{"named": name}`` (yours: ``save(..., functions={name: f})``, given back at load) or ``{"inner": "..."}``
    (made by dpstream code inside another object, which makes it again at load; never looked up)."""

    nullable: bool = False
    doc: str = "function (`dpstream` reference, `named` by you, or `inner`)"

    def encode(self, value: Any, w: Writer, path: str) -> Any:
        if value is None and self.nullable:
            return None
        return w.function(value, path)

    def decode(self, raw: Any, r: Reader, path: str) -> Any:
        if raw is None and self.nullable:
            return None
        return r.function(raw, path)


# --- components: the state of an algorithm inside another one ----------------------------------------------------

@dataclass(frozen=True)
class Component(Kind):
    """The documented state of a component algorithm (its own ``algorithm``, ``state_version``, ...).

    ``make(owner)``: the owner's own path that creates the component (it draws nothing), then the state is
    restored into it; ``None``: the component the owner's constructor made (restored in place).
    """

    make: Callable[[Any], Any] | None = None
    nullable: bool = False
    doc: str = "state of a component algorithm"

    def encode(self, value: Any, w: Writer, path: str) -> Any:
        if value is None and self.nullable:
            return None
        return w.state(value, path)

    def decode(self, raw: Any, r: Reader, path: str) -> Any:
        if raw is None and self.nullable:
            return None
        target = self.make(r.owner) if self.make is not None else r.current
        if target is None:
            raise fail(path, "the owner holds no component here", None)
        return r.restore(raw, target, path)


@dataclass(frozen=True)
class ComponentList(Kind):
    """A list of component states; ``make(owner, i)`` creates component i (``None``: those the constructor made)."""

    make: Callable[[Any, int], Any] | None = None
    doc: str = "list of component algorithm states"

    def encode(self, value: Any, w: Writer, path: str) -> Any:
        if not isinstance(value, list):
            raise fail(path, "expected a list", type(value).__name__)
        return [w.state(v, f"{path}[{i}]") for i, v in enumerate(value)]

    def decode(self, raw: Any, r: Reader, path: str) -> Any:
        items = _items(raw, path)
        current = r.current
        if self.make is None and (not isinstance(current, list) or len(current) != len(items)):
            raise fail(path, f"the owner holds {len(current) if isinstance(current, list) else 0} components here",
                       len(items))
        out = []
        for i, doc in enumerate(items):
            target = self.make(r.owner, i) if self.make is not None else current[i]
            out.append(r.restore(doc, target, f"{path}[{i}]"))
        return out


@dataclass(frozen=True)
class ComponentPairs(Kind):
    """A dict ``key -> component`` written as ``[[key, state], ...]`` in its order; ``make(owner, key)`` creates
    the component of ``key`` (the owner's own path, e.g. C_v for vertex v)."""

    key: Kind
    make: Callable[[Any, Any], Any]
    doc_text: str = ""

    @property
    def doc(self) -> str:  # type: ignore[override]
        return self.doc_text or f"[key, component state] pairs: key {self.key.doc}"

    def encode(self, value: Any, w: Writer, path: str) -> Any:
        if not isinstance(value, Mapping):
            raise fail(path, "expected a mapping", type(value).__name__)
        return [[self.key.encode(k, w, f"{path}{{key}}"), w.state(v, f"{path}[{k!r}]")] for k, v in value.items()]

    def decode(self, raw: Any, r: Reader, path: str) -> Any:
        out: dict[Any, Any] = {}
        for i, pair in enumerate(_items(raw, path)):
            if not isinstance(pair, list) or len(pair) != 2:
                raise fail(f"{path}[{i}]", "must be a [key, state] pair", pair)
            key = self.key.decode(pair[0], r, f"{path}[{i}][0]")
            if key in out:
                raise fail(f"{path}[{i}][0]", "is a key given twice", pair[0])
            out[key] = r.restore(pair[1], self.make(r.owner, key), f"{path}[{i}][1]")
        return out
