"""Exact W_1 under l_inf (004-sec2.3): brute force over permutations, d = 1 formula, hand values, bad input."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from dpstream.errors import DPStreamInputError
from dpstream.hypercube.wasserstein import (
    linf_cost_matrix,
    wasserstein1,
    wasserstein1_assignment,
    wasserstein1_sorted,
)
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
