"""Noise calibration, padding and accuracy bounds of 002 (Theorems 3.2, 4.4, Corollaries 3.3, B.1).

Fixed time window (002-alg1), with R = T - k + 1 update steps:

* per-bin noise N_Z(0, sigma^2). Printed (002-alg1 u3): sigma^2 = R / (2 rho). That is the
  discrete Gaussian calibration sigma^2 = Delta^2 / (2 rho_step) with rho_step = rho / R and
  squared l2 sensitivity Delta^2 = 1, which holds when one individual is added or removed.
  Under the paper's own neighbour relation (one individual's whole sequence substituted, n
  fixed) two bins move per step, Delta^2 = 2 (erratum E-longitudinal-1); the default therefore
  uses sigma^2 = 2 R / (2 rho) = R / rho. :func:`fixed_window_sigma2` gives both.
* Theorem 3.2: with probability >= 1 - beta, max_{s,t} |p_s^t - (C_s^t + n_pad)| <= lambda,
  lambda = (sqrt(R/rho) + 1/sqrt 2) sqrt(log(2^k R / beta)). In the proof sqrt(R/rho) is
  sqrt(2 sigma^2); :func:`theorem_3_2_lambda` takes sigma^2, so it serves both calibrations.
* Corollary 3.3's padding n_pad = lambda (the default; rounded up to an integer, since counts
  are integers) and the paper's relative error bounds with and without debiasing (002-debias).
* Section 3.1 prints a second padding formula, sqrt(R/rho log(2^k R / beta)), derived from a
  tail bound printed with an exponent linear in n_pad (erratum E-longitudinal-5).

Cumulative time (002-alg2): the rho_b allocation of Corollary B.1 and the accuracy bounds of
Appendix B / Corollary B.1, plus a corrected explicit bound for any counter node variance.

Everything here is a formula of the paper (or its stated correction); proofs/proof_longitudinal_*.py
checks the algebra with sympy.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from dpstream.errors import (
    DPStreamInputError,
    require_int_at_least,
    require_positive_finite,
    require_probability,
)

__all__ = [
    "corollary_3_3_bound",
    "corollary_b1_alpha",
    "cumulative_pair_bound",
    "cumulative_union_bound",
    "debiased_bound",
    "fixed_window_sigma2",
    "levels",
    "linear_query_bound",
    "n_pad_corollary_3_3",
    "n_pad_section_3_1",
    "rho_b_allocation",
    "theorem_3_2_lambda",
    "validate_horizon_window",
]

SUBSTITUTE_DELTA2 = 2.0
"""Squared l2 sensitivity of one step's 2^k-bin histogram when one individual's sequence is substituted."""


def validate_horizon_window(T: object, k: object) -> tuple[int, int]:
    """T >= 1 and 1 <= k <= T (002-sec2.1: k in {1, ..., T})."""
    T_ = require_int_at_least("T", T, 1)
    k_ = require_int_at_least("k", k, 1)
    if k_ > T_:
        raise DPStreamInputError("k", f"must satisfy k <= T = {T_} (the window must fit the horizon)", k_)
    return T_, k_


def fixed_window_sigma2(T: int, k: int, rho: float, *, as_printed: bool = False) -> float:
    """Per-bin variance parameter of 002-alg1 u3.

    ``as_printed``: (T-k+1)/(2 rho) (rho-zCDP for one individual added or removed).
    Default: 2 (T-k+1)/(2 rho) = (T-k+1)/rho (rho-zCDP for one individual substituted).
    """
    T, k = validate_horizon_window(T, k)
    rho = require_positive_finite("rho", rho)
    R = T - k + 1
    delta2 = 1.0 if as_printed else SUBSTITUTE_DELTA2
    return delta2 * R / 2.0 / rho  # = delta2 R / (2 rho) exactly (halving is exact), and 2 rho cannot overflow


def theorem_3_2_lambda(sigma2: float, T: int, k: int, beta: float, alphabet: int = 2) -> float:
    """lambda = (sqrt(2 sigma^2) + 1/sqrt 2) sqrt(log(A^k R / beta)) (002-thm3.2 eq (5), A = 2).

    With sigma^2 = R/(2 rho) this is the printed (sqrt((T-k+1)/rho) + 1/sqrt 2) sqrt(log(2^k (T-k+1)/beta)).
    """
    sigma2 = require_positive_finite("sigma2", sigma2)
    T, k = validate_horizon_window(T, k)
    beta = require_probability("beta", beta)
    bins = alphabet**k * (T - k + 1)
    return (math.sqrt(2.0 * sigma2) + 1.0 / math.sqrt(2.0)) * math.sqrt(math.log(bins / beta))


def n_pad_corollary_3_3(sigma2: float, T: int, k: int, beta: float, alphabet: int = 2) -> int:
    """Corollary 3.3: n_pad = lambda of Theorem 3.2, rounded up (counts are integers; n_pad >= lambda)."""
    return math.ceil(theorem_3_2_lambda(sigma2, T, k, beta, alphabet))


def n_pad_section_3_1(T: int, k: int, rho: float, beta: float) -> int:
    """The other padding formula, printed in section 3.1: sqrt((T-k+1)/rho * log(2^k (T-k+1)/beta)), rounded up."""
    T, k = validate_horizon_window(T, k)
    rho = require_positive_finite("rho", rho)
    beta = require_probability("beta", beta)
    R = T - k + 1
    return math.ceil(math.sqrt(R / rho * math.log(2**k * R / beta)))


def debiased_bound(lam: float, n: int) -> float:
    """002-debias: max_{s,t} |(p_s^t - n_pad) - C_s^t| / n <= lambda / n (on Theorem 3.2's event)."""
    n = require_int_at_least("n", n, 1)
    return require_positive_finite("lambda", lam) / n


def linear_query_bound(weights: Mapping[int, float] | Sequence[float], lam: float, n: int) -> float:
    """Debiased error of q = sum_s w_s 1[window = s] on Theorem 3.2's event: sum_s |w_s| lambda / n."""
    n = require_int_at_least("n", n, 1)
    values = weights.values() if isinstance(weights, Mapping) else weights
    return sum(abs(float(w)) for w in values) * require_positive_finite("lambda", lam) / n


def corollary_3_3_bound(lam: float, n_pad: int, n: int, C: float, k: int, alphabet: int = 2) -> float:
    """Without debiasing (proof of 002-cor3.3): |p/n* - C/n| <= (lambda + n_pad)/n + A^k (n_pad + lambda) C / n^2.

    Valid on Theorem 3.2's event when n_pad >= lambda (then n <= n* <= n + A^k (n_pad + lambda));
    with n_pad = lambda it is the printed 2 lambda/n + 2^{k+1} lambda C/n^2.
    """
    n = require_int_at_least("n", n, 1)
    if n_pad < lam:
        raise DPStreamInputError("n_pad", f"the bound needs n_pad >= lambda = {lam:g}", n_pad)
    return float((lam + n_pad) / n + alphabet**k * (n_pad + lam) * C / n**2)


# --- cumulative time queries (002-alg2, Appendix B) ------------------------------------------


def levels(steps: int) -> int:
    """max(ceil(log2 steps), 1): Appendix B's count of noise terms in a tree counter's sum after ``steps`` steps."""
    steps = require_int_at_least("steps", steps, 1)
    return max(math.ceil(math.log2(steps)), 1) if steps > 1 else 1


def rho_b_allocation(T: int, rho: float) -> list[float]:
    """Corollary B.1: rho_b = rho L_b^3 / sum_b' L_b'^3 with L_b = max(ceil(log2(T-b+1)), 1), b = 1..T."""
    T = require_int_at_least("T", T, 1)
    rho = require_positive_finite("rho", rho)
    cubes = [levels(T - b + 1) ** 3 for b in range(1, T + 1)]
    total = sum(cubes)
    return [rho * c / total for c in cubes]


def corollary_b1_alpha(T: int, rho: float, beta: float, n: int) -> tuple[float, float]:
    """Corollary B.1 as printed: alpha* = (1/n) sqrt(sum_b L_b^3 / rho * log(1/beta)), beta* = T beta."""
    T = require_int_at_least("T", T, 1)
    rho = require_positive_finite("rho", rho)
    beta = require_probability("beta", beta)
    n = require_int_at_least("n", n, 1)
    total = sum(levels(T - b + 1) ** 3 for b in range(1, T + 1))
    return math.sqrt(total / rho * math.log(1.0 / beta)) / n, T * beta


def cumulative_pair_bound(sigma2_b: float, t: int, b: int, beta_pair: float) -> float:
    """Two-sided subgaussian tail for one (b, t): |S~_b^t - S_b^t| <= sqrt(2 sigma_b^2 P log(2/beta_pair)).

    P = max(ceil(log2(t - b + 1)), 1) >= the number of N_Z(0, sigma_b^2) nodes summed at local time
    t - b + 1 (Appendix B); a discrete Gaussian N_Z(0, s^2) is s^2-subgaussian (Canonne, Kamath, Steinke 2020).
    """
    sigma2_b = require_positive_finite("sigma2_b", sigma2_b)
    if not 1 <= b <= t:
        raise DPStreamInputError("b", f"must satisfy 1 <= b <= t = {t}", b)
    beta_pair = require_probability("beta_pair", beta_pair)
    return math.sqrt(2.0 * sigma2_b * levels(t - b + 1) * math.log(2.0 / beta_pair))


def cumulative_union_bound(sigma2: Sequence[float], beta: float) -> float:
    """Our explicit uniform bound for 002-alg2: Pr[max_{b<=t} |S^_b^t - S_b^t| > a] <= beta.

    ``sigma2[b-1]`` is counter b's node variance. A union bound over all T(T+1)/2 pairs (b <= t),
    each at level beta / #pairs, bounds the raw counter errors |S~_b^t - S_b^t| by
    a = max_{b,t} :func:`cumulative_pair_bound`; Lemma 4.2 (monotonization does not increase the
    l_inf error; the base values S^_b^{b-1} = 0 and S^_0 = n are exact) carries it to the
    monotonized counts. Returns a (in counts; divide by n for fractions).
    """
    T = len(sigma2)
    if T < 1:
        raise DPStreamInputError("sigma2", "must hold one variance per counter b = 1..T", sigma2)
    beta = require_probability("beta", beta)
    pairs = T * (T + 1) // 2
    return float(max(cumulative_pair_bound(sigma2[b - 1], t, b, beta / pairs)
                     for t in range(1, T + 1) for b in range(1, t + 1)))
