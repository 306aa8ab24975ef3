"""Exact privacy of 002-alg1 and 002-alg2 on concrete neighbouring matrices (Theorems 3.1, 4.1).

Fixed time window (002-alg1). Every release is a function of the noisy histograms
C^^t = C^t + n_pad + N_Z(0, sigma^2) (t = k..T) and of independent post-processing coins,
so two levels are computed exactly:

* **histograms** (what the proof of Theorem 3.1 composes): a linear release model with one
  discrete Gaussian per (t, s) (:func:`fixed_window_histogram_model`, input = the stacked true
  histograms, :func:`histogram_vector`); its Renyi divergence on neighbours is the sum over bins.
* **synthetic data** (what is released): p^k = C^^k, and for t > k the targets p_{z0}^t,
  p_{z1}^t are fixed by the released total M_z = p_{0z}^{t-1} + p_{1z}^{t-1} and by
  V_z^t = p_{z0}^t - p_{z1}^t, which equals D = C^_{z0}^t - C^_{z1}^t when D = M_z (mod 2) and
  D +- 1 (fair coin b_z) otherwise. D = mu + (X1 - X2) with mu = C_{z0}^t - C_{z1}^t. Given the
  past, the law of V_z^t depends on the data only through mu and on the past only through the
  parity of M_z; the record choices are data-free given the targets. By the chain rule of Renyi
  divergence the divergence of the whole release lies between the first step's plus the sum of
  the per-(t, z) minima over the parity and the same with maxima: :func:`output_renyi_bracket`.
  Sums of D_alpha are exact up to the truncation of the support at |d| <= sigma sqrt(1200)
  (neglected mass below e^-290).

:func:`worst_pair_bracket` maximises both levels over all pairs of individual sequences by
dynamic programming over pairs of windows (exhaustive for the given T and k).

Cumulative time (002-alg2): every counter is a linear discrete-Gaussian model of its stream
z_b; :func:`cumulative_model` stacks the T counters' models (releases ordered as in
``CumulativeRelease.S_tilde``: t-major, b = 1..t), :func:`z_vector` stacks the streams, so the
audit engine's linear checks apply. :func:`cumulative_worst_pair` searches all pairs of
sequences (small T) for the largest divergence under substitution.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from functools import lru_cache

import numpy as np
import numpy.typing as npt

from dpstream.audit.counters.models import tree_aggregation_model
from dpstream.audit.exact import ExactLoss, linear_renyi, renyi_shift
from dpstream.audit.linear_model import LinearReleaseModel, NoiseLaw
from dpstream.claims import Measure
from dpstream.errors import DPStreamInputError, require_positive_finite
from dpstream.lazy import LazyModule
from dpstream.longitudinal.bounds import validate_horizon_window
from dpstream.longitudinal.data import pattern_string, window_histogram
from dpstream.noise import site

_special = LazyModule("scipy.special")

__all__ = [
    "cumulative_model",
    "cumulative_worst_pair",
    "difference_log_pmf",
    "fixed_window_histogram_model",
    "histogram_vector",
    "output_log_likelihood",
    "output_renyi_bracket",
    "v_divergence",
    "v_log_pmf",
    "worst_pair_bracket",
    "z_vector",
]

FloatArray = npt.NDArray[np.float64]


# --- fixed time window: histogram level ------------------------------------------------------------


def histogram_vector(matrix: npt.ArrayLike, T: int, k: int) -> FloatArray:
    """The stacked true histograms (C^k, C^{k+1}, ..., C^T) of an n x T matrix (rows = individuals)."""
    T, k = validate_horizon_window(T, k)
    m = np.asarray(matrix, dtype=np.int64).reshape(-1, T)
    return np.concatenate([window_histogram(m, t, k) for t in range(k, T + 1)]).astype(np.float64)


def fixed_window_histogram_model(T: int, k: int, sigma2: float) -> LinearReleaseModel:
    """One N_Z(0, sigma^2) term per (t, s) at its 002-alg1 u3 site; S = W = identity on the stacked histograms."""
    T, k = validate_horizon_window(T, k)
    law = NoiseLaw.discrete_gaussian(require_positive_finite("sigma2", sigma2))
    terms = []
    for j, (t, s) in enumerate((t, s) for t in range(k, T + 1) for s in range(2**k)):
        terms.append((site("002-alg1 u3", t=t, s=pattern_string(s, k)), law, {j: 1.0}))
    return LinearReleaseModel.build(terms, [{j: 1.0} for j in range(len(terms))], len(terms))


# --- fixed time window: synthetic-data level --------------------------------------------------------


def _radius(sigma2: float) -> int:
    return math.ceil(math.sqrt(sigma2) * math.sqrt(1200.0)) + 4


@lru_cache(maxsize=64)
def _difference_table(sigma2: float) -> tuple[int, FloatArray]:
    """(r, g) with g[d + 2r] = P[X1 - X2 = d], X1, X2 i.i.d. N_Z(0, sigma^2), |d| <= 2r."""
    r = _radius(sigma2)
    x = np.arange(-r, r + 1, dtype=np.float64)
    phi = np.exp(-(x * x) / (2.0 * sigma2))
    phi /= phi.sum()
    g = np.convolve(phi, phi)
    return r, g


def difference_log_pmf(sigma2: float, d: npt.ArrayLike) -> FloatArray:
    """log P[X1 - X2 = d] for X1, X2 i.i.d. N_Z(0, sigma^2) (-inf beyond the truncation)."""
    r, g = _difference_table(sigma2)
    idx = np.asarray(d, dtype=np.int64) + 2 * r
    inside = (idx >= 0) & (idx < g.size)
    vals = np.full(idx.shape, -np.inf)
    with np.errstate(divide="ignore"):
        vals[inside] = np.log(g[idx[inside]])
    return vals


def v_log_pmf(sigma2: float, d: FloatArray) -> FloatArray:
    """log P[V - mu = d] for d of the parity class of d: g(d) + (g(d-1) + g(d+1)) / 2."""
    a = difference_log_pmf(sigma2, d)
    b = difference_log_pmf(sigma2, d - 1)
    c = difference_log_pmf(sigma2, d + 1)
    return np.logaddexp(a, np.logaddexp(b, c) - math.log(2.0))


@lru_cache(maxsize=4096)
def v_divergence(sigma2: float, delta: int, parity: int, alpha: float) -> float:
    """D_alpha(law of V at mu || law of V at mu - delta), V restricted to the class d = V - mu = parity (mod 2)."""
    if delta == 0:
        return 0.0
    r = _radius(sigma2)
    d = np.arange(-r + 2, r - 1, dtype=np.float64)
    d = d[(d.astype(np.int64) - parity) % 2 == 0]
    lp = v_log_pmf(sigma2, d)
    lq = v_log_pmf(sigma2, d + delta)  # V = mu + d = (mu - delta) + (d + delta)
    keep = np.isfinite(lp) & np.isfinite(lq)
    return float(_special.logsumexp(alpha * lp[keep] + (1.0 - alpha) * lq[keep])) / (alpha - 1.0)


def _bracket(alpha: float, lower: float, upper: float, histograms: float) -> ExactLoss:
    """D_alpha of the released synthetic data lies in [lower, upper]; ``parts["histograms"]``: the noisy-histogram
    level."""
    return ExactLoss(lower, upper, "released synthetic data", {"histograms": histograms}, Measure.ZCDP, alpha)


@lru_cache(maxsize=4096)
def _renyi_dg(sigma2: float, d: int, alpha: float) -> float:
    """D_alpha(N_Z(0, sigma^2) || N_Z(d, sigma^2)) by the audit engine's exact summation (cached)."""
    return renyi_shift(NoiseLaw.discrete_gaussian(sigma2), float(d), alpha)


