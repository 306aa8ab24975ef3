"""`dpstream reproduce phdstream-circles`: a small end-to-end run on generated data, and the data-dir error."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from dpstream.cli import main


def test_small_run_writes_csv_plot_and_summary(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    status = main(["reproduce", "phdstream-circles", "--out", str(out), "--source", "generated", "--n", "600",
                   "--batch-size", "100", "--max-depth", "6", "--eps", "1", "--init-ratios", "0.2",
                   "--evaluations", "2", "--max-queries", "300"])
    assert status == 0
    rows = list(csv.DictReader((out / "phdstream_circles.csv").open(encoding="utf-8")))
    algorithms = {r["algorithm"] for r in rows}
    assert algorithms == {"PHDStream (Simple)", "PHDStream (Block 8)", "Baseline 1 (not DP)", "Baseline 2",
                          "Baseline 3"}
    assert len(rows) == 5 * 2  # 5 algorithms x 2 evaluation times
    assert all(float(r["rel_error_small"]) >= 0.0 for r in rows)
    assert (out / "phdstream_circles.png").stat().st_size > 1000
    assert "PHDStream (Simple)" in (out / "summary.md").read_text(encoding="utf-8")
    assert "wrote" in capsys.readouterr().out


def test_missing_data_dir_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status = main(["reproduce", "phdstream-circles", "--out", str(tmp_path / "o"), "--data-dir", str(tmp_path)])
    assert status == 2
    err = capsys.readouterr().err
    assert "motion_circles_with_deletion_unit.csv" in err and "--source generated" in err
