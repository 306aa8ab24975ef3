"""Runs per second of a program through the harness's wire: ``Program.runs`` (the bulk op), the reply read and its
JSON decoded, as the statistical mode's sampler gets them (docs/conformance.md, "Compiled synthesizers, and the
harness's side"). The input is the statistical design's first stream of the entry's last quick setting (002-alg2:
the crowd of 400 individuals, T = 5).

    .venv/bin/python tools/wire_speed.py --algorithm 002-alg2 -- \\
        tests/conformance/outside_rust/cumulative/target/release/cumulative
"""

from __future__ import annotations

import argparse
import time

from dpstream.audit.registry import Profile
from dpstream.conformance.statistical import StatisticalPlan, horizon_of, plan_for
from dpstream.conformance.wire import Program


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--algorithm", default="002-alg2")
    parser.add_argument("--count", type=int, default=5000, help="runs per runs message")
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("command", nargs="+", help="the program (after --)")
    args = parser.parse_args()
    plan = plan_for(args.algorithm, Profile.QUICK)
    assert isinstance(plan, StatisticalPlan), plan
    params, space = plan.settings[-1], plan.spaces[-1]
    f = next(iter(space.families.values()))(horizon_of(plan.entry, params))
    with Program(args.command, timeout=60) as program:
        refused = program.init(args.algorithm, params, "own", 0)
        assert refused is None, refused
        began = time.perf_counter()
        runs = sum(len(program.runs(f, args.count).value) for _ in range(args.repeats))
        took = time.perf_counter() - began
    print(f"{args.algorithm} {params}: {runs} runs in {took:.2f} s, {runs / took:.0f} runs/s through the wire")


if __name__ == "__main__":
    main()