def _first_step(sigma2: float, shift: Sequence[int], alpha: float) -> float:
    return float(sum(_renyi_dg(sigma2, int(d), alpha) for d in shift if d != 0))


def _step_terms(sigma2: float, mu_shift: Sequence[int], alpha: float) -> tuple[float, float]:
    lo = hi = 0.0
    for delta in mu_shift:
        if delta:
            vals = [v_divergence(sigma2, int(delta), c, alpha) for c in (0, 1)]
            lo += min(vals)
            hi += max(vals)
    return lo, hi


def output_renyi_bracket(
    f: npt.ArrayLike, f_prime: npt.ArrayLike, T: int, k: int, sigma2: float, alpha: float
) -> ExactLoss:
    """D_alpha(release | f || release | f') for two n x T (or n' x T) matrices: bracket and histogram level."""
    T, k = validate_horizon_window(T, k)
    if not alpha > 1.0:
        raise DPStreamInputError("alpha", "must be > 1", alpha)
    A = np.asarray(f, dtype=np.int64).reshape(-1, T)
    B = np.asarray(f_prime, dtype=np.int64).reshape(-1, T)
    hists = [window_histogram(A, t, k) - window_histogram(B, t, k) for t in range(k, T + 1)]
    level = float(sum(_renyi_dg(sigma2, int(d), alpha) for h in hists for d in h if d != 0))
    first = _first_step(sigma2, [int(d) for d in hists[0]], alpha)
    lo = hi = first
    O = 2 ** (k - 1)
    for h in hists[1:]:
        mu_shift = [int(h[2 * z] - h[2 * z + 1]) for z in range(O)]
        a, b = _step_terms(sigma2, mu_shift, alpha)
        lo += a
        hi += b
    return _bracket(alpha, lo, hi, level)


