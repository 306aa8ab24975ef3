"""Proof note — sparse counting (004-alg2) is eps-DP (004-lem3.2); inhomogeneous sparse counting
(004-alg3) costs eps_r for a change in level r (004-lem3.3).

Setting
-------
Neighbours: Boolean streams X, X' of length n <= T that differ at one time tau; by symmetry
X_tau = 0 and X'_tau = 1. Integer Laplace Lap_Z(b): pmf (1-p)/(1+p) p^|z|, p = e^{-1/b}
(004-sec2.4). F(a) = P(Z <= a), S(a) = P(Z > a).

Code (reference/dpstream/counters/sparse.py; the boxes print ``u`` labels)
-------------------------------------------------------------------------
* ``SparseCounter._threshold``, ``[004-alg2 u2]``: ``self.T0 + lam``, lam drawn at ``"004-alg2 u2 j=<j>"`` with
  scale ``2.0 / self.epsilon``, ``self.T0 = sparse_threshold(eps, T)`` = ``9.0 * math.log(T) / eps``;
* ``[004-alg2 u3]``: ``lam_prime`` drawn at ``"004-alg2 u3 j=<j> t=<u>"`` with scale ``2.0 / self.epsilon``;
  the test ``if N + lam_prime <= T_tilde: break``, otherwise the segment ends (``[004-alg2 u7]``);
* ``[004-alg2 u8]``: ``N_tilde = sub.step(N)``, A_sub = ``binary_mechanism(T)(self.epsilon / 2.0, scoped(noise,
  "004-alg2 u8"))``, the Binary Mechanism (001-alg10, ``discrete=True``, horizon T);
* ``[004-alg2 u5]``: ``g = N_tilde``;
* ``InhomogeneousSparseCounter._staging``, ``[004-alg3 u2]``: level r's counter ``SparseCounter(eps_r / 2.0,
  t_{r+1} - t_r, scoped(noise, "004-alg3 u2 r=<r>"))``; ``[004-alg3 u3]``: ``S = S + level_sum + <draw at
  "004-alg3 u3 r=<r>", scale 2.0 / eps_r>``; ``if tg < self.t_r0: return 0.0`` (X_t before t_r0 unused).

The view of 004-alg2
--------------------
The releases N~_t are a function of (pi, A_sub's noisy nodes), pi the list of segment ends,
so it suffices to bound the loss of this *view* (post-processing). Its density factors as
P(pi) * P(nodes | segment counts of pi), the second factor being the Binary Mechanism on the
segment counts (adaptive sequential composition: pi first, then A_sub given pi).

Step 1: the segment ends cost eps/2 (not eps)
---------------------------------------------
Given the start s of a segment, its threshold is T_0 + lambda (lambda ~ Lap_Z(b_rho)) and the test
after X_v passes iff C(s, v) + lambda'_v <= T_0 + lambda (lambda'_v ~ Lap_Z(b_nu)), C(s, v) the count of
X_{s+1..v}. Segments are independent given their starts, and every segment other than the one
containing tau sees the same counts under X and X' (its counts do not involve X_tau, and its
start is part of the conditioning event pi). For the segment containing tau and an event
E = "tests pass until u, then fail at u" (or "pass until the horizon"):

    P_X(E) = sum_lambda p(lambda) prod_{v<u} F(T_0 + lambda - C(s,v)) S(T_0 + lambda - C(s,u)),

and C'(s, v) = C(s, v) + 1{v >= tau} >= C(s, v): the queries are *monotone*.

* P_X'(E) <= e^{1/b_nu} P_X(E): F is non-decreasing, so each factor F(. - C') <= F(. - C);
  and S(a - 1) <= e^{1/b} S(a) for every integer a (checked below), so the final factor grows
  by at most e^{1/b_nu}. (No factor at all for the "pass until the horizon" event.)
* P_X(E) <= e^{1/b_rho} P_X'(E): substitute lambda = mu - 1: p(mu - 1) <= e^{1/b_rho} p(mu)
  (checked below); then T_0 + mu - 1 - C(s,v) = T_0 + mu - C'(s,v) for v >= tau and
  F(T_0 + mu - 1 - C(s,v)) <= F(T_0 + mu - C(s,v)) for v < tau; the final factor is equal.

Hence |log P_X(pi) - log P_X'(pi)| <= max(1/b_rho, 1/b_nu) = eps/2 with b_rho = b_nu = 2/eps.
The textbook AboveThreshold bound adds the two (1/b_rho + 2/b_nu for general queries); for
monotone queries the two directions use different shifts, so the loss is their *maximum*.
Whether the threshold can be crossed more than once does not matter: each segment draws a
fresh threshold (004-alg2 u2), and only the segment containing tau depends on X_tau.

Step 2: A_sub costs eps/2
-------------------------
Given pi, the segment counts fed to A_sub are equal except for the segment of tau (if it has
ended), which differs by 1: neighbouring inputs of the Binary Mechanism with eps/2, which is
eps/2-DP for at most T inputs (001-alg10 with scale (floor(log2 T)+1)/(eps/2); erratum
E-counters-1 for the printed scale). In the default streaming form at most T - 1 segments end
(a new segment is tested only after one input), so A_sub never exceeds its horizon; the printed
loop tests empty segments too and can end several segments at one time (docs/errata/hypercube.md).

Total: eps/2 + eps/2 = eps (004-lem3.2 holds). The exact audit (dpstream.audit.hypercube.loss)
evaluates sup over views of the log ratio on every neighbouring pair of Boolean streams of length
<= 8 and finds a partition part approaching but never exceeding eps/2 and a total approaching
but never exceeding eps (docs/hypercube.md gives the numbers and the command).

Lemma 3.3 (004-alg3)
--------------------
For tau in level r >= r0, X_tau enters (a) level r's 004-alg2 with eps_r/2 (Step 1-2: eps_r/2)
and (b) the update S~ <- S~ + sum_level X + Lap_Z(2/eps_r) at the end of level r, a sum of
sensitivity 1 with Lap_Z(2/eps_r): eps_r/2. Other levels never read X_tau. Sequential composition:
eps_r (the paper's proof says "parallel composition" but adds the two budgets, which is
sequential composition; the number is right). For tau < t_{r0}, X_tau is never read: loss 0.

Checks below (sympy): the pmf shift ratio, the survival-function ratio S(a-1)/S(a) <= e^{1/b}
for all integers a, the cdf monotonicity, and the budget arithmetic. Then the code: the scales and T_0 on
the tapes of ``SparseCounter`` and ``InhomogeneousSparseCounter`` give the budgets of Steps 1-2 and
Lemma 3.3, at most T - 1 segments reach A_sub, and the exact view loss
(:func:`dpstream.audit.hypercube.loss.sparse_view_loss`) evaluated with the parameters *read from the
implementation* (its T_0, its two scales, A_sub's nodes measured by
:func:`dpstream.testing.linear.measured_linear_model`) stays within eps/2 (segment ends) and eps (view).
"""

