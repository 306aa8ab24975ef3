"""Hypothesis strategies for testing an implementation of the dpstream algorithms.

Needs `hypothesis <https://hypothesis.readthedocs.io>`_, a dependency of dpstream (the differential mode of
``dpstream conform`` draws its cases here). dpstream's own property tests (``property_tests/``) draw from these
strategies, so another implementation can run the same properties on the same kinds of input::

    from hypothesis import given
    from dpstream.testing.strategies import counter_streams, epsilons

    @given(f=counter_streams(), eps=epsilons())
    def test_my_counter_is_causal(f, eps): ...

* valid parameters: :func:`epsilons`, :func:`rhos`, :func:`horizons` (T with the edge lengths
  1, 2^k and 2^k +- 1 drawn often), :func:`block_sizes`, :func:`depths`, :func:`fanouts`,
  :func:`thetas`, :func:`selections` (k), :func:`dimensions` (d), :func:`hypercube_partitions`;
* inputs: :func:`counter_streams` (integers, reals, 0/1, or integers around the counters' range
  +-(2^53 - 1)), :func:`vector_streams`, :func:`event_tuples` / :func:`event_batches` (PHDStream: points
  of [0,1]^d inserted and deleted, never deleting what is not present), :func:`record_matrices` (longitudinal n x T
  records), :func:`cube_points` / :func:`point_streams` (the hypercube), :func:`domains`,
  :func:`tabular_rows` and :func:`domain_records` (tabular);
* inputs in and around a declared domain (an OpenDP measurement's, ``dpstream.interop.opendp``): half the time a
  member, otherwise values just and far outside it, NaN, +-inf, the wrong number type, the wrong length or shape,
  no number at all: :func:`numbers_within`, :func:`numbers_around`, :func:`vectors_around` (counters),
  :func:`point_sets_around` (point sets of [0,1]^d), :func:`records_around` (records of a tabular domain);
* neighbouring inputs for every :class:`dpstream.claims.Neighbour`:
  :func:`neighbouring_pairs` (one relation or any), as :class:`dpstream.audit.neighbours.NeighbourPair`,
  which is what the audit engine consumes (:func:`dpstream.audit.neighbours.is_neighbour` holds
  for every pair drawn);
* whole cases of any algorithm of the catalog, protocol parameters and inputs as JSON, weighted toward the edges:
  :func:`catalog_cases` (what ``dpstream conform --mode differential`` draws; the entry's ``cases`` says how).
"""

from __future__ import annotations

import contextlib
import math
from collections import Counter as Multiset
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
from hypothesis import strategies as st

from dpstream.audit.neighbours import (
    NeighbourPair,
    event_pairs,
    individual_add_remove_pairs,
    individual_substitute_pairs,
    point_replace_pairs,
    stream_entry_pairs,
)
from dpstream.catalog import entry
from dpstream.catalog.cases import Case
from dpstream.claims import Neighbour
from dpstream.errors import MAX_STREAM_SUM
from dpstream.phdstream.partition import HypercubePartition
from dpstream.phdstream.stream import PointEvents
from dpstream.tabular.domain import Domain

__all__ = [
    "GRID",
    "Event",
    "block_sizes",
    "catalog_cases",
    "counter_streams",
    "cube_points",
    "depths",
    "dimensions",
    "domain_records",
    "domains",
    "edge_horizons",
    "epsilons",
    "event_batches",
    "event_tuples",
    "fanouts",
    "fixed_generation",
    "horizons",
    "hypercube_partitions",
    "is_valid_event_stream",
    "neighbouring_pairs",
    "numbers_around",
    "numbers_within",
    "point_sets_around",
    "point_streams",
    "record_matrices",
    "records_around",
    "rhos",
    "selections",
    "tabular_rows",
    "thetas",
    "to_point_events",
    "vector_streams",
    "vectors_around",
]

Event = tuple[float, ...]
"""One PHDStream event: the point's coordinates, then the move (+1 inserted, -1 deleted)."""

GRID = (0.0, 0.05, 0.2, 0.33, 0.5, 0.51, 0.75, 0.9, 1.0)
"""Default coordinates of event points: cell boundaries (0, 0.5, 1), points near them, and others."""


# --- parameters ---------------------------------------------------------------------------------------

