"""Explicit accuracy bounds of 003 Appendix A (Theorem 5.1, StreamingMWEM).

Theorem 5.1 states only an O(.) rate. Appendix A derives it from an explicit bound,
which is what can be checked (tests/tabular/test_accuracy.py, the tabular audit):

* per time step (after eq (21), union over the k iterations), with probability >= 1 - β,

      max_q |q(∇g_t) - q(∇f_t)| <= 2 |∇f_t| sqrt(ln|X| / k) + (2k/ε) ln(2k/β) + (4k/ε) ln(2k|Q|/β);

* for the snapshot at time T (union over times, as printed with t inside the logs),

      max_q |q(g_T) - q(f_T)| <= sum_{t<=T} [2 |∇f_t| sqrt(ln|X| / k) + (2k/ε) ln(2kt/β) + (4k/ε) ln(2kt|Q|/β)].

Both assume the corrected selection law (budget ε/(2k) per selection, eq (12)), h_{t,0}
uniform of mass |∇f_t| (eq (17)) and g_0 = 0 (the sum telescopes from 0). The first term
is at least |∇f_t| (the trivial bound for datasets of mass |∇f_t|) unless k > 4 ln|X|,
so the bound is informative only for k > 4 ln|X| and |∇f_t| large compared with
(k/ε) ln(k|Q|/β).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from dpstream.errors import require_int_at_least, require_positive_finite, require_probability

__all__ = ["streaming_mwem_differential_bound", "streaming_mwem_snapshot_bound"]


def streaming_mwem_differential_bound(size: float, domain_size: int, k: int, epsilon: float, n_queries: int,
                                      beta: float) -> float:
    """alpha_t(β) for max_q |q(∇g_t) - q(∇f_t)| at one time (003 App. A, after eq (21))."""
    size = float(size)
    require_int_at_least("domain_size", domain_size, 1)
    k = require_int_at_least("k", k, 1)
    epsilon = require_positive_finite("epsilon", epsilon)
    n_queries = require_int_at_least("n_queries", n_queries, 1)
    beta = require_probability("beta", beta)
    return (2.0 * abs(size) * math.sqrt(math.log(domain_size) / k)
            + (2.0 * k / epsilon) * math.log(2.0 * k / beta)
            + (4.0 * k / epsilon) * math.log(2.0 * k * n_queries / beta))


def streaming_mwem_snapshot_bound(sizes: Sequence[float], domain_size: int, k: int, epsilon: float,
                                  n_queries: int, beta: float) -> float:
    """The bound on max_q |q(g_T) - q(f_T)| at T = len(sizes) (003 App. A, last display before the O(.))."""
    require_int_at_least("domain_size", domain_size, 1)
    k = require_int_at_least("k", k, 1)
    epsilon = require_positive_finite("epsilon", epsilon)
    n_queries = require_int_at_least("n_queries", n_queries, 1)
    beta = require_probability("beta", beta)
    total = 0.0
    for t, size in enumerate(sizes, start=1):
        total += (2.0 * abs(float(size)) * math.sqrt(math.log(domain_size) / k)
                  + (2.0 * k / epsilon) * math.log(2.0 * k * t / beta)
                  + (4.0 * k / epsilon) * math.log(2.0 * k * t * n_queries / beta))
    return total
