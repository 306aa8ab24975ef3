"""The differential mode on the planted mistakes of the tests: where each is found and what it shrinks to.

    .venv/bin/python benchmarks/differential_mistakes.py [--seeds 0 1 2] [--seconds 60] [--only NAME ...]

Runs ``dpstream conform --mode differential --algorithm ANCHOR --seed K --differential-seconds S --json FILE --
PROGRAM`` for every mistake below (each invisible to the shipped vectors) and prints, per mistake and seed, the
verdict, the case number and the seconds at which the first difference was found, the steps of the first failing
case, the shrinking runs, the steps of the shrunk case, its parameters, and whether it was reproduced on a fresh copy
of the program. The table of docs/conformance.md "Differential checks" comes from this script. Timings depend on the
machine's load; the case numbers do not (the size ramp counts cases).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TESTS = ROOT / "tests" / "conformance"
MISTAKES = [  # (name, anchor, program): the programs are the tests' (tests/conformance/*.py)
    ("no-horizon-is-1", "001-alg8", "fake_program.py"),
    ("unit-coordinate", "001-alg1", "mistaken_program.py"),
    ("privtree-binary-scale", "001-alg5", "mistaken_program.py"),
    ("offline-default-fitter", "000-alg1", "mistaken_program.py"),
    ("tree-levels-above-64", "001-alg10", "mistaken_program.py"),
    ("privtree-depth-6", "001-alg5", "mistaken_program.py"),
    ("cumulative-step-40", "002-alg2", "mistaken_program.py"),
    ("tabular-step-20", "003-alg2", "mistaken_program.py"),
]


def run(name: str, anchor: str, program: str, seed: int, seconds: float) -> str:
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "r.json"
        command = [str(ROOT / ".venv" / "bin" / "dpstream"), "conform", "--mode", "differential", "--algorithm",
                   anchor, "--seed", str(seed), "--differential-seconds", str(seconds), "--differential-out",
                   str(Path(tmp) / "found"), "--json", str(report), "--", sys.executable, str(TESTS / program), name]
        subprocess.run(command, capture_output=True, check=False)
        outcome = next(o for o in json.loads(report.read_text())["outcomes"] if o["mode"] == "differential")
    d = outcome["details"]
    if outcome["verdict"] != "deviation":
        return f"| `{name}` | {anchor} | {seed} | {outcome['verdict']} | {d.get('cases')} cases | | | | |"
    case = d["minimal_case"]
    first = d["first_failing_case"]
    params = json.dumps(case.get("params"), sort_keys=True)
    shown = params if len(params) <= 60 else params[:57] + "..."
    return (f"| `{name}` | {anchor} | {seed} | {d['found_at_case']} ({d['found_after_seconds']:.1f} s) | "
            f"{first['steps']} | {d['shrink_runs']} ({d['shrink_seconds']:.1f} s) | {len(case.get('inputs', []))} | "
            f"`{shown}` | {'yes' if d['reproduced'] else 'NO'} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--only", nargs="+", default=None)
    args = parser.parse_args()
    print("| mistake | algorithm | seed | found at case (s) | first failing steps | shrink runs (s) | shrunk steps "
          "| shrunk params | reproduced |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, anchor, program in MISTAKES:
        if args.only and name not in args.only:
            continue
        for seed in args.seeds:
            print(run(name, anchor, program, seed, args.seconds), flush=True)


if __name__ == "__main__":
    main()
