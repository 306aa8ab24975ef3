"""Cost curves of the longitudinal synthesizer: ``python -m benchmarks.longitudinal [--out DIR]``.

Base: 002-alg2 (cumulative, tree-aggregation counters, rho = 1, T = 32) on n = 2000 individuals, time and peak
memory per round against t (round t steps t counters). Sweep: n in {200, 2000, 20000}, seeded and secure.
"""

from __future__ import annotations

from benchmarks import workloads
from benchmarks.common import run_family

if __name__ == "__main__":
    raise SystemExit(run_family(
        "longitudinal", workloads.cumulative(2000), [workloads.cumulative(n) for n in (200, 20000)],
        "longitudinal 002-alg2 (T=32): per round; against n", None, __doc__))
