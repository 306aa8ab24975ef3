"""Turnstile streams of records, their constructions and loaders (003-sec3.1, 003-sec7.1.2).

The input at time t is the differential dataset ∇f_t = f_t - f_{t-1} (003-def3.2): the
records added at t and the records removed at t. :class:`StreamStep` holds both;
:class:`DifferentialDataset` answers marginal tables of ∇f_t (removed records count -1).
:class:`RecordMultiset` keeps the true f_t so that a removal of a record that is not
present is rejected before any draw (docs/developing.md, "Claims, errors, atomic steps").

Constructions and loaders:

* :func:`adult_randomized`, :func:`adult_ordered` — the two streams of 003-sec7.1.2
  (batches of B records, randomly or in sorted order);
* :func:`load_table_csv` — a record table with a JSON domain (the Adult files);
* :func:`load_stream_csv` — a CSV of records with a time column (and an optional
  +1/-1 operation column for removals);
* :func:`generate_records` / :func:`generate_stream` — a small built-in discrete data
  generator for tests (non-private randomness from ``data_rng``).
"""

from __future__ import annotations

import csv
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from dpstream.errors import DataRowError, DPStreamInputError, require_int_at_least
from dpstream.noise import data_rng
from dpstream.tabular.domain import Domain, IntArray, validate_records
from dpstream.tabular.queries import FloatArray, Query, marginal_table_of_records

__all__ = [
    "DifferentialDataset",
    "RecordMultiset",
    "StreamStep",
    "adult_ordered",
    "adult_randomized",
    "batches",
    "coerce_step",
    "generate_records",
    "generate_stream",
    "load_stream_csv",
    "load_table_csv",
]


@dataclass(frozen=True, eq=False)
class StreamStep:
    """∇f_t as records: ``added`` (n, p) and ``removed`` (m, p), both validated int64 arrays."""

    added: IntArray
    removed: IntArray

    @classmethod
    def build(cls, domain: Domain, added: object = (), removed: object = ()) -> StreamStep:
        return cls(validate_records(domain, added, "added"), validate_records(domain, removed, "removed"))

    @property
    def size(self) -> int:
        """|∇f_t| = sum_x ∇f(x, t): records added minus records removed."""
        return int(self.added.shape[0] - self.removed.shape[0])


def coerce_step(domain: Domain, x: object) -> StreamStep:
    """Accept a :class:`StreamStep` (re-validated against ``domain``) or an (n, p) array of added records."""
    if isinstance(x, StreamStep):
        return StreamStep.build(domain, x.added, x.removed)
    if x is None or isinstance(x, str | bytes | dict):
        raise DPStreamInputError("∇f_t", "must be a StreamStep or an (n, p) array of records", x)
    return StreamStep.build(domain, x)


@dataclass(frozen=True, eq=False)
class DifferentialDataset:
    """∇f_t as a (signed) dataset: marginal tables count added records +1 and removed -1."""

    domain: Domain
    step: StreamStep
    _cache: dict[tuple[int, ...], FloatArray] = field(default_factory=dict, repr=False)

    @property
    def total(self) -> float:
        return float(self.step.size)

    def marginal(self, columns: tuple[int, ...]) -> FloatArray:
        table = self._cache.get(columns)
        if table is None:
            table = marginal_table_of_records(self.domain, self.step.added, columns)
            if self.step.removed.shape[0]:
                table = table - marginal_table_of_records(self.domain, self.step.removed, columns)
            self._cache[columns] = table
        return table.copy()

    def answer(self, query: Query) -> FloatArray:
        return query.from_table(self.marginal(query.columns))


