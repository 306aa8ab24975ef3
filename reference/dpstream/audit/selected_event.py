"""A pure-DP event chosen on selection runs and certified on held-out runs: a conjunction of thresholds on a few
fixed statistics of the releases.

Where the exact law says in which few statistics of one neighbouring pair a leak shows (004-alg3: a segment end in
the changed entry's level and the noisy update of S~ with that level's sum, :mod:`dpstream.audit.hypercube.reach`),
the event the witness search would need is a conjunction of tail thresholds on them, deeper in the tails than its
quantile grid reaches. This test looks for it directly:

* **Events.** For each statistic X_j, the condition "none", X_j >= v or X_j <= v for v among its values on the
  pooled selection runs (every distinct value where there are at most :data:`MAX_VALUES`, else the quantiles
  :data:`QUANTILES`); the event is the conjunction over the statistics, favouring the first input or the second.
* **Choosing.** On the *selection* runs (the first ``selection`` of each input): the event whose bound would be
  largest were its held-out counts the selection's frequencies, the favoured side's at its one-sided
  Clopper-Pearson lower bound at :data:`SELECTION_DOUBT` and the other's at its upper bound (as
  :func:`dpstream.audit.renyi.choose_partition` does), on as many runs as are held out.
* **Certifying.** Only the chosen event is counted on the held-out runs: eps >= log(P^lo / Q^hi) at ``level``
  (:func:`dpstream.audit.stats.eps_lower_bound`). The event is fixed before the held-out runs are read, so a
  program that meets the claim (however it rounds, clamps or draws) is certified with probability at most
  ``level``; the bound never uses the program's law.

docs/audits.md, "Selected event test", gives its power and false alarms.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from dpstream.audit.renyi import clopper_pearson_cells
from dpstream.audit.search import detectable_excess
from dpstream.audit.stats import eps_lower_bound, eps_lower_bounds

__all__ = ["SELECTION", "SelectedEvent", "SelectedEventTest", "choose_event", "selected_event_test",
           "witness_histogram"]

FloatArray = npt.NDArray[np.float64]

SELECTION = 0.2
"""The share of a pair's runs per input that choose the event (the rest are held out), as the Renyi test's."""
SELECTION_DOUBT = 0.01
"""The selection runs predict an event's held-out counts pessimistically, at one-sided Clopper-Pearson bounds at this
level (about 2.3 standard errors: the candidates are thousands, against the Renyi test's hundreds), so that a far-tail
event that a few selection runs happen to favour is not preferred. On 004-alg3 under ``serve --plant scale/1.5``
(its law pair, 33000 selection and 132000 held-out runs per input, level 0.0005, six splits of 200000 runs per
input): 0.16 chose a far-tail event once (1.83 against 2), 0.05 and 0.01 certified all six (2.05-2.26), 0.001 chose
a wrong-side event once (1.48)."""
MAX_VALUES = 64
"""A statistic with at most this many distinct values on the selection runs is thresholded at each of them."""
QUANTILES: tuple[float, ...] = (0.001, 0.003, 0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 0.8, 0.9, 0.95, 0.98, 0.99,
                                0.997, 0.999)
"""Where a statistic with more distinct values is thresholded (quantiles of the pooled selection runs)."""


@dataclass(frozen=True)
class SelectedEvent:
    """{X_j >= v_j or X_j <= v_j for each conditioned j}, favouring the first input or the second."""

    conditions: tuple[tuple[int, bool, float], ...]
    """(statistic, upper (>=) or not (<=), threshold) of each conditioned statistic."""
    favours_first: bool

    def holds(self, X: FloatArray) -> npt.NDArray[np.bool_]:
        out = np.ones(X.shape[0], dtype=bool)
        for j, upper, v in self.conditions:
            out &= X[:, j] >= v if upper else X[:, j] <= v
        return out

    def describe(self, names: tuple[str, ...]) -> str:
        parts = [f"{names[j]} {'>=' if upper else '<='} {v:.6g}" for j, upper, v in self.conditions]
        return "{" + (" and ".join(parts) or "always") + "}"


def _thresholds(pooled: FloatArray) -> FloatArray:
    values = np.unique(pooled[np.isfinite(pooled)])
    if values.size <= MAX_VALUES:
        return values
    return np.unique(np.quantile(values if values.size == pooled.size else pooled[np.isfinite(pooled)], QUANTILES))


def _conditions(X: FloatArray, pooled: FloatArray) -> list[tuple[tuple[bool, float] | None, npt.NDArray[np.bool_]]]:
    """Each statistic's conditions (None: none) with their indicator on the runs X (runs x 1 column)."""
    out: list[tuple[tuple[bool, float] | None, npt.NDArray[np.bool_]]] = [(None, np.ones(X.shape[0], dtype=bool))]
    for v in _thresholds(pooled):
        out.append(((True, float(v)), np.greater_equal(X, v)))
        out.append(((False, float(v)), np.less_equal(X, v)))
    return out


def _columns(X: FloatArray) -> FloatArray:
    X = np.asarray(X, dtype=np.float64)
    return X.reshape(-1, 1) if X.ndim == 1 else X


def choose_event(first: FloatArray, second: FloatArray, level: float, held_out: int
                 ) -> tuple[SelectedEvent, float] | None:
    """The event whose bound would be largest on ``held_out`` runs per input with the selection runs' frequencies
    (``first`` and ``second``: the statistics on runs of the two inputs, runs x q, q <= 2), and that predicted
    bound; None without a finite statistic."""
    first, second = _columns(first), _columns(second)
    n1, n2, q = first.shape[0], second.shape[0], first.shape[1]
    if n1 == 0 or n2 == 0 or q == 0 or q > 2 or max(n1, n2) >= 1 << 24:
        return None
    conds: list[list[tuple[bool, float] | None]] = []
    # per statistic: indicators (runs x conditions) on each input
    on: list[tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]] = []
    for j in range(q):
        pooled = np.concatenate([first[:, j], second[:, j]])
        a, b = _conditions(first[:, j], pooled), _conditions(second[:, j], pooled)
        conds.append([c for c, _ in a])
        # float32 indicators: exact counts up to 2^24 runs, a quarter of float64's memory (80000 selection runs x
        # 129 conditions at thorough: 41 MB per input and statistic)
        on.append((np.stack([i for _, i in a], axis=1).astype(np.float32),
                   np.stack([i for _, i in b], axis=1).astype(np.float32)))
    keys: list[tuple[tuple[int, bool, float], ...]]
    if q == 1:
        keys = [((0, *c),) if c is not None else () for c in conds[0]]
        ka, kb = on[0][0].sum(axis=0), on[0][1].sum(axis=0)
    else:  # the conjunctions' counts, conditions of X_0 x conditions of X_1
        keys = [tuple((j, *c) for j, c in ((0, c0), (1, c1)) if c is not None) for c0 in conds[0] for c1 in conds[1]]
        ka, kb = (on[0][0].T @ on[1][0]).ravel(), (on[0][1].T @ on[1][1]).ravel()
    ka, kb = np.rint(ka).astype(np.int64), np.rint(kb).astype(np.int64)
    best: tuple[SelectedEvent, float] | None = None
    for favours_first, (kp, np_, kq, nq) in ((True, (ka, n1, kb, n2)), (False, (kb, n2, ka, n1))):
        e_p = np.round(clopper_pearson_cells(kp, np_, SELECTION_DOUBT, lower=True) * held_out).astype(np.int64)
        e_q = np.round(clopper_pearson_cells(kq, nq, SELECTION_DOUBT, lower=False) * held_out).astype(np.int64)
        bounds = eps_lower_bounds(e_p, held_out, e_q, held_out, level)
        i = int(np.argmax(bounds))
        if np.isfinite(bounds[i]) and (best is None or float(bounds[i]) > best[1]):
            best = (SelectedEvent(keys[i], favours_first), float(bounds[i]))
    return best


