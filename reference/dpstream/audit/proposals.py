"""Where the witness search looks: events proposed from the fit split of one neighbouring pair.

Every proposal is an :class:`~dpstream.audit.events.Event` (fixed from here on), the side it favours, a delta (zCDP)
and its *class* (reported with the witness, and listed in the verdict as the classes searched):

* ``threshold`` -- per feature, the best {x >= c} or {x <= c} at pooled quantiles (dense in the tails);
* ``atom`` -- per feature with repeated values, the best {x = v} (an exact release, a reused draw);
* ``naive-bayes`` -- a greedy sum of per-feature histogram log-ratios, thresholded;
* ``linear`` -- thresholds and atoms of linear statistics: the entry's declared contrasts (the design's difference of
  two bins, count of records in a region: where the papers' sensitivity analysis puts the loss) and two learned
  discriminants (the difference of means, weighted by the inverse of the diagonal or shrunk covariance);
* ``relation`` -- linear relations that hold exactly in every run on f (x_i - x_j or x_i + x_j constant: one noise
  value shared by two releases; with enough runs, any exact linear relation) whose value is not the same on f':
  {relation = its value on f};
* ``pair`` -- conjunctions and disagreements of two features' threshold events (leaks in the joint law only);
* ``classifier`` -- a logistic classifier with pairwise interactions of the most telling features (DP-Sniper,
  Bichsel et al. IEEE S&P 2021), fitted on the fit split, its log-odds thresholded;
* ``tail`` -- for the most telling statistics, a threshold beyond what the fit split can see, chosen on a fitted
  location-scale model (normal or Laplace) to maximise the bound expected at the held-out size: small changes of a
  noise scale show only in tails as deep as the held-out split resolves.

Proposals only choose which events get tested; certification is exact and on fresh held-out runs
(:mod:`dpstream.audit.search`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy import stats as _st

from dpstream.audit.blackbox import ZCDP_DELTAS, claimed_eps
from dpstream.audit.events import DECIMALS, Column, Event, Linear, Logistic, NaiveBayes, Statistic, Table
from dpstream.claims import Measure, PrivacyClaim

__all__ = ["EVENT_CLASSES", "Proposal", "Ranker", "exact_relations", "propose"]

FloatArray = npt.NDArray[np.float64]

EVENT_CLASSES = ("threshold", "atom", "naive-bayes", "linear", "relation", "pair", "classifier", "tail")
"""Every class of event the search proposes (module docstring), in the order reports list them."""
NAIVE_BAYES_POOL = 12
NAIVE_BAYES_MAX = 8
PAIR_POOL = 10
"""Features (the best by their threshold events) whose pairs get conjunction and disagreement events."""
PAIR_LEVELS = (0.1, 0.25, 0.5, 0.75, 0.9)
CLASSIFIER_POOL = 8
TAIL_POOL = 4
"""Single features (the most shifted) that get a tail proposal, besides the linear statistics."""
MAX_RELATIONS = 64
"""Pairwise relations kept per sign (columns related to each other are chained, one pair per column)."""
RELATION_UNIT = 1e-6
"""A relation holds exactly when it is constant to this many units (features are rounded to 1e-9)."""
_TAILS = np.geomspace(1e-4, 0.05, 16)
_LEVELS = np.unique(np.concatenate([np.linspace(0.0, 1.0, 65), _TAILS, 1.0 - _TAILS]))
"""Quantile levels of the pooled fit runs tried as thresholds (dense in the tails, where witnesses live)."""
ATOMS_PER_FEATURE = 3


@dataclass(frozen=True)
class Proposal:
    """An event proposed for one pair: it favours f (``favours_f``) or f'; ``predicted`` is the held-out margin a
    fitted model expects (``tail`` proposals, ranked by it; -inf for the others, ranked on the select split)."""

    event: Event
    favours_f: bool
    delta: float
    origin: str
    predicted: float = -math.inf


def _deltas(claim: PrivacyClaim) -> tuple[float, ...]:
    return ZCDP_DELTAS if claim.measure is Measure.ZCDP else (0.0,)


def _wilson(p: FloatArray, n: float, z: float, sign: float) -> FloatArray:
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * np.sqrt(np.maximum(p * (1 - p), 0.0) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return np.asarray(np.clip(centre + sign * half, 0.0, 1.0))


@dataclass(frozen=True)
class Ranker:
    """Ranks events by the bound they are expected to reach on the held-out split.

    From counts on n runs: p1 and p0 are pessimistic estimates (Wilson bounds at z = 2, so that a few lucky hits do
    not look like a certainty); the expected held-out bound is then the Wilson bound of log((p1 - delta) / p0) with
    ``n_hold`` runs at the held-out z, minus the claimed eps. :meth:`expected` does the same from probabilities
    (a model's). Ranking only: certification is exact and on fresh runs."""

    n_hold: int
    z_hold: float
    claim: PrivacyClaim

    def margin(self, k1: npt.ArrayLike, k0: npt.ArrayLike, n: int,
               deltas: Sequence[float] | None = None) -> tuple[FloatArray, FloatArray]:
        """(best margin, its delta) per pair of counts; deltas default to the claim's."""
        p1 = _wilson(np.asarray(k1, dtype=np.float64) / n, n, 2.0, -1.0)
        p0 = _wilson(np.asarray(k0, dtype=np.float64) / n, n, 2.0, 1.0)
        return self.expected(p1, p0, deltas)

    def expected(self, p1: npt.ArrayLike, p0: npt.ArrayLike,
                 deltas: Sequence[float] | None = None) -> tuple[FloatArray, FloatArray]:
        """(best margin, its delta) expected on the held-out split for events of probabilities p1 (favoured side)
        and p0."""
        lo = _wilson(np.asarray(p1, dtype=np.float64), self.n_hold, self.z_hold, -1.0)
        hi = np.maximum(_wilson(np.asarray(p0, dtype=np.float64), self.n_hold, self.z_hold, 1.0), 1e-300)
        chosen = _deltas(self.claim) if deltas is None else tuple(deltas)
        best = np.full(lo.shape, -np.inf)
        best_delta = np.full(lo.shape, chosen[0])
        for delta in chosen:
            c = claimed_eps(self.claim, delta)
            with np.errstate(divide="ignore", invalid="ignore"):
                m = np.where(lo - delta > 0, np.log(np.maximum(lo - delta, 1e-300) / hi), -np.inf) - c
            better = m > best
            best = np.where(better, m, best)
            best_delta = np.where(better, delta, best_delta)
        return np.asarray(best), np.asarray(best_delta)


Best = tuple[float, int, float, bool, bool, float]
"""(margin, column, threshold, upper, favours_f, delta)."""


def threshold_events(A: FloatArray, B: FloatArray, rank: Ranker) -> list[Best]:
    """Per column of A (runs on f) and B (runs on f'): the best threshold event on these runs, thresholds at the
    :data:`_LEVELS` quantiles of the pooled runs."""
    n, q = A.shape
    As, Bs = np.sort(A, axis=0), np.sort(B, axis=0)
    P = np.sort(np.vstack([As, Bs]), axis=0)
    Q = P[np.round(_LEVELS * (2 * n - 1)).astype(np.int64)]
    ge1, ge0, le1, le0 = (np.empty(Q.shape) for _ in range(4))
    for c in range(q):
        ge1[:, c] = n - np.searchsorted(As[:, c], Q[:, c], side="left")
        ge0[:, c] = n - np.searchsorted(Bs[:, c], Q[:, c], side="left")
        le1[:, c] = np.searchsorted(As[:, c], Q[:, c], side="right")
        le0[:, c] = np.searchsorted(Bs[:, c], Q[:, c], side="right")
    best_m = np.full(q, -np.inf)
    best: list[Best] = [(-math.inf, c, float(Q[0, c]), True, True, _deltas(rank.claim)[0]) for c in range(q)]
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


def atom_events(A: FloatArray, B: FloatArray, rank: Ranker) -> list[tuple[float, int, float, bool, float]]:
    """Per column with repeated values: the best event {x = v} among its :data:`ATOMS_PER_FEATURE` most frequent
    values. Returns (margin, column, value, favours_f, delta)."""
    n = A.shape[0]
    As, Bs = np.sort(A, axis=0), np.sort(B, axis=0)
    P = np.sort(np.vstack([As, Bs]), axis=0)
    repeats = np.flatnonzero(np.any(P[1:] == P[:-1], axis=0))
    cols: list[int] = []
    values: list[float] = []
    for c in repeats.tolist():
        x = P[:, c]
        starts = np.flatnonzero(np.concatenate([[True], x[1:] != x[:-1]]))
        lengths = np.diff(np.append(starts, x.size))
        top = x[starts[np.argsort(-lengths, kind="stable")[:ATOMS_PER_FEATURE]]]
        cols += [c] * top.size
        values += top.tolist()
    if not cols:
        return []
    col, v = np.asarray(cols), np.asarray(values)
    k1 = (A[:, col] == v).sum(axis=0)
    k0 = (B[:, col] == v).sum(axis=0)
    m1, d1 = rank.margin(k1, k0, n)
    m0, d0 = rank.margin(k0, k1, n)
    out = []
    for c in dict.fromkeys(cols):
        where = np.flatnonzero(col == c)
        i1, i0 = where[int(np.argmax(m1[where]))], where[int(np.argmax(m0[where]))]
        if m1[i1] >= m0[i0]:
            out.append((float(m1[i1]), int(c), float(v[i1]), True, float(d1[i1])))
        else:
            out.append((float(m0[i0]), int(c), float(v[i0]), False, float(d0[i0])))
    return out


# --------------------------------------------------------------------------------------------- statistics


def _nb_table(a: FloatArray, b: FloatArray, bins: int = 16) -> Table:
    edges = np.unique(np.quantile(np.concatenate([a, b]), np.linspace(0, 1, bins + 1)))[1:-1]
    ha = np.bincount(np.searchsorted(edges, a, side="right"), minlength=edges.size + 1) + 0.5
    hb = np.bincount(np.searchsorted(edges, b, side="right"), minlength=edges.size + 1) + 0.5
    table = np.log(ha / ha.sum()) - np.log(hb / hb.sum())
    return tuple(float(e) for e in edges), tuple(float(v) for v in table)


def _greedy_naive_bayes(A: FloatArray, B: FloatArray, ranked: Sequence[int], rank: Ranker
                        ) -> list[tuple[NaiveBayes, Best]]:
    """Forward selection over the ``ranked`` features: the naive-Bayes statistic gains, at each step, the feature
    whose addition gives the best threshold event; stops when no feature improves it or after
    :data:`NAIVE_BAYES_MAX` features. Returns every step."""
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
    steps: list[tuple[NaiveBayes, Best]] = []
    while len(chosen) < NAIVE_BAYES_MAX:
        trials = [c for c in ranked if c not in chosen]
        if not trials:
            break
        cand = np.asarray(np.round(np.stack([sa + TA[c] for c in trials], axis=1), DECIMALS), dtype=np.float64)
        candb = np.asarray(np.round(np.stack([sb + TB[c] for c in trials], axis=1), DECIMALS), dtype=np.float64)
        events = threshold_events(cand, candb, rank)
        j = int(np.argmax([e[0] for e in events]))
        if events[j][0] <= current:
            break
        current = events[j][0]
        chosen.append(trials[j])
        sa, sb = sa + TA[trials[j]], sb + TB[trials[j]]
        steps.append((NaiveBayes(tuple(chosen), tuple(tables[c] for c in chosen)), events[j]))
    return steps


def _varying(A: FloatArray, B: FloatArray) -> npt.NDArray[np.int64]:
    """Columns that are not constant over the pooled runs."""
    P = np.vstack([A, B])
    return np.flatnonzero(P.max(axis=0) > P.min(axis=0))


def _discriminants(A: FloatArray, B: FloatArray) -> list[Linear]:
    """The difference of means weighted by the inverse of the pooled variances (diagonal) and of the pooled
    covariance shrunk halfway to its diagonal: two learned linear statistics (Fisher's discriminant)."""
    cols = _varying(A, B)
    if cols.size == 0:
        return []
    a, b = A[:, cols], B[:, cols]
    d = a.mean(axis=0) - b.mean(axis=0)
    if not np.any(d):
        return []
    centred = np.vstack([a - a.mean(axis=0), b - b.mean(axis=0)])
    var = np.maximum(centred.var(axis=0), 1e-12)
    out = [Linear(tuple(int(c) for c in cols), tuple(float(w) for w in _unit(d / var)), "learned discriminant")]
    if cols.size <= 400:
        S = np.cov(centred, rowvar=False).reshape(cols.size, cols.size)
        shrunk = 0.5 * S + 0.5 * np.diag(var) + 1e-9 * np.eye(cols.size)
        w = np.linalg.solve(shrunk, d)
        out.append(Linear(tuple(int(c) for c in cols), tuple(float(x) for x in _unit(w)),
                          "learned discriminant (covariance)"))
    return out


def _unit(w: FloatArray) -> FloatArray:
    top = float(np.max(np.abs(w)))
    return np.asarray(w / top if top > 0 else w, dtype=np.float64)


def exact_relations(A: FloatArray) -> list[Linear]:
    """Linear relations that hold exactly (to :data:`RELATION_UNIT`) on every row of A (runs on one input), as
    statistics that are 0 on A: x_i - x_j and x_i + x_j for every pair of non-constant columns (a noise value shared
    by two releases), and, when A has at least twice as many rows as non-constant columns, every direction of its
    null space (any exact linear relation). Constant columns are left to the atom events."""
    n = A.shape[0]
    cols = np.flatnonzero(A.max(axis=0) > A.min(axis=0)) if n else np.zeros(0, dtype=np.int64)
    if n < 3 or cols.size < 2:
        return []
    X = A[:, cols]
    mean = X.mean(axis=0)
    C = X - mean
    out: list[Linear] = []
    G = C.T @ C
    diag = np.diag(G)
    for sign, label in ((-1.0, "exact relation (difference)"), (1.0, "exact relation (sum)")):
        var = diag[:, None] + diag[None, :] + 2.0 * sign * G
        i, j = np.nonzero(np.triu(var <= 1e-14 * (diag[:, None] + diag[None, :]), k=1))
        chained: dict[int, int] = {}
        for a, b in zip(i.tolist(), j.tolist(), strict=True):  # classes of related columns: consecutive pairs
            chained.setdefault(a, b)
        for a, b in list(chained.items())[:MAX_RELATIONS]:
            offset = float(mean[a] + sign * mean[b])
            r = Linear((int(cols[a]), int(cols[b])), (1.0, sign), label, offset, RELATION_UNIT)
            if not np.any(r(A)):
                out.append(r)
    if n >= 2 * cols.size:
        _, s, vt = np.linalg.svd(C, full_matrices=False)
        null = vt[s <= 1e-9 * max(float(s[0]), 1e-300)]
        for v in null[:8]:
            w = _unit(v)
            keep = np.flatnonzero(np.abs(w) > 1e-9)
            if keep.size <= 2:  # a pair: found above already
                continue
            r = Linear(tuple(int(cols[k]) for k in keep), tuple(float(w[k]) for k in keep), "exact relation",
                       float(mean[keep] @ w[keep]), RELATION_UNIT)
            if not np.any(r(A)):
                out.append(r)
    return out


def _logistic(A: FloatArray, B: FloatArray, columns: Sequence[int]) -> Logistic | None:
    """A ridge-regularised logistic regression of "run on f" on the standardised ``columns`` and their pairwise
    products (Newton's method, a few iterations)."""
    if len(columns) < 2:
        return None
    P = np.vstack([A, B])[:, list(columns)]
    mean, scale = P.mean(axis=0), P.std(axis=0)
    scale = np.where(scale > 0, scale, 1.0)
    k = len(columns)
    pairs = tuple((i, j) for i in range(k) for j in range(i + 1, k))
    model = Logistic(tuple(int(c) for c in columns), tuple(float(m) for m in mean), tuple(float(s) for s in scale),
                     pairs, (0.0,) * (k + len(pairs)))
    X = np.hstack([model.design(np.vstack([A, B])), np.ones((2 * A.shape[0], 1))])
    y = np.concatenate([np.ones(A.shape[0]), np.zeros(B.shape[0])])
    w = np.zeros(X.shape[1])
    ridge = 1.0 * np.eye(X.shape[1])
    ridge[-1, -1] = 0.0
    for _ in range(12):
        p = 1.0 / (1.0 + np.exp(-np.clip(X @ w, -30, 30)))
        H = X.T @ (X * (p * (1 - p))[:, None]) + ridge
        g = X.T @ (p - y) + ridge @ w
        step = np.linalg.solve(H, g)
        w -= step
        if float(np.max(np.abs(step))) < 1e-6:
            break
    return Logistic(model.columns, model.mean, model.scale, pairs, tuple(float(x) for x in w[:-1]))


# --------------------------------------------------------------------------------------------- tails


def _fit_model(a: FloatArray, b: FloatArray) -> tuple[str, float, float, float] | None:
    """(family, location on f, location on f', common scale) of the better of a normal and a Laplace model
    (maximum likelihood, one scale for both sides)."""
    if a.size < 5 or b.size < 5:
        return None
    ma, mb = float(np.mean(a)), float(np.mean(b))
    sd = math.sqrt((float(np.sum((a - ma) ** 2)) + float(np.sum((b - mb) ** 2))) / (a.size + b.size))
    la, lb = float(np.median(a)), float(np.median(b))
    mad = (float(np.sum(np.abs(a - la))) + float(np.sum(np.abs(b - lb)))) / (a.size + b.size)
    if sd <= 0 or mad <= 0:
        return None
    n = a.size + b.size
    ll_normal = -n * (math.log(sd) + 0.5 * math.log(2 * math.pi) + 0.5)
    ll_laplace = -n * (math.log(2 * mad) + 1.0)
    return ("normal", ma, mb, sd) if ll_normal >= ll_laplace else ("laplace", la, lb, mad)


def _survival(family: str, x: FloatArray) -> FloatArray:
    if family == "normal":
        return np.asarray(_st.norm.sf(x))
    return np.asarray(np.where(x >= 0, 0.5 * np.exp(-np.maximum(x, 0)), 1 - 0.5 * np.exp(np.minimum(x, 0))))


def tail_event(statistic: Statistic, a: FloatArray, b: FloatArray, rank: Ranker) -> Proposal | None:
    """A threshold on ``statistic`` beyond the fit split's reach: on the fitted model (:func:`_fit_model`), the
    threshold c on the side of the larger location that maximises the margin expected with ``rank.n_hold`` held-out
    runs; None when the model does not fit or the sides have the same location."""
    model = _fit_model(a, b)
    if model is None:
        return None
    family, la, lb, scale = model
    if la == lb:
        return None
    high, low = max(la, lb), min(la, lb)
    grid = high + scale * np.linspace(-2.0, 12.0, 141)
    p1 = _survival(family, (grid - high) / scale)
    p0 = _survival(family, (grid - low) / scale)
    margin, delta = rank.expected(p1, p0)
    i = int(np.argmax(margin))
    if not math.isfinite(float(margin[i])):
        return None
    event = Event("threshold", (statistic,), (float(np.round(grid[i], DECIMALS)),), (True,))
    return Proposal(event, la > lb, float(delta[i]), "tail", float(margin[i]))


# --------------------------------------------------------------------------------------------- propose


def _events_of(statistic: Statistic, a: FloatArray, b: FloatArray, rank: Ranker, origin: str,
               atoms: bool = True) -> list[Proposal]:
    """The best threshold event (and atom event) of one statistic's values on f and f'."""
    out = []
    _, _, thr, up, fav, d = threshold_events(a[:, None], b[:, None], rank)[0]
    out.append(Proposal(Event("threshold", (statistic,), (thr,), (up,)), fav, d, origin))
    if atoms:
        for _, _, v, fav, d in atom_events(a[:, None], b[:, None], rank):
            out.append(Proposal(Event("atom", (statistic,), (v,)), fav, d, origin))
    return out


PAIR_KINDS = (("conjunction", True, True), ("conjunction", True, False), ("conjunction", False, True),
              ("conjunction", False, False), ("disagreement", True, True))


def _pair_events(A: FloatArray, B: FloatArray, ranked: Sequence[int], rank: Ranker) -> list[Proposal]:
    """Conjunctions {x_i >< c_i and x_j >< c_j} and disagreements {x_i >= c_i xor x_j >= c_j} of the ``ranked``
    features, thresholds at :data:`PAIR_LEVELS` of the pooled runs; the best of each pair (counted for every pair,
    kind and pair of levels at once)."""
    n = A.shape[0]
    cols = list(ranked[:PAIR_POOL])
    k = len(cols)
    if k < 2:
        return []
    P = np.vstack([A, B])[:, cols]
    Q = np.quantile(P, PAIR_LEVELS, axis=0)  # levels x k
    L = len(PAIR_LEVELS)
    IA = (A[:, cols][:, None, :] >= Q[None, :, :]).astype(np.float64)  # n x levels x k
    IB = (B[:, cols][:, None, :] >= Q[None, :, :]).astype(np.float64)
    ii, jj = np.triu_indices(k, 1)
    best_m = np.full(ii.size, -np.inf)
    best: list[Proposal | None] = [None] * ii.size
    for kind, up_i, up_j in PAIR_KINDS:
        counts = []
        for I in (IA, IB):
            X = I if up_i else 1.0 - I
            Y = I if up_j else 1.0 - I
            both = np.einsum("nai,nbj->ijab", X, Y)  # k x k x levels x levels
            if kind == "disagreement":
                sx, sy = X.sum(axis=0), Y.sum(axis=0)  # levels x k
                both = sx.T[:, None, :, None] + sy.T[None, :, None, :] - 2 * both
            counts.append(both[ii, jj].reshape(ii.size, L * L))
        ka, kb = counts
        for favours_f, hi, lo in ((True, ka, kb), (False, kb, ka)):
            m, d = rank.margin(hi.ravel(), lo.ravel(), n)
            m, d = m.reshape(ii.size, L * L), d.reshape(ii.size, L * L)
            arg = np.argmax(m, axis=1)
            top = m[np.arange(ii.size), arg]
            for p in np.flatnonzero(top > best_m).tolist():
                li, lj = divmod(int(arg[p]), L)
                a, b = int(ii[p]), int(jj[p])
                event = Event(kind, (Column(int(cols[a])), Column(int(cols[b]))), (float(Q[li, a]), float(Q[lj, b])),
                              (up_i, up_j) if kind == "conjunction" else (True, True))
                best_m[p] = top[p]
                best[p] = Proposal(event, favours_f, float(d[p, arg[p]]), "pair")
    return [b for b, m in zip(best, best_m, strict=True) if b is not None and math.isfinite(float(m))]


def propose(A: FloatArray, B: FloatArray, rank: Ranker, *, threshold_columns: int,
            contrasts: Sequence[Linear] = (), relations: Sequence[Linear] = ()) -> list[Proposal]:
    """Every event proposed from the fit split of one pair (A: runs on f, B: runs on f'; features as columns):
    the classes of the module docstring. ``threshold_columns``: the leading columns that get threshold events (the
    rest only atoms); ``contrasts``: the entry's declared linear statistics; ``relations``: exact relations of f's
    runs (:func:`exact_relations`)."""
    q = min(A.shape[1], threshold_columns)
    thresholds = threshold_events(A[:, :q], B[:, :q], rank)
    found = [Proposal(Event("threshold", (Column(c),), (thr,), (up,)), fav, d, "threshold")
             for _, c, thr, up, fav, d in thresholds]
    found += [Proposal(Event("atom", (Column(c),), (v,)), fav, d, "atom")
              for _, c, v, fav, d in atom_events(A, B, rank)]
    ranked = [c for m, c, *_ in sorted(thresholds, key=lambda e: -e[0]) if math.isfinite(m)]
    for nb, (_, _, thr, up, fav, d) in _greedy_naive_bayes(A, B, ranked[:NAIVE_BAYES_POOL], rank):
        found.append(Proposal(Event("threshold", (nb,), (thr,), (up,)), fav, d, "naive-bayes"))
    linear = [*contrasts, *_discriminants(A, B)]
    for lin in linear:
        found += _events_of(lin, lin(A), lin(B), rank, "linear")
    for relation in relations:
        b = relation(B)
        if np.any(b):  # 0 on every run on f, not on some run on f'
            _, chosen = rank.margin([A.shape[0]], [int(np.sum(b == 0))], A.shape[0])
            found.append(Proposal(Event("atom", (relation,), (0.0,)), True, float(chosen[0]), "relation"))
    found += _pair_events(A, B, ranked, rank)
    classifier = _logistic(A, B, ranked[:CLASSIFIER_POOL])
    if classifier is not None:
        found += _events_of(classifier, classifier(A), classifier(B), rank, "classifier", atoms=False)
    shifted = _most_shifted(A[:, :q], B[:, :q])
    tails: list[Statistic] = [*(Column(int(c)) for c in shifted), *linear]
    if classifier is not None:
        tails.append(classifier)
    for statistic in tails:
        proposal = tail_event(statistic, statistic(A), statistic(B), rank)
        if proposal is not None:
            found.append(proposal)
    return found


def _most_shifted(A: FloatArray, B: FloatArray) -> list[int]:
    """The :data:`TAIL_POOL` columns whose means differ most, in pooled standard deviations."""
    if A.shape[1] == 0:
        return []
    sd = np.sqrt(0.5 * (A.var(axis=0) + B.var(axis=0)))
    with np.errstate(divide="ignore", invalid="ignore"):
        effect = np.where(sd > 0, np.abs(A.mean(axis=0) - B.mean(axis=0)) / sd, 0.0)
    order = np.argsort(-effect, kind="stable")
    return [int(c) for c in order[:TAIL_POOL] if effect[c] > 0]
