"""Proof note — accuracy of StreamingMWEM (003-thm5.1, proof in 003 App. A), with the explicit bound we check.

Claim (the explicit form of App. A, implemented in dpstream.tabular.accuracy)
-----------------------------------------------------------------------------
With selection at budget ε/(2k) per iteration (Definition 3.8, eq (12)), measurements
Lap(2k/ε), h_{t,0} uniform of mass n = |∇f_t| and ∇f_t >= 0 (insert-only), with probability
at least 1 - β at time t

    max_q |q(∇g_t) - q(∇f_t)| <= 2 n sqrt(ln|X| / k) + (2k/ε) ln(2k/β) + (4k/ε) ln(2k|Q|/β),

and summing over t (insert-only, so sum_t |∇f_t| = |f_T|) the snapshot bound at T.

Steps of App. A, each checked below
-----------------------------------
1. MW step h_l ∝ h_{l-1} exp(q(x) A / (2n)), A = m - q(h_{l-1}); with Ψ_l = KL(∇f_t/n || h_l/n):
   Ψ_{l-1} - Ψ_l = A q(∇f_t) / (2n^2) - ln Z_l.
2. e^x <= 1 + x + x^2 for |x| <= 1 and ln(1 + y) <= y give
   ln Z_l <= (A / (2n))^2 + q(h_{l-1}) A / (2n^2)  (needs |A| <= 2n).
3. Hence (eq (19)) Ψ_{l-1} - Ψ_l >= ((q(h_{l-1}) - q(∇f_t)) / (2n))^2 - ((m - q(∇f_t)) / (2n))^2.
   (Eq (18) prints q(h_{t,l}) where the derivation gives q(h_{t,l-1}); the latter is what the
   maxerr argument needs.)
4. Selection (eq (12)) and the Laplace tail (eq (14)), union over the k iterations (β/2k each).
5. avg_l sqrt(x_l) <= sqrt(avg_l x_l) (Jensen), the telescoping sum Ψ_0 - Ψ_k <= Ψ_0 <= ln|X|
   (uniform h_{t,0}), and sqrt(a + b) <= sqrt(a) + sqrt(b).
6. The O(.) form: u(k) = a/sqrt(k) + b k is minimised at k* = (a/(2b))^{2/3} with
   u(k*) = (2^{1/3} + 2^{-2/3}) a^{2/3} b^{1/3}; App. A prints (2^{1/3} + 2^{-1/3})
   (E-tabular-9, a constant only).

Code
----
* ``dpstream/tabular/fitting.py``, ``MultiplicativeWeights.fit`` (``[003-alg2 L20]``): ``exponent =
  _cell_delta(q, domain, m - q(h)) / (2.0 * N)``, ``p = weights / weights.sum()``, result ``N * p`` (step 1);
* ``dpstream/tabular/streaming_mwem.py``: the selector at ε/(2k) (``[003-alg2 L11]``, Definition 3.8 law) and
  ``self.lap_scale = 2.0 * self.k / self.epsilon`` (``[003-alg2 L16]``), h_{t,0} uniform of mass N_t;
* ``dpstream/tabular/accuracy.py``: ``streaming_mwem_differential_bound`` and ``streaming_mwem_snapshot_bound``,
  the displayed bound.

Scope (docs/tabular.md): Ψ needs ∇f_t >= 0 (insert-only) and n > 0; the snapshot sum needs
insert-only streams; the first term is >= n (trivial) unless k > 4 ln|X|.

Checks below: steps 1-6 in sympy and numbers; then the code: one step of ``MultiplicativeWeights`` is
the update of step 1 and decreases Ψ by at least eq (19) (random instances with |A| <= 2n); the bounds of
``dpstream.tabular.accuracy`` are the displayed formula; StreamingMWEM runs with the assumed ε/(2k) and 2k/ε.
"""

from __future__ import annotations

import math

import numpy as np
import sympy as sp

from dpstream.insecure import InsecureZeroNoise
from dpstream.noise import data_rng
from dpstream.tabular.accuracy import streaming_mwem_differential_bound, streaming_mwem_snapshot_bound
from dpstream.tabular.datasets import ExplicitDataset, answer
from dpstream.tabular.domain import Domain
from dpstream.tabular.fitting import Measurement, MultiplicativeWeights
from dpstream.tabular.queries import all_marginal_queries
from dpstream.tabular.streaming_mwem import StreamingMWEM
from dpstream.tabular.totals import TotalRule

