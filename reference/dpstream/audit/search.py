"""Model-free search for a privacy-violation witness, certified on held-out runs.

Nothing here uses a model of the audited mechanism: it only needs a :class:`~dpstream.audit.sampler.Sampler`
per parameter setting, the claim, and a :class:`SearchSpace` (which inputs to try, how to make a
neighbouring input under the claim's relation, which features of a run to look at).

Procedure (docs/audits.md, "The witness search"); every sample below is fresh and seeded from ``seed``:

1. **Candidates.** For every setting (a point of the parameter sweep: epsilon, T, ...), every input
   family (all zeros, all ones, alternating, ...) and every neighbour f' of the family's stream f
   (for counters: one entry moved by 1 at every t, or at the named and random positions for large T),
   sample ``fit + select`` runs on f and on f'.
2. **Fit split.** Turn runs into features (:func:`release_features`: each release, consecutive
   differences, differences of those at every lag) and propose events: per feature the best
   threshold event {x >= c} or {x <= c}; per feature the best atom {x = v} (a value the runs hit
   exactly, e.g. an exact release); the naive-Bayes sum of the histogram log-ratios of the K best
   features, thresholded (K = 2, 4, 8, 16). Each event favours f or f' and, for zCDP, carries a delta.
3. **Select split.** Score every proposed event on fresh runs (approximate lower bound minus claim)
   and carry the ``carried`` best over *everything* (all settings, families, pairs, statistics).
4. **Held-out split.** For each carried event, now fixed, sample ``holdout`` fresh runs on its f and f'
   and compute the exact one-sided Clopper-Pearson bound
   eps_lb = log((CP_lower(k1, n, a/2) - delta) / CP_upper(k0, n, a/2)) with a = level / carried.
   **violation** iff some eps_lb exceeds the claimed eps (eps(delta) for zCDP). By Bonferroni over the
   carried events, a mechanism meeting its claim -- and any post-processing of it -- gets a violation
   with probability at most ``level`` (steps 1-3 only choose which events to test).

Streams may hold any JSON values (the synthesizers' batches are objects): they are frozen deeply to be compared
and grouped, and handed back to samplers (and reported in the witness) as JSON. A :class:`Setting` may carry its
own :class:`SearchSpace` when its inputs or features depend on its parameters.

When nothing is certified the result says how sensitive the run was: the *detectable excess* is the
smallest Delta such that an event with the held-out frequency p0 of a carried event on its unfavoured
side and ratio e^(claim + Delta) would be certified with probability >= 1/2 at these sample sizes (its
expected counts give a bound above the claim); the minimum over the carried events. ``pass`` when it
is at most the profile's target excess (relative to the claim), else ``inconclusive``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt
from scipy import stats as _st

from dpstream.audit.blackbox import ZCDP_DELTAS, claimed_eps
from dpstream.audit.registry import CheckKind, CheckResult
from dpstream.audit.sampler import Sampler, run_reduced, run_trials
from dpstream.audit.stats import eps_lower_bound
from dpstream.claims import Measure, PrivacyClaim
from dpstream.errors import DPStreamInputError, require_int_at_least
from dpstream.noise import data_rng, derived_seed

__all__ = [
    "COUNTER_FAMILIES",
    "Alphabet",
    "SearchBudget",
    "SearchResult",
    "SearchSpace",
    "Setting",
    "Witness",
    "counter_space",
    "detectable_excess",
    "release_features",
    "search",
    "search_check",
    "search_positions",
]

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]
DECIMALS = 9
"""Features are rounded to this many decimals, so an exact release is an atom despite float round-off."""
NAIVE_BAYES_POOL = 12
NAIVE_BAYES_MAX = 8
_TAILS = np.geomspace(1e-4, 0.05, 16)
_LEVELS = np.unique(np.concatenate([np.linspace(0.0, 1.0, 65), _TAILS, 1.0 - _TAILS]))
"""Quantile levels of the pooled fit runs tried as thresholds (dense in the tails, where witnesses live)."""
ATOMS_PER_FEATURE = 3
HOLDOUT_BLOCK = 50_000
"""Held-out runs turned into features at a time (memory stays bounded at 400000 runs)."""


# --------------------------------------------------------------------------------------------- space


@dataclass(frozen=True)
class Setting:
    """One point of the parameter sweep: a sampler of the mechanism built with these parameters.

    ``space``: this setting's own :class:`SearchSpace` when its inputs or features depend on its parameters (a
    synthesizer's dimension, domain, ...); ``None`` uses the space passed to :func:`search`."""

    label: str
    sampler: Sampler
    claim: PrivacyClaim
    horizon: int
    space: SearchSpace | None = None


