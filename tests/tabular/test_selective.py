"""003-alg3 is an instance of online selective counting (001-alg4): same tape, same releases."""

from __future__ import annotations

import numpy as np
import pytest

from dpstream.noise import InsecureSeededNoise, NoiseSource
from dpstream.phdstream.selective_counting import SelectiveCounting
from dpstream.tabular.datasets import answer
from dpstream.tabular.domain import Domain
from dpstream.tabular.main_algorithm import MainAlgorithm
from dpstream.tabular.queries import Query, all_marginal_queries, all_workloads
from dpstream.tabular.selective import SelectiveMainAlgorithm
from dpstream.tabular.stream import generate_stream
from dpstream.tabular.totals import TotalRule
from dpstream.testing import record_run, replay_run

DOM = Domain(("a", "b", "c"), (2, 3, 2))
STREAM = generate_stream(DOM, 6, 30, seed=2, removal_rate=0.1)


@pytest.mark.parametrize("queries", [all_marginal_queries(DOM, 2), all_workloads(DOM, 2)], ids=["queries", "workloads"])
def test_meta_algorithm_reproduces_algorithm_3(queries: list[Query]) -> None:
    total = TotalRule.measured() if queries[0].dim > 1 else TotalRule.public(30)

    def build(noise: NoiseSource) -> MainAlgorithm:
        return MainAlgorithm(DOM, queries, 2, 1.0, noise, total=total)

    direct, tape = record_run(build, STREAM, seed=3)
    via_meta = replay_run(lambda n: SelectiveMainAlgorithm(build(n)), STREAM, tape)  # every tape site is used
    for a, b in zip(direct, via_meta, strict=True):
        for q in queries:
            assert np.array_equal(answer(q, a), answer(q, b))


def test_decomposition_and_claim() -> None:
    alg = MainAlgorithm(DOM, all_marginal_queries(DOM, 1), 2, 1.0, InsecureSeededNoise(0), total=TotalRule.public(30))
    meta = SelectiveMainAlgorithm(alg)
    assert isinstance(meta.meta, SelectiveCounting)
    for x in STREAM[:3]:
        meta.step(x)
    # one meta-step per (t, l); the activation times J_l are those of the counters
    assert meta.meta.t == 3 * 2
    assert sum(len(v) for v in meta.meta.J.values()) == 6
    assert all(alg.counters[i].t == len(times) for i, times in meta.meta.J.items())
    assert meta.claim.parameter == pytest.approx(alg.claim.parameter) == pytest.approx(1.0)
