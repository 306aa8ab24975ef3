"""Exact statistics used by the audits: Clopper-Pearson bounds and eps lower bounds from counts.

Everything here is deterministic given the counts, and every bound is one-sided with
an explicit level ``a`` (the probability that the bound is wrong). Audits split their
false-alarm share across checks and pass the pieces down (Bonferroni).

eps lower bound from an event E (docs/audits.md, "Black-box distinguishing"):
if a mechanism is eps-DP then P[E | f] <= e^eps P[E | f'] for every event E. With
k1 of n1 runs on f and k0 of n0 runs on f' in E,

    eps_lb = log( CP_lower(k1, n1, a/2) / CP_upper(k0, n0, a/2) )

is below the true log ratio with probability >= 1 - a, so ``eps_lb > eps`` is a
violation with false-alarm probability <= a. With a delta (zCDP through its
(eps, delta) curve) the bound is ``log((CP_lower - delta) / CP_upper)``.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt
from scipy import stats as _st

from dpstream.errors import DPStreamInputError, require_int_at_least

__all__ = [
    "clopper_pearson_lower",
    "clopper_pearson_upper",
    "eps_lower_bound",
    "eps_lower_bounds",
    "split_level",
]

FloatArray = npt.NDArray[np.float64]


def _require_level(a: float) -> float:
    if not 0.0 < a < 1.0:
        raise DPStreamInputError("level", "must lie in (0, 1)", a)
    return float(a)


def clopper_pearson_lower(k: int, n: int, a: float) -> float:
    """One-sided lower bound p_lo with P[p < p_lo] <= a (exact binomial; 0 when k = 0)."""
    n = require_int_at_least("n", n, 1)
    if not 0 <= k <= n:
        raise DPStreamInputError("k", f"must lie in [0, {n}]", k)
    a = _require_level(a)
    return 0.0 if k == 0 else float(_st.beta.ppf(a, k, n - k + 1))


def clopper_pearson_upper(k: int, n: int, a: float) -> float:
    """One-sided upper bound p_hi with P[p > p_hi] <= a (exact binomial; 1 when k = n)."""
    n = require_int_at_least("n", n, 1)
    if not 0 <= k <= n:
        raise DPStreamInputError("k", f"must lie in [0, {n}]", k)
    a = _require_level(a)
    return 1.0 if k == n else float(_st.beta.ppf(1.0 - a, k + 1, n - k))


def eps_lower_bound(k1: int, n1: int, k0: int, n0: int, a: float, delta: float = 0.0) -> float:
    """log((CP_lower(k1/n1) - delta) / CP_upper(k0/n0)), each bound at level a/2; -inf if not positive."""
    lo = clopper_pearson_lower(k1, n1, a / 2.0) - delta
    hi = clopper_pearson_upper(k0, n0, a / 2.0)
    return math.log(lo / hi) if lo > 0.0 else -math.inf


def eps_lower_bounds(
    k1: npt.ArrayLike, n1: int, k0: npt.ArrayLike, n0: int, a: float, delta: float = 0.0
) -> FloatArray:
    """Vectorised :func:`eps_lower_bound` over arrays of counts (same n1, n0)."""
    _require_level(a)
    k1a = np.asarray(k1, dtype=np.float64)
    k0a = np.asarray(k0, dtype=np.float64)
    half = a / 2.0
    with np.errstate(divide="ignore", invalid="ignore"):
        lo = np.where(k1a > 0, _st.beta.ppf(half, np.maximum(k1a, 1), n1 - k1a + 1), 0.0) - delta
        hi = np.where(k0a < n0, _st.beta.ppf(1.0 - half, k0a + 1, np.maximum(n0 - k0a, 1)), 1.0)
        out = np.where(lo > 0, np.log(np.maximum(lo, 1e-300) / hi), -np.inf)
    return np.asarray(out, dtype=np.float64)


def split_level(total: float, parts: int) -> float:
    """Bonferroni: the level of each of ``parts`` checks sharing a false-alarm budget ``total``."""
    parts = require_int_at_least("parts", parts, 1)
    return _require_level(total) / parts
