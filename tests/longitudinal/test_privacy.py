"""Exact privacy of 002-alg1 / 002-alg2 on concrete neighbours: brute-force enumeration, the worst-pair
search, and the claims of the paper's setting (E-longitudinal-1, E-longitudinal-7)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy.special import logsumexp

from dpstream.audit.exact import linear_renyi
from dpstream.audit.linear_model import NoiseLaw
from dpstream.audit.longitudinal.loss import (
    cumulative_model,
    cumulative_worst_pair,
    fixed_window_histogram_model,
    histogram_vector,
    output_log_likelihood,
    output_renyi_bracket,
    worst_pair_bracket,
    z_vector,
)
from dpstream.insecure import InsecureSeededNoise, TapeRecorder
from dpstream.longitudinal.bounds import fixed_window_sigma2, rho_b_allocation
from dpstream.longitudinal.cumulative import CumulativeSynthesizer
from dpstream.longitudinal.data import window_histogram
from dpstream.longitudinal.generators import random_matrix


def _release_law_k1(X: np.ndarray, T: int, sigma2: float, radius: int) -> dict[tuple[int, ...], float]:
    """Exact law of (p^1, ..., p^T) of 002-alg1 with k = 1 by enumerating noise in [-radius, radius] and coins."""
    law = NoiseLaw.discrete_gaussian(sigma2)
    vals = np.arange(-radius, radius + 1)
    logp = law.log_pdf(vals.astype(np.float64))
    grids = np.array(list(itertools.product(range(vals.size), repeat=2 * T)), dtype=np.int64)
    noise = vals[grids]  # (N, 2T): step r uses columns 2r, 2r+1
    logw = logp[grids].sum(axis=1)
    C = [window_histogram(X, t, 1) for t in range(1, T + 1)]
    p0 = C[0][0] + noise[:, 0]
    p1 = C[0][1] + noise[:, 1]
    rows = [(p0, p1, logw, [p0, p1])]
    for r in range(1, T):
        new_rows = []
        for a, b, w, history in rows:
            c0 = C[r][0] + noise[:, 2 * r]
            c1 = C[r][1] + noise[:, 2 * r + 1]
            D = (a + b) - (c0 + c1)
            even = D % 2 == 0
            for coin in (1, -1):
                up = np.where(even, c0 + D // 2, c0 + (D + coin) // 2)
                # D even: one branch (coin +1) with the full weight; D odd: two branches of weight 1/2
                ww = np.where(even, w if coin == 1 else -np.inf, w + math.log(0.5))
                new_rows.append((up, (a + b) - up, ww, [*history, up]))
        rows = new_rows
    out: dict[tuple[int, ...], float] = {}
    for _a, _b, w, history in rows:
        keys = np.column_stack(history)
        keep = np.isfinite(w)
        uniq, inv = np.unique(keys[keep], axis=0, return_inverse=True)
        acc = np.full(uniq.shape[0], -np.inf)
        np.logaddexp.at(acc, inv.ravel(), w[keep])
        for key, value in zip(map(tuple, uniq.tolist()), acc, strict=True):
            out[key] = float(np.logaddexp(out.get(key, -np.inf), value))
    return out


def _renyi(P: dict[tuple[int, ...], float], Q: dict[tuple[int, ...], float], alpha: float) -> float:
    terms = [alpha * lp + (1 - alpha) * Q[key] for key, lp in P.items()]
    return float(logsumexp(terms)) / (alpha - 1)


@pytest.mark.parametrize(("T", "sigma2", "alpha"), [(2, 0.4, 1.5), (2, 0.4, 3.0), (3, 0.2, 2.0)])
def test_bracket_contains_brute_force_divergence(T: int, sigma2: float, alpha: float) -> None:
    """The law of the released targets, enumerated, has D_alpha inside [lower, upper] (k = 1).

    P is enumerated with noise in [-r, r] and Q in [-(r+2), r+2] (T = 2) or [-(r+1), r+1] (T = 3); the
    noise left out has probability below 1e-9 per draw, far below the tolerance 1e-3.
    """
    X = np.array([[0] * T, [1] * T, [0, 1, 1][:T]], dtype=np.int64)
    Y = X.copy()
    Y[0] = [1, 0, 1][:T]
    r = 4 if T == 2 else 2
    P = _release_law_k1(X, T, sigma2, r)
    Q = _release_law_k1(Y, T, sigma2, r + 2 if T == 2 else r + 1)
    exact = _renyi(P, Q, alpha)
    bracket = output_renyi_bracket(X, Y, T, 1, sigma2, alpha)
    assert bracket.lower - 1e-3 <= exact <= bracket.upper + 1e-3
    assert bracket.upper <= bracket.parts["histograms"] + 1e-9  # the synthetic data leak no more than the histograms


def test_histogram_level_matches_closed_form() -> None:
    T, k, sigma2 = 6, 2, 40.0
    model = fixed_window_histogram_model(T, k, sigma2)
    X = random_matrix(7, T, seed=3)
    Y = X.copy()
    Y[2] = 1 - Y[2]  # substitution: the complement differs in every window
    d = histogram_vector(X, T, k) - histogram_vector(Y, T, k)
    assert float(d @ d) == 2 * (T - k + 1)
    for alpha in (1.5, 4.0):
        assert linear_renyi(model, histogram_vector(X, T, k), histogram_vector(Y, T, k), alpha) == pytest.approx(
            alpha * float(d @ d) / (2 * sigma2), rel=1e-9)


def test_worst_pair_dp_matches_exhaustive_search() -> None:
    T, k, sigma2, alpha = 4, 2, 3.0, 2.0
    bracket, x, y = worst_pair_bracket(T, k, sigma2, alpha)
    base = random_matrix(3, T, seed=1)
    best_lower = best_upper = best_hist = -math.inf
    for a in itertools.product((0, 1), repeat=T):
        for b in itertools.product((0, 1), repeat=T):
            X = np.vstack([base, a])
            Y = np.vstack([base, b])
            br = output_renyi_bracket(X, Y, T, k, sigma2, alpha)
            best_lower = max(best_lower, br.lower)
            best_upper = max(best_upper, br.upper)
            best_hist = max(best_hist, br.parts["histograms"])
    assert bracket.lower == pytest.approx(best_lower, rel=1e-12)
    assert bracket.upper == pytest.approx(best_upper, rel=1e-12)
    assert bracket.parts["histograms"] == pytest.approx(best_hist, rel=1e-12)
    assert y is not None
    concrete = output_renyi_bracket(np.vstack([base, x]), np.vstack([base, y]), T, k, sigma2, alpha)
    assert concrete.lower == pytest.approx(bracket.lower, rel=1e-12)


def test_paper_setting_claims() -> None:
    """T = 12, k = 3, rho = 0.005: printed variance fails Theorem 3.1 under substitution, holds under add/remove."""
    T, k, rho = 12, 3, 0.005
    printed = fixed_window_sigma2(T, k, rho, as_printed=True)
    default = fixed_window_sigma2(T, k, rho)
    for alpha in (1.25, 2.0, 16.0, 64.0):
        sub, _, _ = worst_pair_bracket(T, k, printed, alpha)
        assert sub.parts["histograms"] / alpha == pytest.approx(2 * rho, rel=1e-6)
        assert sub.lower / alpha > 1.39 * rho  # the released synthetic data alone exceed rho
        ar, _, _ = worst_pair_bracket(T, k, printed, alpha, substitute=False)
        assert ar.parts["histograms"] / alpha == pytest.approx(rho, rel=1e-6) and ar.upper <= ar.parts["histograms"]
        fixed, _, _ = worst_pair_bracket(T, k, default, alpha)
        assert fixed.parts["histograms"] / alpha == pytest.approx(rho, rel=1e-6) and fixed.upper <= alpha * rho


def test_output_log_likelihood_of_runs() -> None:
    T, k, n_pad = 6, 2, 30
    X = random_matrix(20, T, seed=4)
    Y = X.copy()
    Y[0] = 1 - Y[0]
    from dpstream.longitudinal.fixed_window import FixedWindowSynthesizer

    synth = FixedWindowSynthesizer(T, k, 2.0, noise=InsecureSeededNoise(4), n_pad=n_pad)
    synth.run(X)
    CX = [window_histogram(X, t, k) for t in range(k, T + 1)]
    CY = [window_histogram(Y, t, k) for t in range(k, T + 1)]
    lx = output_log_likelihood(synth.p_history, CX, n_pad, synth.sigma2)
    ly = output_log_likelihood(synth.p_history, CY, n_pad, synth.sigma2)
    assert math.isfinite(lx) and math.isfinite(ly)
    broken = [p.copy() for p in synth.p_history]
    broken[1] = broken[1].copy()
    broken[1][0] += 1  # breaks the parity of p_{00} + p_{01}: impossible under the algorithm
    broken[1][1] += 0
    assert output_log_likelihood(broken, CX, n_pad, synth.sigma2) == -math.inf


def test_cumulative_model_replays_counters() -> None:
    T = 6
    X = random_matrix(30, T, seed=8)
    recorder = TapeRecorder(InsecureSeededNoise(8))
    synth = CumulativeSynthesizer(T, 1.0, noise=recorder)
    releases = synth.run(X)
    model = cumulative_model(T, synth.counter_rho)
    noise = {d.site: float(d.value) for d in recorder.tape if " u5 " in d.site}
    predicted = model.mean(z_vector(X, T)) + model.error(noise)
    observed = np.concatenate([r.S_tilde for r in releases])
    assert np.allclose(predicted, observed)


def test_cumulative_substitution_cost() -> None:
    """Printed rho_b: worst substitution > rho (<= 2 rho); default rho_b / 2: <= rho. Exhaustive for T = 4."""
    T, rho, alpha = 4, 1.0, 2.0
    printed = rho_b_allocation(T, rho)
    worst, x, y = cumulative_worst_pair(T, printed, alpha)
    assert rho * alpha < worst <= 2 * rho * alpha
    halved = [r / 2 for r in printed]
    worst_default, _, _ = cumulative_worst_pair(T, halved, alpha)
    assert worst_default <= rho * alpha
    assert worst_default == pytest.approx(worst / 2, rel=1e-6)
    assert x != y
