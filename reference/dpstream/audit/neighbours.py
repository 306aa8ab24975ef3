"""Neighbouring inputs for every relation of :class:`dpstream.claims.Neighbour`.

A :class:`NeighbourPair` is two inputs ``f`` and ``f_prime`` (each a sequence fed to
``step``, one item per time) with a label saying where they differ. Generators:

* STREAM_ENTRY (counters, 001-def4.1, 002-defA.1): :func:`stream_entry_pairs` moves one
  entry by +-1 at chosen times; :func:`counter_positions` names the times that matter
  for counters (first step, last step, horizon T, powers of two, block and partition
  boundaries and the step after each). :func:`vector_entry_pairs` is the d-dimensional
  version (001-sec4.3: the l1 norm of the change summed over time is 1).
* EVENT (001-eq2-3, 003-def3.3): :func:`event_pairs` adds or removes one event in the
  batch of one time step.
* INDIVIDUAL_ADD_REMOVE / INDIVIDUAL_SUBSTITUTE (002): :func:`individual_add_remove_pairs`
  and :func:`individual_substitute_pairs` on an n x T record matrix (row = individual,
  column = time); the inputs fed to ``step`` are the matrix columns.
* POINT_REPLACE (004-def2.1): :func:`point_replace_pairs` replaces the point at one time.

:func:`is_neighbour` checks a pair against its relation, so a test can assert that the
pairs an audit uses are legal.

Why single-entry changes suffice for linear counters: the privacy loss of a linear
release model with Laplace noise, sum_j |(S d)_j| / b_j, is a seminorm of the change
d = f - f'; its maximum over the l1 ball ||d||_1 <= 1 is attained at a vertex +-e_t, a
change of one entry by 1 (docs/audits.md).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpstream.claims import Neighbour
from dpstream.errors import DPStreamInputError, require_int_at_least

__all__ = [
    "NeighbourPair",
    "counter_positions",
    "event_pairs",
    "individual_add_remove_pairs",
    "individual_substitute_pairs",
    "is_neighbour",
    "matrix_columns",
    "point_replace_pairs",
    "stream_entry_pairs",
    "vector_entry_pairs",
]


@dataclass(frozen=True)
class NeighbourPair:
    """Two neighbouring inputs (sequences fed to ``step``) and where they differ."""

    f: tuple[Any, ...]
    f_prime: tuple[Any, ...]
    label: str
    relation: Neighbour

    def swapped(self) -> NeighbourPair:
        return NeighbourPair(self.f_prime, self.f, f"{self.label} (swapped)", self.relation)


def counter_positions(
    T: int,
    *,
    block: int | None = None,
    partitions: Sequence[int] = (),
    every: bool = False,
) -> dict[int, str]:
    """Times (1-based) worth differing at, each with a label, for a counter over horizon T.

    Always: the first step, the last step (= the horizon T), powers of two and the step after
    each. ``block``: every block boundary k*B and the step after it. ``partitions``: the last
    times of partitions (e.g. 4, 13, 29 for the unbounded block counter) and the step after.
    ``every``: all times 1..T (cheap for exact checks of small models).
    """
    T = require_int_at_least("T", T, 1)
    labels: dict[int, list[str]] = {}

    def add(t: int, text: str) -> None:
        if 1 <= t <= T:
            labels.setdefault(t, []).append(text)

    add(1, "first")
    add(T, "last=horizon T")
    power = 1
    while power <= T:
        add(power, f"2^{int(math.log2(power))}")
        add(power + 1, f"2^{int(math.log2(power))}+1")
        power *= 2
    if block is not None:
        B = require_int_at_least("block", block, 1)
        for k in range(1, T // B + 1):
            add(k * B, f"block end {k}B")
            add(k * B + 1, f"block start {k}B+1")
    for end in partitions:
        add(end, f"partition end {end}")
        add(end + 1, f"partition start {end + 1}")
    if every:
        for t in range(1, T + 1):
            add(t, "")
    return {t: ", ".join(x for x in labels[t] if x) or f"t={t}" for t in sorted(labels)}


def stream_entry_pairs(
    base: Sequence[float], positions: Iterable[int] | Mapping[int, str], delta: float = 1.0
) -> list[NeighbourPair]:
    """f = base, f' = base with entry t (1-based) moved by ``delta`` (|delta| <= 1), one pair per t."""
    if not 0.0 < abs(delta) <= 1.0:
        raise DPStreamInputError("delta", "must satisfy 0 < |delta| <= 1", delta)
    names = dict(positions) if isinstance(positions, Mapping) else {int(t): f"t={t}" for t in positions}
    f = tuple(base)
    out: list[NeighbourPair] = []
    for t, label in names.items():
        if not 1 <= t <= len(f):
            raise DPStreamInputError("positions", f"must lie in [1, {len(f)}]", t)
        g = list(f)
        g[t - 1] = g[t - 1] + delta
        text = label if label.startswith("t=") else f"t={t} ({label})"
        out.append(NeighbourPair(f, tuple(g), text, Neighbour.STREAM_ENTRY))
    return out


