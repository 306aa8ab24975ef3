"""Noise tapes: the format of the record of every draw of a run (the sources that record and replay a tape,
:class:`~dpstream.insecure.TapeRecorder` and :class:`~dpstream.insecure.TapeReplay`, live behind the insecure door,
:mod:`dpstream.insecure`).

A tape is the list of draws ``(site, kind, params, value)`` of one run. It is how
another implementation proves that it matches this one: it replays our tape and
must produce the same releases. Replay is keyed by *site*, so the other
implementation may draw in a different order. Replay (:class:`~dpstream.insecure.TapeReplay`) fails loudly when

* a requested site is not on the tape (:class:`TapeSiteMissingError`),
* the kind or the parameters requested differ from the recorded ones
  (:class:`TapeMismatchError`),
* a site is requested twice (:class:`DuplicateSiteError`), or
* sites are left unused when the run is declared finished (:class:`TapeUnusedSitesError`).

File format (versioned JSON, JSON Schema in ``dpstream/vectors/schema.json``), documented in
``docs/tape-format.md``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from dpstream.files import write_atomically
from dpstream.noise import (
    DrawKind,
    Params,
    validated_params,
)

__all__ = [
    "TAPE_FORMAT",
    "TAPE_VERSION",
    "Draw",
    "DuplicateSiteError",
    "Tape",
    "TapeError",
    "TapeFormatError",
    "TapeMismatchError",
    "TapeSiteMissingError",
    "TapeUnusedSitesError",
    "params_equal",
    "value_from_json",
    "value_to_json",
]

TAPE_FORMAT = "dpstream-noise-tape"
TAPE_VERSION = 1


class TapeError(RuntimeError):
    """Base class of every tape failure."""


class TapeFormatError(TapeError):
    """The JSON document is not a valid tape."""


class TapeSiteMissingError(TapeError):
    """Replay asked for a site that the tape does not hold."""


class TapeMismatchError(TapeError):
    """Replay asked for a recorded site with a different kind or different parameters."""


class DuplicateSiteError(TapeError):
    """A site was drawn twice in one run (sites must identify draws uniquely)."""


class TapeUnusedSitesError(TapeError):
    """The run finished but some recorded sites were never requested."""


def value_to_json(kind: DrawKind, value: Any) -> Any:
    """A drawn value as JSON (the ``value`` of a tape draw)."""
    if kind is DrawKind.LAPLACE:
        return float(value)
    if kind in (DrawKind.DISCRETE_LAPLACE, DrawKind.DISCRETE_GAUSSIAN, DrawKind.EXPONENTIAL_MECHANISM):
        return int(value)
    if kind is DrawKind.COIN:
        return bool(value)
    if kind is DrawKind.CHOICE:
        return [int(i) for i in value]
    if kind is DrawKind.UNIFORM_BOX:
        return [[float(x) for x in row] for row in np.asarray(value, dtype=np.float64)]
    raise AssertionError(kind)  # pragma: no cover


def value_from_json(kind: DrawKind, value: Any, params: Params) -> Any:
    """A tape ``value`` checked against its kind and parameters, in the type the noise source returns."""
    if kind is DrawKind.LAPLACE:
        if not _is_finite_number(value):
            raise TapeFormatError(f"laplace value must be a finite number, got {value!r}")
        return float(value)
    if kind in (DrawKind.DISCRETE_LAPLACE, DrawKind.DISCRETE_GAUSSIAN, DrawKind.EXPONENTIAL_MECHANISM):
        if isinstance(value, bool) or not isinstance(value, int):
            raise TapeFormatError(f"{kind.value} value must be an integer, got {value!r}")
        if kind is DrawKind.EXPONENTIAL_MECHANISM and not 0 <= value < len(params["scores"]):
            raise TapeFormatError(f"exponential_mechanism value {value} is not an index of its scores")
        return value
    if kind is DrawKind.COIN:
        if not isinstance(value, bool):
            raise TapeFormatError(f"coin value must be a boolean, got {value!r}")
        return value
    if kind is DrawKind.CHOICE:
        if not isinstance(value, list) or len(value) != params["k"]:
            raise TapeFormatError(f"choice value must be a list of k={params['k']} indices, got {value!r}")
        if sorted(set(value)) != value or any(not 0 <= i < params["n"] for i in value):
            raise TapeFormatError(f"choice value must be sorted distinct indices in range(n), got {value!r}")
        return tuple(value)
    if kind is DrawKind.UNIFORM_BOX:
        d = len(params["low"])
        if (not isinstance(value, list) or len(value) != params["count"]
                or any(not isinstance(row, list) or len(row) != d or not all(_is_finite_number(x) for x in row)
                       for row in value)):
            raise TapeFormatError(f"uniform_box value must be count={params['count']} lists of {d} finite numbers, "
                                  f"got {value!r}")
        return np.asarray(value, dtype=np.float64).reshape(params["count"], d)
    raise AssertionError(kind)  # pragma: no cover


def _is_finite_number(value: Any) -> bool:
    return not isinstance(value, bool) and isinstance(value, int | float) and math.isfinite(value)


@dataclass(frozen=True)
class Draw:
    """One recorded draw."""

    site: str
    kind: DrawKind
    params: Params
    value: Any

    def to_json(self) -> dict[str, Any]:
        return {"site": self.site, "kind": self.kind.value, "params": self.params,
                "value": value_to_json(self.kind, self.value)}


@dataclass(frozen=True)
class Tape:
    """An ordered list of draws, unique by site; ``meta`` is free-form (JSON)."""

    draws: tuple[Draw, ...]
    meta: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        seen: set[str] = set()
        for d in self.draws:
            if d.site in seen:
                raise DuplicateSiteError(f"site {d.site!r} appears twice on the tape")
            seen.add(d.site)

    def __len__(self) -> int:
        return len(self.draws)

    def __iter__(self) -> Iterator[Draw]:
        return iter(self.draws)

    def by_site(self) -> dict[str, Draw]:
        return {d.site: d for d in self.draws}

    def value(self, site_name: str) -> Any:
        """The recorded value at ``site_name`` (KeyError if absent)."""
        return self.by_site()[site_name].value

    def to_json(self) -> dict[str, Any]:
        return {"format": TAPE_FORMAT, "version": TAPE_VERSION, "meta": dict(self.meta),
                "draws": [d.to_json() for d in self.draws]}

    def dumps(self) -> str:
        return json.dumps(self.to_json(), indent=1, allow_nan=False)

    def save(self, path: str | Path) -> None:
        write_atomically(path, self.dumps() + "\n")

    @classmethod
    def from_json(cls, doc: Any) -> Tape:
        """Parse and validate a tape document (raises :class:`TapeFormatError`)."""
        if not isinstance(doc, dict):
            raise TapeFormatError("a tape is a JSON object")
        if doc.get("format") != TAPE_FORMAT:
            raise TapeFormatError(f"format must be {TAPE_FORMAT!r}, got {doc.get('format')!r}")
        if doc.get("version") != TAPE_VERSION:
            raise TapeFormatError(
                f"unsupported tape version {doc.get('version')!r} (this reader: {TAPE_VERSION})")
        unknown = set(doc) - {"format", "version", "meta", "draws"}
        if unknown:
            raise TapeFormatError(f"unknown top-level keys {sorted(unknown)}")
        meta = doc.get("meta", {})
        if not isinstance(meta, dict):
            raise TapeFormatError("meta must be an object")
        raw_draws = doc.get("draws")
        if not isinstance(raw_draws, list):
            raise TapeFormatError("draws must be a list")
        draws = []
        for i, raw in enumerate(raw_draws):
            if not isinstance(raw, dict) or set(raw) != {"site", "kind", "params", "value"}:
                raise TapeFormatError(f"draw {i} must have exactly the keys site, kind, params, value")
            if not isinstance(raw["site"], str) or not raw["site"]:
                raise TapeFormatError(f"draw {i}: site must be a non-empty string")
            try:
                kind = DrawKind(raw["kind"])
            except ValueError as exc:
                raise TapeFormatError(f"draw {i}: unknown kind {raw['kind']!r}") from exc
            if not isinstance(raw["params"], dict):
                raise TapeFormatError(f"draw {i}: params must be an object")
            try:
                params = validated_params(kind, raw["params"])
            except (KeyError, ValueError) as exc:
                raise TapeFormatError(f"draw {i} ({raw['site']}): invalid params: {exc}") from exc
            if set(params) != set(raw["params"]):
                raise TapeFormatError(f"draw {i} ({raw['site']}): params must be exactly {sorted(params)}")
            value = value_from_json(kind, raw["value"], params)
            draws.append(Draw(raw["site"], kind, params, value))
        try:
            return cls(tuple(draws), meta)
        except DuplicateSiteError as exc:
            raise TapeFormatError(str(exc)) from exc

    @classmethod
    def loads(cls, text: str) -> Tape:
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as exc:
            raise TapeFormatError(f"not JSON: {exc}") from exc
        return cls.from_json(doc)

    @classmethod
    def load(cls, path: str | Path) -> Tape:
        return cls.loads(Path(path).read_text(encoding="utf-8"))


def params_equal(requested: Any, recorded: Any, rtol: float, atol: float = 0.0) -> bool:
    """Draw parameters equal: floats within ``atol + rtol * |recorded|`` (the boundary included; NaN and infinities
    never), integers and the rest exactly, lists element by element with the same length."""
    if isinstance(requested, list) or isinstance(recorded, list):
        return (isinstance(requested, list) and isinstance(recorded, list) and len(requested) == len(recorded)
                and all(params_equal(a, b, rtol, atol) for a, b in zip(requested, recorded, strict=True)))
    if isinstance(requested, float) or isinstance(recorded, float):
        a, b = float(requested), float(recorded)
        if a == b:
            return True
        gap = abs(a - b)
        return math.isfinite(gap) and gap <= atol + rtol * abs(b)
    return bool(requested == recorded)


_MOVED = ("TapeRecorder", "TapeReplay")


def __getattr__(name: str) -> object:
    if name in _MOVED:  # one door for insecure sources; no alias here
        raise ImportError(f"dpstream.tape.{name} is an insecure source and moved to the insecure door: "
                          f"from dpstream.insecure import {name}", name=__name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
