"""The explicit bounds of 003 App. A (Theorem 5.1) and an empirical check on a small domain.

The empirical check: 30 independent runs of StreamingMWEM (|X| = 8, 18 queries, k = 12, eps = 1,
n_t = 5000, T = 2); the per-step bound at beta = 0.2 may fail with probability <= 0.2 per (run, t)
if App. A is right. We assert at most 18 failures among the 60 (run, t) pairs: under the bound's
guarantee the count is stochastically below Binomial(60, 0.2), and P[Binomial(60, 0.2) > 18]
< 0.03 (false-alarm probability of this test; the seed is fixed, so its outcome is deterministic).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dpstream.insecure import InsecureSeededNoise
from dpstream.tabular.accuracy import streaming_mwem_differential_bound, streaming_mwem_snapshot_bound
from dpstream.tabular.datasets import answer
from dpstream.tabular.domain import Domain
from dpstream.tabular.queries import all_marginal_queries
from dpstream.tabular.stream import DifferentialDataset, StreamStep, generate_records
from dpstream.tabular.streaming_mwem import StreamingMWEM
from dpstream.tabular.totals import TotalRule


def test_bound_formulas_by_hand() -> None:
    n, X, k, eps, Q, beta = 1000.0, 8, 4, 0.5, 10, 0.1
    by_hand = (2 * n * math.sqrt(math.log(8) / 4) + (8 / 0.5) * math.log(8 / 0.1)
               + (16 / 0.5) * math.log(80 / 0.1))
    assert streaming_mwem_differential_bound(n, X, k, eps, Q, beta) == pytest.approx(by_hand)
    snap = streaming_mwem_snapshot_bound([n, n], X, k, eps, Q, beta)
    second = (2 * n * math.sqrt(math.log(8) / 4) + (8 / 0.5) * math.log(16 / 0.1)
              + (16 / 0.5) * math.log(160 / 0.1))
    assert snap == pytest.approx(by_hand + second)
    # informative only for k > 4 ln|X|: otherwise the first term alone exceeds n
    assert 2 * math.sqrt(math.log(X) / 8) > 1 and 2 * math.sqrt(math.log(X) / 12) < 1


def test_per_step_bound_holds_empirically() -> None:
    dom = Domain(("a", "b", "c"), (2, 2, 2))
    Q = [*all_marginal_queries(dom, 1), *all_marginal_queries(dom, 2)]
    n, T, k, beta = 5000, 2, 12, 0.2
    records = generate_records(dom, n * T, seed=21)
    stream = [StreamStep.build(dom, records[i * n:(i + 1) * n]) for i in range(T)]
    alpha = streaming_mwem_differential_bound(n, dom.size, k, 1.0, len(Q), beta)
    failures, worst = 0, 0.0
    for source in InsecureSeededNoise.independent(3, 30):
        alg = StreamingMWEM(dom, Q, k, 1.0, noise=source, total=TotalRule.public(n))
        prev = np.zeros(len(Q))
        for step in stream:
            g = alg.step(step)
            now = np.array([answer(q, g)[0] for q in Q])
            diff = DifferentialDataset(dom, step)
            err = float(np.max(np.abs(now - prev - np.array([diff.answer(q)[0] for q in Q]))))
            failures += int(err > alpha)
            worst = max(worst, err / alpha)
            prev = now
    assert stats.binom.sf(18, 60, beta) < 0.03
    assert failures <= 18
    assert worst < 1.0   # tightness (max error / bound) is reported in docs/tabular.md
