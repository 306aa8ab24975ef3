"""Proof note — the (eps, delta) a zCDP claim is compared with: the Canonne-Kamath-Steinke conversion.

Claim
-----
:func:`dpstream.claims.zcdp_to_approx_dp` returns an eps such that every rho-zCDP mechanism is (eps, delta)-DP.
The black-box audits compare an event's lower bound log((P[E|f] - delta) / P[E|f'])) with it
(:func:`dpstream.audit.blackbox.claimed_eps`): an eps that is too small would call a correct zCDP program a
violation, one that is too large costs power. Bun-Steinke 2016 (Prop 1.3) gives rho + 2 sqrt(rho ln 1/delta);
Canonne, Kamath and Steinke 2020 ("The Discrete Gaussian for Differential Privacy", Prop. 12 with the Renyi
divergence of order alpha bounded by alpha rho) give, for EVERY alpha > 1,

    delta = exp((alpha - 1)(alpha rho - eps)) / (alpha - 1) * (1 - 1/alpha)^alpha,

that is eps(alpha) = alpha rho + (ln(1/delta) + (alpha - 1) ln(1 - 1/alpha) - ln alpha) / (alpha - 1).

Argument
--------
1. Solving the CKS delta for eps gives eps(alpha) as written (sympy below): the code's formula.
2. Each eps(alpha) is valid by CKS Prop. 12, so the minimum over any finite set of alpha is valid: the grid search
   can only err on the safe (larger) side of the infimum, never below it.
3. Where the least eps(alpha) is negative the code returns 0: the CKS delta decreases in eps, so (0, delta) holds
   then too. The code starts from Bun-Steinke's value and keeps the smaller, so it is never weaker than before; at the
   minimiser alpha* = 1 + sqrt(ln(1/delta) / rho) of Bun-Steinke's relaxation, eps(alpha*) is at most
   Bun-Steinke's value (checked numerically below over a grid of rho and delta).
4. Sanity (a necessary condition): the Gaussian mechanism of sensitivity 1 and variance sigma^2 is rho-zCDP with
   rho = 1 / (2 sigma^2), and its exact profile delta(eps) = Phi(1/(2 sigma) - eps sigma) - e^eps Phi(-1/(2 sigma) -
   eps sigma) (Balle-Wang 2018) must not exceed delta at the returned eps.
5. Agreement with OpenDP's own conversion (``make_zCDP_to_approxDP``, the same proposition) to 1e-6.
"""

from __future__ import annotations

import math

import numpy as np
import opendp.prelude as dp
import pytest
import sympy as sp
from scipy import stats

from dpstream.claims import zcdp_to_approx_dp

RHOS = (1e-3, 0.02, 0.1, 0.5, 1.0, 2.0, 8.0, 50.0)
DELTAS = (0.2, 0.1, 0.05, 0.02, 0.01, 1e-3, 1e-6, 1e-10)


def test_eps_of_alpha_solves_the_cks_delta() -> None:
    a, rho, eps, delta = sp.symbols("alpha rho epsilon delta", positive=True)
    cks = sp.exp((a - 1) * (a * rho - eps)) / (a - 1) * (1 - 1 / a) ** a
    solved = sp.solve(sp.Eq(sp.log(cks), sp.log(delta)), eps)
    assert len(solved) == 1
    code = a * rho + (sp.log(1 / delta) + (a - 1) * sp.log(1 - 1 / a) - sp.log(a)) / (a - 1)
    assert sp.simplify(sp.expand_log(solved[0] - code, force=True)) == 0


@pytest.mark.parametrize("rho", RHOS)
def test_never_above_bun_steinke_and_sound_for_the_gaussian(rho: float) -> None:
    sigma = 1 / math.sqrt(2 * rho)
    half = 1 / (2 * sigma)
    for delta in DELTAS:
        eps = zcdp_to_approx_dp(rho, delta)
        assert eps <= rho + 2 * math.sqrt(rho * math.log(1 / delta)) + 1e-12
        exact = stats.norm.cdf(half - eps * sigma) - math.exp(eps) * stats.norm.cdf(-half - eps * sigma)
        assert exact <= delta * (1 + 1e-9), (rho, delta, eps, exact)


@pytest.mark.parametrize("rho", (0.02, 0.5, 1.0, 8.0))
def test_agrees_with_opendp(rho: float) -> None:
    dp.enable_features("contrib")
    scale = 1 / math.sqrt(2 * rho)  # a Gaussian of sensitivity 1: rho = 1 / (2 scale^2), up to its rounding
    gaussian = dp.m.make_gaussian(dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float), scale=scale)
    profile = dp.c.make_zCDP_to_approxDP(gaussian).map(1.0)  # type: ignore[no-untyped-call]
    for delta in (0.2, 0.05, 1e-3, 1e-6):
        ours, theirs = zcdp_to_approx_dp(rho, delta), float(profile.epsilon(delta))
        assert ours == pytest.approx(theirs, rel=1e-6)


def test_the_grid_is_close_to_the_infimum() -> None:
    """The returned eps is within 1e-6 of the minimum over a dense alpha grid (the grid search loses no power)."""
    for rho in RHOS:
        for delta in DELTAS:
            log_inv = math.log(1 / delta)
            alpha = 1 + np.geomspace(1e-6, 1e6, 400_000)
            dense = alpha * rho + (log_inv + (alpha - 1) * np.log1p(-1 / alpha) - np.log(alpha)) / (alpha - 1)
            assert zcdp_to_approx_dp(rho, delta) <= max(0.0, float(np.min(dense))) + 1e-6
