"""Point streams in, synthetic point streams out: batches, validation, rule (5) (001-eq2-3, 001-eq4-5).

A data stream f(x, t) counts the points present at x at time t; the algorithms consume its
differential stream nabla f(., t) = f(., t) - f(., t-1) (eq. (2)), one batch of events per
time step: :class:`PointEvents` holds points with moves +1 (added) or -1 (removed).

:class:`TrueStream` keeps the true multiset f(., t) to validate a batch *before* anything
is drawn: every point must lie in Omega, every move must be +1 or -1, and a removal needs
the point to be present (f(x, t) >= 0 for all x). It also yields nabla F(., t) by (4).

Rule (5): G is converted into synthetic points by sampling ceil(G(v)) uniform points in every
leaf v of T(t) (none if G(v) <= 0), through the noise source at
``site("001-eq5", t=t, v=node_label(v))``. Floating point: G is a sum of extension terms,
so an integer count may come out as 3.0000000000000004; :func:`synthetic_count` takes
ceil(G - 1e-9) so that such rounding does not add a point (documented in docs/phdstream.md).
"""

from __future__ import annotations

import math
from collections import Counter as Multiset
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import numpy as np

from dpstream.arithmetic import ceil_of, gamma
from dpstream.errors import DPStreamInputError, require_stream_sum, require_stream_value
from dpstream.noise import NoiseSource, site
from dpstream.phdstream.partition import FloatArray, IntArray, Node, Partition, node_label
from dpstream.phdstream.privtree import Subtree
from dpstream.phdstream.tree_function import (
    BatchCounts,
    TreeFunction,
    consistency_violations,
    require_tree_function,
)
from dpstream.staged import Staged

__all__ = [
    "MAX_SYNTHETIC_POINTS",
    "RULE5_SITE",
    "PointEvents",
    "SyntheticRelease",
    "TreeRelease",
    "TrueStream",
    "TrueTreeCounts",
    "ValidatedBatch",
    "require_synthetic_scale",
    "sample_rule5",
    "synthetic_count",
]

MAX_SYNTHETIC_POINTS = 10**8
"""Most points one release of rule (5) materializes (ceil(G(v)) points in every leaf v): 0.8 GB per coordinate."""

RULE5_SITE = "001-eq5"
_ROUNDING_GUARD = 1e-9


