"""A certified lower bound on a Renyi divergence from runs: a zCDP claim refuted directly, not through (eps, delta).

rho-zCDP bounds the Renyi divergence of every order: D_a(P || Q) <= a rho for all a > 1, P and Q the laws of the
releases on two neighbouring inputs (either way round). An (eps, delta) event refutes it only through the
conversion eps(delta) of :func:`dpstream.claims.zcdp_to_approx_dp`, which a Gaussian of 1.375 times the claimed rho
still meets at every delta down to about 0.02 (002-alg2's best pair under a variance divided by 2.25: 2.53 against
2.47 at delta = 0.02, below the claim at delta = 0.05 and above), so no event a few hundred thousand runs afford
certifies it. The divergence itself shows the excess at every order:

* **Data processing.** For any fixed partition B_1..B_k of the outcomes (bins of a fixed statistic of the
  releases), D_a(P || Q) >= D_a(P_B || Q_B) = log(sum_i p_i^a q_i^(1 - a)) / (a - 1), p_i = P(B_i), q_i = Q(B_i).
* **Monotone in each cell.** For a > 1, p^a q^(1 - a) increases in p and decreases in q. With probability at least
  1 - level every p_i >= p_i^lo and q_i <= q_i^hi (one-sided Clopper-Pearson bounds at level / (2k) each, on runs
  independent of how the partition and a were chosen), so

      D_a(P || Q) >= log(sum_i (p_i^lo)^a (q_i^hi)^(1 - a)) / (a - 1) =: D^lo,

  and D^lo / a > rho certifies that the releases are not rho-zCDP, with false-alarm probability at most ``level``.
  A correct program (truly rho-zCDP, however it rounds, clamps or draws) is certified with probability at most
  ``level``: the bound never uses the program's law.
* **Choosing.** The order a, the bins (evenly spaced over the region where P's runs outnumber Q's, or quantiles of
  the pooled statistic from a tail start on, in its upper or its lower tail) and the direction (P the runs on f' or
  on f) are chosen on the *selection* runs: the one whose bound would be largest with the selection's bin
  frequencies on as many runs as are held out. Only the chosen partition is counted on the held-out runs.

docs/audits.md, "Renyi divergence test", gives the measured power and false alarms.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt
from scipy import optimize as _opt
from scipy import stats as _st

__all__ = [
    "BIN_COUNTS",
    "RENYI_ORDERS",
    "SELECTION_DOUBT",
    "SPAN_ENDS",
    "SPAN_STARTS",
    "TAIL_STARTS",
    "RenyiPartition",
    "RenyiTest",
    "choose_partition",
    "clopper_pearson_cells",
    "gaussian_eps",
    "renyi_lower_bound",
    "renyi_point",
    "renyi_test",
]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

RENYI_ORDERS: tuple[float, ...] = (1.5, 2.0, 2.5, 3.0, 4.0, 6.0, 8.0)
"""The orders a the selection runs choose among (zCDP bounds every order a > 1)."""
BIN_COUNTS: tuple[int, ...] = (2, 3, 4, 6, 8, 10, 12)
"""The numbers of bins the selection runs choose among."""
SELECTION_DOUBT = 0.16
"""The selection runs predict a partition's held-out counts pessimistically: P's cells at their one-sided
Clopper-Pearson lower bound at this level, Q's at their upper bound (about one standard error), so that a far-tail
partition whose few selection runs happen to favour it is not preferred to a sturdier one."""
SPAN_STARTS: tuple[float, ...] = (-1.0, 0.0, 0.5, 1.0)
"""Where evenly spaced edges begin: Q's mean plus this many of its standard deviations."""
SPAN_ENDS: tuple[float, ...] = (1.5, 2.0, 2.5, 3.0, 3.5)
"""Where evenly spaced edges end: P's mean plus this many of its standard deviations."""
TAIL_STARTS: tuple[float, ...] = (0.5, 0.8, 0.95)
"""Quantiles of the pooled selection statistic where the bins above the first begin (the divergence lies in the
tail where the favoured side's runs outnumber the other's)."""


