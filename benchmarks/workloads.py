"""The benchmark workloads of every family: ``factory(noise)`` and its inputs, for a given size parameter.

Inputs are non-private synthetic data from ``dpstream.noise.data_rng`` (fixed seeds), except PHDStream, which
reads the authors' motion-circles stream shipped in ``data/motion_circles/`` (the setting of
``dpstream reproduce phdstream-circles``).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Any

from benchmarks.common import Config
from dpstream.counters import BinaryTreeCounter, MultiDimensionalCounter, SimpleCounter
from dpstream.experiments.data import materialized
from dpstream.experiments.phdstream_circles import DATA, STREAM
from dpstream.hypercube.online import OnlineSyntheticData
from dpstream.longitudinal.cumulative import CumulativeSynthesizer
from dpstream.noise import data_rng
from dpstream.phdstream.data import load_point_stream_csv
from dpstream.phdstream.efficient import EfficientPHDStream
from dpstream.phdstream.initialization import initialize_by_ratio
from dpstream.phdstream.partition import HypercubePartition
from dpstream.phdstream.stream import PointEvents
from dpstream.tabular.domain import Domain
from dpstream.tabular.main_algorithm import MainAlgorithm
from dpstream.tabular.queries import all_marginal_queries, all_workloads
from dpstream.tabular.stream import generate_stream
from dpstream.tabular.streaming_mwem import StreamingMWEM
from dpstream.tabular.totals import TotalRule

__all__ = ["binary_tree", "circles_batches", "cumulative", "hypercube", "main_algorithm", "multidim", "phdstream",
           "streaming_mwem"]


def binary_tree(T: int) -> Config:
    """001-alg10, eps = 1, horizon T, T steps of 0/1 inputs (one draw per step: nothing to batch)."""
    inputs = [float(v) for v in data_rng(1).integers(0, 2, size=T)]
    return Config("counters", f"binary tree T={T}", "T", T, lambda n: BinaryTreeCounter(1.0, T, noise=n), inputs)


def multidim(d: int, steps: int = 200) -> Config:
    """001-sec4.3 with d Simple counters (eps = 1): d independent draws per step."""
    inputs = [row.astype(float) for row in data_rng(2).integers(0, 3, size=(steps, d))]
    return Config("counters", f"multi-dimensional Simple d={d}", "d", d,
                  lambda n: MultiDimensionalCounter.build(lambda e, m: SimpleCounter(e, noise=m), d, 1.0, noise=n),
                  inputs)


@cache
def _circles_events() -> PointEvents:
    with materialized(DATA, None) as paths:
        return load_point_stream_csv(paths[STREAM]).as_events()


def circles_batches(batch: int, steps: int | None = None) -> list[PointEvents]:
    """The authors' motion-circles stream with deletion: t0 = 0.1, then batches of ``batch`` events."""
    batches = initialize_by_ratio(_circles_events(), 0.1, batch)
    return batches if steps is None else batches[:steps]


def phdstream(D: int = 20, batch: int = 500, steps: int | None = None, eps: float = 2.0, vary: str = "D") -> Config:
    """001-alg6/7 with Simple counters on the circles stream (the issue's setting: eps = 2, batch 500, D = 20);
    ``vary`` names the size parameter of the configuration ("D" or "batch")."""
    P = HypercubePartition(2, D)
    first = "" if steps is None else f" (first {steps} steps)"
    return Config("phdstream", f"PHDStream Alg 6/7 Simple D={D} batch={batch}{first}", vary,
                  D if vary == "D" else batch, lambda n: EfficientPHDStream(P, eps, 0.0, noise=n),
                  circles_batches(batch, steps))


def cumulative(n: int, T: int = 32) -> Config:
    """002-alg2 (tree-aggregation counters M_1..M_t, rho = 1) on n individuals, T rounds of random 0/1 columns."""
    columns = list(data_rng(3).integers(0, 2, size=(T, n)))
    return Config("longitudinal", f"cumulative n={n} T={T}", "n", n, lambda s: CumulativeSynthesizer(T, 1.0, noise=s),
                  columns)


def hypercube(d: int, points: int = 2000) -> Config:
    """004-alg1 (the line-by-line version), eps = 1, one uniform point of [0,1]^d per step."""
    data = list(data_rng(4).random((points, d)))
    return Config("hypercube", f"004-alg1 d={d} n={points}", "d", d,
                  lambda s: OnlineSyntheticData(1.0, d, noise=s, sample_times={points}), data)


def _tabular(p: int, T: int, batch: int) -> tuple[Domain, Sequence[Any]]:
    dom = Domain(tuple(f"a{i}" for i in range(p)), (3,) * p)
    return dom, generate_stream(dom, T, batch, seed=5, removal_rate=0.05)


def streaming_mwem(p: int, T: int = 20, k: int = 4, batch: int = 200) -> Config:
    """003-alg2 on all 2-way marginals of p ternary attributes (|Q| = p(p-1)/2), k selections per step."""
    dom, stream = _tabular(p, T, batch)
    Q = all_marginal_queries(dom, 2)
    return Config("tabular", f"StreamingMWEM |Q|={len(Q)}", "queries", len(Q),
                  lambda s: StreamingMWEM(dom, Q, k, 1.0, noise=s, total=TotalRule.public(batch)), stream)


def main_algorithm(p: int, T: int = 20, k: int = 2, batch: int = 200) -> Config:
    """003-alg3 with Simple counters on the 2-way workloads of p ternary attributes (vector counters)."""
    dom, stream = _tabular(p, T, batch)
    Q = all_workloads(dom, 2)
    return Config("tabular", f"003-alg3 workloads |Q|={len(Q)}", "queries", len(Q),
                  lambda s: MainAlgorithm(dom, Q, k, 1.0, noise=s, total=TotalRule.public(batch)), stream)
