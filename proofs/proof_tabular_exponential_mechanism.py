"""Proof note — the exponential mechanism of 003-def3.8 (Theorems 3.9 and 3.10) and its uses in 003.

Claim (Theorem 3.9)
-------------------
For a utility u with sensitivity Δ_u (eq (9)), the mechanism P[A(h) = r] ∝ exp(ε u(h, r) / (2Δ_u))
is ε-DP: for neighbours h, h' and every r,

    P[r | h] / P[r | h'] = exp(ε (u(h,r) - u(h',r)) / (2Δ)) * Z(h') / Z(h)  <=  e^{ε/2} e^{ε/2}.

Both factors are at most e^{ε/2} because |u(h,r) - u(h',r)| <= Δ for every r. The sign of the
exponent does not matter for privacy: the printed minus sign of 003-def3.8 / 000-def3.2 is the
same mechanism applied to -u (same sensitivity), also ε-DP.

Claim (Theorem 3.10)
--------------------
With the plus sign, P[u(h, A(h)) <= OPT - (2Δ/ε) ln(|R|/β)] <= β: every r with
u(h, r) <= OPT - s has probability at most exp(-ε s / (2Δ)) (its weight divided by the weight
of the optimum alone), and there are at most |R| of them; s = (2Δ/ε) ln(|R|/β) gives β.
With the printed minus sign this fails: the mechanism concentrates on the *minimum* utility
(E-tabular-2; the checks below give a numeric counterexample).

Code
----
* ``dpstream/mechanisms.py``, ``ExponentialMechanism.select``: ``noise.exponential_mechanism(site, scores,
  self.epsilon, self.sensitivity)``, scores negated when ``as_printed`` (the printed minus sign);
* ``dpstream/noise.py``: the door samples index i with log-weight ``em_log_weights(params)`` =
  ``scores * (epsilon / (2.0 * sensitivity))`` (Gumbel noisy max, seeded and secure sources alike);
* ``dpstream/tabular/selection.py``, ``Selector.mechanism``: ``ExponentialMechanism(epsilon / (2 * k), Δ_u)``
  (``DEF_3_8``, with ``as_printed`` for ``PRINTED_DEF_3_8``), ``ExponentialMechanism(epsilon / k, 1.0)``
  (``PRINTED_ALG2_L11``); ``[003-alg3 L12]`` ``index = self.selector.select(...)`` in ``MainAlgorithm.select``.

The three laws printed in 003 (E-tabular-1)
-------------------------------------------
* 003-alg3 L12 "ExponentialMechanism(e, ε/2k)" with Definition 3.8 and Δ = 1: exp(ε e / (4k)),
  ε/(2k) per selection; App. A eq (12) uses exactly this (error 4k/ε ln(|Q|/β)).
* 003-alg2 L11 prints P ∝ exp((ε/2k) e): matching exponents, ε' / (2Δ) = ε/(2k) with Δ = 1
  gives ε' = ε/k: twice the per-selection budget of L12, so k selections spend ε, not ε/2.
* Definition 3.8 itself: the minus sign.

Checks below: Theorems 3.9 and 3.10 and the three laws in sympy; then the same on the law the code
samples: the parameters of the exponential-mechanism draw recorded on a tape (scores, epsilon,
sensitivity) turned into log-weights by ``em_log_weights``, for ``ExponentialMechanism`` and for every
``SelectionLaw`` of ``Selector``.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np
import sympy as sp

from dpstream.insecure import InsecureZeroNoise, TapeRecorder
from dpstream.mechanisms import ExponentialMechanism
from dpstream.noise import DrawKind, em_log_weights
from dpstream.tabular.selection import SelectionLaw, Selector
from dpstream.tape import Draw


def _recorded_draw(select: ExponentialMechanism | Selector, scores: Sequence[float]) -> Draw:
    """The exponential-mechanism draw ``select`` makes on ``scores``, as recorded on a tape."""
    recorder = TapeRecorder(InsecureZeroNoise())
    select.select(recorder, "003-def3.8 t=1", scores)
    (draw,) = recorder.tape.draws
    assert draw.kind is DrawKind.EXPONENTIAL_MECHANISM
    return draw


def _door_log_probabilities(draw: Draw) -> np.ndarray:
    """log P[i] of the door's law for a recorded draw: normalised em_log_weights."""
    w = em_log_weights(draw.params)
    return np.asarray(w - w.max() - np.log(np.exp(w - w.max()).sum()))


