"""Cost curves of the counters: ``python -m benchmarks.counters [--out DIR]``.

Base: the binary tree counter (001-alg10, eps = 1, T = 4096), time and peak memory per step against t.
Sweep: the multi-dimensional counter of d Simple counters (001-sec4.3, 200 steps) against d, seeded and secure
(the d draws of a step are one OpenDP vector call in secure mode).
"""

from __future__ import annotations

from benchmarks import workloads
from benchmarks.common import run_family

if __name__ == "__main__":
    raise SystemExit(run_family(
        "counters", workloads.binary_tree(4096), [workloads.multidim(d) for d in (1, 10, 100, 1000)],
        "counters: binary tree (T=4096) per step; multi-dimensional Simple against d", None, __doc__))
