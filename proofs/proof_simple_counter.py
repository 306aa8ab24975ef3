"""Proof note — Simple counter (001-alg8) is eps-DP; its error law.

Claim
-----
``SimpleCounter(eps)`` is eps-differentially private (pure DP) under the counter
neighbour relation STREAM_ENTRY: input streams f, f' with sum_t |f(t) - f'(t)| <= 1
(001-def4.1 uses the norm ||f|| = sum_t |f(t)|).

Code (reference/dpstream/counters/simple.py, ``SimpleCounter._staging``)
------------------------------------------------------------------------
* ``[001-alg8 L3]`` ``self.g = 0.0``: g(0) = 0;
* ``[001-alg8 L4]`` ``g = self.g + x + z``, z one draw of scale ``1.0 / self.epsilon`` at site
  ``"001-alg8 L4 t=<t>"``, then ``commit`` sets ``self.g = g``.

Proof in the paper's terms
--------------------------
001-alg8 L4 releases g(t) = g(t-1) + f(t) + z_t with z_t ~ Lap(1/eps) independent.
The map (g(1), ..., g(T)) -> (s_1, ..., s_T), s_t = g(t) - g(t-1) = f(t) + z_t is a
bijection (a unit lower-triangular linear map), so the privacy loss of the releases
equals that of the vector s of independent Laplace statistics. Statistic s_t moves by
f(t) - f'(t) between neighbours, so the log density ratio is bounded by

    sum_t |f(t) - f'(t)| / (1/eps) = eps * ||f - f'|| <= eps.

(Each input enters exactly one noisy statistic: "sensitivity 1, one release, scale
1/eps".)

Error law
---------
g(t) - sum_{t'<=t} f(t') = sum_{j<=t} z_j, so Var = t * 2/eps^2 and the error is a
sum of t i.i.d. Laplace variables; tests/counters/test_simple.py checks this exactly
against replayed tapes.

Checks below (sympy): the Laplace log-ratio bound used for one statistic, the
composition over the statistics, the telescoping of g, and the variance; and the same
quantities read from ``SimpleCounter`` itself (:func:`dpstream.testing.linear.measured_linear_model`:
its draws, which statistic each input enters, which statistics each release sums).
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from dpstream.audit.counters.loss import stream_entry_epsilon
from dpstream.convention import with_noise
from dpstream.counters.simple import SimpleCounter
from dpstream.noise import DrawKind
from dpstream.testing.linear import measured_linear_model


def test_laplace_log_ratio_bound() -> None:
    """|log p(x) - log p(x - d)| <= |d| / b for the Laplace density p(x) = exp(-|x|/b)/(2b)."""
    x, d = sp.symbols("x d", real=True)
    b = sp.symbols("b", positive=True)
    log_ratio = (-sp.Abs(x) / b) - (-sp.Abs(x - d) / b)
    # triangle inequality: |x - d| - |x| <= |d|; check on a grid of sign cases exactly
    for xv in (-3, -1, 0, sp.Rational(1, 2), 2):
        for dv in (-2, -1, 0, 1, sp.Rational(3, 2)):
            assert sp.simplify(sp.Abs(log_ratio.subs({x: xv, d: dv})) - sp.Abs(dv) / b) <= 0


def test_composition_over_statistics() -> None:
    """sum_t |f(t) - f'(t)| * eps <= eps whenever sum_t |f(t) - f'(t)| <= 1."""
    eps = sp.symbols("epsilon", positive=True)
    T = 6
    diffs = sp.symbols(f"d1:{T + 1}", real=True)
    total = sum(sp.Abs(di) * eps for di in diffs)
    # the bound is linear in the l1 norm of the difference:
    assert sp.simplify(total - eps * sum(sp.Abs(di) for di in diffs)) == 0


def test_telescoping_and_variance() -> None:
    """g(t) = sum_{j<=t} (f(j) + z_j) and Var(g(t) - S(t)) = 2 t / eps^2."""
    t = 5
    f = sp.symbols(f"f1:{t + 1}")
    z = sp.symbols(f"z1:{t + 1}")
    eps = sp.symbols("epsilon", positive=True)
    g = sp.Integer(0)
    for j in range(t):
        g = g + f[j] + z[j]  # 001-alg8 L4
    assert sp.expand(g - sum(f) - sum(z)) == 0
    var_lap = 2 * (1 / eps) ** 2  # Var(Lap(b)) = 2 b^2
    xs = sp.symbols("x", real=True)
    b = 1 / eps
    density = sp.exp(-sp.Abs(xs) / b) / (2 * b)
    assert sp.simplify(sp.integrate(xs**2 * density, (xs, -sp.oo, sp.oo)) - var_lap) == 0
    assert sp.simplify(t * var_lap - 2 * t / eps**2) == 0


def test_simple_counter_is_the_mechanism_of_the_proof() -> None:
    """Read off SimpleCounter: one L4 draw per step, scale 1/eps; statistic t is f(t) (each input enters exactly
    one statistic); g(t) sums the statistics 1..t (the telescoping); loss max_tau sum_j |S[j,tau]|/b_j = eps;
    error variance 2t/eps^2."""
    T = 9
    for eps in (sp.Rational(3, 10), sp.Rational(1, 2), sp.Integer(2)):
        model = measured_linear_model(with_noise(SimpleCounter, float(eps)), T)
        assert model.sites == tuple(f"001-alg8 L4 t={t}" for t in range(1, T + 1))
        assert all(law.kind is DrawKind.LAPLACE for law in model.laws)
        assert np.allclose([law.parameter for law in model.laws], float(1 / eps), rtol=1e-15, atol=0)
        assert np.allclose(model.statistics, np.eye(T), atol=1e-12)  # s_t = f(t) + z_t
        assert np.allclose(model.combination, np.tril(np.ones((T, T))), atol=1e-12)  # g(t) = sum_{j<=t} s_j
        assert np.isclose(stream_entry_epsilon(model).value, float(eps), rtol=1e-12)
        variance = [2 * t / eps**2 for t in range(1, T + 1)]
        assert np.allclose(model.error_variance(), [float(v) for v in variance], rtol=1e-12)
