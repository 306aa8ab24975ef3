"""An outside 004-alg3 (inhomogeneous sparse counting) with a planted budget-level leak: the statistical check's law
pair certifies it, in the statistical mode and from transcript mode's step 6, never its controls (issue 28).

``tests/conformance/outside_js/sparse.js`` (node, no packages) implements 004-alg3 with its 004-alg2 levels and their
A_sub (004-lem3.1) from the public docs alone, in own and transcript mode with the bulk op ``runs`` (its transcript
reports every draw honestly, the planted scale too), drawing the discrete Laplace as
a difference of geometric variables by inversion (another evaluation order than the reference's), and plants
``scale/1.5`` (every scale divided by 1.5: 1.17x the claim on the law pair, docs/conformance.md "Law pair"); its
controls are ``none``, ``own-rng`` (sfc32) and ``integer`` (the segment test in integers). Each ``dpstream
conform`` run spends at most 1e-3 on a false violation; every run is seeded (``--seed 0``).
"""

from __future__ import annotations

import json
import subprocess
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


def test_its_transcript_names_the_reference_sites() -> None:
    init = {"op": "init", "algorithm": "004-alg3", "params": {"epsilon": 2.0, "r0": 0, "eps_r": 2.0},
            "noise": "transcript", "seed": 7}
    _, _, run, step = _ask("scale/1.5", {"op": "hello"}, init, {"op": "run", "inputs": [1] * 4}, {"op": "step",
                                                                                                   "input": 1})
    sites = [d["site"] for d in run["draws"]]
    # level 0 is empty at eps = 2 (t_0 = t_1 = 1): its S~ update is drawn at t = 1 all the same
    assert sites[:3] == ["004-alg3 u3 r=0", "004-alg3 u2 r=1 / 004-alg2 u2 j=1", "004-alg3 u3 r=1"]
    assert {d["params"]["scale"] for d in run["draws"] if d["site"].startswith("004-alg3 u3")} == {1 / 1.5}
    assert [d["site"] for d in step["draws"]] == ["004-alg3 u3 r=0", "004-alg3 u2 r=1 / 004-alg2 u2 j=1"]


def _conform(tmp_path: Path, fault: str, mode: str = "statistical") -> tuple[int, dict[str, Any]]:
    return PROGRAMS.conform_json(tmp_path, "004-alg3", mode, [_node(), str(PROGRAM), fault])  # type: ignore[no-any-return]


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


def test_transcript_mode_passes_the_correct_program(tmp_path: Path) -> None:
    status, report = _conform(tmp_path, "none", "transcript")
    (outcome,) = report["outcomes"]
    assert status == 0 and outcome["verdict"] == "pass", outcome["message"][:2000]


@pytest.mark.slow  # about 10 s each
@pytest.mark.parametrize(("fault", "certified"), [("scale/1.5", True), ("own-rng", False), ("integer", False)])
def test_transcript_mode_certifies_the_leak_from_its_law_pair(tmp_path: Path, fault: str, certified: bool) -> None:
    status, report = _conform(tmp_path, fault, "transcript")
    (outcome,) = report["outcomes"]
    print(f"\nRESULT transcript {fault}: exit {status}, {outcome['privacy']}, {outcome['seconds']:.0f} s")
    assert (status == 2) is certified and (outcome["privacy"] == "violation") is certified
    if certified:  # the honest transcript shows the scale (x1.5 implied) and the law pair's held-out runs certify
        assert outcome["details"]["implied_loss"]["ratio"] == pytest.approx(1.5)
        assert outcome["details"]["certificate"].startswith("black-box")
        assert outcome["seconds"] < 60
