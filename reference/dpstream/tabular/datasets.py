"""Synthetic datasets h: X -> R_{>=0} as the algorithms see them.

The papers' datasets are count functions on X (003-sec3.1). The algorithms only ever
read them through marginal tables (every query is linear, 003-def3.5 eq (6)), add them
(003-alg2 L21) and average them (003-alg3 L19). So a dataset here is anything with a
``total`` and ``marginal(columns)``:

* :class:`ExplicitDataset` — the full count array over X (small domains; MW works on it);
* :class:`UniformDataset` — c on every cell (g(0, x) = 1 of 003-alg3 L4, h_{t,0} of MW);
* :class:`LinearCombination` — sum_j w_j h_j, answered lazily (averages of PGM models);
* :class:`TableDataset` — stored marginal tables on a fixed set of cliques (what the
  streaming algorithms keep when the domain is too large to hold explicitly);
* :class:`dpstream.tabular.pgm.PGMDataset` — a graphical model fitted by ``mbi``.

Releases are fractional counts ("|f| times a distribution", 003-mw); rounding them to an
integer dataset would be post-processing and is not done.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np

from dpstream.errors import DPStreamInputError
from dpstream.tabular.domain import Domain
from dpstream.tabular.queries import FloatArray, Query, marginal_table_of_counts

__all__ = [
    "EXPLICIT_LIMIT",
    "ExplicitDataset",
    "LinearCombination",
    "SyntheticDataset",
    "TableDataset",
    "UniformDataset",
    "add",
    "answer",
    "average",
    "explicit_counts",
    "materialize",
]

EXPLICIT_LIMIT = 1 << 24
"""Largest |X| held as an explicit array (16.7M cells, 128 MiB of float64)."""


@runtime_checkable
class SyntheticDataset(Protocol):
    """A (fractional) dataset on ``domain`` that answers marginal tables."""

    @property
    def domain(self) -> Domain: ...

    @property
    def total(self) -> float:
        """|h| = sum_x h(x)."""
        ...

    def marginal(self, columns: tuple[int, ...]) -> FloatArray:
        """The marginal table of h on ``columns`` (shape (|X_c|)_{c in columns})."""
        ...


def answer(query: Query, dataset: SyntheticDataset) -> FloatArray:
    """q(h) for a marginal query (length 1) or W(h) for a workload (length |W|)."""
    return query.from_table(dataset.marginal(query.columns))


@dataclass(frozen=True, eq=False)
class ExplicitDataset:
    """h as an explicit array of shape ``domain.sizes``."""

    domain: Domain
    counts: FloatArray
    _cache: dict[tuple[int, ...], FloatArray] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        arr = np.asarray(self.counts, dtype=np.float64)
        if arr.shape != self.domain.sizes:
            raise DPStreamInputError("counts", f"must have shape {self.domain.sizes}", arr.shape)
        if not np.all(np.isfinite(arr)):
            raise DPStreamInputError("counts", "must be finite", "non-finite entry")
        object.__setattr__(self, "counts", arr)

    @property
    def total(self) -> float:
        return float(self.counts.sum())

    def marginal(self, columns: tuple[int, ...]) -> FloatArray:
        table = self._cache.get(columns)
        if table is None:
            table = marginal_table_of_counts(self.counts, columns)
            self._cache[columns] = table
        return table.copy()


@dataclass(frozen=True, eq=False)
class UniformDataset:
    """h(x) = ``per_cell`` for every x (003-alg3 L4 uses per_cell = 1)."""

    domain: Domain
    per_cell: float

    @property
    def total(self) -> float:
        return float(self.per_cell * self.domain.size)

    def marginal(self, columns: tuple[int, ...]) -> FloatArray:
        shape = self.domain.shape_of(columns)
        rest = self.domain.size // math.prod(shape) if shape else self.domain.size
        return np.full(shape, self.per_cell * rest, dtype=np.float64)


@dataclass(frozen=True, eq=False)
class LinearCombination:
    """sum_j weights[j] * parts[j]; marginals are computed on demand and cached."""

    domain: Domain
    weights: tuple[float, ...]
    parts: tuple[SyntheticDataset, ...]
    _cache: dict[tuple[int, ...], FloatArray] = field(default_factory=dict, repr=False)

    @property
    def total(self) -> float:
        return float(sum(w * p.total for w, p in zip(self.weights, self.parts, strict=True)))

    def marginal(self, columns: tuple[int, ...]) -> FloatArray:
        cached = self._cache.get(columns)
        if cached is None:
            cached = sum((w * p.marginal(columns) for w, p in zip(self.weights, self.parts, strict=True)),
                          start=np.zeros(self.domain.shape_of(columns)))
            self._cache[columns] = cached
        return cached.copy()

    @property
    def warm_start(self) -> Any:
        """The last part's fitted model, if any (PGM warm start, see pgm.py)."""
        for part in reversed(self.parts):
            model = getattr(part, "warm_start", None)
            if model is not None:
                return model
        return None