n, A, qf, qh, m = sp.symbols("n A q_f q_h m", real=True)


def test_inequality_exp() -> None:
    """e^x <= 1 + x + x^2 on [-1, 1] (exact at 0; checked on a fine grid and at the end points)."""
    x = np.linspace(-1.0, 1.0, 20001)
    assert np.all(np.exp(x) <= 1 + x + x**2 + 1e-15)
    assert bool(sp.exp(1) <= 3) and bool(sp.exp(-1) <= 1)


def test_log_partition_bound_and_eq_19() -> None:
    """Steps 1-3: with ln Z <= A^2/(4n^2) + q_h A/(2n^2), the KL decrease is at least eq (19)."""
    lnZ_bound = (A / (2 * n)) ** 2 + qh * A / (2 * n**2)
    decrease = A * qf / (2 * n**2) - lnZ_bound
    eq19 = ((qh - qf) / (2 * n)) ** 2 - ((m - qf) / (2 * n)) ** 2
    assert sp.simplify(decrease.subs(A, m - qh) - eq19) == 0


def test_partition_function_expansion() -> None:
    """Z = (1/n) sum_x h(x) exp(q(x) A / (2n)) <= 1 + q_h A / (2n^2) + q_h/n (A/(2n))^2 <= 1 + ... (step 2)."""
    h = sp.symbols("h0:4", positive=True)
    q = [1, 1, 0, 0]
    total = sum(h)
    x = A / (2 * total)
    upper = sum(hi * (1 + qi * x + (qi * x) ** 2) for hi, qi in zip(h, q, strict=True)) / total
    q_h = h[0] + h[1]
    assert sp.simplify(upper - (1 + q_h * A / (2 * total**2) + q_h / total * x**2)) == 0
    # q_h / n <= 1, so the quadratic term is at most (A/(2n))^2 as used in App. A


def test_jensen_telescoping_and_final_bound() -> None:
    """Step 5 on numbers: avg sqrt <= sqrt avg, and sqrt(a + b) <= sqrt(a) + sqrt(b)."""
    rng = data_rng(0)
    for _ in range(200):
        xs = rng.random(7) * 10
        assert np.mean(np.sqrt(xs)) <= np.sqrt(np.mean(xs)) + 1e-12
        a, b = rng.random(2) * 100
        assert np.sqrt(a + b) <= np.sqrt(a) + np.sqrt(b) + 1e-12
    nn, lnX, k = sp.symbols("n lnX k", positive=True)
    assert sp.simplify(sp.sqrt(4 * nn**2 / k * lnX) - 2 * nn * sp.sqrt(lnX / k)) == 0


def test_optimal_k_constant() -> None:
    """Step 6: u(k*) = (2^{1/3} + 2^{-2/3}) a^{2/3} b^{1/3}, not (2^{1/3} + 2^{-1/3}) as printed."""
    a, b, k = sp.symbols("a b k", positive=True)
    u = a / sp.sqrt(k) + b * k
    k_star = sp.solve(sp.diff(u, k), k)[0]
    assert sp.simplify(k_star - (a / (2 * b)) ** sp.Rational(2, 3)) == 0
    value = sp.simplify(u.subs(k, k_star))
    ours = (2 ** sp.Rational(1, 3) + 2 ** sp.Rational(-2, 3)) * a ** sp.Rational(2, 3) * b ** sp.Rational(1, 3)
    printed = (2 ** sp.Rational(1, 3) + 2 ** sp.Rational(-1, 3)) * a ** sp.Rational(2, 3) * b ** sp.Rational(1, 3)
    assert sp.simplify(value - ours) == 0
    assert sp.simplify(value - printed) != 0


def test_uniform_start_bounds_the_entropy() -> None:
    """Ψ_{t,0} = KL(p || uniform) = ln|X| - H(p) <= ln|X| (eq (17)) for a distribution p on |X| = 4 points."""
    p = np.array([0.5, 0.25, 0.25, 0.0])
    nz = p > 0
    kl = float(np.sum(p[nz] * np.log(p[nz] / 0.25)))
    assert kl <= np.log(4) + 1e-12


