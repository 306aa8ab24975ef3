"""Per-step time of the naive PHDStream (001-alg3, all of V(T)) vs the compute-efficient one (001-alg6/7).

``python -m benchmarks.phdstream_efficient [--depths 4 6 8 10 12] [--n 4000] [--batch-size 200]``
runs both on the same concentric-circles stream with deletion (insecure seeded noise: timing only)
and prints, per maximum depth D: |V(T)|, the mean size of the selected subtree |T(t)|, and the
median wall-clock time per step of each. The naive algorithm's work grows with |V(T)| = 2^(D+1) - 1;
the efficient one's with |T(t)| (plus the bucketing of the batch, O(n_t D)).
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass

from dpstream.insecure import InsecureSeededNoise
from dpstream.phdstream.counters_tree import simple_counter_factory
from dpstream.phdstream.data import concentric_circles_stream
from dpstream.phdstream.efficient import EfficientPHDStream
from dpstream.phdstream.initialization import initialize_by_ratio
from dpstream.phdstream.partition import HypercubePartition
from dpstream.phdstream.phdstream import PHDStream
from dpstream.phdstream.stream import PointEvents

__all__ = ["BenchmarkRow", "benchmark", "main"]


@dataclass(frozen=True)
class BenchmarkRow:
    depth: int
    vertices: int
    mean_selected: float
    naive_ms: float | None
    efficient_ms: float
    steps: int


def _median_step_ms(alg: PHDStream | EfficientPHDStream, batches: Sequence[PointEvents]) -> tuple[float, float]:
    times, sizes = [], []
    for batch in batches:
        start = time.perf_counter()
        release = alg.step(batch)
        times.append((time.perf_counter() - start) * 1000.0)
        sizes.append(len(release.tree))
    return statistics.median(times), statistics.fmean(sizes)


def benchmark(depths: Sequence[int], n: int = 4000, batch_size: int = 200, epsilon: float = 1.0,
              seed: int = 0, naive_up_to: int = 12) -> list[BenchmarkRow]:
    """Time both algorithms on the same stream and the same seeded noise for every depth."""
    events = concentric_circles_stream(n, deletion=True, seed=seed).as_events()
    batches = initialize_by_ratio(events, 0.1, batch_size)
    rows = []
    for D in depths:
        P = HypercubePartition(2, D)
        eff_ms, selected = _median_step_ms(EfficientPHDStream(P, epsilon, 0.0, noise=InsecureSeededNoise(seed)),
                                           batches)
        naive_ms = None
        if naive_up_to >= D:
            naive = PHDStream(P, epsilon, 0.0, noise=InsecureSeededNoise(seed), counter=simple_counter_factory)
            naive_ms, _ = _median_step_ms(naive, batches)
        rows.append(BenchmarkRow(D, P.size(), selected, naive_ms, eff_ms, len(batches)))
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--depths", type=int, nargs="+", default=[4, 6, 8, 10, 12, 20])
    parser.add_argument("--n", type=int, default=4000, help="points of the circles stream (default 4000)")
    parser.add_argument("--batch-size", type=int, default=200)
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--naive-up-to", type=int, default=12, help="skip the naive algorithm above this depth")
    args = parser.parse_args(argv)
    rows = benchmark(args.depths, args.n, args.batch_size, args.epsilon, args.seed, args.naive_up_to)
    print("| D | vertices of T | mean |T(t)| | naive ms/step (median) | efficient ms/step (median) | steps |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        naive = "-" if r.naive_ms is None else f"{r.naive_ms:.2f}"
        print(f"| {r.depth} | {r.vertices} | {r.mean_selected:.1f} | {naive} | {r.efficient_ms:.2f} | {r.steps} |")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