def worst_pair_bracket(
    T: int, k: int, sigma2: float, alpha: float, *, substitute: bool = True
) -> tuple[ExactLoss, tuple[int, ...], tuple[int, ...] | None]:
    """Largest bracket over all neighbouring pairs, by dynamic programming over windows.

    Substitution: one individual's sequence x (in f) replaced by x' (in f'), over all ordered
    pairs x, x' in {0,1}^T; the divergences depend only on (x, x'). Add/remove: f and f' differ by
    the sequence x, present in f (sign +1) or in f' (sign -1); both directions are searched.
    Returns (bracket with the maxima of lower, upper and histogram level, each maximised on its own),
    the x and x' maximising the lower end (x' is None for add/remove).
    """
    T, k = validate_horizon_window(T, k)
    results = [_worst_pair_dp(T, k, sigma2, alpha, substitute, sign) for sign in ((1,) if substitute else (1, -1))]
    lower = max(results, key=lambda r: r[0].lower)
    bracket = _bracket(alpha, lower[0].lower, max(r[0].upper for r in results),
                       max(r[0].parts["histograms"] for r in results))
    return bracket, lower[1], lower[2]


def _worst_pair_dp(
    T: int, k: int, sigma2: float, alpha: float, substitute: bool, sign: int
) -> tuple[ExactLoss, tuple[int, ...], tuple[int, ...] | None]:
    r1 = _renyi_dg(sigma2, 1, alpha)
    W = 2**k
    dv = {(d, c): v_divergence(sigma2, d, c, alpha) for d in (-2, -1, 1, 2) for c in (0, 1)}
    dmin = {d: min(dv[(d, 0)], dv[(d, 1)]) for d in (-2, -1, 1, 2)}
    dmax = {d: max(dv[(d, 0)], dv[(d, 1)]) for d in (-2, -1, 1, 2)}

    def effect(w: int) -> tuple[int, int]:
        return w // 2, (1 if w % 2 == 0 else -1)  # (z, effect of the window on mu_z = C_{z0} - C_{z1})

    def gains(w: int, w2: int, first: bool) -> tuple[float, float, float]:
        if w2 < 0:  # add/remove: the window of x is present in f (sign +1) or in f' (sign -1)
            if first:
                return r1, r1, r1
            d = sign * effect(w)[1]
            return dmin[d], dmax[d], r1
        if w == w2:
            return 0.0, 0.0, 0.0
        if first:
            return 2 * r1, 2 * r1, 2 * r1
        (z, a), (z2, b) = effect(w), effect(w2)
        if z == z2:
            return dmin[a - b], dmax[a - b], 2 * r1
        return dmin[a] + dmin[-b], dmax[a] + dmax[-b], 2 * r1

    def bits(w: int) -> tuple[int, ...]:
        return tuple((w >> (k - 1 - j)) & 1 for j in range(k))

    states = [(w, w2) for w in range(W) for w2 in range(W)] if substitute else [(w, -1) for w in range(W)]
    best: dict[tuple[int, int], tuple[float, tuple[int, ...], tuple[int, ...]]] = {}
    up: dict[tuple[int, int], float] = {}
    hist: dict[tuple[int, int], float] = {}
    for w, w2 in states:
        g = gains(w, w2, True)
        best[(w, w2)] = (g[0], bits(w), bits(w2) if w2 >= 0 else ())
        up[(w, w2)], hist[(w, w2)] = g[1], g[2]
    for _ in range(k + 1, T + 1):
        nbest: dict[tuple[int, int], tuple[float, tuple[int, ...], tuple[int, ...]]] = {}
        nup: dict[tuple[int, int], float] = {}
        nhist: dict[tuple[int, int], float] = {}
        for (w, w2), (lo, p1, p2) in best.items():
            for a in (0, 1):
                for b in ((0, 1) if w2 >= 0 else (-1,)):
                    key = ((w * 2 + a) % W, (w2 * 2 + b) % W if w2 >= 0 else -1)
                    g = gains(key[0], key[1], False)
                    cand = lo + g[0]
                    if key not in nbest or cand > nbest[key][0]:
                        nbest[key] = (cand, (*p1, a), (*p2, b) if w2 >= 0 else ())
                    nup[key] = max(nup.get(key, -math.inf), up[(w, w2)] + g[1])
                    nhist[key] = max(nhist.get(key, -math.inf), hist[(w, w2)] + g[2])
        best, up, hist = nbest, nup, nhist
    key = max(best, key=lambda s: best[s][0])
    lo, x, x2 = best[key]
    return _bracket(alpha, lo, max(up.values()), max(hist.values())), x, (x2 if substitute else None)


