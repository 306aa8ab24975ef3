"""Proof note — Tree-based aggregation (002-alg3) is rho-zCDP with sigma^2 = (floor(log2 T)+1)/(2 rho).

Claim
-----
``TreeAggregationCounter(rho, T)`` is rho-zCDP (002-def2.1) under STREAM_ENTRY on integer
streams (002-defA.1: one entry changes by at most 1), for every T >= 1, with node noise
N_Z(0, sigma^2), sigma^2 = (floor(log2 T) + 1)/(2 rho). The printed u8 variance
log(T)/(2 rho) does not give rho (erratum E-counters-3); real inputs are not private at all
(E-counters-4); 002-def2.2's sigma^2 = Delta q/(2 rho) is right only for Delta q <= 1
(E-counters-5).

Code (reference/dpstream/counters/tree_aggregation.py, ``TreeAggregationCounter._staging``)
----------------------------------------------------------------------------------------
* ``[002-alg3 u3]`` ``i = min(j for j in range(n + 1) if Bin[j] != 0)``;
* ``[002-alg3 u4]`` ``alpha[i] = sum(alpha[j] for j in range(i)) + x``; ``[002-alg3 u5]``-``[002-alg3 u6]`` reset j < i;
* ``[002-alg3 u8]`` ``alpha_tilde[i] = alpha[i] + noise``, noise drawn at ``"002-alg3 u8 t=<t>"`` with
  ``self.sigma2 = tree_aggregation_sigma2(rho, T)`` = ``T.bit_length() / (2.0 * rho)``
  (printed: ``math.log2(T) / (2.0 * rho)``);
* ``[002-alg3 u9]`` ``S = sum(alpha_tilde[j] for j in range(n + 1) if Bin[j] == 1)``;
* inputs: ``integer_input = not as_printed`` (item 4).

Proof in the paper's terms
--------------------------
1. The tree is the one of 001-alg10 (u2-u4 = L5-L7, u5-u6 = L9, u8 = L8, u9 = L10), so by
   proofs/proof_binary_tree_counter.py items 1-3: T nodes, one per time step; releases an
   invertible (unit lower triangular) image of the nodes; one input in at most
   k = floor(log2 T) + 1 nodes (tau = 1 attains it).
2. Discrete Gaussian (Canonne, Kamath, Steinke 2020, Thm 4): for integer means mu, nu,
   D_alpha(N_Z(mu, sigma^2) || N_Z(nu, sigma^2)) <= alpha (mu - nu)^2/(2 sigma^2). Proof: the
   exponent identity alpha (x-mu)^2 + (1-alpha)(x-nu)^2 = (x-m)^2 - alpha(alpha-1)(mu-nu)^2,
   m = alpha mu + (1-alpha) nu, and Z(c) = sum_{x in Z} e^{-(x-c)^2/(2 sigma^2)} <= Z(0) = Z(mu)
   (Poisson summation: Z(c) = sqrt(2 pi sigma^2) sum_k e^{-2 pi^2 sigma^2 k^2} cos(2 pi k c)).
3. Composition (002-thm2.1) over the k nodes an input enters, each shifted by at most 1:
   k/(2 sigma^2) = rho exactly when sigma^2 = k/(2 rho). With the printed log2(T) in place of k
   the cost is rho k/log2 T > rho (T >= 2); with ln T it is rho k/ln T, larger still.
4. Non-integer shifts: N_Z(0) + 0.5 is supported on Z + 1/2, disjoint from Z; the divergence is
   infinite, hence integer inputs (002-defA.1 says "natural number").

Error law: S~^t - S^t = sum of popcount(t) i.i.d. N_Z(0, sigma^2); Var = popcount(t) Var(N_Z),
and Var(N_Z(0, sigma^2)) < sigma^2 (002-def2.2's "at most sigma^2"). 002-rhob bounds the count
by max(ceil(log2 t), 1); checked below for t <= 4096.

Checks below: 2 (identity, Z(c) <= Z(0)), 3 (budget), the unsquared Delta, the popcount bound; then
items 1, 3 and 4 read from ``TreeAggregationCounter`` (its variance parameter, its tree measured by
:func:`dpstream.testing.linear.measured_linear_model`, its zCDP cost, its refusal of real inputs).
"""

