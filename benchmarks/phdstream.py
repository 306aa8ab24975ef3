"""Cost curves of PHDStream: ``python -m benchmarks.phdstream [--out DIR]``.

Base: the compute-efficient PHDStream (001-alg6/7, Simple counters, eps = 2, theta = 0) on the authors'
motion-circles stream (t0 = 0.1, batch 500, D = 20), time and peak memory per step against t. Sweeps: depth
D in {6, 10, 14, 20} and batch size in {100, 500, 2000} (first 40 steps each), seeded and secure.
"""

from __future__ import annotations

from benchmarks import workloads
from benchmarks.common import run_family

if __name__ == "__main__":
    sweep = [workloads.phdstream(D, 500, steps=40) for D in (6, 10, 14, 20)]
    sweep += [workloads.phdstream(20, b, steps=40, vary="batch") for b in (100, 2000)]
    raise SystemExit(run_family(
        "phdstream", workloads.phdstream(20, 500), sweep,
        "PHDStream Alg 6/7 (Simple, eps=2) on the circles stream: per step; against D and batch size", None, __doc__))
