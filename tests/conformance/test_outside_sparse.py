"""An outside 004-alg3 (inhomogeneous sparse counting) with a planted budget-level leak: the statistical check's law
pair certifies it, never its controls (issue 28).

``tests/conformance/outside_js/sparse.js`` (node, no packages) implements 004-alg3 with its 004-alg2 levels and their
A_sub (004-lem3.1) from the public docs alone, in own mode with the bulk op ``runs``, drawing the discrete Laplace as
a difference of geometric variables by inversion (another evaluation order than the reference's), and plants
``scale/1.5`` (every scale divided by 1.5: 1.17x the claim on the law pair, docs/conformance.md "Law pair"); its
controls are ``none``, ``own-rng`` (sfc32) and ``integer`` (the segment test in integers). Each ``dpstream
conform`` run spends at most 1e-3 on a false violation; every run is seeded (``--seed 0``).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from dpstream.testing import load_script

PROGRAM = Path(__file__).resolve().parent / "outside_js" / "sparse.js"
PROGRAMS: ModuleType = load_script(Path(__file__).resolve().parent / "example_programs.py")


def _node() -> str:
    return str(PROGRAMS.node_or_skip("the outside JS sparse counter"))


def _ask(fault: str, *messages: dict[str, Any]) -> list[dict[str, Any]]:
    lines = "".join(json.dumps(m) + "\n" for m in messages)
    done = subprocess.run([_node(), str(PROGRAM), fault], input=lines, capture_output=True, text=True, timeout=60,
                          check=True)
    return [json.loads(line) for line in done.stdout.splitlines()]


def test_the_program_speaks_the_protocol_and_refuses_bad_input() -> None:
    init = {"op": "init", "algorithm": "004-alg3", "params": {"epsilon": 2.0, "r0": 1, "eps_r": 2.0}, "noise": "own",
            "seed": 7}
    hello, ok, run, bad, many = _ask("none", {"op": "hello"}, init, {"op": "run", "inputs": [1] * 16},
                                     {"op": "run", "inputs": [1, 2]}, {"op": "runs", "inputs": [0, 1], "count": 3})
    assert hello["algorithms"] == ["004-alg3"] and ok == {"ok": True}
    assert len(run["releases"]) == 16 and run["releases"][0] == 0  # level 1 starts at t = 1: its counter is 0
    assert all(float(r).is_integer() for r in run["releases"])
    assert "inputs[1]" in bad["error"] and len(many["runs"]) == 3


def _conform(tmp_path: Path, fault: str) -> tuple[int, dict[str, Any]]:
    script = Path(sys.executable).parent / "dpstream"
    report = tmp_path / "r.json"
    done = subprocess.run([str(script), "conform", "--mode", "statistical", "--algorithm", "004-alg3", "--seed", "0",
                           "--no-progress", "--json", str(report), "--", _node(), str(PROGRAM), fault],
                          capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode in (0, 1, 2), done.stdout[-2000:] + done.stderr[-2000:]
    return done.returncode, json.loads(report.read_text())


@pytest.mark.slow  # about 100 s each
@pytest.mark.parametrize(("fault", "certified"), [("scale/1.5", True), ("none", False), ("own-rng", False),
                                                  ("integer", False)])
def test_the_law_pair_certifies_the_leak_and_no_control(tmp_path: Path, fault: str, certified: bool) -> None:
    status, report = _conform(tmp_path, fault)
    (privacy,) = [o for o in report["outcomes"] if o["name"] == "privacy: witness search"]
    event = privacy["details"]["composed_event"]
    print(f"\nRESULT {fault}: exit {status}, {privacy['privacy']}, {event['eps_lower_bound']:.4g} vs "
          f"{event['claimed_eps']}, {privacy['seconds']:.0f} s")
    assert event["test"] == "selected event"
    assert (status == 2) is certified and (privacy["privacy"] == "violation") is certified
