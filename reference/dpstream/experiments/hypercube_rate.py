"""``dpstream reproduce hypercube-rate``: the W_1 rate of online synthetic data (004-thm1.1).

Runs 004-alg1 on uniform and clustered streams in d = 1, 2, 3 and measures W_1 (l_inf ground metric)
between the true and the synthetic empirical measures at a grid of times. 004-thm1.1 states the rate
only up to unknown constants, so its *shape* is checked:

* d >= 2: E W_1 (eps t)^{1/d} / log t should stay bounded; the fitted exponent of E W_1 against t
  is compared with -1/d;
* d = 1: E W_1 eps t / (log^3(eps t) log^1.5 t) should stay bounded (exponent -1 up to logs).

Three values per release (``runs.csv``):

* ``w1``: the exact W_1 (assignment problem; sorted samples for d = 1), computed when d = 1 or
  t <= ``--exact-max`` (default 4096: O(t^3) time and a t x t matrix), NaN otherwise;
* ``w1_upper``: the deterministic form of 004-lem4.2 that the proof of 004-thm1.1 uses, an upper bound
  on W_1 for every run (:func:`~dpstream.hypercube.wasserstein.partition_transport_bound` at the
  release's depth r, from the consistent counts and the true counts);
* ``w1_matching``: the cost of an explicit coupling, an upper bound on W_1 that is much closer to it
  (:func:`~dpstream.hypercube.wasserstein.dyadic_matching_cost`: points matched bottom-up in the binary
  partition, finest depth floor(log2 t) + 1 + 2d);
* ``w1_lower``: the largest exact W_1 of the coordinate marginals, a lower bound (each projection
  x -> x_c is 1-Lipschitz for l_inf, and W_1 does not grow under 1-Lipschitz maps).

Implementations (``--implementation``): ``line-by-line`` (OnlineSyntheticData: every counter at every t),
``efficient`` (EfficientOnlineSyntheticData with the printed tests: the same releases under one tape, the
same Theta(eps t^2) draws), ``geometric`` (EfficientOnlineSyntheticData with 004-alg2's tests drawn as
first-failure times: equal in law, O(t log t + eps t) operations; the only one that reaches t = 2^17).
``auto`` (default) is line-by-line up to t = 4096 and geometric above.

It also times every step (CPU time) and fits the exponent of the per-step time against t, to compare with
the O(d t + eps t log t) of 004-sec7 (a cost per *release*; the efficient versions release only at the grid
times, so their per-step time is not that quantity); it counts the region-counter operations of every run
(``operations`` in ``rates.json``). The plot shows E W_1 (and the bounds) against t on log-log axes with the
theorem's shape log(t)(eps t)^{-1/d} drawn with constant 1 (004-thm1.1 states no constant; it holds for
t >= C_eps of 004-rem1.2, marked) and the offline shape (eps t)^{-1/d} anchored at the data.

NOISE: the runs use ``InsecureSeededNoise`` (``--seed``): an insecure, reproducible source for a
*simulation*; nothing produced here may be released as private data.

Grids: the reduced default (t from 5 to 500, two orders of magnitude, two runs per configuration);
``--full`` runs t from 5 to 2000 with three runs per configuration; ``--scale`` runs t to 2^17 = 131072
with three runs, sampling the *last* time of every level, t_{r+1} - 1 (where the in-level counts lag
most), plus t_max (measured times: docs/hypercube.md). Outputs in ``--out``: ``runs.csv`` (every run and
release), ``summary.csv`` (means, normalised ratios), ``summary.md``, ``rates.json`` (fitted exponents)
and ``hypercube_rate.png``.
"""

from __future__ import annotations

import argparse
import csv
import gc
import itertools
import json
import math
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

import numpy as np

