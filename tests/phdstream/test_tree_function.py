"""Transform (4), consistency (6), the C(T) norm and Ext_T (001-eq4-5, 001-eq6-ext)."""

from __future__ import annotations

import pytest

from dpstream.errors import DPStreamInputError
from dpstream.noise import data_rng
from dpstream.phdstream import HypercubePartition, c_t_norm, consistent_extension, is_consistent, tree_function
from dpstream.phdstream.tree_function import consistency_violations, ext_weight, require_tree_function

P = HypercubePartition(2, 2)  # 1 + 2 + 4 vertices


def test_transform_4_counts_points_per_vertex() -> None:
    # cells at depth 2: (0,0)=[0,.5)x[0,.5), (0,1)=[0,.5)x[.5,1], (1,0)=[.5,1]x[0,.5), (1,1)=[.5,1]x[.5,1]
    pts = [[0.1, 0.1], [0.2, 0.7], [0.3, 0.8], [0.9, 0.2]]
    F = tree_function(P, pts)
    assert F == {(): 4.0, (0,): 3.0, (1,): 1.0, (0, 0): 1.0, (0, 1): 2.0, (1, 0): 1.0}
    dF = tree_function(P, pts, weights=[1, -1, 1, 1])
    assert dF[()] == 2.0 and dF[(0, 1)] == 0.0 and dF[(0,)] == 1.0
    assert is_consistent(P, F) and is_consistent(P, dF)


def test_consistency_and_norm() -> None:
    F = {(): 3.0, (0,): 1.0, (1,): 2.0, (0, 0): 1.0, (1, 1): 2.0}
    assert is_consistent(P, F)
    assert c_t_norm(P, F) == 3.0
    G = dict(F)
    G[(1,)] = 5.0
    assert consistency_violations(P, G) == [(), (1,)]
    # (6) is required only where there are children: a function that is non-zero on leaves is fine
    assert c_t_norm(P, {(0, 0): -2.0, (0,): -2.0, (): -2.0}) == 2.0


def test_ext_of_a_unit_follows_the_text() -> None:
    # F = 1 at v = (0,): 1 on v and its ancestors, 1/beta on v's children, 0 on the sibling subtree
    G = consistent_extension(P, {(0,): 1.0})
    assert G == {(): 1.0, (0,): 1.0, (1,): 0.0, (0, 0): 0.5, (0, 1): 0.5, (1, 0): 0.0, (1, 1): 0.0}
    assert is_consistent(P, G)
    G3 = consistent_extension(HypercubePartition(1, 2, fanout=3), {(): 9.0})
    assert G3[(2,)] == 3.0 and G3[(1, 2)] == 1.0


def test_ext_as_printed_gives_weight_one_to_non_descendants() -> None:
    G = consistent_extension(P, {(0,): 1.0}, as_printed=True)
    assert G[(1,)] == 1.0 and G[(1, 0)] == 1.0  # sibling and cousins: beta^-max(0, -dist) = 1
    assert not is_consistent(P, G)
    assert ext_weight(P, (0,), (1, 1)) == 0.0 and ext_weight(P, (0,), (1, 1), as_printed=True) == 1.0


def test_ext_on_selected_nodes_matches_full() -> None:
    F = {(0, 1): 2.0, (1,): -1.0, (): 0.5}
    full = consistent_extension(P, F)
    part = consistent_extension(P, F, nodes=[(0, 1), (1, 1)])
    assert part == {(0, 1): full[(0, 1)], (1, 1): full[(1, 1)]}


@pytest.mark.parametrize("F", [{(2,): 1.0}, {(0, 0, 0): 1.0}, {(0,): "1"}, {(0,): float("inf")}, [1.0]])
def test_bad_tree_functions(F: object) -> None:
    with pytest.raises(DPStreamInputError):
        require_tree_function(P, F)


def test_batch_counts_agree_with_the_dictionary() -> None:
    import numpy as np

    from dpstream.phdstream.tree_function import BatchCounts, prefix_sums

    P5 = HypercubePartition(2, 5, fanout=3)
    rng = data_rng(4)  # test data only
    pts = rng.random((60, 2))
    w = rng.choice([-1.0, 1.0], size=60)
    paths = P5.locate(pts)
    counts = BatchCounts(paths, w, 3)
    full = prefix_sums(paths, w, 3)
    assert dict(counts) == full and len(counts) == len(full)
    for v in P5.nodes():
        assert counts.get(v, 0.0) == full.get(v, 0.0)
    assert (2, 2, 2, 2, 2) not in full or counts[(2, 2, 2, 2, 2)] == full[(2, 2, 2, 2, 2)]
    assert BatchCounts(np.zeros((0, 5), dtype=np.int64), np.zeros(0), 3).get((), 7.0) == 7.0
