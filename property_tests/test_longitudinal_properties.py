"""Hypothesis properties of the longitudinal synthesizers (002-alg1, 002-alg2, Lemma 4.2)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from dpstream.longitudinal.categorical import CategoricalFixedWindowSynthesizer
from dpstream.longitudinal.cumulative import CumulativeSynthesizer, monotonize
from dpstream.longitudinal.data import window_histogram
from dpstream.longitudinal.fixed_window import FixedWindowSynthesizer, PaddingExhaustedError
from dpstream.noise import InsecureSeededNoise


@st.composite
def matrices(draw: st.DrawFn, max_n: int = 12, max_T: int = 7, alphabet: int = 2) -> np.ndarray:
    n = draw(st.integers(0, max_n))
    T = draw(st.integers(1, max_T))
    flat = draw(st.lists(st.integers(0, alphabet - 1), min_size=n * T, max_size=n * T))
    return np.asarray(flat, dtype=np.int64).reshape(n, T)


@settings(max_examples=60, deadline=None)
@given(X=matrices(), k_frac=st.floats(0, 1), seed=st.integers(0, 2**32 - 1),
       rho=st.sampled_from([0.05, 1.0, 50.0]), n_pad=st.integers(0, 12))
def test_fixed_window_invariants(X: np.ndarray, k_frac: float, seed: int, rho: float, n_pad: int) -> None:
    """Consistency, realisation, persistence, non-negativity; a padding failure releases nothing of its round.

    Small n_pad makes failures frequent on purpose: they must raise, never clamp.
    """
    T = X.shape[1]
    k = 1 + int(k_frac * (T - 1))
    synth = FixedWindowSynthesizer(T, k, rho, InsecureSeededNoise(seed), n_pad=n_pad)
    released: list[np.ndarray] = []
    for t in range(1, T + 1):
        before = synth.synthetic.copy()
        history = len(synth.p_history)
        try:
            release = synth.step(X[:, t - 1])
        except PaddingExhaustedError:
            assert np.array_equal(synth.synthetic, before) and len(synth.p_history) == history
            assert synth.t == t - 1
            return
        if t < k:
            assert release is None
            continue
        assert release is not None
        p = release.p
        assert p.min() >= 0
        S = synth.synthetic
        assert window_histogram(S, t, k).tolist() == p.tolist()  # the records realise p^t
        if t > k:
            assert np.array_equal(S[:, : t - 1], before)  # never rewritten
            prev = synth.p_history[-2]
            O = 2 ** (k - 1)
            for z in range(O):  # p_{z0}^t + p_{z1}^t = p_{0z}^{t-1} + p_{1z}^{t-1}
                assert p[2 * z] + p[2 * z + 1] == prev[z] + prev[O + z]
        released.append(release.columns.copy())
    # every released block is still what it was when released
    S = synth.synthetic
    assert np.array_equal(np.column_stack(released) if released else S, S)


@settings(max_examples=30, deadline=None)
@given(X=matrices(max_n=10, max_T=5, alphabet=3), seed=st.integers(0, 2**32 - 1))
def test_categorical_consistency(X: np.ndarray, seed: int) -> None:
    T = X.shape[1]
    k = min(2, T)
    synth = CategoricalFixedWindowSynthesizer(T, k, 5.0, 3, InsecureSeededNoise(seed), n_pad=15)
    before = synth.synthetic.copy()
    for t in range(1, T + 1):
        try:
            synth.step(X[:, t - 1])
        except PaddingExhaustedError:
            return
        if t > k:
            assert np.array_equal(synth.synthetic[:, : t - 1], before)  # records extended, never rewritten
        before = synth.synthetic.copy()
    O = 3 ** (k - 1)
    for t, p in enumerate(synth.p_history, start=k):
        assert window_histogram(synth.synthetic, t, k, 3).tolist() == p.tolist()
        if t > k:
            prev = synth.p_history[t - k - 1]
            for z in range(O):
                assert sum(p[z * 3 + c] for c in range(3)) == sum(prev[a * O + z] for a in range(3))


def _true_counts(X: np.ndarray) -> list[list[int]]:
    """S_b^t for t = 0..T, b = 0..T (S_b^t = #{weight after t rounds >= b})."""
    T = X.shape[1]
    out = []
    for t in range(T + 1):
        w = X[:, :t].sum(axis=1)
        out.append([int(np.count_nonzero(w >= b)) for b in range(T + 2)])
    return out


@settings(max_examples=200, deadline=None)
@given(X=matrices(max_n=15, max_T=7),
       noise=st.lists(st.integers(-30, 30) | st.floats(-1e6, 1e6, allow_nan=False), min_size=64, max_size=64))
def test_lemma_4_2_on_arbitrary_counter_outputs(X: np.ndarray, noise: list[float]) -> None:
    """Lemma 4.2 for any counter outputs S~ (adversarial, not noisy): the clamp never increases the l_inf error,
    and the clamped counts are monotone in t and bounded by the previous threshold's count."""
    n, T = X.shape
    S = _true_counts(X)
    S_hat = {(0, t): n for t in range(T + 1)}
    for b in range(1, T + 1):
        S_hat[(b, b - 1)] = 0  # nobody has weight b after b-1 rounds (exact)
    raw_err = 0.0
    it = iter(noise * 4)
    for t in range(1, T + 1):
        for b in range(1, t + 1):
            S_tilde = S[t][b] + next(it)
            value = monotonize(S_tilde, S_hat[(b, t - 1)], S_hat[(b - 1, t - 1)])
            S_hat[(b, t)] = value
            err = abs(value - S[t][b])
            # (10): |S^ - S| <= max{|S~ - S|, |S^_b^{t-1} - S_b^{t-1}|, |S^_{b-1}^{t-1} - S_{b-1}^{t-1}|}
            assert err <= max(abs(S_tilde - S[t][b]), abs(S_hat[(b, t - 1)] - S[t - 1][b]),
                              abs(S_hat[(b - 1, t - 1)] - S[t - 1][b - 1])) + 1e-9
            raw_err = max(raw_err, abs(S_tilde - S[t][b]))
            assert err <= raw_err + 1e-9  # corollary: max clamped error <= max raw error so far
            assert S_hat[(b, t - 1)] <= value <= S_hat[(b - 1, t - 1)]


@settings(max_examples=40, deadline=None)
@given(X=matrices(max_n=15, max_T=6), seed=st.integers(0, 2**32 - 1), rho=st.sampled_from([0.01, 1.0, 100.0]))
def test_cumulative_invariants(X: np.ndarray, seed: int, rho: float) -> None:
    """Monotone counts, realised exactly by the synthetic records, which are never rewritten."""
    n, T = X.shape
    synth = CumulativeSynthesizer(T, rho, InsecureSeededNoise(seed))
    previous_hat = [n]
    before = np.zeros((n, 0), dtype=np.int64)
    for t in range(1, T + 1):
        release = synth.step(X[:, t - 1])
        S_hat = release.S_hat.tolist()
        assert S_hat[0] == n
        for b in range(1, t + 1):
            assert S_hat[b] >= (previous_hat[b] if b < t else 0)  # monotone in t
            assert S_hat[b] <= previous_hat[b - 1]  # bounded by the previous threshold's count at t-1
        S = synth.synthetic
        weights = S.sum(axis=1)
        assert [int(np.count_nonzero(weights >= b)) for b in range(t + 1)] == S_hat
        if t > 1:
            assert np.array_equal(S[:, : t - 1], before)
        before, previous_hat = S, S_hat
