"""Cost curves of the hypercube synthesizer: ``python -m benchmarks.hypercube [--out DIR]``.

Base: 004-alg1 as written line by line (eps = 1, d = 2, 1000 uniform points, output only at the last step),
time and peak memory per step against t. Sweep: d in {1, 3} (1000 points each). The efficient 004-alg1 is
benchmarked by its own helper's script; this one measures the reference version.
"""

from __future__ import annotations

from benchmarks import workloads
from benchmarks.common import run_family

if __name__ == "__main__":
    raise SystemExit(run_family(
        "hypercube", workloads.hypercube(2, 1000), [workloads.hypercube(d, 1000) for d in (1, 3)],
        "hypercube 004-alg1 (line by line, eps=1): per step; against d", None, __doc__))