@dataclass(frozen=True)
class PointEvents:
    """One batch of the differential stream: ``points`` (n, d) with ``moves`` (n,) in {+1, -1}."""

    points: FloatArray
    moves: IntArray

    @classmethod
    def of(cls, points: object, moves: object | None = None) -> PointEvents:
        """Build a batch; ``moves`` defaults to +1 for every point. Shapes and moves are checked."""
        try:
            pts = np.asarray(points, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise DPStreamInputError("points", "must be an array of points", points) from exc
        if pts.size == 0:
            pts = pts.reshape(0, pts.shape[-1] if pts.ndim == 2 else 0)
        if pts.ndim != 2:
            raise DPStreamInputError("points", "must have shape (n, d)", pts.shape)
        n = pts.shape[0]
        if moves is None:
            mv = np.ones(n, dtype=np.int64)
        else:
            raw = np.asarray(moves).reshape(-1)
            if raw.shape[0] != n:
                raise DPStreamInputError("moves", f"must hold one move per point ({n})", raw.shape[0])
            if raw.size and not np.isin(raw, (1, -1)).all():
                raise DPStreamInputError("moves", "must be +1 (add) or -1 (remove)", raw[~np.isin(raw, (1, -1))][0])
            mv = raw.astype(np.int64)
        return cls(pts, mv)

    @classmethod
    def empty(cls, d: int) -> PointEvents:
        return cls(np.zeros((0, d), dtype=np.float64), np.zeros(0, dtype=np.int64))

    def __len__(self) -> int:
        return int(self.points.shape[0])

    @staticmethod
    def concatenate(batches: Iterable[PointEvents], d: int) -> PointEvents:
        items = list(batches)
        if not items:
            return PointEvents.empty(d)
        return PointEvents(np.concatenate([b.points.reshape(-1, d) for b in items]),
                           np.concatenate([b.moves for b in items]))


@dataclass(frozen=True)
class ValidatedBatch:
    """A validated batch: its points, moves, leaf paths and nabla F(., t) by (4) (absent vertices 0)."""

    points: FloatArray
    moves: IntArray
    paths: IntArray
    dF: BatchCounts


class TrueStream:
    """The true multiset f(., t): validates batches (no state change) and commits them."""

    def __init__(self, partition: Partition, track_counts: bool = False) -> None:
        self.partition = partition
        self.track_counts = track_counts
        self.present: Multiset[tuple[float, ...]] = Multiset()
        self.F: dict[Node, float] = {}
        """F(., t) by (4) on the vertices holding points (kept only with ``track_counts``)."""

    @property
    def size(self) -> int:
        """|f(., t)|: the number of points present."""
        return sum(self.present.values())

    def stage(self, batch: object) -> Staged[ValidatedBatch]:
        """Validate ``batch`` (a :class:`PointEvents`) against Omega and the current multiset;
        ``.commit()`` applies it to the multiset."""
        if not isinstance(batch, PointEvents):
            raise DPStreamInputError("batch", "must be a PointEvents (points with moves +1/-1)", type(batch).__name__)
        pts = self.partition.validate_points(batch.points)
        moves = batch.moves
        if moves.shape[0] != pts.shape[0]:
            raise DPStreamInputError("moves", f"must hold one move per point ({pts.shape[0]})", moves.shape[0])
        net: dict[tuple[float, ...], int] = {}
        for row, m in zip(pts.tolist(), moves.tolist(), strict=True):
            key = tuple(row)
            net[key] = net.get(key, 0) + int(m)
        after = {}
        for key, change in net.items():
            new = self.present.get(key, 0) + change
            if new < 0:
                raise DPStreamInputError("moves", "removes a point that is not present (f(x, t) would be < 0)",
                                         list(key))
            after[key] = new
        paths = self.partition.locate(pts)
        validated = ValidatedBatch(pts, moves, paths, BatchCounts(paths, moves.astype(np.float64), self.partition.beta))
        return Staged(validated, lambda: self._apply(validated, after))

    def _apply(self, prepared: ValidatedBatch, present_after: Mapping[tuple[float, ...], int]) -> None:
        for key, count in present_after.items():
            if count:
                self.present[key] = count
            else:
                self.present.pop(key, None)
        if not self.track_counts:
            return
        for v, x in prepared.dF.items():
            value = self.F.get(v, 0.0) + x
            if value:
                self.F[v] = value
            else:
                self.F.pop(v, None)

    def points(self) -> FloatArray:
        """The points of f(., t) (with multiplicity)."""
        rows = [key for key, count in self.present.items() for _ in range(count)]
        return np.asarray(rows, dtype=np.float64).reshape(len(rows), self.partition.dimension)


def synthetic_count(value: float) -> int:
    """ceil(G(v)) of rule (5), 0 when G(v) <= 0, with a 1e-9 guard against rounding up float noise.

    Noted as a decision (``dpstream.arithmetic.ceil_of``): G(v) is a sum of the stream's noisy counts, so its rounding
    is the case's release bound (``inherits``); the subtraction of the guard adds one rounding."""
    if not math.isfinite(value):
        raise DPStreamInputError("G(v)", "must be finite", value)
    return max(0, ceil_of("001-eq5 ceil(G(v) - 1e-9)", value - _ROUNDING_GUARD, 2.0 * gamma(1) * abs(value),
                          inherits=True))


def require_synthetic_scale(epsilon: float, scale: float) -> None:
    """Refuse now an ``epsilon`` whose count noise (``scale``) would put about that many points in a leaf: more
    than :data:`MAX_SYNTHETIC_POINTS` in a release, so that most steps could not be released."""
    if not scale <= MAX_SYNTHETIC_POINTS:
        raise DPStreamInputError("epsilon", f"gives the counts a noise scale of {scale:.3g}: rule (5) would place "
                                 f"about that many points in a leaf, more than the {MAX_SYNTHETIC_POINTS:.0e} points "
                                 "a release may hold", epsilon)


def sample_rule5(partition: Partition, leaf_values: Mapping[Node, float], noise: NoiseSource,
                 t: int) -> tuple[dict[Node, int], FloatArray]:
    """Rule (5): ceil(G(v)) independent uniform points in every leaf v; returns (counts, points).

    A release of more than :data:`MAX_SYNTHETIC_POINTS` points is refused (nothing is drawn)."""
    order = sorted(leaf_values, key=lambda u: (len(u), u))
    counts: dict[Node, int] = {v: synthetic_count(leaf_values[v]) for v in order}
    if sum(counts.values()) > MAX_SYNTHETIC_POINTS:
        raise DPStreamInputError("G", f"rule (5) would release {sum(counts.values()):.3g} points, more than the "
                                 f"{MAX_SYNTHETIC_POINTS:.0e} a release may hold", t)
    chunks: list[FloatArray] = []
    for v in order:
        k = counts[v]
        if k:
            chunks.append(partition.sample(noise, site(RULE5_SITE, t=t, v=node_label(v)), v, k))
    points = np.concatenate(chunks) if chunks else np.zeros((0, partition.dimension), dtype=np.float64)
    return counts, points


@dataclass(frozen=True)
class TreeRelease:
    """What a tree-level algorithm (001-alg1/alg3/alg7) releases at time t: T(t) and G(., t).

    ``values`` holds G(v, t) on the vertices the algorithm maintains: all of V(T) for the
    naive Algorithms 1 and 3, the vertices of T(t) for the compute-efficient Algorithm 6/7.
    """

    t: int
    tree: Subtree
    values: Mapping[Node, float]

    @property
    def leaf_values(self) -> dict[Node, float]:
        return {v: self.values[v] for v in self.tree.leaves}


@dataclass(frozen=True)
class SyntheticRelease:
    """What PHDStream (001-alg2, 001-alg6) releases at time t: the tree, G on its leaves, and g(., t)."""

    t: int
    tree: Subtree
    leaf_values: Mapping[Node, float]
    counts: Mapping[Node, int]
    points: FloatArray
    node_values: Mapping[Node, float] = field(default_factory=dict)
    """G(v, t) on every vertex of T(t) (for checks; not needed by users)."""

    @property
    def size(self) -> int:
        return int(self.points.shape[0])


class TrueTreeCounts:
    """The true F(., t) on the vertices of T, for the tree-level algorithms (001-alg1, 001-alg3).

    :meth:`stage` validates one differential nabla F(., t) before anything is drawn: its keys
    are vertices of T, its values finite, it is consistent (6) -- as (4) of a point batch
    always is -- and F(., t) = F(., t-1) + nabla F(., t) stays >= 0 on every leaf of T (no
    removal of a point that is not present). Every nabla F(v, t) and every running count F(v, t) lies
    within +-(2^53 - 1) (``dpstream.errors.MAX_STREAM_SUM``, docs/counters.md "Range"): beyond it float64
    sums of counts round, and one point more could move F(v, t) by 2 (a count of points never gets there;
    a tree function given directly could).
    """

    def __init__(self, partition: Partition) -> None:
        self.partition = partition
        self.F: dict[Node, float] = {}

    def stage(self, dF: object) -> Staged[TreeFunction]:
        """Validate nabla F(., t); ``.commit()`` adds it to F."""
        values = require_tree_function(self.partition, dF, field="nabla F")
        bad = consistency_violations(self.partition, values)
        if bad:
            raise DPStreamInputError("nabla F", "must be consistent (6): nabla F(v) = sum over children(v)", bad[0])
        D = self.partition.max_depth
        updated: dict[Node, float] = {}
        for v, x in values.items():
            require_stream_value("nabla F", x)
            new = self.F.get(v, 0.0) + x
            require_stream_sum("nabla F", f"F({node_label(v)}, t)", new, x)
            if len(v) == D and new < -1e-9:
                raise DPStreamInputError("nabla F", "removes points that are not present (F(leaf, t) < 0)", v)
            updated[v] = new
        return Staged(values, lambda: self._apply(updated))

    def _apply(self, updated: Mapping[Node, float]) -> None:
        for v, x in updated.items():
            if x:
                self.F[v] = x
            else:
                self.F.pop(v, None)