class RecordMultiset:
    """The true dataset f_t as a multiset of records; validates removals (f_t(x) >= 0).

    Records are keyed by their flat index in X (or by tuple when |X| >= 2^62), counted with
    numpy so that large batches stay cheap.
    """

    def __init__(self, domain: Domain | None = None) -> None:
        self.domain = domain
        self._counts: dict[int | tuple[int, ...], int] = {}
        self.size = 0

    def _keys(self, records: IntArray) -> tuple[list[int | tuple[int, ...]], list[int]]:
        if records.shape[0] == 0:
            return [], []
        if self.domain is None:
            self.domain = Domain(tuple(f"x{i}" for i in range(records.shape[1])),
                                 tuple(int(v) + 1 for v in records.max(axis=0)))
        if self.domain.size < 2**62:
            flat = np.ravel_multi_index(tuple(records.T), self.domain.sizes)
            keys, counts = np.unique(flat, return_counts=True)
            return [int(k) for k in keys], [int(c) for c in counts]
        rows, counts = np.unique(records, axis=0, return_counts=True)
        return [tuple(int(v) for v in r) for r in rows], [int(c) for c in counts]

    def check(self, step: StreamStep) -> None:
        """Raise if applying ``step`` would make some count negative (no state change)."""
        if step.removed.shape[0] == 0:
            return
        keys, counts = self._keys(step.removed)
        add_keys, add_counts = self._keys(step.added)
        added = dict(zip(add_keys, add_counts, strict=True))
        for key, count in zip(keys, counts, strict=True):
            if self._counts.get(key, 0) + added.get(key, 0) < count:
                record = key if isinstance(key, tuple) else tuple(
                    int(v) for v in np.unravel_index(int(key), self.domain.sizes if self.domain else ()))
                raise DPStreamInputError(
                    "removed", "a record can only be removed if it is present (f_t(x) >= 0)", record)

    def apply(self, step: StreamStep) -> None:
        """Commit ``step`` (call :meth:`check` first)."""
        for records, sign in ((step.added, 1), (step.removed, -1)):
            keys, counts = self._keys(records)
            for key, count in zip(keys, counts, strict=True):
                value = self._counts.get(key, 0) + sign * count
                if value:
                    self._counts[key] = value
                else:
                    self._counts.pop(key, None)
        self.size += step.size

    def records(self, p: int) -> IntArray:
        rows: list[tuple[int, ...]] = []
        for key, count in self._counts.items():
            if isinstance(key, tuple):
                record = key
            else:
                assert self.domain is not None
                record = tuple(int(v) for v in np.unravel_index(int(key), self.domain.sizes))
            rows.extend([record] * count)
        return np.array(sorted(rows), dtype=np.int64).reshape(len(rows), p)


def batches(records: IntArray, B: int) -> list[StreamStep]:
    """Consecutive batches of B records (the last one may be shorter), insert-only."""
    B = require_int_at_least("B", B, 1)
    empty = np.zeros((0, records.shape[1]), dtype=np.int64)
    return [StreamStep(records[i:i + B], empty) for i in range(0, records.shape[0], B)]


def adult_randomized(domain: Domain, records: object, B: int, seed: int) -> list[StreamStep]:
    """Adult-randomized (003-sec7.1.2): B records per time, drawn uniformly without replacement.

    The order is a uniform random permutation from ``data_rng(seed)`` (non-private
    randomness: the construction of the stream is not part of any algorithm).
    """
    arr = validate_records(domain, records)
    perm = data_rng(seed).permutation(arr.shape[0])
    return batches(arr[perm], B)


def adult_ordered(domain: Domain, records: object, B: int) -> list[StreamStep]:
    """Adult-ordered (003-sec7.1.2): sort the table, then add the next B records at each time.

    The paper says "we first sort the entire dataset in increasing order"; we read this
    as the lexicographic order of the records (first attribute most significant).
    """
    arr = validate_records(domain, records)
    order = np.lexsort(tuple(arr[:, c] for c in reversed(range(domain.p)))) if arr.shape[0] else np.arange(0)
    return batches(arr[order], B)


def _read_csv(path: str | Path) -> tuple[list[str], list[tuple[int, list[str]]]]:
    """The header and the non-empty rows of a CSV, each row with its line number (the header is line 1)."""
    with Path(path).open(newline="", encoding="utf-8") as fh:
        reader = csv.reader(fh)
        try:
            header = [h.strip() for h in next(reader)]
        except StopIteration:
            raise DPStreamInputError("csv", f"{path} is empty (it needs a header row)", str(path)) from None
        return header, [(reader.line_num, row) for row in reader if row]


