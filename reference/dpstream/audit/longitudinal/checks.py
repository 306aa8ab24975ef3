"""Audit checks specific to the longitudinal synthesizers, built on the engine's primitives.

The audit engine (``dpstream.audit``) covers linear release models; Algorithm 1's release is
not one (the synthetic data discard part of the noisy histograms), so this module adds:

* :func:`fixed_window_exact_output` — exact loss of the *released synthetic data* over all
  neighbouring pairs (the bracket of :mod:`dpstream.audit.longitudinal.loss`); fails only when the
  lower end exceeds the claim, passes only when the upper end is within it.
* :func:`FixedWindowLLR` — the exact log-likelihood ratio of a transcript (black-box score).
* :func:`fixed_window_calibration` — the first histogram's noise against N_Z(0, sigma^2) and
  the later steps' residuals V - mu against their exact law (chi-square), Bonferroni.
* :func:`theorem_3_2_accuracy` / :func:`cumulative_accuracy` — the joint events of Theorem 3.2
  and Corollary B.1 (max over all bins / thresholds and times) through ``accuracy_check``.

Transcripts are lists of releases, as the audit protocol defines: ``WindowRelease | None`` per
step for Algorithm 1, ``CumulativeRelease`` for Algorithm 2.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from dpstream.audit.accuracy import AccuracyBound, accuracy_check
from dpstream.audit.calibration import chi_square_pvalue, marginal_pvalue
from dpstream.audit.exact import DEFAULT_ALPHAS
from dpstream.audit.linear_model import NoiseLaw
from dpstream.audit.longitudinal.loss import output_log_likelihood, v_log_pmf, worst_pair_bracket
from dpstream.audit.protocol import Encoder, Transcript
from dpstream.audit.registry import CheckKind, CheckResult
from dpstream.claims import Neighbour, PrivacyClaim
from dpstream.longitudinal.data import window_histogram

__all__ = [
    "FixedWindowLLR",
    "cumulative_accuracy",
    "cumulative_error",
    "fixed_window_calibration",
    "fixed_window_exact_output",
    "p_history",
    "theorem_3_2_accuracy",
    "theorem_3_2_error",
]

FloatArray = npt.NDArray[np.float64]


def p_history(transcript: Transcript) -> list[npt.NDArray[np.int64]]:
    """The targets p^k, p^{k+1}, ... of an Algorithm 1 transcript (releases of rounds t >= k)."""
    return [np.asarray(r.p, dtype=np.int64) for r in transcript if r is not None]


def _histories(X: npt.ArrayLike, T: int, k: int, alphabet: int = 2) -> list[npt.NDArray[np.int64]]:
    m = np.asarray(X, dtype=np.int64)
    return [window_histogram(m, t, k, alphabet) for t in range(k, T + 1)]


def fixed_window_exact_output(T: int, k: int, sigma2: float, claim: PrivacyClaim,
                              alphas: Sequence[float] = DEFAULT_ALPHAS) -> CheckResult:
    """Exact D_alpha of Algorithm 1's synthetic data over all pairs of the claim's relation (DP search)."""
    substitute = claim.neighbour is Neighbour.INDIVIDUAL_SUBSTITUTE
    lows, highs, hists = [], [], []
    worst: tuple[tuple[int, ...], tuple[int, ...] | None] = ((), None)
    best = -math.inf
    for a in alphas:
        bracket, x, y = worst_pair_bracket(T, k, sigma2, a, substitute=substitute)
        lows.append(bracket.lower / a)
        highs.append(bracket.upper / a)
        hists.append(bracket.parts["histograms"] / a)
        if bracket.lower / a > best:
            best, worst = bracket.lower / a, (x, y)
    lo, hi, hist = max(lows), max(highs), max(hists)
    rho = claim.parameter
    passed: bool | None = True if hi <= rho * (1 + 1e-9) else (False if lo > rho * (1 + 1e-9) else None)
    pair = f"x={''.join(map(str, worst[0]))}" + (f", x'={''.join(map(str, worst[1]))}" if worst[1] else "")
    detail = (f"released synthetic data, all {'substitution' if substitute else 'add/remove'} pairs (T={T}, k={k}): "
              f"max_alpha D_alpha/alpha in [{lo:.6g}, {hi:.6g}] (worst {pair}); noisy histograms {hist:.6g}; "
              f"claim rho = {rho:g}")
    data = {"alphas": list(alphas), "lower": lows, "upper": highs, "histograms": hists, "worst_pair": pair,
            "method": "chain-rule bracket over the released targets, DP over window pairs"}
    return CheckResult(CheckKind.EXACT_LOSS, passed, lo if passed is False else hi, rho, detail, data)


class FixedWindowLLR:
    """log p(transcript | f) - log p(transcript | f') for Algorithm 1 (exact up to data-free choices)."""

    def __init__(self, f: npt.ArrayLike, f_prime: npt.ArrayLike, T: int, k: int, n_pad: int, sigma2: float) -> None:
        self.cf, self.cg = _histories(f, T, k), _histories(f_prime, T, k)
        self.n_pad, self.sigma2 = n_pad, sigma2

    def __call__(self, transcript: Transcript) -> float:
        p = p_history(transcript)
        a = output_log_likelihood(p, self.cf, self.n_pad, self.sigma2)
        b = output_log_likelihood(p, self.cg, self.n_pad, self.sigma2)
        if a == b:
            return 0.0
        return a - b


def fixed_window_calibration(transcripts: Sequence[Transcript], X: npt.ArrayLike, T: int, k: int, n_pad: int,
                             sigma2: float, level: float) -> CheckResult:
    """Noise of the first histogram vs N_Z(0, sigma^2) (per bin and pooled) and V - mu vs its exact law per class."""
    C = _histories(X, T, k)
    law = NoiseLaw.discrete_gaussian(sigma2)
    first = np.array([p_history(t)[0] - C[0] - n_pad for t in transcripts], dtype=np.float64)
    tests: list[tuple[float, str]] = []
    for s in range(first.shape[1]):
        p, text = marginal_pvalue(law, first[:, s])
        tests.append((p, f"t=k bin {s}: {text}"))
    p, text = marginal_pvalue(law, first.ravel())
    tests.append((p, f"t=k pooled: {text}"))
    residuals: dict[int, list[int]] = {0: [], 1: []}
    for tr in transcripts:
        hist = p_history(tr)
        for prev, cur, Ct in zip(hist[:-1], hist[1:], C[1:], strict=False):
            O = cur.size // 2
            V = cur[0::2] - cur[1::2]
            mu = Ct[0::2] - Ct[1::2]
            M = prev[:O] + prev[O:]
            for r, c in zip(V - mu, (M - mu) % 2, strict=True):
                residuals[int(c)].append(int(r))
    for c, values in residuals.items():
        if not values:
            continue
        radius = math.ceil(40 * math.sqrt(sigma2)) + 3
        support = np.arange(-radius, radius + 1)
        support = support[(support - c) % 2 == 0]
        prob = np.exp(v_log_pmf(sigma2, support.astype(np.float64)))
        idx = np.clip(np.searchsorted(support, np.asarray(values)), 0, support.size - 1)
        bad = np.asarray(values)[(np.asarray(values) - c) % 2 != 0]
        if bad.size:
            tests.append((0.0, f"t>k class {c}: residual of the wrong parity"))
            continue
        counts = np.bincount(idx, minlength=support.size)
        p, stat, dof = chi_square_pvalue(counts.tolist(), prob.tolist())
        tests.append((p, f"t>k residuals V - mu, class {c} ({len(values)} values): chi2={stat:.1f} (dof {dof})"))
    j = int(np.argmin([p for p, _ in tests]))
    adjusted = min(1.0, tests[j][0] * len(tests))
    passed = adjusted > level
    detail = (f"{len(transcripts)} runs, {len(tests)} tests (Bonferroni); smallest p = {tests[j][0]:.3g} at "
              f"{tests[j][1]}; adjusted p = {adjusted:.3g} vs level {level:.2g}")
    return CheckResult(CheckKind.CALIBRATION, passed, adjusted, level, detail,
                       {"p_values": [p for p, _ in tests], "tests": [name for _, name in tests]})


def theorem_3_2_error(X: npt.ArrayLike, T: int, k: int, n_pad: int, alphabet: int = 2) -> Encoder:
    """Encoder: transcript -> [max_{s,t} |p_s^t - (C_s^t + n_pad)|] (Theorem 3.2's left-hand side)."""
    C = _histories(X, T, k, alphabet)

    def encode(transcript: Sequence[Any]) -> FloatArray:
        p = p_history(list(transcript))
        return np.array([max(float(np.abs(a - c - n_pad).max()) for a, c in zip(p, C, strict=True))])

    return encode


def theorem_3_2_accuracy(transcripts: Sequence[Transcript], X: npt.ArrayLike, T: int, k: int, n_pad: int,
                         lam: float, beta: float, level: float, name: str = "002-thm3.2 eq (5) as printed",
                         alphabet: int = 2) -> CheckResult:
    """P[max_{s,t} |p - (C + n_pad)| > lambda] <= beta, with a Clopper-Pearson lower bound at ``level``.

    ``alphabet`` > 2: the categorical extension (the bound is then ours, not the paper's).
    """
    encode = theorem_3_2_error(X, T, k, n_pad, alphabet)
    return accuracy_check(transcripts, [0.0], AccuracyBound(name, beta, (lam,)), level, encode=encode)


def cumulative_error(X: npt.ArrayLike) -> Encoder:
    """Encoder: transcript -> [max_{b <= t} |S^_b^t - S_b^t|] (counts) for Algorithm 2."""
    m = np.asarray(X, dtype=np.int64)

    def encode(transcript: Sequence[Any]) -> FloatArray:
        worst = 0
        for t, release in enumerate(transcript, start=1):
            w = m[:, :t].sum(axis=1)
            S = np.array([np.count_nonzero(w >= b) for b in range(t + 1)])
            worst = max(worst, int(np.abs(np.asarray(release.S_hat) - S).max()))
        return np.array([float(worst)])

    return encode


def cumulative_accuracy(transcripts: Sequence[Transcript], X: npt.ArrayLike, bound_counts: float, beta: float,
                        level: float, name: str) -> CheckResult:
    """P[max_{b,t} |S^_b^t - S_b^t| > bound] <= beta (Theorem 4.4 / Corollary B.1 are statements about this max)."""
    return accuracy_check(transcripts, [0.0], AccuracyBound(name, beta, (bound_counts,)), level,
                          encode=cumulative_error(X))
