"""Hierarchical partitions of a domain Omega and their trees T (001 section 3.1, 001-eq4-5).

A hierarchical partition with fanout beta > 1 is a tree T whose vertices are subsets of
Omega: the root is Omega and the children of every vertex partition it. Here a vertex is
named by its *path* from the root, a tuple of child indices in ``range(beta)``: the root
is ``()``, its children ``(0,)``, ..., ``(beta - 1,)``, and so on. The tree has a maximum
depth D (``max_depth``): vertices at depth D are the leaves of T.

Two domains (001 section 3.1):

* :class:`HypercubePartition` -- Omega = [0, 1]^d; the vertex at depth k splits coordinate
  ``k mod d`` into ``fanout`` equal intervals (fanout 2 halves it, as in the paper:
  Omega_1 = [0, 1/2) x [0, 1]^(d-1), Omega_2 = [1/2, 1] x [0, 1]^(d-1)). Intervals are
  half-open except the last one, which keeps the upper boundary 1.
* :class:`BooleanCubePartition` -- Omega = {0, 1}^d; the vertex at depth k fixes coordinate
  k (child i = {x : x_k = i}), so fanout 2 and D <= d.

Both locate points vectorially (:meth:`Partition.locate`) and sample uniform points in a
vertex through the noise source (:meth:`Partition.sample`, rule (5) of 001-eq4-5).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from typing import TypeAlias

import numpy as np
import numpy.typing as npt

from dpstream.errors import DPStreamInputError, require_int_at_least
from dpstream.noise import NoiseSource

__all__ = [
    "BooleanCubePartition",
    "FloatArray",
    "HypercubePartition",
    "IntArray",
    "Node",
    "Partition",
    "node_label",
]

Node: TypeAlias = tuple[int, ...]
"""A vertex of T: its path of child indices from the root (the root is ``()``)."""

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


def node_label(v: Node) -> str:
    """The vertex's name in draw sites: ``"root"`` or the dotted path, e.g. ``"0.1.1"``."""
    return "root" if not v else ".".join(str(i) for i in v)