def vector_entry_pairs(
    base: Sequence[Sequence[float]], positions: Iterable[tuple[int, int]], delta: float = 1.0
) -> list[NeighbourPair]:
    """d-dimensional counters (001-sec4.3): coordinate i of f(t) moved by ``delta``; positions are (t, i)."""
    if not 0.0 < abs(delta) <= 1.0:
        raise DPStreamInputError("delta", "must satisfy 0 < |delta| <= 1", delta)
    f = tuple(tuple(float(v) for v in row) for row in base)
    out: list[NeighbourPair] = []
    for t, i in positions:
        if not 1 <= t <= len(f) or not 0 <= i < len(f[t - 1]):
            raise DPStreamInputError("positions", "must index an entry (t in 1..T, i in 0..d-1)", (t, i))
        rows = [list(r) for r in f]
        rows[t - 1][i] += delta
        out.append(NeighbourPair(f, tuple(tuple(r) for r in rows), f"t={t}, i={i}", Neighbour.STREAM_ENTRY))
    return out


def event_pairs(
    base: Sequence[Sequence[Any]], times: Iterable[int], event: Any, *, remove: bool = False
) -> list[NeighbourPair]:
    """EVENT neighbours: the batch of time t gets ``event`` added (or its first copy removed).

    ``base[t-1]`` is the list of events of time t (insertions/deletions in the differential
    stream's form); the pair differs by one event at one time, ||f - f'||_nabla = 1.
    """
    f = tuple(tuple(batch) for batch in base)
    out: list[NeighbourPair] = []
    for t in times:
        if not 1 <= t <= len(f):
            raise DPStreamInputError("times", f"must lie in [1, {len(f)}]", t)
        batch = list(f[t - 1])
        if remove:
            if event not in batch:
                raise DPStreamInputError("event", f"must occur at time {t} to be removed", event)
            batch.remove(event)
            label = f"t={t}: remove {event!r}"
        else:
            batch.append(event)
            label = f"t={t}: add {event!r}"
        g = (*f[:t - 1], tuple(batch), *f[t:])
        out.append(NeighbourPair(f, g, label, Neighbour.EVENT))
    return out


def matrix_columns(records: Sequence[Sequence[Any]]) -> tuple[tuple[Any, ...], ...]:
    """The per-time inputs (columns) of an n x T record matrix (rows are individuals)."""
    rows = [tuple(r) for r in records]
    if not rows:
        return ()
    T = len(rows[0])
    if any(len(r) != T for r in rows):
        raise DPStreamInputError("records", "all rows must have the same length T", [len(r) for r in rows])
    return tuple(tuple(r[t] for r in rows) for t in range(T))


def individual_add_remove_pairs(
    records: Sequence[Sequence[Any]], rows: Iterable[int], extra: Sequence[Sequence[Any]] = ()
) -> list[NeighbourPair]:
    """INDIVIDUAL_ADD_REMOVE: drop row i (one pair per i in ``rows``), or append each row of ``extra``."""
    base = [tuple(r) for r in records]
    f = matrix_columns(base)
    out: list[NeighbourPair] = []
    for i in rows:
        if not 0 <= i < len(base):
            raise DPStreamInputError("rows", f"must lie in [0, {len(base)})", i)
        g = matrix_columns(base[:i] + base[i + 1 :])
        out.append(NeighbourPair(f, g, f"remove individual {i}", Neighbour.INDIVIDUAL_ADD_REMOVE))
    for k, row in enumerate(extra):
        g = matrix_columns([*base, tuple(row)])
        out.append(NeighbourPair(f, g, f"add individual {k}: {tuple(row)!r}", Neighbour.INDIVIDUAL_ADD_REMOVE))
    return out


