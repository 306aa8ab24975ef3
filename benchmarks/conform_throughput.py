"""Runs per minute through the conformance protocol (issue: >= 10^5 counter runs, T = 16, per minute on 2 cores).

    .venv/bin/python benchmarks/conform_throughput.py [--runs N] [--workers 1 2]

Measures :class:`dpstream.conformance.statistical.ProtocolSampler` (what ``dpstream conform --mode statistical``
uses) on 001-alg8 with T = 16, for the programs below, with the runs split over 1 and 2 local worker processes
(:func:`dpstream.audit.sampler.run_trials`). Every program is started once per worker; the time includes JSON
encoding and decoding on both sides. Not a test: timings depend on the machine and its load.

* the C example (``examples/conformance/c/build/counters``, built with ``make -C examples/conformance/c``),
  ``run`` messages written ahead of the answers;
* the Python example (``examples/conformance/python/simple_counter.py``), ``run`` messages;
* the reference (``dpstream serve``), ``run`` messages, and with the optional bulk op ``runs``.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import time
from pathlib import Path

from dpstream.audit.sampler import run_trials, trial_executor
from dpstream.conformance.statistical import ProtocolSampler

ROOT = Path(__file__).resolve().parents[1]
C_DIR = ROOT / "examples" / "conformance" / "c"
PARAMS = {"epsilon": 1.0, "T": 16}
INPUTS = [1, 0] * 8


def programs() -> list[tuple[str, list[str], bool]]:
    out: list[tuple[str, list[str], bool]] = []
    if shutil.which("make") and subprocess.run(["make", "-s", "-C", str(C_DIR)], capture_output=True).returncode == 0:
        out.append(("C example, run messages", [str(C_DIR / "build" / "counters")], False))
    out.append(("Python example, run messages",
                [sys.executable, str(ROOT / "examples" / "conformance" / "python" / "simple_counter.py")], False))
    serve = [sys.executable, "-m", "dpstream.cli", "serve"]
    out.append(("dpstream serve, run messages", serve, False))
    out.append(("dpstream serve, bulk op 'runs'", serve, True))
    return out


def measure(command: list[str], bulk: bool, runs: int, workers: int) -> float:
    sampler = ProtocolSampler(command, "001-alg8", PARAMS, timeout=60.0, bulk=bulk)
    with trial_executor(workers) as executor:
        run_trials(sampler, INPUTS, min(runs, 2 * sampler.chunk * workers), 1, executor)  # warm-up: start programs
        started = time.perf_counter()
        rows = run_trials(sampler, INPUTS, runs, 2, executor)
        seconds = time.perf_counter() - started
    assert rows.shape == (runs, len(INPUTS))
    return runs / seconds * 60.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=100_000, help="runs per measurement (default 100000)")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2], help="worker counts (default 1 2)")
    args = parser.parse_args()
    print(f"001-alg8, T = {len(INPUTS)}, {args.runs} runs per measurement")
    print(f"{'program':<36}" + "".join(f"{f'{w} worker(s)':>18}" for w in args.workers))
    for name, command, bulk in programs():
        rates = [measure(command, bulk, args.runs, w) for w in args.workers]
        print(f"{name:<36}" + "".join(f"{r:>13.3g}/min" for r in rates))
    return 0


if __name__ == "__main__":
    sys.exit(main())