def epsilons(min_value: float = 0.05, max_value: float = 5.0) -> st.SearchStrategy[float]:
    """A privacy parameter eps (finite, positive)."""
    return st.floats(min_value=min_value, max_value=max_value, allow_nan=False, allow_infinity=False)


def rhos(min_value: float = 0.01, max_value: float = 10.0) -> st.SearchStrategy[float]:
    """A zCDP parameter rho (finite, positive)."""
    return st.floats(min_value=min_value, max_value=max_value, allow_nan=False, allow_infinity=False)


def edge_horizons(max_value: int) -> list[int]:
    """The horizons where tree counters change shape: 1 and 2^k, 2^k - 1, 2^k + 1 up to ``max_value``."""
    out = {1}
    k = 1
    while 2**k - 1 <= max_value:
        out.update(v for v in (2**k - 1, 2**k, 2**k + 1) if 1 <= v <= max_value)
        k += 1
    return sorted(out)


def horizons(min_value: int = 1, max_value: int = 70) -> st.SearchStrategy[int]:
    """A time horizon T; the edge lengths (:func:`edge_horizons`) are drawn about half the time."""
    edges = [v for v in edge_horizons(max_value) if v >= min_value]
    anywhere = st.integers(min_value=min_value, max_value=max_value)
    return st.one_of(st.sampled_from(edges), anywhere) if edges else anywhere


def block_sizes(max_value: int = 8) -> st.SearchStrategy[int]:
    """A block size B >= 1 (001-alg9)."""
    return st.integers(min_value=1, max_value=max_value)


def depths(min_value: int = 0, max_value: int = 4) -> st.SearchStrategy[int]:
    """A maximum tree depth D (001's partition trees; 004's partition depth)."""
    return st.integers(min_value=min_value, max_value=max_value)


def fanouts(max_value: int = 3) -> st.SearchStrategy[int]:
    """A tree fanout beta >= 2 (001: children per node)."""
    return st.integers(min_value=2, max_value=max_value)


@st.composite
def hypercube_partitions(draw: st.DrawFn, max_d: int = 2, max_depth: int = 3,
                         max_fanout: int = 3) -> HypercubePartition:
    """A PHDStream tree T: [0,1]^d split ``fanout`` ways per level down to depth D (001-eq4-5)."""
    return HypercubePartition(draw(st.integers(1, max_d)), draw(depths(0, max_depth)),
                              fanout=draw(fanouts(max_fanout)))


def thetas(max_value: float = 20.0) -> st.SearchStrategy[float]:
    """A PrivTree threshold theta >= 0 (001-alg5)."""
    return st.floats(min_value=0.0, max_value=max_value, allow_nan=False)


def selections(max_value: int = 4) -> st.SearchStrategy[int]:
    """The number k >= 1 of selections per time step (003-alg2, 003-alg3) or of offline iterations (003-alg1)."""
    return st.integers(min_value=1, max_value=max_value)


def dimensions(max_value: int = 3) -> st.SearchStrategy[int]:
    """A dimension d >= 1 (points in [0,1]^d, d-dimensional counters)."""
    return st.integers(min_value=1, max_value=max_value)


# --- counter inputs -------------------------------------------------------------------------------------

