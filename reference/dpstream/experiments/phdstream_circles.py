"""``dpstream reproduce phdstream-circles``: 001 Figure 1(d) -- concentric circles with deletion, small queries.

Runs PHDStream (the compute-efficient Algorithm 6/7, with Simple and with Block-8 counters) and the
baselines 1-3 of section 5.3 on the concentric-circles stream with deletion, for every eps in
``--eps`` and every initialization ratio t0 in ``--init-ratios`` (section 5.2: the first t0 share of
the events is the first batch, then batches of ``--batch-size`` events). At ``--evaluations``
evenly spaced times it computes the average relative error of section 5.4 on the small range
queries and writes

* ``phdstream_circles.csv`` -- one row per (algorithm, eps, t0, run, t);
* ``phdstream_circles.png`` -- relative error over time, one panel per (eps, t0), as Figure 1(d);
* ``summary.md`` -- mean relative error over the evaluation times per algorithm and panel.

Data (``--source authors``, the default): the authors' stream ``motion_circles_with_deletion_unit.csv``
and their 16,000 query rectangles ``motion_circles_queries.csv``, shipped in ``data/motion_circles/``
of the repository (xz-compressed, checked against ``SHA256SUMS`` before use; ``--data-dir`` reads
another folder with the same layout). ``--source generated`` uses
:func:`dpstream.phdstream.data.concentric_circles_stream` and random small rectangles instead and
needs no files.

PHDStream uses ``--lambda-rule`` (default ``general``, the scale that makes it eps-DP, E-phdstream-3); the
baselines run PrivTree on counts, where the paper's App. A scale is eps-DP, and always use it.

eps is per event (EVENT relation). The paper's Figure 1 uses "eps = 1 with sensitivity 2" (a point
is inserted and later removed: two events), i.e. eps = 0.5 per event. Noise: insecure seeded
(``--seed``), for reproducible numbers; ``--secure`` uses the OpenDP-backed source.
"""

from __future__ import annotations

import argparse
import csv
import math
import statistics
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dpstream.cli_args import (
    Flatten,
    comma_list,
    finite_float,
    int_in,
    non_negative_int,
    positive_float,
    positive_int,
    unit_interval,
)
from dpstream.counters import BlockCounter
from dpstream.errors import DataRowError, DPStreamInputError
from dpstream.experiments import Experiment, command_line, noise_mode
from dpstream.experiments.data import DataFile, check_files, materialized
from dpstream.experiments.progress import progress
from dpstream.insecure import InsecureSeededNoise
from dpstream.noise import NoiseSource, SecureNoise
from dpstream.phdstream.baselines import (
    InitPrivTreeThenCounters,
    OfflinePrivTreeOnDifferential,
    OfflinePrivTreeOnStream,
)
from dpstream.phdstream.data import concentric_circles_stream, load_point_stream_csv, load_query_csv
from dpstream.phdstream.efficient import EfficientPHDStream
from dpstream.phdstream.initialization import initialize_by_ratio
from dpstream.phdstream.metric import RangeQueries, query_set, relative_error
from dpstream.phdstream.partition import HypercubePartition, Partition
from dpstream.phdstream.privtree import LambdaRule
from dpstream.phdstream.stream import PointEvents, SyntheticRelease, TrueStream

__all__ = ["ALGORITHMS", "DATA", "EXPERIMENT", "run_experiment"]

STREAM = DataFile("motion_circles", "motion_circles_with_deletion_unit.csv")
QUERIES = DataFile("motion_circles", "motion_circles_queries.csv")
DATA = (STREAM, QUERIES)


class Releasing:
    """What the experiment needs from an algorithm: ``step(batch) -> SyntheticRelease``."""

    def step(self, batch: PointEvents) -> SyntheticRelease:  # pragma: no cover - protocol
        raise NotImplementedError


Maker = Callable[[Partition, float, float, NoiseSource, LambdaRule], Any]