from dpstream.cli_args import int_in, non_negative_int, positive_float, positive_int
from dpstream.counters.sparse import level_start, sparse_threshold
from dpstream.errors import DPStreamInputError, require_int_at_least, require_positive_finite
from dpstream.experiments import Experiment, command_line, noise_mode
from dpstream.experiments.progress import progress
from dpstream.hypercube.efficient import EfficientOnlineSyntheticData, SparseForm
from dpstream.hypercube.online import HypercubeRelease, OnlineSyntheticData
from dpstream.hypercube.partition import BinaryPartition
from dpstream.hypercube.schedule import PrivacySchedule
from dpstream.hypercube.streams import StreamKind, make_stream
from dpstream.hypercube.wasserstein import (
    dyadic_matching_cost,
    partition_transport_bound,
    wasserstein1,
    wasserstein1_sorted,
)
from dpstream.insecure import InsecureSeededNoise
from dpstream.noise import derived_seed

__all__ = [
    "EXPERIMENT",
    "Implementation",
    "RateGrid",
    "activation_level",
    "c_epsilon",
    "fit_exponent",
    "marginal_lower_bound",
    "normalised_ratio",
    "offline_shape",
    "theorem_shape",
]


class Implementation(StrEnum):
    AUTO = "auto"
    LINE_BY_LINE = "line-by-line"
    EFFICIENT = "efficient"
    GEOMETRIC = "geometric"


AUTO_LINE_BY_LINE_MAX = 4096
"""``auto`` runs the line-by-line version up to this t_max and the geometric form above."""


@dataclass(frozen=True)
class RateGrid:
    """The times at which W_1 is measured, and how many runs per (stream, d).

    ``level_ends``: sample t_{r+1} - 1 for every level ending in [t_min, t_max], and t_max, instead of
    ``points`` geometrically spaced times.
    """

    t_min: int
    t_max: int
    points: int
    runs: int
    epsilon: float
    dims: tuple[int, ...] = (1, 2, 3)
    streams: tuple[StreamKind, ...] = (StreamKind.UNIFORM, StreamKind.CLUSTERED)
    level_ends: bool = False

    @property
    def times(self) -> list[int]:
        if self.level_ends:
            ends = {level_start(r + 1, self.epsilon) - 1 for r in range(0, 64)}
            return sorted({t for t in ends if self.t_min <= t <= self.t_max} | {self.t_max})
        grid = np.unique(np.round(np.geomspace(self.t_min, self.t_max, self.points)).astype(int))
        return [int(t) for t in grid]

    def is_level_end(self, t: int) -> bool:
        r = 0
        while level_start(r + 1, self.epsilon) <= t:
            r += 1
        return t == level_start(r + 1, self.epsilon) - 1


REDUCED = RateGrid(t_min=5, t_max=500, points=9, runs=2, epsilon=1.0)
FULL = RateGrid(t_min=5, t_max=2000, points=12, runs=3, epsilon=1.0)
SCALE = RateGrid(t_min=60, t_max=2**17, points=0, runs=3, epsilon=1.0, dims=(2, 3), level_ends=True)


def theorem_shape(t: np.ndarray, d: int, epsilon: float) -> np.ndarray:
    """log(t) (eps t)^{-1/d} for d >= 2; log^3(eps t) log^1.5(t) / (eps t) for d = 1 (004-thm1.1)."""
    t = np.asarray(t, dtype=np.float64)
    if d >= 2:
        return np.asarray(np.log(t) * (epsilon * t) ** (-1.0 / d))
    return np.asarray(np.log(epsilon * t) ** 3 * np.log(t) ** 1.5 / (epsilon * t))


def offline_shape(t: np.ndarray, d: int, epsilon: float) -> np.ndarray:
    """(eps t)^{-1/d}: the offline minimax rate up to logarithmic factors (004 section 1.3)."""
    return np.asarray((epsilon * np.asarray(t, dtype=np.float64)) ** (-1.0 / d))


def normalised_ratio(w1: np.ndarray, t: np.ndarray, d: int, epsilon: float) -> np.ndarray:
    """E W_1 divided by the theorem's shape: bounded if 004-thm1.1's rate holds."""
    return np.asarray(np.asarray(w1, dtype=np.float64) / theorem_shape(t, d, epsilon))