def test_ratio_bound_theorem_3_9() -> None:
    """|log P[r|h] - log P[r|h']| <= ε for utilities moved by at most Δ (exhaustive on a grid, exact)."""
    eps, delta = sp.Rational(1, 1), sp.Rational(1, 2)
    base = [sp.Rational(3, 2), sp.Rational(0), sp.Rational(-1, 2)]
    moves = [-delta, 0, delta]
    for sign in (1, -1):                                     # the printed minus sign is as private
        for shift in itertools.product(moves, repeat=3):
            u = [sign * b for b in base]
            v = [sign * (b + s) for b, s in zip(base, shift, strict=True)]
            zu = sum(sp.exp(eps * x / (2 * delta)) for x in u)
            zv = sum(sp.exp(eps * x / (2 * delta)) for x in v)
            for r in range(3):
                log_ratio = eps * (u[r] - v[r]) / (2 * delta) - sp.log(zu) + sp.log(zv)
                assert float(sp.Abs(log_ratio)) <= float(eps) + 1e-12


def test_normaliser_factor_is_at_most_half() -> None:
    """Z(h')/Z(h) <= e^{ε/2} when every utility moves by at most Δ (termwise)."""
    eps, d = sp.symbols("epsilon Delta", positive=True)
    u, s = sp.symbols("u s", real=True)
    term_ratio = sp.exp(eps * (u + s) / (2 * d)) / sp.exp(eps * u / (2 * d))
    assert sp.simplify(term_ratio - sp.exp(eps * s / (2 * d))) == 0
    assert sp.simplify(term_ratio.subs(s, d) - sp.exp(eps / 2)) == 0


def test_accuracy_theorem_3_10() -> None:
    """|R| exp(-ε s / (2Δ)) = β at s = (2Δ/ε) ln(|R|/β)."""
    eps, d, beta, R = sp.symbols("epsilon Delta beta R", positive=True)
    s = 2 * d / eps * sp.log(R / beta)
    assert sp.simplify(R * sp.exp(-eps * s / (2 * d)) - beta) == 0


def test_printed_minus_sign_breaks_the_accuracy_statement() -> None:
    """Utilities (10, 0, 0), ε = Δ = 1: the printed law picks the optimum with probability e^{-5}/(e^{-5} + 2)."""
    u = [10, 0, 0]
    plus = [sp.exp(sp.Rational(1, 2) * x) for x in u]
    minus = [sp.exp(-sp.Rational(1, 2) * x) for x in u]
    p_opt_plus = plus[0] / sum(plus)
    p_opt_minus = minus[0] / sum(minus)
    assert float(p_opt_plus) > 0.98 and float(p_opt_minus) < 0.004
    beta = sp.Rational(1, 10)
    threshold = 10 - 2 * sp.log(3 / beta)                     # OPT - (2Δ/ε) ln(|R|/β) ~ 3.2
    bad_minus = sum(p for p, x in zip(minus, u, strict=True) if x <= threshold) / sum(minus)
    assert float(bad_minus) > float(beta)                     # Theorem 3.10 fails for the printed sign


def test_the_three_printed_laws() -> None:
    """L11 of 003-alg2 equals the mechanism with budget ε/k (Δ = 1); L12 of 003-alg3 uses ε/(2k)."""
    eps, k, e = sp.symbols("epsilon k e", positive=True)
    law_l11 = eps / (2 * k) * e                               # printed exponent of 003-alg2 L11
    eps_prime = sp.solve(sp.Eq(sp.Symbol("x") * e / 2, law_l11), sp.Symbol("x"))[0]
    assert sp.simplify(eps_prime - eps / k) == 0
    law_l12 = (eps / (2 * k)) * e / 2                         # Def 3.8 with budget ε/2k and Δ = 1
    assert sp.simplify(law_l11 / law_l12 - 2) == 0            # twice the budget per selection
    # the error of App. A eq (12) is that of budget ε/(2k): 2Δ/(ε/2k) ln(|Q|/β) = 4k/ε ln(|Q|/β)
    Qn, beta = sp.symbols("Q beta", positive=True)
    assert sp.simplify(2 / (eps / (2 * k)) * sp.log(Qn / beta) - 4 * k / eps * sp.log(Qn / beta)) == 0


