"""``dpstream reproduce hypercube-rate``: the W_1 rate of online synthetic data (004-thm1.1).

Runs 004-alg1 (:class:`~dpstream.hypercube.online.OnlineSyntheticData`) on uniform and clustered
streams in d = 1, 2, 3 and measures the exact W_1 (l_inf ground metric) between the true and the
synthetic empirical measures at a geometric grid of times. 004-thm1.1 states the rate only up to
unknown constants, so its *shape* is checked:

* d >= 2: E W_1 (eps t)^{1/d} / log t should stay bounded; the fitted exponent of E W_1 against t
  is compared with -1/d;
* d = 1: E W_1 eps t / (log^3(eps t) log^1.5 t) should stay bounded (exponent -1 up to logs).

It also times every step (CPU time) and fits the exponent of the per-step time against t, to compare with
the O(d t + eps t log t) of 004-sec7. The plot shows E W_1 against t on log-log axes with the
theorem's rate shape and the offline shape (eps t)^{-1/d} (minimax rate of the offline problem up
to logarithmic factors; both shapes anchored at the geometric middle of the grid).

NOISE: the runs use ``InsecureSeededNoise`` (``--seed``): an insecure, reproducible source for a
*simulation*; nothing produced here may be released as private data.

Default: a reduced grid (t from 5 to 500, two orders of magnitude, two runs per configuration);
``--full`` runs t from 5 to 2000 with three runs per configuration (measured times: docs/hypercube.md).
Outputs in ``--out``: ``runs.csv`` (every run, time and W_1), ``summary.csv`` (means, normalised
ratios), ``rates.json`` (fitted exponents) and ``hypercube_rate.png``.
"""

from __future__ import annotations

import argparse
import csv
import itertools
import json
import math
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from dpstream.audit.protocol import derive_seed
from dpstream.cli_args import non_negative_int, positive_float, positive_int
from dpstream.counters.sparse import level_start, sparse_threshold
from dpstream.errors import DPStreamInputError, require_int_at_least, require_positive_finite
from dpstream.experiments import Experiment, command_line, noise_mode
from dpstream.experiments.progress import progress
from dpstream.hypercube.online import OnlineSyntheticData
from dpstream.hypercube.schedule import PrivacySchedule
from dpstream.hypercube.streams import StreamKind, make_stream
from dpstream.hypercube.wasserstein import wasserstein1
from dpstream.noise import InsecureSeededNoise

__all__ = [
    "EXPERIMENT",
    "RateGrid",
    "activation_level",
    "c_epsilon",
    "fit_exponent",
    "normalised_ratio",
    "offline_shape",
    "theorem_shape",
]


@dataclass(frozen=True)
class RateGrid:
    """The times at which W_1 is measured, and how many runs per (stream, d)."""

    t_min: int
    t_max: int
    points: int
    runs: int
    epsilon: float
    dims: tuple[int, ...] = (1, 2, 3)
    streams: tuple[StreamKind, ...] = (StreamKind.UNIFORM, StreamKind.CLUSTERED)

    @property
    def times(self) -> list[int]:
        grid = np.unique(np.round(np.geomspace(self.t_min, self.t_max, self.points)).astype(int))
        return [int(t) for t in grid]


REDUCED = RateGrid(t_min=5, t_max=500, points=9, runs=2, epsilon=1.0)
FULL = RateGrid(t_min=5, t_max=2000, points=12, runs=3, epsilon=1.0)


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


def _progress(total: int) -> Any:
    return progress(total, "hypercube-rate", "online runs of 004-alg1 (streams x d x runs, each up to t_max), noise: "
                    "insecure seeded")


