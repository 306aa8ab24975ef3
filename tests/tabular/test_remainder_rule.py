"""The remainder r(t, i): 003-sec6.2's prose against 003-alg3 L16/L21 (E-tabular-7).

§6.2 prints r(t, i) = q_i(g_t) - C_i(t) if t ∈ N_i(t) (i selected at t), r(t-1, i) otherwise.
Algorithm 3 keeps r(t-1, j) for the selected j (L16) and sets q_i(g_t) - C_i(t) for the
others (L21): the cases are swapped. The box is the consistent one: with the prose's rule
the measurement of a selected query would be m(t, j) = C_j(t) + q_j(g_t) - C_j(t) = q_j(g_t),
which needs g_t before it is computed (L17-L19) and carries no information from the counter.
"""

from __future__ import annotations

import numpy as np

from dpstream.insecure import InsecureSeededNoise, InsecureZeroNoise
from dpstream.tabular.datasets import answer
from dpstream.tabular.domain import Domain
from dpstream.tabular.main_algorithm import MainAlgorithm
from dpstream.tabular.metrics import CumulativeMarginals
from dpstream.tabular.queries import all_marginal_queries
from dpstream.tabular.stream import generate_stream
from dpstream.tabular.totals import TotalRule

DOM = Domain(("a", "b", "c"), (2, 3, 2))
Q = all_marginal_queries(DOM, 2)
STREAM = generate_stream(DOM, 8, 25, seed=12, removal_rate=0.1)


def _run(noise: object) -> MainAlgorithm:
    alg = MainAlgorithm(DOM, Q, 3, 1.0, noise=noise, total=TotalRule.public(25), keep_trace=True)  # type: ignore[arg-type]
    alg.run(STREAM)
    return alg


def test_box_is_the_prose_with_the_cases_swapped() -> None:
    alg = _run(InsecureSeededNoise(1))
    assert alg.trace is not None
    prose = [np.zeros(1) for _ in Q]
    swapped = [np.zeros(1) for _ in Q]
    differ = 0
    for tr in alg.trace:
        for i in range(len(Q)):
            selected = i in tr.selected
            fresh = tr.g_answers[i] - tr.C[i]
            prose[i] = fresh if selected else prose[i]          # §6.2 as printed
            swapped[i] = swapped[i] if selected else fresh      # §6.2 with the cases swapped
            assert np.allclose(tr.r[i], swapped[i])             # = L16 / L21
            differ += int(not np.allclose(tr.r[i], prose[i]))
    assert differ > 0, "the two rules should disagree somewhere on this stream"


def test_box_rule_propagates_only_the_last_unselected_error() -> None:
    """With no noise, m(t, j) - q_j(f_t) = q_j(g_t') - q_j(f_t') for t' the last time j was not selected
    (0 if never): the counters carry the selected times exactly and r the rest (App. B eq (24))."""
    alg = _run(InsecureZeroNoise())
    assert alg.trace is not None
    truth = CumulativeMarginals(DOM, [q.columns for q in Q])
    f: list[list[float]] = []
    for step in STREAM:
        truth.update(step)
        f.append([float(q.from_table(truth.tables[q.columns])[0]) for q in Q])
    for tr in alg.trace:
        for j in tr.selected:
            before = [s.t for s in alg.trace[:tr.t - 1] if j not in s.selected]
            if before:
                tp = before[-1]
                err = float(alg.trace[tp - 1].g_answers[j][0]) - f[tp - 1][j]
            else:
                err = 0.0
            assert abs(float(tr.m[j][0]) - f[tr.t - 1][j] - err) < 1e-9
    assert all(abs(float(answer(q, alg.g)[0])) >= 0 for q in Q)