def test_code_mw_step_decreases_kl_by_eq_19() -> None:
    """MultiplicativeWeights().fit on one measurement: h_l ∝ h_{l-1} exp(q(x) A/(2n)), A = m - q(h_{l-1}), mass n;
    Ψ_{l-1} - Ψ_l >= ((q(h_{l-1}) - q(∇f))/(2n))^2 - ((m - q(∇f))/(2n))^2 with Ψ = KL(∇f/n || h/n)."""
    domain = Domain(("a", "b", "c"), (2, 3, 2))
    queries = all_marginal_queries(domain, 2)
    rng = data_rng(12)
    fitter = MultiplicativeWeights()
    checked = 0
    for _ in range(40):
        f = rng.integers(0, 6, size=domain.sizes).astype(float)
        n = float(f.sum())
        h_prev = rng.random(domain.sizes) + 0.05
        h_prev *= n / h_prev.sum()
        q = queries[int(rng.integers(0, len(queries)))]
        q_f = float(answer(q, ExplicitDataset(domain, f))[0])
        q_h = float(answer(q, ExplicitDataset(domain, h_prev))[0])
        m = q_f + float(rng.laplace(0.0, 3.0))
        if abs(m - q_h) > 2 * n:
            continue  # step 2 needs |A| <= 2n
        h = fitter.fit([Measurement(q, np.array([m]))], ExplicitDataset(domain, h_prev), n).marginal(tuple(range(3)))
        indicator = np.zeros(domain.sizes)  # q(x) of the 2-way marginal query q
        indicator[tuple(q.values[q.columns.index(c)] if c in q.columns else slice(None) for c in range(3))] = 1.0
        update = h_prev * np.exp(indicator * (m - q_h) / (2 * n))
        assert np.allclose(h, update * n / update.sum(), rtol=1e-10)
        support = f > 0
        psi_prev = float(np.sum(f[support] / n * np.log(f[support] / h_prev[support])))
        psi = float(np.sum(f[support] / n * np.log(f[support] / h[support])))
        eq19 = ((q_h - q_f) / (2 * n)) ** 2 - ((m - q_f) / (2 * n)) ** 2
        assert psi_prev - psi >= eq19 - 1e-12
        checked += 1
    assert checked >= 30


def test_code_bounds_are_the_displayed_formula() -> None:
    """accuracy.py's per-step and snapshot bounds equal the displayed formula (sympy, exact values in floats);
    StreamingMWEM selects at ε/(2k) and measures with Lap(2k/ε), the assumptions of the bound."""
    size, X, k, eps, Qn, beta = sp.symbols("n X k epsilon Q beta", positive=True)
    t = sp.symbols("t", positive=True, integer=True)
    alpha_t = 2 * size * sp.sqrt(sp.log(X) / k) + 2 * k / eps * sp.log(2 * k * t / beta) \
        + 4 * k / eps * sp.log(2 * k * t * Qn / beta)
    values = {X: 12, k: 5, eps: sp.Rational(1, 2), Qn: 16, beta: sp.Rational(1, 20)}
    sizes = [30, 0, 7, 12]
    per_step = float(alpha_t.subs({**values, size: 30, t: 1}))
    assert math.isclose(streaming_mwem_differential_bound(30, 12, 5, 0.5, 16, 0.05), per_step, rel_tol=1e-13)
    snapshot = sum(float(alpha_t.subs({**values, size: sz, t: i})) for i, sz in enumerate(sizes, start=1))
    assert math.isclose(streaming_mwem_snapshot_bound(sizes, 12, 5, 0.5, 16, 0.05), snapshot, rel_tol=1e-13)
    domain = Domain(("a", "b", "c"), (2, 3, 2))
    alg = StreamingMWEM(domain, all_marginal_queries(domain, 2), 5, 0.5, noise=InsecureZeroNoise(),
                        total=TotalRule.public(10))
    assert math.isclose(alg.selector.mechanism.epsilon, 0.5 / (2 * 5), rel_tol=1e-15)
    assert math.isclose(alg.lap_scale, 2 * 5 / 0.5, rel_tol=1e-15)
