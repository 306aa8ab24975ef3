"""Which leaks of the sparse counters (004-alg2, 004-alg3) a check could certify on given inputs, from the papers'
exact laws, and the neighbouring pair and statistics of 004-alg3 where a budget-level leak shows.

For a variant whose every noise scale is divided by c (a planted ``scale/<c>``: :meth:`SparseLaw.divided`), a
neighbouring pair (one entry flipped) and every view with at most ``ends`` segment ends in the pair's level (the
segment ends, A_sub's nodes and, in 004-alg3, the sign of S~'s log-ratio; the releases are a function of the view),
the loss of a view is the log-ratio of its segment ends plus the largest log-ratio of A_sub's noisy nodes given them
(reached in the nodes' tails, so an upper bound) plus S~'s (:func:`sparse_views`, :func:`inhomogeneous_views`).
:func:`reach` gives the probability of the views whose loss exceeds the claim and the *oracle's bound*: the largest
lower bound a check of ``runs`` runs per input at ``level`` would reach if it knew the law, took the best event "the
view's loss is at least l" (Neyman-Pearson) and saw exactly the expected counts (A_sub at its largest ratio on every
view: an overstatement). Below the claim, the leak cannot be certified on those inputs by any test of that size
(``tools/sparse_reach.py`` tabulates it over the statistical designs; docs/conformance.md, "Where scale/1.5 does
not show yet").

:func:`inhomogeneous_law_pair` picks, on a setting's inputs, the pair whose oracle's bound is largest under
``scale/1.5`` (the smallest leak class the checks must certify) and the two statistics of the releases its views
show in: the noisy update of S~ with the changed level's sum (r at the next level's first step less r at the
level's first step) and the level counter's largest release (0 until one of its segments ends). The statistical
check tests them with :mod:`dpstream.audit.selected_event` (004-alg3 `scale/1.5`: 1.9 % of the runs end a segment
where the pair's loss exceeds the claim, far from the search's quantile grid).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from dpstream.audit.hypercube.loss import SparseLaw, segment_end_patterns, segments_of
from dpstream.audit.stats import eps_lower_bound
from dpstream.counters.sparse import level_start

__all__ = ["LAW_FACTOR", "LawPair", "LevelStatistics", "View", "flips", "inhomogeneous_law_pair", "inhomogeneous_views",
           "reach", "scaled", "sparse_views"]

FloatArray = npt.NDArray[np.float64]

View = tuple[float, float]
"""(P_a, P_b) of one view, P_b lowered by the largest ratio of A_sub's nodes on it."""


def scaled(eps: float, T: int, c: float) -> SparseLaw:
    """004-alg2's law with every noise scale divided by c (A_sub's node losses multiplied by c)."""
    return SparseLaw.printed(eps, T).divided(c)


def sparse_views(law: SparseLaw, a: Sequence[int], b: Sequence[int], tau: int, ends_at_most: int) -> list[View]:
    """The views of 004-alg2 on a and on b (differing at 1-based ``tau``) with at most ``ends_at_most`` ends."""
    n, out = len(a), []
    for ends in segment_end_patterns(n, False, ends_at_most):
        segs = segments_of(ends, n)
        pa = pb = 1.0
        for s, u in segs:
            last = n - 1 if u is None else u
            ca = tuple(sum(a[s:v]) for v in range(s + 1, last + 1))
            cb = tuple(sum(b[s:v]) for v in range(s + 1, last + 1))
            if ca:
                pa *= law.segment_probability(ca, u is not None)
                pb *= law.segment_probability(cb, u is not None)
        k = next(i for i, (s, u) in enumerate(segs) if s < tau and (u is None or u >= tau))
        sub = law.sub_loss[len(ends)][k] if segs[k][1] is not None else 0.0
        if pa > 0 and pb > 0:
            out.append((pa, pb * math.exp(-sub)))
    return out


def inhomogeneous_views(params: dict[str, float], a: Sequence[int], b: Sequence[int], tau: int, c: float,
                        ends_at_most: int) -> list[View]:
    """The views of 004-alg3 on a and b (differing at global step ``tau``): the 004-alg2 run of tau's level
    (eps_r / 2, horizon its length) and, if the level ends within the stream, the noisy update of S~ with its sum
    (Lap_Z(2 / eps_r) / c: log-ratio +-c eps_r / 2, two atoms). Other levels see the same inputs."""
    eps, r0, eps_r, T = params["epsilon"], int(params["r0"]), params["eps_r"], len(a)
    if tau < level_start(r0, eps):
        return [(1.0, 1.0)]
    r = r0
    while level_start(r + 1, eps) <= tau:
        r += 1
    start, end = level_start(r, eps), level_start(r + 1, eps)
    lo, hi = start - 1, min(end, T + 1) - 1
    level = sparse_views(scaled(eps_r / 2.0, end - start, c), a[lo:hi], b[lo:hi], tau - start + 1, ends_at_most)
    if end > T:
        return level
    p = math.exp(-c * eps_r / 2.0)  # Lap_Z(b): P(Z >= 0) = 1 / (1 + p), P(Z >= 1) = p / (1 + p)
    more = sum(a[lo:hi]) > sum(b[lo:hi])
    atoms = [(1 / (1 + p), p / (1 + p)), (p / (1 + p), 1 / (1 + p))] if more else \
        [(p / (1 + p), 1 / (1 + p)), (1 / (1 + p), p / (1 + p))]
    return [(va * sa, vb * sb) for va, vb in level for sa, sb in atoms]


