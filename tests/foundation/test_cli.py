"""The ``dpstream`` command line: the table of bad invocations, then runs (staged outputs, errors during a run,
summaries stating the noise mode and the command line, progress lines), ``--version`` and the exports.

Bad invocations: every one is a one-line error naming the argument, exit status 2, no traceback. The table
runs ``dpstream.cli.main`` in-process. Each reproduce case writes to ``{tmp}/never``, which must not exist
afterwards: nothing runs and no output folder is made. Missing or corrupted ``--data-dir`` data are usage
errors too (exit 2): the experiment's ``check`` finds them before any work (docs/developing.md,
"Experiments"). The read-only-folder cases are skipped when running as root (root ignores permission
bits); a file in place of the folder and a folder under a file are refused for every user.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import json
import os
import re
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path
from typing import cast

import pytest

import dpstream
from dpstream.cli import build_parser, main
from dpstream.cli_args import (
    STAGING_PREFIX,
    Flatten,
    comma_list,
    int_in,
    positive_float,
    prepare_output_dir,
    resolve_output_dir,
    staged_output_dir,
    writable_dir,
)
from dpstream.errors import DPStreamInputError
from dpstream.experiments import progress as progress_module
from dpstream.experiments.progress import LogProgress, progress

TABULAR_SAMPLE = Path(__file__).resolve().parents[1] / "data" / "tabular"
AS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0


def invoke(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """``dpstream ARGV`` in-process: (exit status, stderr)."""
    try:
        code = main(argv)
    except SystemExit as exc:  # pragma: no cover - main returns usage errors; kept for safety
        code = exc.code if isinstance(exc.code, int) else 1
    return code, capsys.readouterr().err


def write_dataset(folder: Path, files: dict[str, bytes]) -> Path:
    """A dataset folder with plain files and their SHA256SUMS (as the shipped data, uncompressed)."""
    folder.mkdir(parents=True, exist_ok=True)
    lines = []
    for name, data in files.items():
        (folder / name).write_bytes(data)
        lines.append(f"{hashlib.sha256(data).hexdigest()}  {name}")
    (folder / "SHA256SUMS").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder.parent


def tabular_sample_dir(root: Path, csv_text: str | None = None) -> Path:
    """A --data-dir holding the 300-row Adult sample of tests/data as adult_liu2021/adult.csv."""
    table = (TABULAR_SAMPLE / "adult_liu2021_sample.csv").read_bytes() if csv_text is None else csv_text.encode()
    domain = (TABULAR_SAMPLE / "adult_liu2021_sample-domain.json").read_bytes()
    return write_dataset(root / "adult_liu2021", {"adult.csv": table, "adult-domain.json": domain})


@pytest.fixture
def places(tmp_path: Path) -> dict[str, str]:
    a_file = tmp_path / "a_file"
    a_file.write_text("not a folder", encoding="utf-8")
    readonly = tmp_path / "readonly"
    readonly.mkdir()
    readonly.chmod(0o555)
    corrupt = tmp_path / "corrupt"  # files whose bytes no longer match their SHA256SUMS
    write_dataset(corrupt / "adult_liu2021", {"adult.csv": b"x\n1\n", "adult-domain.json": b"{}"})
    (corrupt / "adult_liu2021" / "adult.csv").write_bytes(b"x\n2\n")  # no longer matches SHA256SUMS
    write_dataset(corrupt / "motion_circles", {"motion_circles_with_deletion_unit.csv": b"x,y\n0,0\n",
                                               "motion_circles_queries.csv": b"xmin,ymin,xmax,ymax,size\n"})
    (corrupt / "motion_circles" / "motion_circles_queries.csv").write_bytes(b"changed\n")
    empty = tmp_path / "empty"
    empty.mkdir()
    not_a_corpus = tmp_path / "not-a-corpus"
    not_a_corpus.mkdir()
    (not_a_corpus / "notes.txt").write_text("someone's files", encoding="utf-8")
    return {"tmp": str(tmp_path), "file": str(a_file), "readonly": str(readonly), "corrupt": str(corrupt),
            "empty": str(empty), "sample": str(tabular_sample_dir(tmp_path / "sample")),
            "not_a_corpus": str(not_a_corpus)}


READ_ONLY = pytest.mark.skipif(AS_ROOT, reason="root ignores permission bits, so a read-only folder is writable")
PROC = pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs /proc (a folder nobody can create in)")
HUGE = "99999999999999999999"

# (arguments, expected exit status, text that must appear in the error line)
CASES = [
    # top level
    pytest.param([], 2, "required: command", id="no-command"),
    pytest.param(["frobnicate"], 2, "invalid choice", id="unknown-command"),
    pytest.param(["--bogus", "audit"], 2, "--bogus", id="unknown-option"),
    # audit
    pytest.param(["audit", "--jobs", "0"], 2, "--jobs", id="audit-jobs-0"),
    pytest.param(["audit", "--jobs", "-2"], 2, "--jobs", id="audit-jobs-negative"),
    pytest.param(["audit", "--jobs", "two"], 2, "--jobs", id="audit-jobs-text"),
    pytest.param(["audit", "--seed", "-1"], 2, "--seed", id="audit-seed-negative"),
    pytest.param(["audit", "--seed", "1.5"], 2, "--seed", id="audit-seed-float"),
    pytest.param(["audit", "--out", "{file}"], 2, "--out", id="audit-out-is-a-file"),
    pytest.param(["audit", "--out", "{file}/report"], 2, "--out", id="audit-out-under-a-file"),
    pytest.param(["audit", "--out", "{readonly}/report"], 2, "--out", id="audit-out-read-only", marks=READ_ONLY),
    pytest.param(["audit", "--only", "no-such-component-xyz"], 2, "no registered audit", id="audit-selects-nothing"),
    pytest.param(["audit", "--out", "/proc/dpstream-nope"], 2, "--out", id="audit-out-not-creatable", marks=PROC),
    # serve / vectors / conform (conform's usage errors are 4: its 2 means "privacy violation")
    pytest.param(["serve", "--bogus"], 2, "--bogus", id="serve-unknown-option"),
    pytest.param(["vectors"], 2, "required", id="vectors-no-subcommand"),
    pytest.param(["vectors", "verify", "--corpus", "{tmp}/missing"], 2, "--corpus", id="vectors-corpus-missing"),
    pytest.param(["vectors", "generate", "--out", "{file}"], 2, "--out", id="vectors-out-is-a-file"),
    pytest.param(["vectors", "generate", "--out", "/proc/dpstream-nope"], 2, "--out", id="vectors-out-not-creatable",
                 marks=PROC),
    pytest.param(["vectors", "generate", "--out", "{not_a_corpus}", "--overwrite"], 2, "not a vectors corpus",
                 id="vectors-overwrite-not-a-corpus"),
    pytest.param(["vectors", "verify", "--corpus", "{empty}"], 2, "--corpus", id="vectors-corpus-no-manifest"),
    pytest.param(["conform", "--timeout", "0", "--", "true"], 4, "--timeout", id="conform-timeout-0"),
    pytest.param(["conform", "--cases", "0", "--", "true"], 4, "--cases", id="conform-cases-0"),
    pytest.param(["conform", "--mode", "known-answer,bogus", "--", "true"], 4, "--mode", id="conform-mode-unknown"),
    pytest.param(["conform", "--mode", "", "--", "true"], 4, "--mode", id="conform-mode-empty"),
    pytest.param(["conform", "--differential-seconds", "0", "--", "true"], 4, "--differential-seconds",
                 id="conform-differential-seconds-0"),
    pytest.param(["conform", "--differential-out", "{file}", "--", "true"], 4, "--differential-out",
                 id="conform-differential-out-is-a-file"),
    pytest.param(["conform", "--differential-out", "{tmp}/missing/out", "--", "true"], 4, "--differential-out",
                 id="conform-differential-out-parent-missing"),
    pytest.param(["conform", "--differential-out", "{readonly}/out", "--", "true"], 4, "--differential-out",
                 id="conform-differential-out-read-only", marks=READ_ONLY),
    # reproduce
    pytest.param(["reproduce"], 2, "required: experiment", id="reproduce-no-experiment"),
    pytest.param(["reproduce", "no-such-experiment"], 2, "invalid choice", id="reproduce-unknown"),
    # phdstream-circles
    pytest.param(["reproduce", "phdstream-circles", "--eps", "0"], 2, "--eps", id="circles-eps-0"),
    pytest.param(["reproduce", "phdstream-circles", "--eps", "-1"], 2, "--eps", id="circles-eps-negative"),
    pytest.param(["reproduce", "phdstream-circles", "--eps", "1,-2"], 2, "--eps", id="circles-eps-list-bad-item"),
    pytest.param(["reproduce", "phdstream-circles", "--eps", "1", "x"], 2, "--eps", id="circles-eps-text-item"),
    pytest.param(["reproduce", "phdstream-circles", "--eps", "1,,2"], 2, "--eps", id="circles-eps-empty-item"),
    pytest.param(["reproduce", "phdstream-circles", "--eps", "nan"], 2, "--eps", id="circles-eps-nan"),
    pytest.param(["reproduce", "phdstream-circles", "--eps", "inf"], 2, "--eps", id="circles-eps-inf"),
    pytest.param(["reproduce", "phdstream-circles", "--init-ratios", "1.5"], 2, "--init-ratios", id="circles-t0"),
    pytest.param(["reproduce", "phdstream-circles", "--batch-size", "0"], 2, "--batch-size", id="circles-batch-0"),
    pytest.param(["reproduce", "phdstream-circles", "--runs", "0"], 2, "--runs", id="circles-runs-0"),
    pytest.param(["reproduce", "phdstream-circles", "--runs", "-3"], 2, "--runs", id="circles-runs-negative"),
    pytest.param(["reproduce", "phdstream-circles", "--evaluations", "0"], 2, "--evaluations", id="circles-evals"),
    pytest.param(["reproduce", "phdstream-circles", "--max-depth", "0"], 2, "--max-depth", id="circles-depth-0"),
    pytest.param(["reproduce", "phdstream-circles", "--max-events", "0"], 2, "--max-events", id="circles-events"),
    pytest.param(["reproduce", "phdstream-circles", "--max-queries", "-5"], 2, "--max-queries", id="circles-queries"),
    pytest.param(["reproduce", "phdstream-circles", "--n", "0"], 2, "--n", id="circles-n-0"),
    pytest.param(["reproduce", "phdstream-circles", "--seed", "-1"], 2, "--seed", id="circles-seed-negative"),
    pytest.param(["reproduce", "phdstream-circles", "--theta", "nan"], 2, "--theta", id="circles-theta-nan"),
    pytest.param(["reproduce", "phdstream-circles", "--lambda-rule", "x"], 2, "--lambda-rule", id="circles-rule"),
    pytest.param(["reproduce", "phdstream-circles", "--algorithms", "x"], 2, "--algorithms", id="circles-algorithm"),
    pytest.param(["reproduce", "phdstream-circles", "--out", "{file}"], 2, "--out", id="circles-out-is-a-file"),
    pytest.param(["reproduce", "phdstream-circles", "--out", "/proc/dpstream-nope"], 2, "--out",
                 id="circles-out-not-creatable", marks=PROC),
    pytest.param(["reproduce", "phdstream-circles", "--max-depth", HUGE], 2, "--max-depth", id="circles-depth-huge"),
    pytest.param(["reproduce", "phdstream-circles", "--n", "1e3"], 2, "--n", id="circles-n-float"),
    pytest.param(["reproduce", "phdstream-circles", "--data-dir", "{empty}"], 2, "--data-dir",
                 id="circles-data-missing"),
    pytest.param(["reproduce", "phdstream-circles", "--data-dir", "{corrupt}"], 2, "corrupted",
                 id="circles-data-corrupted"),
    # bun-simulated
    pytest.param(["reproduce", "bun-simulated", "--reps", "0"], 2, "--reps", id="bun-reps-0"),
    pytest.param(["reproduce", "bun-simulated", "--n", "-1"], 2, "--n", id="bun-n-negative"),
    pytest.param(["reproduce", "bun-simulated", "--T", "0"], 2, "--T", id="bun-T-0"),
    pytest.param(["reproduce", "bun-simulated", "--k", "0"], 2, "--k", id="bun-k-0"),
    pytest.param(["reproduce", "bun-simulated", "--k", "13"], 2, "--k", id="bun-k-above-T"),
    pytest.param(["reproduce", "bun-simulated", "--rho", "0"], 2, "--rho", id="bun-rho-0"),
    pytest.param(["reproduce", "bun-simulated", "--rho", "-0.1"], 2, "--rho", id="bun-rho-negative"),
    pytest.param(["reproduce", "bun-simulated", "--beta", "1"], 2, "--beta", id="bun-beta-1"),
    pytest.param(["reproduce", "bun-simulated", "--beta", "0"], 2, "--beta", id="bun-beta-0"),
    pytest.param(["reproduce", "bun-simulated", "--max-width", "0"], 2, "--max-width", id="bun-width-0"),
    pytest.param(["reproduce", "bun-simulated", "--seed", "x"], 2, "--seed", id="bun-seed-text"),
    pytest.param(["reproduce", "bun-simulated", "--calibration", "x"], 2, "--calibration", id="bun-calibration"),
    pytest.param(["reproduce", "bun-simulated", "--out", "{file}/sub"], 2, "--out", id="bun-out-under-a-file"),
    pytest.param(["reproduce", "bun-simulated", "--n", HUGE], 2, "--n", id="bun-n-huge"),
    pytest.param(["reproduce", "bun-simulated", "--T", HUGE], 2, "--T", id="bun-T-huge"),
    pytest.param(["reproduce", "bun-simulated", "--reps", HUGE], 2, "--reps", id="bun-reps-huge"),
    pytest.param(["reproduce", "bun-simulated", "--n", "100000000", "--T", "100"], 2, "--n", id="bun-data-too-large"),
    pytest.param(["reproduce", "bun-simulated", "--out", "{readonly}/sub"], 2, "--out", id="bun-out-read-only",
                 marks=READ_ONLY),
    # hypercube-rate
    pytest.param(["reproduce", "hypercube-rate", "--t-max", "0"], 2, "--t-max", id="rate-t-max-0"),
    pytest.param(["reproduce", "hypercube-rate", "--t-max", "10"], 2, "--t-max", id="rate-t-max-too-small"),
    pytest.param(["reproduce", "hypercube-rate", "--runs", "0"], 2, "--runs", id="rate-runs-0"),
    pytest.param(["reproduce", "hypercube-rate", "--epsilon", "0"], 2, "--epsilon", id="rate-epsilon-0"),
    pytest.param(["reproduce", "hypercube-rate", "--epsilon", "-1"], 2, "--epsilon", id="rate-epsilon-negative"),
    pytest.param(["reproduce", "hypercube-rate", "--dims", "2", "0"], 2, "--dims", id="rate-dims-bad-item"),
    pytest.param(["reproduce", "hypercube-rate", "--seed", "-4"], 2, "--seed", id="rate-seed-negative"),
    pytest.param(["reproduce", "hypercube-rate", "--out", "{file}"], 2, "--out", id="rate-out-is-a-file"),
    pytest.param(["reproduce", "hypercube-rate", "--t-max", HUGE], 2, "--t-max", id="rate-t-max-huge"),
    pytest.param(["reproduce", "hypercube-rate", "--t-min", HUGE], 2, "--t-min", id="rate-t-min-huge"),
    pytest.param(["reproduce", "hypercube-rate", "--dims", "2", HUGE], 2, "--dims", id="rate-dims-huge"),
    pytest.param(["reproduce", "hypercube-rate", "--epsilon", "1e-300"], 2, "--epsilon", id="rate-epsilon-tiny"),
    pytest.param(["reproduce", "hypercube-rate", "--epsilon", "1e300"], 2, "--epsilon", id="rate-epsilon-huge"),
    # tabular-adult ({sample}: the 300-row sample of tests/data as a data dir; data/ is not read by tests)
    pytest.param(["reproduce", "tabular-adult", "--epsilons", "1,0"], 2, "--epsilons", id="adult-eps-list-0"),
    pytest.param(["reproduce", "tabular-adult", "--epsilons", "-1"], 2, "--epsilons", id="adult-eps-negative"),
    pytest.param(["reproduce", "tabular-adult", "--batch-sizes", "50", "0"], 2, "--batch-sizes", id="adult-B-0"),
    pytest.param(["reproduce", "tabular-adult", "--horizon", "0"], 2, "--horizon", id="adult-horizon-0"),
    pytest.param(["reproduce", "tabular-adult", "--pgm-horizon", "0"], 2, "--pgm-horizon", id="adult-pgm-h-0"),
    pytest.param(["reproduce", "tabular-adult", "--k", "0"], 2, "--k", id="adult-k-0"),
    pytest.param(["reproduce", "tabular-adult", "--data-dir", "{sample}", "--fitters", "mw", "--k", "11"], 2, "--k",
                 id="adult-k-above-workloads"),
    pytest.param(["reproduce", "tabular-adult", "--pgm-iters", "0"], 2, "--pgm-iters", id="adult-pgm-iters-0"),
    pytest.param(["reproduce", "tabular-adult", "--data-dir", "{sample}", "--mw-columns", "sex,bogus"], 2,
                 "--mw-columns", id="adult-mw-unknown-column"),
    pytest.param(["reproduce", "tabular-adult", "--data-dir", "{sample}", "--mw-columns", "sex"], 2, "--mw-columns",
                 id="adult-mw-one-column"),
    pytest.param(["reproduce", "tabular-adult", "--mw-columns", "sex,,race"], 2, "--mw-columns", id="adult-mw-empty"),
    pytest.param(["reproduce", "tabular-adult", "--relwe-floor", "0"], 2, "--relwe-floor", id="adult-floor-0"),
    pytest.param(["reproduce", "tabular-adult", "--relwe-floor", "2"], 2, "--relwe-floor", id="adult-floor-2"),
    pytest.param(["reproduce", "tabular-adult", "--seed", "-1"], 2, "--seed", id="adult-seed-negative"),
    pytest.param(["reproduce", "tabular-adult", "--fitters", "x"], 2, "--fitters", id="adult-fitter-unknown"),
    pytest.param(["reproduce", "tabular-adult", "--data-dir", "{empty}"], 2, "--data-dir", id="adult-data-missing"),
    pytest.param(["reproduce", "tabular-adult", "--data-dir", "{corrupt}"], 2, "corrupted",
                 id="adult-data-corrupted"),
    pytest.param(["reproduce", "tabular-adult", "--out", "{file}"], 2, "--out", id="adult-out-is-a-file"),
]


@pytest.mark.parametrize(("template", "status", "names"), CASES)
def test_bad_invocation(template: list[str], status: int, names: str, places: dict[str, str],
                        capsys: pytest.CaptureFixture[str]) -> None:
    argv = [a.format(**places) for a in template]
    if argv[:1] == ["reproduce"] and len(argv) > 2 and "--out" not in argv:
        argv += ["--out", f"{places['tmp']}/never"]
    code, err = invoke(argv, capsys)
    assert code == status, err
    assert names in err, err
    assert "Traceback" not in err
    if argv[:1] != ["conform"]:  # conform keeps argparse's usage block (its own parser, left as it is)
        assert len(err.strip().splitlines()) == 1, err
    assert not Path(places["tmp"], "never").exists()  # nothing ran, no output folder was made
    assert not Path("/proc/dpstream-nope").exists()
    assert sorted(p.name for p in Path(places["not_a_corpus"]).iterdir()) == ["notes.txt"]


def test_the_table_covers_every_experiment() -> None:
    from dpstream.experiments import discover

    argvs = [cast(list[str], case.values[0]) for case in CASES]
    covered = {argv[1] for argv in argvs if argv[:1] == ["reproduce"] and len(argv) > 2}
    assert covered == set(discover())


def test_comma_lists_and_repeated_values_flatten() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--eps", type=comma_list(positive_float), nargs="+", action=Flatten, default=[9.0])
    assert parser.parse_args(["--eps", "0.5,1", "2"]).eps == [0.5, 1.0, 2.0]
    assert parser.parse_args([]).eps == [9.0]
    with pytest.raises(argparse.ArgumentTypeError, match=r"must be a finite number > 0 \(got '-1'\)"):
        comma_list(positive_float)("1,-1")


def test_output_folder_is_checked_without_being_made_then_prepared(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b"
    assert writable_dir(str(target)) == target and not (tmp_path / "a").exists()  # parsing creates nothing
    assert prepare_output_dir(target) == target and target.is_dir()
    assert list(target.iterdir()) == []  # the probe file is gone
    (tmp_path / "f").write_text("x", encoding="utf-8")
    with pytest.raises(DPStreamInputError, match="--out: is a file"):
        prepare_output_dir(tmp_path / "f")


def test_staging_moves_files_on_success_and_discards_them_on_failure(tmp_path: Path) -> None:
    out = tmp_path / "out"
    (out / "plots").mkdir(parents=True)
    (out / "old.csv").write_text("previous complete run", encoding="utf-8")
    (out / "plots" / "keep.png").write_text("old plot", encoding="utf-8")
    with pytest.raises(RuntimeError), staged_output_dir(out) as stage:
        (stage / "old.csv").write_text("half", encoding="utf-8")
        raise RuntimeError("crash")
    assert (out / "old.csv").read_text(encoding="utf-8") == "previous complete run"
    assert sorted(p.name for p in out.iterdir()) == ["old.csv", "plots"]  # no staging folder left
    written: list[Path] = []
    with staged_output_dir(out, written) as stage:
        (stage / "plots").mkdir()
        (stage / "plots" / "new.png").write_text("new plot", encoding="utf-8")
        (stage / "old.csv").write_text("new run", encoding="utf-8")
        assert not (out / "plots" / "new.png").exists()  # nothing is visible before the end
    assert sorted(p.relative_to(out).as_posix() for p in written) == ["old.csv", "plots/new.png"]
    assert (out / "old.csv").read_text(encoding="utf-8") == "new run"
    assert sorted(p.name for p in (out / "plots").iterdir()) == ["keep.png", "new.png"]
    assert not any(p.name.startswith(STAGING_PREFIX) for p in out.iterdir())


BUN = ["reproduce", "bun-simulated", "--n", "200", "--T", "5", "--k", "2", "--rho", "0.5", "--reps", "2",
       "--max-width", "3"]


def test_an_earlier_result_is_kept_and_the_run_goes_beside_it(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert resolve_output_dir(out) == (out, None)  # new
    out.mkdir()
    (out / f"{STAGING_PREFIX}leftover").mkdir()  # what a killed run leaves does not count
    assert resolve_output_dir(out) == (out, None)
    (out / "table.md").write_text("earlier", encoding="utf-8")
    beside, note = resolve_output_dir(out)
    assert beside == tmp_path / "out-2" and note is not None and "out-2" in note and "--overwrite" in note
    beside.mkdir()
    (beside / "x").write_text("also earlier", encoding="utf-8")
    (tmp_path / "out-3").write_text("a file, not a folder", encoding="utf-8")
    assert resolve_output_dir(out)[0] == tmp_path / "out-4"
    assert resolve_output_dir(out, overwrite=True) == (out, None)
    with pytest.raises(DPStreamInputError, match="--out: holds an earlier result and has no name"):
        resolve_output_dir(Path("/"))


def test_a_second_run_does_not_replace_the_first(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "bun"
    assert main([*BUN, "--out", str(out)]) == 0
    first = {p.name: p.read_bytes() for p in out.iterdir()}
    capsys.readouterr()
    assert main([*BUN, "--out", str(out), "--seed", "5"]) == 0
    captured = capsys.readouterr()
    assert f"{out} holds an earlier result, kept: writing to {out}-2" in captured.err
    assert f"to {out}-2:" in captured.out  # the "wrote N file(s)" line names where
    assert {p.name: p.read_bytes() for p in out.iterdir()} == first
    assert json.loads((tmp_path / "bun-2" / "summary.json").read_text(encoding="utf-8"))["parameters"]["seed"] == 5
    args = build_parser().parse_args([*BUN, "--out", str(out), "--overwrite"])
    assert args.overwrite and resolve_output_dir(args.out, args.overwrite) == (out, None)  # asked for: in place


def test_bounded_integers() -> None:
    assert int_in(1, 10)("10") == 10
    for bad in ("0", "11", "99999999999999999999", "1.5", "x"):
        with pytest.raises(argparse.ArgumentTypeError, match=r"must be an integer"):
            int_in(1, 10)(bad)


def test_an_unexpected_error_is_one_line_exit_1_and_leaves_no_output(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    from dpstream.experiments import bun_simulated

    def crash(*args: object, out: Path, **kwargs: object) -> dict[str, object]:
        (out / "errors.csv").write_text("half written", encoding="utf-8")
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(bun_simulated, "run_experiment", crash)
    out = tmp_path / "out"
    out.mkdir()
    (out / "summary.json").write_text("{}", encoding="utf-8")  # a previous run's output stays as it was
    assert main([*BUN, "--out", str(out)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("dpstream reproduce bun-simulated: error: RuntimeError: disk on fire")
    assert "--debug" in err[-1] and not any("Traceback" in line for line in err)
    assert sorted(p.name for p in out.iterdir()) == ["summary.json"]
    assert main(["--debug", *BUN, "--out", str(out)]) == 1
    assert "Traceback" in capsys.readouterr().err
    monkeypatch.setenv("DPSTREAM_DEBUG", "1")
    assert main([*BUN, "--out", str(out)]) == 1
    assert "Traceback" in capsys.readouterr().err


def test_summaries_state_the_noise_mode_and_the_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*BUN, "--out", str(tmp_path / "bun"), "--seed", "7"]) == 0
    doc = json.loads((tmp_path / "bun" / "summary.json").read_text(encoding="utf-8"))
    assert doc["noise"] == "insecure seeded, seed=7" and doc["parameters"]["seed"] == 7
    assert doc["command"].startswith("dpstream reproduce bun-simulated --n 200")
    assert main([*BUN, "--out", str(tmp_path / "secure"), "--secure"]) == 0
    doc = json.loads((tmp_path / "secure" / "summary.json").read_text(encoding="utf-8"))
    assert doc["noise"] == "secure (OpenDP)" and doc["parameters"]["seed"] is None
    printed = capsys.readouterr().out
    assert "noise: secure (OpenDP)" in printed and "seed=0" not in printed

    circles = ["reproduce", "phdstream-circles", "--source", "generated", "--n", "300", "--batch-size", "100",
               "--max-depth", "5", "--eps", "1", "--init-ratios", "0.3", "--evaluations", "1", "--max-queries",
               "50", "--algorithms", "PHDStream (Simple)", "--out", str(tmp_path / "circles"), "--secure"]
    assert main(circles) == 0
    summary = (tmp_path / "circles" / "summary.md").read_text(encoding="utf-8")
    assert "Noise: secure (OpenDP)." in summary and "Command: `dpstream reproduce phdstream-circles" in summary
    assert "seed=0" not in summary.replace("data seed=0", "")

    assert main(["reproduce", "hypercube-rate", "--t-max", "18", "--runs", "1", "--dims", "1", "--no-plot",
                 "--seed", "3", "--out", str(tmp_path / "rate")]) == 0
    grid = json.loads((tmp_path / "rate" / "rates.json").read_text(encoding="utf-8"))["grid"]
    assert grid["noise_mode"] == "insecure seeded, seed=3" and "--t-max 18" in grid["command"]
    assert "noise: insecure seeded, seed=3" in capsys.readouterr().out


def _tabular(tmp_path: Path, *extra: str) -> list[str]:
    return ["reproduce", "tabular-adult", "--data-dir", str(tabular_sample_dir(tmp_path / "data")),
            "--batch-sizes", "50,200", "--horizon", "2", "--mw-columns", "sex,race,income>50K",
            "--out", str(tmp_path / "out"), *extra]


def test_tabular_default_says_why_pgm_is_empty_and_how_far_from_the_paper(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Without mbi: the PGM tables are missing, and the output (console and table.md) says why and how to fill
    them; the reduced configuration and its distance to the paper are stated next to the results."""
    from dpstream.experiments import tabular_adult
    from dpstream.tabular import pgm

    monkeypatch.setattr(tabular_adult, "_pgm_installed", lambda: False)
    monkeypatch.setattr(pgm, "mbi_available", lambda: False)
    assert main(_tabular(tmp_path)) == 0
    printed = capsys.readouterr().out
    table = (tmp_path / "out" / "table.md").read_text(encoding="utf-8")
    for text in (printed, table):
        assert "PGM not run: the optional package mbi is not installed" in text
        assert "pip install 'dpstream[pgm]'" in text and "dpstream reproduce tabular-adult --fitters pgm" in text
        assert "REDUCED configuration" in text and "dpstream reproduce tabular-adult --full" in text
        assert "Ours / paper (MW" in text and "003 Table 3 has no such rows" in text
        assert "Noise: insecure seeded, seed=0." in text
    assert "A_Dataset = PGM" not in table
    # asking for PGM explicitly without mbi is a usage error, before any work
    assert main(_tabular(tmp_path, "--fitters", "pgm")) == 2
    assert "--fitters: pgm needs the optional package mbi" in capsys.readouterr().err