def _values(kind: str, bound: float) -> st.SearchStrategy[Any]:
    if kind == "integer":
        return st.integers(min_value=-int(bound), max_value=int(bound))
    if kind == "real":
        return st.floats(min_value=-bound, max_value=bound, allow_nan=False)
    if kind == "bits":
        return st.integers(min_value=0, max_value=1)
    if kind == "edge":
        m = MAX_STREAM_SUM
        return st.one_of(st.integers(-3, 3), st.sampled_from([m, -m, m - 1, 1 - m, m + 1, -m - 1, (m + 1) // 2,
                                                              -(m + 1) // 2, 2**53 + 2, 2**62]),
                         st.integers(-m - 2, m + 2))
    raise ValueError(f"kind must be 'integer', 'real', 'bits' or 'edge', got {kind!r}")


def counter_streams(kind: str = "integer", min_size: int = 1, max_size: int = 40,
                    bound: float = 3) -> st.SearchStrategy[list[Any]]:
    """A counter's input stream f(1..T): ``kind`` "integer" (in [-bound, bound]), "real" (floats in
    [-bound, bound]), "bits" (0/1) or "edge" (integers at and around +-MAX_STREAM_SUM = 2^53 - 1, just beyond it and
    far beyond, mixed with small ones, so that sums cross the bound: docs/counters.md, "Range")."""
    return st.lists(_values(kind, bound), min_size=min_size, max_size=max_size)


@st.composite
def vector_streams(draw: st.DrawFn, d: int | None = None, min_size: int = 1, max_size: int = 20,
                   bound: int = 3) -> list[list[int]]:
    """A d-dimensional counter's input stream (001-sec4.3): a list of integer vectors."""
    dim = draw(dimensions()) if d is None else d
    vec = st.lists(st.integers(-bound, bound), min_size=dim, max_size=dim)
    return draw(st.lists(vec, min_size=min_size, max_size=max_size))


# --- PHDStream events -----------------------------------------------------------------------------------

def is_valid_event_stream(batches: Sequence[Sequence[Event]]) -> bool:
    """No batch deletes a point that is not present after the previous batches (insertions of a batch first)."""
    present: Multiset[Event] = Multiset()
    for batch in batches:
        for e in batch:
            if e[-1] == 1:
                present[e[:-1]] += 1
        for e in batch:
            if e[-1] == -1:
                if present[e[:-1]] <= 0:
                    return False
                present[e[:-1]] -= 1
    return True


@st.composite
def event_tuples(draw: st.DrawFn, d: int = 2, coordinates: Sequence[float] = GRID, min_batches: int = 1,
                 max_batches: int = 5, max_new: int = 12) -> list[tuple[Event, ...]]:
    """Batches of events (x_1, ..., x_d, move): each batch inserts new points and deletes some present ones.

    Points come from ``coordinates`` (default :data:`GRID`, so that cell boundaries and repeated points
    occur); a deletion always removes a point inserted in an earlier batch and not yet deleted.
    """
    point = st.tuples(*[st.sampled_from(list(coordinates))] * d)
    present: list[tuple[float, ...]] = []
    out: list[tuple[Event, ...]] = []
    for _ in range(draw(st.integers(min_batches, max_batches))):
        new = draw(st.lists(point, max_size=max_new))
        gone_idx = draw(st.lists(st.integers(0, max(len(present) - 1, 0)), max_size=len(present), unique=True))
        gone = [present[i] for i in sorted(gone_idx) if present]
        for p in gone:
            present.remove(p)
        present += new
        out.append(tuple((*p, 1) for p in new) + tuple((*p, -1) for p in gone))
    return out


def to_point_events(batch: Sequence[Event], d: int = 2) -> PointEvents:
    """A batch of event tuples as the :class:`PointEvents` PHDStream steps on."""
    if not batch:
        return PointEvents.empty(d)
    return PointEvents.of(np.asarray([e[:-1] for e in batch], dtype=np.float64), [int(e[-1]) for e in batch])


def event_batches(d: int = 2, coordinates: Sequence[float] = GRID, min_batches: int = 1, max_batches: int = 5,
                  max_new: int = 12) -> st.SearchStrategy[list[PointEvents]]:
    """PHDStream input: :func:`event_tuples` as :class:`PointEvents` batches."""
    return event_tuples(d, coordinates, min_batches, max_batches, max_new).map(
        lambda batches: [to_point_events(b, d) for b in batches])


# --- longitudinal, hypercube and tabular inputs ----------------------------------------------------------

@st.composite
def record_matrices(draw: st.DrawFn, max_n: int = 12, max_T: int = 7, alphabet: int = 2, min_n: int = 0,
                    min_T: int = 1) -> npt.NDArray[np.int64]:
    """Longitudinal records (002): an n x T matrix, row = individual, column = time, entries in [0, alphabet)."""
    n = draw(st.integers(min_n, max_n))
    T = draw(st.integers(min_T, max_T))
    flat = draw(st.lists(st.integers(0, alphabet - 1), min_size=n * T, max_size=n * T))
    return np.asarray(flat, dtype=np.int64).reshape(n, T)


def cube_points(d: int) -> st.SearchStrategy[list[float]]:
    """A point of [0,1]^d (boundaries included)."""
    coordinate = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)
    return st.lists(coordinate, min_size=d, max_size=d)


def point_streams(d: int, min_size: int = 1, max_size: int = 14) -> st.SearchStrategy[list[list[float]]]:
    """The hypercube's input (004-alg1): one point of [0,1]^d per time step."""
    return st.lists(cube_points(d), min_size=min_size, max_size=max_size)


@st.composite
def domains(draw: st.DrawFn, max_p: int = 4, max_size: int = 4, min_size: int = 1) -> Domain:
    """A tabular domain X = X_1 x ... x X_p with attribute sizes in [min_size, max_size]."""
    sizes = draw(st.lists(st.integers(min_size, max_size), min_size=1, max_size=max_p))
    return Domain(tuple(f"x{i}" for i in range(len(sizes))), tuple(sizes))


@st.composite
def tabular_rows(draw: st.DrawFn, domain: Domain, min_rows: int = 0, max_rows: int = 30) -> npt.NDArray[np.int64]:
    """Records of ``domain``: an (n, p) array of integer codes, code j of attribute i in [0, |X_i|)."""
    n = draw(st.integers(min_rows, max_rows))
    rows = [[draw(st.integers(0, s - 1)) for s in domain.sizes] for _ in range(n)]
    return np.array(rows, dtype=np.int64).reshape(n, domain.p)


@st.composite
def domain_records(draw: st.DrawFn, max_p: int = 4, max_rows: int = 30) -> tuple[Domain, npt.NDArray[np.int64]]:
    """A domain and records of it."""
    dom = draw(domains(max_p))
    return dom, draw(tabular_rows(dom, max_rows=max_rows))


# --- neighbouring inputs -------------------------------------------------------------------------------

@st.composite
def _stream_entry(draw: st.DrawFn) -> NeighbourPair:
    base = draw(counter_streams("integer"))
    t = draw(st.integers(1, len(base)))
    delta = draw(st.sampled_from([1.0, -1.0, 0.5, -0.25]))  # l1 change <= 1
    return stream_entry_pairs(base, [t], delta)[0]


@st.composite
def _event(draw: st.DrawFn) -> NeighbourPair:
    """Add or remove one event at one time, keeping both streams valid (no deletion of an absent point)."""
    base = draw(event_tuples(max_batches=4, max_new=6))
    t = draw(st.integers(1, len(base)))
    batch = base[t - 1]
    removable = [e for e in batch if is_valid_event_stream([*base[:t - 1], _without(batch, e), *base[t:]])]
    present_after = Multiset(e[:-1] for b in base[:t] for e in b if e[-1] == 1) - \
        Multiset(e[:-1] for b in base[:t] for e in b if e[-1] == -1)
    choice = draw(st.sampled_from(["insert", "remove", "delete"]))
    if choice == "remove" and removable:
        return event_pairs(base, [t], draw(st.sampled_from(removable)), remove=True)[0]
    if choice == "delete" and present_after:
        gone = (*draw(st.sampled_from(sorted(present_after))), -1)
        candidate = [*base[:t - 1], (*batch, gone), *base[t:]]
        if is_valid_event_stream(candidate):
            return event_pairs(base, [t], gone)[0]
    return event_pairs(base, [t], (*draw(st.sampled_from([(0.1, 0.1), (0.8, 0.3), (1.0, 0.0)])), 1))[0]


def _without(batch: tuple[Event, ...], event: Event) -> tuple[Event, ...]:
    rest = list(batch)
    rest.remove(event)
    return tuple(rest)


@st.composite
def _individual(draw: st.DrawFn, relation: Neighbour) -> NeighbourPair:
    records = draw(record_matrices(min_n=1, max_n=8, max_T=6))
    n, T = records.shape
    rows = [tuple(int(v) for v in r) for r in records]
    other = tuple(draw(st.lists(st.integers(0, 1), min_size=T, max_size=T)))
    if relation is Neighbour.INDIVIDUAL_SUBSTITUTE:
        i = draw(st.integers(0, n - 1))
        if other == rows[i]:  # a substitution that changes something
            other = (1 - other[0], *other[1:])
        return individual_substitute_pairs(rows, [(i, other)])[0]
    if draw(st.booleans()):
        return individual_add_remove_pairs(rows, [draw(st.integers(0, n - 1))])[0]
    return individual_add_remove_pairs(rows, [], extra=[other])[0]


@st.composite
def _point_replace(draw: st.DrawFn) -> NeighbourPair:
    d = draw(dimensions())
    points = [tuple(p) for p in draw(point_streams(d))]
    t = draw(st.integers(1, len(points)))
    new = tuple(draw(cube_points(d)))
    if new == points[t - 1]:  # a replacement that changes something
        new = (0.0 if new[0] != 0.0 else 1.0, *new[1:])
    return point_replace_pairs(points, [(t, new)])[0]


def neighbouring_pairs(relation: Neighbour | None = None) -> st.SearchStrategy[NeighbourPair]:
    """Two neighbouring inputs under ``relation`` (any relation when None).

    * STREAM_ENTRY: an integer counter stream and the same stream with one entry moved by at most 1;
    * EVENT: batches of (x, y, move) events (:func:`event_tuples`) and the same with one event added
      or removed at one time, both valid streams (use :func:`to_point_events` to step PHDStream);
    * INDIVIDUAL_ADD_REMOVE / INDIVIDUAL_SUBSTITUTE: the columns of an n x T 0/1 record matrix
      (what a longitudinal synthesizer steps on) with one row removed, added or replaced;
    * POINT_REPLACE: a stream of points of [0,1]^d with one point replaced.
    """
    makers: dict[Neighbour, st.SearchStrategy[NeighbourPair]] = {
        Neighbour.STREAM_ENTRY: _stream_entry(),
        Neighbour.EVENT: _event(),
        Neighbour.INDIVIDUAL_ADD_REMOVE: _individual(Neighbour.INDIVIDUAL_ADD_REMOVE),
        Neighbour.INDIVIDUAL_SUBSTITUTE: _individual(Neighbour.INDIVIDUAL_SUBSTITUTE),
        Neighbour.POINT_REPLACE: _point_replace(),
    }
    if relation is None:
        return st.one_of(*makers.values())
    return makers[relation]


# --- inputs in and around a declared domain ------------------------------------------------------------

NOT_NUMBERS: tuple[Any, ...] = (None, "1", "nan", True, False, b"1", 1j, (1,), [], {})
"""Values of no number type (bools included: they are not counts), for :func:`numbers_around`."""


def numbers_within(lower: float, upper: float, integer: bool = False) -> st.SearchStrategy[Any]:
    """A member of the atom domain [lower, upper] of i64 (``integer``: Python ints) or f64 (floats, and ints, which
    OpenDP converts) numbers; the bounds themselves are drawn often."""
    if integer:
        lo, hi = math.ceil(lower), math.floor(upper)
        return st.one_of(st.sampled_from([lo, hi]), st.integers(lo, hi))
    edges = [lower, upper] + ([0.0, -0.0] if lower <= 0.0 <= upper else [])
    ints = [st.integers(math.ceil(lower), math.floor(upper))] if math.ceil(lower) <= math.floor(upper) else []
    return st.one_of(st.sampled_from(edges), st.floats(lower, upper), *ints)


def numbers_around(lower: float, upper: float, integer: bool = False) -> st.SearchStrategy[Any]:
    """A value for probing the atom domain [lower, upper] of i64 (``integer``) or f64 numbers: a member
    (:func:`numbers_within`), just outside (the next integer or float), far outside (up to 2^64), NaN and +-inf,
    a number of the other type (any float for i64, 1.0 included), or :data:`NOT_NUMBERS`."""
    if integer:
        lo, hi = math.ceil(lower), math.floor(upper)
        outside = st.one_of(st.sampled_from([lo - 1, hi + 1, -2**62, 2**62, -2**63, 2**63 - 1, 2**63, 2**64]),
                            st.integers(hi + 1, 2**64), st.integers(-2**64, lo - 1))
        other = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.sampled_from([float(lo), float(hi)]))
    else:
        outside = st.one_of(
            st.sampled_from([math.nextafter(lower, -math.inf), math.nextafter(upper, math.inf), math.nan, math.inf,
                             -math.inf, -2.0**62 - 1, 2.0**63, 1e308]),
            st.floats(min_value=upper, exclude_min=True), st.floats(max_value=lower, exclude_max=True))
        other = st.just(float("nan"))
    return st.one_of(numbers_within(lower, upper, integer), outside, other, st.sampled_from(NOT_NUMBERS))