def test_door_law_is_exp_eps_u_over_two_delta() -> None:
    """ExponentialMechanism(eps, Δ) draws with log-weights eps u / (2Δ) (as printed: -eps u / (2Δ))."""
    eps, delta = sp.Rational(3, 4), sp.Rational(1, 4)
    u = [sp.Rational(3, 2), sp.Integer(0), sp.Rational(-1, 2), sp.Integer(5)]
    for as_printed, sign in ((False, 1), (True, -1)):
        draw = _recorded_draw(ExponentialMechanism(float(eps), float(delta), as_printed=as_printed),
                              [float(x) for x in u])
        expected = [float(sign * eps * x / (2 * delta)) for x in u]
        assert np.allclose(em_log_weights(draw.params), expected, rtol=1e-15, atol=0)


def test_selector_laws_are_the_three_printed_laws() -> None:
    """Selector's draws per unit score: Def 3.8 at ε/2k -> ε/(4k); 003-alg2 L11 -> ε/(2k), i.e. budget ε/k
    (twice the per-selection budget); printed Def 3.8 -> -ε/(4k). Selector.log_probabilities is the door's law."""
    eps, k = sp.Rational(1, 1), 3
    per_unit = {SelectionLaw.DEF_3_8: eps / (4 * k), SelectionLaw.PRINTED_ALG2_L11: eps / (2 * k),
                SelectionLaw.PRINTED_DEF_3_8: -eps / (4 * k)}
    spent = {SelectionLaw.DEF_3_8: eps / (2 * k), SelectionLaw.PRINTED_ALG2_L11: eps / k,
             SelectionLaw.PRINTED_DEF_3_8: eps / (2 * k)}
    scores = [4.0, 1.0, 0.0, 2.5]
    for law, slope in per_unit.items():
        selector = Selector(float(eps), k, 1.0, law)
        draw = _recorded_draw(selector, scores)
        assert np.allclose(em_log_weights(draw.params), [float(slope) * x for x in scores], rtol=1e-15, atol=0)
        assert np.isclose(selector.epsilon_spent, float(spent[law]), rtol=1e-15)
        assert np.allclose(selector.log_probabilities(scores), _door_log_probabilities(draw), atol=1e-12)


def test_theorems_3_9_and_3_10_on_the_door_law() -> None:
    """Theorem 3.9 on the grid of the first check with the door's probabilities; Theorem 3.10 (plus sign) and its
    failure for the printed sign, with probabilities read from recorded draws."""
    eps, delta = 1.0, 0.5
    base = [1.5, 0.0, -0.5]
    for as_printed in (False, True):
        mech = ExponentialMechanism(eps, delta, as_printed=as_printed)
        for shift in itertools.product((-delta, 0.0, delta), repeat=3):
            p = _door_log_probabilities(_recorded_draw(mech, base))
            q = _door_log_probabilities(_recorded_draw(mech, [b + s for b, s in zip(base, shift, strict=True)]))
            assert np.abs(p - q).max() <= eps + 1e-12
    u, beta = [10.0, 0.0, 0.0], 0.1
    threshold = max(u) - 2 * 1.0 / 1.0 * np.log(len(u) / beta)
    for as_printed, holds in ((False, True), (True, False)):
        logp = _door_log_probabilities(_recorded_draw(ExponentialMechanism(1.0, 1.0, as_printed=as_printed), u))
        bad = float(np.exp(logp)[np.asarray(u) <= threshold].sum())
        assert (bad <= beta) is holds