def output_log_likelihood(p_history: Sequence[npt.ArrayLike], C_history: Sequence[npt.ArrayLike],
                          n_pad: int, sigma2: float) -> float:
    """log P[target sequence p^k, ..., p^t | true histograms C^k, ..., C^t] of 002-alg1 (exact, truncated support).

    The record choices are uniform given the targets, so this is the log-likelihood of the whole
    release up to a term that does not depend on the data (the log-likelihood ratio between two
    inputs is exact).
    """
    law = NoiseLaw.discrete_gaussian(sigma2)
    p0 = np.asarray(p_history[0], dtype=np.int64)
    C0 = np.asarray(C_history[0], dtype=np.int64)
    total = float(law.log_pdf((p0 - C0 - n_pad).astype(np.float64)).sum())
    for prev_p, p, C in zip(p_history[:-1], p_history[1:], C_history[1:], strict=False):
        prev = np.asarray(prev_p, dtype=np.int64)
        cur = np.asarray(p, dtype=np.int64)
        Cc = np.asarray(C, dtype=np.int64)
        O = cur.size // 2
        V = cur[0::2] - cur[1::2]
        mu = Cc[0::2] - Cc[1::2]
        M = prev[:O] + prev[O:]
        if np.any((V - M) % 2 != 0):
            return -math.inf
        total += float(v_log_pmf(sigma2, (V - mu).astype(np.float64)).sum())
    return total


# --- cumulative time --------------------------------------------------------------------------------


def z_vector(matrix: npt.ArrayLike, T: int) -> FloatArray:
    """The stacked counter streams (z_1^1..z_1^T, z_2^2..z_2^T, ..., z_T^T) of an n x T matrix."""
    m = np.asarray(matrix, dtype=np.int64).reshape(-1, T)
    before = np.zeros(m.shape[0], dtype=np.int64)
    z = np.zeros((T + 1, T + 1), dtype=np.int64)
    for t in range(1, T + 1):
        reach = np.bincount(before[m[:, t - 1] == 1], minlength=T + 1)
        for b in range(1, t + 1):
            z[b, t] = reach[b - 1]
        before = before + m[:, t - 1]
    return np.concatenate([z[b, b:T + 1] for b in range(1, T + 1)]).astype(np.float64)