from __future__ import annotations

import math

import numpy as np
import sympy as sp

from dpstream.audit.hypercube.loss import SparseLaw, boolean_pairs, sparse_view_loss
from dpstream.counters.sparse import InhomogeneousSparseCounter, SparseCounter, binary_mechanism, level_start
from dpstream.insecure import InsecureZeroNoise, TapeRecorder
from dpstream.noise import DrawKind
from dpstream.tape import Tape
from dpstream.testing.linear import measured_linear_model

q = sp.symbols("p", positive=True)  # p = e^{-1/b} in (0, 1)
k = sp.symbols("k", integer=True, nonnegative=True)


def _S(a: sp.Expr, nonneg: bool) -> sp.Expr:
    """Survival function P(Z > a) of Lap_Z: p^{a+1}/(1+p) for a >= 0, 1 - p^{-a}/(1+p) for a < 0."""
    return q ** (a + 1) / (1 + q) if nonneg else 1 - q ** (-a) / (1 + q)


def _pmf(z: int) -> sp.Expr:
    return (1 - q) / (1 + q) * q ** abs(z)


def _geometric_tail(lo: sp.Expr) -> sp.Expr:
    """sum_{z >= lo} p^z for 0 < p < 1 (sympy's convergent branch)."""
    z = sp.symbols("z", integer=True)
    total = sp.summation(q**z, (z, lo, sp.oo))
    return total.args[0][0] if isinstance(total, sp.Piecewise) else total


def test_pmf_sums_to_one_and_survival_closed_form() -> None:
    assert sp.simplify((1 - q) / (1 + q) * (1 + 2 * _geometric_tail(sp.Integer(1))) - 1) == 0
    a = sp.symbols("a", integer=True, nonnegative=True)
    tail = (1 - q) / (1 + q) * _geometric_tail(a + 1)  # P(Z > a), a >= 0
    assert sp.simplify(tail - _S(a, True)) == 0


