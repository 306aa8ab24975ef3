"""A_Dataset: multiplicative weights (003-mw), exact fitting, the PGM adapter, and total rules."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pytest

from dpstream.errors import DPStreamInputError
from dpstream.tabular.datasets import ExplicitDataset, UniformDataset, answer
from dpstream.tabular.domain import Domain
from dpstream.tabular.fitting import InformationProjection, Measurement, MultiplicativeWeights
from dpstream.tabular.queries import FloatArray, MarginalQuery, Workload
from dpstream.tabular.totals import TotalRule

DOM = Domain(("a", "b"), (2, 2))


def test_mw_step_closed_form() -> None:
    """One MW step from the uniform dataset of mass N, by the formula of 003-mw written out by hand."""
    N, m = 100.0, 80.0
    q = MarginalQuery.build(DOM, (0,), (0,))      # cells (0,0), (0,1)
    h = MultiplicativeWeights().fit([Measurement(q, np.array([m]))], UniformDataset(DOM, 1.0), N)
    # h0 = N/4 per cell, q(h0) = N/2; inside cells get weight exp((m - N/2) / (2N)), outside 1
    w_in = math.exp((m - N / 2) / (2 * N))
    expected_in = N * w_in / (2 * w_in + 2)
    expected_out = N / (2 * w_in + 2)
    counts = np.asarray(h.marginal((0, 1)))
    assert counts[0, 0] == pytest.approx(expected_in) and counts[0, 1] == pytest.approx(expected_in)
    assert counts[1, 0] == pytest.approx(expected_out)
    assert h.total == pytest.approx(N)


def test_mw_workload_step_closed_form() -> None:
    """For a workload the exponent of x is (m_{q(x)} - q_{(x)}(h)) / (2N) (its queries partition X)."""
    N = 40.0
    W = Workload.build(DOM, (1,))
    m = np.array([30.0, 10.0])
    h = MultiplicativeWeights().fit([Measurement(W, m)], UniformDataset(DOM, 1.0), N)
    w0, w1 = math.exp((30 - 20) / 80), math.exp((10 - 20) / 80)
    assert answer(W, h) == pytest.approx([N * w0 / (w0 + w1), N * w1 / (w0 + w1)])


def test_mw_newest_vs_all() -> None:
    """updates='newest' uses only the last measurement; 'all' from h_0 reproduces the chain of newest steps."""
    q1 = MarginalQuery.build(DOM, (0,), (1,))
    q2 = MarginalQuery.build(DOM, (1,), (0,))
    M = [Measurement(q1, np.array([30.0])), Measurement(q2, np.array([5.0]))]
    h0 = UniformDataset(DOM, 1.0)
    newest = MultiplicativeWeights()
    chain = newest.fit(M[1:], newest.fit(M[:1], h0, 50.0), 50.0)
    replay = MultiplicativeWeights(updates="all").fit(M, h0, 50.0)
    assert np.allclose(np.asarray(chain.marginal((0, 1))), np.asarray(replay.marginal((0, 1))))
    only_last = newest.fit(M, h0, 50.0)
    assert not np.allclose(np.asarray(only_last.marginal((0, 1))), np.asarray(replay.marginal((0, 1))))


def test_exact_fitting_matches_consistent_measurements() -> None:
    truth = np.array([[7.0, 3.0], [0.5, 9.5]])
    f = ExplicitDataset(DOM, truth)
    M = [Measurement(w, answer(w, f)) for w in (Workload.build(DOM, (0,)), Workload.build(DOM, (1,)))]
    M.append(Measurement(MarginalQuery.build(DOM, (0, 1), (0, 0)), answer(MarginalQuery.build(DOM, (0, 1), (0, 0)), f)))
    h = InformationProjection().fit(M, UniformDataset(DOM, 1.0), 20.0)
    for meas in M:
        assert answer(meas.query, h) == pytest.approx(meas.value, abs=1e-8)
    assert np.asarray(h.marginal((0, 1))) == pytest.approx(truth, abs=1e-6)  # 3 constraints fix a 2x2 table


def test_fitters_reject_negative_total() -> None:
    q = MarginalQuery.build(DOM, (0,), (0,))
    for fitter in (MultiplicativeWeights(), InformationProjection()):
        with pytest.raises(DPStreamInputError):
            fitter.fit([Measurement(q, np.array([1.0]))], UniformDataset(DOM, 1.0), -1.0)
    with pytest.raises(DPStreamInputError):
        Measurement(Workload.build(DOM, (0,)), np.array([1.0]))  # wrong length


def test_total_rules() -> None:
    W = Workload.build(DOM, (0,))
    q = MarginalQuery.build(DOM, (0,), (0,))
    est = TotalRule.estimate([Measurement(W, np.array([3.0, 5.0]), 1.0),
                              Measurement(Workload.build(DOM, (0, 1)), np.array([1.0, 1.0, 1.0, 1.0]), 1.0)], 0.0)
    # inverse-variance weights 1/2 and 1/4 on the sums 8 and 4
    assert est == pytest.approx((8 / 2 + 4 / 4) / (1 / 2 + 1 / 4))
    assert TotalRule.estimate([Measurement(q, np.array([3.0]))], 7.0) == 7.0
    with pytest.raises(DPStreamInputError):
        TotalRule.measured().check_queries([q])
    assert not TotalRule.true_size().private and TotalRule.public(5).private
    assert TotalRule.public(lambda t: 2.0 * t).public_size(3) == 6.0


def test_pgm_fits_a_small_workload() -> None:
    """PGM (mbi) as A_Dataset on a 2x3 domain: the fitted 2-way marginal approaches the measurement."""
    pytest.importorskip("mbi")
    from dpstream.tabular.pgm import PGMDataset, PrivatePGM

    dom = Domain(("a", "b"), (2, 3))
    W = Workload.build(dom, (0, 1))
    target = np.array([10.0, 20.0, 5.0, 30.0, 15.0, 20.0])
    h = PrivatePGM(iters=300).fit([Measurement(W, target, 1.0)], UniformDataset(dom, 1.0), 100.0)
    assert isinstance(h, PGMDataset)
    assert h.total == pytest.approx(100.0)
    assert np.abs(answer(W, h) - target).max() < 2.0
    # our numpy marginals of the fitted potentials agree with mbi's own projection
    ref = np.asarray(h.model.project(("a",)).datavector(flatten=False), dtype=np.float64)
    assert h.marginal((0,)) == pytest.approx(ref * 100.0 / ref.sum(), rel=1e-4)


@pytest.mark.slow  # a second PGM fit (2.5 s); test_pgm_fits_a_small_workload stays in the default run
def test_pgm_marginal_query_cell_and_untouched_attributes() -> None:
    """PGM reading of A_Dataset(M, h) (docs/tabular.md): a marginal query is one cell of its clique's table (the
    cell index must be the C-order index of its values), and an attribute no measurement touches keeps h's
    one-way marginal (pseudo-measurement). One fit on X = {0,1} x {0,1,2} x {0,1} x {0,1}."""
    pytest.importorskip("mbi")
    from dpstream.tabular.pgm import PrivatePGM

    dom = Domain(("a", "b", "c", "d"), (2, 3, 2, 2))
    W = Workload.build(dom, (0, 1))
    target = np.array([10.0, 20.0, 5.0, 30.0, 15.0, 20.0])     # b-marginal (40, 35, 25)
    q = MarginalQuery.build(dom, (1, 2), (0, 1))                 # cell (b=0, c=1): C-order index 1 of a 3 x 2 table
    init = np.ones(dom.sizes)
    init[..., 0] *= 4.0                                          # h's d-marginal is (0.8, 0.2)
    h = PrivatePGM(iters=400).fit([Measurement(W, target, 1.0), Measurement(q, np.array([30.0]), 1.0)],
                                  ExplicitDataset(dom, init), 100.0)
    assert np.abs(answer(W, h) - target).max() < 2.0
    bc = h.marginal((1, 2))
    assert bc[0, 1] == pytest.approx(30.0, abs=2.0)                # the measured cell, not another one
    assert bc[0, 0] == pytest.approx(10.0, abs=2.0)                # the rest of b = 0 (40 - 30)
    assert h.marginal((3,)) == pytest.approx([80.0, 20.0], abs=2.0)  # d untouched: h's shares kept


def test_pgm_releases_compiled_programs_above_the_mapping_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    """Long PGM runs crashed once the process reached vm.max_map_count (JAX keeps every compiled program);
    above MAX_MEMORY_MAPPINGS a fit clears JAX's caches, and the fit's result does not change."""
    pytest.importorskip("mbi")
    import jax

    from dpstream.tabular import pgm

    dom = Domain(("a", "b"), (2, 3))
    W = Workload.build(dom, (0, 1))
    target = np.array([10.0, 20.0, 5.0, 30.0, 15.0, 20.0])

    def fitted() -> FloatArray:
        h = pgm.PrivatePGM(iters=50).fit([Measurement(W, target, 1.0)], UniformDataset(dom, 1.0), 100.0)
        return h.marginal((0, 1))

    cleared: list[int] = []
    clear: Callable[[], None] = jax.clear_caches

    def counting_clear() -> None:
        cleared.append(1)
        clear()

    monkeypatch.setattr(jax, "clear_caches", counting_clear)
    before = fitted()
    assert cleared == []  # a test process is far below 30000 mappings
    if pgm._memory_mappings() is None:
        pytest.skip("no /proc/self/maps on this platform: the guard is inactive")
    monkeypatch.setattr(pgm, "MAX_MEMORY_MAPPINGS", 0)
    after = fitted()
    assert cleared == [1]
    assert np.array_equal(before, after)
    assert pgm.release_compiled_programs(limit=10**9) is False