def cumulative_model(T: int, counter_rho: Sequence[float]) -> LinearReleaseModel:
    """The T tree-aggregation counters of 002-alg2 as one linear model on :func:`z_vector`.

    Term sites are the scoped counter sites ``"002-alg2 u5 b=<b> / 002-alg3 u8 t=<u>"``; release
    order matches ``CumulativeRelease.S_tilde`` flattened over t (t = 1..T, b = 1..t).
    """
    if len(counter_rho) != T:
        raise DPStreamInputError("counter_rho", f"must hold T = {T} budgets", len(counter_rho))
    offsets: list[int] = []
    terms: list[tuple[str, NoiseLaw, dict[int, float]]] = []
    term_offset: list[int] = []
    models: list[LinearReleaseModel] = []
    start = 0
    for b in range(1, T + 1):
        model = tree_aggregation_model(counter_rho[b - 1], T - b + 1)
        models.append(model)
        offsets.append(start)
        term_offset.append(len(terms))
        prefix = site("002-alg2 u5", b=b) + " / "
        for j, (s, law) in enumerate(zip(model.sites, model.laws, strict=True)):
            weights = {start + i: float(w) for i, w in enumerate(model.statistics[j]) if w != 0.0}
            terms.append((prefix + s, law, weights))
        start += T - b + 1
    releases: list[dict[int, float]] = []
    for t in range(1, T + 1):
        for b in range(1, t + 1):
            row = models[b - 1].combination[t - b]
            releases.append({term_offset[b - 1] + j: float(w) for j, w in enumerate(row) if w != 0.0})
    return LinearReleaseModel.build(terms, releases, start)


def _reach_times(x: Sequence[int], T: int) -> list[int | None]:
    """tau_b(x) for b = 1..T: the round at which the weight of x reaches b (None if never)."""
    out: list[int | None] = [None] * T
    w = 0
    for t, bit in enumerate(x, start=1):
        w += int(bit)
        if bit and out[w - 1] is None:
            out[w - 1] = t
    return out


def cumulative_worst_pair(T: int, counter_rho: Sequence[float], alpha: float
                          ) -> tuple[float, tuple[int, ...], tuple[int, ...]]:
    """max over x, x' in {0,1}^T of D_alpha(counters | x || counters | x') (exhaustive; T <= 10).

    One individual enters counter b's stream once, at its reach time tau_b (local time tau_b - b + 1),
    so the divergence is sum_b D_b(tau_b(x), tau_b(x')), tabulated per counter from its linear model.
    """
    if T > 10:
        raise DPStreamInputError("T", "exhaustive search over 4^T pairs needs T <= 10", T)
    if len(counter_rho) != T:
        raise DPStreamInputError("counter_rho", f"must hold T = {T} budgets", len(counter_rho))
    tables: list[dict[tuple[int | None, int | None], float]] = []
    for b in range(1, T + 1):
        model = tree_aggregation_model(counter_rho[b - 1], T - b + 1)
        times: list[int | None] = [None, *range(b, T + 1)]

        def stream(tau: int | None, b: int = b) -> FloatArray:
            v = np.zeros(T - b + 1)
            if tau is not None:
                v[tau - b] = 1.0
            return v

        tables.append({(u, v): (linear_renyi(model, stream(u), stream(v), alpha) if u != v else 0.0)
                       for u in times for v in times})
    seqs = [tuple(bits) for bits in itertools.product((0, 1), repeat=T)]
    reach = {x: _reach_times(x, T) for x in seqs}
    best: tuple[float, tuple[int, ...], tuple[int, ...]] = (-math.inf, (), ())
    for x, y in itertools.product(seqs, repeat=2):
        d = sum(tables[b][(reach[x][b], reach[y][b])] for b in range(T))
        if d > best[0]:
            best = (d, x, y)
    return best
