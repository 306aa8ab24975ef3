"""Exact W_1 under l_inf (004-sec2.3): brute force over permutations, d = 1 formula, hand values, bad input;
004-lem4.2's deterministic transport bound on every release of 004-alg1, and a broken output it catches."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from dpstream.errors import DPStreamInputError
from dpstream.hypercube.online import OnlineSyntheticData
from dpstream.hypercube.partition import BinaryPartition
from dpstream.hypercube.streams import make_stream
from dpstream.hypercube.wasserstein import (
    linf_cost_matrix,
    partition_transport_bound,
    wasserstein1,
    wasserstein1_assignment,
    wasserstein1_sorted,
)
from dpstream.insecure import InsecureSeededNoise, InsecureZeroNoise
from dpstream.noise import data_rng


def _brute_force(x: np.ndarray, y: np.ndarray) -> float:
    n = len(x)
    best = math.inf
    for perm in itertools.permutations(range(n)):
        best = min(best, sum(float(np.max(np.abs(x[i] - y[p]))) for i, p in enumerate(perm)))
    return best / n


@pytest.mark.parametrize("d", [1, 2, 3])
def test_assignment_equals_brute_force(d: int) -> None:
    rng = data_rng(10 + d)
    for n in (1, 2, 3, 5, 6):
        x, y = rng.random((n, d)), rng.random((n, d))
        assert wasserstein1_assignment(x, y) == pytest.approx(_brute_force(x, y), abs=1e-12)


def test_sorted_equals_assignment_in_one_dimension() -> None:
    rng = data_rng(2)
    for n in (1, 4, 50, 300):
        x, y = rng.random(n), rng.random(n)
        assert wasserstein1_sorted(x, y) == pytest.approx(wasserstein1_assignment(x, y), abs=1e-12)
        assert wasserstein1(x, y) == wasserstein1_sorted(x, y)


def test_hand_values() -> None:
    assert wasserstein1([[0.0, 0.0]], [[0.3, 0.5]]) == pytest.approx(0.5)  # l_inf, not l2 or l1
    assert wasserstein1([0.0, 1.0], [0.5, 0.5]) == pytest.approx(0.5)
    # two clusters swapped: the optimal coupling matches (0,0)->(0,0.1) and (1,1)->(0.9,1)
    assert wasserstein1([[0, 0], [1, 1]], [[0.9, 1.0], [0.0, 0.1]]) == pytest.approx(0.1)


def test_metric_properties() -> None:
    rng = data_rng(4)
    for _ in range(20):
        x, y, z = rng.random((7, 2)), rng.random((7, 2)), rng.random((7, 2))
        assert wasserstein1(x, x[::-1]) == pytest.approx(0.0, abs=1e-15)
        assert wasserstein1(x, y) == pytest.approx(wasserstein1(y, x), abs=1e-12)
        assert wasserstein1(x, z) <= wasserstein1(x, y) + wasserstein1(y, z) + 1e-12


def test_cost_matrix() -> None:
    c = linf_cost_matrix([[0.0, 0.0], [1.0, 0.5]], [[0.5, 0.25]])
    assert c.tolist() == [[0.5], [0.5]]


@pytest.mark.parametrize(("x", "y"), [([0.1, 0.2], [0.3]), ([[0.1, 0.2]], [[0.1, 0.2, 0.3]]),
                                      ([math.nan], [0.1]), ([], []), ([[0.1, 0.2]], [[0.3], [0.4]])])
def test_bad_input(x: object, y: object) -> None:
    with pytest.raises(DPStreamInputError):
        wasserstein1(x, y)  # type: ignore[arg-type]


# --- 004-lem4.2, deterministic form: W_1 <= transport bound from the counts ----------------------------


def test_partition_transport_bound_by_hand() -> None:
    """d = 1, X = (0.1, 0.2, 0.3, 0.9), depth 2; true counts [4], [3, 1], [2, 1, 0, 1]; m = [4], [2, 2], [1, 1, 1, 1].

    (1/4) [1 (0 + 1 + 1)/2 + 1/2 ((1 + 1 + 0)/2 + (1 + 1 + 0)/2)] + 1/4 = 0.75.
    """
    X = np.array([[0.1], [0.2], [0.3], [0.9]])
    m = [[4], [2, 2], [1, 1, 1, 1]]
    assert partition_transport_bound(X, m, BinaryPartition(1)) == pytest.approx(0.75, abs=1e-15)
    with pytest.raises(DPStreamInputError):
        partition_transport_bound(X, [[3], [2, 1]], BinaryPartition(1))  # the root must be t


class _OutputIgnoresCounts(OnlineSyntheticData):
    """BROKEN: Y_t uniform in the whole cube (t points), ignoring the consistent counts m_theta."""

    def _output(self, t: int, r: int, m: np.ndarray) -> np.ndarray:
        return self.noise.uniform_box(f"broken u8 t={t}", [0.0] * self.d, [1.0] * self.d, int(m.sum()))


@pytest.mark.parametrize("zero_noise", [False, True])
@pytest.mark.parametrize(("d", "eps"), [(1, 1.0), (1, 4.0), (2, 1.0), (2, 4.0), (3, 1.0)])
def test_w1_within_the_transport_bound(d: int, eps: float, zero_noise: bool) -> None:
    """Every release of 004-alg1 satisfies Lemma 4.2's deterministic inequality (no statistics: cannot false-alarm)."""
    P = BinaryPartition(d)
    for kind in ("uniform", "clustered"):
        X = make_stream(kind, 48, d, seed=d + 10)
        alg = OnlineSyntheticData(eps, d, noise=InsecureZeroNoise() if zero_noise else InsecureSeededNoise(d))
        for t, x in enumerate(X, start=1):
            rel = alg.step(x)
            assert rel.points is not None
            assert wasserstein1(X[:t], rel.points) <= partition_transport_bound(X[:t], rel.consistent, P) + 1e-12