def test_threshold_shift_ratio() -> None:
    """p(mu - 1) / p(mu) is p or 1/p, so at most 1/p = e^{1/b} (1/p - p = (1-p)(1+p)/p >= 0)."""
    for mu in range(-6, 7):
        ratio = sp.simplify(_pmf(mu - 1) / _pmf(mu))
        assert sp.simplify(ratio - 1 / q) == 0 or sp.simplify(ratio - q) == 0
    assert sp.simplify((1 / q - q) - (1 - q) * (1 + q) / q) == 0


def test_survival_ratio_at_most_one_over_p() -> None:
    """S(a - 1) <= S(a) / p for every integer a (the final test of a segment moves by one)."""
    a = sp.symbols("a", integer=True, positive=True)
    # a >= 1: S(a-1) = p^a/(1+p), S(a) = p^{a+1}/(1+p): ratio exactly 1/p
    assert sp.simplify(_S(a - 1, True) / _S(a, True) - 1 / q) == 0
    # a = -k <= 0: S(a-1)/S(a) <= 1/p  <=>  p^2 (1 - p^k) <= 1 - p^k, i.e. (1 - p^k)(1 - p^2) >= 0
    lhs = q * _S(-k - 1, False) - _S(-k, False)  # p S(a-1) - S(a) must be <= 0
    assert sp.simplify(lhs - (-(1 - q**k) * (1 - q**2) / (1 + q))) == 0


def test_cdf_is_monotone() -> None:
    """F(a - 1) <= F(a): the passing factors can only shrink when the count grows."""
    for a in range(-4, 5):
        Fa = 1 - _S(sp.Integer(a), a >= 0)
        Fb = 1 - _S(sp.Integer(a - 1), a - 1 >= 0)
        diff = sp.simplify(Fa - Fb)  # = pmf(a) >= 0
        assert sp.simplify(diff - _pmf(a)) == 0


def test_budget_arithmetic() -> None:
    eps = sp.symbols("epsilon", positive=True)
    b = 2 / eps  # both Lap_Z(2/eps) of 004-alg2 u2, u3
    partition = sp.Max(1 / b, 1 / b)
    assert sp.simplify(partition + eps / 2 - eps) == 0  # Lemma 3.2: eps/2 (segments) + eps/2 (A_sub)
    eps_r = sp.symbols("epsilon_r", positive=True)
    alg2 = eps_r / 2  # Algorithm 2 run with eps_r/2 (004-alg3 u2)
    s_tilde = 1 / (2 / eps_r)  # Lap_Z(2/eps_r) on a sum of sensitivity 1 (004-alg3 u3)
    assert sp.simplify(alg2 + s_tilde - eps_r) == 0  # Lemma 3.3 (1)
    # the additive textbook bound (1/b_rho + 1/b_nu, monotone) would give eps/2 + eps/2 + eps/2
    assert sp.simplify(1 / b + 1 / b + eps / 2 - sp.Rational(3, 2) * eps) == 0


def _zero_noise_run(eps: float, T: int, steps: int) -> tuple[SparseCounter, Tape]:
    """SparseCounter(eps, T) on ``steps`` ones with zero noise, and its tape."""
    recorder = TapeRecorder(InsecureZeroNoise())
    c = SparseCounter(eps, T, noise=recorder)
    for _ in range(steps):
        c.step(1)
    return c, recorder.tape


