"""A clone of the repository is all it takes: no file points outside it, the experiments' data ships in
data/ and matches its checksums, and every experiment finds its files there."""

from __future__ import annotations

import hashlib
import lzma
import shutil
import subprocess
from pathlib import Path

import pytest

from dpstream.errors import DPStreamInputError
from dpstream.experiments import discover
from dpstream.experiments.data import DataFile, default_data_dir, materialized, read_checksums, verified_bytes

ROOT = Path(__file__).resolve().parents[2]
SKIP_DIRS = {".git", ".venv", ".mypy_cache", ".pytest_cache", ".hypothesis", ".ruff_cache", "__pycache__", "out",
             "audit-report"}


def _repository_files() -> list[Path]:
    """The tracked files (git ls-files), or every file outside caches when this is not a git checkout."""
    if (ROOT / ".git").exists() and shutil.which("git"):
        done = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                              capture_output=True, check=True)
        return [ROOT / name for name in done.stdout.decode().split("\0") if name and (ROOT / name).is_file()]
    return [p for p in ROOT.rglob("*") if p.is_file() and not SKIP_DIRS.intersection(p.relative_to(ROOT).parts)
            and not any(part.endswith(".egg-info") for part in p.parts)]


def test_no_file_refers_to_the_reference_shelf() -> None:
    outside = [b"../" + b"shared", b"/work/" + b"shared"]  # assembled, so that this file holds neither
    files = _repository_files()
    assert len(files) > 100
    hits = [str(p.relative_to(ROOT)) for p in files if any(pattern in p.read_bytes() for pattern in outside)]
    assert not hits, f"files refer to a folder outside the repository: {hits}"


def _shipped_datasets() -> list[Path]:
    return sorted(p.parent for p in default_data_dir().glob("*/SHA256SUMS"))


def test_every_shipped_data_file_matches_its_checksum() -> None:
    datasets = _shipped_datasets()
    assert [p.name for p in datasets] == ["adult_liu2021", "motion_circles"]
    for folder in datasets:
        sums = read_checksums(folder)
        assert (folder / "SOURCE.md").is_file()
        shipped = [p for p in folder.iterdir() if p.name not in ("SHA256SUMS", "SOURCE.md")]
        assert shipped and all(p.name in sums for p in shipped), (folder, sums)
        for p in shipped:
            assert hashlib.sha256(p.read_bytes()).hexdigest() == sums[p.name], p
        # every listed name is shipped, or is the decompressed form of a shipped .xz
        assert all((folder / n).is_file() or (folder / f"{n}.xz").is_file() for n in sums), sums


def test_each_experiment_resolves_its_data() -> None:
    experiments = discover()
    assert set(experiments) == {"phdstream-circles", "bun-simulated", "hypercube-rate", "tabular-adult"}
    needs = {name: {(f.dataset, f.name) for f in e.data} for name, e in experiments.items()}
    assert needs == {
        "phdstream-circles": {("motion_circles", "motion_circles_with_deletion_unit.csv"),
                              ("motion_circles", "motion_circles_queries.csv")},
        "tabular-adult": {("adult_liu2021", "adult.csv"), ("adult_liu2021", "adult-domain.json")},
        "bun-simulated": set(), "hypercube-rate": set(),
    }
    for experiment in experiments.values():
        for f in experiment.data:
            shipped = f.shipped()
            assert shipped.is_file() and shipped.parent == default_data_dir() / f.dataset
            assert shipped.name in read_checksums(shipped.parent) and f.name in read_checksums(shipped.parent)


def test_the_domain_file_decompresses_and_verifies() -> None:
    """The full check on the smallest file (the large ones are checked as shipped above, not decompressed)."""
    data = verified_bytes(DataFile("adult_liu2021", "adult-domain.json"))
    assert data.startswith(b"{") and b"income>50K" in data


def _copy(tmp_path: Path, dataset: str) -> Path:
    shutil.copytree(default_data_dir() / dataset, tmp_path / dataset)
    return tmp_path


def test_corrupted_or_missing_files_are_clear_errors(tmp_path: Path) -> None:
    table = DataFile("adult_liu2021", "adult.csv")
    data_dir = _copy(tmp_path, "adult_liu2021")
    xz = data_dir / "adult_liu2021" / "adult.csv.xz"
    good = xz.read_bytes()
    xz.write_bytes(good[:-100])  # truncated
    with pytest.raises(DPStreamInputError, match=r"adult\.csv\.xz is corrupted") as info:
        verified_bytes(table, data_dir)
    assert info.value.field == "--data-dir"
    xz.unlink()
    with pytest.raises(DPStreamInputError, match=r"needs adult\.csv \(or adult\.csv\.xz\)"):
        verified_bytes(table, data_dir)
    # a plain (decompressed) copy is accepted when it matches the listed checksum, refused when altered
    raw = lzma.decompress(good)
    plain = data_dir / "adult_liu2021" / "adult.csv"
    plain.write_bytes(raw[:1000] + b"9" + raw[1001:])
    with pytest.raises(DPStreamInputError, match=r"adult\.csv is corrupted"):
        verified_bytes(table, data_dir)
    (data_dir / "adult_liu2021" / "SHA256SUMS").unlink()
    with pytest.raises(DPStreamInputError, match="no SHA256SUMS"):
        verified_bytes(table, data_dir)


def test_materialized_checks_everything_before_writing(tmp_path: Path) -> None:
    domain = DataFile("adult_liu2021", "adult-domain.json")
    data_dir = _copy(tmp_path, "adult_liu2021")
    with materialized([domain], data_dir) as paths:
        folder = paths[domain].parent
        assert paths[domain].read_bytes() == (data_dir / "adult_liu2021" / "adult-domain.json").read_bytes()
    assert not folder.exists()
    (data_dir / "adult_liu2021" / "adult-domain.json").write_text("{}", encoding="utf-8")
    with pytest.raises(DPStreamInputError, match=r"adult-domain\.json is corrupted"), materialized([domain], data_dir):
        pytest.fail("the with-block must not run")  # pragma: no cover


def test_tabular_experiment_reports_missing_data(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from dpstream.cli import main

    status = main(["reproduce", "tabular-adult", "--out", str(tmp_path / "o"), "--data-dir", str(tmp_path),
                   "--relwe-reference"])
    assert status == 2
    err = capsys.readouterr().err
    assert "tabular-adult: error: --data-dir" in err and "adult.csv" in err and "Traceback" not in err
