"""Proof note — the sensitivity of the workload score of 003-sec7.2 (change 4: "1/4 for 2-way workloads").

The score of workload q_i (change 3) is e_i = ||q_i(a) - q_i(h)||_1 / |q_i| - bias_i with
a = ∇f_t + g_{t-1}. The queries of a workload partition X, so one record added or removed at
one time changes exactly one cell of q_i(a) by 1: the l1 term moves by at most 1 (triangle
inequality), the score by at most 1/|q_i|; the bias |X_columns(q_i)| does not depend on the
data. Hence Δ_u = max_i 1/|q_i| = 1 / min_i |q_i|.

For a 2-way workload on attributes of sizes s_a, s_b >= 2, |q_i| = s_a s_b >= 4, so 1/4 is a
valid (conservative) sensitivity for non-binary attributes too, exact when two binary
attributes meet (Adult: sex x income). It is too small for a workload with fewer than 4 cells:
an attribute of size 1 (|q_i| = 2 with a binary partner), or 1-way workloads of binary
attributes (|q_i| = 2: Δ_u = 1/2). Then the selection spends up to twice its budget
(E-tabular-8; tests/tabular/test_audit_broken.py shows the exact loss growing).

The bias term as printed (|X_columns(q_i)| subtracted unscaled, while the l1 term is divided
by |q_i|) is data-independent, so it changes accuracy only, not privacy; if it were scaled by
1/|q_i| it would be the constant 1 for every full workload and would not change the selection.
"""

from __future__ import annotations

import itertools

import sympy as sp


def test_l1_term_moves_by_at_most_one() -> None:
    """One cell +1: | ||a + e_c - b||_1 - ||a - b||_1 | <= 1, exhaustively on small integer tables."""
    for a in itertools.product(range(-2, 3), repeat=3):
        for b in itertools.product(range(-1, 2), repeat=3):
            base = sum(abs(x - y) for x, y in zip(a, b, strict=True))
            for c in range(3):
                moved = list(a)
                moved[c] += 1
                after = sum(abs(x - y) for x, y in zip(moved, b, strict=True))
                assert abs(after - base) <= 1


def test_score_sensitivity_for_two_way_workloads() -> None:
    sa, sb = sp.symbols("s_a s_b", integer=True, positive=True)
    sensitivity = 1 / (sa * sb)
    for a, b in itertools.product(range(2, 6), repeat=2):
        assert sensitivity.subs({sa: a, sb: b}) <= sp.Rational(1, 4)
    assert sensitivity.subs({sa: 2, sb: 2}) == sp.Rational(1, 4)       # exact for two binary attributes
    assert sensitivity.subs({sa: 1, sb: 2}) == sp.Rational(1, 2)       # a constant attribute: 1/4 is wrong


def test_scaled_bias_is_a_constant() -> None:
    cells = sp.symbols("cells", positive=True)
    assert sp.simplify(cells / cells - 1) == 0                         # |X_columns(q)| / |q| = 1 for full workloads
