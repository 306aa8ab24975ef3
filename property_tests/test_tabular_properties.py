"""Hypothesis properties of the tabular family (seeds 003/000).

Examples are derandomized (``derandomize=True``): the same examples on every run, so CI is
deterministic; with random examples (200 per property) they also passed when written.

* the marginals of a dataset sum to its size;
* MW keeps a (non-negative) distribution of the stated total;
* a workload's answers are its marginal queries' answers (and sum to the total);
* with no noise and exact fitting, Algorithm 3 tracks the true stream: exactly when g_t is the
  last fitted dataset (``aggregate="last"``, k = |Q|, Q pinning the table), and, with the printed
  average of L19,
  every measurement is off by exactly the synthetic error at the query's last unselected time.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from dpstream.noise import InsecureZeroNoise, data_rng
from dpstream.tabular.datasets import ExplicitDataset, UniformDataset, answer
from dpstream.tabular.domain import Domain
from dpstream.tabular.fitting import InformationProjection, Measurement, MultiplicativeWeights
from dpstream.tabular.main_algorithm import MainAlgorithm
from dpstream.tabular.metrics import CumulativeMarginals
from dpstream.tabular.queries import Query, Workload, all_marginal_queries, all_workloads, marginal_table_of_records
from dpstream.tabular.stream import DifferentialDataset, StreamStep, generate_stream
from dpstream.tabular.totals import TotalRule


@st.composite
def domains(draw: st.DrawFn, max_p: int = 4) -> Domain:
    sizes = draw(st.lists(st.integers(1, 4), min_size=1, max_size=max_p))
    return Domain(tuple(f"x{i}" for i in range(len(sizes))), tuple(sizes))


@st.composite
def domain_records(draw: st.DrawFn) -> tuple[Domain, np.ndarray]:
    dom = draw(domains())
    n = draw(st.integers(0, 30))
    rows = [[draw(st.integers(0, s - 1)) for s in dom.sizes] for _ in range(n)]
    return dom, np.array(rows, dtype=np.int64).reshape(n, dom.p)


@settings(max_examples=40, deadline=None, derandomize=True)
@given(data=domain_records(), pick=st.data())
def test_marginals_sum_to_the_size(data: tuple[Domain, np.ndarray], pick: st.DataObject) -> None:
    dom, records = data
    cols = tuple(sorted(pick.draw(st.sets(st.integers(0, dom.p - 1), min_size=1))))
    table = marginal_table_of_records(dom, records, cols)
    assert table.sum() == records.shape[0]
    counts = np.zeros(dom.sizes)
    for r in records:
        counts[tuple(r)] += 1
    assert np.allclose(ExplicitDataset(dom, counts).marginal(cols), table)
    step = StreamStep.build(dom, records)
    assert DifferentialDataset(dom, step).marginal(cols).sum() == step.size


@settings(max_examples=40, deadline=None, derandomize=True)
@given(dom=domains(3), total=st.floats(0, 1e4), m=st.floats(-1e4, 1e4), seed=st.integers(0, 2**16),
       workload=st.booleans())
def test_mw_keeps_a_distribution_of_the_stated_total(dom: Domain, total: float, m: float, seed: int,
                                                     workload: bool) -> None:
    rng = data_rng(seed)
    init = ExplicitDataset(dom, rng.random(dom.sizes) + 1e-3)
    q: Query
    if workload:
        q = Workload.build(dom, (0,))
        value = np.full(q.dim, m / q.dim)
    else:
        q = all_marginal_queries(dom, 1)[0]
        value = np.array([m])
    h = MultiplicativeWeights().fit([Measurement(q, value)], init, total)
    counts = np.asarray(h.marginal(tuple(range(dom.p))))
    assert np.all(counts >= 0)
    assert abs(counts.sum() - total) <= 1e-9 * max(1.0, total)


@settings(max_examples=40, deadline=None, derandomize=True)
@given(data=domain_records(), pick=st.data())
def test_workload_answers_are_its_marginal_queries(data: tuple[Domain, np.ndarray], pick: st.DataObject) -> None:
    dom, records = data
    cols = tuple(sorted(pick.draw(st.sets(st.integers(0, dom.p - 1), min_size=1))))
    W = Workload.build(dom, cols)
    h = DifferentialDataset(dom, StreamStep.build(dom, records))
    values = answer(W, h)
    assert values.tolist() == [answer(q, h)[0] for q in W.queries()]
    assert values.sum() == records.shape[0] == answer(W, h).sum()
    u = UniformDataset(dom, 2.0)
    assert np.isclose(answer(W, u).sum(), u.total)


@settings(max_examples=15, deadline=None, derandomize=True)
@given(seed=st.integers(0, 2**16), T=st.integers(1, 5), removal=st.sampled_from([0.0, 0.2]))
def test_noiseless_exact_fitting_tracks_the_stream(seed: int, T: int, removal: float) -> None:
    dom = Domain(("a", "b", "c"), (2, 3, 2))
    # the 3-way workload pins the whole table, so IPF is an exact fit (it converges slowly to exact
    # zeros from 2-way margins alone)
    W = [*all_workloads(dom, 2), Workload.build(dom, (0, 1, 2))]
    stream = generate_stream(dom, T, 20, seed=seed, removal_rate=removal)
    alg = MainAlgorithm(dom, W, len(W), 1.0, InsecureZeroNoise(), total=TotalRule.true_size(),
                        fitter=InformationProjection(), aggregate="last")
    truth = CumulativeMarginals(dom, [w.columns for w in W])
    for step in stream:
        g = alg.step(step)
        truth.update(step)
        for w in W:
            assert np.allclose(answer(w, g), w.from_table(truth.tables[w.columns]), atol=1e-6 * max(1.0, truth.total))


@settings(max_examples=15, deadline=None, derandomize=True)
@given(seed=st.integers(0, 2**16), k=st.integers(1, 4))
def test_noiseless_measurements_carry_the_last_unselected_error(seed: int, k: int) -> None:
    dom = Domain(("a", "b"), (2, 3))
    Q = all_marginal_queries(dom, 1)
    stream = generate_stream(dom, 5, 15, seed=seed, removal_rate=0.2)
    alg = MainAlgorithm(dom, Q, k, 1.0, InsecureZeroNoise(), total=TotalRule.true_size(), keep_trace=True)
    truth = CumulativeMarginals(dom, [q.columns for q in Q])
    f: list[list[float]] = []
    for step in stream:
        alg.step(step)
        truth.update(step)
        f.append([float(q.from_table(truth.tables[q.columns])[0]) for q in Q])
    assert alg.trace is not None
    for tr in alg.trace:
        for j in tr.selected:
            before = [s.t for s in alg.trace[:tr.t - 1] if j not in s.selected]
            err = float(alg.trace[before[-1] - 1].g_answers[j][0]) - f[before[-1] - 1][j] if before else 0.0
            assert abs(float(tr.m[j][0]) - f[tr.t - 1][j] - err) <= 1e-9 * max(1.0, abs(f[tr.t - 1][j]))
