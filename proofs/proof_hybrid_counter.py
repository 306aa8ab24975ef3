"""Proof note — Hybrid mechanism (Chan, Shi & Song 2011) is eps-DP; its error law.

Claim
-----
``HybridCounter(eps)`` (construction in reference/dpstream/counters/hybrid.py: the
Logarithmic Mechanism L with eps/2 at powers of two, and for each k >= 1 a Binary Tree
counter B_k with eps/2 and horizon 2^k - 1 on the times 2^k < t < 2^(k+1)) is eps-DP (pure)
under STREAM_ENTRY, with no horizon.

Code (reference/dpstream/counters/hybrid.py, ``HybridCounter._staging``; no printed box, so no line tags)
--------------------------------------------------------------------------------------------------------
* at a power of two t = 2^k: ``beta = self.beta + self.pending + x + <draw at "CSS11-hybrid L t=<t>",
  scale 2.0 / self.epsilon>`` and a fresh ``BinaryTreeCounter(self.epsilon / 2.0, t - 1, ...)`` scoped
  ``"CSS11-hybrid B k=<k>"`` (B_k, horizon 2^k - 1; none for k = 0);
* otherwise: ``step = yield from self.binary.staging(x)``, release ``self.beta + step.release``; ``pending += x``.

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

Checks below: items 1-4 and the variance in sympy, then the same read from ``HybridCounter``
(:func:`dpstream.testing.linear.measured_linear_model`: its L and B_k draws and scales, which statistics
each input enters, the release matrix, the loss).
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from dpstream.audit.counters.loss import stream_entry_epsilon
from dpstream.counters.hybrid import HybridCounter
from dpstream.testing.linear import measured_linear_model


def _release_matrix(T: int) -> sp.Matrix:
    """Item 4: row t holds the L statistics up to 2^k and B_k's cover of tau = t - 2^k (statistic index = time)."""
    W = sp.zeros(T, T)
    for t in range(1, T + 1):
        k = t.bit_length() - 1
        for i in range(k + 1):
            W[t - 1, 2**i - 1] = 1
        u = t - 2**k
        while u > 0:
            W[t - 1, 2**k + u - 1] = 1
            u -= u & -u
    return W


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
    W = _release_matrix(23)
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


def test_hybrid_counter_is_the_mechanism_of_the_proof() -> None:
    """Read off HybridCounter over T = 23 (three complete B_k, part of B_4): L draws at 2^k with scale 2/eps,
    B_k node draws with scale 2k/eps; each input in exactly one L statistic and, off the powers of two, in
    B_k's nodes only; releases as item 4; loss eps/2 + eps/2 = eps; the variance of the error law."""
    eps, T = sp.Rational(3, 5), 23
    model = measured_linear_model(lambda n: HybridCounter(float(eps), noise=n), T)
    for t, (where, law) in enumerate(zip(model.sites, model.laws, strict=True), start=1):
        k = t.bit_length() - 1
        if t == 2**k:
            assert where == f"CSS11-hybrid L t={t}" and np.isclose(law.parameter, float(2 / eps), rtol=1e-15)
        else:
            assert where == f"CSS11-hybrid B k={k} / 001-alg10 L8 t={t - 2**k}"
            assert np.isclose(law.parameter, float(2 * k / eps), rtol=1e-15)
    S = np.rint(model.statistics).astype(int)
    assert np.allclose(model.statistics, S, atol=1e-9)
    powers = [2**k - 1 for k in range(5)]  # rows of the L statistics
    # item 1: the L intervals partition the time axis (times after 16 wait for the L statistic at 32)
    assert list(S[powers].sum(axis=0)) == [1] * 16 + [0] * (T - 16)
    for tau in range(1, T + 1):
        k = tau.bit_length() - 1
        in_binary = [u for u in np.flatnonzero(S[:, tau - 1]) + 1 if u not in (2**i for i in range(5))]
        assert all(2**k < u < 2 ** (k + 1) for u in in_binary)  # item 2: only B_k's nodes
        assert (len(in_binary) == 0) == (tau == 2**k)
    assert np.allclose(model.combination, np.array(_release_matrix(T), dtype=float), atol=1e-9)
    assert np.isclose(stream_entry_epsilon(model).value, float(eps), rtol=1e-12)  # item 3, attained at tau = 9
    for t in range(1, T + 1):
        k, tau = t.bit_length() - 1, t - 2 ** (t.bit_length() - 1)
        variance = (8 * (k + 1) + 8 * k**2 * bin(tau).count("1")) / eps**2
        assert np.isclose(model.error_variance()[t - 1], float(variance), rtol=1e-12)
