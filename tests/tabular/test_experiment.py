"""The tabular-adult experiment on the 300-row Adult sample of tests/data (the full table in data/ is not read)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from dpstream.experiments import discover
from dpstream.experiments.tabular_adult import (
    METHODS,
    PAPER_TABLE_3,
    PAPER_TABLES_1_2,
    RELWE_CONVENTIONS,
    IndependentDataset,
    RunSpec,
    _tables,
    relwe_reference,
    run_one,
)
from dpstream.tabular.fitting import MultiplicativeWeights
from dpstream.tabular.metrics import METRIC_NAMES, CumulativeMarginals, stream_metrics
from dpstream.tabular.queries import all_workloads
from dpstream.tabular.stream import adult_ordered, adult_randomized, load_table_csv

DATA = Path(__file__).resolve().parents[1] / "data" / "tabular"


def test_registered_and_paper_tables_complete() -> None:
    assert "tabular-adult" in discover()
    for ds in ("Adult-randomized-bs-50", "Adult-randomized-bs-200", "Adult-ordered-bs-50", "Adult-ordered-bs-200"):
        for eps in (0.5, 1.0, 2.0, 4.0):
            for m in METRIC_NAMES:
                assert (ds, eps, m) in PAPER_TABLES_1_2
    assert len(PAPER_TABLE_3) == 2 * 4 * 4
    # the cross-check stated by the transcription: Table 3's Simple column = Tables 1-2's Proposed column
    assert all(PAPER_TABLES_1_2[key][1] == simple for key, (simple, _) in PAPER_TABLE_3.items())


@pytest.mark.parametrize("method", METHODS)
def test_run_one_on_the_sample(method: str) -> None:
    domain, records = load_table_csv(DATA / "adult_liu2021_sample.csv", DATA / "adult_liu2021_sample-domain.json",
                                     columns=["sex", "income>50K", "race"])
    for steps in (adult_randomized(domain, records, 50, seed=0)[:3], adult_ordered(domain, records, 50)[:3]):
        spec = RunSpec("randomized", 50, 1.0, "mw", method)
        rows = run_one(spec, domain, steps, 2, 0, MultiplicativeWeights())
        assert [r["t"] for r in rows] == [1.0, 2.0, 3.0]
        assert all(math.isfinite(r[m]) and r[m] >= 0 for r in rows for m in METRIC_NAMES)
        table = _tables({spec: rows}, ["mw"], [1.0], [spec.dataset])
        assert "| Adult-randomized-bs-50 | 1 | AvgWE |" in table and "0.0103" in table  # paper's baseline beside ours


def test_relwe_reference_release_on_the_sample() -> None:
    """--relwe-reference: the independence model's tables are the outer products of the exact one-way shares,
    and the three RelWE conventions are computed by hand on one workload."""
    domain, records = load_table_csv(DATA / "adult_liu2021_sample.csv", DATA / "adult_liu2021_sample-domain.json",
                                     columns=["sex", "income>50K", "race"])
    steps = adult_randomized(domain, records, 50, seed=0)
    rows = relwe_reference(domain, steps, [2, len(steps)])
    assert [(t, label) for t, _, label, _ in rows] == [(t, c[0]) for t in (2, len(steps)) for c in RELWE_CONVENTIONS]
    n = float(records.shape[0])
    assert rows[-1][1] == n
    # by hand on the last time (all records): the workload (sex, income>50K) and the independence table
    truth = np.zeros((2, 2))
    for r in records:
        truth[r[0], r[1]] += 1
    f, g = truth / n, np.outer(truth.sum(axis=1), truth.sum(axis=0)) / n**2
    ind = IndependentDataset(domain, tuple(np.bincount(records[:, c], minlength=domain.sizes[c]).astype(float)
                                           for c in range(domain.p)), n)
    assert np.allclose(ind.marginal((0, 1)) / n, g) and ind.marginal(()) == pytest.approx(n)
    nz = f > 0
    skip = float(np.mean(np.abs(f - g)[nz] / f[nz]))
    floor = float(np.mean(np.abs(f - g) / np.maximum(f, 0.01)))
    we = float(np.mean(np.abs(f - g)))
    W = [w for w in all_workloads(domain, 2) if w.columns == (0, 1)]
    cum = CumulativeMarginals(domain, [(0, 1)])
    for s in steps:
        cum.update(s)
    assert stream_metrics(W, cum.tables, cum.total, ind).AvgRelWE == pytest.approx(skip)
    assert stream_metrics(W, cum.tables, cum.total, ind, zero="floor", floor=0.01).AvgRelWE == pytest.approx(floor)
    assert stream_metrics(W, cum.tables, cum.total, ind).AvgWE == pytest.approx(we)
