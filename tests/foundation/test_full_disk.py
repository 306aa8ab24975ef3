"""Reports that survive a full disk: every file a command writes is the earlier one or complete.

A full disk is simulated per process with a file-size limit (``RLIMIT_FSIZE``): a write beyond it fails with EFBIG,
as a write to a full disk fails with ENOSPC (Python ignores SIGXFSZ, so the write raises instead of killing the
process). Each command runs once under the limit with earlier files in place, and must exit with its error status
while every file is either untouched or a complete document, and no temporary file is left. Deterministic.
"""

from __future__ import annotations

import errno
import json
import os
import resource
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from dpstream.files import write_atomically

DPSTREAM = [sys.executable, "-m", "dpstream.cli"]
LIMIT = 6000
"""Bytes a child may write to one file: more than a small report's Markdown, less than its JSON."""
EARLIER = "an earlier report, kept\n"


def _limited() -> None:
    resource.setrlimit(resource.RLIMIT_FSIZE, (LIMIT, LIMIT))


def run_limited(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """``dpstream ARGS`` under the file-size limit, writing no bytecode: a child that is the first to import a module
    (``make test`` installs with ``--no-compile``) would write its .pyc under the limit too, CPython installs the
    short write (seen: scipy.stats' _bws_test and _page_trend_test cut at 6000 bytes in a clean clone's venv), and
    every later import of it fails with "EOFError: marshal data too short"."""
    env = {**os.environ, "CI": "1", "OPENBLAS_NUM_THREADS": "1", "MPLBACKEND": "Agg", "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run([*DPSTREAM, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300,
                          preexec_fn=_limited)


def earlier_or_complete(path: Path, parse: str) -> bool:
    """The file holds the earlier text, or a document that parses whole."""
    text = path.read_text(encoding="utf-8")
    if text == EARLIER:
        return True
    if parse == "json":
        json.loads(text)
    elif parse == "xml":
        ET.fromstring(text)
    else:
        assert text.endswith("\n") and text.startswith("#")
    return True


def no_temporary_files(root: Path) -> bool:
    return not [p for p in root.rglob("*") if p.name.endswith(".tmp") or p.name.startswith(".dpstream-partial")]


def test_write_atomically_keeps_the_earlier_file_when_the_disk_fills(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "report.json"
    target.write_text(EARLIER, encoding="utf-8")

    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(OSError, match="No space"):
        write_atomically(target, json.dumps({"a": list(range(1000))}))
    assert target.read_text(encoding="utf-8") == EARLIER and [p.name for p in tmp_path.iterdir()] == ["report.json"]
    monkeypatch.undo()
    write_atomically(target, "{}")
    assert target.read_text(encoding="utf-8") == "{}" and [p.name for p in tmp_path.iterdir()] == ["report.json"]


def test_conform_reports_on_a_full_disk(tmp_path: Path) -> None:
    files = {"r.json": "json", "r.xml": "xml", "r.md": "md"}
    for name in files:
        (tmp_path / name).write_text(EARLIER, encoding="utf-8")
    out = run_limited(["conform", "--mode", "known-answer", "--algorithm", "001-alg8", "--json", "r.json",
                       "--junit", "r.xml", "--markdown", "r.md", "--", *DPSTREAM, "serve"], tmp_path)
    assert out.returncode == 4, out.stderr
    assert "cannot write r.json" in out.stderr and "Traceback" not in out.stderr
    assert (tmp_path / "r.json").read_text(encoding="utf-8") == EARLIER  # the JSON report is beyond the limit
    for name, kind in files.items():
        assert earlier_or_complete(tmp_path / name, kind), name
    assert no_temporary_files(tmp_path)


@pytest.mark.slow  # the same write_atomically as conform's and vectors' (default run)
def test_audit_report_on_a_full_disk(tmp_path: Path) -> None:
    out = tmp_path / "report"
    out.mkdir()
    for name in ("report.md", "report.json"):
        (out / name).write_text(EARLIER, encoding="utf-8")
    done = run_limited(["audit", "--only", "Laplace mechanism", "--no-plots", "--out", str(out), "--overwrite",
                        "--seed", "3"], tmp_path)
    assert done.returncode != 0 and "Traceback" not in done.stderr, done.stderr
    assert earlier_or_complete(out / "report.md", "md") and earlier_or_complete(out / "report.json", "json")
    assert no_temporary_files(tmp_path)


def test_vectors_generate_on_a_full_disk_keeps_the_earlier_corpus(tmp_path: Path) -> None:
    out = tmp_path / "corpus"
    out.mkdir()
    (out / "manifest.json").write_text(EARLIER, encoding="utf-8")
    done = run_limited(["vectors", "generate", "--out", str(out), "--overwrite"], tmp_path)
    assert done.returncode != 0 and "Traceback" not in done.stderr, done.stderr
    assert [p.name for p in out.iterdir()] == ["manifest.json"]
    assert (out / "manifest.json").read_text(encoding="utf-8") == EARLIER
    assert no_temporary_files(tmp_path) and not [p for p in tmp_path.iterdir() if p.name.startswith(".corpus")]


@pytest.mark.slow  # the same write_atomically as conform's and vectors' (default run)
def test_reproduce_on_a_full_disk_keeps_every_earlier_file(tmp_path: Path) -> None:
    out = tmp_path / "bun"
    out.mkdir()
    names = ("errors.csv", "summary.csv", "summary.json")
    for name in names:
        (out / name).write_text(EARLIER, encoding="utf-8")
    done = run_limited(["reproduce", "bun-simulated", "--n", "300", "--reps", "200", "--out", str(out),
                        "--overwrite"], tmp_path)
    assert done.returncode != 0 and "Traceback" not in done.stderr, done.stderr
    for name in names:
        text = (out / name).read_text(encoding="utf-8")
        assert text == EARLIER or (name.endswith(".json") and json.loads(text)) or text.count("\n") > 1, name
    assert no_temporary_files(tmp_path)
