"""k-way marginal queries (003-def3.5, 000-def2.2) and workloads (003-def7.1).

Both are read off a *marginal table*: the counts of a dataset projected on the query's
columns, an array of shape (|X_c1|, ..., |X_ck|). A marginal query is one cell of it,
``q(h) = sum_x h(x) prod_i 1{x_ci = v_i}`` (003-def3.5 eq (6)); a workload is the whole
table flattened in lexicographic order of the values, which is numpy's C order
(003-def7.1: "ordered lexicographically by the values corresponding to the queries").

Every query exposes ``columns``, ``dim`` (1 for a marginal query, |W| for a workload)
and ``from_table(table) -> array of length dim``; algorithms treat both alike.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from dpstream.arithmetic import kernel
from dpstream.errors import DPStreamInputError, require_int_at_least
from dpstream.tabular.domain import Domain, IntArray

__all__ = [
    "FloatArray",
    "MarginalQuery",
    "Query",
    "Workload",
    "all_marginal_queries",
    "all_workloads",
    "marginal_table_of_counts",
    "marginal_table_of_records",
]

FloatArray = npt.NDArray[np.float64]


@runtime_checkable
class Query(Protocol):
    """What the algorithms need of an element of Q: its columns, dimension and evaluation."""

    @property
    def columns(self) -> tuple[int, ...]: ...

    @property
    def dim(self) -> int: ...

    def from_table(self, table: FloatArray) -> FloatArray:
        """The query's value(s) from the marginal table on ``columns``."""
        ...

    def describe(self, domain: Domain) -> str: ...


@dataclass(frozen=True)
class MarginalQuery:
    """A k-way marginal query q(x) = prod_{i<=k} 1{x_{c_i} = v_i} (003-def3.5 eq (5))."""

    columns: tuple[int, ...]
    values: tuple[int, ...]

    @classmethod
    def build(cls, domain: Domain, columns: Sequence[int], values: Sequence[int]) -> MarginalQuery:
        """Validated constructor: increasing columns of ``domain``, v_i in X_{c_i}."""
        cols = domain.validate_columns(columns)
        if len(cols) == 0:
            raise DPStreamInputError("columns", "a k-way marginal query needs k >= 1 columns", columns)
        vals = tuple(values)
        if len(vals) != len(cols):
            raise DPStreamInputError("values", f"must give one value per column ({len(cols)})", values)
        for c, v in zip(cols, vals, strict=True):
            if isinstance(v, bool) or not isinstance(v, int | np.integer) or not 0 <= int(v) < domain.sizes[c]:
                raise DPStreamInputError(
                    "values", f"value of attribute {domain.names[c]!r} must lie in 0..{domain.sizes[c] - 1}", v)
        return cls(cols, tuple(int(v) for v in vals))

    @property
    def k(self) -> int:
        return len(self.columns)

    @property
    def dim(self) -> int:
        return 1

    def from_table(self, table: FloatArray) -> FloatArray:
        return np.array([float(table[self.values])], dtype=np.float64)

    def indicator(self, records: IntArray) -> npt.NDArray[np.bool_]:
        """q(x) for every record x (eq (5))."""
        mask = np.ones(records.shape[0], dtype=bool)
        for c, v in zip(self.columns, self.values, strict=True):
            mask &= records[:, c] == v
        return mask

    def describe(self, domain: Domain) -> str:
        return " & ".join(f"{domain.names[c]}={v}" for c, v in zip(self.columns, self.values, strict=True))


@dataclass(frozen=True)
class Workload:
    """A k-way workload: all k-way marginal queries on ``columns`` in lexicographic order (003-def7.1).

    ``shape`` = (|X_c1|, ..., |X_ck|); |W| = prod(shape) (``dim``).
    """

    columns: tuple[int, ...]
    shape: tuple[int, ...]

    @classmethod
    def build(cls, domain: Domain, columns: Sequence[int]) -> Workload:
        cols = domain.validate_columns(columns)
        if len(cols) == 0:
            raise DPStreamInputError("columns", "a k-way workload needs k >= 1 columns", columns)
        return cls(cols, domain.shape_of(cols))

    @property
    def k(self) -> int:
        return len(self.columns)

    @property
    def dim(self) -> int:
        """|W|: the number of marginal queries in the workload."""
        return int(np.prod(self.shape))

    def queries(self) -> list[MarginalQuery]:
        """The marginal queries of W in lexicographic order of their values."""
        return [MarginalQuery(self.columns, tuple(int(v) for v in vals))
                for vals in itertools.product(*(range(s) for s in self.shape))]

    def from_table(self, table: FloatArray) -> FloatArray:
        return np.asarray(table, dtype=np.float64).reshape(-1)  # C order == lexicographic order of values

    def describe(self, domain: Domain) -> str:
        return "(" + ", ".join(domain.names[c] for c in self.columns) + ")"


def marginal_table_of_records(domain: Domain, records: IntArray, columns: Sequence[int],
                              weights: npt.NDArray[np.float64] | None = None) -> FloatArray:
    """Counts of (already validated) records projected on ``columns`` (weights: +1/-1 for turnstile)."""
    cols = tuple(columns)
    shape = domain.shape_of(cols)
    size = int(np.prod(shape)) if cols else 1
    if records.shape[0] == 0:
        return np.zeros(shape, dtype=np.float64)
    flat = np.ravel_multi_index(tuple(records[:, c] for c in cols), shape) if cols else np.zeros(
        records.shape[0], dtype=np.int64)
    counts = np.bincount(flat, weights=weights, minlength=size).astype(np.float64)
    return counts.reshape(shape)


def marginal_table_of_counts(counts: FloatArray, columns: Sequence[int]) -> FloatArray:
    """Marginal of an explicit count array h: X -> R on ``columns`` (sum over the other axes)."""
    cols = tuple(columns)
    other = tuple(a for a in range(counts.ndim) if a not in cols)
    return kernel().sum_axes(np.asarray(counts, dtype=np.float64), other)


def all_marginal_queries(domain: Domain, k: int) -> list[MarginalQuery]:
    """Every k-way marginal query of ``domain``: columns in lexicographic order, then values."""
    k = _checked_k(domain, k)
    out: list[MarginalQuery] = []
    for cols in itertools.combinations(range(domain.p), k):
        out.extend(Workload.build(domain, cols).queries())
    return out


def all_workloads(domain: Domain, k: int) -> list[Workload]:
    """Every k-way workload of ``domain`` (the experiments use k = 2, 003-sec7.2)."""
    k = _checked_k(domain, k)
    return [Workload.build(domain, cols) for cols in itertools.combinations(range(domain.p), k)]


def _checked_k(domain: Domain, k: int) -> int:
    k = require_int_at_least("k", k, 1)
    if k > domain.p:
        raise DPStreamInputError("k", f"must not exceed the number of attributes p = {domain.p}", k)
    return k