def test_transport_bound_catches_output_that_ignores_the_counts() -> None:
    """The same inequality fails for a broken output step (d = 1, where the noiseless counts are informative)."""
    P = BinaryPartition(1)
    violations = 0
    for kind in ("uniform", "clustered"):
        X = make_stream(kind, 48, 1, seed=11)
        alg = _OutputIgnoresCounts(4.0, 1, noise=InsecureZeroNoise())
        for t, x in enumerate(X, start=1):
            rel = alg.step(x)
            assert rel.points is not None
            violations += wasserstein1(X[:t], rel.points) > partition_transport_bound(X[:t], rel.consistent, P)
    print(f"\nbroken output (uniform in the cube): {violations} of 96 releases violate Lemma 4.2's bound")
    assert violations >= 1


@pytest.mark.parametrize(("d", "n", "depth"), [(1, 30, 6), (2, 40, 0), (2, 60, 8), (3, 50, 12), (2, 200, 10)])
def test_dyadic_matching_cost_bounds_w1(d: int, n: int, depth: int) -> None:
    """The bottom-up matching is a coupling: its cost is >= the exact W_1, = 0 for equal sets, and it matches
    every point inside the smallest region containing both (so <= that region's diameter)."""
    from dpstream.hypercube.wasserstein import dyadic_matching_cost

    P = BinaryPartition(d)
    rng = data_rng(n + d)
    x, y = rng.random((n, d)), rng.random((n, d)) ** 2
    exact = wasserstein1(x, y)
    bound = dyadic_matching_cost(x, y, P, depth)
    assert exact <= bound + 1e-12
    assert bound <= 1.0
    assert dyadic_matching_cost(x, x[::-1], P, depth) == 0.0
    assert dyadic_matching_cost([[0.1] * d], [[0.9] * d], P, depth) == pytest.approx(0.8)
    # two points per depth-1 half, matched within the halves (d = 1: |0.1-0.2| + |0.7-0.9| over 2)
    if d == 1:
        assert dyadic_matching_cost([0.1, 0.7], [0.9, 0.2], P, 1) == pytest.approx((0.1 + 0.2) / 2)