@st.composite
def vectors_around(draw: st.DrawFn, size: int, lower: float, upper: float, integer: bool = False) -> list[Any]:
    """A list for probing vector_domain(atom_domain([lower, upper]), size=size): half the time a member (``size``
    values of :func:`numbers_within`), otherwise a member with one to three values replaced by values of
    :func:`numbers_around` (one defect at a time is what finds a missing check), or members of another length
    (size +- 1, 0)."""
    values = draw(st.lists(numbers_within(lower, upper, integer), min_size=size, max_size=size))
    if draw(st.booleans()):
        return values
    if size == 0 or draw(st.integers(0, 3)) == 0:
        length = draw(st.sampled_from([size + 1, max(size - 1, 0), 0]))
        return draw(st.lists(numbers_within(lower, upper, integer), min_size=length, max_size=length))
    for i in draw(st.lists(st.integers(0, size - 1), min_size=1, max_size=3)):
        values[i] = draw(numbers_around(lower, upper, integer))
    return values


_OUTSIDE_UNIT = (-0.5, math.nextafter(0.0, -1.0), math.nextafter(1.0, 2.0), 1.5, 1e308, math.nan, math.inf, -math.inf)


@st.composite
def point_sets_around(draw: st.DrawFn, d: int, max_n: int = 12) -> Any:
    """A point set for probing the domain of point sets of [0,1]^d (n >= 0 points, as a list of lists): half the time
    a member, otherwise with one defect: a coordinate outside [0, 1] (just outside, NaN, +-inf), a point of another
    dimension, a coordinate that is no number (a string, None), or not a list of points (a flat point, a string)."""
    points: list[Any] = draw(st.lists(cube_points(d), max_size=max_n))
    if draw(st.booleans()):
        return points
    defect = draw(st.sampled_from(["coordinate", "dimension", "type", "shape"]))
    bad: list[Any] = list(draw(cube_points(d)))
    if defect == "coordinate":
        bad[draw(st.integers(0, d - 1))] = draw(st.sampled_from(_OUTSIDE_UNIT))
    elif defect == "dimension":
        bad = [*bad, 0.5] if draw(st.booleans()) or d == 1 else bad[:-1]
    elif defect == "type":
        bad[draw(st.integers(0, d - 1))] = draw(st.sampled_from(["0.5", None]))
    else:
        return draw(st.sampled_from([bad, "points", None]))
    points.insert(draw(st.integers(0, len(points))), bad)
    return points