@dataclass(frozen=True)
class RenyiPartition:
    """The order, the bins and the direction chosen on the selection runs (fixed before the held-out runs)."""

    order: float
    edges: tuple[float, ...]
    """Increasing inner edges: bin i holds the values v with edges[i-1] <= v < edges[i] (searchsorted, right)."""
    favours_first: bool
    """D(P || Q) with P the law of the first sample's runs (True) or of the second's (False)."""
    upper: bool = True
    """The bins refine the statistic's upper tail (True) or its lower tail (False: the statistic negated)."""

    def counts(self, first: FloatArray, second: FloatArray) -> tuple[IntArray, IntArray]:
        """The bin counts (P's, Q's) of two samples of the statistic, in this partition's direction."""
        p, q = (first, second) if self.favours_first else (second, first)
        sign = 1.0 if self.upper else -1.0
        k = len(self.edges) + 1
        edges = np.asarray(self.edges, dtype=np.float64)
        return (np.bincount(np.searchsorted(edges, sign * np.asarray(p), side="right"), minlength=k).astype(np.int64),
                np.bincount(np.searchsorted(edges, sign * np.asarray(q), side="right"), minlength=k).astype(np.int64))


def renyi_lower_bound(k_p: IntArray, n_p: int, k_q: IntArray, n_q: int, order: float, level: float) -> float:
    """D^lo of the module docstring: a lower bound on D_order(P || Q) holding with probability at least 1 - level,
    from the bin counts k_p of n_p runs from P and k_q of n_q runs from Q (-inf where every lower bound is 0)."""
    if not order > 1.0:
        raise ValueError(f"the order must exceed 1, got {order}")
    k_p, k_q = np.asarray(k_p, dtype=np.int64), np.asarray(k_q, dtype=np.int64)
    a = level / (2 * k_p.size)
    p_lo, q_hi = clopper_pearson_cells(k_p, n_p, a, lower=True), clopper_pearson_cells(k_q, n_q, a, lower=False)
    keep = p_lo > 0
    if not np.any(keep):
        return -math.inf
    logs = order * np.log(p_lo[keep]) + (1.0 - order) * np.log(q_hi[keep])
    top = float(np.max(logs))
    return (top + math.log(float(np.sum(np.exp(logs - top))))) / (order - 1.0)


def clopper_pearson_cells(k: IntArray, n: int, a: float, lower: bool) -> FloatArray:
    """One-sided Clopper-Pearson bounds of each cell's probability at level ``a`` (k: counts of n runs)."""
    if lower:
        return np.asarray(np.where(k > 0, _st.beta.ppf(a, np.maximum(k, 1), n - k + 1), 0.0), dtype=np.float64)
    return np.asarray(np.where(k < n, _st.beta.ppf(1.0 - a, k + 1, np.maximum(n - k, 1)), 1.0), dtype=np.float64)


def renyi_point(k_p: IntArray, n_p: int, k_q: IntArray, n_q: int, order: float) -> float:
    """The plug-in estimate of D_order(P_B || Q_B) (an empty Q bin counted as half a run): what the bound would
    approach with many runs."""
    p = np.asarray(k_p, dtype=np.float64) / n_p
    q = np.maximum(np.asarray(k_q, dtype=np.float64), 0.5) / n_q
    keep = p > 0
    return math.log(float(np.sum(p[keep] ** order * q[keep] ** (1.0 - order)))) / (order - 1.0)


def gaussian_eps(mu: float, delta: float) -> float:
    """The least eps with (eps, delta)-DP for a Gaussian pair of shift mu (mu^2 = 2 rho): its exact privacy profile,
    delta(eps) = Phi(mu/2 - eps/mu) - e^eps Phi(-mu/2 - eps/mu) (0 where delta(0) <= delta). It shows what an (eps,
    delta) event can certify of a zCDP leak (the module docstring; tools/renyi_power.py)."""
    def excess(e: float) -> float:
        return float(_st.norm.cdf(mu / 2 - e / mu) - math.exp(e) * _st.norm.cdf(-mu / 2 - e / mu)) - delta
    return 0.0 if excess(0.0) <= 0 else float(_opt.brentq(excess, 0.0, 60.0))