def c_epsilon(epsilon: float, d: int) -> float:
    """C_eps of 004-rem1.2: exp(log^2(1/eps + 1)) + e/eps (d >= 2), e/eps (d = 1); 004-thm1.1 needs t >= C_eps."""
    epsilon = require_positive_finite("epsilon", epsilon)
    d = require_int_at_least("d", d, 1)
    return math.exp(math.log(1.0 / epsilon + 1.0) ** 2) + math.e / epsilon if d >= 2 else math.e / epsilon


def activation_level(epsilon: float, d: int, max_level: int = 60) -> tuple[int, int]:
    """(r, t_r): the first level r at which some region's count during the level, for uniform data,
    (t_{r+1} - t_r) 2^{-j}, reaches its sparse counter's threshold T_0 = 9 log(t_{r+1} - t_r) / (eps_{j,r}/2).

    Before t_r no 004-alg2 segment of any region is expected to end, so every in-level output c_t is 0
    and the released counts are the end-of-level sums S~ of 004-alg3 (they lag the data by up to a level).
    """
    schedule = PrivacySchedule(require_positive_finite("epsilon", epsilon), require_int_at_least("d", d, 1))
    for r in range(1, max_level + 1):
        horizon = level_start(r + 1, epsilon) - level_start(r, epsilon)
        if horizon < 2:
            continue
        if any(horizon * 2.0**-j >= sparse_threshold(schedule(j, r) / 2.0, horizon)
               for j in range(1, r + 1) if schedule.r0(j) <= r):
            return r, level_start(r, epsilon)
    raise DPStreamInputError("max_level", "no level up to max_level activates sparse counting", max_level)


def fit_exponent(t: Sequence[float], y: Sequence[float]) -> float:
    """Least-squares slope of log y against log t."""
    lt, ly = np.log(np.asarray(t, dtype=np.float64)), np.log(np.asarray(y, dtype=np.float64))
    return float(np.polyfit(lt, ly, 1)[0])


def marginal_lower_bound(x: np.ndarray, y: np.ndarray) -> float:
    """max_c W_1(x_c, y_c) <= W_1(mu_X, mu_Y) under l_inf: the projections are 1-Lipschitz (exact, by sorting)."""
    return max(wasserstein1_sorted(x[:, c], y[:, c]) for c in range(x.shape[1]))


def _progress(total: int) -> Any:
    return progress(total, "hypercube-rate", "online runs of 004-alg1 (streams x d x runs, each up to t_max), noise: "
                    "insecure seeded")


def resolve(implementation: Implementation, grid: RateGrid) -> Implementation:
    if implementation is Implementation.AUTO:
        return Implementation.LINE_BY_LINE if grid.t_max <= AUTO_LINE_BY_LINE_MAX else Implementation.GEOMETRIC
    return implementation


def make_algorithm(implementation: Implementation, grid: RateGrid, d: int, noise: InsecureSeededNoise,
                   ) -> OnlineSyntheticData | EfficientOnlineSyntheticData:
    times = grid.times
    if implementation is Implementation.LINE_BY_LINE:
        return OnlineSyntheticData(grid.epsilon, d, noise=noise, sample_times=times)
    form = SparseForm.GEOMETRIC if implementation is Implementation.GEOMETRIC else SparseForm.PRINTED
    return EfficientOnlineSyntheticData(grid.epsilon, d, noise=noise, sample_times=times, sparse_form=form)


def measure(release: HypercubeRelease, data: np.ndarray, partition: BinaryPartition,
            exact_max: int) -> dict[str, float]:
    """Exact W_1 (NaN above ``exact_max`` for d >= 2), the 004-lem4.2 and matching upper bounds, the marginal
    lower bound."""
    assert release.points is not None
    x = data[:release.t]
    exact = math.nan
    if x.shape[1] == 1 or release.t <= exact_max:
        exact = wasserstein1(x, release.points)
    finest = release.t.bit_length() + 2 * partition.d
    return {"w1": exact, "w1_upper": partition_transport_bound(x, release.consistent, partition),
            "w1_matching": dyadic_matching_cost(x, release.points, partition, min(finest, 62)),
            "w1_lower": marginal_lower_bound(x, release.points)}


