"""Data for PHDStream: the concentric-circles streams (001 section 5.1, App. G) and CSV loaders.

Concentric circles (:func:`concentric_circles_stream`). Two circles of radius 1 (outer) and
``factor`` (inner), ``n // 2`` outer points and the rest inner, angles uniform, Gaussian noise
of standard deviation ``noise`` on both coordinates, then min-max scaled per axis to [0, 1]^2.
(The authors drew theirs with scikit-learn's ``make_circles(noise=0.05, factor=0.667)``; ours
is drawn with ``dpstream.noise.data_rng`` and needs no scikit-learn.)

* without deletion: all points added in random order (both circles grow);
* with deletion: every outer point added first; then, for i = 1, 2, ..., outer point i is
  removed and inner point i added; then any remaining inner points are added. The density
  moves from the outer to the inner circle (the authors' ``motion_circles.csv`` has exactly
  this row structure, see ``data/motion_circles/SOURCE.md`` of the repository).

Time comes from batching in row order (constant batch size) and the initialization ratio t0
(:func:`dpstream.phdstream.initialization.initialize_by_ratio`).

CSV (:func:`load_point_stream_csv`): a header with ``x``, ``y`` and optional ``time`` and
``move`` (+1 added, -1 removed; default +1). With ``time`` the batches are the rows of each
time value in increasing order; without it the rows are batched in file order.
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from dpstream.errors import DataRowError, DPStreamInputError, require_finite_real, require_int_at_least
from dpstream.noise import data_rng
from dpstream.phdstream.metric import RangeQueries
from dpstream.phdstream.partition import FloatArray, IntArray
from dpstream.phdstream.stream import PointEvents

__all__ = [
    "EventStream",
    "concentric_circles_stream",
    "load_point_stream_csv",
    "load_query_csv",
    "two_circles",
]


@dataclass(frozen=True)
class EventStream:
    """Events in stream order: ``points`` (n, d), ``moves`` (n,) in {+1, -1}, optional ``times`` (n,)."""

    points: FloatArray
    moves: IntArray
    times: IntArray | None = None

    def __len__(self) -> int:
        return int(self.points.shape[0])

    def as_events(self) -> PointEvents:
        return PointEvents(self.points, self.moves)

    def batches_by_time(self) -> list[PointEvents]:
        """One batch per time value (increasing); requires ``times``."""
        if self.times is None:
            raise DPStreamInputError("times", "this stream has no time column", None)
        out = []
        for value in np.unique(self.times):
            mask = self.times == value
            out.append(PointEvents(self.points[mask], self.moves[mask]))
        return out


def two_circles(rng: np.random.Generator, n: int, noise: float = 0.05, factor: float = 0.667
                ) -> tuple[FloatArray, IntArray]:
    """``n`` points on two concentric circles (raw coordinates) and their labels (0 outer, 1 inner)."""
    n = require_int_at_least("n", n, 0)
    noise = require_finite_real("noise", noise)
    factor = require_finite_real("factor", factor)
    if noise < 0 or not 0.0 < factor < 1.0:
        raise DPStreamInputError("factor", "need noise >= 0 and 0 < factor < 1", (noise, factor))
    n_out = n // 2
    labels = np.concatenate([np.zeros(n_out, dtype=np.int64), np.ones(n - n_out, dtype=np.int64)])
    angle = rng.uniform(0.0, 2.0 * math.pi, size=n)
    radius = np.where(labels == 0, 1.0, factor)
    pts = np.column_stack([radius * np.cos(angle), radius * np.sin(angle)])
    pts = pts + rng.normal(0.0, noise, size=pts.shape)
    return pts, labels


def _minmax(points: FloatArray) -> FloatArray:
    lo = points.min(axis=0)
    span = points.max(axis=0) - lo
    span[span == 0] = 1.0
    return np.asarray(np.clip((points - lo) / span, 0.0, 1.0), dtype=np.float64)


def concentric_circles_stream(n: int, *, deletion: bool, seed: int, noise: float = 0.05,
                              factor: float = 0.667) -> EventStream:
    """The concentric-circles event stream (module docstring), scaled to [0, 1]^2."""
    rng = data_rng(seed)
    raw, labels = two_circles(rng, n, noise, factor)
    pts = _minmax(raw) if n else raw.reshape(0, 2)
    if not deletion:
        order = rng.permutation(n)
        return EventStream(pts[order], np.ones(n, dtype=np.int64))
    outer = np.flatnonzero(labels == 0)
    inner = np.flatnonzero(labels == 1)
    rows: list[int] = list(outer)
    moves: list[int] = [1] * len(outer)
    pairs = min(len(outer), len(inner))
    for i in range(pairs):
        rows += [int(outer[i]), int(inner[i])]
        moves += [-1, 1]
    rows += [int(j) for j in inner[pairs:]]
    moves += [1] * (len(inner) - pairs)
    return EventStream(pts[np.asarray(rows, dtype=np.int64)], np.asarray(moves, dtype=np.int64))


def _rows(path: Path) -> tuple[list[str], list[tuple[int, list[str]]]]:
    """The header and the non-empty rows, each with its line number (the header is line 1)."""
    with path.open(newline="", encoding="utf-8") as handle:
        reader = csv.reader(handle)
        try:
            header = [h.strip() for h in next(reader)]
        except StopIteration:
            raise DPStreamInputError("path", "the CSV file is empty", str(path)) from None
        return header, [(reader.line_num, row) for row in reader if row]


def _cell(path: Path, line: int, row: list[str], header: list[str], name: str) -> float:
    """The finite number in column ``name`` of a row (DataRowError naming file, line and value otherwise)."""
    if len(row) != len(header):
        raise DataRowError(path, line, "row", f"has {len(row)} fields, the header {len(header)}", ",".join(row))
    cell = row[header.index(name)]
    try:
        value = float(cell)
    except ValueError:
        raise DataRowError(path, line, name, "must be a number", cell) from None
    if not math.isfinite(value):
        raise DataRowError(path, line, name, "must be a finite number", cell)
    return value


def load_point_stream_csv(path: str | Path) -> EventStream:
    """Read a point stream: columns x, y (required, in [0, 1]), time and move (optional; move in {+1, -1}).

    A row that does not parse (a short row, a non-numeric cell, a coordinate outside [0, 1], a move other
    than +1/-1, a non-integer time) raises :class:`DataRowError` naming the file, the line and the value.
    """
    p = Path(path)
    if not p.is_file():
        raise DPStreamInputError("path", "no such CSV file", str(p))
    header, rows = _rows(p)
    for name in ("x", "y"):
        if name not in header:
            raise DPStreamInputError("path", f"the CSV needs a column {name!r}", header)
    has_time, has_move = "time" in header, "move" in header
    pts, moves, times = [], [], []
    for k, row in rows:
        x, y = _cell(p, k, row, header, "x"), _cell(p, k, row, header, "y")
        for name, value in (("x", x), ("y", y)):
            if not 0.0 <= value <= 1.0:
                raise DataRowError(p, k, name, "must lie in [0, 1] (the domain of the partition)",
                                   row[header.index(name)])
        move = _cell(p, k, row, header, "move") if has_move else 1.0
        if move not in (1.0, -1.0):
            raise DataRowError(p, k, "move", "must be +1 or -1", row[header.index("move")])
        t = _cell(p, k, row, header, "time") if has_time else 0.0
        if not t.is_integer():
            raise DataRowError(p, k, "time", "must be an integer", row[header.index("time")])
        pts.append((x, y))
        moves.append(int(move))
        times.append(int(t))
    return EventStream(np.asarray(pts, dtype=np.float64).reshape(len(pts), 2), np.asarray(moves, dtype=np.int64),
                       np.asarray(times, dtype=np.int64) if has_time else None)


def load_query_csv(path: str | Path) -> dict[str, RangeQueries]:
    """Read rectangles (columns xmin, ymin, xmax, ymax, size), grouped by ``size``.

    A row that does not parse raises :class:`DataRowError` naming the file, the line and the value.
    """
    p = Path(path)
    if not p.is_file():
        raise DPStreamInputError("path", "no such CSV file", str(p))
    header, rows = _rows(p)
    need = ("xmin", "ymin", "xmax", "ymax", "size")
    if any(h not in header for h in need):
        raise DPStreamInputError("path", f"the query CSV needs the columns {need}", header)
    groups: dict[str, list[list[float]]] = {}
    for k, row in rows:
        box = [_cell(p, k, row, header, name) for name in need[:4]]
        groups.setdefault(row[header.index("size")], []).append(box)
    out = {}
    for size, boxes in groups.items():
        arr = np.asarray(boxes, dtype=np.float64)
        out[size] = RangeQueries(arr[:, :2].copy(), arr[:, 2:].copy())
    return out
