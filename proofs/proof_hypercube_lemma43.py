"""Proof note — Lemma 4.3 of 004 (used for the accuracy bound (4.8), d >= 2).

Claim: for a constant alpha > 1 and r = floor(log2(eps t)),

    S' = sum_{j=1}^r alpha^j (r - j + 1)   <~ alpha^r,
    S  = sum_{j=1}^r alpha^j (r - j + 1)^2 <~ alpha^r.

Proof (corrected). With k = r - j, S' / alpha^r = sum_{k=0}^{r-1} (k+1) beta^k, beta = 1/alpha < 1,
an increasing sequence with limit 1/(1-beta)^2 = alpha^2/(alpha-1)^2; likewise
S / alpha^r -> (1+beta)/(1-beta)^3. So S' <= alpha^{r+2}/(alpha-1)^2 and
S <= alpha^r (1+beta)/(1-beta)^3 for every r: the claim holds.

Where the code meets it. (4.8) bounds sum_{j<=r} (1/eps_{j,r}) (log t + (r-j+1)^2 + ...) 2^{j(1-1/d)} with the
schedule (4.1) of ``dpstream/hypercube/schedule.py``: ``PrivacySchedule.__call__`` returns
``self.C1 * eps * float(2.0 ** ((j - r) * (1.0 - 1.0 / self.d) / 2.0))`` with ``alpha = 2^{(1-1/d)/2}``
(``PrivacySchedule.alpha``) and ``C1 = (1 - 2^{-(1-1/d)/2}) / 2``. Then
(1/eps_{j,r}) 2^{j(1-1/d)} = alpha^{r-j} alpha^{2j} / (C1 eps) = alpha^r alpha^j / (C1 eps), so the sums of (4.8)
are alpha^r S' / (C1 eps) and alpha^r S / (C1 eps), and Lemma 4.3 turns them into O(alpha^{2r}) =
O(2^{r(1-1/d)}). Checked below with the code's schedule for d = 2..6.

The printed telescoping has slips (docs/errata/hypercube.md E-hypercube-10; the conclusion is
unaffected): it writes "(alpha - 1) S' = alpha S - S" (S for S'), and
"(alpha-1)S' = sum_{j=2}^{r+1} alpha^j + alpha^{r+1} - alpha r", which counts alpha^{r+1} twice
(correct: sum_{j=2}^{r+1} alpha^j - alpha r); then "S' = (alpha^{r+1} - alpha^2)/(alpha-1) - alpha r"
(correct: ((alpha^{r+2} - alpha^2)/(alpha-1) - alpha r)/(alpha - 1)). For S it writes
"(alpha-1)S = sum_{j=2}^{r+1} alpha^j (2r-2j+3) + alpha^{r+1} - alpha r^2" (again alpha^{r+1} twice:
correct is sum_{j=2}^{r} alpha^j (2r-2j+3) + alpha^{r+1} - alpha r^2) and then flips the sign of
alpha r^2 in the next line. The checks below verify the corrected identities for r = 1..10 and
show that the printed ones fail.
"""

from __future__ import annotations

import math

import sympy as sp

from dpstream.hypercube.schedule import PrivacySchedule

a = sp.symbols("alpha", positive=True)
jj = sp.symbols("j", integer=True)


def _S1(r: int) -> sp.Expr:
    return sum(a**j * (r - j + 1) for j in range(1, r + 1))


def _S2(r: int) -> sp.Expr:
    return sum(a**j * (r - j + 1) ** 2 for j in range(1, r + 1))


def test_corrected_telescoping_identities() -> None:
    for r in range(1, 11):
        S1, S2 = _S1(r), _S2(r)
        assert sp.expand((a - 1) * S1 - (sum(a**j for j in range(2, r + 2)) - a * r)) == 0
        assert sp.simplify(S1 - ((a ** (r + 2) - a**2) / (a - 1) - a * r) / (a - 1)) == 0
        rhs = sum(a**j * (2 * r - 2 * j + 3) for j in range(2, r + 1)) + a ** (r + 1) - a * r**2
        assert sp.expand((a - 1) * S2 - rhs) == 0


def test_printed_intermediate_steps_are_wrong() -> None:
    for r in range(1, 6):
        printed_1 = sum(a**j for j in range(2, r + 2)) + a ** (r + 1) - a * r
        assert sp.expand((a - 1) * _S1(r) - printed_1) != 0
        printed_S1 = (a ** (r + 1) - a**2) / (a - 1) - a * r
        assert sp.simplify(_S1(r) - printed_S1) != 0
        printed_2 = sum(a**j * (2 * r - 2 * j + 3) for j in range(2, r + 2)) + a ** (r + 1) - a * r**2
        assert sp.expand((a - 1) * _S2(r) - printed_2) != 0


