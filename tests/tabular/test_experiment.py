"""The tabular-adult experiment on the shipped 300-row Adult sample (no access to ../shared/data)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from dpstream.experiments import discover
from dpstream.experiments.tabular_adult import (
    METHODS,
    PAPER_TABLE_3,
    PAPER_TABLES_1_2,
    RunSpec,
    _tables,
    run_one,
)
from dpstream.tabular.fitting import MultiplicativeWeights
from dpstream.tabular.metrics import METRIC_NAMES
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