ALGORITHMS: dict[str, Maker] = {
    "PHDStream (Simple)": lambda P, e, th, n, r: EfficientPHDStream(P, e, th, noise=n, lambda_rule=r),
    "PHDStream (Block 8)": lambda P, e, th, n, r: EfficientPHDStream(
        P, e, th, noise=n, counter=lambda eps, noise: BlockCounter(eps, 8, noise=noise), lambda_rule=r),
    # the baselines run PrivTree on counts, where the App. A scale is eps/2-DP: their default (E-phdstream-3)
    "Baseline 1 (not DP)": lambda P, e, th, n, r: OfflinePrivTreeOnStream(P, e, th, noise=n),
    "Baseline 2": lambda P, e, th, n, r: OfflinePrivTreeOnDifferential(P, e, th, noise=n),
    "Baseline 3": lambda P, e, th, n, r: InitPrivTreeThenCounters(P, e, th, noise=n),
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--source", choices=("authors", "generated"), default="authors",
                        help="the authors' CSV stream and queries, or our generator (default: %(default)s)")
    parser.add_argument("--eps", type=comma_list(positive_float), nargs="+", action=Flatten, default=[0.5, 1.0],
                        help="per-event eps values (default: 0.5 1)")
    parser.add_argument("--init-ratios", type=comma_list(unit_interval), nargs="+", action=Flatten,
                        default=[0.1, 0.5], help="t0 as a share of events, in [0, 1] (default: 0.1 0.5)")
    parser.add_argument("--batch-size", type=positive_int, default=500)
    parser.add_argument("--max-depth", type=int_in(1, 128), default=20,
                        help="depth D of the tree, at most 128: deeper cells hold no distinct float points")
    parser.add_argument("--theta", type=finite_float, default=0.0)
    parser.add_argument("--lambda-rule", choices=[r.value for r in LambdaRule], default=LambdaRule.GENERAL.value,
                        help="PHDStream's PrivTree scale (E-phdstream-3): general (default, eps-DP), proof (the "
                             "authors' code); the baselines always use proof, which is eps-DP on their count inputs")
    parser.add_argument("--runs", type=positive_int, default=1, help="independent runs per panel")
    parser.add_argument("--seed", type=non_negative_int, default=0,
                        help="seed of the insecure noise and of --source generated's data (default: 0)")
    parser.add_argument("--evaluations", type=positive_int, default=10,
                        help="evaluation times per run (incl. the last)")
    parser.add_argument("--max-queries", type=positive_int, default=None, help="use only the first N small queries")
    parser.add_argument("--max-events", type=positive_int, default=None, help="truncate the stream (quick runs)")
    parser.add_argument("--n", type=positive_int, default=50000,
                        help="points of the generated stream (--source generated)")
    parser.add_argument("--algorithms", nargs="+", default=list(ALGORITHMS), choices=list(ALGORITHMS))
    parser.add_argument("--secure", action="store_true", help="draw from the OpenDP-backed secure source")


def check(args: argparse.Namespace) -> None:
    """Before any work: the authors' files are there and intact (``--source authors``)."""
    if args.source == "authors":
        try:
            check_files(DATA, args.data_dir)
        except DPStreamInputError as exc:
            raise DPStreamInputError(exc.field, f"{exc.rule} (or use --source generated)", exc.value) from exc


def _load(args: argparse.Namespace) -> tuple[PointEvents, RangeQueries]:
    if args.source == "generated":
        events = concentric_circles_stream(args.n, deletion=True, seed=args.seed).as_events()
        queries = query_set(args.seed, "small")
    else:
        print(f"phdstream-circles: reading {STREAM.name} and {QUERIES.name} from {args.data_dir}", file=sys.stderr,
              flush=True)
        try:
            with materialized(DATA, args.data_dir) as paths:
                try:
                    events = load_point_stream_csv(paths[STREAM]).as_events()
                    queries = load_query_csv(paths[QUERIES])["small"]
                except DataRowError as exc:  # name the file in the data dir, not its temporary copy
                    shipped = next(f.shipped(args.data_dir) for f in DATA if str(paths[f]) == exc.path)
                    raise DataRowError(shipped, exc.line, exc.field, exc.rule, exc.value) from exc
        except DataRowError:
            raise
        except DPStreamInputError as exc:
            raise DPStreamInputError(exc.field, f"{exc.rule} (or use --source generated)", exc.value) from exc
    if args.max_events is not None:
        events = PointEvents(events.points[: args.max_events], events.moves[: args.max_events])
    if args.max_queries is not None:
        queries = RangeQueries(queries.low[: args.max_queries], queries.high[: args.max_queries])
    return events, queries


def _evaluation_times(steps: int, evaluations: int) -> set[int]:
    k = max(1, min(evaluations, steps))
    return {max(1, round(steps * (i + 1) / k)) for i in range(k)}


