"""Metrics of 003-sec7.3 on hand-computed examples, including the zero-count rule of RelWE."""

from __future__ import annotations

import numpy as np
import pytest

from dpstream.errors import DPStreamInputError
from dpstream.tabular.datasets import ExplicitDataset
from dpstream.tabular.domain import Domain
from dpstream.tabular.metrics import (
    CumulativeMarginals,
    relative_workload_error,
    stream_metrics,
    workload_error,
)
from dpstream.tabular.queries import Workload
from dpstream.tabular.stream import StreamStep

DOM = Domain(("a", "b"), (2, 2))


def test_we_and_relwe_by_hand() -> None:
    true = np.array([4.0, 0.0, 2.0, 2.0])
    synth = np.array([3.0, 1.0, 2.0, 4.0])
    assert workload_error(true, synth) == pytest.approx((1 + 1 + 0 + 2) / 4)
    # zero true count skipped: mean of 1/4, 0/2, 2/2 over the three nonzero queries
    assert relative_workload_error(true, synth) == pytest.approx((0.25 + 0 + 1.0) / 3)
    # floor rule: denominators max(|q(f)|, floor)
    assert relative_workload_error(true, synth, "floor", 0.5) == pytest.approx((0.25 + 1 / 0.5 + 0 + 1.0) / 4)
    assert relative_workload_error(np.zeros(2), np.ones(2)) == 0.0
    with pytest.raises(DPStreamInputError):
        relative_workload_error(true, synth, "ignore")  # type: ignore[arg-type]


def test_aggregates_normalised_and_raw() -> None:
    truth = CumulativeMarginals(DOM, [(0,), (1,)])
    truth.update(StreamStep.build(DOM, [[0, 0], [0, 1], [1, 1], [1, 1]]))
    g = ExplicitDataset(DOM, np.array([[1.0, 1.0], [1.0, 1.0]]))   # uniform, mass 4
    W = [Workload.build(DOM, (0,)), Workload.build(DOM, (1,))]
    raw = stream_metrics(W, truth.tables, truth.total, g, normalize=False)
    # a: true (2, 2) vs (2, 2): WE 0; b: true (1, 3) vs (2, 2): WE 1, RelWE (1 + 1/3)/2
    assert raw.AvgWE == pytest.approx(0.5) and raw.MaxWE == pytest.approx(1.0)
    assert raw.AvgRelWE == pytest.approx((2 / 3) / 2) and raw.MaxRelWE == pytest.approx(2 / 3)
    norm = stream_metrics(W, truth.tables, truth.total, g)
    assert norm.MaxWE == pytest.approx(0.25) and norm.MaxRelWE == pytest.approx(2 / 3)  # relative: scale-free
    assert list(norm.as_dict()) == ["AvgWE", "MaxWE", "AvgRelWE", "MaxRelWE"]


def test_cumulative_marginals_turnstile() -> None:
    truth = CumulativeMarginals(DOM, [(0, 1)])
    truth.update(StreamStep.build(DOM, [[0, 0], [1, 1]]))
    truth.update(StreamStep.build(DOM, [[0, 1]], [[0, 0]]))
    assert truth.tables[(0, 1)].tolist() == [[0.0, 1.0], [0.0, 1.0]]
    assert truth.total == 2.0