@dataclass(frozen=True)
class HeldOutEvent:
    """An event fixed before its held-out runs, counted on them (pure DP): what the selected event test and the
    composed event test (``conformance.composed_tests.EventTest``) share."""

    TEST: ClassVar[str] = "composed event"
    """The test's name in messages (``conformance.statistical._pair_note``)."""

    pair: str
    event: str
    favours_f: bool
    favoured: int
    other: int
    runs: int
    """Held-out runs per input."""
    eps_lower_bound: float
    claimed: float
    level: float
    detectable_excess: float

    @property
    def verdict(self) -> str:
        return "violation" if self.eps_lower_bound > self.claimed else "inconclusive"

    def bound(self) -> dict[str, float]:
        """The certified lower bound and the claim."""
        return {"eps_lower_bound": self.eps_lower_bound, "claimed_eps": self.claimed}


@dataclass(frozen=True)
class SelectedEventTest(HeldOutEvent):
    """The test of the module docstring on one pair: the event chosen on the selection runs, counted on the rest."""

    TEST: ClassVar[str] = "selected event"

    selection_runs: int
    why: str
    """Why this pair and these statistics (the exact law's account)."""
    histogram: Mapping[str, Any] | None = None
    """The held-out runs on f and on f' over the event's first statistic, among those meeting its other condition
    (:func:`witness_histogram`), for the report's picture; None for an event without a condition."""

    def detail(self) -> str:
        side = "f" if self.favours_f else "f'"
        return (f"the event {self.event} of the pair {self.pair!r} ({side} favoured), chosen on "
                f"{self.selection_runs} selection runs per input ({self.why}): {self.favoured}/{self.runs} vs "
                f"{self.other}/{self.runs} held-out runs, eps lower bound {self.eps_lower_bound:.4g} vs claimed "
                f"{self.claimed:.4g} (level {self.level:.2g})")

    def to_data(self) -> dict[str, Any]:
        return {"verdict": self.verdict, "test": self.TEST, "pair": self.pair, "event": self.event,
                "favours_f": self.favours_f, "why": self.why,
                "counts": {"favoured": self.favoured, "other": self.other, "runs": self.runs},
                "selection_runs": self.selection_runs, "eps_lower_bound": self.eps_lower_bound,
                "claimed_eps": self.claimed, "level": self.level, "detectable_excess": self.detectable_excess,
                "trials": 2 * (self.runs + self.selection_runs),
                **({"witness": {"event": self.event, "counts": {"runs": self.runs},
                                "eps_lower_bound": self.eps_lower_bound, "claimed_eps": self.claimed,
                                "histogram": dict(self.histogram)}} if self.histogram is not None else {})}


