"""Statistics of a run and the fixed events the witness search certifies (docs/audits.md, "The witness search").

A *statistic* maps the feature matrix of a batch of runs (runs x features) to one number per run; an *event* is a
fixed set defined by one or two statistics and thresholds. Everything here is a frozen value (picklable, so the
held-out counting can run on the workers), built on the fit split and then kept fixed: certification only counts,
on fresh held-out runs, how many runs each fixed event contains.

Statistics: :class:`Column` (one feature), :class:`Linear` (a linear combination, e.g. the difference of two
released counts, a learned discriminant, a relation that holds exactly in every run), :class:`NaiveBayes` (a sum of
per-feature histogram log-ratios), :class:`Logistic` (a classifier with pairwise interactions, DP-Sniper style).
Events: ``threshold`` ({s >= c} or {s <= c}), ``atom`` ({s = v}), ``conjunction`` ({s1 >< c1 and s2 >< c2}) and
``disagreement`` ({s1 >= c1} xor {s2 >= c2}).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = [
    "DECIMALS",
    "Column",
    "Event",
    "Linear",
    "Logistic",
    "NaiveBayes",
    "Statistic",
    "count_events",
]

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]
DECIMALS = 9
"""Statistics are rounded to this many decimals, so an exact release is an atom despite float round-off."""


def _round(x: FloatArray) -> FloatArray:
    return np.asarray(np.round(x, DECIMALS), dtype=np.float64)


@dataclass(frozen=True)
class Column:
    """Feature ``column`` as it is."""

    column: int

    def __call__(self, F: FloatArray) -> FloatArray:
        return np.asarray(F[:, self.column])

    def describe(self, names: Sequence[str]) -> str:
        return _name(names, self.column)

    @property
    def columns(self) -> tuple[int, ...]:
        return (self.column,)


@dataclass(frozen=True)
class Linear:
    """sum_i weights[i] * x[columns[i]], minus ``offset``, divided by ``unit`` and rounded (to :data:`DECIMALS`
    decimals; with a ``unit`` > 0, to whole units, so that a relation exact up to float round-off is an atom).
    ``label`` names it in reports (a design's contrast, "learned discriminant", "exact relation")."""

    columns: tuple[int, ...]
    weights: tuple[float, ...]
    label: str = ""
    offset: float = 0.0
    unit: float = 0.0

    def __call__(self, F: FloatArray) -> FloatArray:
        x = F[:, list(self.columns)] @ np.asarray(self.weights, dtype=np.float64) - self.offset
        if self.unit > 0:
            return np.asarray(np.round(x / self.unit), dtype=np.float64)
        return _round(np.asarray(x, dtype=np.float64))

    def describe(self, names: Sequence[str]) -> str:
        terms = sorted(zip(self.weights, self.columns, strict=True), key=lambda wc: -abs(wc[0]))
        shown = " ".join(f"{'+' if w >= 0 else '-'} {abs(w):.3g}*{_name(names, c)}" for w, c in terms[:4])
        more = f" + {len(terms) - 4} more" if len(terms) > 4 else ""
        body = shown.removeprefix("+ ") + more
        return f"{self.label}: {body}" if self.label else body


Table = tuple[tuple[float, ...], tuple[float, ...]]
"""Bin edges and the log-ratio of each bin (one more value than edges)."""


@dataclass(frozen=True)
class NaiveBayes:
    """The sum over ``columns`` of per-feature histogram log-ratios (fitted on the fit split)."""

    columns: tuple[int, ...]
    tables: tuple[Table, ...]

    def __call__(self, F: FloatArray) -> FloatArray:
        total = np.zeros(F.shape[0])
        for c, (edges, table) in zip(self.columns, self.tables, strict=True):
            total += np.asarray(table)[np.searchsorted(np.asarray(edges), F[:, c], side="right")]
        return _round(total)

    def describe(self, names: Sequence[str]) -> str:
        return f"naive-Bayes log-ratio of ({', '.join(_name(names, c) for c in self.columns)})"


@dataclass(frozen=True)
class Logistic:
    """A logistic classifier's log-odds on standardised features and their pairwise products (DP-Sniper's
    learned statistic with interactions): z = (x[columns] - mean) / scale, score = w . (z, z_i z_j for ``pairs``)."""

    columns: tuple[int, ...]
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    pairs: tuple[tuple[int, int], ...]
    weights: tuple[float, ...]

    def design(self, F: FloatArray) -> FloatArray:
        Z = (F[:, list(self.columns)] - np.asarray(self.mean)) / np.asarray(self.scale)
        parts = [Z] + [Z[:, [i]] * Z[:, [j]] for i, j in self.pairs]
        return np.asarray(np.concatenate(parts, axis=1), dtype=np.float64)

    def __call__(self, F: FloatArray) -> FloatArray:
        return _round(self.design(F) @ np.asarray(self.weights))

    def describe(self, names: Sequence[str]) -> str:
        return (f"classifier log-odds on ({', '.join(_name(names, c) for c in self.columns)}) with "
                f"{len(self.pairs)} pairwise interactions")


Statistic = Column | Linear | NaiveBayes | Logistic


def _name(names: Sequence[str], c: int) -> str:
    return names[c] if c < len(names) else f"x{c}"


@dataclass(frozen=True)
class Event:
    """A fixed event on one or two statistics.

    ``threshold``: {s >= c} (``upper``) or {s <= c}; ``atom``: {s = c}; ``conjunction``: both one-sided conditions;
    ``disagreement``: exactly one of {s1 >= c1}, {s2 >= c2}."""

    kind: str
    statistics: tuple[Statistic, ...]
    thresholds: tuple[float, ...]
    upper: tuple[bool, ...] = (True,)

    def contains(self, F: FloatArray) -> BoolArray:
        values = [s(F) for s in self.statistics]
        if self.kind == "atom":
            return np.asarray(values[0] == self.thresholds[0])
        sides = [v >= c if up else v <= c for v, c, up in zip(values, self.thresholds, self.upper, strict=True)]
        if self.kind == "threshold":
            return np.asarray(sides[0])
        if self.kind == "conjunction":
            return np.asarray(sides[0] & sides[1])
        if self.kind == "disagreement":
            return np.asarray(sides[0] != sides[1])
        raise AssertionError(self.kind)

    def describe(self, names: Sequence[str]) -> str:
        parts = []
        for s, c, up in zip(self.statistics, self.thresholds, self.upper, strict=True):
            op = "=" if self.kind == "atom" else (">=" if up else "<=")
            parts.append(f"{s.describe(names)} {op} {c:.9g}" if self.kind == "atom" else
                         f"{s.describe(names)} {op} {c:.6g}")
        if self.kind == "conjunction":
            return "{" + " and ".join(parts) + "}"
        if self.kind == "disagreement":
            return "{exactly one of: " + "; ".join(parts) + "}"
        return "{" + parts[0] + "}"

    def key(self) -> tuple[Any, ...]:
        return (self.kind, self.statistics, self.thresholds, self.upper)


def count_events(events: Sequence[Event], F: FloatArray) -> npt.NDArray[np.int64]:
    """How many rows of F each event contains (one-column threshold and atom events vectorised)."""
    out = np.zeros(len(events), dtype=np.int64)
    simple = [i for i, e in enumerate(events)
              if e.kind in ("threshold", "atom") and isinstance(e.statistics[0], Column)]
    if simple:
        cols = np.array([events[i].statistics[0].columns[0] for i in simple])
        thr = np.array([events[i].thresholds[0] for i in simple])
        kind = np.array([0 if events[i].kind == "atom" else (1 if events[i].upper[0] else 2) for i in simple])
        X = F[:, cols]
        hits = np.where(kind == 0, thr == X, np.where(kind == 1, thr <= X, thr >= X))
        out[simple] = hits.sum(axis=0)
    done = set(simple)
    for i, e in enumerate(events):
        if i not in done:
            out[i] = int(e.contains(F).sum())
    return out
