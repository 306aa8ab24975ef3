"""dpstream.testing.strategies draws what it promises: valid parameters and inputs, legal neighbouring pairs."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from hypothesis import Phase, find, given, settings
from hypothesis import strategies as st

from dpstream.audit.neighbours import NeighbourPair, is_neighbour
from dpstream.claims import Neighbour
from dpstream.phdstream import HypercubePartition, PointEvents
from dpstream.phdstream.stream import TrueStream
from dpstream.tabular.domain import Domain
from dpstream.testing.strategies import (
    counter_streams,
    domain_records,
    edge_horizons,
    event_batches,
    event_tuples,
    horizons,
    is_valid_event_stream,
    neighbouring_pairs,
    point_sets_around,
    point_streams,
    record_matrices,
    records_around,
    to_point_events,
    vector_streams,
    vectors_around,
)


def test_edge_horizons() -> None:
    assert edge_horizons(17) == [1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17]
    assert edge_horizons(1) == [1]


@settings(max_examples=60, deadline=None)
@given(T=horizons(2, 40), bits=counter_streams("bits"), reals=counter_streams("real", bound=5),
       vectors=vector_streams(d=3))
def test_parameters_and_counter_inputs(T: int, bits: list[int], reals: list[float], vectors: list[list[int]]) -> None:
    assert 2 <= T <= 40
    assert bits and set(bits) <= {0, 1}
    assert all(-5 <= x <= 5 for x in reals)
    assert all(len(v) == 3 and all(isinstance(c, int) for c in v) for v in vectors)


@settings(max_examples=60, deadline=None)
@given(batches=event_tuples())
def test_event_streams_never_delete_an_absent_point(batches: list[tuple[tuple[float, ...], ...]]) -> None:
    assert is_valid_event_stream(batches)
    truth = TrueStream(HypercubePartition(2, 3))
    for batch in batches:  # PHDStream's own check accepts every batch
        truth.stage(to_point_events(batch)).commit()
    assert truth.size == sum(int(e[-1]) for b in batches for e in b)


def test_invalid_event_stream_is_recognised() -> None:
    assert not is_valid_event_stream([((0.1, 0.1, -1),)])
    assert not is_valid_event_stream([((0.1, 0.1, 1),), ((0.1, 0.1, -1), (0.1, 0.1, -1))])
    assert is_valid_event_stream([((0.1, 0.1, 1), (0.1, 0.1, -1))])  # insertions of a batch come first


@settings(max_examples=20, deadline=None)
@given(batches=event_batches(max_batches=3))
def test_event_batches_are_point_events(batches: list[PointEvents]) -> None:
    assert all(isinstance(b, PointEvents) and b.points.shape[1] == 2 for b in batches)


@settings(max_examples=40, deadline=None)
@given(X=record_matrices(alphabet=3), points=point_streams(3), data=domain_records())
def test_records_points_and_rows(X: np.ndarray, points: list[list[float]], data: tuple[Domain, np.ndarray]) -> None:
    assert X.ndim == 2 and X.shape[1] >= 1 and set(np.unique(X)) <= {0, 1, 2}
    assert all(len(p) == 3 and all(0.0 <= c <= 1.0 for c in p) for p in points)
    dom, rows = data
    assert rows.shape[1] == dom.p and all(np.all((rows[:, i] >= 0) & (rows[:, i] < s)) for i, s in enumerate(dom.sizes))


@settings(max_examples=150, deadline=None)
@given(relation=st.sampled_from(list(Neighbour)), data=st.data())
def test_neighbouring_pairs_are_legal(relation: Neighbour, data: st.DataObject) -> None:
    pair = data.draw(neighbouring_pairs(relation))
    assert isinstance(pair, NeighbourPair) and pair.relation is relation
    assert is_neighbour(pair) and pair.f != pair.f_prime
    if relation is Neighbour.EVENT:
        assert is_valid_event_stream(pair.f) and is_valid_event_stream(pair.f_prime)


@settings(max_examples=20, deadline=None)
@given(pair=neighbouring_pairs())
def test_any_relation(pair: NeighbourPair) -> None:
    assert is_neighbour(pair)


def test_probes_around_a_domain_reach_both_sides() -> None:
    """vectors_around, point_sets_around and records_around draw members of the domain and non-members."""
    def vector_inside(x: object) -> bool:
        return isinstance(x, list) and len(x) == 4 and all(type(v) is int and -2 <= v <= 5 for v in x)

    def points_inside(x: object) -> bool:
        return isinstance(x, list) and all(
            isinstance(p, list) and len(p) == 2 and all(type(c) is float and 0 <= c <= 1 for c in p) for p in x)

    domain = Domain(("a", "b"), (2, 3))

    def records_inside(x: object) -> bool:
        return isinstance(x, list) and all(
            isinstance(r, list) and len(r) == 2 and all(type(c) is int for c in r) and 0 <= r[0] < 2 and 0 <= r[1] < 3
            for r in x)

    _both_sides(vectors_around(4, -2, 5, integer=True), vector_inside)
    _both_sides(point_sets_around(2), points_inside)
    _both_sides(records_around(domain), records_inside)


def _both_sides(strategy: st.SearchStrategy[Any], inside: Callable[[Any], bool]) -> None:
    first = settings(phases=[Phase.generate], database=None)  # the first example found, not shrunk
    assert inside(find(strategy, lambda x: inside(x) and len(x) > 0, settings=first))
    assert not inside(find(strategy, lambda x: not inside(x), settings=first))
