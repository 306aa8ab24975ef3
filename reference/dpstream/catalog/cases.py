"""Fresh cases of an algorithm, for the differential mode of ``dpstream conform`` (docs/conformance.md).

A catalog entry's ``cases`` (an :class:`~dpstream.catalog.entry.Entry` field) draws one case -- parameters and an
input stream, as the protocol's JSON -- through a :class:`CaseDraw`. Two drawers implement it: the differential
mode's fuzzer (:class:`dpstream.conformance.fuzz.ChoiceDraw`: choice sequences, coverage-guided, shrunk by its own
shrinker) and Hypothesis (:func:`dpstream.testing.strategies.catalog_cases`, for property tests). In both every
choice shrinks: a scalar drawn with ``edges`` is one of them about half of the time and shrinks to the first, an
option of :meth:`CaseDraw.choice` shrinks to the first option, and the input streams are valid (no removal of what is
absent, points in the domain, ...). List the simplest edge and option first: a case drawn on an edge shrinks only to
an earlier edge, never back into the range (a stream length drawn with edges ``(T,)`` would stay T long; ``(1, T)``
shrinks to one step).

**Sizes.** A generator bounds every size it draws (a horizon, a depth, a number of records or steps) with
:meth:`CaseDraw.size` ``(small, large)``: ``small`` is the range the shipped vectors cover, ``large`` the largest the
docs allow (or the largest a case may take in the time of a differential run); the fuzzer's cases grow from one to
the other as its budget goes on, so that a mistake that shows only at depth 6 or at step 40 is reached.
**Features.** A generator asks :meth:`CaseDraw.feature` ``(name)`` before using an optional feature of a stream
(deletions, removals, empty batches, repeated points, measured totals, ...): the fuzzer switches random subsets off
per case (swarm testing), Hypothesis keeps them all on.

The generators weight the edges the known-answer vectors care about (T = 1, 2^k, 2^k +- 1, empty batches, deletions
back to zero, D = 0, large fanout, extreme parameters, optional parameters left out) and stay within what the docs
define, so that a correct implementation written from the docs passes every case: streams within the horizon,
optional parameters only where they apply, points never on an inner cut of the tree. A case the reference refuses
is not a case (the differential mode drops it); generators should make those rare.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

__all__ = ["EDGE_HORIZONS", "PRIVACY_EDGES", "Case", "CaseDraw", "CaseGenerator", "Event", "horizon_edges",
           "horizon_labels", "optional"]

T_co = TypeVar("T_co")

Event = tuple[Any, ...]
"""One event of an EVENT stream: the point's coordinates (or the record's values), then +1 (inserted) or -1."""

EDGE_HORIZONS = tuple(sorted({1, *(2**k + s for k in range(1, 13) for s in (-1, 0, 1))}))
"""T = 1, 2^k and 2^k +- 1 up to 4097 (the vectors stop at 33; :meth:`CaseDraw.size` bounds what a case takes)."""

PRIVACY_EDGES = (1.0, 0.5, 2.0, 0.001, 1000.0)
"""A privacy parameter (eps or rho): the usual values, then the extremes."""


def horizon_edges(high: int) -> tuple[int, ...]:
    """:data:`EDGE_HORIZONS` up to ``high``."""
    return tuple(t for t in EDGE_HORIZONS if t <= high)


def horizon_labels(T: int, length: int | None = None) -> tuple[str, ...]:
    """The vectors' names of the edges a horizon T (and a stream of ``length`` steps) hits."""
    out = []
    if T == 1:
        out.append("T=1")
    elif T & (T - 1) == 0:
        out.append("T=2^k")
    elif (T - 1) & (T - 2) == 0 or (T + 1) & T == 0:
        out.append("T=2^k+-1")
    if length is not None and length < T:
        out.append("partial stream")
    return tuple(out)


class CaseDraw(Protocol):
    """What a case generator draws from (both implementations shrink every choice)."""

    def size(self, small: int, large: int) -> int:
        """The bound of a size for this case: from ``small`` (the vectors' range) to ``large`` (the docs' largest)."""
        ...

    def feature(self, name: str) -> bool:
        """Whether the optional feature ``name`` is switched on for this case (swarm testing)."""
        ...

    def integer(self, low: int, high: int, edges: Sequence[int] = ()) -> int:
        """An integer in [low, high]; one of ``edges`` about half of the time."""
        ...

    def number(self, low: float, high: float, edges: Sequence[float] = ()) -> float:
        """A finite float in [low, high]; one of ``edges`` about half of the time."""
        ...

    def choice(self, options: Sequence[T_co]) -> T_co:
        """One of ``options`` (shrinks to the first)."""
        ...

    def counter_stream(self, kind: str, length: int, bound: float = 3) -> list[Any]:
        """A counter's inputs f(1..length): ``kind`` "integer" (in [-bound, bound]), "real" or "bits" (0/1)."""
        ...

    def vector_stream(self, d: int, length: int, bound: int = 3) -> list[list[int]]:
        """A d-dimensional counter's inputs: ``length`` integer vectors of d coordinates in [-bound, bound]."""
        ...

    def event_batches(self, d: int, coordinates: Sequence[float], batches: int, max_new: int) -> list[
            tuple[Event, ...]]:
        """``batches`` batches of events on points of ``coordinates``^d (each: insertions, then removals of points
        present before it; no removal of an absent point)."""
        ...

    def report_matrix(self, max_n: int, length: int) -> list[list[int]]:
        """An n x ``length`` matrix of 0/1 reports (n in [0, max_n]), row = individual."""
        ...

    def points(self, d: int, length: int) -> list[list[float]]:
        """``length`` points of [0, 1]^d (boundaries included)."""
        ...

    def records(self, sizes: Sequence[int], max_rows: int) -> list[list[int]]:
        """Up to ``max_rows`` records of the tabular domain with attribute sizes ``sizes`` (integer codes)."""
        ...


@dataclass(frozen=True)
class Case:
    """One differential case: protocol parameters and the inputs of one run (JSON values)."""

    params: dict[str, Any]
    inputs: list[Any]
    edges: tuple[str, ...] = field(default=())
    """The edge cases this case hits, as the vectors name them (``"T=2^k+-1"``, ``"empty batch"``, ...)."""


CaseGenerator = Callable[[CaseDraw], Case]
"""An entry's ``cases``: one fresh case per call."""


def optional(draw: CaseDraw, params: Mapping[str, Any], name: str, value: Callable[[], Any]) -> dict[str, Any]:
    """``params`` with the optional parameter ``name`` set to ``value()`` or left out (the default; the simpler)."""
    if draw.choice((False, True)):
        return {**params, name: value()}
    return dict(params)
