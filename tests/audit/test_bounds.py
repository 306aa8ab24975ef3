"""The explicit accuracy bounds: the inequality behind each is checked, and the bound against exact tails.

* Chan-Shi-Song 2011 Lemma 2.8 / Cor 2.9 (sum of Laplace): re-derived here. For gamma ~ Lap(b) and
  |h| <= 1/(sqrt 2 b): E e^{h gamma} = 1/(1 - h^2 b^2) <= 1 + 2 h^2 b^2 <= e^{2 h^2 b^2} (sympy below);
  Chernoff with h = lambda/(4 nu^2) (allowed iff lambda <= 2 sqrt 2 nu^2 / b_M) gives
  P[Y > lambda] <= exp(-lambda^2 / (8 nu^2)); lambda = nu sqrt(8 ln(2/beta)) and a union over the two
  tails gives beta, and the condition holds iff nu >= b_M sqrt(ln(2/beta)).
* 002 App. B tail bound as printed: exact tails of sums of discrete Gaussians by convolution; it fails
  for small sigma^2 (erratum E-audit-2), while the two-sided sub-Gaussian form holds on the whole grid.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy as sp
from scipy import signal

from dpstream.audit.bounds import (
    chebyshev_bound,
    laplace_sum_bound,
    subgaussian_bound,
    tree_aggregation_printed_bound,
)
from dpstream.audit.counters.models import binary_tree_counter_model, simple_counter_model, tree_aggregation_model
from dpstream.audit.linear_model import NoiseLaw


def test_laplace_mgf_step_of_lemma_2_8() -> None:
    """1/(1 - x) <= 1 + 2x for 0 <= x <= 1/2 (x = h^2 b^2), and 1 + y <= e^y."""
    x = sp.symbols("x", nonnegative=True)
    gap = sp.simplify((1 + 2 * x) - 1 / (1 - x))  # = x (1 - 2x) / (1 - x) >= 0 on [0, 1/2]
    assert sp.simplify(gap - x * (1 - 2 * x) / (1 - x)) == 0
    for xv in (0, sp.Rational(1, 10), sp.Rational(1, 4), sp.Rational(1, 2)):
        assert gap.subs(x, xv) >= 0
    b, h = sp.symbols("b h", positive=True)
    mgf = sp.integrate(sp.exp(h * sp.Symbol("z")) * sp.exp(-sp.Abs(sp.Symbol("z")) / b) / (2 * b),
                       (sp.Symbol("z"), -sp.oo, sp.oo), conds="none")
    assert sp.simplify(mgf - 1 / (1 - h**2 * b**2)) == 0
    # Chernoff exponent at h = lambda/(4 nu^2): -h lambda + 2 h^2 nu^2 = -lambda^2/(8 nu^2)
    lam, nu = sp.symbols("lambda nu", positive=True)
    hh = lam / (4 * nu**2)
    assert sp.simplify(-hh * lam + 2 * hh**2 * nu**2 + lam**2 / (8 * nu**2)) == 0


def _laplace_sum_tail(scales: list[float], a: float) -> float:
    """P[|sum of independent Lap(b_i)| > a] by numerical convolution on a fine grid."""
    step = min(scales) / 100.0
    width = 40.0 * max(scales) * len(scales)
    x = np.arange(-width, width + step / 2, step)
    pdf = np.exp(-np.abs(x) / scales[0]) / (2 * scales[0])
    for b in scales[1:]:
        pdf = signal.fftconvolve(pdf, np.exp(-np.abs(x) / b) / (2 * b), mode="same") * step
    return float(pdf[np.abs(x) > a].sum() * step)


@pytest.mark.parametrize("scales", [[1.0], [1.0, 1.0], [2.0, 1.0, 0.5]])
def test_laplace_sum_bound_holds_on_exact_tails(scales: list[float]) -> None:
    beta = 0.05
    L = math.log(2 / beta)
    nu = max(math.sqrt(sum(b * b for b in scales)), max(scales) * math.sqrt(L))
    alpha = nu * math.sqrt(8 * L)
    assert _laplace_sum_tail(scales, alpha) <= beta


def test_laplace_sum_bound_from_models() -> None:
    beta = 0.05
    L = math.log(2 / beta)
    simple = laplace_sum_bound(simple_counter_model(1.0, 4), beta)
    # release t sums t Lap(1): nu = max(sqrt t, sqrt L)
    for t in range(1, 5):
        assert simple.values[t - 1] == pytest.approx(max(math.sqrt(t), math.sqrt(L)) * math.sqrt(8 * L))
    tree = laplace_sum_bound(binary_tree_counter_model(1.0, 8), beta)
    b = 4.0  # (floor(log2 8) + 1) / eps
    # release 7 = nodes 7, 6, 4: three Lap(4)
    assert tree.values[6] == pytest.approx(max(b * math.sqrt(3), b * math.sqrt(L)) * math.sqrt(8 * L))


def _dg_pmf(s2: float) -> tuple[np.ndarray, np.ndarray]:
    law = NoiseLaw.discrete_gaussian(s2)
    r = int(40 * math.sqrt(s2)) + 2
    z = np.arange(-r, r + 1)
    return z, np.exp(law.log_pdf(z.astype(np.float64)))


def _sum_tails(s2: float, k_max: int, width: float) -> list[tuple[int, int, float]]:
    """(k, a, P(|sum of k i.i.d. N_Z(0, s2)| >= a)) for k <= k_max and integers 1 <= a <= width sqrt(k s2),
    by exact convolution of the pmfs."""
    _, p = _dg_pmf(s2)
    q = p.copy()
    out: list[tuple[int, int, float]] = []
    for k in range(1, k_max + 1):
        if k > 1:
            q = np.convolve(q, p)
        zz = np.arange(len(q)) - len(q) // 2
        out.extend((k, a, float(q[np.abs(zz) >= a].sum())) for a in range(1, int(width * math.sqrt(k * s2)) + 1))
    return out


def test_002_appendix_b_printed_tail_bound_counterexample() -> None:
    """E-audit-2: P(|N_Z(0, 1/2)| >= 1) = 0.4359 > exp(-1/(2 * 1/2)) = e^-1 = 0.3679 (one node, k = 1)."""
    z, p = _dg_pmf(0.5)
    tail = float(p[np.abs(z) >= 1].sum())
    assert tail == pytest.approx(0.43587, abs=1e-5)
    assert tail > math.exp(-1.0)


@pytest.mark.parametrize("s2", [1.0, 2.5, 5.0, 10.0])
def test_002_appendix_b_printed_tail_bound_holds_on_the_grid_for_sigma2_at_least_1(s2: float) -> None:
    """E-audit-2's other half: for sigma^2 >= 1 the printed one-sided form exp(-a^2/(2 k sigma^2)) held at
    every integer a >= 1 for sums of k <= 6 discrete Gaussians (exact convolution; largest ratio tail/bound
    0.991, at sigma^2 = 1). A grid check, not a proof; sigma^2 = 1/2 is the counterexample above."""
    for k, a, tail in _sum_tails(s2, k_max=6, width=10.0):
        assert tail <= math.exp(-a * a / (2 * k * s2))


@pytest.mark.parametrize("s2", [0.5, 1.0, 2.5, 5.0])
def test_two_sided_subgaussian_bound_holds_exactly(s2: float) -> None:
    """P(|sum of k N_Z(0, s2)| >= a) <= 2 exp(-a^2/(2 k s2)) for k <= 5, integer a (exact convolution)."""
    for k, a, tail in _sum_tails(s2, k_max=5, width=8.0):
        assert tail <= 2 * math.exp(-a * a / (2 * k * s2)) + 1e-15


def test_tree_aggregation_bounds_shapes() -> None:
    m = tree_aggregation_model(0.5, 8)
    s2 = m.laws[0].parameter
    printed = tree_aggregation_printed_bound(s2, 8, 0.05)
    assert printed.values[0] == pytest.approx(math.sqrt(2 * s2 * 1 * math.log(20)))
    assert printed.values[6] == pytest.approx(math.sqrt(2 * s2 * 3 * math.log(20)))  # ceil(log2 7) = 3
    sub = subgaussian_bound(m, 0.05)
    assert sub.values[6] == pytest.approx(math.sqrt(2 * 3 * s2 * math.log(40)))  # popcount(7) = 3 nodes
    cheb = chebyshev_bound(binary_tree_counter_model(1.0, 8, discrete=True), 0.05)
    assert cheb.values[0] == pytest.approx(math.sqrt(NoiseLaw.discrete_laplace(4.0).variance() / 0.05))
