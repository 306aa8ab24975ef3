"""Exact error propagation of 002-alg1 (and of its categorical extension) and the bound it gives.

The error of bin s at update step r (t = k + r) is e_s^r = p_s^t - (C_s^t + n_pad). With the true
counts consistent (sum_c C_{zc}^t = sum_a C_{az}^{t-1}), the update of u9-u14 (binary) and of
:mod:`dpstream.longitudinal.categorical` (alphabet A) gives, for every overlap z and symbol c,

    e_{zc}^r = G_{zc}^r - (1/A) sum_c' G_{zc'}^r + (1/A) sum_a e_{az}^{r-1} + rho_{zc}^r,    e^0 = G^0,

where G are the i.i.d. N_Z(0, sigma^2) draws of u3 and rho_{zc}^r = 1[c rounds up] - m/A is the
rounding term of the group (r, z) (m = D_z mod A symbols round up; A = 2: rho = +-b_z = +-1/2). So
every error is a fixed linear combination of the draws plus one of the rounding terms;
:func:`error_propagation` computes both exactly (rational coefficients).

:func:`window_error_bound` turns them into a bound that holds with probability >= 1 - beta for
*every* bin and step at once, without the gaps of the printed proof (E-longitudinal-4):

* the Gaussian part sum_i g_i G_i is (sum_i g_i^2) sigma^2-subgaussian (a discrete Gaussian
  N_Z(0, sigma^2) is sigma^2-subgaussian, Canonne, Kamath, Steinke 2020); v = max over bins and
  steps of sum_i g_i^2 (= 1: the variance identity of Theorem 3.2's proof, for every A, checked in
  proofs/proof_longitudinal_fixed_window.py);
* the rounding part is at most B = max over bins and steps of sum over groups (r, z) of
  max over the possible roundings |sum_c w_{r,z,c} rho_{zc}| (deterministic; k/2 for A = 2);
* a two-sided tail and a union bound over the A^k R bins:
  bound = B + sqrt(2 v sigma^2 log(2 A^k R / beta)).

The paper proves Theorem 3.2 only for A = 2 and states the extension without a bound; this is
ours (docs/longitudinal.md, "Categorical extension").
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

from dpstream.errors import require_int_at_least, require_positive_finite, require_probability
from dpstream.longitudinal.bounds import validate_horizon_window

__all__ = ["BinError", "Coefficients", "error_propagation", "rounding_sup", "window_error_bound"]

Coefficients = dict[tuple[int, ...], Fraction]
"""Keys: (step r, pattern s) of a u3 draw, or (step r, overlap z, symbol c) of a rounding term."""


@dataclass(frozen=True)
class BinError:
    """e_s^r as exact coefficients on the Gaussian draws and on the rounding terms."""

    gauss: Coefficients
    rounding: Coefficients

    def gauss_square_sum(self) -> Fraction:
        """sum_i g_i^2: Var(Gaussian part) / sigma^2."""
        return sum((w * w for w in self.gauss.values()), Fraction(0))


def _add(target: Coefficients, source: Coefficients, scale: Fraction) -> None:
    for key, w in source.items():
        target[key] = target.get(key, Fraction(0)) + scale * w


@lru_cache(maxsize=32)
def error_propagation(k: int, R: int, alphabet: int = 2) -> tuple[tuple[BinError, ...], ...]:
    """[r][s]: the error of pattern s (code, oldest symbol most significant) at update step r = 0..R-1."""
    k = require_int_at_least("k", k, 1)
    R = require_int_at_least("R", R, 1)
    A = require_int_at_least("alphabet", alphabet, 2)
    bins, overlaps = A**k, A ** (k - 1)
    steps: list[tuple[BinError, ...]] = [tuple(BinError({(0, s): Fraction(1)}, {}) for s in range(bins))]
    inv = Fraction(1, A)
    for r in range(1, R):
        prev = steps[-1]
        row: list[BinError] = []
        for s in range(bins):
            z, c = divmod(s, A)  # s = zc: overlap z (its first k-1 symbols), last symbol c
            gauss: Coefficients = {(r, s): Fraction(1)}
            rounding: Coefficients = {(r, z, c): Fraction(1)}
            for c2 in range(A):
                _add(gauss, {(r, z * A + c2): Fraction(1)}, -inv)
            for a in range(A):  # the records that ended in az at step r - 1
                prev_bin = prev[a * overlaps + z]
                _add(gauss, prev_bin.gauss, inv)
                _add(rounding, prev_bin.rounding, inv)
            row.append(BinError({key: w for key, w in gauss.items() if w != 0},
                                {key: w for key, w in rounding.items() if w != 0}))
        steps.append(tuple(row))
    return tuple(steps)


def _group_sup(weights: dict[int, Fraction], A: int) -> Fraction:
    """max over m = 1..A-1 and sets U of m symbols of |sum_c w_c (1[c in U] - m/A)| (one rounding group)."""
    best = Fraction(0)
    total = sum(weights.values(), Fraction(0))
    for m in range(1, A):
        for up in itertools.combinations(range(A), m):
            value = sum((weights.get(c, Fraction(0)) for c in up), Fraction(0)) - total * Fraction(m, A)
            best = max(best, abs(value))
    return best


def rounding_sup(error: BinError, alphabet: int) -> Fraction:
    """Largest |rounding part| of one bin's error over every possible rounding (sum of per-group maxima)."""
    groups: dict[tuple[int, int], dict[int, Fraction]] = {}
    for (r, z, c), w in error.rounding.items():  # keys are (step, overlap, symbol)
        groups.setdefault((r, z), {})[c] = w
    return sum((_group_sup(g, alphabet) for g in groups.values()), Fraction(0))


def window_error_bound(sigma2: float, T: int, k: int, beta: float, alphabet: int = 2) -> float:
    """With probability >= 1 - beta: max_{s,t} |p_s^t - (C_s^t + n_pad)| <= the returned value (module doc).

    Exact coefficients, so meant for small settings (A^k R bins; T - k + 1 = R steps).
    """
    sigma2 = require_positive_finite("sigma2", sigma2)
    T, k = validate_horizon_window(T, k)
    beta = require_probability("beta", beta)
    A = require_int_at_least("alphabet", alphabet, 2)
    R = T - k + 1
    steps = error_propagation(k, R, A)
    v = max(e.gauss_square_sum() for row in steps for e in row)
    B = max(rounding_sup(e, A) for row in steps for e in row)
    return float(B) + math.sqrt(2.0 * float(v) * sigma2 * math.log(2.0 * A**k * R / beta))