@dataclass(frozen=True, eq=False)
class TableDataset:
    """Marginal tables stored on ``tables`` cliques; sub-cliques are summed out of a stored superset."""

    domain: Domain
    tables: Mapping[tuple[int, ...], FloatArray]
    total: float
    warm_start: Any = None

    def marginal(self, columns: tuple[int, ...]) -> FloatArray:
        stored = self.tables.get(columns)
        if stored is not None:
            return stored.copy()
        for clique, table in self.tables.items():
            if set(columns) <= set(clique):
                axes = tuple(i for i, c in enumerate(clique) if c not in columns)
                return np.asarray(table.sum(axis=axes), dtype=np.float64)
        if not columns:
            return np.asarray(self.total, dtype=np.float64)
        raise KeyError(f"no stored marginal covers columns {columns}; stored: {sorted(self.tables)}")


def explicit_counts(dataset: SyntheticDataset) -> FloatArray:
    """The full count array of ``dataset`` (only for |X| <= EXPLICIT_LIMIT)."""
    if isinstance(dataset, ExplicitDataset):
        return dataset.counts.copy()
    domain = dataset.domain
    if domain.size > EXPLICIT_LIMIT:
        raise DPStreamInputError("domain", f"|X| must be <= {EXPLICIT_LIMIT} for an explicit dataset", domain.size)
    if isinstance(dataset, UniformDataset):
        return np.full(domain.sizes, dataset.per_cell, dtype=np.float64)
    if isinstance(dataset, LinearCombination):
        return np.asarray(sum((w * explicit_counts(p) for w, p in zip(dataset.weights, dataset.parts, strict=True)),
                              start=np.zeros(domain.sizes)), dtype=np.float64)
    return np.asarray(dataset.marginal(tuple(range(domain.p))), dtype=np.float64).reshape(domain.sizes)


def _all_explicit(parts: Sequence[SyntheticDataset]) -> bool:
    return parts[0].domain.size <= EXPLICIT_LIMIT and all(
        isinstance(p, ExplicitDataset | UniformDataset) for p in parts)


def average(parts: Sequence[SyntheticDataset]) -> SyntheticDataset:
    """avg_l h_l (003-alg3 L19, 003-alg2 L21)."""
    if not parts:
        raise DPStreamInputError("parts", "must be non-empty", parts)
    domain = parts[0].domain
    w = 1.0 / len(parts)
    if _all_explicit(parts):
        return ExplicitDataset(domain, sum((explicit_counts(p) for p in parts), start=np.zeros(domain.sizes)) * w)
    return LinearCombination(domain, tuple(w for _ in parts), tuple(parts))


def add(a: SyntheticDataset, b: SyntheticDataset) -> SyntheticDataset:
    """a + b (003-alg2 L21: g_t = g_{t-1} + avg_l h_{t,l})."""
    if _all_explicit((a, b)):
        return ExplicitDataset(a.domain, explicit_counts(a) + explicit_counts(b))
    return LinearCombination(a.domain, (1.0, 1.0), (a, b))


def materialize(dataset: SyntheticDataset, cliques: Iterable[tuple[int, ...]]) -> SyntheticDataset:
    """Freeze a lazy dataset into stored tables on ``cliques`` (explicit datasets are kept as they are)."""
    if isinstance(dataset, ExplicitDataset | UniformDataset):
        return dataset
    tables = {c: dataset.marginal(c) for c in dict.fromkeys(cliques)}
    return TableDataset(dataset.domain, tables, dataset.total, getattr(dataset, "warm_start", None))
