"""Offline select-measure-fit (003-alg1, 000-alg1) and the naive approach (003-sec4, 000-sec3.3)."""

from __future__ import annotations

import numpy as np
import pytest

from dpstream.claims import Measure
from dpstream.errors import DPStreamInputError
from dpstream.insecure import InsecureSeededNoise, InsecureZeroNoise, TapeRecorder, TapeReplay
from dpstream.noise import DrawKind
from dpstream.tabular.datasets import ExplicitDataset, answer
from dpstream.tabular.domain import Domain
from dpstream.tabular.fitting import InformationProjection, MultiplicativeWeights
from dpstream.tabular.offline import measure_all, naive_offline, offline_claim, select_measure_fit
from dpstream.tabular.queries import all_marginal_queries, all_workloads
from dpstream.tabular.stream import generate_records
from dpstream.tabular.totals import TotalRule

DOM = Domain(("a", "b", "c"), (2, 3, 2))
COUNTS = np.zeros(DOM.sizes)
for r in generate_records(DOM, 500, seed=3):
    COUNTS[tuple(r)] += 1
F = ExplicitDataset(DOM, COUNTS)
Q = all_marginal_queries(DOM, 2)


def test_budget_division_by_k() -> None:
    """E-tabular-4: default eps/(2k) per selection and Lap(2k/eps); printed eps/2 and Lap(2/eps) per iteration."""
    k, eps = 4, 1.0
    for as_printed, sel_eps, scale in ((False, eps / (2 * k), 2 * k / eps), (True, eps / 2, 2 / eps)):
        recorder = TapeRecorder(InsecureSeededNoise(0))
        select_measure_fit(F, Q, eps, k, MultiplicativeWeights(), total=TotalRule.public(500), noise=recorder,
                           as_printed=as_printed)
        em = [d for d in recorder.tape if d.kind is DrawKind.EXPONENTIAL_MECHANISM]
        lap = [d for d in recorder.tape if d.kind is DrawKind.LAPLACE]
        assert len(em) == len(lap) == k
        assert all(d.params["epsilon"] == pytest.approx(sel_eps) for d in em)
        assert all(d.params["scale"] == pytest.approx(scale) for d in lap)
    assert offline_claim(eps, k, False, TotalRule.public(1)).parameter == eps
    assert offline_claim(eps, k, True, TotalRule.public(1)).parameter == k * eps
    assert offline_claim(eps, k, False, TotalRule.true_size()).measure is Measure.NOT_PRIVATE


def test_noiseless_exact_fitting_recovers_all_queries() -> None:
    """Zero noise (arg-max selection), exact fitting and k = |Q|: h_k answers every query exactly."""
    W = all_workloads(DOM, 2)
    res = select_measure_fit(F, W, 1.0, len(W), InformationProjection(), total=TotalRule.true_size(),
                             noise=InsecureZeroNoise())
    assert sorted(res.selected) == [0, 1, 2]                    # each workload measured once
    for w in W:
        assert answer(w, res.g) == pytest.approx(answer(w, F), abs=1e-6)


def test_000_from_scratch_equals_003_chain_with_mw() -> None:
    """000-alg1 L10 R_Dataset(M) (from h_0, one pass over M) = 003-alg1 L10 A_Dataset(M, h_{i-1}) (newest)."""
    recorder = TapeRecorder(InsecureSeededNoise(7))
    a = select_measure_fit(F, Q, 1.0, 5, MultiplicativeWeights(), total=TotalRule.public(500), noise=recorder)
    b = select_measure_fit(F, Q, 1.0, 5, MultiplicativeWeights(updates="all"), total=TotalRule.public(500),
                           noise=TapeReplay(recorder.tape), from_scratch=True)
    assert a.selected == b.selected
    assert np.allclose(np.asarray(a.g.marginal((0, 1, 2))), np.asarray(b.g.marginal((0, 1, 2))))


def test_naive_scales_003_vs_000() -> None:
    """E-tabular-5: 003-sec4 Lap(Δ/(eps/|Q|)); 000-sec3.3 prints Lap(Δ/(eps |Q|)), |Q|^2 times smaller."""
    eps = 0.5
    M = measure_all(F, Q, eps, noise=InsecureSeededNoise(0))
    M000 = measure_all(F, Q, eps, noise=InsecureSeededNoise(0), as_printed_000=True)
    assert all(m.noise_scale == pytest.approx(len(Q) / eps) for m in M)
    assert all(m.noise_scale == pytest.approx(1 / (eps * len(Q))) for m in M000)
    g, _ = naive_offline(F, all_workloads(DOM, 2), 1e6, InformationProjection(), total=TotalRule.measured(),
                         noise=InsecureSeededNoise(1))
    assert g.total == pytest.approx(500.0, abs=1.0)


def test_bad_parameters() -> None:
    with pytest.raises(DPStreamInputError):
        select_measure_fit(F, Q, 0.0, 2, MultiplicativeWeights(), total=TotalRule.public(1), noise=InsecureZeroNoise())
    with pytest.raises(DPStreamInputError):
        select_measure_fit(F, Q, 1.0, 0, MultiplicativeWeights(), total=TotalRule.public(1), noise=InsecureZeroNoise())
    with pytest.raises(DPStreamInputError):
        select_measure_fit(F, [], 1.0, 1, MultiplicativeWeights(), total=TotalRule.public(1), noise=InsecureZeroNoise())
    with pytest.raises(DPStreamInputError):
        select_measure_fit(F, Q, 1.0, 1, MultiplicativeWeights(), total=TotalRule.measured(), noise=InsecureZeroNoise())