from __future__ import annotations

from decimal import Decimal, getcontext

import numpy as np
import pytest
import sympy as sp

from dpstream.audit.counters.loss import stream_entry_rho
from dpstream.convention import with_noise
from dpstream.counters.tree_aggregation import TreeAggregationCounter
from dpstream.errors import DPStreamInputError
from dpstream.insecure import InsecureZeroNoise
from dpstream.noise import DrawKind
from dpstream.testing.linear import measured_linear_model


def _theta(c: Decimal, s2: Decimal, power: int = 0) -> Decimal:
    """sum_{|x| <= 200} x^power exp(-(x - c)^2 / (2 s2)) in 100-digit decimal arithmetic (the tail
    beyond |x| = 200 is below exp(-2000) for the s2 <= 3 used here)."""
    getcontext().prec = 100
    return sum(((Decimal(x) ** power if power else Decimal(1)) * (-((Decimal(x) - c) ** 2) / (2 * s2)).exp()
                for x in range(-200, 201)), Decimal(0))


def test_renyi_exponent_identity() -> None:
    """alpha (x-mu)^2 + (1-alpha)(x-nu)^2 = (x-m)^2 - alpha (alpha-1) (mu-nu)^2."""
    x, mu, nu, a = sp.symbols("x mu nu alpha", real=True)
    m = a * mu + (1 - a) * nu
    lhs = a * (x - mu) ** 2 + (1 - a) * (x - nu) ** 2
    assert sp.expand(lhs - ((x - m) ** 2 - a * (a - 1) * (mu - nu) ** 2)) == 0
    # hence D_alpha = 1/(alpha-1) log( Z(m)/Z(0) * exp(alpha(alpha-1)(mu-nu)^2/(2 sigma^2)) )
    s2 = sp.symbols("sigma2", positive=True)
    D = (a * (a - 1) * (mu - nu) ** 2 / (2 * s2)) / (a - 1)
    assert sp.simplify(D - a * (mu - nu) ** 2 / (2 * s2)) == 0


def test_theta_sum_is_largest_at_integer_centre() -> None:
    """Z(c) <= Z(0) for c on a grid in [0, 1) and several sigma^2 (so D_alpha <= alpha Delta^2/(2 sigma^2))."""
    for s2 in (Decimal("0.1"), Decimal("0.5"), Decimal(1), Decimal(3)):
        z0 = _theta(Decimal(0), s2)
        for i in range(1, 10):
            assert _theta(Decimal(i) / 10, s2) < z0


def test_budget_corrected_and_printed() -> None:
    """k nodes, sensitivity 1 each: k/(2 sigma^2) = rho iff sigma^2 = k/(2 rho); printed log2 T overspends."""
    rho = sp.symbols("rho", positive=True)
    k = sp.symbols("k", positive=True, integer=True)
    sigma2 = k / (2 * rho)
    assert sp.simplify(k * 1**2 / (2 * sigma2) - rho) == 0
    for m in range(1, 12):  # T = 2^m, k = m + 1
        printed_cost = (m + 1) / (2 * (sp.log(2**m, 2) / (2 * rho)))
        assert sp.simplify(printed_cost - rho * sp.Rational(m + 1, m)) == 0
        ln_cost = (m + 1) / (2 * (sp.log(2**m) / (2 * rho)))
        assert sp.simplify(ln_cost / printed_cost - 1 / sp.log(2)) == 0  # ln reading: 1/ln 2 = 1.44x worse
    # split l1 changes (|u_j| <= 1, sum_j |u_j| <= k): sum_j u_j^2 <= k, so the bound also covers them
    u = sp.symbols("u1:4", real=True)
    assert sp.simplify(sum(ui**2 for ui in u).subs({u[0]: 1, u[1]: 1, u[2]: 1}) - 3) == 0


