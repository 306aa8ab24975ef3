"""Binary partition of [0,1]^d and level times (004-sec3.1): hand-computed boxes, indices, depths."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpstream.errors import DPStreamInputError
from dpstream.hypercube.partition import BinaryPartition, Region, depth_as_printed, depth_at, level_time
from dpstream.noise import data_rng


@pytest.mark.parametrize(("eps", "expected"), [(1.0, [1, 2, 4, 8, 16]), (0.3, [4, 7, 14, 27, 54]),
                                               (4.0, [1, 1, 1, 2, 4])])
def test_level_times(eps: float, expected: list[int]) -> None:
    # t_j = ceil(2^j / eps), by hand: 1/0.3 = 3.33 -> 4, 2/0.3 = 6.67 -> 7, 4/0.3 = 13.3 -> 14, ...
    assert [level_time(j, eps) for j in range(5)] == expected


def test_level_time_exact_at_integer_ratio() -> None:
    # 2^3 / 0.5 = 16 exactly: no rounding up to 17
    assert level_time(3, 0.5) == 16
    assert level_time(2, 0.1) == math.ceil(4 / 0.1 - 1e-9)  # 0.1 is not exact in binary; 40.000000000000004 > 40
    assert level_time(2, 0.1) in (40, 41)


def test_depth_at_and_printed() -> None:
    # eps = 1: level j is [2^j, 2^{j+1}); printed u2 leaves floor(log2 t) + 1
    assert [depth_at(t, 1.0) for t in range(1, 10)] == [0, 1, 1, 2, 2, 2, 2, 3, 3]
    assert [depth_as_printed(t, 1.0) for t in range(1, 10)] == [1, 2, 2, 3, 3, 3, 3, 4, 4]
    # eps = 0.5: t_0 = 2, t_1 = 4; before t_0 the printed loop does not run (r = 0)
    assert [depth_at(t, 0.5) for t in range(1, 9)] == [0, 0, 0, 1, 1, 1, 1, 2]
    assert [depth_as_printed(t, 0.5) for t in range(1, 9)] == [0, 1, 1, 2, 2, 2, 2, 3]


def test_boxes_by_hand() -> None:
    P = BinaryPartition(2)
    low, high = P.box(Region(2, 0b01))  # depth 0 halves x (lower), depth 1 halves y (upper)
    assert low.tolist() == [0.0, 0.5] and high.tolist() == [0.5, 1.0]
    low, high = P.box(Region(3, 0b110))  # x upper, y upper, x lower within [0.5, 1]
    assert low.tolist() == [0.5, 0.5] and high.tolist() == [0.75, 1.0]
    assert P.split_coordinate(0) == 0 and P.split_coordinate(1) == 1 and P.split_coordinate(2) == 0


@pytest.mark.parametrize("d", [1, 2, 3])
def test_volume_and_diameter(d: int) -> None:
    P = BinaryPartition(d)
    for j in range(7):
        for index in range(2**j):
            low, high = P.box(Region(j, index))
            assert float(np.prod(high - low)) == pytest.approx(2.0**-j)
            assert float(np.max(high - low)) == pytest.approx(2.0 ** -(j // d)) == P.diameter(j)


def test_cell_indices_by_hand() -> None:
    P = BinaryPartition(2)
    pts = np.array([[0.25, 0.75], [0.5, 0.5], [1.0, 1.0], [0.0, 0.0], [0.74, 0.26]])
    # depth 3 bits: x >= 1/2, y >= 1/2, x in the upper half of its half (a midpoint goes up: 0.25 -> 1)
    assert P.cell_indices(pts, 3).tolist() == [0b011, 0b110, 0b111, 0b000, 0b100]
    assert P.cell_indices(pts, 0).tolist() == [0, 0, 0, 0, 0]


@pytest.mark.parametrize("d", [1, 2, 3])
def test_regions_partition_the_cube(d: int) -> None:
    P = BinaryPartition(d)
    pts = data_rng(3).random((300, d))
    pts[:5] = 1.0  # the closed upper faces
    pts[5:10] = 0.5
    depth = 5
    idx = P.cell_indices(pts, depth)
    for p, i in zip(pts, idx, strict=True):
        inside = []
        for k in range(2**depth):
            low, high = P.box(Region(depth, k))
            upper_ok = np.where(high >= 1.0, p <= high, p < high)
            if np.all(p >= low) and np.all(upper_ok):
                inside.append(k)
        assert inside == [int(i)]


def test_true_counts_consistent() -> None:
    P = BinaryPartition(2)
    pts = data_rng(5).random((200, 2))
    counts = P.true_counts(pts, 6)
    for j in range(6):
        assert int(counts[j].sum()) == 200
        assert np.array_equal(counts[j], counts[j + 1][0::2] + counts[j + 1][1::2])


def test_region_navigation() -> None:
    r = Region(4, 0b1011)
    assert r.theta == "1011" and r.label == "1011" and Region(0, 0).label == "root"
    assert r.parent() == Region(3, 0b101) and r.ancestor(1) == Region(1, 1)
    assert r.child(0) == Region(5, 0b10110)
    with pytest.raises(DPStreamInputError):
        Region(2, 4)


@pytest.mark.parametrize("x", [[0.2, 1.2], [-0.1, 0.5], [math.nan, 0.5], [0.1, math.inf], [0.5], [0.1, 0.2, 0.3],
                               "0.5", [True, 0.5], None, np.array([1, 0], dtype=bool)])
def test_bad_points(x: object) -> None:
    with pytest.raises(DPStreamInputError) as info:
        BinaryPartition(2).validate_point(x)
    assert info.value.field == "x_t"


def test_bad_parameters() -> None:
    with pytest.raises(DPStreamInputError):
        BinaryPartition(0)
    for eps in (0.0, -1.0, math.nan):
        with pytest.raises(DPStreamInputError):
            level_time(1, eps)


def test_cell_index_of_one_point_equals_cell_indices() -> None:
    for d in (1, 2, 3):
        P = BinaryPartition(d)
        pts = np.vstack([data_rng(d).random((200, d)), np.ones((1, d)), np.zeros((1, d)), np.full((1, d), 0.5),
                         np.full((1, d), 0.75), np.full((1, d), 1.0 - 2.0**-40)])
        for depth in (0, 1, 2, 5, 17, 31):
            want = P.cell_indices(pts, depth)
            assert [P.cell_index(p, depth) for p in pts] == want.tolist()
