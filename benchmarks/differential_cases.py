"""How far the differential mode's fresh cases reach: the sizes its fuzzer draws at each size level.

    .venv/bin/python benchmarks/differential_cases.py [--anchor 001-alg5] [--per-level 200] [--seed 0]

For each size level 0, 0.25, 0.5, 0.75, 1 (the differential mode ramps from 0 to 1 over its first
:data:`dpstream.conformance.differential.RAMP_CASES` cases, docs/conformance.md "Differential checks"), draws
``--per-level`` fresh candidates of the entry's generator (:func:`dpstream.conformance.fuzz.materialize`, with the
swarm's features switched off at random) and prints the median and the largest of each size the coverage table
reports (:func:`dpstream.conformance.fuzz.size_buckets`: depth D, steps T, records n, fanout, domain |X|). Not a test:
a description of the generators' reach; no program runs and the reference does not run (some drawn cases it would
refuse).
"""

from __future__ import annotations

import argparse
import statistics

from dpstream.catalog import entry
from dpstream.conformance.fuzz import Candidate, materialize, size_buckets
from dpstream.noise import data_rng, derived_seed

LEVELS = (0.0, 0.25, 0.5, 0.75, 1.0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--anchor", default="001-alg5")
    parser.add_argument("--per-level", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    generator = entry(args.anchor).cases
    if generator is None:
        raise SystemExit(f"{args.anchor} draws no cases")
    rng = data_rng(derived_seed(args.seed, "benchmark", args.anchor))
    print(f"{args.anchor}: {args.per_level} fresh cases per size level (median / largest)")
    for level in LEVELS:
        sizes: dict[str, list[float]] = {}
        for _ in range(args.per_level):
            case, _ = materialize(generator, Candidate(level=level), rng)
            for name, value in size_buckets(case.params, case.inputs).items():
                sizes.setdefault(name, []).append(value)
        shown = ", ".join(f"{name} {statistics.median(v):g}/{max(v):g}" for name, v in sorted(sizes.items()))
        print(f"  level {level:<5} {shown}")


if __name__ == "__main__":
    main()
