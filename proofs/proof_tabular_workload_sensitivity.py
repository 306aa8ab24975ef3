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

Code (reference/dpstream/tabular/selection.py)
----------------------------------------------
* ``query_scores``: ``float(np.abs(diff).sum()) / q.dim - biases[i]`` for a workload, diff = q_i(a) - q_i(h);
  used at ``[003-alg3 L11]`` (``MainAlgorithm.select``) and by StreamingMWEM;
* ``score_sensitivity``: ``1.0 / min(q.dim for q in queries)`` for workloads (``0.25`` with
  ``printed_workload_sensitivity``), ``1.0`` for marginal queries;
* ``workload_bias``: ``cells`` (``BiasRule.PRINTED``), ``cells / workload.dim`` (``SCALED``).

The bias term as printed (|X_columns(q_i)| subtracted unscaled, while the l1 term is divided
by |q_i|) is data-independent, so it changes accuracy only, not privacy; if it were scaled by
1/|q_i| it would be the constant 1 for every full workload and would not change the selection.

Checks below: the l1 step, the 2-way sensitivities and the scaled bias in sympy; then the code's
``score_sensitivity`` and ``workload_bias`` on domains with and without constant attributes, and the
largest move of ``query_scores`` when one record is added, over every record of a small domain.
"""

from __future__ import annotations

import itertools

import numpy as np
import sympy as sp

from dpstream.noise import data_rng
from dpstream.tabular.domain import Domain
from dpstream.tabular.queries import all_workloads, marginal_table_of_records
from dpstream.tabular.selection import BiasRule, query_scores, score_sensitivity, workload_bias


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


def test_code_sensitivity_and_bias() -> None:
    """score_sensitivity = 1 / min_i |q_i| for 2-way workloads: 1/4 for two binary attributes, below 1/4 for larger
    ones, 1/2 with a constant attribute (the printed 1/4 is then too small); the scaled bias is the constant 1."""
    cases = {(2, 2): sp.Rational(1, 4), (2, 3, 4): sp.Rational(1, 6), (3, 5): sp.Rational(1, 15),
             (2, 1, 3): sp.Rational(1, 2)}
    for sizes, exact in cases.items():
        domain = Domain(tuple(f"a{i}" for i in range(len(sizes))), sizes)
        workloads = all_workloads(domain, 2)
        dims = [sp.Integer(w.dim) for w in workloads]
        assert exact == 1 / min(dims) == 1 / min(sp.Integer(sa * sb) for sa, sb in itertools.combinations(sizes, 2))
        assert np.isclose(score_sensitivity(workloads), float(exact), rtol=1e-15)
        assert score_sensitivity(workloads, printed_workload_sensitivity=True) == 0.25
        assert (exact <= sp.Rational(1, 4)) == (min(sizes) >= 2)
        for w in workloads:
            assert workload_bias(domain, w, BiasRule.SCALED) == 1.0
            assert workload_bias(domain, w, BiasRule.PRINTED) == w.dim


def test_code_scores_move_by_at_most_one_over_q() -> None:
    """query_scores(a + one record) - query_scores(a) <= 1/|q_i| for every record of X = {0,1} x {0,1,2} x {0}
    and every workload; attained (the bound is tight), and Δ_u = score_sensitivity bounds them all."""
    domain = Domain(("a", "b", "c"), (2, 3, 1))
    workloads = all_workloads(domain, 2)
    rng = data_rng(7)
    records = rng.integers(0, [2, 3, 1], size=(9, 3))
    target = [w.from_table(marginal_table_of_records(domain, records, w.columns)) for w in workloads]
    current = [rng.normal(2.0, 2.0, size=w.dim) for w in workloads]
    biases = [workload_bias(domain, w, BiasRule.PRINTED) for w in workloads]
    idx = list(range(len(workloads)))
    before = query_scores(workloads, idx, target, current, biases)
    worst = [0.0] * len(workloads)
    for x in itertools.product(range(2), range(3), range(1)):
        added = np.vstack([records, np.array([x])])
        moved = [w.from_table(marginal_table_of_records(domain, added, w.columns)) for w in workloads]
        after = query_scores(workloads, idx, moved, current, biases)
        worst = [max(m, abs(a - b)) for m, a, b in zip(worst, after, before, strict=True)]
    for w, m in zip(workloads, worst, strict=True):
        assert m <= 1 / w.dim + 1e-12
    assert any(np.isclose(m, 1 / w.dim) for w, m in zip(workloads, worst, strict=True))
    assert max(worst) <= score_sensitivity(workloads) + 1e-12