def _spans(p: FloatArray, q: FloatArray) -> list[tuple[float, ...]]:
    """Evenly spaced edges from where Q's runs lie (its mean plus :data:`SPAN_STARTS` standard deviations) to P's far
    tail (its mean plus :data:`SPAN_ENDS` standard deviations): the region where P's runs outnumber Q's."""
    p, q = p[np.isfinite(p)], q[np.isfinite(q)]
    if p.size < 2 or q.size < 2:
        return []
    out = []
    for lo in SPAN_STARTS:
        for hi in SPAN_ENDS:
            a, b = float(np.mean(q) + lo * np.std(q)), float(np.mean(p) + hi * np.std(p))
            if b > a:
                out += [tuple(float(x) for x in np.linspace(a, b, k - 1)) for k in BIN_COUNTS]
    return out


def _quantiles(pooled: FloatArray) -> list[tuple[float, ...]]:
    """Edges at quantiles of the pooled runs from each of :data:`TAIL_STARTS` up."""
    finite = pooled[np.isfinite(pooled)]
    if finite.size == 0:
        return []
    return [tuple(float(x) for x in np.unique(np.quantile(finite, np.linspace(start, 1.0, k)[:-1])))
            for start in TAIL_STARTS for k in BIN_COUNTS]


def choose_partition(first: FloatArray, second: FloatArray, rho: float, level: float, held_out: int
                     ) -> tuple[RenyiPartition, float] | None:
    """The partition whose bound D^lo / order - rho would be largest on ``held_out`` runs per input with the bin
    frequencies of the selection runs ``first`` and ``second`` (the statistic on runs of the two inputs), and that
    predicted margin; None without a finite statistic. Candidates: for each direction and tail, edges spanning the
    region where P's runs outnumber Q's (:func:`_spans`) and quantile edges (:func:`_quantiles`), at each of
    :data:`RENYI_ORDERS`."""
    first, second = np.asarray(first, dtype=np.float64), np.asarray(second, dtype=np.float64)
    best: tuple[RenyiPartition, float] | None = None
    for upper in (True, False):
        sign = 1.0 if upper else -1.0
        quantiles = _quantiles(sign * np.concatenate([first, second]))
        for favours_first in (True, False):
            p, q = (first, second) if favours_first else (second, first)
            for edges in dict.fromkeys(_spans(sign * p, sign * q) + quantiles):
                k_p, k_q = RenyiPartition(2.0, edges, favours_first, upper).counts(first, second)
                e_p = np.round(clopper_pearson_cells(k_p, p.size, SELECTION_DOUBT, lower=True)
                               * held_out).astype(np.int64)
                e_q = np.round(clopper_pearson_cells(k_q, q.size, SELECTION_DOUBT, lower=False)
                               * held_out).astype(np.int64)
                for order in RENYI_ORDERS:
                    part = RenyiPartition(order, edges, favours_first, upper)
                    margin = renyi_lower_bound(e_p, held_out, e_q, held_out, order, level) / order - rho
                    if best is None or margin > best[1]:
                        best = (part, margin)
    return best


