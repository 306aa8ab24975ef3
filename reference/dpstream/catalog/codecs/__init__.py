"""JSON shapes of inputs and releases (the conformance protocol's INPUT and RELEASE).

A :class:`Codec` turns one protocol INPUT (a JSON value) into what the algorithm's ``step`` takes,
and one release into JSON; :func:`compare` compares an expected and a received JSON release with
a numeric tolerance and names the first difference by its path. Each family's JSON shapes (and its
featurisation for the statistical checks) are a module of this package (``dpstream.catalog.codecs.phdstream``,
``.longitudinal``, ``.hypercube``, ``.tabular``), built from the pieces here; the algorithm packages know
nothing of the wire (docs/architecture.md).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpstream.errors import DPStreamInputError, require_integer_value

__all__ = [
    "NUMBER",
    "NUMBER_VECTOR",
    "Codec",
    "Features",
    "Tolerance",
    "compare",
    "features_of",
    "integer_list",
    "is_json_number",
    "json_value",
    "number_input",
    "number_vector_input",
]


@dataclass(frozen=True)
class Tolerance:
    """|got - expected| <= absolute + relative * |expected| for a float expected; an integer expected must be
    matched exactly (by value: ``3`` or ``3.0``)."""

    absolute: float = 1e-9
    relative: float = 1e-9

    def to_json(self) -> dict[str, float]:
        return {"absolute": self.absolute, "relative": self.relative}

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> Tolerance:
        return cls(float(doc["absolute"]), float(doc["relative"]))


def json_value(value: Any) -> Any:
    """A release or input as plain JSON data (numpy arrays and scalars to lists and numbers)."""
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, Mapping):
        return {str(k): json_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_value(v) for v in value]
    return value


INT64_MAX = 2**63 - 1


def is_json_number(value: Any) -> bool:
    """A JSON number the algorithms can hold: an int or a float (not a bool), finite as a float (a JSON integer
    of 400 digits is not)."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _float(value: float) -> float:
    """``float(value)``; an integer beyond the float range becomes an infinity of its sign."""
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf  # (copysign would convert the integer too)


def _compare_number(expected: int | float, got: Any, tolerance: Tolerance, where: str) -> str | None:
    if not _is_number(got):
        return f"{where}: expected a number {expected!r}, got {got!r}"
    if isinstance(expected, int):  # by value: 3 and 3.0 match 3, 3.0000001 does not
        return None if got == expected else f"{where}: expected the integer {expected}, got {got!r}"
    gap = abs(_float(got) - expected)  # an integer too large for a float: infinite
    limit = tolerance.absolute + tolerance.relative * abs(expected)
    if math.isfinite(gap) and gap <= limit:  # NaN and infinities never match
        return None
    return f"{where}: expected {expected!r}, got {got!r} (|diff| {gap:.3g} > {limit:.3g})"


def _length_difference(expected: list[Any], got: list[Any], where: str) -> str:
    n = min(len(expected), len(got))
    which = f"extra item [{n}]: {got[n]!r}" if len(got) > n else f"missing item [{n}]: {expected[n]!r}"
    return f"{where}: expected {len(expected)} items, got {len(got)} ({which})"[:500]


def compare(expected: Any, got: Any, tolerance: Tolerance, path: str = "") -> str | None:
    """``None`` when ``got`` matches ``expected``, else the first difference, named by its path.

    A float expected matches any JSON number within ``tolerance`` (boundary included); an integer expected
    only a number of the same value (``3`` or ``3.0``); booleans are not numbers; ``null``, NaN and
    infinities match no number; objects need the same keys and lists the same length, at every depth."""
    where = path or "release"
    if _is_number(expected):
        return _compare_number(expected, got, tolerance, where)
    if isinstance(expected, Mapping):
        if not isinstance(got, Mapping):
            return f"{where}: expected an object, got {type(got).__name__}"
        if set(expected) != set(got):
            missing, extra = sorted(set(expected) - set(got)), sorted(set(got) - set(expected))
            return f"{where}: keys differ (missing {missing}, unexpected {extra})"
        for key in expected:
            diff = compare(expected[key], got[key], tolerance, f"{where}.{key}")
            if diff is not None:
                return diff
        return None
    if isinstance(expected, list):
        if not isinstance(got, list):
            return f"{where}: expected a list, got {type(got).__name__}"
        if len(expected) != len(got):
            return _length_difference(expected, got, where)
        for i, (e, g) in enumerate(zip(expected, got, strict=True)):
            diff = compare(e, g, tolerance, f"{where}[{i}]")
            if diff is not None:
                return diff
        return None
    return None if expected == got and type(expected) is type(got) else f"{where}: expected {expected!r}, got {got!r}"