class Partition(ABC):
    """A hierarchical partition (tree T) with fanout ``beta`` and maximum depth ``max_depth``."""

    beta: int
    max_depth: int
    dimension: int

    def __init__(self, beta: int, max_depth: int, dimension: int) -> None:
        self.beta = require_int_at_least("fanout", beta, 2)
        self.max_depth = require_int_at_least("max_depth", max_depth, 0)
        self.dimension = require_int_at_least("d", dimension, 1)

    # ---------------------------------------------------------------- the tree T
    @property
    def root(self) -> Node:
        return ()

    def depth(self, v: Node) -> int:
        return len(v)

    def parent(self, v: Node) -> Node:
        if not v:
            raise DPStreamInputError("v", "the root has no parent", v)
        return v[:-1]

    def children(self, v: Node) -> list[Node]:
        """The children of v in T (none at the maximum depth)."""
        if len(v) >= self.max_depth:
            return []
        return [(*v, i) for i in range(self.beta)]

    def is_node(self, v: object) -> bool:
        return (isinstance(v, tuple) and len(v) <= self.max_depth
                and all(isinstance(i, int) and not isinstance(i, bool) and 0 <= i < self.beta for i in v))

    def ancestors(self, v: Node) -> list[Node]:
        """Strict ancestors of v, from the root down."""
        return [v[:k] for k in range(len(v))]

    def nodes(self) -> Iterator[Node]:
        """All vertices of T in breadth-first order (only for small trees: beta^(D+1) of them)."""
        level: list[Node] = [()]
        while level:
            yield from level
            level = [c for v in level for c in self.children(v)]

    def size(self) -> int:
        """|V(T)| = sum_{k <= D} beta^k."""
        return sum(self.beta**k for k in range(self.max_depth + 1))

    def leaves(self) -> Iterator[Node]:
        """The leaves of T (all vertices at depth D)."""
        return (v for v in self.nodes() if len(v) == self.max_depth)

    # ---------------------------------------------------------------- the domain
    def _point_array(self, points: object, field: str, space: str) -> FloatArray:
        """``points`` as an (n, d) float array (an empty input gives shape (0, d)); membership is checked by callers."""
        try:
            arr = np.asarray(points, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise DPStreamInputError(field, f"must be an array of points of {space}", points) from exc
        if arr.size == 0:
            return np.zeros((0, self.dimension), dtype=np.float64)
        if arr.ndim != 2 or arr.shape[1] != self.dimension:
            raise DPStreamInputError(field, f"must have shape (n, {self.dimension})", arr.shape)
        return arr

    @abstractmethod
    def validate_points(self, points: object, field: str = "points") -> FloatArray:
        """Return ``points`` as an (n, d) float array; raise DPStreamInputError if any lies outside Omega."""

    @abstractmethod
    def locate(self, points: FloatArray) -> IntArray:
        """The leaf paths of validated points: an (n, D) integer array of child indices."""

    @abstractmethod
    def sample(self, noise: NoiseSource, site_name: str, v: Node, count: int) -> FloatArray:
        """``count`` independent uniform points of vertex v (one draw at ``site_name``)."""

    @abstractmethod
    def cell(self, v: Node) -> tuple[FloatArray, FloatArray]:
        """Bounding box [low, high] of vertex v (for plots and range queries)."""

    def leaf_of(self, x: Sequence[float]) -> Node:
        """The leaf of T that contains the single point x."""
        path = self.locate(self.validate_points([list(x)]))[0]
        return tuple(int(i) for i in path)


class HypercubePartition(Partition):
    """Omega = [0, 1]^d, the vertex at depth k cut into ``fanout`` equal parts along coordinate k mod d."""

    def __init__(self, d: int, max_depth: int, fanout: int = 2) -> None:
        super().__init__(fanout, max_depth, d)

    def __repr__(self) -> str:
        return f"HypercubePartition(d={self.dimension}, max_depth={self.max_depth}, fanout={self.beta})"

    def validate_points(self, points: object, field: str = "points") -> FloatArray:
        arr = self._point_array(points, field, "R^d")
        bad = ~(np.isfinite(arr).all(axis=1) & (arr >= 0.0).all(axis=1) & (arr <= 1.0).all(axis=1))
        if bad.any():
            raise DPStreamInputError(field, f"must lie in the domain [0, 1]^{self.dimension}",
                                     arr[np.argmax(bad)].tolist())
        return arr

    def _splits_before(self, k: int, j: int) -> int:
        """How many of the levels 0..k-1 cut coordinate j."""
        d = self.dimension
        return (k - j + d - 1) // d if k > j else 0

    def locate(self, points: FloatArray) -> IntArray:
        n, D, beta, d = points.shape[0], self.max_depth, self.beta, self.dimension
        paths = np.zeros((n, D), dtype=np.int64)
        for k in range(D):
            j = k % d
            m = self._splits_before(k, j) + 1  # the cut at level k is the m-th cut of coordinate j
            scale = float(beta) ** m
            cell_index = np.minimum(np.floor(points[:, j] * scale), scale - 1.0)
            paths[:, k] = np.mod(cell_index, beta).astype(np.int64)
        return paths

    def cell(self, v: Node) -> tuple[FloatArray, FloatArray]:
        low = np.zeros(self.dimension, dtype=np.float64)
        width = np.ones(self.dimension, dtype=np.float64)
        for k, i in enumerate(v):
            j = k % self.dimension
            width[j] /= self.beta
            low[j] += i * width[j]
        return low, low + width

    def sample(self, noise: NoiseSource, site_name: str, v: Node, count: int) -> FloatArray:
        if count == 0:
            return np.zeros((0, self.dimension), dtype=np.float64)
        low, high = self.cell(v)
        return noise.uniform_box(site_name, low.tolist(), high.tolist(), count)


class BooleanCubePartition(Partition):
    """Omega = {0, 1}^d; the vertex at depth k fixes coordinate k (fanout 2, D <= d)."""

    def __init__(self, d: int, max_depth: int | None = None) -> None:
        d = require_int_at_least("d", d, 1)
        depth = d if max_depth is None else require_int_at_least("max_depth", max_depth, 0)
        if depth > d:
            raise DPStreamInputError("max_depth", f"must be <= d = {d} (one level per coordinate)", depth)
        super().__init__(2, depth, d)

    def __repr__(self) -> str:
        return f"BooleanCubePartition(d={self.dimension}, max_depth={self.max_depth})"

    def validate_points(self, points: object, field: str = "points") -> FloatArray:
        arr = self._point_array(points, field, "{0,1}^d")
        bad = ~((arr == 0.0) | (arr == 1.0)).all(axis=1)
        if bad.any():
            raise DPStreamInputError(field, f"must lie in the domain {{0,1}}^{self.dimension}",
                                     arr[np.argmax(bad)].tolist())
        return arr

    def locate(self, points: FloatArray) -> IntArray:
        return points[:, : self.max_depth].astype(np.int64)

    def cell(self, v: Node) -> tuple[FloatArray, FloatArray]:
        low = np.zeros(self.dimension, dtype=np.float64)
        high = np.ones(self.dimension, dtype=np.float64)
        for k, i in enumerate(v):
            low[k] = high[k] = float(i)
        return low, high

    def sample(self, noise: NoiseSource, site_name: str, v: Node, count: int) -> FloatArray:
        # The free coordinates k..d-1 of a uniform point of v are the binary digits of a uniform
        # integer r in [0, 2^(d-k)), drawn as floor of one uniform_box coordinate.
        free = self.dimension - len(v)
        out = np.zeros((count, self.dimension), dtype=np.float64)
        if count == 0:
            return out
        out[:, : len(v)] = np.asarray(v, dtype=np.float64)
        # one draw per non-empty vertex, also when v is a single point (free == 0: u is ignored)
        u = noise.uniform_box(site_name, [0.0], [float(2**free)], count)[:, 0]
        r = np.minimum(np.floor(u), 2**free - 1).astype(np.int64)
        for j in range(free):
            out[:, len(v) + j] = (r >> (free - 1 - j)) & 1
        return out