def run_one(kind: StreamKind, d: int, rep: int, grid: RateGrid, seed: int,
            bar: Any = None) -> tuple[list[dict[str, Any]], list[float]]:
    """One online run up to t_max: W_1 at the grid times, and the CPU time of every step."""
    times = grid.times
    data = make_stream(kind, grid.t_max, d, seed=derive_seed(seed, "data", kind.value, d, rep))
    noise = InsecureSeededNoise(derive_seed(seed, "noise", kind.value, d, rep))  # INSECURE: simulation only
    algorithm = OnlineSyntheticData(grid.epsilon, d, noise=noise, sample_times=times)
    rows: list[dict[str, Any]] = []
    step_seconds: list[float] = []
    for t, x in enumerate(data, start=1):
        start = time.process_time()  # CPU time of this process: robust to other load on the machine
        release = algorithm.step(x)
        step_seconds.append(time.process_time() - start)
        if release.points is not None:
            rows.append({"stream": kind.value, "d": d, "rep": rep, "t": t, "epsilon": grid.epsilon,
                         "depth": release.depth, "w1": wasserstein1(data[:t], release.points),
                         "step_seconds": step_seconds[-1]})
        if bar is not None:
            bar.update(1)
    return rows, step_seconds


def summarise(rows: Sequence[dict[str, Any]], grid: RateGrid) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    summary: list[dict[str, Any]] = []
    rates: dict[str, Any] = {}
    for kind in grid.streams:
        for d in grid.dims:
            sel = [r for r in rows if r["stream"] == kind.value and r["d"] == d]
            ts = sorted({int(r["t"]) for r in sel})
            means, sems = [], []
            for t in ts:
                w = np.array([r["w1"] for r in sel if r["t"] == t])
                means.append(float(w.mean()))
                sems.append(float(w.std(ddof=1) / math.sqrt(w.size)) if w.size > 1 else math.nan)
            ratio = normalised_ratio(np.array(means), np.array(ts), d, grid.epsilon)
            for t, m, s, q in zip(ts, means, sems, ratio, strict=True):
                summary.append({"stream": kind.value, "d": d, "t": t, "mean_w1": m, "sem_w1": s,
                                "normalised_ratio": float(q)})
            rates[f"{kind.value} d={d}"] = {
                "fitted_exponent": fit_exponent(ts, means), "target_exponent": -1.0 / d,
                "theorem_shape_exponent": fit_exponent(ts, list(theorem_shape(np.array(ts), d, grid.epsilon))),
                "ratio_min": float(ratio.min()), "ratio_max": float(ratio.max()),
                "ratio_last_over_first": float(ratio[-1] / ratio[0]), "t_range": [ts[0], ts[-1]],
            }
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
            yb.append(float(np.median(s[lo - 1:hi - 1])))
        theory = [d * t + grid.epsilon * t * math.log(t) for t in tb]
        out[key] = {"fitted_exponent": fit_exponent(tb, yb), "theory_exponent": fit_exponent(tb, theory),
                    "t_range": [int(edges[0]), int(edges[-1])], "median_seconds_last_block": yb[-1]}
    return out


def plot(summary: Sequence[dict[str, Any]], grid: RateGrid, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(grid.dims), figsize=(5 * len(grid.dims), 4.2), squeeze=False)
    for ax, d in zip(axes[0], grid.dims, strict=True):
        for kind, marker in zip(grid.streams, ("o", "s"), strict=False):
            sel = [r for r in summary if r["stream"] == kind.value and r["d"] == d]
            t = np.array([r["t"] for r in sel], dtype=np.float64)
            m = np.array([r["mean_w1"] for r in sel])
            ax.loglog(t, m, marker=marker, label=f"E W1, {kind.value}")
        ref = [r for r in summary if r["stream"] == grid.streams[0].value and r["d"] == d]
        t = np.array([r["t"] for r in ref], dtype=np.float64)
        m = np.array([r["mean_w1"] for r in ref])
        mid = len(t) // 2
        for shape, style, label in ((theorem_shape, "--", "004-thm1.1 shape"),
                                    (offline_shape, ":", "offline (eps t)^(-1/d)")):
            y = shape(t, d, grid.epsilon)
            ax.loglog(t, y * m[mid] / y[mid], style, color="gray" if style == "--" else "black", label=label)
        ax.set_title(f"d = {d}, eps = {grid.epsilon:g}")
        ax.set_xlabel("t")
        ax.set_ylabel("E W1 (l_inf)")
        ax.legend(fontsize=8)
    fig.suptitle("Online DP synthetic data (004-alg1), INSECURE seeded noise (simulation)")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--seed", type=non_negative_int, default=0,
                        help="seed of the INSECURE simulation noise and of the data (default 0)")
    parser.add_argument("--full", action="store_true",
                        help="the full grid (t from 5 to 2000, 3 runs per configuration)")
    parser.add_argument("--runs", type=positive_int, default=None, help="runs per (stream, d) (overrides the grid)")
    parser.add_argument("--t-max", type=positive_int, default=None, help="largest t (overrides the grid)")
    parser.add_argument("--epsilon", type=positive_float, default=None, help="privacy budget (default 1)")
    parser.add_argument("--dims", type=positive_int, nargs="+", default=None, help="dimensions (default 1 2 3)")
    parser.add_argument("--no-plot", action="store_true", help="skip the plot")