@dataclass(frozen=True)
class RenyiTest:
    """A Renyi divergence test of one neighbouring pair: the partition chosen on the selection runs, counted on the
    held-out runs."""

    TEST: ClassVar[str] = "renyi divergence"
    """The test's name in messages and data."""

    pair: str
    statistic: str
    partition: RenyiPartition
    counts_p: tuple[int, ...]
    counts_q: tuple[int, ...]
    runs: int
    """Held-out runs per input."""
    selection_runs: int
    divergence_lower_bound: float
    rho_lower_bound: float
    claimed_rho: float
    level: float
    detectable_excess: float
    """About the smallest excess over the claimed rho these runs certify: the held-out estimate of D / order less its
    bound (the bound trails the estimate by this much)."""

    @property
    def verdict(self) -> str:
        return "violation" if self.rho_lower_bound > self.claimed_rho else "inconclusive"

    def detail(self) -> str:
        p = "f" if self.partition.favours_first else "f'"
        q = "f'" if self.partition.favours_first else "f"
        tail = "upper" if self.partition.upper else "lower"
        return (f"the Renyi divergence of order {self.partition.order:g} of the pair {self.pair!r} (runs on {p} "
                f"against runs on {q}) over {len(self.counts_p)} bins of its {self.statistic} ({tail} tail), fixed on "
                f"{self.selection_runs} selection runs per input: D >= {self.divergence_lower_bound:.4g} on "
                f"{self.runs} held-out runs per input, so rho >= {self.rho_lower_bound:.4g} vs claimed "
                f"{self.claimed_rho:.4g} (level {self.level:.2g})")

    def bound(self) -> dict[str, float]:
        """The certified lower bound and the claim (rho), with the order and the divergence bound."""
        return {"rho_lower_bound": self.rho_lower_bound, "claimed_rho": self.claimed_rho,
                "renyi_order": self.partition.order, "divergence_lower_bound": self.divergence_lower_bound}

    def to_data(self) -> dict[str, Any]:
        return {"verdict": self.verdict, "test": self.TEST, "pair": self.pair, "statistic": self.statistic,
                "order": self.partition.order, "edges": list(self.partition.edges),
                "favours_f": self.partition.favours_first,
                "upper_tail": self.partition.upper, "counts": {"favoured": list(self.counts_p),
                                                                       "other": list(self.counts_q),
                                                                       "runs": self.runs},
                "selection_runs": self.selection_runs, "divergence_lower_bound": self.divergence_lower_bound,
                "rho_lower_bound": self.rho_lower_bound, "claimed_rho": self.claimed_rho, "level": self.level,
                "detectable_excess": self.detectable_excess, "trials": 2 * (self.runs + self.selection_runs),
                "witness": self.witness()}

    def witness(self) -> dict[str, Any]:
        """The held-out runs per bin on f and on f', over the statistic as given (a lower-tail partition turned
        back), in the shape of a search witness's histogram (:mod:`dpstream.conformance.pictures`): no bin is an
        event, the bound reads them all."""
        on_f, on_fp = (self.counts_p, self.counts_q) if self.partition.favours_first else (self.counts_q,
                                                                                            self.counts_p)
        edges, f, fp = list(self.partition.edges), list(on_f), list(on_fp)
        if not self.partition.upper:
            edges, f, fp = [-e for e in reversed(edges)], f[::-1], fp[::-1]
        return {"event": f"order {self.partition.order:g} over {len(f)} bins of the {self.statistic} of "
                         f"{self.pair!r}", "counts": {"runs": self.runs},
                "rho_lower_bound": self.rho_lower_bound, "claimed_rho": self.claimed_rho,
                "histogram": {"edges": edges, "f": f, "f_prime": fp, "threshold": "nan", "kind": "atom"}}


def renyi_test(pair: str, statistic: str, on_first: FloatArray, on_second: FloatArray, selection: int,
               rho: float, level: float) -> RenyiTest | None:
    """The test of the module docstring on the statistic's values on runs of the first input (f) and of the second
    (f'): the first ``selection`` of each choose the partition, the rest are held out. None where no partition can
    be chosen (no finite value) or nothing is held out."""
    first, second = np.asarray(on_first, dtype=np.float64), np.asarray(on_second, dtype=np.float64)
    n = min(first.size, second.size) - selection
    if n <= 0 or selection <= 0:
        return None
    chosen = choose_partition(first[:selection], second[:selection], rho, level, n)
    if chosen is None:
        return None
    part = chosen[0]
    k_p, k_q = part.counts(first[selection:selection + n], second[selection:selection + n])
    bound = renyi_lower_bound(k_p, n, k_q, n, part.order, level)
    estimate = renyi_point(k_p, n, k_q, n, part.order)
    return RenyiTest(pair, statistic, part, tuple(int(x) for x in k_p), tuple(int(x) for x in k_q), n, selection,
                     bound, bound / part.order, rho, level, max(0.0, (estimate - bound) / part.order))