@st.composite
def records_around(draw: st.DrawFn, domain: Domain, max_rows: int = 12) -> Any:
    """Records for probing the datasets of ``domain`` (n >= 0 records, as a list of lists): half the time a member
    (:func:`tabular_rows`), otherwise with one defect: a code outside 0..|X_i| - 1, a code that is no integer (0.5,
    NaN, +-inf), a record of another arity, or a code that is no number (a string, None)."""
    records: list[Any] = draw(tabular_rows(domain, max_rows=max_rows)).tolist()
    if draw(st.booleans()):
        return records
    defect = draw(st.sampled_from(["code", "integer", "arity", "type"]))
    bad: list[Any] = [draw(st.integers(0, s - 1)) for s in domain.sizes]
    i = draw(st.integers(0, domain.p - 1))
    if defect == "code":
        bad[i] = draw(st.sampled_from([-1, domain.sizes[i], domain.sizes[i] + 7, 2**63]))
    elif defect == "integer":
        bad[i] = draw(st.sampled_from([0.5, math.nan, math.inf, -math.inf]))
    elif defect == "arity":
        bad = [*bad, 0] if draw(st.booleans()) or domain.p == 1 else bad[:-1]
    else:
        bad[i] = draw(st.sampled_from(["0", None]))
    records.insert(draw(st.integers(0, len(records))), bad)
    return records