def _code(path: str | Path, line: int, name: str, cell: str | None, size: int | None) -> int:
    """One attribute value: an integer code in 0..size-1 (>= 0 without a size)."""
    rule = "must be an integer code" + (f" in 0..{size - 1}" if size is not None else " >= 0")
    if cell is None:
        raise DataRowError(path, line, name, "missing: the row is shorter than the header", cell)
    try:
        value = int(cell)
    except ValueError:
        raise DataRowError(path, line, name, rule, cell) from None
    if value < 0 or (size is not None and value >= size):
        raise DataRowError(path, line, name, rule, cell)
    return value


def _read_domain(domain_json: str | Path) -> dict[str, int]:
    try:
        raw = json.loads(Path(domain_json).read_text(encoding="utf-8"))
        if not isinstance(raw, dict):
            raise TypeError("not an object")
        return {str(k): int(v) for k, v in raw.items()}
    except (ValueError, TypeError) as exc:
        raise DPStreamInputError("domain_json", f"{domain_json} must map attribute names to sizes ({exc})",
                                 str(domain_json)) from exc


def load_table_csv(csv_path: str | Path, domain_json: str | Path | None = None,
                   columns: Sequence[str] | None = None) -> tuple[Domain, IntArray]:
    """A record table (header row of attribute names, integer codes) and its domain.

    ``domain_json`` maps attribute names to sizes (the ``*-domain.json`` files); columns
    of the CSV that are not in it (e.g. an unnamed index column) are ignored. Without a
    domain file the sizes are max + 1 of each column. ``columns`` restricts (and orders)
    the attributes, e.g. a small projection for MW. A row that does not parse (a short or
    long row, a non-integer cell, a code outside the domain) raises :class:`DataRowError`
    naming the file, the line and the value.
    """
    header, rows = _read_csv(csv_path)
    sizes: dict[str, int] | None = None
    if domain_json is not None:
        sizes = _read_domain(domain_json)
    names = list(columns) if columns is not None else [h for h in header if sizes is None or h in sizes]
    for name in names:
        if name not in header:
            raise DPStreamInputError("columns", f"attribute {name!r} is not a column of {csv_path}", name)
        if sizes is not None and name not in sizes:
            raise DPStreamInputError("columns", f"attribute {name!r} has no size in {domain_json}", name)
    idx = [header.index(n) for n in names]
    try:  # fast path; on any problem the rows are read one by one below to name the culprit
        if any(len(row) != len(header) for _, row in rows):
            raise ValueError("row length")
        data = np.array([[int(row[i]) for i in idx] for _, row in rows], dtype=np.int64).reshape(len(rows), len(idx))
        bad = np.any(data < 0, axis=1)
        if sizes is not None:
            bad |= np.any(data >= np.array([sizes[n] for n in names], dtype=np.int64), axis=1)
        if bad.any():
            raise ValueError("code outside the domain")
    except ValueError:
        for line, row in rows:
            if len(row) != len(header):
                raise DataRowError(csv_path, line, "row", f"has {len(row)} fields, the header {len(header)}",
                                   ",".join(row)) from None
            for name, i in zip(names, idx, strict=True):
                _code(csv_path, line, name, row[i], None if sizes is None else sizes[name])
        raise  # pragma: no cover - the scan above finds the row the fast path stopped at
    if sizes is None:
        sizes = {n: int(data[:, j].max()) + 1 if data.shape[0] else 1 for j, n in enumerate(names)}
    domain = Domain(tuple(names), tuple(sizes[n] for n in names))
    return domain, validate_records(domain, data)


