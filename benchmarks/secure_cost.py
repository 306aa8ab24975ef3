"""Secure mode against the cost of its draws: ``python -m benchmarks.secure_cost [--families ...]``.

For one run of each family's workload it measures

* (a) the time in secure mode (:class:`~dpstream.noise.SecureNoise`, every OpenDP call logged: kind,
  parameter, vector length),
* (b) the time of the same OpenDP calls alone, replayed on zeros (the same measurements and lengths),
* (c) the time of the same run with the seeded source,

all in CPU seconds of this process (the machine is shared: CPU time is far less sensitive to other jobs
than wall time; the secure run's wall time is printed too)

(OpenDP is imported once before the first run, so no run pays for it), and prints (a)/(b) -- secure time
over the time of its draws -- and ((a) - (c))/(b) -- the overhead of secure
over seeded against the cost of the draws, which is what batching controls (once draws are batched, (b) is
small and the algorithm's own Python work, present in (c) too, dominates (a)). The tool uses only constructors
and ``step``, so it also measures an older checkout: ``PYTHONPATH=<old>/reference python -m benchmarks.secure_cost``.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Sequence

from benchmarks import workloads
from benchmarks.common import Config, LoggedSecureNoise
from dpstream.insecure import InsecureSeededNoise
from dpstream.noise import NoiseSource, SecureNoise

FAMILIES: dict[str, Callable[[], Config]] = {
    "counters (binary tree)": lambda: workloads.binary_tree(4096),
    "counters (multi-dimensional)": lambda: workloads.multidim(200),
    "phdstream": lambda: workloads.phdstream(20, 500, steps=40),
    "longitudinal": lambda: workloads.cumulative(2000),
    "hypercube": lambda: workloads.hypercube(2, 1000),
    "tabular (StreamingMWEM)": lambda: workloads.streaming_mwem(6),
    "tabular (003-alg3)": lambda: workloads.main_algorithm(5),
}


def _run(config: Config, noise: NoiseSource) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of one run."""
    alg = config.factory(noise)
    cpu, wall = time.process_time(), time.perf_counter()
    for x in config.inputs:
        alg.step(x)
    return time.process_time() - cpu, time.perf_counter() - wall


def measure(config: Config, seed: int = 0) -> dict[str, float]:
    """(a), (b), (c) in CPU seconds of this process (robust on a shared machine), the secure run's wall time,
    and the number of OpenDP calls and drawn values of one run."""
    seeded, _ = _run(config, InsecureSeededNoise(seed))
    secure_noise = LoggedSecureNoise()
    secure, secure_wall = _run(config, secure_noise)
    alone = secure_noise.opendp_alone(time.process_time)
    return {"secure": secure, "alone": alone, "seeded": seeded, "secure_wall": secure_wall,
            "calls": float(len(secure_noise.calls)), "values": float(secure_noise.elements()),
            "steps": float(len(config.inputs))}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--families", nargs="+", default=list(FAMILIES), choices=list(FAMILIES))
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    SecureNoise().add_laplace("warm-up", 0.0, 1.0)  # import OpenDP once, outside every measured run
    print("| family | workload | steps | OpenDP calls | values drawn | (c) seeded CPU s | (a) secure CPU s | "
          "(b) OpenDP alone CPU s | (a)/(b) | ((a)-(c))/(b) | secure wall s |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for name in args.families:
        config = FAMILIES[name]()
        m = measure(config, args.seed)
        ratio = m["secure"] / m["alone"] if m["alone"] > 0 else float("inf")
        over = (m["secure"] - m["seeded"]) / m["alone"] if m["alone"] > 0 else float("inf")
        print(f"| {name} | {config.label} | {m['steps']:.0f} | {m['calls']:.0f} | {m['values']:.0f} | "
              f"{m['seeded']:.2f} | {m['secure']:.2f} | {m['alone']:.3f} | {ratio:.2f} | {over:.2f} | "
              f"{m['secure_wall']:.2f} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