@dataclass(frozen=True)
class Alphabet:
    """Valid input values of a counter: numbers in [low, high] (integers if ``integer``)."""

    low: float = 0.0
    high: float = 1.0
    integer: bool = True

    def contains(self, x: float) -> bool:
        return self.low <= x <= self.high and (not self.integer or float(x).is_integer())


Stream = list[Any]
Family = Callable[[int], Stream]
NeighbourMaker = Callable[[Stream], list[tuple[str, Stream]]]


@dataclass(frozen=True)
class SearchSpace:
    """What to try: input families (T -> stream), neighbours of a stream, features of the runs.

    ``families[name](T)`` is an input stream of length T; ``neighbours(f)`` lists ``(label, f')`` for
    the claim's neighbour relation (inputs kept valid); ``features(R)`` maps the ``runs x k`` sample to
    a ``runs x q`` feature matrix with ``feature_names(k)`` naming its columns; threshold events are tried
    on the first ``threshold_columns(k)`` columns, atom events on all.
    """

    families: Mapping[str, Family]
    neighbours: NeighbourMaker
    features: Callable[[FloatArray], FloatArray] = field(default=lambda R: release_features(R))
    feature_names: Callable[[int], list[str]] = field(default=lambda k: release_feature_names(k))
    threshold_columns: Callable[[int], int] = field(default=lambda k: 2 * k - 1)
    """How many leading feature columns get threshold events (the rest, e.g. the lagged differences that
    expose reused noise, only atom events); default: the releases and their first differences."""


def search_positions(T: int, seed: int = 0, every_up_to: int = 32, random_count: int = 8) -> list[int]:
    """Times to change: all of 1..T when T <= ``every_up_to``; else 1, 2, T-1, T, every 2^k and 2^k +- 1,
    and ``random_count`` seeded random times."""
    T = require_int_at_least("T", T, 1)
    if every_up_to >= T:
        return list(range(1, T + 1))
    chosen = {1, 2, T - 1, T}
    power = 1
    while power <= T:
        chosen.update({power - 1, power, power + 1})
        power *= 2
    chosen.update(int(t) for t in data_rng(derived_seed(seed, "positions", T)).integers(1, T + 1, random_count))
    return sorted(t for t in chosen if 1 <= t <= T)


def _entry_neighbours(alphabet: Alphabet, seed: int) -> NeighbourMaker:
    def neighbours(f: Stream) -> list[tuple[str, Stream]]:
        T = len(f)
        out: list[tuple[str, Stream]] = []
        for t in search_positions(T, seed):
            row = f[t - 1]
            coords: list[int | None] = list(range(len(row))) if isinstance(row, list | tuple) else [None]
            for i in coords:
                for delta in (1.0, -1.0):
                    g = [list(r) if isinstance(r, list | tuple) else r for r in f]
                    old: Any = g[t - 1][i] if i is not None else g[t - 1]
                    value = float(old) + delta
                    if not alphabet.contains(value):
                        continue
                    value = int(value) if alphabet.integer else value
                    if i is None:
                        g[t - 1] = value
                    else:
                        g[t - 1][i] = value
                    where = f"t={t}" + (f", i={i}" if i is not None else "")
                    out.append((f"{where} {'+' if delta > 0 else '-'}1", g))
        return out

    return neighbours


COUNTER_FAMILIES = ("zeros", "ones", "alternating", "step", "round-10", "random")


