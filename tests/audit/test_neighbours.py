"""Neighbour generators: worst-case positions for counters and legality under every relation."""

from __future__ import annotations

import pytest

from dpstream.audit.neighbours import (
    NeighbourPair,
    counter_positions,
    event_pairs,
    individual_add_remove_pairs,
    individual_substitute_pairs,
    is_neighbour,
    matrix_columns,
    point_replace_pairs,
    stream_entry_pairs,
    vector_entry_pairs,
)
from dpstream.claims import Neighbour
from dpstream.errors import DPStreamInputError


def test_counter_positions_name_the_worst_cases() -> None:
    pos = counter_positions(20, block=8, partitions=(4, 13))
    for t in (1, 20, 2, 3, 4, 5, 8, 9, 16, 17, 13, 14):
        assert t in pos, t
    assert "first" in pos[1] and "horizon" in pos[20]
    assert "block end 8B" not in pos[8] and "block end 1B" in pos[8] and "block start 2B+1" in pos[17]
    assert "partition end 13" in pos[13] and "partition start 14" in pos[14]
    assert 11 not in pos  # nothing special at 11
    assert sorted(counter_positions(6, every=True)) == [1, 2, 3, 4, 5, 6]


def test_stream_entry_pairs_differ_by_one_entry() -> None:
    pairs = stream_entry_pairs([1, 0, 2, 5], {1: "first", 4: "last"})
    assert [p.label for p in pairs] == ["t=1 (first)", "t=4 (last)"]
    assert pairs[0].f_prime == (2, 0, 2, 5) and pairs[1].f_prime == (1, 0, 2, 6)
    assert all(is_neighbour(p) for p in pairs)
    with pytest.raises(DPStreamInputError):
        stream_entry_pairs([0, 0], [3])
    with pytest.raises(DPStreamInputError):
        stream_entry_pairs([0, 0], [1], delta=2.0)


def test_vector_pairs() -> None:
    pairs = vector_entry_pairs([[0, 1], [1, 1]], [(2, 1)])
    assert pairs[0].f_prime == ((0.0, 1.0), (1.0, 2.0))
    assert is_neighbour(pairs[0])
    far = NeighbourPair(((0.0, 0.0),), ((1.0, 1.0),), "l1 = 2", Neighbour.STREAM_ENTRY)
    assert not is_neighbour(far)


def test_event_pairs_add_and_remove() -> None:
    base = [["a"], [], ["b", "c"]]
    added = event_pairs(base, [2], "x")[0]
    assert added.f_prime == (("a",), ("x",), ("b", "c"))
    removed = event_pairs(base, [3], "c", remove=True)[0]
    assert removed.f_prime == (("a",), (), ("b",))
    assert is_neighbour(added) and is_neighbour(removed)
    two = NeighbourPair(added.f, (("a", "y"), ("x",), ("b", "c")), "two events", Neighbour.EVENT)
    assert not is_neighbour(two)
    with pytest.raises(DPStreamInputError):
        event_pairs(base, [2], "z", remove=True)


def test_individual_relations_on_record_matrices() -> None:
    records = [[0, 1, 1], [1, 1, 0], [0, 0, 0]]
    assert matrix_columns(records) == ((0, 1, 0), (1, 1, 0), (1, 0, 0))
    add_remove = individual_add_remove_pairs(records, [1], extra=[[1, 1, 1]])
    assert len(add_remove) == 2 and all(is_neighbour(p) for p in add_remove)
    assert len(add_remove[0].f_prime[0]) == 2 and len(add_remove[1].f_prime[0]) == 4
    sub = individual_substitute_pairs(records, [(0, [1, 0, 1])])[0]
    assert is_neighbour(sub)
    assert not is_neighbour(NeighbourPair(sub.f, add_remove[0].f_prime, "n changed", Neighbour.INDIVIDUAL_SUBSTITUTE))


def test_point_replace() -> None:
    pts = [(0.1, 0.2), (0.5, 0.5), (0.9, 0.1)]
    pair = point_replace_pairs(pts, [(2, (0.0, 0.0))])[0]
    assert pair.f_prime[1] == (0.0, 0.0) and is_neighbour(pair)
    both = NeighbourPair(pair.f, ((0.0, 0.0), (0.0, 0.0), (0.9, 0.1)), "two points", Neighbour.POINT_REPLACE)
    assert not is_neighbour(both)
    shorter = NeighbourPair(pair.f, pair.f[:2], "one point dropped", Neighbour.POINT_REPLACE)
    assert not is_neighbour(shorter)  # a different length is not a replacement (and must not raise)


def test_stream_entry_shapes_must_match() -> None:
    wider = NeighbourPair(((0.0,),), ((0.0, 0.0),), "other dimension", Neighbour.STREAM_ENTRY)
    assert not is_neighbour(wider)
