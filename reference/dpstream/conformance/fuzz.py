"""The differential mode's case generator: a coverage-guided fuzzer over the catalog's case generators.

A case is a function of a :class:`Candidate`: the *choices* that the entry's generator (``Entry.cases``,
:mod:`dpstream.catalog.cases`) consumes through a :class:`ChoiceDraw` (one 32-bit number per decision), the size
*level* in [0, 1] (:meth:`ChoiceDraw.size`: a bound that grows from the small cases the shipped vectors cover to
the largest the docs allow), and the *swarm*: the features switched off for this case (:meth:`ChoiceDraw.feature`:
deletions, empty batches, removals, ..., each off a third of the time, so that one feature does not crowd out what
another needs, as in swarm testing). A choice of 0 is always the simplest decision (the first edge, the first
option, the low end), and a generator that runs out of choices gets zeros: so shorter and smaller choices are
simpler cases, which is what the shrinker uses.

**Coverage.** :class:`Tracer` runs the reference on a case with a line tracer on the algorithm packages and
returns what it exercised: the lines and the branches (line to line arcs) of the algorithm modules, the printed
lines whose tags those lines carry, and size buckets of the case (depth D, horizon T, records or points n, fanout,
k, d: log2 buckets). A case that reaches something new joins the corpus, and later cases are often mutations of
corpus members (choices replaced, zeroed, duplicated or spliced; the level raised), as a coverage-guided fuzzer
does.

**Shrinking.** :func:`shrink` takes a failing candidate and keeps every simplification that still fails: a lower
level, more features off, the choices cut short, blocks of them deleted, single choices set to 0 or halved. A case
only shrinks to cases that fail, so a mistake that shows only at depth 6 shrinks to depth 6, not below.
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import FrameType
from typing import Any

import numpy as np

from dpstream.catalog.cases import Case, Event

__all__ = ["Candidate", "ChoiceDraw", "Tracer", "materialize", "mutate", "shrink", "size_buckets"]

WORD = 2**32
"""Choices are integers in [0, WORD)."""
SWARM_OFF = 1 / 3
"""Probability that a fresh case switches a feature off."""


@dataclass(frozen=True)
class Candidate:
    """What a case is a function of (module docstring)."""

    choices: tuple[int, ...] = ()
    level: float = 0.0
    off: frozenset[str] = frozenset()
    """Features switched off (swarm)."""
    decided: frozenset[str] = frozenset()
    """Features asked about while the case was made (the others are on by default when replayed)."""

    @property
    def weight(self) -> tuple[int, int, float]:
        """How complex the candidate is (the shrinker's order): the number of choices, their sum, the level."""
        return len(self.choices), sum(self.choices), self.level


class ChoiceDraw:
    """:class:`dpstream.catalog.cases.CaseDraw` over a choice sequence (module docstring). With ``rng`` the
    sequence is extended with fresh random choices when it runs out (a fresh case), and undecided features are
    switched off at random; without it (a replay) missing choices are 0 and undecided features on."""

    def __init__(self, candidate: Candidate, rng: np.random.Generator | None = None) -> None:
        self.choices = list(candidate.choices)
        self.level = min(1.0, max(0.0, candidate.level))
        self.off = set(candidate.off)
        self.decided = set(candidate.decided)
        self.rng = rng
        self.used = 0
        self.wide: list[int] = []
        """The choices that drew an integer from a wide range (16 values or more): sizes, horizons, depths, counts --
        what the shrinker bisects."""

    def candidate(self) -> Candidate:
        """The candidate that replays exactly this case (the choices consumed, the swarm decided)."""
        return Candidate(tuple(self.choices[: self.used]), self.level, frozenset(self.off),
                         frozenset(self.decided))

    def _next(self) -> int:
        if self.used >= len(self.choices):
            if self.rng is None:
                self.used += 1
                return 0
            self.choices.append(int(self.rng.integers(0, WORD)))
        value = self.choices[self.used]
        self.used += 1
        return value

    # -- the primitive decisions -------------------------------------------------------------------------
    def integer(self, low: int, high: int, edges: Sequence[int] = ()) -> int:
        if high <= low:
            return low
        if high - low >= 15:
            self.wide.append(self.used)
        c = self._next()
        inside = [e for e in edges if low <= e <= high]
        if inside and c % 2 == 0:
            return inside[(c // 2) % len(inside)]
        span = high - low + 1
        return low + ((c // 2) * span) // (WORD // 2) if span <= WORD // 2 else low + (c // 2) % span

    def number(self, low: float, high: float, edges: Sequence[float] = ()) -> float:
        c = self._next()
        inside = [e for e in edges if low <= e <= high]
        if inside and c % 2 == 0:
            return float(inside[(c // 2) % len(inside)])
        u = (c // 2) / (WORD // 2)
        if low > 0 and high / low > 100:  # a wide positive range: log-uniform (0.001 .. 1000 alike)
            return float(math.exp(math.log(low) + u * (math.log(high) - math.log(low))))
        return float(low + u * (high - low))

    def choice(self, options: Sequence[Any]) -> Any:
        return options[self._next() % len(options)]

    def size(self, small: int, large: int) -> int:
        """The bound of a size for this case: ``small`` at level 0 (the vectors' range), ``large`` at level 1 (the
        largest the docs allow), geometric in between."""
        if large <= small or self.level <= 0.0:
            return small
        return round(small * (large / small) ** self.level) if small > 0 else round(large * self.level)

    def feature(self, name: str) -> bool:
        """Whether the feature ``name`` is switched on for this case (swarm testing)."""
        if name not in self.decided:
            self.decided.add(name)
            if self.rng is not None and self.rng.random() < SWARM_OFF:
                self.off.add(name)
        return name not in self.off

    # -- streams, from the primitives -------------------------------------------------------------------
    def counter_stream(self, kind: str, length: int, bound: float = 3) -> list[Any]:
        if kind == "bits":
            return [self.integer(0, 1) for _ in range(length)]
        if kind == "real":
            return [self.number(-bound, bound, (0.0, 1.0, -1.0)) for _ in range(length)]
        return [self.integer(-int(bound), int(bound), (0, 1)) for _ in range(length)]

    def vector_stream(self, d: int, length: int, bound: int = 3) -> list[list[int]]:
        return [[self.integer(-bound, bound, (0, 1)) for _ in range(d)] for _ in range(length)]

    def event_batches(self, d: int, coordinates: Sequence[float], batches: int,
                      max_new: int) -> list[tuple[Event, ...]]:
        present: list[tuple[float, ...]] = []
        out: list[tuple[Event, ...]] = []
        deletions = self.feature("deletions")
        repeated = self.feature("repeated points")
        for _ in range(batches):
            count = self.integer(0, max_new, (0, 1))
            new: list[tuple[float, ...]] = []
            for _ in range(count):
                if repeated and (present or new) and self.integer(0, 3) == 0:
                    pool = [*present, *new]
                    new.append(pool[self.integer(0, len(pool) - 1)])
                else:
                    new.append(tuple(coordinates[self.integer(0, len(coordinates) - 1)] for _ in range(d)))
            gone: list[tuple[float, ...]] = []
            if deletions:
                for p in list(present):
                    if self.integer(0, 2) == 1:
                        gone.append(p)
                        present.remove(p)
            present += new
            out.append(tuple((*p, 1) for p in new) + tuple((*p, -1) for p in gone))
        return out

    def report_matrix(self, max_n: int, length: int) -> list[list[int]]:
        n = self.integer(0, max_n, (0, 1))
        ones = self.feature("dense reports")
        return [[self.integer(0, 1) if ones or self.integer(0, 2) == 0 else 0 for _ in range(length)]
                for _ in range(n)]

    def points(self, d: int, length: int) -> list[list[float]]:
        cuts = (0.0, 0.5, 1.0, 0.25, 0.75)
        on_cuts = self.feature("points on dyadic cuts")
        return [[self.number(0.0, 1.0, cuts if on_cuts else ()) for _ in range(d)] for _ in range(length)]

    def records(self, sizes: Sequence[int], max_rows: int) -> list[list[int]]:
        n = self.integer(0, max_rows, (0, 1))
        skewed = self.feature("skewed records")
        return [[self.integer(0, s - 1, (0,) if skewed else ()) for s in sizes] for _ in range(n)]


def materialize(generator: Callable[[ChoiceDraw], Case], candidate: Candidate,
                rng: np.random.Generator | None = None) -> tuple[Case, Candidate]:
    """The case of ``candidate`` (with ``rng``: extended with fresh choices where it runs out), and the candidate
    that replays it exactly."""
    draw = ChoiceDraw(candidate, rng)
    case = generator(draw)
    return case, draw.candidate()


def wide_choices(generator: Callable[[ChoiceDraw], Case], candidate: Candidate) -> list[int]:
    """The positions of ``candidate``'s choices that drew an integer from a wide range (its sizes)."""
    draw = ChoiceDraw(candidate)
    generator(draw)
    return [i for i in draw.wide if i < len(candidate.choices)]


def mutate(parent: Candidate, corpus: Sequence[Candidate], rng: np.random.Generator, level: float) -> Candidate:
    """A mutation of ``parent`` (module docstring); the level is raised toward ``level`` half of the time."""
    choices = list(parent.choices) or [0]
    how = int(rng.integers(0, 5))
    if how == 0:  # replace a few choices
        for _ in range(int(rng.integers(1, 9))):
            choices[int(rng.integers(0, len(choices)))] = int(rng.integers(0, WORD))
    elif how == 1:  # zero a block
        start = int(rng.integers(0, len(choices)))
        for i in range(start, min(len(choices), start + int(rng.integers(1, 9)))):
            choices[i] = 0
    elif how == 2:  # duplicate a block (a longer stream, a deeper tree)
        start = int(rng.integers(0, len(choices)))
        block = choices[start:start + int(rng.integers(1, 33))]
        at = int(rng.integers(0, len(choices) + 1))
        choices[at:at] = block
    elif how == 3 and len(corpus) > 1:  # splice with another member
        other = list(corpus[int(rng.integers(0, len(corpus)))].choices) or [0]
        cut = int(rng.integers(0, len(choices) + 1))
        choices = choices[:cut] + other[min(cut, len(other)):]
    else:  # flip low bits (a neighbouring value)
        i = int(rng.integers(0, len(choices)))
        choices[i] = choices[i] ^ (1 << int(rng.integers(0, 8)))
    off = set(parent.off)
    if parent.decided and rng.random() < 0.2:  # switch one feature
        name = sorted(parent.decided)[int(rng.integers(0, len(parent.decided)))]
        off ^= {name}
    draw = rng.random()
    new_level = parent.level if draw < 0.4 else level if draw < 0.7 else max(parent.level,
                                                                              float(rng.uniform(parent.level, level)))
    return Candidate(tuple(choices), new_level, frozenset(off), parent.decided)


def _first_failing(candidates: Iterator[Candidate], fails: Callable[[Candidate], bool | None], deadline: float
                   ) -> Candidate | None:
    for c in candidates:
        if time.monotonic() > deadline:
            return None
        if fails(c):
            return c
    return None


def _cut(best: Candidate) -> Iterator[Candidate]:
    """The big simplifications of ``best``: more features off, the choices cut short."""
    for name in sorted(best.decided - best.off):
        yield replace(best, off=best.off | {name})
    n = len(best.choices)
    for keep in sorted({0, n // 8, n // 4, n // 2, 3 * n // 4} - {n}):
        yield replace(best, choices=best.choices[:keep])


def _cheap(best: Candidate) -> Iterator[Candidate]:
    """The small simplifications of ``best``: blocks of choices deleted, single choices toward the simplest
    values."""
    n = len(best.choices)
    for width in (64, 16, 4, 1):
        for start in range(0, n - width + 1, width):
            yield replace(best, choices=best.choices[:start] + best.choices[start + width:])
    for i, c in enumerate(best.choices):  # each choice toward the simplest values (an edge index, a low value)
        for v in dict.fromkeys((*range(min(c, 8)), c // 2, c - 1)):
            if 0 <= v < c:
                yield replace(best, choices=(*best.choices[:i], v, *best.choices[i + 1:]))


LEADING = 64
"""The first choices a case consumes decide its parameters and sizes (a horizon, a depth, a number of steps): the
shrinker searches each of them for its smallest failing value."""


def shrink(candidate: Candidate, fails: Callable[[Candidate], bool | None], deadline: float,
           sizes: Callable[[Candidate], list[int]] = lambda c: list(range(min(LEADING, len(c.choices))))
           ) -> tuple[Candidate, int]:
    """The simplest candidate found before ``deadline`` that still fails, and how many candidates were tried.
    ``fails(c)`` is True when the case of ``c`` still shows the difference *and* is smaller than the best case so
    far (the caller materializes, checks and compares the cases: choices that make the same case are no progress).

    Passes, repeated while one succeeds: the big cuts of :func:`_cut` (features off, the choices cut short), each
    size choice (``sizes(c)``: the positions of the choices that decide sizes; default the leading ones) bisected
    toward 0 -- among edges (even choices) and among values of the range (odd ones), so that
    a horizon drawn on the edge 64 can come down to 40 -- (the smallest horizon, depth or step count that still
    fails: a mistake at depth 6 stays at depth 6), the size level searched down by bisection (a lower level maps the
    same choices to smaller sizes), then the simplifications of :func:`_cheap` (blocks deleted, single choices
    lowered)."""
    best, tried = candidate, 0

    def counted(c: Candidate) -> bool:
        nonlocal tried
        tried += 1
        return bool(fails(c))

    def varied(index: int, x: float, parity: int) -> Candidate:
        """``best`` with its level (index -1) or choice ``index`` set to ``x`` (an even choice picks an edge, an odd
        one a value of the range: each is monotone within its kind)."""
        if index < 0:
            return replace(best, level=x)
        value = (int(x) // 2) * 2 + parity
        return replace(best, choices=(*best.choices[:index], value, *best.choices[index + 1:]))

    def bisect(index: int, high: float, parity: int = 0) -> bool:
        """Search the smallest value in [0, high) of the level or a choice (of ``parity``) for which the case still
        fails; 12 halvings at most (a size drawn in a range of up to 4096 values is found exactly)."""
        nonlocal best
        low, improved, whole = 0.0, False, index >= 0
        for _ in range(12 if whole else 8):
            if high - low <= (1.0 if whole else 1e-3) or time.monotonic() > deadline:
                break
            mid = float((int(low) + int(high)) // 2) if whole else (low + high) / 2
            if counted(varied(index, mid, parity)):
                best, high, improved = varied(index, mid, parity), mid, True
            else:
                low = mid + (1.0 if whole else 0.0)
        return improved

    def size_positions() -> Iterator[int]:
        """The k-th size choice of the current best, k = 0, 1, ... (positions move as the case shrinks)."""
        k = 0
        while True:
            positions = sizes(best)
            if k >= len(positions) or positions[k] >= len(best.choices):
                return
            yield positions[k]
            k += 1

    while time.monotonic() < deadline:
        improved = False
        while (cut := _first_failing(_cut(best), counted, deadline)):
            best, improved = cut, True
        for i in size_positions():  # each size at its simplest values first (an empty list, one item: cheap runs)
            if best.choices[i] > 3:
                small = _first_failing((replace(best, choices=(*best.choices[:i], v, *best.choices[i + 1:]))
                                        for v in range(4)), counted, deadline)
                if small is not None:
                    best, improved = small, True
        halved = True
        while halved and time.monotonic() < deadline:  # every size halved in turn: the case gets cheap fast
            halved = False
            for i in size_positions():
                c = best.choices[i]
                if c > 3 and counted(trial := varied(i, float(c // 2), c % 2)):
                    best, halved, improved = trial, True, True
        for i in size_positions():
            c = best.choices[i]
            if c > 1:
                improved |= bisect(i, float(c), c % 2)
            if best.choices[i] % 2 == 0:  # an edge: a value of the range may be smaller still
                improved |= bisect(i, float(WORD - 1), 1)
        improved |= bisect(-1, best.level) if best.level > 0 else False
        better = _first_failing(_cheap(best), counted, deadline)
        if better is not None:
            best, improved = better, True
        if not improved:
            break
    return best, tried


# -- coverage ---------------------------------------------------------------------------------------------------
ALGORITHM_PACKAGES = ("counters", "phdstream", "longitudinal", "hypercube", "tabular", "selective_counting.py",
                      "mechanisms.py", "staged.py")


@dataclass
class Tracer:
    """Line and branch coverage of the reference's algorithm modules while a function runs (module docstring)."""

    roots: tuple[str, ...] = field(default_factory=lambda: tuple(
        str(Path(__file__).resolve().parents[1] / p) for p in ALGORITHM_PACKAGES))
    tags: Mapping[tuple[str, int], tuple[str, ...]] = field(default_factory=dict)
    """(file, line) -> the printed lines its tag cites (``"001-alg5 L9"``)."""

    def run(self, fn: Callable[[], Any]) -> tuple[Any, set[tuple[Any, ...]]]:
        """``fn()`` and what it exercised: ``("line", file, n)``, ``("arc", file, a, b)``, ``("tag", label)``."""
        keys: set[tuple[Any, ...]] = set()
        last: dict[int, int] = {}
        roots = self.roots

        def local(frame: FrameType, event: str, arg: Any) -> Any:
            if event == "line":
                code = frame.f_code.co_filename
                line = frame.f_lineno
                keys.add(("line", code, line))
                keys.add(("arc", code, last.get(id(frame), -1), line))
                last[id(frame)] = line
            elif event == "return":
                last.pop(id(frame), None)
            return local

        def calls(frame: FrameType, event: str, arg: Any) -> Any:
            if event == "call" and frame.f_code.co_filename.startswith(roots):
                return local
            return None

        previous = sys.gettrace()
        sys.settrace(calls)
        try:
            result = fn()
        finally:
            sys.settrace(previous)
        for key in [k for k in keys if k[0] == "line"]:
            for label in self.tags.get((key[1], key[2]), ()):
                keys.add(("tag", label))
        return result, keys


def tag_map() -> dict[tuple[str, int], tuple[str, ...]]:
    """(file, line) -> the printed lines cited there, over the algorithm modules (``dpstream.papers.tags``)."""
    from dpstream.papers.tags import cited_lines

    out: dict[tuple[str, int], tuple[str, ...]] = {}
    base = Path(__file__).resolve().parents[1]
    for name in ALGORITHM_PACKAGES:
        path = base / name
        for file in ([path] if path.suffix == ".py" else sorted(path.rglob("*.py"))):
            for line, labels in cited_lines(file).items():
                out[(str(file), line)] = labels
    return out


def _bucket(value: float) -> int:
    return math.floor(math.log2(value)) + 1 if value >= 1 else 0


def size_buckets(params: Mapping[str, Any], inputs: Sequence[Any]) -> dict[str, float]:
    """The sizes of a case the coverage table reports (the largest reached) and buckets (log2)."""
    sizes: dict[str, float] = {"T": float(len(inputs))}
    for name in ("D", "fanout", "k", "d", "B", "r0"):
        value = params.get(name)
        if isinstance(value, int | float) and not isinstance(value, bool):
            sizes[name] = float(value)
    if isinstance(params.get("T"), int | float):
        sizes["T"] = max(sizes["T"], float(params["T"]))
    domain = params.get("domain")
    if isinstance(domain, Mapping) and isinstance(domain.get("sizes"), list):
        sizes["|X|"] = float(math.prod(int(s) for s in domain["sizes"]))
    n = 0
    for x in inputs:
        if isinstance(x, Mapping):
            n = max(n, len(x.get("added", ())) + len(x.get("removed", ())), len(x.get("moves", ())), len(x))
        elif isinstance(x, list):
            n = max(n, len(x))
    sizes["n"] = float(n)
    return sizes


def coverage_keys(sizes: Mapping[str, float]) -> set[tuple[Any, ...]]:
    return {("size", name, _bucket(v)) for name, v in sizes.items()}