def counter_space(alphabet: Alphabet = Alphabet(), *, dimension: int = 1, seed: int = 0,
                  families: Sequence[str] = COUNTER_FAMILIES) -> SearchSpace:
    """The space for counters (STREAM_ENTRY: one entry moved by at most 1, inputs kept in ``alphabet``).

    Families (values clipped into the alphabet): ``zeros``, ``ones`` (every entry at an end of the
    alphabet, so each change has the largest effect the relation allows), ``alternating``, ``step``
    (zeros then ones), ``round-10`` (ones until the prefix sum reaches 10, then zeros: prefix sums that
    sit on a round number), ``random`` (seeded bits). ``dimension > 1``: each entry is a vector, every
    coordinate of the family's value (d-dimensional counters, 001-sec4.3).
    """
    lo, hi = alphabet.low, alphabet.high
    one = hi if hi < 1 else 1
    zero = lo if lo > 0 else 0

    def vec(values: list[float]) -> Stream:
        cast = [int(v) if alphabet.integer else float(v) for v in values]
        return cast if dimension == 1 else [[v] * dimension for v in cast]

    known: dict[str, Family] = {
        "zeros": lambda T: vec([zero] * T),
        "ones": lambda T: vec([one] * T),
        "alternating": lambda T: vec([one if t % 2 == 0 else zero for t in range(T)]),
        "step": lambda T: vec([zero] * (T // 2) + [one] * (T - T // 2)),
        "round-10": lambda T: vec([one if t < 10 else zero for t in range(T)]),
        "random": lambda T: vec([one if b else zero for b in data_rng(derived_seed(seed, "bits", T))
                                 .integers(0, 2, T)]),
    }
    unknown = [name for name in families if name not in known]
    if unknown:
        raise DPStreamInputError("families", f"must be among {sorted(known)}", unknown)
    return SearchSpace(families={name: known[name] for name in families}, neighbours=_entry_neighbours(alphabet, seed))


def _lags(k: int) -> list[int]:
    if k <= 24:
        return list(range(1, k))
    return sorted({*range(1, 9), *(2**j for j in range(4, k.bit_length()) if 2**j < k)})


def release_features(R: FloatArray) -> FloatArray:
    """Columns: the k releases r_t; the differences d_t = r_t - r_(t-1) (t >= 2); and d_t - d_(t-L) for
    every lag L (all lags for k <= 24, else 1..8 and the powers of two), which are constant exactly when
    a noise value is reused between two steps. Rounded to :data:`DECIMALS` decimals."""
    R = np.nan_to_num(np.asarray(R, dtype=np.float64), nan=0.0, posinf=1e300, neginf=-1e300)
    k = R.shape[1]
    parts = [R]
    if k > 1:
        D = np.diff(R, axis=1, prepend=0.0)
        parts.append(D[:, 1:])
        parts.extend(D[:, L:] - D[:, :-L] for L in _lags(k))
    return np.asarray(np.round(np.concatenate(parts, axis=1), DECIMALS), dtype=np.float64)


def release_feature_names(k: int) -> list[str]:
    names = [f"r_{t}" for t in range(1, k + 1)]
    if k > 1:
        names += [f"d_{t}" for t in range(2, k + 1)]
        for L in _lags(k):
            names += [f"d_{t}-d_{t - L}" for t in range(L + 1, k + 1)]
    return names


# --------------------------------------------------------------------------------------------- events


@dataclass(frozen=True)
class Witness:
    """A fixed event on the features of a run, with the pair of inputs it separates.

    ``kind``: ``threshold`` ({x_c >= c} or {x_c <= c}), ``atom`` ({x_c = v}) or ``naive-bayes`` (the sum of
    per-feature log-ratio tables over ``columns``, thresholded). ``favours_f``: P[E | f] is the larger.
    """

    setting: int
    family: str
    label: str
    f: tuple[Any, ...]
    f_prime: tuple[Any, ...]
    kind: str
    columns: tuple[int, ...]
    threshold: float
    upper: bool
    favours_f: bool
    delta: float = 0.0
    tables: tuple[tuple[tuple[float, ...], tuple[float, ...]], ...] = ()

    def statistic(self, F: FloatArray) -> FloatArray:
        if self.kind == "naive-bayes":
            total = np.zeros(F.shape[0])
            for c, (edges, table) in zip(self.columns, self.tables, strict=True):
                total += np.asarray(table)[np.searchsorted(np.asarray(edges), F[:, c], side="right")]
            return np.asarray(np.round(total, DECIMALS))
        return np.asarray(F[:, self.columns[0]])

    def contains(self, F: FloatArray) -> BoolArray:
        x = self.statistic(F)
        if self.kind == "atom":
            return np.asarray(x == self.threshold)
        return np.asarray(x >= self.threshold if self.upper else x <= self.threshold)

    def describe(self, names: Sequence[str]) -> str:
        cols = [names[c] if c < len(names) else f"x{c}" for c in self.columns]
        side = "f" if self.favours_f else "f'"
        if self.kind == "atom":
            text = f"{{{cols[0]} = {self.threshold:.9g}}}"
        elif self.kind == "threshold":
            text = f"{{{cols[0]} {'>=' if self.upper else '<='} {self.threshold:.6g}}}"
        else:
            text = (f"{{naive-Bayes log-ratio of ({', '.join(cols)}) {'>=' if self.upper else '<='} "
                    f"{self.threshold:.4g}}}")
        return text + f" favouring {side}" + (f", delta={self.delta:g}" if self.delta else "")


def _deltas(claim: PrivacyClaim) -> tuple[float, ...]:
    return ZCDP_DELTAS if claim.measure is Measure.ZCDP else (0.0,)


def _wilson(p: FloatArray, n: float, z: float, sign: float) -> FloatArray:
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * np.sqrt(np.maximum(p * (1 - p), 0.0) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return np.asarray(np.clip(centre + sign * half, 0.0, 1.0))


@dataclass(frozen=True)
class _Ranker:
    """Ranks events by the bound they are expected to reach on the held-out split.

    From counts on n runs: p1 and p0 are pessimistic estimates (Wilson bounds at z = 2, so that a few
    lucky hits do not look like a certainty); the expected held-out bound is then the Wilson bound of
    log((p1 - delta) / p0) with ``n_hold`` runs at the held-out z, minus the claimed eps. Ranking only:
    certification is exact and on fresh runs."""

    n_hold: int
    z_hold: float
    claim: PrivacyClaim

    def margin(self, k1: npt.ArrayLike, k0: npt.ArrayLike, n: int,
               deltas: Sequence[float] | None = None) -> tuple[FloatArray, FloatArray]:
        """(best margin, its delta) per pair of counts; deltas default to the claim's."""
        p1 = _wilson(np.asarray(k1, dtype=np.float64) / n, n, 2.0, -1.0)
        p0 = _wilson(np.asarray(k0, dtype=np.float64) / n, n, 2.0, 1.0)
        lo = _wilson(p1, self.n_hold, self.z_hold, -1.0)
        hi = np.maximum(_wilson(p0, self.n_hold, self.z_hold, 1.0), 1e-300)
        best = np.full(lo.shape, -np.inf)
        best_delta = np.zeros(lo.shape)
        for delta in (_deltas(self.claim) if deltas is None else deltas):
            c = claimed_eps(self.claim, delta)
            with np.errstate(divide="ignore", invalid="ignore"):
                m = np.where(lo - delta > 0, np.log(np.maximum(lo - delta, 1e-300) / hi), -np.inf) - c
            better = m > best
            best = np.where(better, m, best)
            best_delta = np.where(better, delta, best_delta)
        return np.asarray(best), np.asarray(best_delta)


Proposal = tuple[float, int, float, bool, bool, float]
"""(margin, column, threshold, upper, favours_f, delta)."""


def _threshold_events(A: FloatArray, B: FloatArray, rank: _Ranker, As: FloatArray | None = None,
                      Bs: FloatArray | None = None) -> list[Proposal]:
    """Per column of A (runs on f) and B (runs on f'): the best threshold event on these runs,
    thresholds at the :data:`_LEVELS` quantiles of the pooled runs (``As``, ``Bs``: A and B sorted by column)."""
    n, q = A.shape
    As = np.sort(A, axis=0) if As is None else As
    Bs = np.sort(B, axis=0) if Bs is None else Bs
    P = np.sort(np.vstack([As, Bs]), axis=0)
    Q = P[np.round(_LEVELS * (2 * n - 1)).astype(np.int64)]
    ge1, ge0, le1, le0 = (np.empty(Q.shape) for _ in range(4))
    for c in range(q):
        ge1[:, c] = n - np.searchsorted(As[:, c], Q[:, c], side="left")
        ge0[:, c] = n - np.searchsorted(Bs[:, c], Q[:, c], side="left")
        le1[:, c] = np.searchsorted(As[:, c], Q[:, c], side="right")
        le0[:, c] = np.searchsorted(Bs[:, c], Q[:, c], side="right")
    best_m = np.full(q, -np.inf)
    best: list[Proposal] = [(-math.inf, c, float(Q[0, c]), True, True, 0.0) for c in range(q)]
    cols = np.arange(q)
    for upper, k1, k0 in ((True, ge1, ge0), (False, le1, le0)):
        for favours_f, hi, lo in ((True, k1, k0), (False, k0, k1)):
            m, d = rank.margin(hi, lo, n)
            arg = np.argmax(m, axis=0)
            mi = m[arg, cols]
            for col in np.flatnonzero(mi > best_m).tolist():
                best_m[col] = mi[col]
                best[col] = (float(mi[col]), col, float(Q[arg[col], col]), upper, favours_f, float(d[arg[col], col]))
    return best


def _atom_events(As: FloatArray, Bs: FloatArray, rank: _Ranker) -> list[tuple[float, int, float, bool, float]]:
    """Per column with repeated values: the best event {x = v} among its :data:`ATOMS_PER_FEATURE` most
    frequent values (``As``, ``Bs``: the runs on f and f' sorted by column). Returns (margin, column, value,
    favours_f, delta)."""
    n = As.shape[0]
    out = []
    P = np.sort(np.vstack([As, Bs]), axis=0)
    repeats = np.any(P[1:] == P[:-1], axis=0)
    for c in np.flatnonzero(repeats):
        x = P[:, c]
        starts = np.flatnonzero(np.concatenate([[True], x[1:] != x[:-1]]))
        lengths = np.diff(np.append(starts, x.size))
        top = x[starts[np.argsort(-lengths, kind="stable")[:ATOMS_PER_FEATURE]]]
        k1 = np.searchsorted(As[:, c], top, side="right") - np.searchsorted(As[:, c], top, side="left")
        k0 = np.searchsorted(Bs[:, c], top, side="right") - np.searchsorted(Bs[:, c], top, side="left")
        best: tuple[float, int, float, bool, float] | None = None
        for favours_f, hi, lo in ((True, k1, k0), (False, k0, k1)):
            m, d = rank.margin(hi, lo, n)
            i = int(np.argmax(m))
            if best is None or m[i] > best[0]:
                best = (float(m[i]), int(c), float(top[i]), favours_f, float(d[i]))
        assert best is not None
        out.append(best)
    return out


def _nb_table(a: FloatArray, b: FloatArray, bins: int = 16) -> tuple[tuple[float, ...], tuple[float, ...]]:
    edges = np.unique(np.quantile(np.concatenate([a, b]), np.linspace(0, 1, bins + 1)))[1:-1]
    ha = np.bincount(np.searchsorted(edges, a, side="right"), minlength=edges.size + 1) + 0.5
    hb = np.bincount(np.searchsorted(edges, b, side="right"), minlength=edges.size + 1) + 0.5
    table = np.log(ha / ha.sum()) - np.log(hb / hb.sum())
    return tuple(float(e) for e in edges), tuple(float(v) for v in table)


@dataclass(frozen=True)
class _Pair:
    setting: int
    family: str
    label: str
    f: tuple[Any, ...]
    f_prime: tuple[Any, ...]


def _propose(pair: _Pair, A: FloatArray, B: FloatArray, rank: _Ranker, threshold_columns: int) -> list[Witness]:
    """Events proposed from the fit split of one pair: the best threshold event of each of the first
    ``threshold_columns`` features, the best atom event of every feature, and each step of a greedy
    naive-Bayes combination of the best threshold features (:func:`_greedy_naive_bayes`)."""
    def make(kind: str, cols: tuple[int, ...], thr: float, up: bool, fav: bool, d: float,
             tables: tuple[tuple[tuple[float, ...], tuple[float, ...]], ...] = ()) -> Witness:
        return Witness(pair.setting, pair.family, pair.label, pair.f, pair.f_prime, kind, cols, thr, up, fav, d,
                       tables)

    As, Bs = np.sort(A, axis=0), np.sort(B, axis=0)
    q = min(A.shape[1], threshold_columns)
    thresholds = _threshold_events(A[:, :q], B[:, :q], rank, As[:, :q], Bs[:, :q])
    found = [make("threshold", (c,), thr, up, fav, d) for _, c, thr, up, fav, d in thresholds]
    found += [make("atom", (c,), v, True, fav, d) for _, c, v, fav, d in _atom_events(As, Bs, rank)]
    ranked = [c for m, c, *_ in sorted(thresholds, key=lambda e: -e[0]) if math.isfinite(m)][:NAIVE_BAYES_POOL]
    for cols, tables, (_, _, thr, up, fav, d) in _greedy_naive_bayes(A, B, ranked, rank):
        found.append(make("naive-bayes", cols, thr, up, fav, d, tables))
    return found


def _greedy_naive_bayes(A: FloatArray, B: FloatArray, ranked: Sequence[int], rank: _Ranker) -> list[
        tuple[tuple[int, ...], tuple[tuple[tuple[float, ...], tuple[float, ...]], ...], Proposal]]:
    """Forward selection over the ``ranked`` features: the naive-Bayes statistic (sum of per-feature histogram
    log-ratios, fitted on these runs) gains, at each step, the feature whose addition gives the best threshold
    event; stops when no feature improves it or after :data:`NAIVE_BAYES_MAX` features. Returns every step."""
    if len(ranked) < 2:
        return []
    tables = {c: _nb_table(A[:, c], B[:, c]) for c in ranked}

    def lookup(X: FloatArray, c: int) -> FloatArray:
        edges, table = tables[c]
        return np.asarray(np.asarray(table)[np.searchsorted(np.asarray(edges), X[:, c], side="right")])

    TA = {c: lookup(A, c) for c in ranked}
    TB = {c: lookup(B, c) for c in ranked}
    chosen = [ranked[0]]
    sa, sb = TA[ranked[0]].copy(), TB[ranked[0]].copy()
    current = -math.inf
    steps = []
    while len(chosen) < NAIVE_BAYES_MAX:
        trials = [c for c in ranked if c not in chosen]
        if not trials:
            break
        cand = np.asarray(np.round(np.stack([sa + TA[c] for c in trials], axis=1), DECIMALS), dtype=np.float64)
        candb = np.asarray(np.round(np.stack([sb + TB[c] for c in trials], axis=1), DECIMALS), dtype=np.float64)
        events = _threshold_events(cand, candb, rank)
        j = int(np.argmax([e[0] for e in events]))
        if events[j][0] <= current:
            break
        current = events[j][0]
        chosen.append(trials[j])
        sa, sb = sa + TA[trials[j]], sb + TB[trials[j]]
        steps.append((tuple(chosen), tuple(tables[c] for c in chosen), events[j]))
    return steps


def _counts(witnesses: Sequence[Witness], F: FloatArray) -> npt.NDArray[np.int64]:
    """How many rows of F each event contains (threshold and atom events vectorised)."""
    out = np.zeros(len(witnesses), dtype=np.int64)
    simple = [i for i, w in enumerate(witnesses) if w.kind != "naive-bayes"]
    if simple:
        cols = np.array([witnesses[i].columns[0] for i in simple])
        thr = np.array([witnesses[i].threshold for i in simple])
        kind = np.array([0 if witnesses[i].kind == "atom" else (1 if witnesses[i].upper else 2) for i in simple])
        X = F[:, cols]
        hits = np.where(kind == 0, thr == X, np.where(kind == 1, thr <= X, thr >= X))
        out[simple] = hits.sum(axis=0)
    for i, w in enumerate(witnesses):
        if w.kind == "naive-bayes":
            out[i] = int(w.contains(F).sum())
    return out


def _score(witnesses: Sequence[Witness], A: FloatArray, B: FloatArray, rank: _Ranker) -> list[float]:
    """Ranking margin of each fixed event on the select split (with its own delta)."""
    n = A.shape[0]
    kf, kfp = _counts(witnesses, A), _counts(witnesses, B)
    fav = np.array([w.favours_f for w in witnesses])
    hi, lo = np.where(fav, kf, kfp), np.where(fav, kfp, kf)
    deltas = np.array([w.delta for w in witnesses])
    out = np.full(len(witnesses), -np.inf)
    for d in np.unique(deltas):
        m, _ = rank.margin(hi, lo, n, (float(d),))
        out = np.where(deltas == d, m, out)
    return [float(v) for v in out]


# --------------------------------------------------------------------------------------------- result


@dataclass(frozen=True)
class SearchBudget:
    """Runs per input on the fit and select splits, per input of a carried event on the held-out split,
    and how many events are carried to the held-out split (the Bonferroni factor)."""

    fit: int
    select: int
    holdout: int
    carried: int = 8

    def __post_init__(self) -> None:
        for name in ("fit", "select", "holdout", "carried"):
            require_int_at_least(name, getattr(self, name), 1 if name == "carried" else 10)


@dataclass(frozen=True)
class Certified:
    """A carried event's held-out result."""

    witness: Witness
    k1: int
    k0: int
    n: int
    eps_lb: float
    claimed: float
    description: str


@dataclass(frozen=True)
class SearchResult:
    """Verdict (``violation``, ``pass`` or ``inconclusive``) with the best held-out result and its witness."""

    verdict: str
    best: Certified | None
    certified: tuple[Certified, ...]
    detectable_excess: float
    target_excess: float
    level: float
    trials: int
    pairs: int
    proposed: int
    settings: tuple[str, ...]

    @property
    def margin(self) -> float:
        return -math.inf if self.best is None else self.best.eps_lb - self.best.claimed

    def detail(self) -> str:
        head = (f"searched {self.pairs} neighbouring pairs over {len(self.settings)} setting(s) "
                f"({'; '.join(self.settings)}), {self.proposed} events proposed, {len(self.certified)} carried "
                f"to the held-out split, {self.trials} runs; level {self.level:.2g}")
        if self.best is None:
            return head
        b = self.best
        side = "f" if b.witness.favours_f else "f'"
        text = (f"{head}. Best held-out: {b.description} on {b.witness.family} stream, {b.witness.label} "
                f"({side} favoured): {b.k1}/{b.n} vs {b.k0}/{b.n}, eps lower bound {b.eps_lb:.4g} vs claimed "
                f"{b.claimed:.4g}")
        if self.verdict != "violation":
            text += (f"; smallest detectable excess {self.detectable_excess:.3g} "
                     f"(target {self.target_excess:.3g})")
        return text

    def to_data(self) -> dict[str, Any]:
        data: dict[str, Any] = {"verdict": self.verdict, "detectable_excess": self.detectable_excess,
                                "target_excess": self.target_excess, "level": self.level, "trials": self.trials,
                                "pairs": self.pairs, "settings": list(self.settings)}
        if self.best is not None:
            b = self.best
            data.update({"eps_lower_bound": b.eps_lb, "claimed_eps": b.claimed, "event": b.description,
                         "f": [_jsonable(x) for x in b.witness.f], "f_prime": [_jsonable(x) for x in b.witness.f_prime],
                         "counts": {"favoured": b.k1, "other": b.k0, "runs": b.n}, "family": b.witness.family,
                         "pair": b.witness.label, "setting": self.settings[b.witness.setting]})
        return data


def _jsonable(x: Any) -> Any:
    if isinstance(x, _FrozenObject):
        return {k: _jsonable(v) for k, v in x}
    if isinstance(x, list | tuple):
        return [_jsonable(v) for v in x]
    return float(x) if isinstance(x, float | np.floating) else x


def detectable_excess(n: int, p0: float, level: float, claimed: float, delta: float = 0.0) -> float:
    """Smallest Delta with eps_lb(expected counts) > claimed for an event of probability p0 (unfavoured side)
    and p1 = min(1, e^(claimed + Delta) p0 + delta) on the favoured side, n runs each; inf if none <= 20."""
    p0 = max(p0, 1.0 / n)

    def certified(excess: float) -> bool:
        p1 = min(1.0, math.exp(claimed + excess) * p0 + delta)
        return eps_lower_bound(round(n * p1), n, round(n * p0), n, level, delta) > claimed

    if not math.isfinite(claimed) or not certified(20.0):
        return math.inf
    lo, hi = 0.0, 20.0
    for _ in range(40):
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if certified(mid) else (mid, hi)
    return hi


def search(
    settings: Sequence[Setting],
    space: SearchSpace,
    budget: SearchBudget,
    *,
    level: float,
    seed: int,
    target_excess: float,
    executor: Executor | None = None,
    progress: Callable[[str], None] | None = None,
) -> SearchResult:
    """Run the search (module docstring) and return the verdict; the false-alarm probability is <= ``level``."""
    if not settings:
        raise DPStreamInputError("settings", "must contain at least one setting", settings)
    if not 0.0 < level < 1.0:
        raise DPStreamInputError("level", "must lie in (0, 1)", level)
    say = progress or (lambda message: None)
    carried = budget.carried
    z = float(_st.norm.isf(level / (2 * carried)))
    per_input = budget.fit + budget.select
    trials = 0
    proposals: list[tuple[float, Witness]] = []
    n_pairs = 0
    names_by_setting: dict[int, list[str]] = {}
    spaces = [setting.space or space for setting in settings]
    for si, setting in enumerate(settings):
        rank = _Ranker(budget.holdout, z, setting.claim)
        sp = spaces[si]
        for family, make in sp.families.items():
            f = make(setting.horizon)
            base_seed = derived_seed(seed, "search", si, family)
            say(f"{setting.label}: {family} stream")
            R = run_trials(setting.sampler, f, per_input, derived_seed(base_seed, "f"), executor)
            trials += per_input
            FA = sp.features(R)
            names_by_setting.setdefault(si, sp.feature_names(R.shape[1]))
            A_fit, A_sel = FA[:budget.fit], FA[budget.fit:]
            for label, g in sp.neighbours(f):
                n_pairs += 1
                Rp = run_trials(setting.sampler, g, per_input, derived_seed(base_seed, "f'", label), executor)
                trials += per_input
                FB = sp.features(Rp)
                pair = _Pair(si, family, label, _freeze(f), _freeze(g))
                ws = _propose(pair, A_fit, FB[:budget.fit], rank, sp.threshold_columns(R.shape[1]))
                scores = _score(ws, A_sel, FB[budget.fit:], rank)
                proposals.extend(zip(scores, ws, strict=True))
    if not proposals:
        raise DPStreamInputError("space", "gave no neighbouring pair to test", [list(sp.families) for sp in spaces])
    proposals.sort(key=lambda p: -p[0])
    chosen = [w for _, w in _distinct(proposals, carried)]
    say(f"held-out split: {len(chosen)} events")
    a = level / len(chosen)
    n = budget.holdout
    counts: dict[tuple[int, int], int] = {}  # (witness index, 0 for f / 1 for f') -> events on the held-out runs
    inputs_of: dict[tuple[int, tuple[Any, ...]], list[tuple[int, int]]] = {}
    for i, w in enumerate(chosen):
        for side, inputs in enumerate((w.f, w.f_prime)):
            inputs_of.setdefault((w.setting, inputs), []).append((i, side))
    for (si, inputs), users in inputs_of.items():
        # each chunk of runs is sampled and counted where it runs (a worker sends back counts, not rows)
        hits = run_reduced(settings[si].sampler, _thaw(inputs), n, derived_seed(seed, "holdout", si, repr(inputs)),
                           _EventCounter(spaces[si].features, tuple(chosen[i] for i, _ in users)), executor)
        trials += n
        for (i, side), k in zip(users, hits.tolist(), strict=True):
            counts[(i, side)] = int(k)
    results: list[Certified] = []
    for i, w in enumerate(chosen):
        k_f, k_fp = counts[(i, 0)], counts[(i, 1)]
        k1, k0 = (k_f, k_fp) if w.favours_f else (k_fp, k_f)
        lb = eps_lower_bound(k1, n, k0, n, a, w.delta)
        results.append(Certified(w, k1, k0, n, lb, claimed_eps(settings[w.setting].claim, w.delta),
                                 w.describe(names_by_setting[w.setting])))
    best = max(results, key=lambda c: c.eps_lb - c.claimed) if results else None
    violation = any(c.eps_lb > c.claimed for c in results)
    excess = min((detectable_excess(c.n, c.k0 / c.n, a, c.claimed, c.witness.delta) for c in results),
                 default=math.inf)
    target = min(target_excess * c.claimed for c in results) if results else math.inf
    verdict = "violation" if violation else ("pass" if excess <= target else "inconclusive")
    return SearchResult(verdict, best, tuple(results), excess, target, level, trials, n_pairs, len(proposals),
                        tuple(s.label for s in settings))


@dataclass(frozen=True)
class _EventCounter:
    """How many runs each fixed event contains, from a chunk of release rows (features block by block: bounded
    memory). A value, so that :func:`~dpstream.audit.sampler.run_reduced` can send it to the workers."""

    features: Callable[[FloatArray], FloatArray]
    events: tuple[Witness, ...]

    def __call__(self, R: FloatArray) -> npt.NDArray[np.int64]:
        out = np.zeros(len(self.events), dtype=np.int64)
        for start in range(0, R.shape[0], HOLDOUT_BLOCK):
            out += _counts(self.events, self.features(R[start:start + HOLDOUT_BLOCK]))
        return out


def _distinct(ranked: Sequence[tuple[float, Witness]], count: int) -> list[tuple[float, Witness]]:
    """The ``count`` best distinct events, taken in turn from each setting's ranking (round robin).

    Settings have different claims, so their margins are not comparable on the small select split: a vacuous
    event of one setting (both frequencies near 1, margin near minus its small claim) can outrank a strong
    one of another (a large likelihood ratio measured on few hits). Taking each setting's best in turn gives
    every setting a share of the held-out stage; the multiplicity correction is over the ``count`` events
    carried, whoever carries them."""
    per_setting: dict[int, list[tuple[float, Witness]]] = {}
    seen: set[tuple[Any, ...]] = set()
    for score, w in ranked:
        key = (w.setting, w.f, w.f_prime, w.kind, w.columns, w.threshold, w.upper, w.favours_f, w.delta)
        if key not in seen:
            seen.add(key)
            per_setting.setdefault(w.setting, []).append((score, w))
    queues = [per_setting[k] for k in sorted(per_setting)]
    out: list[tuple[float, Witness]] = []
    depth = 0
    while len(out) < count and any(depth < len(q) for q in queues):
        for q in queues:
            if depth < len(q) and len(out) < count:
                out.append(q[depth])
        depth += 1
    return out


class _FrozenObject(tuple[tuple[str, Any], ...]):
    """A JSON object inside a frozen stream: its (key, frozen value) items, sorted by key."""

    __slots__ = ()


def _freeze(value: Any) -> Any:
    """A stream (or any JSON value) made hashable: lists to tuples, objects to :class:`_FrozenObject`, deeply."""
    if isinstance(value, Mapping):
        return _FrozenObject((str(k), _freeze(v)) for k, v in sorted(value.items()))
    if isinstance(value, list | tuple):
        return tuple(_freeze(x) for x in value)
    return value


def _thaw(value: Any) -> Any:
    """The inverse of :func:`_freeze` (tuples back to lists, frozen objects back to dicts)."""
    if isinstance(value, _FrozenObject):
        return {k: _thaw(v) for k, v in value}
    if isinstance(value, tuple):
        return [_thaw(x) for x in value]
    return value


def search_check(result: SearchResult) -> CheckResult:
    """The search as an audit check: failed on ``violation``, informational (None) when ``inconclusive``."""
    passed = {"violation": False, "pass": True, "inconclusive": None}[result.verdict]
    value = None if result.best is None or not math.isfinite(result.best.eps_lb) else result.best.eps_lb
    bound = None if result.best is None else result.best.claimed
    return CheckResult(CheckKind.SEARCH, passed, value, bound, f"{result.verdict}: {result.detail()}",
                       result.to_data())
