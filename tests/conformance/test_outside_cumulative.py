"""An outside 002-alg2 (the cumulative time synthesizer, rho-zCDP) written from the docs alone conforms, and the kit
certifies its budget-level leaks in both modes, never its control (issue 28).

``tests/conformance/outside_js/cumulative.js`` (node, no packages) implements 002-alg2 with its tree-aggregation
counters (002-alg3) from docs/longitudinal.md and docs/conformance.md only (its author's questions:
``outside_js/CUMULATIVE-QUESTIONS.md``), in tape, own and transcript mode, in another floating-point order (sigma2
as (bit_length x sum L^3) / (rho L_b^3), sums from the highest node down), with a Canonne-Kamath-Steinke discrete
Gaussian in floating point. Its faults: ``variance/2.25`` (1.375 rho on the design's best pair, docs/conformance.md
"Why the crowd"), ``variance/3`` and ``noiseless-b1``; its control ``own-rng`` (sfc32). Each ``dpstream conform``
run spends at most 1e-3 on a false violation; every run is seeded (``--seed 0``).
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from dpstream.testing import load_script

PROGRAM = Path(__file__).resolve().parent / "outside_js" / "cumulative.js"
PROGRAMS: ModuleType = load_script(Path(__file__).resolve().parent / "example_programs.py")


def _conform(tmp_path: Path, mode: str, fault: str = "none") -> tuple[int, dict[str, Any]]:
    node = str(PROGRAMS.node_or_skip("the outside JS cumulative synthesizer"))
    return PROGRAMS.conform_json(tmp_path, "002-alg2", mode, [node, str(PROGRAM), fault])  # type: ignore[no-any-return]


def test_the_correct_program_passes_every_vector_and_its_transcript(tmp_path: Path) -> None:
    status, report = _conform(tmp_path, "known-answer,must-reject,transcript")
    assert status == 0, [o["message"][:300] for o in report["outcomes"] if o["verdict"] != "pass"]
    assert report["checks_done"] == 36


@pytest.mark.slow  # 5-120 s each
# transcript variance/2.25: certified in 3 of 3 seeds since the check's time became the statistical limit where the
# transcript implies more than the claim (2026-11-29 evening: rho >= 0.565, 0.564, 0.570 vs 0.5 in 82, 71, 84 s;
# before, in 2 of 3 at the edge of 60 s)
@pytest.mark.parametrize(("mode", "fault", "certified"), [
    ("transcript", "variance/2.25", True), ("statistical", "variance/2.25", True),
    ("transcript", "variance/3", True), ("statistical", "variance/3", True),
    ("transcript", "noiseless-b1", True), ("statistical", "noiseless-b1", True),
    ("transcript", "own-rng", False), ("statistical", "own-rng", False)])
def test_the_leaks_are_certified_and_the_control_is_not(tmp_path: Path, mode: str, fault: str,
                                                        certified: bool) -> None:
    status, report = _conform(tmp_path, mode, fault)
    privacy = [o for o in report["outcomes"] if o["privacy"] is not None or o["mode"] == "transcript"]
    print(f"\nRESULT {mode} {fault}: exit {status}, "
          + ", ".join(f"{o['verdict']}/{o['privacy']} {o['seconds']:.0f} s" for o in privacy))
    assert (status == 2) is certified
    assert any(o["privacy"] == "violation" for o in privacy) is certified
    assert all(o["seconds"] < 120 + 15 for o in privacy)  # the check's limit (both modes' 120 s), and the report