def grid_from_args(args: argparse.Namespace) -> RateGrid:
    base = FULL if args.full else REDUCED
    return RateGrid(t_min=base.t_min, t_max=args.t_max or base.t_max, points=base.points,
                    runs=args.runs or base.runs, epsilon=args.epsilon or base.epsilon,
                    dims=tuple(args.dims) if args.dims else base.dims)


def run(args: argparse.Namespace) -> int:
    grid = grid_from_args(args)
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    print("hypercube-rate: INSECURE seeded noise (InsecureSeededNoise) -- a simulation, not a private release",
          file=sys.stderr)
    rows: list[dict[str, Any]] = []
    step_seconds: dict[str, list[float]] = {}
    configs = [(kind, d, rep) for kind in grid.streams for d in grid.dims for rep in range(grid.runs)]
    with _progress(len(configs) * grid.t_max) as bar:
        for kind, d, rep in configs:
            run_rows, secs = run_one(kind, d, rep, grid, args.seed, bar)
            rows.extend(run_rows)
            if rep == 0:
                step_seconds[f"{kind.value} d={d}"] = secs
    summary, rates = summarise(rows, grid)
    timing = step_time_exponents(step_seconds, grid)
    for name, table in (("runs.csv", rows), ("summary.csv", summary)):
        with (out / name).open("w", newline="", encoding="utf-8") as fh:
            writer = csv.DictWriter(fh, fieldnames=list(table[0]))
            writer.writeheader()
            writer.writerows(table)
    report = {"grid": {"times": grid.times, "runs": grid.runs, "epsilon": grid.epsilon, "dims": list(grid.dims),
                       "seed": args.seed, "noise": "InsecureSeededNoise (simulation only)",
                       "noise_mode": noise_mode(False, args.seed), "command": command_line(args)},
              "w1_rates": rates, "step_time": timing}
    (out / "rates.json").write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    if not args.no_plot:
        plot(summary, grid, out / "hypercube_rate.png")
    for key, r in rates.items():
        print(f"{key}: W1 exponent {r['fitted_exponent']:+.3f} (target {r['target_exponent']:+.3f}, theorem shape "
              f"{r['theorem_shape_exponent']:+.3f}); W1/shape in [{r['ratio_min']:.3g}, {r['ratio_max']:.3g}], "
              f"last/first {r['ratio_last_over_first']:.3g}")
    for key, r in timing.items():
        print(f"{key}: per-step time exponent {r['fitted_exponent']:+.3f} (O(dt + eps t log t): "
              f"{r['theory_exponent']:+.3f}) over t in {r['t_range']}")
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


EXPERIMENT = Experiment(
    name="hypercube-rate",
    help="E W1 of online synthetic data (004-alg1) against t in d = 1, 2, 3 (uniform and clustered streams)",
    add_arguments=add_arguments,
    run=run,
    check=check,
)
