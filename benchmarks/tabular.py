"""Cost curves of the tabular algorithms: ``python -m benchmarks.tabular [--out DIR]``.

Base: StreamingMWEM (003-alg2, k = 4, eps = 1) on all 2-way marginals of p = 6 ternary attributes, 20 steps of
200 records, time and peak memory per step against t. Sweep against the number of queries: StreamingMWEM
with p in {4, 8} and 003-alg3 (2-way workloads, vector counters, k = 2) with p in {4, 5, 6}, seeded and secure.
"""

from __future__ import annotations

from benchmarks import workloads
from benchmarks.common import run_family

if __name__ == "__main__":
    sweep = [workloads.streaming_mwem(p) for p in (4, 8)] + [workloads.main_algorithm(p) for p in (4, 5, 6)]
    raise SystemExit(run_family(
        "tabular", workloads.streaming_mwem(6), sweep,
        "tabular: StreamingMWEM per step; StreamingMWEM and 003-alg3 against the number of queries", None, __doc__))