def test_unsquared_sensitivity_of_002_def2_2() -> None:
    """sigma^2 = Delta/(2 rho) costs Delta^2/(2 sigma^2) = rho Delta: equal to rho iff Delta = 1."""
    rho, delta = sp.symbols("rho Delta", positive=True)
    cost = delta**2 / (2 * (delta / (2 * rho)))
    assert sp.simplify(cost - rho * delta) == 0
    assert sp.solve(sp.Eq(cost, rho), delta) == [1]
    assert sp.simplify(delta**2 / (2 * (delta**2 / (2 * rho))) - rho) == 0  # corrected: Delta^2


def test_variance_below_sigma2_and_popcount_bound() -> None:
    """Var(N_Z(0, sigma^2)) < sigma^2 (002-def2.2); popcount(t) <= max(ceil(log2 t), 1) (002-rhob)."""
    # the gap sigma^2 - Var is ~ exp(-2 pi^2 sigma^2): 7e-18 at sigma^2 = 2, visible at 100 digits
    for s2 in (Decimal("0.05"), Decimal("0.5"), Decimal(2)):
        var = _theta(Decimal(0), s2, power=2) / _theta(Decimal(0), s2)
        assert var < s2
    for t in range(1, 4097):  # ceil(log2 t) = (t - 1).bit_length(), cross-checked with sympy below
        assert bin(t).count("1") <= max((t - 1).bit_length(), 1)
    for t in (1, 2, 3, 4, 5, 7, 8, 9, 1023, 1024, 1025):
        assert (t - 1).bit_length() == sp.ceiling(sp.log(t, 2))


def test_tree_aggregation_counter_is_the_mechanism_of_the_proof() -> None:
    """Read off TreeAggregationCounter: N_Z nodes with sigma^2 = (floor(log2 T)+1)/(2 rho) at "002-alg3 u8 t=u",
    node u over (u - lsb(u), u] (item 1), input 1 in floor(log2 T) + 1 nodes, zCDP cost k/(2 sigma^2) = rho
    (item 3); as printed sigma^2 = log2(T)/(2 rho) and cost rho (floor(log2 T)+1)/log2 T; real inputs
    refused (item 4)."""
    rho = sp.Rational(1, 8)
    for T in (1, 2, 5, 8, 13):
        k = sp.floor(sp.log(T, 2)) + 1
        model = measured_linear_model(with_noise(TreeAggregationCounter, float(rho), T), T)
        assert model.sites == tuple(f"002-alg3 u8 t={u}" for u in range(1, T + 1))
        assert all(law.kind is DrawKind.DISCRETE_GAUSSIAN for law in model.laws)
        assert np.allclose([law.parameter for law in model.laws], float(k / (2 * rho)), rtol=1e-15, atol=0)
        for u in range(1, T + 1):
            assert list(np.flatnonzero(np.rint(model.statistics[u - 1])) + 1) == list(range(u - (u & -u) + 1, u + 1))
        assert int(np.rint(np.abs(model.statistics[:, 0]).sum())) == k
        assert np.isclose(stream_entry_rho(model).value, float(rho), rtol=1e-12)
        if T >= 2:
            printed = measured_linear_model(with_noise(TreeAggregationCounter, float(rho), T, as_printed=True), T)
            assert np.allclose([law.parameter for law in printed.laws], float(sp.log(T, 2) / (2 * rho)), rtol=1e-14)
            assert np.isclose(stream_entry_rho(printed).value, float(rho * k / sp.log(T, 2)), rtol=1e-12)
    with pytest.raises(DPStreamInputError):
        TreeAggregationCounter(float(rho), 4, noise=InsecureZeroNoise()).step(0.5)
    assert TreeAggregationCounter(float(rho), 4, noise=InsecureZeroNoise(), as_printed=True).step(0.5) == 0.5
