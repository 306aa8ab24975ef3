"""Range queries and the average relative error of section 5.4 (001-sec5.4).

q_{Omega'}(h) = sum_{x in Omega'} h(x) for axis-aligned rectangles Omega' (here closed boxes
[low, high]). Three query sets, by the rectangle's share of the area of Omega = [0, 1]^2:
small [0.01%, 0.1%) (10,000 queries), medium [0.1%, 1%) (5000), large [1%, 10%) (1000).

r(Q, f, g, t) = (1/|Q|) sum_q |q(f(., t)) - q(g(., t))| / max(q(f(., t)), 0.001 |f(., t)|),
|f(., t)| the number of points present (the text calls 0.001 |f| "1%", it is 0.1%).

Random rectangles (:func:`random_rectangles`): area A uniform in the band, aspect ratio
w/h = exp(U) with U uniform in [-ln 4, ln 4], w = sqrt(A r), h = A / w (redrawn if a side
exceeds 1), position uniform inside [0, 1]^2. The authors' 16,000 rectangles can be loaded
with :func:`dpstream.phdstream.data.load_query_csv`. Non-private randomness: ``data_rng``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from dpstream.errors import DPStreamInputError, require_int_at_least

__all__ = ["QUERY_BANDS", "RangeQueries", "count_in_boxes", "query_set", "random_rectangles", "relative_error"]

FloatArray = npt.NDArray[np.float64]

QUERY_BANDS: dict[str, tuple[float, float, int]] = {
    "small": (1e-4, 1e-3, 10_000),
    "medium": (1e-3, 1e-2, 5_000),
    "large": (1e-2, 1e-1, 1_000),
}
"""size -> (lowest area share, highest area share (excluded), number of queries) of section 5.4."""


@dataclass(frozen=True)
class RangeQueries:
    """Axis-aligned boxes [low_i, high_i] (q, d)."""

    low: FloatArray
    high: FloatArray

    def __post_init__(self) -> None:
        if self.low.shape != self.high.shape or self.low.ndim != 2:
            raise DPStreamInputError("high", "low and high must be (q, d) arrays of one shape", self.high.shape)
        if (self.high < self.low).any():
            raise DPStreamInputError("high", "must be >= low in every coordinate", None)

    def __len__(self) -> int:
        return int(self.low.shape[0])

    @property
    def areas(self) -> FloatArray:
        return np.asarray(np.prod(self.high - self.low, axis=1), dtype=np.float64)


def random_rectangles(rng: np.random.Generator, n: int, area_low: float, area_high: float) -> RangeQueries:
    """``n`` random rectangles in [0, 1]^2 with area in [area_low, area_high) (module docstring)."""
    n = require_int_at_least("n", n, 0)
    if not 0.0 < area_low < area_high <= 1.0:
        raise DPStreamInputError("area_high", "need 0 < area_low < area_high <= 1", (area_low, area_high))
    low = np.zeros((n, 2))
    high = np.zeros((n, 2))
    filled = 0
    while filled < n:
        k = n - filled
        area = rng.uniform(area_low, area_high, size=k)
        ratio = np.exp(rng.uniform(-math.log(4.0), math.log(4.0), size=k))
        w = np.sqrt(area * ratio)
        h = area / w
        ok = (w <= 1.0) & (h <= 1.0)
        w, h = w[ok], h[ok]
        m = w.shape[0]
        x0 = rng.uniform(0.0, 1.0, size=m) * (1.0 - w)
        y0 = rng.uniform(0.0, 1.0, size=m) * (1.0 - h)
        low[filled:filled + m] = np.column_stack([x0, y0])
        high[filled:filled + m] = np.column_stack([x0 + w, y0 + h])
        filled += m
    return RangeQueries(low, high)


def query_set(seed: int, size: str, n: int | None = None) -> RangeQueries:
    """The section 5.4 query set ``size`` ("small", "medium", "large"), ``n`` queries (default the paper's)."""
    from dpstream.noise import data_rng

    if size not in QUERY_BANDS:
        raise DPStreamInputError("size", f"must be one of {sorted(QUERY_BANDS)}", size)
    lo, hi, default_n = QUERY_BANDS[size]
    return random_rectangles(data_rng(seed), default_n if n is None else n, lo, hi)


def count_in_boxes(points: object, queries: RangeQueries) -> npt.NDArray[np.int64]:
    """q(h) for every box: how many of ``points`` (n, d) lie in [low, high] (closed)."""
    pts = np.asarray(points, dtype=np.float64)
    q, d = queries.low.shape
    if pts.size == 0:
        return np.zeros(q, dtype=np.int64)
    if pts.ndim != 2 or pts.shape[1] != d:
        raise DPStreamInputError("points", f"must have shape (n, {d})", pts.shape)
    order = np.argsort(pts[:, 0], kind="stable")
    xs = pts[order, 0]
    rest = pts[order, 1:]
    start = np.searchsorted(xs, queries.low[:, 0], side="left")
    stop = np.searchsorted(xs, queries.high[:, 0], side="right")
    out = np.zeros(q, dtype=np.int64)
    lo_rest, hi_rest = queries.low[:, 1:], queries.high[:, 1:]
    for i in range(q):
        block = rest[start[i]:stop[i]]
        if block.shape[0]:
            out[i] = int(np.count_nonzero(((block >= lo_rest[i]) & (block <= hi_rest[i])).all(axis=1)))
    return out


def relative_error(queries: RangeQueries, true_points: object, synthetic_points: object,
                   floor: float = 0.001) -> float:
    """r(Q, f, g, t) of section 5.4 (``floor`` = 0.001: the additive term 0.001 |f(., t)|)."""
    true_pts = np.asarray(true_points, dtype=np.float64)
    size = 0 if true_pts.size == 0 else true_pts.shape[0]
    q_f = count_in_boxes(true_pts, queries).astype(np.float64)
    q_g = count_in_boxes(synthetic_points, queries).astype(np.float64)
    denominator = np.maximum(q_f, floor * size)
    if len(queries) == 0:
        return 0.0
    if (denominator <= 0).any():
        raise DPStreamInputError("true_points", "r is undefined when f(., t) is empty (0 / 0)", size)
    return float(np.mean(np.abs(q_f - q_g) / denominator))
