"""Proof note — Hybrid mechanism (Chan, Shi & Song 2011) is eps-DP; its error law.

Claim
-----
``HybridCounter(eps)`` (construction in reference/dpstream/counters/hybrid.py: the
Logarithmic Mechanism L with eps/2 at powers of two, and for each k >= 1 a Binary Tree
counter B_k with eps/2 and horizon 2^k - 1 on the times 2^k < t < 2^(k+1)) is eps-DP (pure)
under STREAM_ENTRY, with no horizon.

Proof
-----
1. L's statistics: at t = 2^k, l_k = sum_{(2^(k-1), 2^k]} f + Lap(2/eps) (k = 0: f(1) + Lap).
   The intervals (0,1], (1,2], (2,4], (4,8], ... partition {1, 2, ...}: each input is in exactly
   one l_k, loss <= 1/(2/eps) = eps/2.
2. B_k sees the 2^k - 1 inputs strictly between 2^k and 2^(k+1). By
   proofs/proof_binary_tree_counter.py its loss is <= its budget eps/2 (scale
   bit_length(2^k - 1)/(eps/2) = 2k/eps, k nodes per input). An input at a power of two is in
   no B_k; any other input is in exactly one.
3. Basic composition over the independent noises: eps/2 + eps/2 = eps.
4. Releases: g(2^k) = sum_{i <= k} l_i; g(2^k + tau) = sum_{i <= k} l_i + B_k(tau). Each release
   adds exactly one new statistic (l_k, or B_k's node of local time tau) with coefficient 1:
   unit lower triangular, invertible, so the releases carry exactly the loss of items 1-3.

Error law at t = 2^k + tau (0 <= tau < 2^k): k + 1 L noises Lap(2/eps) and popcount(tau) node
noises Lap(2k/eps): Var = 8 (k+1)/eps^2 + 8 k^2 popcount(tau)/eps^2 = O(log^3 t / eps^2), the
O((log t)^1.5/eps) standard deviation of 003-lemB.1.
"""

from __future__ import annotations

import sympy as sp


def test_L_intervals_partition_the_time_axis() -> None:
    covered: list[int] = []
    for k in range(0, 11):
        lo = 2 ** (k - 1) if k >= 1 else 0
        covered.extend(range(lo + 1, 2**k + 1))
    assert covered == list(range(1, 2**10 + 1))


def test_binary_part_scale_and_budget() -> None:
    """bit_length(2^k - 1) = k nodes per input; scale k/(eps/2) = 2k/eps; eps/2 + eps/2 = eps."""
    eps = sp.symbols("epsilon", positive=True)
    for k in range(1, 20):
        assert (2**k - 1).bit_length() == k == sp.integer_log(2**k - 1, 2)[0] + 1
        scale = k / (eps / 2)
        assert sp.simplify(k / scale - eps / 2) == 0
    assert sp.simplify(1 / (2 / eps) + eps / 2 - eps) == 0


def test_release_matrix_is_unit_lower_triangular() -> None:
    T = 23
    W = sp.zeros(T, T)  # statistic index = time at which it is created
    for t in range(1, T + 1):
        k = t.bit_length() - 1
        for i in range(k + 1):
            W[t - 1, 2**i - 1] = 1
        tau = t - 2**k
        u = tau
        while u > 0:
            W[t - 1, 2**k + u - 1] = 1
            u -= u & -u
    assert W.is_lower and W.det() == 1


def test_variance_closed_form_is_polylog() -> None:
    eps = sp.symbols("epsilon", positive=True)

    def lap(b: sp.Expr) -> sp.Expr:
        return 2 * b**2  # Var(Lap(b))

    for t in (1, 2, 3, 6, 100, 1000):
        k = t.bit_length() - 1
        tau = t - 2**k
        var = (k + 1) * lap(2 / eps) + bin(tau).count("1") * lap(2 * k / eps)
        assert sp.simplify(var - (8 * (k + 1) + 8 * k**2 * bin(tau).count("1")) / eps**2) == 0
        assert var <= 8 * (k + 1) ** 3 / eps**2 + 8 * (k + 1) / eps**2  # O(log^3 t)
