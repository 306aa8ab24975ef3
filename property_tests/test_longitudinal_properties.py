"""Hypothesis properties of the longitudinal synthesizers (002-alg1, 002-alg2, Lemma 4.2)."""

from __future__ import annotations

import contextlib
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from dpstream.audit.longitudinal.loss import cumulative_worst_pair
from dpstream.claims import Measure, Neighbour
from dpstream.insecure import InsecureSeededNoise, InsecureZeroNoise, TapeRecorder
from dpstream.longitudinal.bounds import (
    fixed_window_sigma2,
    levels,
    n_pad_corollary_3_3,
    n_pad_section_3_1,
    theorem_3_2_lambda,
)
from dpstream.longitudinal.categorical import CategoricalFixedWindowSynthesizer
from dpstream.longitudinal.cumulative import CumulativeSynthesizer, monotonize
from dpstream.longitudinal.data import window_histogram
from dpstream.longitudinal.fixed_window import FixedWindowSynthesizer, PaddingExhaustedError
from dpstream.longitudinal.propagation import error_propagation, rounding_sup
from dpstream.testing import pins
from dpstream.testing.strategies import horizons, rhos
from dpstream.testing.strategies import record_matrices as matrices

ONES = np.ones((3, 5), dtype=np.int64)


@pins("E-longitudinal-2", "E-longitudinal-3")
@settings(max_examples=60, deadline=None)
@given(X=matrices(), k_frac=st.floats(0, 1), seed=st.integers(0, 2**32 - 1),
       rho=st.sampled_from([0.05, 1.0, 50.0]), n_pad=st.integers(0, 12))
@example(X=ONES, k_frac=0.5, seed=0, rho=50.0, n_pad=12)  # n* = 3 + 8 * 12 synthetic records for n = 3 true ones
@example(X=ONES, k_frac=0.5, seed=0, rho=0.05, n_pad=0)   # the padding is exhausted at t = 3
def test_fixed_window_invariants(X: np.ndarray, k_frac: float, seed: int, rho: float, n_pad: int) -> None:
    """Consistency, realisation, persistence, non-negativity; a padding failure releases nothing of its round.

    Small n_pad makes failures frequent on purpose: they must raise, never clamp (E-longitudinal-3). u16/u17 act on
    the synthetic records, which realise p^t even when there are more of them than true ones (E-longitudinal-2).
    """
    T = X.shape[1]
    k = 1 + int(k_frac * (T - 1))
    synth = FixedWindowSynthesizer(T, k, rho, noise=InsecureSeededNoise(seed), n_pad=n_pad)
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
    synth = CategoricalFixedWindowSynthesizer(T, k, 5.0, 3, noise=InsecureSeededNoise(seed), n_pad=15)
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


@pins("E-longitudinal-9")
@settings(max_examples=40, deadline=None)
@given(X=matrices(max_n=15, max_T=6), seed=st.integers(0, 2**32 - 1), rho=st.sampled_from([0.01, 1.0, 100.0]))
@example(X=np.array([[1, 0, 1, 1], [0, 0, 1, 0], [1, 1, 1, 1]], dtype=np.int64), seed=0, rho=0.01)
def test_cumulative_invariants(X: np.ndarray, seed: int, rho: float) -> None:
    """Monotone counts, realised exactly by the synthetic records, which are never rewritten (u8 picks among the
    synthetic records of weight b-1, E-longitudinal-9: the true records' set would have the wrong size)."""
    n, T = X.shape
    synth = CumulativeSynthesizer(T, rho, noise=InsecureSeededNoise(seed))
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


# --- errata pinned: the property the default meets for every input, with the erratum's case as @example ----


@pins("E-longitudinal-1", "E-longitudinal-6")
@settings(max_examples=20, deadline=None)
@given(T=horizons(max_value=12), k_frac=st.floats(0, 1), rho=rhos(0.001, 10.0))
@example(T=12, k_frac=2 / 11, rho=0.005)
def test_fixed_window_variance_is_calibrated_for_substitution(T: int, k_frac: float, rho: float) -> None:
    """A substituted individual moves two bins per step (squared l2 sensitivity 2): the default per-bin variance
    Delta^2 (T-k+1)/(2 rho) = (T-k+1)/rho keeps the noisy histograms at rho-zCDP; the printed (T-k+1)/(2 rho)
    (Definition 2.2's unsquared Delta) gives 2 rho (0.01 at T = 12, k = 3, rho = 0.005)."""
    k = 1 + int(k_frac * (T - 1))
    R = T - k + 1
    for printed in (False, True):
        recorder = TapeRecorder(InsecureSeededNoise(0))
        synth = FixedWindowSynthesizer(T, k, rho, noise=recorder, n_pad=0, as_printed=printed)
        with contextlib.suppress(PaddingExhaustedError):  # the draws of round k come first
            for _ in range(k):
                synth.step(np.zeros(2, dtype=np.int64))
        assert len(recorder.tape) == 2**k
        (sigma2,) = {d.params["sigma2"] for d in recorder.tape}
        histograms_rho = R * 2.0 / (2.0 * sigma2)  # R steps, squared sensitivity 2 under substitution
        claim = synth.claims[Neighbour.INDIVIDUAL_SUBSTITUTE].parameter
        assert claim == pytest.approx(histograms_rho, rel=1e-12)
        assert histograms_rho == pytest.approx(2 * rho if printed else rho, rel=1e-12)