def load_stream_csv(csv_path: str | Path, domain: Domain, time_column: str = "t",
                    op_column: str | None = None) -> list[StreamStep]:
    """A stream from a CSV of records with a time column (integers t >= 1).

    Each row is one record (the domain's attributes by name) at time ``t``; with
    ``op_column`` a value of -1 removes the record and +1 adds it. Times without rows
    become empty steps; the result has one :class:`StreamStep` per t = 1..max t.
    Removals are checked against the records present (a record cannot be removed
    before it was added). A row that does not parse raises :class:`DataRowError`
    naming the file, the line and the value.
    """
    header, rows = _read_csv(csv_path)
    needed = (*domain.names, time_column, *([op_column] if op_column else []))
    for name in needed:
        if name not in header:
            raise DPStreamInputError("columns", f"the CSV must have a column {name!r}", header)
    position = {name: header.index(name) for name in needed}
    by_time: dict[int, tuple[list[list[int]], list[list[int]]]] = {}
    for line, row in rows:
        if len(row) != len(header):
            raise DataRowError(csv_path, line, "row", f"has {len(row)} fields, the header {len(header)}",
                               ",".join(row))
        cell = {name: row[i] for name, i in position.items()}
        try:
            t = int(cell[time_column])
        except ValueError:
            raise DataRowError(csv_path, line, time_column, "times must be integers >= 1",
                               cell[time_column]) from None
        if t < 1:
            raise DataRowError(csv_path, line, time_column, "times must be integers >= 1", cell[time_column])
        record = [_code(csv_path, line, n, cell[n], size) for n, size in zip(domain.names, domain.sizes, strict=True)]
        op = 1
        if op_column:
            if cell[op_column].strip() not in ("1", "+1", "-1"):
                raise DataRowError(csv_path, line, op_column, "must be +1 or -1", cell[op_column])
            op = int(cell[op_column])
        added, removed = by_time.setdefault(t, ([], []))
        (added if op == 1 else removed).append(record)
    horizon = max(by_time, default=0)
    steps = [StreamStep.build(domain, *by_time.get(t, ([], []))) for t in range(1, horizon + 1)]
    tracker = RecordMultiset(domain)
    for step in steps:
        tracker.check(step)
        tracker.apply(step)
    return steps


def generate_records(domain: Domain, n: int, seed: int, concentration: float = 0.5) -> IntArray:
    """``n`` records from a random chain-structured distribution on ``domain`` (for tests).

    Attribute 0 has random marginal probabilities; attribute i depends on attribute
    i-1 through a random conditional table. Dirichlet(``concentration``) weights make
    the marginals clearly non-uniform. Non-private randomness (``data_rng``).
    """
    n = require_int_at_least("n", n, 0)
    rng = data_rng(seed)
    out = np.zeros((n, domain.p), dtype=np.int64)
    first = rng.dirichlet(np.full(domain.sizes[0], concentration))
    out[:, 0] = rng.choice(domain.sizes[0], size=n, p=first)
    for i in range(1, domain.p):
        table = rng.dirichlet(np.full(domain.sizes[i], concentration), size=domain.sizes[i - 1])
        u = rng.random(n)
        cdf = np.cumsum(table[out[:, i - 1]], axis=1)
        out[:, i] = np.minimum((u[:, None] > cdf).sum(axis=1), domain.sizes[i] - 1)
    return out


def generate_stream(domain: Domain, T: int, batch: int, seed: int, removal_rate: float = 0.0) -> list[StreamStep]:
    """T steps of ``batch`` generated records each; a ``removal_rate`` share of present records
    (rounded down, chosen uniformly) is removed at every step from t = 2 on."""
    T = require_int_at_least("T", T, 1)
    batch = require_int_at_least("batch", batch, 0)
    if not 0.0 <= removal_rate <= 1.0:
        raise DPStreamInputError("removal_rate", "must lie in [0, 1]", removal_rate)
    rng = data_rng(seed)
    records = generate_records(domain, T * batch, int(rng.integers(0, 2**31)))
    present: list[IntArray] = []
    steps: list[StreamStep] = []
    empty = np.zeros((0, domain.p), dtype=np.int64)
    for t in range(T):
        added = records[t * batch:(t + 1) * batch]
        pool = np.concatenate(present, axis=0) if present else empty
        n_remove = int(removal_rate * pool.shape[0]) if t > 0 else 0
        if n_remove:
            pick = rng.choice(pool.shape[0], size=n_remove, replace=False)
            removed = pool[np.sort(pick)]
            keep = np.ones(pool.shape[0], dtype=bool)
            keep[pick] = False
            pool = pool[keep]
        else:
            removed = empty
        present = [pool, added]
        steps.append(StreamStep(added.copy(), removed.copy()))
    return steps