def reach(views: Sequence[View], eps: float, runs: int, level: float) -> tuple[float, float]:
    """(mass of the views whose loss exceeds ``eps`` on the favoured input, the oracle's bound)."""
    mass = sum(pa for pa, pb in views if math.log(pa / pb) > eps * (1 + 1e-9))
    best, pa_sum, pb_sum = -math.inf, 0.0, 0.0
    for pa, pb in sorted(views, key=lambda v: -math.log(v[0] / v[1])):
        pa_sum, pb_sum = pa_sum + pa, pb_sum + pb
        k1, k0 = round(runs * pa_sum), round(runs * pb_sum)
        if k1 > k0:
            best = max(best, eps_lower_bound(k1, runs, k0, runs, level))
    return mass, best


LAW_FACTOR = 1.5
"""The planted factor a law pair is chosen against: every noise scale divided by it (the issue's smallest leak)."""
LAW_RUNS = 400_000
"""Runs per input of the oracle that ranks the pairs (the ranking, not a promise: the check's runs are its time's)."""
LAW_LEVEL = 0.001
"""The oracle's false-alarm level (the ranking's)."""
LAW_ENDS = 3
"""Views with at most this many segment ends in the pair's level."""


@dataclass(frozen=True)
class LevelStatistics:
    """The two statistics of a 004-alg3 run (its releases r_1..r_T as columns) in which a pair changing an entry of
    the level [start, end) shows: r_end - r_start (S~'s noisy update with the level's sum; the level counter
    releases 0 at both steps), if the level ends within the stream, and max over the level's steps of r_t - r_start
    (the level counter's largest release: 0 until one of its segments ends). Picklable."""

    start: int
    end: int
    T: int

    @property
    def names(self) -> tuple[str, ...]:
        steps = range(self.start + 1, min(self.end, self.T + 1))
        own = (f"largest level release max(r_t - r_{self.start}, t = {self.start + 1}..{min(self.end, self.T + 1) - 1})"
               ,) if len(steps) else ()
        update = (f"level sum r_{self.end} - r_{self.start}",) if self.end <= self.T else ()
        return update + own

    def __call__(self, R: FloatArray) -> FloatArray:
        R = np.asarray(R, dtype=np.float64)
        base = R[:, self.start - 1]
        cols = []
        if self.end <= self.T:
            cols.append(R[:, self.end - 1] - base)
        last = min(self.end, self.T + 1) - 1
        if last > self.start:
            cols.append(np.max(R[:, self.start:last] - base[:, None], axis=1))
        return np.stack(cols, axis=1) if cols else np.zeros((R.shape[0], 0))


@dataclass(frozen=True)
class LawPair:
    """A neighbouring pair of a setting's inputs, the statistics of the runs in which its exact law says a leak of
    :data:`LAW_FACTOR` shows, and the oracle's bound there (the reason it was chosen)."""

    label: str
    f: tuple[int, ...]
    g: tuple[int, ...]
    statistics: LevelStatistics
    oracle: float
    claim: float

    @property
    def why(self) -> str:
        return (f"the exact law's pair for scale/{LAW_FACTOR:g}: an oracle's bound {self.oracle:.3f} vs "
                f"{self.claim:g} on {LAW_RUNS} runs per input")


def inhomogeneous_law_pair(params: Mapping[str, Any], T: int, families: Mapping[str, Callable[[int], Any]]
                           ) -> LawPair | None:
    """004-alg3: over the families' streams of length T and every entry flipped (both ways), the pair whose
    oracle's bound (:func:`reach`) under :data:`LAW_FACTOR` is the largest, if it exceeds the claim eps_r (else
    None: no pair of these inputs can show that leak)."""
    values = {k: float(v) for k, v in params.items()}
    claim = values["eps_r"]
    best: LawPair | None = None
    for family, tau, x, y in flips(families, T):
        for a, b in ((x, y), (y, x)):
            oracle = reach(inhomogeneous_views(values, a, b, tau, LAW_FACTOR, LAW_ENDS), claim, LAW_RUNS,
                           LAW_LEVEL)[1]
            if oracle > claim and (best is None or oracle > best.oracle):
                start, end = _level(values, tau)
                label = f"{family} stream, t={tau} {'+1' if y[tau - 1] > x[tau - 1] else '-1'}"
                best = LawPair(label, tuple(x), tuple(y), LevelStatistics(start, end, T), oracle, claim)
    return best


def flips(families: Mapping[str, Callable[[int], Any]], T: int) -> Iterator[tuple[str, int, list[int], list[int]]]:
    """(family, tau, x, y) for every family's Boolean stream x of length T and every entry tau (1-based) flipped in
    y: the neighbouring pairs of the sparse counters' designs (one entry moved by one)."""
    for family, make in families.items():
        x = [int(v) for v in make(T)]
        for tau in range(1, T + 1):
            y = list(x)
            y[tau - 1] = 1 - y[tau - 1]
            yield family, tau, x, y


def _level(values: Mapping[str, float], tau: int) -> tuple[int, int]:
    """The level [start, end) of 004-alg3 that step tau belongs to (tau >= t_r0)."""
    eps, r = values["epsilon"], int(values["r0"])
    while level_start(r + 1, eps) <= tau:
        r += 1
    return level_start(r, eps), level_start(r + 1, eps)
