"""The secure path's test helper: :class:`SecureDoorSpy` watches every OpenDP measurement of
:class:`~dpstream.noise.SecureNoise` and every additive draw made through it (issue 16: the secure
source never adds noise in Python); :func:`recognisable` is a deterministic stand-in for the
measurements. Public, so that other implementations built on dpstream's sources can reuse it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

from dpstream.noise import ADDITIVE_KINDS, DrawKind, Params, SecureNoise

__all__ = ["DoorCall", "MeasurementCall", "SecureDoorSpy", "recognisable"]


@dataclass(frozen=True)
class MeasurementCall:
    """One call of an OpenDP measurement built by :class:`~dpstream.noise.SecureNoise`."""

    kind: DrawKind
    vector: bool
    input: Any
    output: Any


@dataclass(frozen=True)
class DoorCall:
    """One additive draw through a secure source: what the algorithm handed in, what it got back, and the
    measurement calls made meanwhile (exactly one, applied to the values, is the secure path)."""

    sites: tuple[str, ...]
    kind: DrawKind
    values: tuple[Any, ...]
    releases: tuple[Any, ...]
    measurements: tuple[MeasurementCall, ...]
    batch: bool


def recognisable(kind: DrawKind, x: Any) -> Any:
    """A deterministic stand-in for a measurement, recognisable in the releases: value + 0.25 (Laplace),
    value + 1 (integer kinds), the first index of the largest score (exponential mechanism)."""
    if kind is DrawKind.EXPONENTIAL_MECHANISM:
        return max(range(len(x)), key=lambda i: (x[i], -i))
    if isinstance(x, list):
        return [recognisable(kind, v) for v in x]
    return x + 0.25 if kind is DrawKind.LAPLACE else x + 1


def _identical(a: Any, b: Any) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return a.hex() == b.hex() or (math.isnan(a) and math.isnan(b))
    return bool(a == b)


@dataclass
class _Spy:
    real: Any
    kind: DrawKind
    vector: bool
    spy: SecureDoorSpy

    def __call__(self, x: Any) -> Any:
        arg = list(x) if self.vector else x
        out = self.real(arg) if self.spy.replace is None else self.spy.replace(self.kind, arg)
        self.spy.measurements.append(MeasurementCall(self.kind, self.vector, tuple(arg) if self.vector else arg,
                                                     tuple(out) if self.vector else out))
        return out


@dataclass
class SecureDoorSpy:
    """Context manager: records every OpenDP measurement call and every additive draw of every :class:`SecureNoise`.

    ``replace=None`` runs the real measurements; otherwise ``replace(kind, input)`` stands in for them
    (e.g. :func:`recognisable`), so runs are deterministic. :meth:`violations` lists every additive draw
    that was not exactly one measurement applied to exactly the values handed in and returned unchanged,
    and every additive measurement call made outside a draw.
    """

    replace: Callable[[DrawKind, Any], Any] | None = None
    measurements: list[MeasurementCall] = field(default_factory=list)
    doors: list[DoorCall] = field(default_factory=list)
    _saved: dict[str, Any] = field(default_factory=dict)
    _inside: list[range] = field(default_factory=list)

    def __enter__(self) -> SecureDoorSpy:
        spy = self
        measurement, add, add_many = SecureNoise._measurement, SecureNoise._add, SecureNoise._add_many
        self._saved = {"_measurement": measurement, "_add": add, "_add_many": add_many}

        def spied_measurement(source: SecureNoise, kind: DrawKind, parameter: float, vector: bool = False) -> Any:
            real = measurement(source, kind, parameter, vector) if spy.replace is None else None
            return _Spy(real, kind, vector, spy)

        def spied_add(source: SecureNoise, site: str, kind: DrawKind, params: Params, value: Any) -> tuple[Any, Any]:
            start = len(spy.measurements)
            release, noise = add(source, site, kind, params, value)
            spy._record((site,), kind, (value,), (release,), start, batch=False)
            return release, noise

        def spied_add_many(source: SecureNoise, sites: Sequence[str], kind: DrawKind, params: Params,
                           values: Sequence[Any]) -> tuple[list[Any], list[Any]]:
            start = len(spy.measurements)
            releases, noises = add_many(source, sites, kind, params, values)
            spy._record(tuple(sites), kind, tuple(values), tuple(releases), start, batch=True)
            return releases, noises

        SecureNoise._measurement = spied_measurement  # type: ignore[method-assign,assignment]
        SecureNoise._add = spied_add  # type: ignore[method-assign,assignment]
        SecureNoise._add_many = spied_add_many  # type: ignore[method-assign,assignment]
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        for name, original in self._saved.items():
            setattr(SecureNoise, name, original)

    def _record(self, sites: tuple[str, ...], kind: DrawKind, values: tuple[Any, ...], releases: tuple[Any, ...],
                start: int, *, batch: bool) -> None:
        self._inside.append(range(start, len(self.measurements)))
        self.doors.append(DoorCall(sites, kind, values, releases, tuple(self.measurements[start:]), batch))

    def violations(self) -> list[str]:
        """Every departure from the secure path (empty when every additive draw was a measurement output)."""
        out = []
        for door in self.doors:
            where = f"{door.kind.value} at {door.sites[:3]}{'...' if len(door.sites) > 3 else ''}"
            if not door.sites:
                continue  # an empty batch draws nothing
            if len(door.measurements) != 1:
                out.append(f"{where}: {len(door.measurements)} measurement calls (must be exactly 1)")
                continue
            m = door.measurements[0]
            inputs = m.input if m.vector else (m.input,)
            outputs = m.output if m.vector else (m.output,)
            if m.kind is not door.kind or m.vector != door.batch:
                out.append(f"{where}: measured as {m.kind.value} (vector={m.vector})")
            if len(inputs) != len(door.values) or not all(map(_identical, inputs, door.values)):
                out.append(f"{where}: the measurement saw {inputs[:3]}, not the values {door.values[:3]}")
            if len(outputs) != len(door.releases) or not all(map(_identical, outputs, door.releases)):
                out.append(f"{where}: released {door.releases[:3]}, not the measurement's output {outputs[:3]}")
        inside = {i for r in self._inside for i in r}
        for i, m in enumerate(self.measurements):
            if m.kind in ADDITIVE_KINDS and i not in inside:
                out.append(f"{m.kind.value} measurement called outside an additive draw (input {m.input!r})")
        return out
