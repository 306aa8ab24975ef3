"""An outside implementation of the multiplicative-weights entries in another floating-point order passes.

`tests/conformance/outside_js/mw.js` (node, no packages) implements 003-alg2, 003-alg1 and 003-alg3 from the docs
alone (docs/tabular.md "The boxes exactly", docs/conformance.md; its author's questions are in
`outside_js/MW-QUESTIONS.md`), in another evaluation order than the reference's: weights in log space with
log-sum-exp, every sum from the last element to the first, averages as sum / k, N q(p) as the sum of N p(x). Before
the error model (issue 27) such a program was a deviation over a score of 2.2e-16 against the reference's 0.0. Its
`--mistake` flag plants a real mistake (`scale`: the measurement scale times 1.5; `score`: the first candidate's
score off by 1; `release`: every released cell times 1 + 1e-6), which the kit must still convict; two more are
privacy leaks (`leak-scale`: measurements at half scale; `leak-selection`: selections at twice their epsilon, each
1.5x the claim), which transcript mode must certify (its seeds fixed: a correct program is called a violation with
probability at most the check's false-alarm share, 1e-3 over its tests), while the other mistakes are never a
violation. Tape mode is deterministic (the differential cases are seeded). Skipped without node 18+.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from dpstream.testing import load_script

HERE = Path(__file__).resolve().parent
MW = HERE / "outside_js" / "mw.js"
PROGRAMS: ModuleType = load_script(HERE / "example_programs.py")
ALGORITHMS = ["--algorithm", "003-alg2", "--algorithm", "003-alg1", "--algorithm", "003-alg3"]
CONFORM = [sys.executable, "-m", "dpstream.cli", "conform", "--no-progress", *ALGORITHMS]


def conform(modes: str, *program: str, extra: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
    node = str(PROGRAMS.node_or_skip("the outside multiplicative-weights program"))
    return subprocess.run([*CONFORM, "--mode", modes, *extra, "--", node, str(MW), *program], capture_output=True,
                          text=True, timeout=600, env={**os.environ, "CI": "1"})


def test_the_correct_program_passes_every_vector() -> None:
    done = conform("known-answer,must-reject")
    assert done.returncode == 0, done.stdout[-3000:]
    assert "133 checks" in done.stdout


@pytest.mark.parametrize("mistake", ["score", pytest.param("scale", marks=pytest.mark.slow),
                                     pytest.param("release", marks=pytest.mark.slow)])
def test_a_planted_mistake_is_a_deviation(mistake: str) -> None:
    done = conform("known-answer", "--mistake", mistake)
    assert done.returncode == 1, done.stdout[-3000:]


@pytest.mark.slow
def test_the_correct_program_passes_fresh_cases(tmp_path: Path) -> None:
    done = conform("differential", extra=("--differential-out", str(tmp_path / "diff")))
    assert done.returncode == 0, done.stdout[-3000:]


def _transcript(tmp_path: Path, *program: str) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    node = str(PROGRAMS.node_or_skip("the outside multiplicative-weights program"))
    report = tmp_path / "report.json"
    done = subprocess.run([sys.executable, "-m", "dpstream.cli", "conform", "--no-progress", "--algorithm",
                           "003-alg2", "--mode", "transcript", "--json", str(report), "--", node, str(MW), *program],
                          capture_output=True, text=True, timeout=600, env={**os.environ, "CI": "1"})
    return done, json.loads(report.read_text())["outcomes"][0]


def test_transcript_mode_passes_the_correct_program(tmp_path: Path) -> None:
    """Its own generator, its own evaluation order, every draw reported: no deviation, no privacy finding."""
    done, outcome = _transcript(tmp_path)
    assert done.returncode == 0, done.stdout[-3000:]
    assert outcome["verdict"] == "pass" and "door_loss" not in outcome["details"]


@pytest.mark.slow  # 15-40 s each: the pair's runs go on to 400000 per input (the statistical pair test's), since
# transcript mode gives them the statistical plan (2026-11-29 evening); the default run shows transcript certificates
# on the outside synthesizers' 002-alg1 and 004-alg3 and on the Rust 003-alg2 (test_outside_rust.py, slow) instead
@pytest.mark.parametrize(("mistake", "site"), [("leak-scale", "L16"), ("leak-selection", "L11")])
def test_transcript_mode_certifies_a_planted_budget_level_leak(tmp_path: Path, mistake: str, site: str) -> None:
    """Measurements at half scale, or selections at twice their epsilon (each 1.5x the claim by the accountant's
    composition): the program's transcript says so, the pair composed along its reported run (a measurement's share
    1 / b doubled, 003-alg2 L16; a selection's log-ratio grown, 003-def3.8 at 2 eps) exceeds the claim, and the
    pair's composed event certifies it from held-out runs of the program (the design's k = 1 setting, whose releases
    show which query was measured; docs/conformance.md, "Transcript mode")."""
    done, outcome = _transcript(tmp_path, "--mistake", mistake)
    assert done.returncode == 2, done.stdout[-3000:]
    assert outcome["conformance"] == "deviation" and outcome["privacy"] == "violation"
    assert "certified (black-box, aimed at the pair" in outcome["message"]
    assert outcome["details"]["aimed_search"]["eps_lower_bound"] > 0.5
    door = outcome["details"]["door_loss"]
    assert door["implied"] > door["reached"]
    moved = [s for s in door["shares"] if site in s["site"]]
    assert moved
    for share in moved:
        if share["kind"] == "laplace":
            assert share["implied"] == pytest.approx(2 * share["reached"])
        else:
            assert abs(share["implied"]) > abs(share["reached"])
    composed = outcome["details"]["composed_loss"]
    assert composed["implied"] > composed["claim"] > composed["reached"]
    selections = composed["selections"]
    assert selections["implied"] > 0 and (selections["implied"] > selections["reached"]) == (site == "L11")


def test_transcript_mode_never_calls_more_noise_a_violation(tmp_path: Path) -> None:
    """Measurements at 1.5 times their scale: a deviation (the reported scale is not the reference's), private, and
    never a violation (the composed pairs compose less than the claim; no test is aimed)."""
    done, outcome = _transcript(tmp_path, "--mistake", "scale")
    assert done.returncode == 1, done.stdout[-3000:]
    assert outcome["conformance"] == "deviation" and outcome["privacy"] != "violation"


@pytest.mark.slow  # about 30 s each
@pytest.mark.parametrize(("mistake", "certified"), [("leak-scale", True), ("leak-selection", True), ("", False)])
def test_the_statistical_mode_certifies_a_budget_level_leak_from_own_runs(tmp_path: Path, mistake: str,
                                                                          certified: bool) -> None:
    """The same leaks with nothing reported (own mode): the design pair's composed event on held-out runs of the
    program certifies each (1.5x the claim on 003-alg2's k = 1 setting), never the correct program."""
    node = str(PROGRAMS.node_or_skip("the outside multiplicative-weights program"))
    report = tmp_path / "report.json"
    done = subprocess.run([sys.executable, "-m", "dpstream.cli", "conform", "--no-progress", "--algorithm",
                           "003-alg2", "--mode", "statistical", "--seed", "0", "--json", str(report), "--", node,
                           str(MW), *(("--mistake", mistake) if mistake else ())],
                          capture_output=True, text=True, timeout=600, env={**os.environ, "CI": "1"})
    (privacy,) = [o for o in json.loads(report.read_text())["outcomes"] if o["name"] == "privacy: witness search"]
    assert (done.returncode == 2) is certified, done.stdout[-3000:]
    assert (privacy["privacy"] == "violation") is certified
    if certified:
        assert privacy["details"]["composed_event"]["eps_lower_bound"] > 0.5