WITNESS_BINS = 40
"""A witness histogram's bins at most (a statistic with more distinct values is binned at its quantiles)."""


def witness_histogram(event: SelectedEvent, on_first: FloatArray, on_second: FloatArray, names: tuple[str, ...]
                      ) -> dict[str, Any] | None:
    """The runs on f (``on_first``) and on f' over the event's first conditioned statistic, among the runs meeting
    its other condition, in the shape of a search witness's histogram (:mod:`dpstream.conformance.pictures`: interior
    edges, counts per bin, the threshold an edge, ``upper`` its side); None without a condition."""
    if not event.conditions:
        return None
    (j, upper, v), rest = event.conditions[0], SelectedEvent(event.conditions[1:], event.favours_first)
    a, b = on_first[rest.holds(on_first), j], on_second[rest.holds(on_second), j]
    pooled = np.concatenate([a, b])
    values = np.unique(pooled[np.isfinite(pooled)])
    if values.size > WITNESS_BINS:
        values = np.unique(np.quantile(values, np.linspace(0.0, 1.0, WITNESS_BINS + 1)))
    threshold = v if upper else float(np.nextafter(v, np.inf))  # X <= v: the bins below the edge just above v
    edges = np.unique(np.append(values[1:], threshold))
    count = [np.bincount(np.searchsorted(edges, x, side="right"), minlength=edges.size + 1).tolist() for x in (a, b)]
    return {"edges": edges.tolist(), "f": count[0], "f_prime": count[1], "threshold": float(threshold),
            "kind": "threshold", "upper": upper,
            "statistic": names[j], "among": rest.describe(names) if rest.conditions else "every run"}


def selected_event_test(pair: str, names: tuple[str, ...], on_first: FloatArray, on_second: FloatArray,
                        selection: int, claim: float, level: float, why: str = "") -> SelectedEventTest | None:
    """The test of the module docstring on the statistics (runs x q, named ``names``) of runs of the first input (f)
    and the second (f'): the first ``selection`` runs of each choose the event, the rest are held out. None where
    nothing is held out or no event can be chosen."""
    first, second = _columns(on_first), _columns(on_second)
    n = min(first.shape[0], second.shape[0]) - selection
    if n <= 0 or selection <= 0:
        return None
    chosen = choose_event(first[:selection], second[:selection], level, n)
    if chosen is None:
        return None
    event = chosen[0]
    on_f = int(event.holds(first[selection:selection + n]).sum())
    on_g = int(event.holds(second[selection:selection + n]).sum())
    k1, k0 = (on_f, on_g) if event.favours_first else (on_g, on_f)
    histogram = witness_histogram(event, first[selection:selection + n], second[selection:selection + n], names)
    return SelectedEventTest(pair, event.describe(names), event.favours_first, k1, k0, n,
                             eps_lower_bound(k1, n, k0, n, level), claim, level,
                             detectable_excess(n, k0 / n, level, claim), selection_runs=selection, why=why,
                             histogram=histogram)
