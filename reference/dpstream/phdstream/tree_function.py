"""Functions on the vertices of T: transform (4), consistency (6), the C(T) norm, Ext_T (001-eq4-5, 001-eq6-ext).

A function F in R^{V(T)} is a ``dict`` from vertices to values; a vertex that is absent
has value 0 (a *sparse* tree function), so functions of a deep tree cost only their
non-zero entries.

* (4): F(v) := sum_{x in v} f(x) -- :func:`tree_function` (f given as points with weights,
  e.g. +1 / -1 moves: then F is the differential stream nabla F(., t));
* (6): F(v) = sum_{u in children(v)} F(u) for every vertex v *that has children* (the box
  prints "for all v", which would force F = 0 on the leaves of T; erratum E-phdstream-1);
* C(T) norm: ||F||_C(T) := sum_{v in leaves(T)} |F(v)|;
* consistent extension Ext_T (section 3.2): a unit at v becomes 1 on every ancestor of v
  and on v, beta^-k on every descendant at distance k, and 0 elsewhere:
  ``Ext_T(F)(u) = sum_v F(v) beta^(-max(0, d(v, u)))`` over the v that are ancestors or
  descendants of u (or u itself). The printed explicit formula assigns weight 1 to every
  non-descendant, siblings and cousins included (its d(v, u) is minus the graph distance
  for them); that variant, which is not consistent, is ``as_printed=True`` (E-phdstream-2).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping

import numpy as np
import numpy.typing as npt

from dpstream.arithmetic import kernel
from dpstream.errors import DPStreamInputError
from dpstream.phdstream.partition import Node, Partition

__all__ = [
    "BatchCounts",
    "TreeFunction",
    "c_t_norm",
    "consistency_violations",
    "consistent_extension",
    "ext_weight",
    "is_consistent",
    "prefix_sums",
    "require_tree_function",
    "tree_function",
]

TreeFunction = dict[Node, float]
"""A function on V(T); absent vertices are 0."""

_CONSISTENCY_TOL = 1e-9


def prefix_sums(paths: npt.NDArray[np.int64], weights: npt.NDArray[np.float64], beta: int) -> TreeFunction:
    """sum of ``weights`` over the points below each vertex, for the vertices that hold points.

    ``paths`` are the points' leaf paths (n, D) over ``range(beta)``. Every prefix of length 0..D
    of a path is a vertex containing the point, so this is (4) restricted to the vertices that
    hold any point (exact cancellations, e.g. +1 and -1 of the same point, are kept as explicit
    0s). Cost O(n D) vectorised plus O(1) per distinct vertex: prefixes are coded as integers
    base beta, level by level.
    """
    n = paths.shape[0] if paths.ndim == 2 else 0
    if n == 0:
        return {}
    D = paths.shape[1]
    w = np.asarray(weights, dtype=np.float64)
    out: TreeFunction = {(): float(w.sum())}
    if D and float(beta) ** D >= 2.0**62:  # integer codes would overflow: plain loop
        acc: defaultdict[Node, float] = defaultdict(float)
        for row, x in zip(paths.tolist(), w.tolist(), strict=True):
            for k in range(1, D + 1):
                acc[tuple(row[:k])] += x
        out.update(acc)
        return out
    code = np.zeros(n, dtype=np.int64)
    for k in range(1, D + 1):
        code = code * beta + paths[:, k - 1]
        unique, first, inverse = np.unique(code, return_index=True, return_inverse=True)
        sums = np.bincount(inverse.reshape(-1), weights=w, minlength=unique.size)
        for i, total in zip(first.tolist(), sums.tolist(), strict=True):
            out[tuple(paths[i, :k].tolist())] = float(total)
    return out


class BatchCounts(Mapping[Node, float]):
    """(4) of a weighted point batch, looked up per vertex without building every vertex.

    ``get(v)`` costs O(depth(v) + log n): the points' prefixes are coded as integers base beta
    level by level (O(n D), vectorised), sorted, and summed once. This is Algorithm 7 L10 ("find H(v)
    using h as per equation 4") at O(1) per visited vertex after the O(n D) bucketing of the batch.
    Iterating materialises every vertex that holds a point (:func:`prefix_sums`).
    """

    def __init__(self, paths: npt.NDArray[np.int64], weights: npt.NDArray[np.float64], beta: int) -> None:
        self.paths = paths
        self.weights = np.asarray(weights, dtype=np.float64)
        self.beta = beta
        self.n = paths.shape[0] if paths.ndim == 2 else 0
        self.D = paths.shape[1] if paths.ndim == 2 else 0
        self.total = float(self.weights.sum()) if self.n else 0.0
        self._levels: list[tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]] | None = None
        self._dict: TreeFunction | None = None
        if self.n and self.D and float(beta) ** self.D < 2.0**62:
            levels: list[tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]] = []
            code = np.zeros(self.n, dtype=np.int64)
            for k in range(1, self.D + 1):
                code = code * beta + paths[:, k - 1]
                unique, inverse = np.unique(code, return_inverse=True)
                sums = np.bincount(inverse.reshape(-1), weights=self.weights, minlength=unique.size)
                levels.append((np.asarray(unique, dtype=np.int64), np.asarray(sums, dtype=np.float64)))
            self._levels = levels

    def _materialised(self) -> TreeFunction:
        if self._dict is None:
            self._dict = prefix_sums(self.paths, self.weights, self.beta) if self.n else {}
        return self._dict

    def get(self, v: Node, default: float = 0.0) -> float:  # type: ignore[override]
        if self.n == 0:
            return default
        if not v:
            return self.total
        if self._levels is None or len(v) > self.D:
            return self._materialised().get(v, default)
        code = 0
        for i in v:
            code = code * self.beta + i
        unique, sums = self._levels[len(v) - 1]
        j = int(np.searchsorted(unique, code))
        if j < unique.size and int(unique[j]) == code:
            return float(sums[j])
        return default

    def __getitem__(self, v: Node) -> float:
        value = self.get(v, math.nan)
        if math.isnan(value):
            raise KeyError(v)
        return value

    def __iter__(self) -> Iterator[Node]:
        return iter(self._materialised())

    def __len__(self) -> int:
        return len(self._materialised())


def tree_function(partition: Partition, points: object, weights: object | None = None) -> TreeFunction:
    """(4): F(v) = sum_{x in v} f(x), f given as ``points`` (n, d) with ``weights`` (default 1 each)."""
    pts = partition.validate_points(points)
    if weights is None:
        w = np.ones(pts.shape[0], dtype=np.float64)
    else:
        w = np.asarray(weights, dtype=np.float64).reshape(-1)
        if w.shape[0] != pts.shape[0] or not np.isfinite(w).all():
            raise DPStreamInputError("weights", f"must be {pts.shape[0]} finite numbers", weights)
    return prefix_sums(partition.locate(pts), w, partition.beta)


def require_tree_function(partition: Partition, F: object, field: str = "F") -> TreeFunction:
    """Validate a tree function: keys are vertices of T, values finite reals."""
    if not isinstance(F, Mapping):
        raise DPStreamInputError(field, "must be a mapping from vertices of T to numbers", F)
    out: TreeFunction = {}
    for v, value in F.items():
        if not partition.is_node(v):
            raise DPStreamInputError(field, f"keys must be vertices of T (paths over range({partition.beta}), "
                                            f"depth <= {partition.max_depth})", v)
        if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
            raise DPStreamInputError(field, "values must be real numbers", value)
        x = float(value)
        if not math.isfinite(x):
            raise DPStreamInputError(field, "values must be finite", value)
        out[v] = x
    return out


def consistency_violations(partition: Partition, F: Mapping[Node, float], tol: float = _CONSISTENCY_TOL) -> list[Node]:
    """The vertices v with children where F(v) != sum of F over children(v) (eq. (6))."""
    to_check: set[Node] = set()
    for v in F:
        if partition.children(v):
            to_check.add(v)
        if v:
            to_check.add(v[:-1])
    bad = []
    for v in sorted(to_check, key=lambda u: (len(u), u)):
        total = sum(F.get(c, 0.0) for c in partition.children(v))
        value = F.get(v, 0.0)
        if abs(value - total) > tol * (1.0 + abs(value) + abs(total)):
            bad.append(v)
    return bad


def is_consistent(partition: Partition, F: Mapping[Node, float], tol: float = _CONSISTENCY_TOL) -> bool:
    """Whether F lies in C(T), i.e. satisfies (6) at every vertex that has children."""
    return not consistency_violations(partition, F, tol)


def c_t_norm(partition: Partition, F: Mapping[Node, float]) -> float:
    """||F||_C(T) = sum over the leaves of T (depth D) of |F(v)|."""
    return float(sum(abs(x) for v, x in F.items() if len(v) == partition.max_depth))


def ext_weight(partition: Partition, v: Node, u: Node, *, as_printed: bool = False) -> float:
    """The weight of a unit at v in Ext_T(.)(u): beta^(-max(0, d(v, u))).

    Default (the section 3.2 text): 1 if u is an ancestor of v or v itself, beta^-k if u is a
    descendant of v at distance k, 0 otherwise. ``as_printed``: d(v, u) is minus the graph
    distance whenever u is not a descendant of v, so every non-descendant gets weight 1.
    """
    if u[: len(v)] == v:  # u is v or a descendant of v
        return float(partition.beta) ** -(len(u) - len(v))
    if v[: len(u)] == u or as_printed:  # u is an ancestor of v (or: printed formula)
        return 1.0
    return 0.0


def consistent_extension(partition: Partition, F: Mapping[Node, float], *, as_printed: bool = False,
                         nodes: Iterable[Node] | None = None) -> TreeFunction:
    """Ext_T(F) (001-eq6-ext) on every vertex of T, or only on ``nodes`` if given.

    Without ``nodes`` the result is computed on all of V(T) (beta^(D+1) vertices: small trees
    only). The default output is consistent; ``as_printed`` applies the printed formula.
    """
    targets = list(partition.nodes()) if nodes is None else list(nodes)
    sources = [(v, x) for v, x in F.items() if x != 0.0]
    if as_printed or nodes is not None:
        return {u: math.fsum(x * ext_weight(partition, v, u, as_printed=as_printed) for v, x in sources)
                for u in targets}
    # Default on all of V(T): push each value up to the ancestors and spread it down the subtree.
    terms: defaultdict[Node, list[float]] = defaultdict(list)
    for v, x in sources:
        for k in range(len(v)):
            terms[v[:k]].append(x)
        level, share = [v], x
        while level:
            for u in level:
                terms[u].append(share)
            level = [c for u in level for c in partition.children(u)]
            share /= partition.beta
    total = kernel().total
    return {u: total(terms[u]) if u in terms else 0.0 for u in targets}