@pins("E-longitudinal-4")
@settings(max_examples=16, deadline=None)
@given(k=st.integers(1, 4), R=st.integers(1, 6))
@example(k=3, R=6)
def test_rounding_part_of_the_window_error_reaches_k_over_2(k: int, R: int) -> None:
    """A coin b_z drawn j < k steps back reaches a bin with weight 2^-j, and 2^j such coins exist: the rounding part
    of the error is at most min(k, R - 1)/2, attained (1.5 > the proof's 1/2 for k = 3)."""
    steps = error_propagation(k, R)
    worst = max(rounding_sup(e, 2) for row in steps for e in row)
    assert worst == Fraction(min(k, R - 1), 2)
    assert all(e.gauss_square_sum() == 1 for row in steps for e in row)  # Var = sigma^2 (covariances cancel)


@pins("E-longitudinal-5")
@settings(max_examples=30, deadline=None)
@given(T=horizons(max_value=40), k_frac=st.floats(0, 1), rho=rhos(0.001, 10.0), beta=st.floats(0.001, 0.5))
@example(T=12, k_frac=2 / 11, rho=0.005, beta=0.05)
def test_section_3_1_padding_solves_a_gaussian_tail(T: int, k_frac: float, rho: float, beta: float) -> None:
    """Section 3.1's n_pad = sqrt(R/rho log(2^k R/beta)) makes the Gaussian tail 2^k R exp(-n^2 rho/R) <= beta, not
    the printed linear-exponent tail 2^k R exp(-n rho/R) (which needs R/rho log(2^k R/beta)); the default, Corollary
    3.3's n_pad, is at least Theorem 3.2's lambda."""
    k = 1 + int(k_frac * (T - 1))
    R = T - k + 1
    n = n_pad_section_3_1(T, k, rho, beta)
    assert 2**k * R * math.exp(-(n**2) * rho / R) <= beta * (1 + 1e-9)
    linear_solution = R / rho * math.log(2**k * R / beta)
    assert (2**k * R * math.exp(-n * rho / R) <= beta * (1 + 1e-9)) == (n >= linear_solution * (1 - 1e-12))
    sigma2 = fixed_window_sigma2(T, k, rho)
    assert n_pad_corollary_3_3(sigma2, T, k, beta) >= theorem_3_2_lambda(sigma2, T, k, beta)


@pins("E-longitudinal-7")
@settings(max_examples=10, deadline=None)
@given(T=st.integers(1, 5), rho=rhos(0.001, 10.0))
@example(T=5, rho=1.0)
def test_cumulative_synthesizer_meets_rho_under_substitution(T: int, rho: float) -> None:
    """A substitution changes two entries of a counter's stream: the default halves each counter's rho_b, and the
    exact worst pair of records costs <= rho (D_2/2); the printed rho_b costs 1.2 rho at T = 5. Under add/remove
    the output size reveals n: not private."""
    default = CumulativeSynthesizer(T, rho, noise=InsecureZeroNoise())
    printed = CumulativeSynthesizer(T, rho, noise=InsecureZeroNoise(), as_printed=True)
    worst, _, _ = cumulative_worst_pair(T, default.counter_rho, 2.0)
    assert worst / 2 <= rho * (1 + 1e-9)
    assert default.claims[Neighbour.INDIVIDUAL_ADD_REMOVE].measure is Measure.NOT_PRIVATE
    printed_worst, _, _ = cumulative_worst_pair(T, printed.counter_rho, 2.0)
    assert printed_worst == pytest.approx(2 * worst, rel=1e-9)
    if (T, rho) == (5, 1.0):
        assert printed_worst / 2 == pytest.approx(1.2, rel=1e-9)


@pins("E-longitudinal-8")
@settings(max_examples=40, deadline=None)
@given(X=matrices(max_n=12, max_T=7))
@example(X=np.array([[1, 1, 0], [0, 1, 1], [0, 0, 0]], dtype=np.int64))
def test_cumulative_counts_are_exact_without_noise(X: np.ndarray) -> None:
    """b runs over 1..t with S^_0 = n and S^_b^(b-1) = 0 exact: without noise every released S^_b^t equals
    S_b^t = #{i : x_i^1 + ... + x_i^t >= b} (the printed b = 0 and the missing initial values need no counter)."""
    T = X.shape[1]
    synth = CumulativeSynthesizer(T, 1.0, noise=InsecureZeroNoise())
    for t in range(1, T + 1):
        release = synth.step(X[:, t - 1])
        weights = X[:, :t].sum(axis=1)
        assert release.S_hat.tolist() == [int(np.count_nonzero(weights >= b)) for b in range(t + 1)]


@pins("E-longitudinal-10")
@settings(max_examples=20, deadline=None)
@given(T=horizons(max_value=33), rho=rhos(0.01, 10.0))
@example(T=8, rho=1.0)
def test_cumulative_counters_use_the_trees_true_level_count(T: int, rho: float) -> None:
    """Counter b (horizon T_b = T - b + 1) draws N_Z(0, (floor(log2 T_b) + 1)/(2 rho_b')): one term per level of
    its tree, which at powers of two is one more than Appendix B's L_b = ceil(log2 T_b) (T_b = 8: 4 vs 3)."""
    recorder = TapeRecorder(InsecureSeededNoise(0))
    synth = CumulativeSynthesizer(T, rho, noise=recorder)
    for _ in range(T):
        synth.step(np.ones(1, dtype=np.int64))
    sigma2 = {d.site.split(" / ")[0]: d.params["sigma2"] for d in recorder.tape if "002-alg3" in d.site}
    assert len(sigma2) == T
    for b, (scope, s2) in enumerate(sorted(sigma2.items(), key=lambda kv: int(kv[0].split("b=")[1])), start=1):
        T_b = T - b + 1
        assert f"b={b}" in scope
        assert s2 == pytest.approx((math.floor(math.log2(T_b)) + 1) / (2 * synth.counter_rho[b - 1]), rel=1e-12)
        if T_b > 1 and T_b & (T_b - 1) == 0:
            assert math.floor(math.log2(T_b)) + 1 == levels(T_b) + 1
