"""The hypercube-rate experiment: helpers by hand, and a tiny end-to-end run writing its outputs."""

from __future__ import annotations

import argparse
import csv
import json
import math
from pathlib import Path

import numpy as np
import pytest

from dpstream.experiments import discover
from dpstream.experiments.hypercube_rate import fit_exponent, normalised_ratio, offline_shape, theorem_shape


def test_fit_exponent_of_a_power_law() -> None:
    t = np.array([4.0, 16.0, 64.0, 256.0])
    assert fit_exponent(list(t), list(3.0 * t**-0.5)) == pytest.approx(-0.5, abs=1e-12)


def test_shapes_by_hand() -> None:
    # d = 2: log(t) (eps t)^{-1/2} at t = 100, eps = 1: log(100)/10
    assert float(theorem_shape(np.array([100.0]), 2, 1.0)[0]) == pytest.approx(math.log(100) / 10)
    # d = 1: log^3(eps t) log^1.5(t) / (eps t) at t = 50, eps = 2
    want = math.log(100) ** 3 * math.log(50) ** 1.5 / 100
    assert float(theorem_shape(np.array([50.0]), 1, 2.0)[0]) == pytest.approx(want)
    assert float(offline_shape(np.array([8.0]), 3, 1.0)[0]) == pytest.approx(0.5)
    assert float(normalised_ratio(np.array([0.2]), np.array([100.0]), 2, 1.0)[0]) == pytest.approx(
        0.2 * 10 / math.log(100))


def test_tiny_run_writes_outputs(tmp_path: Path) -> None:
    experiment = discover()["hypercube-rate"]
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path)
    experiment.add_arguments(parser)
    args = parser.parse_args(["--out", str(tmp_path), "--t-max", "24", "--runs", "1", "--dims", "1", "2"])
    assert experiment.run(args) == 0
    with (tmp_path / "runs.csv").open(encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert {r["stream"] for r in rows} == {"uniform", "clustered"} and {r["d"] for r in rows} == {"1", "2"}
    assert all(0.0 <= float(r["w1"]) <= 1.0 for r in rows)
    report = json.loads((tmp_path / "rates.json").read_text(encoding="utf-8"))
    assert set(report["w1_rates"]) == {"uniform d=1", "uniform d=2", "clustered d=1", "clustered d=2"}
    assert report["grid"]["noise"].startswith("InsecureSeededNoise")
    assert (tmp_path / "hypercube_rate.png").stat().st_size > 0