# --- whole cases of a catalog entry ---------------------------------------------------------------------------

SMALLEST_NORMAL = 2.2250738585072014e-308


def _normal(x: float) -> float:
    """A subnormal float as 0.0 (a JSON reader in another language may refuse one as out of range)."""
    return x if x == 0.0 or abs(x) >= SMALLEST_NORMAL else 0.0


class _CaseDrawer:
    """:class:`dpstream.catalog.cases.CaseDraw` over a Hypothesis draw function: every choice shrinks, the streams
    are the strategies above (as JSON lists)."""

    def __init__(self, draw: st.DrawFn) -> None:
        self._draw = draw

    def size(self, small: int, large: int) -> int:
        return small  # property tests stay in the vectors' range (the fuzzer grows its cases)

    def feature(self, name: str) -> bool:
        return True

    def integer(self, low: int, high: int, edges: Sequence[int] = ()) -> int:
        inside = [e for e in edges if low <= e <= high]
        anywhere = st.integers(low, high)
        return self._draw(st.one_of(st.sampled_from(inside), anywhere) if inside else anywhere)

    def number(self, low: float, high: float, edges: Sequence[float] = ()) -> float:
        inside = [e for e in edges if low <= e <= high]
        anywhere = st.floats(low, high, allow_nan=False, allow_infinity=False, allow_subnormal=False)
        return float(self._draw(st.one_of(st.sampled_from(inside), anywhere) if inside else anywhere))

    def choice(self, options: Sequence[Any]) -> Any:
        return self._draw(st.sampled_from(list(options)))

    def counter_stream(self, kind: str, length: int, bound: float = 3) -> list[Any]:
        stream = self._draw(counter_streams(kind, min_size=length, max_size=length, bound=bound))
        return [_normal(x) if isinstance(x, float) else x for x in stream]

    def vector_stream(self, d: int, length: int, bound: int = 3) -> list[list[int]]:
        return self._draw(vector_streams(d, min_size=length, max_size=length, bound=bound))

    def event_batches(self, d: int, coordinates: Sequence[float], batches: int,
                      max_new: int) -> list[tuple[Event, ...]]:
        return list(self._draw(event_tuples(d, coordinates, batches, batches, max_new)))

    def report_matrix(self, max_n: int, length: int) -> list[list[int]]:
        rows: list[list[int]] = self._draw(record_matrices(max_n=max_n, max_T=length, min_T=length)).tolist()
        return rows

    def points(self, d: int, length: int) -> list[list[float]]:
        return [[_normal(x) for x in p] for p in self._draw(point_streams(d, min_size=length, max_size=length))]

    def records(self, sizes: Sequence[int], max_rows: int) -> list[list[int]]:
        domain = Domain(tuple(f"x{i}" for i in range(len(sizes))), tuple(sizes))
        rows: list[list[int]] = self._draw(tabular_rows(domain, max_rows=max_rows)).tolist()
        return rows


