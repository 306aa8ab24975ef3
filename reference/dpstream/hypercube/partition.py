"""The growing binary hierarchical partition of [0,1]^d (004-sec3.1, levels of 004 section 3.2).

A region Omega_theta is indexed by a bit string theta in {0,1}^{<=r}; |theta| = j is
its depth. We store theta as ``(j, index)`` where ``index`` is the integer whose
j binary digits, most significant first, are theta (the root is ``(0, 0)``).

Splitting rule (004-sec3.1 does not state it; its volume 2^{-j} and l_inf diameter
2^{-floor(j/d)} imply this one): the split from depth k to depth k + 1 halves
coordinate ``k mod d`` at its midpoint, so the coordinates are halved in turn.
Bit 0 is the lower half-open half [a, m), bit 1 the upper half [m, b); the upper
cells of coordinate c are closed at 1, so every x in [0,1]^d lies in exactly one
region of each depth.

Level schedule (004-sec3.1, section 3.2 (1)): all regions of depth j are created at
t_j = ceil(2^j / eps); t is *of level j* if t_j <= t < t_{j+1}, and the tree then has
depth j. :func:`depth_at` gives j (0 before t_1), :func:`depth_as_printed` gives the
depth that 004-alg1 u2 produces as printed (one more; docs/errata/hypercube.md).
The partition depends on t only, never on the data (proofs/proof_hypercube_privacy.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

import numpy as np
import numpy.typing as npt

from dpstream.arithmetic import recording_active
from dpstream.counters.sparse import level_start
from dpstream.errors import DPStreamInputError, require_int_at_least, require_positive_finite

__all__ = [
    "BinaryPartition",
    "Region",
    "depth_as_printed",
    "depth_at",
    "level_time",
]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


def _as_fraction(epsilon: float) -> Fraction:
    # Exact rational value of the float eps, so that ceil(2^j / eps) has no rounding error.
    return Fraction(require_positive_finite("epsilon", epsilon))


def level_time(j: int, epsilon: float) -> int:
    """t_j = ceil(2^j / eps): the time at which the regions of depth j are created (004-sec3.1)."""
    return level_start(j, epsilon)


@lru_cache(maxsize=65536)
def _depth_at(t: int, epsilon: float) -> int:
    j = 0
    while level_time(j + 1, epsilon) <= t:
        j += 1
    return j


def depth_at(t: int, epsilon: float) -> int:
    """The level j of time t: t_j <= t < t_{j+1}, i.e. j = floor(log2(eps t)); 0 when eps t < 2.

    For t < t_0 (only when eps < 1) the tree is the root alone, depth 0 as well. The level times are exact
    (:func:`level_time`); when decisions are recorded, the ones this answer rests on are noted again (the answer is
    cached)."""
    t, epsilon = require_int_at_least("t", t, 1), require_positive_finite("epsilon", epsilon)
    j = _depth_at(t, epsilon)
    if recording_active():
        for level in range(1, j + 2):
            level_time(level, epsilon)
    return j


def depth_as_printed(t: int, epsilon: float) -> int:
    """The depth r that 004-alg1 u2 leaves as printed: the least r with t < 2^r / eps.

    That is floor(log2(eps t)) + 1 when eps t >= 1 and 0 otherwise: one more than
    :func:`depth_at` from t_0 on (the off-by-one recorded in docs/errata/hypercube.md).
    """
    t = require_int_at_least("t", t, 1)
    e = _as_fraction(epsilon)
    r = 0
    while t >= Fraction(2**r) / e:  # [004-alg1 u2] while t >= 2^r / eps do r <- r + 1
        level_time(r, epsilon)  # the same exact quotient: noted as a decision when decisions are recorded
        r += 1
    level_time(r, epsilon)
    return r


@dataclass(frozen=True)
class Region:
    """Omega_theta: ``depth`` = |theta|, ``index`` = theta read as a binary number."""

    depth: int
    index: int

    def __post_init__(self) -> None:
        require_int_at_least("depth", self.depth, 0)
        if not 0 <= self.index < 2**self.depth:
            raise DPStreamInputError("index", f"must lie in [0, 2^{self.depth})", self.index)

    @property
    def theta(self) -> str:
        """The bit string theta ('' for the root)."""
        return format(self.index, f"0{self.depth}b") if self.depth else ""

    @property
    def label(self) -> str:
        """Stable text for draw sites: the bits, or 'root'."""
        return self.theta or "root"

    def child(self, bit: int) -> Region:
        """Omega_{theta bit}."""
        if bit not in (0, 1):
            raise DPStreamInputError("bit", "must be 0 or 1", bit)
        return Region(self.depth + 1, 2 * self.index + bit)

    def parent(self) -> Region:
        if self.depth == 0:
            raise DPStreamInputError("depth", "the root has no parent", 0)
        return Region(self.depth - 1, self.index >> 1)

    def ancestor(self, depth: int) -> Region:
        """The region of depth ``depth`` <= self.depth that contains this one."""
        if not 0 <= depth <= self.depth:
            raise DPStreamInputError("depth", f"must lie in [0, {self.depth}]", depth)
        return Region(depth, self.index >> (self.depth - depth))


class BinaryPartition:
    """The binary hierarchical partition of [0,1]^d with coordinates halved in turn (004-sec3.1)."""

    def __init__(self, d: int) -> None:
        self.d = require_int_at_least("d", d, 1)

    def splits(self, depth: int) -> list[int]:
        """How many times each coordinate has been halved at ``depth``: ceil or floor of depth/d."""
        depth = require_int_at_least("depth", depth, 0)
        return [depth // self.d + (1 if c < depth % self.d else 0) for c in range(self.d)]

    def split_coordinate(self, depth: int) -> int:
        """The coordinate halved when regions of ``depth`` are split into ``depth + 1``."""
        return require_int_at_least("depth", depth, 0) % self.d

    def box(self, region: Region) -> tuple[FloatArray, FloatArray]:
        """(low, high) corners of Omega_theta; high is included only where it equals 1."""
        low = np.zeros(self.d, dtype=np.float64)
        width = np.ones(self.d, dtype=np.float64)
        for k, bit in enumerate(region.theta):
            c = k % self.d
            width[c] /= 2.0
            if bit == "1":
                low[c] += width[c]
        return low, low + width

    def diameter(self, depth: int) -> float:
        """l_inf diameter of every region of ``depth``: 2^{-floor(depth/d)} (004-sec3.1)."""
        return float(2.0 ** -(require_int_at_least("depth", depth, 0) // self.d))

    def validate_point(self, x: object, field: str = "x_t") -> FloatArray:
        """A point of [0,1]^d as a float array; raises DPStreamInputError otherwise (no NaN, right d)."""
        if isinstance(x, str | bytes | bool) or (isinstance(x, np.ndarray) and x.dtype.kind not in "iuf"):
            raise DPStreamInputError(field, f"must be a point of [0,1]^{self.d} (real coordinates)", x)
        if isinstance(x, Sequence) and any(isinstance(v, str | bytes | bool) for v in x):
            raise DPStreamInputError(field, "coordinates must be real numbers", x)
        try:
            arr = np.asarray(x, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise DPStreamInputError(field, f"must be a point of [0,1]^{self.d}", x) from exc
        if arr.ndim == 0 and self.d == 1:
            arr = arr.reshape(1)
        if arr.shape != (self.d,):
            raise DPStreamInputError(field, f"must have dimension d = {self.d}", x)
        if not np.all(np.isfinite(arr)):
            raise DPStreamInputError(field, "coordinates must be finite (no NaN or inf)", x)
        if np.any(arr < 0.0) or np.any(arr > 1.0):
            raise DPStreamInputError(field, f"must lie in [0,1]^{self.d}", x)
        return arr

    def cell_indices(self, points: npt.ArrayLike, depth: int) -> IntArray:
        """Index of the region of ``depth`` containing each point (rows of ``points``, shape (n, d))."""
        depth = require_int_at_least("depth", depth, 0)
        pts = np.asarray(points, dtype=np.float64).reshape(-1, self.d)
        n_splits = self.splits(depth)
        # Per coordinate, the dyadic cell number at its own resolution (x = 1 goes to the last cell).
        per_coord = [
            np.minimum(np.floor(pts[:, c] * 2.0 ** n_splits[c]).astype(np.int64), 2 ** n_splits[c] - 1)
            for c in range(self.d)
        ]
        index = np.zeros(pts.shape[0], dtype=np.int64)
        for k in range(depth):
            c = k % self.d
            level = k // self.d  # this is the (level+1)-th halving of coordinate c
            bit = (per_coord[c] >> (n_splits[c] - 1 - level)) & 1
            index = (index << 1) | bit
        return index

    def cell_index(self, point: FloatArray, depth: int) -> int:
        """:meth:`cell_indices` of one validated point (shape (d,)), in plain Python (the per-step hot path)."""
        n_splits = self.splits(depth)
        per_coord = [min(int(float(point[c]) * 2.0 ** n_splits[c]), 2 ** n_splits[c] - 1) for c in range(self.d)]
        index = 0
        for k in range(depth):
            c = k % self.d
            index = (index << 1) | ((per_coord[c] >> (n_splits[c] - 1 - k // self.d)) & 1)
        return index

    def locate(self, x: npt.ArrayLike, depth: int) -> Region:
        """The region of ``depth`` containing the point x (validated)."""
        arr = self.validate_point(x)
        return Region(depth, int(self.cell_indices(arr, depth)[0]))

    def path(self, x: npt.ArrayLike, depth: int) -> list[Region]:
        """The root-to-leaf path Omega_emptyset ⊃ Omega_theta_1 ⊃ ... ⊃ Omega_theta_depth containing x."""
        leaf = self.locate(x, depth)
        return [leaf.ancestor(j) for j in range(depth + 1)]

    def true_counts(self, points: npt.ArrayLike, depth: int) -> list[IntArray]:
        """n_theta = |{i : x_i in Omega_theta}| for every theta of depth 0..``depth`` (004-sec3.1)."""
        pts = np.asarray(points, dtype=np.float64).reshape(-1, self.d)
        leaf = self.cell_indices(pts, depth)
        counts = []
        for j in range(depth + 1):
            counts.append(np.bincount(leaf >> (depth - j), minlength=2**j).astype(np.int64))
        return counts
