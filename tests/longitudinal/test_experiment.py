"""The bun-simulated experiment (002 Appendix C.1): evaluation correctness and a small smoke run."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from dpstream.experiments import discover
from dpstream.experiments.bun_simulated import evaluate_run, run_experiment
from dpstream.longitudinal.generators import all_ones, random_matrix
from dpstream.longitudinal.padding import padding_matrix


def test_evaluation_is_exact_on_true_plus_padding() -> None:
    """Synthetic data = true records + the padding population: every debiased error is 0."""
    n, T, k, n_pad = 30, 7, 3, 4
    X = random_matrix(n, T, seed=2)
    S = np.vstack([X, padding_matrix(k, T, n_pad)])
    result = evaluate_run(S, X, k, n_pad, [1, 2, 3, 4])
    for w, errors in result.items():
        assert np.allclose(errors["debiased"], 0.0), w
        assert errors["debiased"].shape == (T - w + 1,)
    # plain fractions are biased by the padding: the all-ones pattern on all-ones data
    ones = all_ones(n, T)
    plain = evaluate_run(np.vstack([ones, padding_matrix(k, T, n_pad)]), ones, k, n_pad, [3])[3]
    m = n + 8 * n_pad
    assert plain["plain_all_ones"] == pytest.approx([1 - (n + n_pad) / m] * (T - 2))


def test_smoke_run_writes_outputs(tmp_path: Path) -> None:
    summary = run_experiment(300, 6, 3, 0.5, 3, seed=1, max_width=4, out=tmp_path)
    for name in ("errors.csv", "summary.csv", "summary.json", "figure3.png", "figure4.png"):
        assert (tmp_path / name).stat().st_size > 0
    doc = json.loads((tmp_path / "summary.json").read_text())
    assert doc["parameters"]["n_pad"] == summary["parameters"]["n_pad"]
    assert doc["completed_runs"] + doc["padding_failures"] == 3
    rows = [r for r in summary["rows"] if r["width"] == 3]
    assert len(rows) == 4 and all(r["debiased_median"] <= r["debiased_max"] for r in rows)
    assert "bun-simulated" in discover()
