"""Explicit error bounds alpha(t, beta) for linear release models.

The papers state the counters' accuracy as rates (001 App. D, 003-def3.11: O(sqrt t),
O(t^(1/4)), O((ln t)^(3/2)); 002-thmA.2; 003-lemB.1; 004-lem3.1 with an unspecified
constant C). An audit needs numbers, so the rates are turned into explicit tail bounds
from the *same* noise the paper prescribes, read off the model: the error of release t is
sum_j W[t, j] z_j with independent z_j.

* :func:`laplace_sum_bound` — Chan, Shi & Song 2011 ("Private and continual release of
  statistics"), Lemma 2.8 / Corollary 2.9, the lemma 001 and 003 rely on through Chan et
  al.'s counters: for independent gamma_i ~ Lap(b_i), b_M = max b_i, and
  nu = max(sqrt(sum b_i^2), b_M sqrt(ln(2/beta))),
  P[|sum gamma_i| > nu sqrt(8 ln(2/beta))] <= beta. (The lemma's proof is re-derived and
  checked in tests/audit/test_bounds.py: E e^{h gamma} = 1/(1 - h^2 b^2) <= e^{2 h^2 b^2}
  for |h| <= 1/(sqrt 2 b), then Chernoff with h = lambda / (4 nu^2).)
* :func:`subgaussian_bound` — discrete Gaussian terms are sigma^2-sub-Gaussian (Canonne,
  Kamath & Steinke 2020), so P[|sum w_j z_j| >= a] <= 2 exp(-a^2 / (2 sum w_j^2 sigma_j^2)).
* :func:`tree_aggregation_printed_bound` — 002 Appendix B as printed:
  P(|S^t - S^t| >= alpha) <= exp(-alpha^2 / (2 sigma^2 max(ceil(log2 t), 1))), i.e.
  alpha = sqrt(2 sigma^2 k_t ln(1/beta)) (one-sided form, no factor 2; see docs/errata/audit.md).
* :func:`chebyshev_bound` — any law with a variance: alpha = sqrt(Var(error_t) / beta)
  (used for discrete Laplace terms, for which no sharper explicit statement is printed).
"""

from __future__ import annotations

import math

import numpy as np

from dpstream.audit.accuracy import AccuracyBound
from dpstream.audit.linear_model import LinearReleaseModel
from dpstream.errors import DPStreamInputError, require_positive_finite, require_probability
from dpstream.noise import DrawKind

__all__ = ["chebyshev_bound", "laplace_sum_bound", "subgaussian_bound", "tree_aggregation_printed_bound"]


def laplace_sum_bound(model: LinearReleaseModel, beta: float, name: str = "") -> AccuracyBound:
    """Chan-Shi-Song 2011 Cor 2.9 applied to the error sum_j W[t, j] z_j of every release (Laplace terms)."""
    beta = require_probability("beta", beta)
    if any(law.kind is not DrawKind.LAPLACE for law in model.laws):
        raise DPStreamInputError("model", "laplace_sum_bound needs Laplace terms only", model.laws)
    b = np.array([law.parameter for law in model.laws])
    log_term = math.log(2.0 / beta)
    values = []
    for row in model.combination:
        scales = np.abs(row) * b
        scales = scales[scales > 0]
        nu = max(math.sqrt(float((scales**2).sum())), float(scales.max()) * math.sqrt(log_term))
        values.append(nu * math.sqrt(8.0 * log_term))
    return AccuracyBound(name or "Chan-Shi-Song 2011 Cor 2.9 (sum of Laplace)", beta, tuple(values))


def subgaussian_bound(model: LinearReleaseModel, beta: float, name: str = "") -> AccuracyBound:
    """Two-sided sub-Gaussian bound sqrt(2 sum_j W[t,j]^2 sigma_j^2 ln(2/beta)) (discrete Gaussian terms)."""
    beta = require_probability("beta", beta)
    if any(law.kind is not DrawKind.DISCRETE_GAUSSIAN for law in model.laws):
        raise DPStreamInputError("model", "subgaussian_bound needs discrete Gaussian terms only", model.laws)
    s2 = np.array([law.parameter for law in model.laws])
    proxy = (model.combination**2) @ s2
    values = tuple(float(math.sqrt(2.0 * v * math.log(2.0 / beta))) for v in proxy)
    return AccuracyBound(name or "sub-Gaussian tail (CKS 2020), two-sided", beta, values)


def tree_aggregation_printed_bound(sigma2: float, T: int, beta: float) -> AccuracyBound:
    """002 App. B as printed, per time t: alpha = sqrt(2 sigma^2 max(ceil(log2 t), 1) ln(1/beta))."""
    sigma2 = require_positive_finite("sigma2", sigma2)
    beta = require_probability("beta", beta)
    values = tuple(
        math.sqrt(2.0 * sigma2 * max(math.ceil(math.log2(t)), 1) * math.log(1.0 / beta)) for t in range(1, T + 1)
    )
    return AccuracyBound("002 App. B tail bound as printed", beta, values)


def chebyshev_bound(model: LinearReleaseModel, beta: float, name: str = "") -> AccuracyBound:
    """Chebyshev from the exact variance: alpha = sqrt(Var(error_t) / beta)."""
    beta = require_probability("beta", beta)
    values = tuple(float(math.sqrt(v / beta)) for v in model.error_variance())
    return AccuracyBound(name or "Chebyshev from the exact variance", beta, values)