def run_one(kind: StreamKind, d: int, rep: int, grid: RateGrid, seed: int, implementation: Implementation,
            exact_max: int, bar: Any = None) -> tuple[list[dict[str, Any]], list[float], int]:
    """One online run up to t_max: W_1 and its bounds at the grid times, the CPU time of every step, operations."""
    data = make_stream(kind, grid.t_max, d, seed=derived_seed(seed, "data", kind.value, d, rep))
    noise = InsecureSeededNoise(derived_seed(seed, "noise", kind.value, d, rep))  # INSECURE: simulation only
    algorithm = make_algorithm(implementation, grid, d, noise)
    rows: list[dict[str, Any]] = []
    step_seconds: list[float] = []
    for t, x in enumerate(data, start=1):
        start = time.process_time()  # CPU time of this process: robust to other load on the machine
        release = algorithm.step(x)
        step_seconds.append(time.process_time() - start)
        if release is not None and release.points is not None:
            rows.append({"stream": kind.value, "d": d, "rep": rep, "t": t, "epsilon": grid.epsilon,
                         "depth": release.depth, "level_end": grid.is_level_end(t),
                         "implementation": implementation.value,
                         **measure(release, data, algorithm.partition, exact_max),
                         "step_seconds": step_seconds[-1]})
        if bar is not None:
            bar.update(1)
    return rows, step_seconds, algorithm.operations


def _fit_rows(grid: RateGrid, ts: list[int], fit_from: int) -> list[int]:
    """Indices of the times used by the fits: t >= fit_from, and only level ends on a level-end grid."""
    return [i for i, t in enumerate(ts) if t >= fit_from and (not grid.level_ends or grid.is_level_end(t))]


def summarise(rows: Sequence[dict[str, Any]], grid: RateGrid,
              fit_from: int = 0) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    summary: list[dict[str, Any]] = []
    rates: dict[str, Any] = {}
    for kind in grid.streams:
        for d in grid.dims:
            sel = [r for r in rows if r["stream"] == kind.value and r["d"] == d]
            ts = sorted({int(r["t"]) for r in sel})
            stats: dict[str, list[float]] = {k: [] for k in ("mean_w1", "sem_w1", "mean_upper", "mean_matching",
                                                             "mean_lower")}
            for t in ts:
                at = [r for r in sel if r["t"] == t]
                w = np.array([r["w1"] for r in at], dtype=np.float64)
                stats["mean_w1"].append(float(w.mean()))
                stats["sem_w1"].append(float(w.std(ddof=1) / math.sqrt(w.size)) if w.size > 1 else math.nan)
                stats["mean_upper"].append(float(np.mean([r["w1_upper"] for r in at])))
                stats["mean_matching"].append(float(np.mean([r["w1_matching"] for r in at])))
                stats["mean_lower"].append(float(np.mean([r["w1_lower"] for r in at])))
            ratio = normalised_ratio(np.array(stats["mean_w1"]), np.array(ts), d, grid.epsilon)
            ratio_upper = normalised_ratio(np.array(stats["mean_upper"]), np.array(ts), d, grid.epsilon)
            for i, t in enumerate(ts):
                summary.append({"stream": kind.value, "d": d, "t": t, "level_end": grid.is_level_end(t),
                                "mean_w1": stats["mean_w1"][i], "sem_w1": stats["sem_w1"][i],
                                "mean_w1_upper": stats["mean_upper"][i], "mean_w1_matching": stats["mean_matching"][i],
                                "mean_w1_lower": stats["mean_lower"][i],
                                "normalised_ratio": float(ratio[i]), "normalised_ratio_upper": float(ratio_upper[i])})
            fit = _fit_rows(grid, ts, fit_from)
            fit_t = [ts[i] for i in fit]
            exact = [i for i in fit if math.isfinite(stats["mean_w1"][i])]
            entry: dict[str, Any] = {
                "target_exponent": -1.0 / d, "fit_t_range": [fit_t[0], fit_t[-1]] if fit_t else [],
                "theorem_shape_exponent": fit_exponent(fit_t, list(theorem_shape(np.array(fit_t), d, grid.epsilon)))
                if len(fit_t) > 1 else math.nan,
                "upper_bound_exponent": fit_exponent(fit_t, [stats["mean_upper"][i] for i in fit])
                if len(fit) > 1 else math.nan,
                "matching_bound_exponent": fit_exponent(fit_t, [stats["mean_matching"][i] for i in fit])
                if len(fit) > 1 else math.nan,
                "lower_bound_exponent": fit_exponent(fit_t, [stats["mean_lower"][i] for i in fit])
                if len(fit) > 1 else math.nan,
                "fitted_exponent": fit_exponent([ts[i] for i in exact], [stats["mean_w1"][i] for i in exact])
                if len(exact) > 1 else math.nan,
                "exact_t_range": [ts[exact[0]], ts[exact[-1]]] if exact else [],
                "upper_minus_exact_min": min((r["w1_upper"] - r["w1"] for r in sel if math.isfinite(r["w1"])),
                                             default=math.nan),
                "matching_minus_exact_min": min((r["w1_matching"] - r["w1"] for r in sel if math.isfinite(r["w1"])),
                                                default=math.nan),
                "matching_over_exact_max": max((r["w1_matching"] / r["w1"] for r in sel
                                                if math.isfinite(r["w1"]) and r["w1"] > 0), default=math.nan),
                "exact_minus_lower_min": min((r["w1"] - r["w1_lower"] for r in sel if math.isfinite(r["w1"])),
                                             default=math.nan),
            }
            finite = [q for q in ratio if math.isfinite(q)]
            if finite:
                entry.update({"ratio_min": float(min(finite)), "ratio_max": float(max(finite)),
                              "ratio_last_over_first": float(finite[-1] / finite[0])})
            entry.update({"upper_ratio_min": float(ratio_upper.min()), "upper_ratio_max": float(ratio_upper.max())})
            rates[f"{kind.value} d={d}"] = entry
    return summary, rates