def test_paper_ratio_is_ours_over_the_papers_cell() -> None:
    from dpstream.experiments.tabular_adult import PAPER_TABLES_1_2, RunSpec, paper_ratios

    spec = RunSpec("randomized", 50, 1.0, "mw", "baseline")
    rows = [{"t": float(t), "AvgWE": 0.0206, "MaxWE": 0.0712, "AvgRelWE": 0.4005, "MaxRelWE": 2.3292}
            for t in range(1, 4)]
    ratios = paper_ratios({spec: rows})
    assert PAPER_TABLES_1_2[("Adult-randomized-bs-50", 1.0, "AvgWE")][0] == 0.0103
    assert ratios[("mw", "AvgWE")] == pytest.approx([2.0])
    assert ratios[("mw", "MaxWE")] == pytest.approx([1.0])


def test_a_garbage_row_in_the_data_names_file_line_and_value(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    sample = (TABULAR_SAMPLE / "adult_liu2021_sample.csv").read_text(encoding="utf-8").rstrip("\n").split("\n")
    header = sample[0].split(",")
    garbage = sample[1].split(",")
    garbage[header.index("sex")] = "abc"
    data_dir = tabular_sample_dir(tmp_path / "garbage", "\n".join([*sample, ",".join(garbage)]) + "\n")
    argv = _tabular(tmp_path, "--fitters", "mw")
    argv[argv.index("--data-dir") + 1] = str(data_dir)
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert f"adult_liu2021/adult.csv, line {len(sample) + 1}, sex: must be an integer code in 0..1 (got 'abc')" in err
    assert not (tmp_path / "out" / "table.md").exists()


def test_log_progress_lines(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "1")
    bar = progress(20, "demo", "twenty things")
    assert isinstance(bar, LogProgress)
    monkeypatch.setattr(progress_module, "LOG_INTERVAL", 0.0)
    with bar:
        for _ in range(20):
            bar.update(1)
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == "demo: twenty things (20 steps)"
    assert [line.split()[1] for line in lines[1:-1]] == [f"{10 * k}%" for k in range(1, 10)]
    assert lines[-1].startswith("demo: done, 20/20 steps in")
    # slow steps after fast ones: a heartbeat line after any step once HEARTBEAT seconds passed
    monkeypatch.setattr(progress_module, "LOG_INTERVAL", 1e9)
    monkeypatch.setattr(progress_module, "HEARTBEAT", 0.0)
    with progress(3, "demo", "three things") as bar:
        bar.set_postfix_str("slow part")
        for _ in range(3):
            bar.update(1)
    lines = capsys.readouterr().err.splitlines()
    assert [re.sub(r", \d+ s\)", ", T s)", line) for line in lines[1:-1]] == [
        f"demo: {p}% ({k}/3 steps, T s); slow part" for k, p in ((1, 33), (2, 66), (3, 100))]


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"dpstream {version('dpstream')}"
    assert dpstream.__version__ == version("dpstream")


def test_import_dpstream_is_light_and_exports_the_main_types() -> None:
    code = ("import sys, dpstream; heavy = [m for m in ('opendp', 'matplotlib', 'numpy', 'mbi') if m in sys.modules]; "
            "print(heavy)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"
    from dpstream.claims import PrivacyClaim
    from dpstream.noise import SecureNoise

    assert dpstream.SecureNoise is SecureNoise and dpstream.PrivacyClaim is PrivacyClaim
    assert all(getattr(dpstream, name) is not None for name in dpstream.__all__)
    assert not {"InsecureSeededNoise", "InsecureZeroNoise", "TapeReplay"} & set(dpstream.__all__)
    with pytest.raises(AttributeError):
        _ = dpstream.InsecureSeededNoise


FAMILY_EXPORTS = {
    "counters": ["SimpleCounter", "BinaryTreeCounter", "BlockCounter", "TreeAggregationCounter", "HybridCounter",
                 "UnboundedBlockCounter", "SparseCounter", "InhomogeneousSparseCounter", "MultiDimensionalCounter"],
    "phdstream": ["PHDStream", "PHDStreamTree", "PHDStreamTreeWithCounters", "EfficientPHDStream", "PrivTree",
                  "OfflinePrivTreeOnStream", "OfflinePrivTreeOnDifferential",
                  "InitPrivTreeThenCounters", "load_point_stream_csv"],
    "longitudinal": ["FixedWindowSynthesizer", "CategoricalFixedWindowSynthesizer", "CumulativeSynthesizer",
                     "PaddingExhaustedError", "WindowQuery"],
    "hypercube": ["OnlineSyntheticData", "BinaryPartition", "PrivacySchedule", "consistency", "wasserstein1"],
    "selective_counting": ["SelectiveCounting", "SelectiveRelease", "compose_selective_claim"],
    "tabular": ["StreamingMWEM", "MainAlgorithm", "MultiplicativeWeights", "PrivatePGM", "Domain", "load_table_csv",
                "naive_offline", "select_measure_fit"],
}


@pytest.mark.parametrize("family", sorted(FAMILY_EXPORTS))
def test_family_packages_export_their_algorithms(family: str) -> None:
    package = importlib.import_module(f"dpstream.{family}")
    assert set(FAMILY_EXPORTS[family]) <= set(package.__all__)
    assert all(getattr(package, name, None) is not None for name in package.__all__)
