"""How varied the differential mode's fresh cases are: one run of Hypothesis per case, against one long run.

    .venv/bin/python benchmarks/differential_cases.py [--anchor 001-alg10] [--param T] [--cases 100] [--seeds 0 1]

Prints, for the first parameter of the entry's cases (default: 001-alg10's horizon T), how many distinct values
``--cases`` fresh cases hold and how often the largest edges (T = 65 or 129) appear, (a) as the differential mode
draws them (:func:`dpstream.conformance.differential.fresh_cases`: the random example of its own seeded run of two
examples, per case) and (b) from one Hypothesis run of ``--cases`` examples, which copies parts of earlier examples
into later ones after its first ten (docs/conformance.md, "Differential checks"). Not a test: a description of the
generators' spread; no program runs.
"""

from __future__ import annotations

import argparse
from collections import Counter
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as hypothesis_seed

from dpstream.catalog.cases import Case
from dpstream.conformance.differential import fixed_generation, fresh_cases, run_seed
from dpstream.testing.strategies import catalog_cases

LARGE = (65, 129)


def one_long_run(anchor: str, seed: int, count: int) -> list[Case]:
    drawn: list[Case] = []

    @settings(database=None, max_examples=count, deadline=None, phases=(Phase.generate,),
              suppress_health_check=list(HealthCheck))
    @hypothesis_seed(run_seed(seed, anchor, 0))
    @given(catalog_cases(anchor))
    def collect(case: Case) -> None:
        drawn.append(case)

    with fixed_generation():
        collect()
    return drawn


def describe(label: str, values: list[Any]) -> None:
    counts = Counter(values)
    large = sum(counts[v] for v in LARGE)
    print(f"{label}: {len(values)} cases, {len(counts)} distinct values, {large} with a value in {list(LARGE)}; "
          f"most common {counts.most_common(3)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--anchor", default="001-alg10")
    parser.add_argument("--param", default="T")
    parser.add_argument("--cases", type=int, default=100)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    args = parser.parse_args()
    for seed in args.seeds:
        per_case = [case.params.get(args.param) for case, _ in fresh_cases(args.anchor, seed, args.cases)]
        long_run = [case.params.get(args.param) for case in one_long_run(args.anchor, seed, args.cases)]
        print(f"{args.anchor}, parameter {args.param}, seed {seed}")
        describe("  one run per case (the differential mode)", per_case)
        describe("  one long run", long_run)


if __name__ == "__main__":
    main()
