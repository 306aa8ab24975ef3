"""Trials per minute of the audit samplers: 1 and 2 local worker processes and a Dask LocalCluster.

Run: ``.venv/bin/python benchmarks/audit_throughput.py [--runs N] [--line-runs N] [--no-dask]``.
A *trial* is one seeded run of a fresh counter over T = 16 inputs (16 releases). Measured:

* our binary tree counter (001-alg10), vectorised (``dpstream.audit.vectorised``, one noise matrix
  per chunk of 50000 runs);
* the line-by-line Simple counter (001-alg8) through ``FactorySampler`` (one mechanism object and one
  seeded noise source per run), the path an outside implementation takes;
* the vectorised binary tree counter through ``run_reduced`` (what the search's held-out split does: each worker
  samples a chunk and sends back event counts, not the rows).

Every configuration samples the same runs (chunks seeded from (seed, chunk index)), and the script checks
that the arrays are identical. Not a test: timings depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Executor

import numpy as np

from dpstream.audit.counters.models import binary_tree_counter_model
from dpstream.audit.sampler import FactorySampler, Sampler, run_reduced, run_trials, trial_executor
from dpstream.audit.vectorised import LinearModelSampler
from dpstream.counters import SimpleCounter
from dpstream.noise import NoiseSource

T = 16


def simple_counter(noise: NoiseSource) -> SimpleCounter:
    return SimpleCounter(1.0, noise=noise)


Collect = Callable[[Sampler, int, int, "Executor | None"], np.ndarray]
"""(sampler, runs, seed, executor) -> what comes back from the workers: the rows, or the event counts."""


def rows(sampler: Sampler, runs: int, seed: int, executor: Executor | None) -> np.ndarray:
    return run_trials(sampler, [1] * T, runs, seed, executor)


def over_two(R: np.ndarray) -> np.ndarray:
    """The reduction the held-out split does: how many runs contain an event (here r_t > 2, for every t)."""
    return np.asarray((R > 2.0).sum(axis=0))


def counts(sampler: Sampler, runs: int, seed: int, executor: Executor | None) -> np.ndarray:
    return run_reduced(sampler, [1] * T, runs, seed, over_two, executor)


def _timed(collect: Collect, sampler: Sampler, runs: int, executor: Executor | None) -> tuple[float, np.ndarray]:
    warm = 2 * int(getattr(sampler, "chunk", 2000))  # two chunks: every worker of a pair starts before timing
    collect(sampler, warm, 99, executor)
    start = time.perf_counter()
    out = collect(sampler, runs, 1, executor)
    return runs / (time.perf_counter() - start) * 60.0, out


def main() -> None:
    logging.getLogger("distributed").setLevel(logging.CRITICAL)  # shutdown chatter of the LocalCluster
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=4_000_000, help="vectorised trials per configuration")
    parser.add_argument("--line-runs", type=int, default=40_000, help="line-by-line trials per configuration")
    parser.add_argument("--no-dask", action="store_true")
    args = parser.parse_args()
    vectorised = LinearModelSampler(binary_tree_counter_model(1.0, T))
    # the last row is the held-out split: every worker samples and counts its chunks, and sends back counts only
    measured: list[tuple[str, Collect, Sampler, int, str]] = [
        ("binary tree, vectorised", rows, vectorised, args.runs, "rows"),
        ("Simple counter, line by line", rows, FactorySampler(simple_counter), args.line_runs, "rows"),
        ("binary tree, counted on worker", counts, vectorised, args.runs, "counts"),
    ]
    configs: list[tuple[str, Callable[[], contextlib.AbstractContextManager[Executor | None]]]] = [
        ("1 local worker", lambda: trial_executor(1)),
        ("2 local workers", lambda: trial_executor(2)),
    ]
    if not args.no_dask:
        configs.append(("Dask LocalCluster, 2 workers", _local_cluster))
    for name, collect, sampler, runs, what in measured:
        reference = None
        for label, make in configs:
            with make() as executor:
                rate, out = _timed(collect, sampler, runs, executor)
            same = "" if reference is None else (f" (identical {what})" if np.array_equal(out, reference)
                                                 else f" ({what.upper()} DIFFER)")
            reference = out if reference is None else reference
            print(f"{name:30s} {label:30s} {rate:12.3g} trials/min over {runs} trials{same}", flush=True)


@contextlib.contextmanager
def _local_cluster() -> Iterator[Executor]:
    """A 2-worker, 1-thread-each Dask LocalCluster and its executor."""
    from dask.distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,  # type: ignore[no-untyped-call]
                      dashboard_address=None) as cluster, Client(cluster) as client:  # type: ignore[no-untyped-call]
        yield client.get_executor()


if __name__ == "__main__":
    main()