def features_of(release: Any) -> list[float]:
    """The numbers of a JSON release in document order (booleans and strings skipped, null as NaN)."""
    out: list[float] = []

    def walk(value: Any) -> None:
        if _is_number(value):
            out.append(_float(value))
        elif value is None:
            out.append(math.nan)
        elif isinstance(value, Mapping):
            for key in sorted(value):
                walk(value[key])
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk(release)
    return out


@dataclass(frozen=True)
class Features:
    """A fixed-length featurisation of one run: ``of(releases)`` maps the JSON releases of a run (one per step) to
    ``len(names)`` floats, the same columns for every run of the same parameters and stream length (what the
    statistical search compares between neighbouring inputs). Any function of the releases will do for privacy
    (post-processing keeps the claim); a release whose shape it cannot read raises ``KeyError``, ``TypeError``,
    ``IndexError`` or ``ValueError``."""

    names: tuple[str, ...]
    of: Callable[[Sequence[Any]], Sequence[float]]


def integer_list(value: Any, field: str, rule: str) -> list[int]:
    """A JSON array of integers within a signed 64-bit integer, each read by value (``2.0`` is the integer 2:
    docs/conformance.md, "JSON numbers"); anything else raises :class:`~dpstream.errors.DPStreamInputError` naming
    ``field`` and ``rule``."""
    if isinstance(value, list) and all(_is_number(v) for v in value):
        try:
            out = [require_integer_value(field, v) for v in value]
        except (DPStreamInputError, OverflowError):
            out = None
        if out is not None and all(-INT64_MAX <= v <= INT64_MAX for v in out):  # record values, sizes, indices
            return out
    raise DPStreamInputError(field, rule, value)


def number_input(value: Any, params: Mapping[str, Any]) -> float | int:
    """A counter input f(t): a JSON number (the algorithm checks its value: finite, integer, horizon)."""
    if not is_json_number(value):
        raise DPStreamInputError("input", "must be a JSON number", value)
    return value  # type: ignore[no-any-return]


def number_vector_input(value: Any, params: Mapping[str, Any]) -> list[float | int]:
    """A d-dimensional counter input: a JSON array of d numbers (d = ``params["d"]``)."""
    d = params.get("d")
    if not isinstance(value, list) or not all(is_json_number(v) for v in value) or (d is not None and len(value) != d):
        raise DPStreamInputError("input", f"must be a JSON array of {d} numbers", value)
    return list(value)


def _number_release(release: Any) -> float:
    return float(release)


def _vector_release(release: Any) -> list[float]:
    return [float(v) for v in np.asarray(release, dtype=np.float64).ravel()]


NUMBER_SCHEMA: dict[str, Any] = {"type": "number"}


@dataclass(frozen=True)
class Codec:
    """How one algorithm's INPUT and RELEASE look on the wire.

    ``decode_input(json, params)`` (``params`` validated by the entry's schema) gives what ``step`` takes (raising
    :class:`~dpstream.errors.DPStreamInputError` for a wrong JSON shape); ``encode_release(release)``
    gives the JSON release; ``features(json_release)`` the numbers a statistical check looks at
    (default: every number of the release in document order). How closely releases are compared is the entry's
    error model's (:mod:`dpstream.catalog.error_model`), not the codec's.
    """

    input_schema: Mapping[str, Any]
    release_schema: Mapping[str, Any]
    decode_input: Callable[[Any, Mapping[str, Any]], Any]
    encode_release: Callable[[Any], Any]
    features: Callable[[Any], Sequence[float]] = features_of


NUMBER = Codec(NUMBER_SCHEMA, NUMBER_SCHEMA, number_input, _number_release)
"""Scalar counters: INPUT a number f(t), RELEASE a number g(t)."""

NUMBER_VECTOR = Codec({"type": "array", "items": NUMBER_SCHEMA}, {"type": "array", "items": NUMBER_SCHEMA},
                      number_vector_input, _vector_release)
"""Multi-dimensional counters: INPUT and RELEASE arrays of d numbers."""
