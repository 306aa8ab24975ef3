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
from dpstream.experiments.hypercube_rate import (
    FULL,
    activation_level,
    c_epsilon,
    fit_exponent,
    normalised_ratio,
    offline_shape,
    theorem_shape,
)


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


def test_c_epsilon_by_hand() -> None:
    """004-rem1.2 at eps = 1: exp(log(2)^2) + e for d >= 2, e for d = 1; eps = 0.5, d = 3: exp(log(3)^2) + 2e."""
    assert c_epsilon(1.0, 2) == pytest.approx(math.exp(math.log(2) ** 2) + math.e)
    assert c_epsilon(1.0, 3) == pytest.approx(1.61680 + 2.71828, abs=1e-4)  # exp(0.480453) + e
    assert c_epsilon(1.0, 1) == pytest.approx(math.e)
    assert c_epsilon(0.5, 3) == pytest.approx(math.exp(math.log(3) ** 2) + 2 * math.e)


def _reaches_threshold(r: int, d: int) -> bool:
    """eps = 1: does some depth-j region (j <= r) get at least T_0 uniform points during level r? (printed formulas)."""
    H = 2 ** (r + 1) - 2**r  # t_r = ceil(2^r / 1)
    for j in range(1, r + 1):
        if d >= 2:
            C1 = (1 - 2 ** (-(1 - 1 / d) / 2)) / 2
            eps_jr = C1 * 2 ** ((j - r) * (1 - 1 / d) / 2)  # (4.1)
        else:
            eps_jr = 3 / math.pi**2 / (j + 1) ** 2  # (5.1)
        if H / 2**j >= 9 * math.log(H) / (eps_jr / 2):  # 004-alg2: T_0 = 9 log T / eps', eps' = eps_jr / 2
            return True
    return False


@pytest.mark.parametrize("d", [1, 2, 3])
def test_activation_level_from_the_printed_formulas(d: int) -> None:
    r, t_r = activation_level(1.0, d)
    assert t_r == 2**r
    assert _reaches_threshold(r, d) and not any(_reaches_threshold(q, d) for q in range(1, r))
    assert t_r > FULL.t_max  # the experiment's whole grid lies before sparse counting can start (docs/hypercube.md)


@pytest.mark.parametrize("implementation", ["geometric", "efficient"])
def test_scale_grid_bounds_bracket_the_exact_w1(tmp_path: Path, implementation: str) -> None:
    """--scale samples the level ends; at every release 004-lem4.2's bound and the matching cost are >= the
    exact W1 >= the marginal lower bound (deterministic facts, checked on every row)."""
    experiment = discover()["hypercube-rate"]
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path)
    experiment.add_arguments(parser)
    args = parser.parse_args(["--out", str(tmp_path), "--scale", "--t-max", "200", "--t-min", "10", "--runs", "1",
                              "--dims", "2", "--implementation", implementation, "--no-plot"])
    assert experiment.run(args) == 0
    with (tmp_path / "runs.csv").open(encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert sorted({int(r["t"]) for r in rows}) == [15, 31, 63, 127, 200]  # t_{r+1} - 1 = 2^{r+1} - 1 and t_max
    assert {r["implementation"] for r in rows} == {implementation}
    for r in rows:
        w1, upper, matching, lower = (float(r[k]) for k in ("w1", "w1_upper", "w1_matching", "w1_lower"))
        assert lower - 1e-12 <= w1 <= min(upper, matching) + 1e-12
    report = json.loads((tmp_path / "rates.json").read_text(encoding="utf-8"))
    assert report["w1_rates"]["uniform d=2"]["fit_t_range"] == [15, 127]  # the fits use the level ends only
    assert report["operations_run0"]["uniform d=2"] > 0
    assert "004-lem4.2" in (tmp_path / "summary.md").read_text(encoding="utf-8")
