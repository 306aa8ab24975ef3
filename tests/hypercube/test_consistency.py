"""Consistency (004-alg4): hand-computed examples of both rules, the printed condition, bad input."""

from __future__ import annotations

import numpy as np
import pytest

from dpstream.errors import DPStreamInputError
from dpstream.hypercube.consistency import ConsistencyRule, consistency
from dpstream.noise import data_rng

NOISY = [[10], [7, -2], [3, 5, 0, 4]]


def test_equal_shift_by_hand() -> None:
    # root 10; children (7, max(-2,0)=0): Delta = 3, m0 = 7 + floor(3/2) = 8, m1 = 2.
    # node 0 (m=8) children (3, 5): Delta = 0 -> (3, 5); node 1 (m=2) children (0, 4): Delta = -2,
    # m0 = clip(0 - 1, 0, 2) = 0, m1 = 2.
    m = consistency(NOISY, rule=ConsistencyRule.EQUAL_SHIFT)
    assert [level.tolist() for level in m] == [[10], [8, 2], [3, 5, 0, 2]]


def test_proportional_by_hand() -> None:
    # children (7, 0) of 10 -> (10, 0); node 0 (m=10): 10*3/8 = 3.75 -> 4, so (4, 6); node 1 (m=0) -> (0, 0)
    m = consistency(NOISY, rule=ConsistencyRule.PROPORTIONAL)
    assert [level.tolist() for level in m] == [[10], [10, 0], [4, 6, 0, 0]]


def test_proportional_ties_and_zero_children() -> None:
    # a + b = 0: ceil(m/2) to theta0
    assert [lv.tolist() for lv in consistency([[5], [0, -3]], rule=ConsistencyRule.PROPORTIONAL)] == [[5], [3, 2]]
    assert [lv.tolist() for lv in consistency([[5], [-1, -3]], rule=ConsistencyRule.EQUAL_SHIFT)] == [[5], [2, 3]]


def test_negative_root_gives_all_zero() -> None:
    m = consistency([[-4], [3, 2], [1, 1, 1, 1]])
    assert all(int(level.sum()) == 0 for level in m)


@pytest.mark.parametrize("rule", list(ConsistencyRule))
def test_printed_condition_and_sums(rule: ConsistencyRule) -> None:
    rng = data_rng(0)
    for _ in range(200):
        r = int(rng.integers(1, 6))
        noisy = [rng.integers(-20, 40, size=2**j) for j in range(r + 1)]
        m = consistency(noisy, rule=rule)
        assert m[0][0] == max(noisy[0][0], 0)
        for j in range(r):
            a, b = np.maximum(noisy[j + 1][0::2], 0), np.maximum(noisy[j + 1][1::2], 0)
            m0, m1 = m[j + 1][0::2], m[j + 1][1::2]
            assert np.all(m0 >= 0) and np.all(m1 >= 0)
            assert np.array_equal(m0 + m1, m[j])
            assert np.all((m0 - a) * (m1 - b) >= 0)


def test_literal_reading_depends_on_true_counts() -> None:
    """The printed condition with the true counts n: same noisy input, different true data -> different output."""
    noisy = [[6], [3, 3]]
    a = consistency(noisy, constraint_counts=[[6], [6, 0]])
    b = consistency(noisy, constraint_counts=[[6], [0, 6]])
    assert a[1].tolist() == [6, 0] and b[1].tolist() == [0, 6]  # the output reveals the true split


@pytest.mark.parametrize("bad", [[[1.5]], [[1], [1, 2, 3]], [], [[1], [np.nan, 1]], [[1], [1]], ])
def test_bad_input(bad: list[list[float]]) -> None:
    with pytest.raises(DPStreamInputError):
        consistency(bad)