def test_sparse_counter_scales_threshold_and_budget() -> None:
    """Read off SparseCounter(1, 64) on the all-ones stream with zero noise: thresholds (u2) and tests (u3) are
    Lap_Z(2/eps), so Step 1 costs max(1/b_rho, 1/b_nu) = eps/2; the segment ends at the first test whose count
    exceeds T_0 = 9 ln T / eps; A_sub's nodes (u8) are Lap_Z((floor(log2 T) + 1)/(eps/2)): Step 2 costs eps/2."""
    eps, T = sp.Integer(1), 64
    counter, tape = _zero_noise_run(float(eps), T, T)
    by_line = {line: [d for d in tape if line in d.site] for line in ("004-alg2 u2", "004-alg2 u3", "001-alg10 L8")}
    assert all(d.kind is DrawKind.DISCRETE_LAPLACE for d in tape)
    b_rho = {d.params["scale"] for d in by_line["004-alg2 u2"]}
    b_nu = {d.params["scale"] for d in by_line["004-alg2 u3"]}
    b_sub = {d.params["scale"] for d in by_line["001-alg10 L8"]}
    assert b_rho == b_nu == {float(2 / eps)} and len(b_sub) == 1
    assert all(d.site.startswith("004-alg2 u8 / ") for d in by_line["001-alg10 L8"])
    T0 = 9 * sp.log(T) / eps
    assert math.isclose(counter.T0, float(T0), rel_tol=1e-15)
    last_test_of_segment_1 = max(int(d.site.split("t=")[1]) for d in by_line["004-alg2 u3"] if " j=1 " in d.site)
    assert last_test_of_segment_1 == sp.floor(T0) + 1  # count C = floor(T_0) + 1 > T_0 fails the test
    step_1 = max(1 / b for b in b_rho | b_nu)
    step_2 = float(sp.floor(sp.log(T, 2)) + 1) / b_sub.pop()
    assert math.isclose(step_1, float(eps / 2), rel_tol=1e-15) and math.isclose(step_2, float(eps / 2), rel_tol=1e-15)
    # default streaming form: at most one segment end per step, so A_sub sees at most T - 1 inputs
    small, small_tape = _zero_noise_run(40.0, 6, 6)  # T_0 = 9 ln 6 / 40 < 1: every test after an input fails
    assert small.segments_ended == 5 == len([d for d in small_tape if "001-alg10 L8" in d.site])


def test_exact_view_loss_with_the_implementations_parameters() -> None:
    """004-lem3.2 on every neighbouring Boolean pair of length T = 5, eps = 1, with the law built from the code:
    T_0 and the scales of SparseCounter's draws, A_sub's per-input losses measured from ``binary_mechanism(T)``."""
    eps, T = 1.0, 5
    counter, tape = _zero_noise_run(eps, T, T)
    b_rho = next(d.params["scale"] for d in tape if "004-alg2 u2" in d.site)
    b_nu = next(d.params["scale"] for d in tape if "004-alg2 u3" in d.site)
    sub_loss: list[tuple[float, ...]] = [()]
    for m in range(1, T + 1):  # A_sub after m inputs: sum over its nodes containing input k of 1/scale
        model = measured_linear_model(lambda n: binary_mechanism(T)(eps / 2, n), m)
        inv_b = np.array([1.0 / law.parameter for law in model.laws])
        sub_loss.append(tuple(float(v) for v in np.abs(model.statistics).T @ inv_b))
    law = SparseLaw(T, counter.T0, b_rho, b_nu, tuple(sub_loss))
    worst_partition = worst = 0.0
    for x, y in boolean_pairs(T):
        loss = sparse_view_loss(law, x, y)
        worst_partition = max(worst_partition, loss.parts["partition_only_max"])
        worst = max(worst, loss.upper)
    assert worst_partition <= eps / 2 * (1 + 1e-9) and worst <= eps * (1 + 1e-9)
    assert worst > eps / 2  # both parts contribute: the bound is not vacuous


def test_inhomogeneous_levels_cost_eps_r() -> None:
    """Lemma 3.3 read off InhomogeneousSparseCounter(eps=1, r0=2, eps_r = r/10): nothing is drawn before t_r0;
    level r's 004-alg2 draws Lap_Z(2/(eps_r/2)) (it runs with eps_r/2: Steps 1-2 give eps_r/2) and the S~ update
    of level r draws Lap_Z(2/eps_r) (sensitivity 1: eps_r/2)."""
    eps_levels = [sp.Rational(r, 10) for r in range(8)]
    recorder = TapeRecorder(InsecureZeroNoise())
    c = InhomogeneousSparseCounter(1.0, 2, lambda r: float(eps_levels[r]), noise=recorder)
    t_r0 = level_start(2, 1.0)
    for t in range(1, 20):
        c.step(1)
        if t < t_r0:
            assert len(recorder.tape) == 0
    tape = recorder.tape
    for r in (2, 3):
        eps_r = eps_levels[r]
        inner = {d.params["scale"] for d in tape if d.site.startswith(f"004-alg3 u2 r={r} / 004-alg2 u")}
        (s_tilde,) = [d.params["scale"] for d in tape if d.site == f"004-alg3 u3 r={r}"]
        assert inner == {float(2 / (eps_r / 2))}
        assert math.isclose(s_tilde, float(2 / eps_r), rel_tol=1e-15)
        # the level's 004-alg2 runs with eps_r/2 (its Steps 1-2), the S~ update costs 1/s_tilde: eps_r in total
        assert math.isclose(float(eps_r / 2) + 1 / s_tilde, float(eps_r), rel_tol=1e-14)