@st.composite
def catalog_cases(draw: st.DrawFn, anchor: str) -> Case:
    """One case of the catalog entry ``anchor`` (:mod:`dpstream.catalog.cases`): protocol parameters and inputs as
    JSON, drawn by the entry's ``cases`` (the generators the differential mode's fuzzer draws from too,
    :mod:`dpstream.conformance.fuzz`). The reference may still refuse a case (it then is none: filter with
    ``assume``); :func:`fixed_generation` makes the cases of a seed independent of the modules loaded."""
    e = entry(anchor)
    if e.cases is None:
        raise ValueError(f"{anchor} draws no cases ({e.notes or 'see the catalog'})")
    return e.cases(_CaseDrawer(draw))


@contextlib.contextmanager
def fixed_generation() -> Iterator[None]:
    """Hypothesis without the constants it reads from 'local' source files (for :func:`catalog_cases` in property
    tests: the cases of a seed then depend on the seed alone).

    Hypothesis mixes integers and floats found in the source of local modules (not in site-packages) into its draws,
    and caches them in ``.hypothesis/`` of the working directory: the cases of a seed would depend on how dpstream is
    installed, on the working directory and on the modules loaded so far. Inside this block the local constants are
    empty (Hypothesis's own global constants stay) and nothing is written."""
    try:
        from hypothesis.internal.conjecture import providers
        from hypothesis.internal.constants_ast import Constants
    except ImportError:  # pragma: no cover - a Hypothesis without local constants
        yield
        return
    original = getattr(providers, "_get_local_constants", None)
    cache_ = getattr(providers, "CONSTANTS_CACHE", None)
    if original is None or cache_ is None:  # pragma: no cover - idem
        yield
        return
    empty = Constants()
    cache_.cache.clear()
    providers._get_local_constants = lambda: empty
    try:
        yield
    finally:
        providers._get_local_constants = original
        cache_.cache.clear()