def individual_substitute_pairs(
    records: Sequence[Sequence[Any]], substitutions: Iterable[tuple[int, Sequence[Any]]]
) -> list[NeighbourPair]:
    """INDIVIDUAL_SUBSTITUTE (002-sec2.1): row i replaced by ``new_row``, n fixed."""
    base = [tuple(r) for r in records]
    f = matrix_columns(base)
    out: list[NeighbourPair] = []
    for i, new_row in substitutions:
        if not 0 <= i < len(base):
            raise DPStreamInputError("substitutions", f"row must lie in [0, {len(base)})", i)
        changed = list(base)
        changed[i] = tuple(new_row)
        out.append(NeighbourPair(f, matrix_columns(changed), f"substitute individual {i}",
                                 Neighbour.INDIVIDUAL_SUBSTITUTE))
    return out


def point_replace_pairs(points: Sequence[Any], replacements: Iterable[tuple[int, Any]]) -> list[NeighbourPair]:
    """POINT_REPLACE (004-def2.1): the point x_t (1-based t) replaced by another point."""
    f = tuple(points)
    out: list[NeighbourPair] = []
    for t, new_point in replacements:
        if not 1 <= t <= len(f):
            raise DPStreamInputError("replacements", f"time must lie in [1, {len(f)}]", t)
        g = (*f[:t - 1], new_point, *f[t:])
        out.append(NeighbourPair(f, g, f"t={t}: replace point", Neighbour.POINT_REPLACE))
    return out


def _as_float_rows(seq: Sequence[Any]) -> list[Any]:
    return [np.asarray(x, dtype=np.float64) for x in seq]


def is_neighbour(pair: NeighbourPair) -> bool:
    """Whether ``pair`` is a legal pair of its relation (used by tests of the generators)."""
    f, g = pair.f, pair.f_prime
    rel = pair.relation
    if rel is Neighbour.STREAM_ENTRY:
        if len(f) != len(g):
            return False
        a, b = _as_float_rows(f), _as_float_rows(g)
        if any(x.shape != y.shape for x, y in zip(a, b, strict=True)):
            return False
        return float(sum(np.abs(x - y).sum() for x, y in zip(a, b, strict=True))) <= 1.0 + 1e-12
    if rel is Neighbour.EVENT:
        if len(f) != len(g):
            return False
        changes = 0
        for x, y in zip(f, g, strict=True):
            lx, ly = list(x), list(y)
            if lx == ly:
                continue
            big, small = (lx, ly) if len(lx) > len(ly) else (ly, lx)
            if len(big) != len(small) + 1:
                return False
            for item in small:
                if item not in big:
                    return False
                big.remove(item)
            changes += 1
        return changes == 1
    if rel is Neighbour.POINT_REPLACE:
        if len(f) != len(g):
            return False
        diffs = [i for i, (x, y) in enumerate(zip(f, g, strict=True))
                 if not np.array_equal(np.asarray(x), np.asarray(y))]
        return len(diffs) == 1
    # individual relations: compare the multisets of rows
    rows_f = sorted(zip(*f, strict=True)) if f else []
    rows_g = sorted(zip(*g, strict=True)) if g else []
    if rel is Neighbour.INDIVIDUAL_SUBSTITUTE:
        if len(rows_f) != len(rows_g):
            return False
        rest = list(rows_g)
        unmatched = 0
        for row in rows_f:
            if row in rest:
                rest.remove(row)
            else:
                unmatched += 1
        return unmatched <= 1
    if rel is Neighbour.INDIVIDUAL_ADD_REMOVE:
        big, small = (rows_f, rows_g) if len(rows_f) > len(rows_g) else (rows_g, rows_f)
        if len(big) != len(small) + 1:
            return False
        rest = list(big)
        for row in small:
            if row not in rest:
                return False
            rest.remove(row)
        return True
    return False