def test_bounded_by_alpha_to_the_r() -> None:
    delta = sp.symbols("delta", positive=True)
    alpha = 1 + delta  # any alpha > 1
    beta = 1 / alpha
    lim1 = 1 / (1 - beta) ** 2
    lim2 = (1 + beta) / (1 - beta) ** 3
    # power series in b = beta, |b| < 1, differentiated termwise:
    # sum_k b^{k+1} = b/(1-b)  =>  sum_k (k+1) b^k = d/db [b/(1-b)];
    # sum_k (k+1) b^{k+1} = b/(1-b)^2  =>  sum_k (k+1)^2 b^k = d/db [b/(1-b)^2]
    b = sp.symbols("b")
    first = sp.diff(b / (1 - b), b)
    second = sp.diff(b / (1 - b) ** 2, b)
    assert sp.simplify(first - lim1.subs(delta, 1 / b - 1)) == 0
    assert sp.simplify(second - lim2.subs(delta, 1 / b - 1)) == 0
    assert sp.simplify(sp.series(first, b, 0, 6).removeO() - sum((m + 1) * b**m for m in range(6))) == 0
    assert sp.simplify(sp.series(second, b, 0, 6).removeO() - sum((m + 1) ** 2 * b**m for m in range(6))) == 0
    lim1, lim2 = lim1.subs(delta, a - 1), lim2.subs(delta, a - 1)
    for d in (2, 3, 8, 1000):  # alpha = 2^{(1-1/d)/2} in [2^{1/4}, sqrt 2)
        alpha = 2.0 ** ((1 - 1 / d) / 2)
        bound1, bound2 = float(lim1.subs(a, alpha)), float(lim2.subs(a, alpha))
        for r in range(1, 60):
            ratio1 = sum(alpha ** (j - r) * (r - j + 1) for j in range(1, r + 1))
            ratio2 = sum(alpha ** (j - r) * (r - j + 1) ** 2 for j in range(1, r + 1))
            assert ratio1 <= bound1 * (1 + 1e-12) and ratio2 <= bound2 * (1 + 1e-12)


def test_schedule_sums_of_4_8_are_bounded_by_lemma_4_3() -> None:
    """With the code's schedule (4.1): alpha > 1 is 2^{(1-1/d)/2}; (1/eps_{j,r}) 2^{j(1-1/d)} = alpha^{r+j}/(C1 eps);
    the weighted sums of (4.8) equal alpha^r S'/(C1 eps) and alpha^r S/(C1 eps), and stay below
    alpha^{2r} lim/(C1 eps) with the limits 1/(1-beta)^2 and (1+beta)/(1-beta)^3 of the corrected proof."""
    eps = 0.8
    for d in range(2, 7):
        sched = PrivacySchedule(eps, d)
        alpha = sched.alpha
        assert alpha > 1 and math.isclose(alpha, float(sp.Integer(2) ** ((1 - sp.Rational(1, d)) / 2)), rel_tol=1e-15)
        beta = 1 / alpha
        lim1, lim2 = 1 / (1 - beta) ** 2, (1 + beta) / (1 - beta) ** 3
        for r in range(1, 30):
            weights = [2.0 ** (j * (1 - 1 / d)) / sched(j, r) for j in range(1, r + 1)]
            for j, w in enumerate(weights, start=1):
                assert math.isclose(w, alpha ** (r + j) / (sched.C1 * eps), rel_tol=1e-9)
            s1 = math.fsum(w * (r - j + 1) for j, w in enumerate(weights, start=1))
            s2 = math.fsum(w * (r - j + 1) ** 2 for j, w in enumerate(weights, start=1))
            S1 = math.fsum(alpha**j * (r - j + 1) for j in range(1, r + 1))  # S' and S of the lemma at alpha
            S2 = math.fsum(alpha**j * (r - j + 1) ** 2 for j in range(1, r + 1))
            assert math.isclose(s1, alpha**r * S1 / (sched.C1 * eps), rel_tol=1e-9)
            assert math.isclose(s2, alpha**r * S2 / (sched.C1 * eps), rel_tol=1e-9)
            assert s1 <= alpha ** (2 * r) * lim1 / (sched.C1 * eps) * (1 + 1e-12)
            assert s2 <= alpha ** (2 * r) * lim2 / (sched.C1 * eps) * (1 + 1e-12)
