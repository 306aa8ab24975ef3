"""Domains, marginal queries (003-def3.5) and workloads (003-def7.1): evaluation and bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpstream.errors import DPStreamInputError
from dpstream.tabular.datasets import ExplicitDataset, UniformDataset, answer
from dpstream.tabular.domain import Domain, validate_records
from dpstream.tabular.queries import (
    MarginalQuery,
    Workload,
    all_marginal_queries,
    all_workloads,
    marginal_table_of_records,
)
from dpstream.tabular.stream import DifferentialDataset, StreamStep

DOM = Domain(("a", "b", "c"), (2, 3, 2))
RECORDS = np.array([[0, 0, 1], [0, 2, 1], [1, 2, 0], [1, 2, 1], [0, 0, 1]])


def test_marginal_query_counts_by_hand() -> None:
    """q(h) = sum_x h(x) prod 1{x_ci = v_i} (eq (6)), counted by hand on five records."""
    q = MarginalQuery.build(DOM, (0, 2), (0, 1))  # a = 0 and c = 1: records 0, 1, 4
    diff = DifferentialDataset(DOM, StreamStep.build(DOM, RECORDS))
    assert answer(q, diff)[0] == 3.0
    assert int(q.indicator(RECORDS).sum()) == 3
    q2 = MarginalQuery.build(DOM, (1,), (2,))  # b = 2: records 1, 2, 3
    assert answer(q2, diff)[0] == 3.0


def test_workload_is_lexicographic_table() -> None:
    """W(f) = (q(f))_{q in W} in lexicographic order of the values (003-def7.1)."""
    W = Workload.build(DOM, (0, 1))
    assert W.dim == 6
    values = [q.values for q in W.queries()]
    assert values == [(0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (1, 2)]
    diff = DifferentialDataset(DOM, StreamStep.build(DOM, RECORDS))
    by_query = [answer(q, diff)[0] for q in W.queries()]
    assert answer(W, diff).tolist() == by_query == [2.0, 0.0, 1.0, 0.0, 0.0, 2.0]


def test_turnstile_counts_removals_negative() -> None:
    step = StreamStep.build(DOM, RECORDS[:2], RECORDS[4:])
    W = Workload.build(DOM, (2,))
    assert answer(W, DifferentialDataset(DOM, step)).tolist() == [0.0, 1.0]  # c=1: +2 -1
    assert step.size == 1


def test_explicit_and_uniform_datasets() -> None:
    counts = np.arange(12, dtype=float).reshape(2, 3, 2)
    h = ExplicitDataset(DOM, counts)
    q = MarginalQuery.build(DOM, (1,), (1,))
    assert answer(q, h)[0] == counts[:, 1, :].sum()
    u = UniformDataset(DOM, 1.0)
    assert u.total == 12.0
    assert answer(Workload.build(DOM, (0, 1)), u).tolist() == [2.0] * 6  # each (a, b) cell has |X_c| = 2 points


def test_all_queries_and_workloads() -> None:
    assert len(all_marginal_queries(DOM, 1)) == 2 + 3 + 2
    assert len(all_marginal_queries(DOM, 2)) == 2 * 3 + 2 * 2 + 3 * 2
    ws = all_workloads(DOM, 2)
    assert [w.columns for w in ws] == [(0, 1), (0, 2), (1, 2)]
    assert len(all_marginal_queries(DOM, 3)) == DOM.size


def test_marginal_table_of_records_weights() -> None:
    table = marginal_table_of_records(DOM, RECORDS, (0,), weights=np.array([1.0, 1.0, -1.0, 1.0, 1.0]))
    assert table.tolist() == [3.0, 0.0]


# --- bad input ------------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("records", "needle"),
    [
        ([[0, 0]], "arity"),                       # wrong arity
        ([[0, 3, 0]], "0..2"),                     # unknown value of b
        ([[2, 0, 0]], "0..1"),                     # record outside the domain
        ([[-1, 0, 0]], "0..1"),
        ([[0.5, 0, 0]], "integer"),                # not an integer code
        ([[True, False, True]], "integer"),
        ("abc", "(n, p)"),
    ],
)
def test_bad_records(records: object, needle: str) -> None:
    with pytest.raises(DPStreamInputError) as info:
        validate_records(DOM, records)
    assert needle in str(info.value)


def test_bad_domain_and_queries() -> None:
    with pytest.raises(DPStreamInputError):
        Domain(("a", "a"), (2, 2))
    with pytest.raises(DPStreamInputError):
        Domain(("a",), (0,))
    with pytest.raises(DPStreamInputError):
        Domain(("a", "b"), (2,))
    with pytest.raises(DPStreamInputError) as info:
        all_workloads(DOM, 4)                      # k larger than p
    assert info.value.field == "k"
    with pytest.raises(DPStreamInputError):
        all_marginal_queries(DOM, 0)
    with pytest.raises(DPStreamInputError):
        Workload.build(DOM, (1, 0))                # columns must increase
    with pytest.raises(DPStreamInputError):
        MarginalQuery.build(DOM, (0,), (2,))       # unknown value
    with pytest.raises(DPStreamInputError):
        MarginalQuery.build(DOM, (0, 1), (0,))     # one value per column
    with pytest.raises(DPStreamInputError):
        ExplicitDataset(DOM, np.zeros((2, 3)))


def test_domain_size_is_exact_for_wide_domains() -> None:
    wide = Domain(tuple(f"x{i}" for i in range(70)), (2,) * 70)
    assert wide.size == 2**70
    assert math.isclose(UniformDataset(wide, 1.0).marginal((0, 1)).sum(), 2.0**70)
