"""Exact 1-Wasserstein distance between two empirical measures of equal size (004-sec2.3).

W_1(mu_X, mu_Y) = inf over couplings of E rho(x, y), with rho the l_inf metric of [0,1]^d
(004-thm1.1). For two empirical measures with n atoms each (weights 1/n), an optimal
coupling can be taken to be a permutation (Birkhoff-von Neumann: the couplings form the
Birkhoff polytope scaled by 1/n, a linear objective is minimised at a vertex), so

    W_1 = (1/n) min_sigma sum_i ||x_i - y_sigma(i)||_inf,

an assignment problem, solved exactly by ``scipy.optimize.linear_sum_assignment`` on the
n x n cost matrix (O(n^3) time, O(n^2) memory; measured in docs/hypercube.md: 1.26 s of CPU and a
32 MB matrix at n = 2000).
For d = 1 the sorted samples are matched in order: W_1 = (1/n) sum |x_(i) - y_(i)|.

:func:`partition_transport_bound` is the deterministic form of 004-lem4.2 (the step from counts
to W_1 in the proof of 004-thm1.1): if the synthetic points put m_theta points in every region of
depth r and the counts m are consistent with m_root = t, then

    W_1(mu_X, mu_Y) <= (1/t) sum_{j<r} sum_{|P|=j} diam(P) (|m_P - n_P| + sum_{children c} |m_c - n_c|) / 2 + delta,

n the true counts, delta the largest diameter at depth r. Proof: let mu_j put mass m_theta in every
depth-j region theta, spread as the true points of theta (uniformly if n_theta = 0); mu_0 = mu_X
(m_root = n_root = t) and W_1(mu_r, mu_Y) <= delta (equal mass in every leaf). Inside a parent P,
mu_{j-1} and mu_{j+0} have the same mass m_P, so moving the non-common part costs at most
diam(P) sum_c |m_c - m_P n_c / n_P| / 2 <= diam(P) (sum_c |m_c - n_c| + |m_P - n_P|) / 2
(if n_P = 0 both sides are diam(P) m_P). Sum over P and j, then the triangle inequality.

:func:`dyadic_matching_cost` is an upper bound for sizes where the assignment problem is out of reach
(t = 2^17): the cost of one explicit coupling, a matching built bottom-up in the binary partition.
From depth K (finest) to 0, the points of X and of Y not matched yet are matched inside each region,
the k-th of X with the k-th of Y in the order of their depth-K region (Z-order, then the coordinates);
the surplus of the larger side goes up to the parent. At the root both sides have t points, so every point is matched:
a permutation, hence W_1 <= (1/t) sum of the matched l_inf distances.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from dpstream.errors import DPStreamInputError
from dpstream.hypercube.partition import BinaryPartition

__all__ = ["dyadic_matching_cost", "linf_cost_matrix", "partition_transport_bound", "wasserstein1",
           "wasserstein1_assignment", "wasserstein1_sorted"]

FloatArray = npt.NDArray[np.float64]


def _points(values: npt.ArrayLike, field: str) -> FloatArray:
    arr = np.asarray(values, dtype=np.float64)
    if arr.ndim == 1:
        arr = arr.reshape(-1, 1)
    if arr.ndim != 2 or arr.shape[0] == 0 or arr.shape[1] == 0:
        raise DPStreamInputError(field, "must be a non-empty (n, d) array of points", np.shape(values))
    if not np.all(np.isfinite(arr)):
        raise DPStreamInputError(field, "must be finite (no NaN or inf)", values)
    return arr


def _pair(x: npt.ArrayLike, y: npt.ArrayLike) -> tuple[FloatArray, FloatArray]:
    X, Y = _points(x, "X"), _points(y, "Y")
    if X.shape != Y.shape:
        raise DPStreamInputError("Y", f"must have the same shape as X {X.shape} (equal sizes and dimension)",
                                 Y.shape)
    return X, Y


def linf_cost_matrix(x: npt.ArrayLike, y: npt.ArrayLike) -> FloatArray:
    """C[i, k] = ||x_i - y_k||_inf."""
    X, Y = _points(x, "X"), _points(y, "Y")
    if X.shape[1] != Y.shape[1]:
        raise DPStreamInputError("Y", f"must have dimension {X.shape[1]}", Y.shape)
    cost = np.zeros((X.shape[0], Y.shape[0]), dtype=np.float64)
    for c in range(X.shape[1]):  # one coordinate at a time keeps memory at one n x n matrix
        np.maximum(cost, np.abs(X[:, c][:, None] - Y[:, c][None, :]), out=cost)
    return cost


def wasserstein1_assignment(x: npt.ArrayLike, y: npt.ArrayLike) -> float:
    """Exact W_1 under l_inf by the assignment problem (any d, equal sizes)."""
    X, Y = _pair(x, y)
    cost = linf_cost_matrix(X, Y)
    from scipy.optimize import linear_sum_assignment  # on first use: scipy.optimize is slow to import

    rows, cols = linear_sum_assignment(cost)
    return float(cost[rows, cols].sum() / X.shape[0])


def wasserstein1_sorted(x: npt.ArrayLike, y: npt.ArrayLike) -> float:
    """Exact W_1 for d = 1 (equal sizes): mean absolute difference of the sorted samples."""
    X, Y = _pair(x, y)
    if X.shape[1] != 1:
        raise DPStreamInputError("X", "the sorted-sample formula needs d = 1", X.shape)
    return float(np.mean(np.abs(np.sort(X[:, 0]) - np.sort(Y[:, 0]))))


def wasserstein1(x: npt.ArrayLike, y: npt.ArrayLike) -> float:
    """Exact W_1(mu_X, mu_Y) under the l_inf metric: sorted formula for d = 1, assignment otherwise."""
    X, Y = _pair(x, y)
    return wasserstein1_sorted(X, Y) if X.shape[1] == 1 else wasserstein1_assignment(X, Y)


def partition_transport_bound(points: npt.ArrayLike, consistent: Sequence[npt.ArrayLike],
                              partition: BinaryPartition) -> float:
    """004-lem4.2 per run: an upper bound on W_1(mu_X, mu_Y) for any Y with m_theta points in each leaf.

    ``points`` are the true x_1..x_t, ``consistent[j]`` the counts m_theta of depth j (004-alg4's output,
    ``consistent[0] = [t]``); the leaves are at depth ``len(consistent) - 1``. See the module doc.
    """
    X = _points(points, "points")
    if X.shape[1] != partition.d:
        raise DPStreamInputError("points", f"must have dimension d = {partition.d}", X.shape)
    t, r = X.shape[0], len(consistent) - 1
    m = [np.asarray(level, dtype=np.int64) for level in consistent]
    if r < 0 or m[0].tolist() != [t]:
        raise DPStreamInputError("consistent", f"level 0 must be the root count [t] = [{t}]",
                                 m[0].tolist() if m else consistent)
    n = partition.true_counts(X, r)
    total = 0.0
    for j in range(r):
        parent_err = np.abs(m[j] - n[j])
        child_err = np.abs(m[j + 1] - n[j + 1])
        total += partition.diameter(j) * float((parent_err + child_err[0::2] + child_err[1::2]).sum()) / 2.0
    return float(total / t + partition.diameter(r))


def dyadic_matching_cost(x: npt.ArrayLike, y: npt.ArrayLike, partition: BinaryPartition, depth: int) -> float:
    """(1/t) sum of ||x_i - y_sigma(i)||_inf for the bottom-up matching sigma of the module doc (>= W_1).

    ``depth`` K is the finest level; O(K t log t) time, O(t) memory.
    """
    X, Y = _pair(x, y)
    if X.shape[1] != partition.d:
        raise DPStreamInputError("x", f"must have dimension d = {partition.d}", X.shape)
    n = X.shape[0]
    zx, zy = partition.cell_indices(X, depth), partition.cell_indices(Y, depth)
    # unmatched points in Z-order, ties broken by the coordinates (equal sets are matched to themselves)
    open_x = np.lexsort((*X.T[::-1], zx))
    open_y = np.lexsort((*Y.T[::-1], zy))
    total = 0.0
    for j in range(depth, -1, -1):
        cx, cy = zx[open_x] >> (depth - j), zy[open_y] >> (depth - j)  # depth-j region (sorted: Z-order)
        cells = np.union1d(cx, cy)
        nx = np.searchsorted(cx, cells, side="right") - np.searchsorted(cx, cells, side="left")
        ny = np.searchsorted(cy, cells, side="right") - np.searchsorted(cy, cells, side="left")
        pairs = np.minimum(nx, ny)
        # rank of each open point inside its region; the first `pairs` of each side are matched
        rank_x = np.arange(cx.size) - np.searchsorted(cx, cx, side="left")
        rank_y = np.arange(cy.size) - np.searchsorted(cy, cy, side="left")
        take_x = rank_x < pairs[np.searchsorted(cells, cx)]
        take_y = rank_y < pairs[np.searchsorted(cells, cy)]
        mx, my = open_x[take_x], open_y[take_y]  # same regions in the same order, so matched elementwise
        total += float(np.abs(X[mx] - Y[my]).max(axis=1).sum())
        open_x, open_y = open_x[~take_x], open_y[~take_y]
    assert open_x.size == 0 and open_y.size == 0
    return float(total / n)
