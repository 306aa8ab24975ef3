"""Proof note — privacy of Algorithm 3 (003-thm6.1, 000-lem4.1) and the budget of every tabular algorithm.

Claim (Theorem 6.1, as implemented)
-----------------------------------
``MainAlgorithm(Q, k, ε)`` with ε/(2k)-DP counters (pure DP, STREAM_ENTRY) is ε-DP under
003-def3.3 (one record added or removed at one time τ). Whether A_Dataset is DP is irrelevant:
it is post-processing (003-sec6.3 is right, the hypothesis of Theorem 6.1 is unnecessary).

Proof. The randomness-bearing outputs are the selections η_{t,l} and the counter releases. Every
other quantity (m, r, h_{t,l}, g_t) is a deterministic function of them and of public inputs:
L16-L21 and A_Dataset only read counter outputs and earlier releases (checked numerically for
every transcript by :func:`dpstream.tabular.exact_loss.transcript_losses`: the releases under f and
f' coincide once the transcript is fixed). So the density of a transcript factorises over the
k meta-steps (t, l) of 001-alg4 (dpstream.tabular.selective): P[η_{t,l} | past] x density of the
counter statistic drawn at (t, l).

* At t != τ: the score e_{t,l} = |q_i(∇f_t + g_{t-1}) - q_i(h_{t,l-1})| uses ∇f_t, equal under f
  and f', and g_{t-1}, h_{t,l-1}, functions of the past transcript; the counter inputs
  q_j(∇f_t) are equal. Each factor is the same: zero loss (the g_{t-1} + ∇f_t trick of §6.4 is
  what makes this hold; the true f_t would carry the change to every later selection).
* At t = τ: each selection's score moves by at most Δ_u = 1 (marginal queries) or 1/|q_i|
  (workloads), so each of the k selections costs at most ε/(2k) (Theorem 3.9 at budget ε/2k).
  Each of the k counters invoked at τ receives an input moved by at most 1 in l1 (one record is
  in at most one cell of a workload); an ε/(2k)-DP counter whose loss scales with the l1 change
  costs at most ε/(2k) for it, over its whole future (its later releases are part of its own
  guarantee). Total k ε/(2k) + k ε/(2k) = ε.

Selective counting (001-thm4.2) gives the same number per meta-step, ε_M + ε_C = ε/(2k) + ε/(2k),
and a neighbour changes the k meta-steps of time τ only.

Budgets of the other algorithms (sequential composition of the same kind)
--------------------------------------------------------------------------
* StreamingMWEM (003-alg2): k selections + k measurements Lap(2k/ε) (sensitivity 1) per step,
  fresh randomness per step, neighbours change one step: with the Def 3.8 law ε/(2k) per
  selection: ε. With the printed L11 law (ε/k per selection, E-tabular-1): 3ε/2. With the mass
  |∇f_t| of L20 (E-tabular-3): not DP at all (|g_t| - |g_{t-1}| = |∇f_t| is released exactly).
* Offline MWEM (003-alg1) as printed: ε/2 + ε/2 per iteration, kε in total (E-tabular-4);
  divided by k: ε.
* The naive approach (003-sec4): |Q| Laplace measurements Lap(Δ/(ε/|Q|)) cost ε; 000-sec3.3's
  Lap(Δ/(ε|Q|)) costs ε|Q|^2 (E-tabular-5).
"""

from __future__ import annotations

import sympy as sp

eps, k, Qn = sp.symbols("epsilon k Q", positive=True)


def laplace_cost(sensitivity: sp.Expr, scale: sp.Expr) -> sp.Expr:
    """Pure-DP cost of one Laplace statistic with the given sensitivity and scale."""
    return sensitivity / scale


def test_algorithm_3_per_step_budget() -> None:
    selection = eps / (2 * k)                      # Theorem 3.9 at budget ε/2k, any Δ_u (scores use their own Δ)
    counter = laplace_cost(1, 2 * k / eps)         # Simple counter at ε/2k: Lap(2k/ε), input moved by <= 1
    assert sp.simplify(counter - eps / (2 * k)) == 0
    assert sp.simplify(k * selection + k * counter - eps) == 0
    # selective counting: (ε_M + ε_C) per meta-step, k meta-steps changed by a neighbour
    assert sp.simplify(k * (selection + counter) - eps) == 0


def test_streaming_mwem_budgets() -> None:
    measure = laplace_cost(1, 2 * k / eps)         # 003-alg2 L16
    assert sp.simplify(k * eps / (2 * k) + k * measure - eps) == 0
    printed_selection = eps / k                    # L11: exp((ε/2k) e) = Def 3.8 at ε/k with Δ = 1
    assert sp.simplify(k * printed_selection + k * measure - sp.Rational(3, 2) * eps) == 0


def test_offline_and_naive_budgets() -> None:
    printed_iteration = eps / 2 + laplace_cost(1, 2 / eps)          # 003-alg1 L7-L8 as printed
    assert sp.simplify(k * printed_iteration - k * eps) == 0
    corrected_iteration = eps / (2 * k) + laplace_cost(1, 2 * k / eps)
    assert sp.simplify(k * corrected_iteration - eps) == 0
    assert sp.simplify(Qn * laplace_cost(1, 1 / (eps / Qn)) - eps) == 0            # 003-sec4
    assert sp.simplify(Qn * laplace_cost(1, 1 / (eps * Qn)) - eps * Qn**2) == 0      # 000-sec3.3 as printed


def test_zero_loss_away_from_tau() -> None:
    """A factor P[η | e(∇f_t, past)] with identical arguments has log-ratio 0 (the §6.4 proxy)."""
    e1, e2, a = sp.symbols("e1 e2 a", real=True)
    p_f = sp.exp(a * e1) / (sp.exp(a * e1) + sp.exp(a * e2))
    p_fp = p_f.subs({e1: e1, e2: e2})            # same ∇f_t, same past: the same scores
    assert sp.simplify(sp.log(p_f) - sp.log(p_fp)) == 0
    # with the true f_t instead of g_{t-1} + ∇f_t, a change at τ < t moves every score of time t:
    p_true = sp.exp(a * (e1 + 1)) / (sp.exp(a * (e1 + 1)) + sp.exp(a * e2))
    assert sp.simplify(sp.log(p_f) - sp.log(p_true)) != 0