def step_time_exponents(step_seconds: dict[str, list[float]], grid: RateGrid) -> dict[str, Any]:
    """Fitted exponent of the per-step time against t (medians over blocks of t), vs O(d t + eps t log t)."""
    out: dict[str, Any] = {}
    for key, secs in step_seconds.items():
        d = int(key.split("d=")[1])
        s = np.asarray(secs)
        edges = np.unique(np.round(np.geomspace(max(16, grid.t_max // 16), grid.t_max, 9)).astype(int))
        tb, yb = [], []
        for lo, hi in itertools.pairwise(edges):
            tb.append(math.sqrt(lo * hi))
            yb.append(max(float(np.median(s[lo - 1:hi - 1])), 1e-9))
        theory = [d * t + grid.epsilon * t * math.log(t) for t in tb]
        out[key] = {"fitted_exponent": fit_exponent(tb, yb), "theory_exponent": fit_exponent(tb, theory),
                    "t_range": [int(edges[0]), int(edges[-1])], "median_seconds_last_block": yb[-1],
                    "total_seconds": float(s.sum())}
    return out


def plot(summary: Sequence[dict[str, Any]], rates: dict[str, Any], grid: RateGrid, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(grid.dims), figsize=(max(8.0, 5.6 * len(grid.dims)), 6.4), squeeze=False)
    measures = (("mean_w1", "-", "E W1 exact", "fitted_exponent"),
                ("mean_w1_upper", "--", "E 004-lem4.2 bound", "upper_bound_exponent"),
                ("mean_w1_matching", "-.", "E matching bound", "matching_bound_exponent"),
                ("mean_w1_lower", ":", "E marginal lower bound", "lower_bound_exponent"))
    for ax, d in zip(axes[0], grid.dims, strict=True):
        anchor: tuple[float, float] | None = None
        for kind, marker, colour in zip(grid.streams, ("o", "s"), ("C0", "C1"), strict=False):
            sel = [r for r in summary if r["stream"] == kind.value and r["d"] == d]
            line = [r for r in sel if not grid.level_ends or r["level_end"]]  # other times: separate markers
            rest = [r for r in sel if r not in line]
            rate = rates[f"{kind.value} d={d}"]
            for key, style, label, fit in measures:
                y = np.array([r[key] for r in line], dtype=np.float64)
                if not np.isfinite(y).any():
                    continue
                t = np.array([r["t"] for r in line], dtype=np.float64)
                ax.loglog(t, y, marker=marker, ls=style, color=colour, mfc=colour if style == "-" else "none",
                          ms=5 if style != ":" else 3, label=f"{label}, {kind.value} (fit {rate[fit]:+.2f})")
                if rest:
                    ax.loglog([r["t"] for r in rest], [r[key] for r in rest], marker="*", ls="none", color=colour,
                              ms=7 if style != ":" else 4)
            if anchor is None:
                last = line[-1]
                anchor = (float(last["t"]), float(last["mean_w1_matching"]))
        ref = [r for r in summary if r["stream"] == grid.streams[0].value and r["d"] == d]
        t = np.array([r["t"] for r in ref], dtype=np.float64)
        ax.loglog(t, theorem_shape(t, d, grid.epsilon), "-", color="gray", lw=2, alpha=0.6,
                  label="004-thm1.1 shape, constant 1" + (": log t (eps t)^(-1/d)" if d >= 2 else ""))
        if anchor is not None:
            y = offline_shape(t, d, grid.epsilon)
            ax.loglog(t, y * anchor[1] / float(offline_shape(np.array([anchor[0]]), d, grid.epsilon)[0]), ":",
                      color="black", label=f"slope -1/d = {-1.0 / d:+.2f} (through the last matching bound)")
        ax.axvline(c_epsilon(grid.epsilon, d), color="gray", lw=0.8, ls="-.", label="C_eps (004-rem1.2)")
        ax.set_title(f"d = {d}, eps = {grid.epsilon:g}" + (" (stars: t_max, not a level end)" if grid.level_ends
                                                          else ""))
        ax.set_xlabel("t")
        ax.set_ylabel("W1 (l_inf)")
        ax.legend(fontsize=6.5, loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=2)
    fig.suptitle("Online DP synthetic data (004-alg1), INSECURE seeded noise (simulation)", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def markdown(rates: dict[str, Any], timing: dict[str, Any], operations: dict[str, int], grid: RateGrid,
             implementation: Implementation) -> str:
    lines = [f"# hypercube-rate ({implementation.value}, eps = {grid.epsilon:g}, {grid.runs} runs, "
             f"t = {grid.times[0]} .. {grid.t_max}; INSECURE seeded noise: a simulation)", "",
             "Exponents of E[.] against t (least squares on log-log); 004-thm1.1: E W1 <~ log(t) (eps t)^(-1/d) "
             "for t >= C_eps (004-rem1.2), no constant stated.", "",
             "| stream, d | fit range | E W1 exact | E 004-lem4.2 upper bound | E matching upper bound | "
             "E marginal lower bound | -1/d | theorem shape | lem4.2 - exact (min) | matching / exact (max) | "
             "CPU s (run 0) | operations (run 0) |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for key, r in rates.items():
        exact = f"{r['fitted_exponent']:+.3f} on {r['exact_t_range']}" if r["exact_t_range"] else "n/a"
        lines.append(f"| {key} | {r['fit_t_range']} | {exact} | {r['upper_bound_exponent']:+.3f} | "
                     f"{r['matching_bound_exponent']:+.3f} | {r['lower_bound_exponent']:+.3f} | "
                     f"{r['target_exponent']:+.3f} | {r['theorem_shape_exponent']:+.3f} | "
                     f"{r['upper_minus_exact_min']:.3g} | {r['matching_over_exact_max']:.3g} | "
                     f"{timing[key]['total_seconds']:.1f} | {operations[key]} |")
    lines.append("")
    for d in grid.dims:
        level, t_level = activation_level(grid.epsilon, d)
        lines.append(f"- d={d}: C_eps = {c_epsilon(grid.epsilon, d):.2f}; sparse counting first expected to end a "
                     f"segment at level {level} (t = {t_level})")
    return "\n".join(lines) + "\n"


MAX_T = 2**24
"""Largest --t-max: every run holds its stream of t_max points and steps through all of them (2^17 for --scale)."""
MAX_D = 64
"""Largest dimension (the grid's own are 1, 2, 3)."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--seed", type=non_negative_int, default=0,
                        help="seed of the INSECURE simulation noise and of the data (default 0)")
    preset = parser.add_mutually_exclusive_group()
    preset.add_argument("--full", action="store_true",
                        help="the full grid (t from 5 to 2000, 3 runs per configuration)")
    preset.add_argument("--scale", action="store_true",
                        help="t to 2^17 at the level ends, 3 runs, d = 2 and 3 (geometric form)")
    parser.add_argument("--runs", type=positive_int, default=None, help="runs per (stream, d) (overrides the grid)")
    parser.add_argument("--t-max", type=int_in(1, MAX_T), default=None,
                        help=f"largest t, at most {MAX_T} (the stream is held in memory; overrides the grid)")
    parser.add_argument("--t-min", type=int_in(1, MAX_T), default=None, help="smallest grid time (overrides the grid)")
    parser.add_argument("--epsilon", type=positive_float, default=None, help="privacy budget (default 1)")
    parser.add_argument("--dims", type=int_in(1, MAX_D), nargs="+", default=None,
                        help=f"dimensions, each at most {MAX_D} (default 1 2 3)")
    parser.add_argument("--streams", nargs="+", choices=[s.value for s in StreamKind], default=None,
                        help="streams (default uniform clustered)")
    parser.add_argument("--implementation", choices=[i.value for i in Implementation], default="auto",
                        help=f"004-alg1 version (auto: line-by-line up to t = {AUTO_LINE_BY_LINE_MAX}, "
                             "geometric above)")
    parser.add_argument("--exact-max", type=non_negative_int, default=4096,
                        help="largest t with the exact W1 for d >= 2 (O(t^3) time, t^2 memory; default 4096)")
    parser.add_argument("--fit-from", type=non_negative_int, default=0,
                        help="fit the exponents on t >= this (default: all)")
    parser.add_argument("--no-plot", action="store_true", help="skip the plot")


def grid_from_args(args: argparse.Namespace) -> RateGrid:
    base = SCALE if getattr(args, "scale", False) else FULL if args.full else REDUCED
    streams = tuple(StreamKind(s) for s in args.streams) if getattr(args, "streams", None) else base.streams
    return RateGrid(t_min=getattr(args, "t_min", None) or base.t_min, t_max=args.t_max or base.t_max,
                    points=base.points, runs=args.runs or base.runs, epsilon=args.epsilon or base.epsilon,
                    dims=tuple(args.dims) if args.dims else base.dims, streams=streams, level_ends=base.level_ends)


def run(args: argparse.Namespace) -> int:
    grid = grid_from_args(args)
    implementation = resolve(Implementation(getattr(args, "implementation", "auto")), grid)
    exact_max = require_int_at_least("--exact-max", getattr(args, "exact_max", 4096), 0)
    fit_from = require_int_at_least("--fit-from", getattr(args, "fit_from", 0), 0)
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    print("hypercube-rate: INSECURE seeded noise (InsecureSeededNoise) -- a simulation, not a private release",
          file=sys.stderr)
    rows: list[dict[str, Any]] = []
    step_seconds: dict[str, list[float]] = {}
    operations: dict[str, int] = {}
    configs = [(kind, d, rep) for kind in grid.streams for d in grid.dims for rep in range(grid.runs)]
    with _progress(len(configs) * grid.t_max) as bar:
        for kind, d, rep in configs:
            run_rows, secs, ops = run_one(kind, d, rep, grid, args.seed, implementation, exact_max, bar)
            gc.collect()  # the counters of a run hold reference cycles: free them before the next run
            rows.extend(run_rows)
            if rep == 0:
                step_seconds[f"{kind.value} d={d}"] = secs
                operations[f"{kind.value} d={d}"] = ops
    summary, rates = summarise(rows, grid, fit_from)
    timing = step_time_exponents(step_seconds, grid)
    for name, table in (("runs.csv", rows), ("summary.csv", summary)):
        with (out / name).open("w", newline="", encoding="utf-8") as fh:
            writer = csv.DictWriter(fh, fieldnames=list(table[0]))
            writer.writeheader()
            writer.writerows(table)
    report = {"grid": {"times": grid.times, "runs": grid.runs, "epsilon": grid.epsilon, "dims": list(grid.dims),
                       "seed": args.seed, "noise": "InsecureSeededNoise (simulation only)",
                       "implementation": implementation.value, "exact_max": exact_max, "fit_from": fit_from,
                       "level_ends": grid.level_ends, "noise_mode": noise_mode(False, args.seed),
                       "command": command_line(args)},
              "w1_rates": rates, "step_time": timing, "operations_run0": operations,
              "c_epsilon": {str(d): c_epsilon(grid.epsilon, d) for d in grid.dims}}
    (out / "rates.json").write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    (out / "summary.md").write_text(markdown(rates, timing, operations, grid, implementation), encoding="utf-8")
    if not args.no_plot:
        plot(summary, rates, grid, out / "hypercube_rate.png")
    for key, r in rates.items():
        exact = (f"W1 exponent {r['fitted_exponent']:+.3f} on t in {r['exact_t_range']}" if r["exact_t_range"]
                 else "no exact W1")
        print(f"{key}: {exact}; 004-lem4.2 upper bound {r['upper_bound_exponent']:+.3f}, matching upper bound "
              f"{r['matching_bound_exponent']:+.3f}, marginal lower bound "
              f"{r['lower_bound_exponent']:+.3f} on t in {r['fit_t_range']} (target {r['target_exponent']:+.3f}, "
              f"theorem shape {r['theorem_shape_exponent']:+.3f}); upper - exact >= {r['upper_minus_exact_min']:.3g}")
    for key, r in timing.items():
        print(f"{key}: per-step time exponent {r['fitted_exponent']:+.3f} (O(dt + eps t log t): "
              f"{r['theory_exponent']:+.3f}) over t in {r['t_range']}; {r['total_seconds']:.1f} s CPU and "
              f"{operations[key]} counter operations in run 0 ({implementation.value})")
    for d in grid.dims:
        level, t_level = activation_level(grid.epsilon, d)
        print(f"d={d}: C_eps = {c_epsilon(grid.epsilon, d):.2f} (004-rem1.2); sparse counting first expected to "
              f"end a segment at level {level} (t = {t_level}); the grid ends at t = {grid.t_max}")
    print(f"noise: {noise_mode(False, args.seed)}; command: {command_line(args)}")
    return 0


MIN_T_MAX = 18
"""The smallest --t-max: the per-step time is fitted over at least two blocks of t >= 16 (step_time_exponents)."""


def check(args: argparse.Namespace) -> None:
    """Before any work (``dpstream`` reports a violation as a usage error): a grid the fits can use.

    The types of the options already refuse zero and negative values (``--t-max 0``, ``--runs 0``).
    """
    if args.t_max is not None and args.t_max < MIN_T_MAX:
        raise DPStreamInputError("--t-max", f"must be >= {MIN_T_MAX} (the per-step time is fitted over blocks of "
                                 "t >= 16)", args.t_max)
    t_min = getattr(args, "t_min", None)
    if t_min is not None and args.t_max is not None and t_min >= args.t_max:
        raise DPStreamInputError("--t-min", f"must be < --t-max = {args.t_max}", t_min)
    epsilon = getattr(args, "epsilon", None)
    if epsilon is not None:
        try:
            c_epsilon(epsilon, 2)
        except OverflowError:
            raise DPStreamInputError("--epsilon", "too small: C_eps of 004-rem1.2 overflows (004-thm1.1 holds from "
                                     "t >= C_eps, beyond any stream)", epsilon) from None
        try:
            OnlineSyntheticData(epsilon, 1)  # a budget the algorithm refuses (too large)
        except DPStreamInputError as exc:
            raise DPStreamInputError("--epsilon", exc.rule, epsilon) from None


EXPERIMENT = Experiment(
    name="hypercube-rate",
    help="E W1 of online synthetic data (004-alg1) against t in d = 1, 2, 3 (uniform and clustered streams)",
    add_arguments=add_arguments,
    run=run,
    anchors=("004-alg1", "004-alg2"),
    check=check,
)