def run_experiment(args: argparse.Namespace) -> list[dict[str, Any]]:
    """Run every (eps, t0, run, algorithm); returns the rows of the CSV."""
    events, queries = _load(args)
    P = HypercubePartition(2, args.max_depth)
    rule = LambdaRule(args.lambda_rule)
    rows: list[dict[str, Any]] = []
    configs = [(eps, ratio, run) for eps in args.eps for ratio in args.init_ratios for run in range(args.runs)]
    batches_of = {ratio: initialize_by_ratio(events, ratio, args.batch_size) for ratio in args.init_ratios}
    total = sum(len(batches_of[ratio]) for _, ratio, _ in configs) * len(args.algorithms)
    what = (f"{len(args.algorithms)} algorithm(s) x {len(args.eps)} eps x {len(args.init_ratios)} t0 x "
            f"{args.runs} run(s) on {len(events)} events, noise: {noise_mode(args.secure, args.seed)}")
    with progress(total, "phdstream-circles", what) as bar:
        for eps, ratio, run in configs:
            batches = batches_of[ratio]
            when = _evaluation_times(len(batches), args.evaluations)
            truth = TrueStream(P)
            true_points: dict[int, Any] = {}
            for t, batch in enumerate(batches, start=1):
                truth.stage(batch).commit()
                if t in when:
                    true_points[t] = truth.points()
            for a_index, name in enumerate(args.algorithms):
                seed = (args.seed * 1_000_003 + run * 7919 + a_index * 104_729 + int(eps * 1000) * 31
                        + int(ratio * 1000)) % (2**31)
                noise: NoiseSource = SecureNoise() if args.secure else InsecureSeededNoise(seed)
                alg = ALGORITHMS[name](P, eps, args.theta, noise, rule)
                bar.set_postfix_str(f"eps={eps:g} t0={ratio:g} {name}")
                for t, batch in enumerate(batches, start=1):
                    release = alg.step(batch)
                    bar.update(1)
                    if t in when:
                        pts = true_points[t]
                        rows.append({
                            "algorithm": name, "epsilon": eps, "init_ratio": ratio, "run": run, "t": t,
                            "true_size": int(pts.shape[0]), "synthetic_size": release.size,
                            "leaves": len(release.tree.leaves),
                            "rel_error_small": relative_error(queries, pts, release.points),
                        })
    return rows


def _write_csv(rows: list[dict[str, Any]], path: Path) -> None:
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def _summary(rows: list[dict[str, Any]], args: argparse.Namespace) -> str:
    data_seed = f", data seed={args.seed}" if args.source == "generated" else ""
    lines = [f"# phdstream-circles (source={args.source}{data_seed}, lambda rule={args.lambda_rule}, "
             f"D={args.max_depth}, batch={args.batch_size}, runs={args.runs})", "",
             f"Noise: {noise_mode(args.secure, args.seed)}. Command: `{command_line(args)}`", "",
             "Mean over the evaluation times of the average relative error on small queries (section 5.4).", "",
             "| algorithm | " + " | ".join(f"eps={e:g}, t0={r:g}" for e in args.eps for r in args.init_ratios) + " |",
             "|---|" + "---|" * (len(args.eps) * len(args.init_ratios))]
    for name in args.algorithms:
        cells = []
        for e in args.eps:
            for r in args.init_ratios:
                vals = [row["rel_error_small"] for row in rows
                        if row["algorithm"] == name and row["epsilon"] == e and row["init_ratio"] == r]
                cells.append(f"{statistics.fmean(vals):.3f}" if vals else "-")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def _plot(rows: list[dict[str, Any]], args: argparse.Namespace, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    n_rows, n_cols = len(args.eps), len(args.init_ratios)
    fig, axes = plt.subplots(n_rows, n_cols, figsize=(4.2 * n_cols, 3.2 * n_rows), squeeze=False, sharey=True)
    for i, e in enumerate(args.eps):
        for j, r in enumerate(args.init_ratios):
            ax = axes[i][j]
            for name in args.algorithms:
                sel = [row for row in rows if row["algorithm"] == name and row["epsilon"] == e
                       and row["init_ratio"] == r]
                times = sorted({row["t"] for row in sel})
                means = [statistics.fmean(row["rel_error_small"] for row in sel if row["t"] == t) for t in times]
                ax.plot(times, means, marker="o", markersize=3, label=name)
            ax.set_yscale("log")
            ax.set_title(f"eps = {e:g}, t0 = {r:g}", fontsize=9)
            ax.set_xlabel("time (batches)")
            if j == 0:
                ax.set_ylabel("relative error, small queries")
    axes[0][0].legend(fontsize=7)
    fig.suptitle("Concentric circles with deletion (001 Figure 1(d) setting)", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def run(args: argparse.Namespace) -> int:
    rows = run_experiment(args)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    _write_csv(rows, out / "phdstream_circles.csv")
    summary = _summary(rows, args)
    _plot(rows, args, out / "phdstream_circles.png")
    (out / "summary.md").write_text(summary, encoding="utf-8")
    print(summary)
    return 0 if rows and all(math.isfinite(r["rel_error_small"]) for r in rows) else 1


EXPERIMENT = Experiment(
    name="phdstream-circles",
    help="001 Figure 1(d): PHDStream (Simple, Block 8) and baselines 1-3 on concentric circles with deletion",
    add_arguments=add_arguments,
    run=run,
    anchors=("001-alg2", "001-alg6", "001-alg8", "001-alg9"),
    data=DATA,
    check=check,
)
