"""Hierarchical partitions (001 section 3.1): the trees, point location, cells, sampling, bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpstream.errors import DPStreamInputError
from dpstream.insecure import InsecureSeededNoise
from dpstream.noise import data_rng
from dpstream.phdstream import BooleanCubePartition, HypercubePartition, node_label


def test_tree_shape_fanout_and_depth() -> None:
    P = HypercubePartition(2, 3, fanout=3)
    assert P.children(()) == [(0,), (1,), (2,)]
    assert P.children((2, 1, 0)) == []  # depth D = 3: a leaf of T
    nodes = list(P.nodes())
    assert len(nodes) == P.size() == 1 + 3 + 9 + 27
    assert sum(1 for _ in P.leaves()) == 27
    assert P.parent((2, 1)) == (2,)
    assert P.ancestors((2, 1, 0)) == [(), (2,), (2, 1)]
    assert node_label(()) == "root" and node_label((2, 1, 0)) == "2.1.0"


def test_hypercube_halves_coordinate_by_coordinate() -> None:
    # the paper's example: Omega_1 = [0, 1/2) x [0, 1], Omega_2 = [1/2, 1] x [0, 1]; then split y
    P = HypercubePartition(2, 3)
    assert [c.tolist() for c in P.cell((0,))] == [[0.0, 0.0], [0.5, 1.0]]
    assert [c.tolist() for c in P.cell((1, 0))] == [[0.5, 0.0], [1.0, 0.5]]
    assert [c.tolist() for c in P.cell((1, 0, 1))] == [[0.75, 0.0], [1.0, 0.5]]
    pts = np.array([[0.1, 0.9], [0.5, 0.0], [1.0, 1.0], [0.75, 0.49]])
    paths = P.locate(P.validate_points(pts)).tolist()
    assert paths == [[0, 1, 0], [1, 0, 0], [1, 1, 1], [1, 0, 1]]


def test_general_fanout_cells_contain_their_points() -> None:
    P = HypercubePartition(3, 5, fanout=3)
    rng = data_rng(0)  # test data only (not an algorithm)
    pts = rng.random((200, 3))
    for x, path in zip(pts, P.locate(pts), strict=True):
        low, high = P.cell(tuple(int(i) for i in path))
        assert np.all(low <= x + 1e-12) and np.all(x <= high + 1e-12)


@pytest.mark.parametrize("fanout", [2, 4])
def test_samples_lie_in_their_cell_and_locate_back(fanout: int) -> None:
    P = HypercubePartition(2, 4, fanout=fanout)
    v = (1, 0, fanout - 1, 1)
    pts = P.sample(InsecureSeededNoise(1), "s", v, 50)
    assert pts.shape == (50, 2)
    assert all(tuple(int(i) for i in p) == v for p in P.locate(pts))


def test_boolean_cube() -> None:
    P = BooleanCubePartition(4, 3)
    pts = P.validate_points([[0, 1, 1, 0], [1, 1, 0, 1]])
    assert P.locate(pts).tolist() == [[0, 1, 1], [1, 1, 0]]
    sample = P.sample(InsecureSeededNoise(2), "s", (1, 0), 400)
    assert np.all(sample[:, :2] == [1, 0]) and set(np.unique(sample[:, 2:])) <= {0.0, 1.0}
    # the free coordinates are uniform over {0,1}^2: all four patterns appear (P[miss one] < 4 (3/4)^400)
    assert len({tuple(r) for r in sample[:, 2:].tolist()}) == 4
    assert BooleanCubePartition(3).max_depth == 3


@pytest.mark.parametrize(("make", "field"), [
    (lambda: HypercubePartition(2, 3, fanout=1), "fanout"),
    (lambda: HypercubePartition(2, -1), "max_depth"),
    (lambda: HypercubePartition(0, 3), "d"),
    (lambda: BooleanCubePartition(3, 4), "max_depth"),
    (lambda: HypercubePartition(2, 3, fanout=2.5), "fanout"),  # type: ignore[arg-type]
])
def test_bad_parameters(make: object, field: str) -> None:
    with pytest.raises(DPStreamInputError) as info:
        make()  # type: ignore[operator]
    assert info.value.field == field


@pytest.mark.parametrize("pts", [[[1.2, 0.5]], [[-0.1, 0.5]], [[math.nan, 0.5]], [[0.5, 0.5, 0.5]]])
def test_points_outside_the_domain(pts: list[list[float]]) -> None:
    with pytest.raises(DPStreamInputError) as info:
        HypercubePartition(2, 3).validate_points(pts)
    assert info.value.field == "points"


def test_points_outside_the_boolean_cube() -> None:
    with pytest.raises(DPStreamInputError):
        BooleanCubePartition(2).validate_points([[0, 0.5]])
