"""``dpstream reproduce tabular-adult``: 003 Tables 1-3 on the Adult streams (003-sec7.1.2).

Runs StreamingMWEM (the baseline, 003-alg2) and Algorithm 3 (the proposed method, 003-alg3) with
the Simple counter and the unbounded block counter (003-alg4, section 8), with Q = all 2-way
workloads (003-sec7.2), on Adult-randomized and Adult-ordered streams with batch sizes B, for
each eps; A_Dataset is MW on a small projection of Adult (explicit domain) and PGM (mbi) on all
attributes. Writes the four metrics over time (003-sec7.3) and the last-10-steps averages in the
layout of 003 Tables 1-3 with the paper's numbers beside ours.

* Default (reduced): eps = 1, B in {50, 200}, both streams, the first 20 time steps (PGM: the
  first 5), k = 3 selections per step. ``--full``: eps in {0.5, 1, 2, 4} and whole streams
  (977 steps for B = 50; hours with PGM on a CPU).
* Data: ``data/adult_liu2021/`` of the repository (the version 003 says it used; see its SOURCE.md),
  xz-compressed and checked against its ``SHA256SUMS`` before use (``--data-dir`` reads another folder).
* Noise: INSECURE seeded noise (``InsecureSeededNoise``) — a simulation, not a release.
* Choices the paper does not state (docs/tabular.md): k (default 3), the sort order of
  Adult-ordered (lexicographic), the mass of the fitted datasets (the public batch schedule), the
  metric's scale (normalised) and zero-count rule (skip), the PGM reading of A_Dataset(M, h).
"""

from __future__ import annotations

import argparse
import csv
import importlib.util
import json
import math
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from dpstream.cli_args import Flatten, comma_list, fraction, non_negative_int, positive_float, positive_int
from dpstream.counters import SimpleCounter, UnboundedBlockCounter
from dpstream.counters.base import CounterFactory
from dpstream.errors import DataRowError, DPStreamInputError
from dpstream.experiments import Experiment, command_line, noise_mode
from dpstream.experiments.data import DataFile, check_files, materialized, verified_bytes
from dpstream.experiments.progress import Progress, progress
from dpstream.insecure import InsecureSeededNoise
from dpstream.noise import NoiseSource
from dpstream.tabular.domain import Domain, IntArray
from dpstream.tabular.fitting import DatasetFitter, MultiplicativeWeights
from dpstream.tabular.main_algorithm import MainAlgorithm
from dpstream.tabular.metrics import METRIC_NAMES, CumulativeMarginals, ZeroRule, stream_metrics
from dpstream.tabular.queries import Workload, all_workloads
from dpstream.tabular.selection import BiasRule
from dpstream.tabular.stream import StreamStep, adult_ordered, adult_randomized, load_table_csv
from dpstream.tabular.streaming_mwem import StreamingMWEM
from dpstream.tabular.totals import TotalRule

__all__ = ["EXPERIMENT", "PAPER_TABLES_1_2", "PAPER_TABLE_3", "IndependentDataset", "RunSpec", "relwe_reference",
           "run_one"]

TABLE = DataFile("adult_liu2021", "adult.csv")
DOMAIN = DataFile("adult_liu2021", "adult-domain.json")
DATA = (TABLE, DOMAIN)
MW_COLUMNS = ("sex", "income>50K", "race", "relationship", "marital-status")

# 003 Tables 1-2 (Adult rows): (dataset, eps, metric) -> (Baseline, Proposed), copied from the paper.
PAPER_TABLES_1_2: dict[tuple[str, float, str], tuple[float, float]] = {
    ("Adult-randomized-bs-50", 0.5, "AvgRelWE"): (0.5624, 0.3035),
    ("Adult-randomized-bs-50", 0.5, "AvgWE"): (0.0151, 0.0075),
    ("Adult-randomized-bs-50", 0.5, "MaxRelWE"): (3.6469, 1.7575),
    ("Adult-randomized-bs-50", 0.5, "MaxWE"): (0.1182, 0.0504),
    ("Adult-randomized-bs-50", 1.0, "AvgRelWE"): (0.4005, 0.3191),
    ("Adult-randomized-bs-50", 1.0, "AvgWE"): (0.0103, 0.0079),
    ("Adult-randomized-bs-50", 1.0, "MaxRelWE"): (2.3292, 1.8162),
    ("Adult-randomized-bs-50", 1.0, "MaxWE"): (0.0712, 0.0514),
    ("Adult-randomized-bs-50", 2.0, "AvgRelWE"): (0.351, 0.1863),
    ("Adult-randomized-bs-50", 2.0, "AvgWE"): (0.0085, 0.0039),
    ("Adult-randomized-bs-50", 2.0, "MaxRelWE"): (1.5646, 0.977),
    ("Adult-randomized-bs-50", 2.0, "MaxWE"): (0.0488, 0.0208),
    ("Adult-randomized-bs-50", 4.0, "AvgRelWE"): (0.2606, 0.1673),
    ("Adult-randomized-bs-50", 4.0, "AvgWE"): (0.0058, 0.0033),
    ("Adult-randomized-bs-50", 4.0, "MaxRelWE"): (0.9187, 0.9778),
    ("Adult-randomized-bs-50", 4.0, "MaxWE"): (0.0243, 0.0208),
    ("Adult-randomized-bs-200", 0.5, "AvgRelWE"): (0.4113, 0.2658),
    ("Adult-randomized-bs-200", 0.5, "AvgWE"): (0.0104, 0.0064),
    ("Adult-randomized-bs-200", 0.5, "MaxRelWE"): (2.1987, 1.6246),
    ("Adult-randomized-bs-200", 0.5, "MaxWE"): (0.0698, 0.0419),
    ("Adult-randomized-bs-200", 1.0, "AvgRelWE"): (0.2786, 0.1975),
    ("Adult-randomized-bs-200", 1.0, "AvgWE"): (0.0065, 0.0044),
    ("Adult-randomized-bs-200", 1.0, "MaxRelWE"): (1.0789, 1.1166),
    ("Adult-randomized-bs-200", 1.0, "MaxWE"): (0.0323, 0.0249),
    ("Adult-randomized-bs-200", 2.0, "AvgRelWE"): (0.1802, 0.1802),
    ("Adult-randomized-bs-200", 2.0, "AvgWE"): (0.0036, 0.0036),
    ("Adult-randomized-bs-200", 2.0, "MaxRelWE"): (0.8907, 0.8907),
    ("Adult-randomized-bs-200", 2.0, "MaxWE"): (0.0191, 0.0191),
    ("Adult-randomized-bs-200", 4.0, "AvgRelWE"): (0.1802, 0.1802),
    ("Adult-randomized-bs-200", 4.0, "AvgWE"): (0.0036, 0.0036),
    ("Adult-randomized-bs-200", 4.0, "MaxRelWE"): (0.8907, 0.8907),
    ("Adult-randomized-bs-200", 4.0, "MaxWE"): (0.0191, 0.0191),
    ("Adult-ordered-bs-50", 0.5, "AvgRelWE"): (0.5559, 0.3165),
    ("Adult-ordered-bs-50", 0.5, "AvgWE"): (0.0149, 0.008),
    ("Adult-ordered-bs-50", 0.5, "MaxRelWE"): (3.5589, 1.9028),
    ("Adult-ordered-bs-50", 0.5, "MaxWE"): (0.1157, 0.0497),
    ("Adult-ordered-bs-50", 1.0, "AvgRelWE"): (0.3953, 0.3214),
    ("Adult-ordered-bs-50", 1.0, "AvgWE"): (0.0102, 0.008),
    ("Adult-ordered-bs-50", 1.0, "MaxRelWE"): (2.2663, 1.9528),
    ("Adult-ordered-bs-50", 1.0, "MaxWE"): (0.0695, 0.0547),
    ("Adult-ordered-bs-50", 2.0, "AvgRelWE"): (0.3264, 0.1904),
    ("Adult-ordered-bs-50", 2.0, "AvgWE"): (0.0079, 0.004),
    ("Adult-ordered-bs-50", 2.0, "MaxRelWE"): (1.4234, 0.9798),
    ("Adult-ordered-bs-50", 2.0, "MaxWE"): (0.0444, 0.0208),
    ("Adult-ordered-bs-50", 4.0, "AvgRelWE"): (0.2402, 0.1667),
    ("Adult-ordered-bs-50", 4.0, "AvgWE"): (0.0053, 0.0033),
    ("Adult-ordered-bs-50", 4.0, "MaxRelWE"): (0.9192, 0.978),
    ("Adult-ordered-bs-50", 4.0, "MaxWE"): (0.0211, 0.0208),
    ("Adult-ordered-bs-200", 0.5, "AvgRelWE"): (0.381, 0.2593),
    ("Adult-ordered-bs-200", 0.5, "AvgWE"): (0.0096, 0.0063),
    ("Adult-ordered-bs-200", 0.5, "MaxRelWE"): (1.9203, 1.6522),
    ("Adult-ordered-bs-200", 0.5, "MaxWE"): (0.0601, 0.0413),
    ("Adult-ordered-bs-200", 1.0, "AvgRelWE"): (0.2608, 0.1972),
    ("Adult-ordered-bs-200", 1.0, "AvgWE"): (0.006, 0.0043),
    ("Adult-ordered-bs-200", 1.0, "MaxRelWE"): (1.006, 1.067),
    ("Adult-ordered-bs-200", 1.0, "MaxWE"): (0.0302, 0.0232),
    ("Adult-ordered-bs-200", 2.0, "AvgRelWE"): (0.1969, 0.1711),
    ("Adult-ordered-bs-200", 2.0, "AvgWE"): (0.0041, 0.0035),
    ("Adult-ordered-bs-200", 2.0, "MaxRelWE"): (0.7189, 0.9752),
    ("Adult-ordered-bs-200", 2.0, "MaxWE"): (0.0152, 0.0208),
    ("Adult-ordered-bs-200", 4.0, "AvgRelWE"): (0.1705, 0.1563),
    ("Adult-ordered-bs-200", 4.0, "AvgWE"): (0.0034, 0.0031),
    ("Adult-ordered-bs-200", 4.0, "MaxRelWE"): (0.8939, 0.9776),
    ("Adult-ordered-bs-200", 4.0, "MaxWE"): (0.019, 0.0208),
}

# 003 Table 3 (Adult rows): (dataset, eps, metric) -> (Simple, Block).
PAPER_TABLE_3: dict[tuple[str, float, str], tuple[float, float]] = {
    ("Adult-randomized-bs-50", 0.5, "AvgRelWE"): (0.3035, 0.3718),
    ("Adult-randomized-bs-50", 0.5, "AvgWE"): (0.0075, 0.0092),
    ("Adult-randomized-bs-50", 0.5, "MaxRelWE"): (1.7575, 1.9395),
    ("Adult-randomized-bs-50", 0.5, "MaxWE"): (0.0504, 0.0525),
    ("Adult-randomized-bs-50", 1.0, "AvgRelWE"): (0.3191, 0.2534),
    ("Adult-randomized-bs-50", 1.0, "AvgWE"): (0.0079, 0.0058),
    ("Adult-randomized-bs-50", 1.0, "MaxRelWE"): (1.8162, 1.5294),
    ("Adult-randomized-bs-50", 1.0, "MaxWE"): (0.0514, 0.0383),
    ("Adult-randomized-bs-50", 2.0, "AvgRelWE"): (0.1863, 0.1862),
    ("Adult-randomized-bs-50", 2.0, "AvgWE"): (0.0039, 0.0039),
    ("Adult-randomized-bs-50", 2.0, "MaxRelWE"): (0.977, 0.9804),
    ("Adult-randomized-bs-50", 2.0, "MaxWE"): (0.0208, 0.0208),
    ("Adult-randomized-bs-50", 4.0, "AvgRelWE"): (0.1673, 0.1629),
    ("Adult-randomized-bs-50", 4.0, "AvgWE"): (0.0033, 0.0032),
    ("Adult-randomized-bs-50", 4.0, "MaxRelWE"): (0.9778, 0.9779),
    ("Adult-randomized-bs-50", 4.0, "MaxWE"): (0.0208, 0.0208),
    ("Adult-ordered-bs-50", 0.5, "AvgRelWE"): (0.3165, 0.3698),
    ("Adult-ordered-bs-50", 0.5, "AvgWE"): (0.008, 0.0093),
    ("Adult-ordered-bs-50", 0.5, "MaxRelWE"): (1.9028, 2.2472),
    ("Adult-ordered-bs-50", 0.5, "MaxWE"): (0.0497, 0.0572),
    ("Adult-ordered-bs-50", 1.0, "AvgRelWE"): (0.3214, 0.2552),
    ("Adult-ordered-bs-50", 1.0, "AvgWE"): (0.008, 0.0059),
    ("Adult-ordered-bs-50", 1.0, "MaxRelWE"): (1.9528, 1.3285),
    ("Adult-ordered-bs-50", 1.0, "MaxWE"): (0.0547, 0.0338),
    ("Adult-ordered-bs-50", 2.0, "AvgRelWE"): (0.1904, 0.1864),
    ("Adult-ordered-bs-50", 2.0, "AvgWE"): (0.004, 0.0039),
    ("Adult-ordered-bs-50", 2.0, "MaxRelWE"): (0.9798, 1.0114),
    ("Adult-ordered-bs-50", 2.0, "MaxWE"): (0.0208, 0.0208),
    ("Adult-ordered-bs-50", 4.0, "AvgRelWE"): (0.1667, 0.1632),
    ("Adult-ordered-bs-50", 4.0, "AvgWE"): (0.0033, 0.0032),
    ("Adult-ordered-bs-50", 4.0, "MaxRelWE"): (0.978, 0.978),
    ("Adult-ordered-bs-50", 4.0, "MaxWE"): (0.0208, 0.0208),
}

METHODS = ("baseline", "proposed-simple", "proposed-block")
FITTERS = ("mw", "pgm")
REDUCED_HORIZON = 20
REDUCED_PGM_HORIZON = 5


@dataclass(frozen=True)
class RunSpec:
    """One cell of the grid: stream kind, batch size, eps, A_Dataset, method."""

    stream: str
    B: int
    epsilon: float
    fitter: str
    method: str

    @property
    def dataset(self) -> str:
        return f"Adult-{self.stream}-bs-{self.B}"


def _seed(base: int, spec: RunSpec) -> int:
    from dpstream.audit.protocol import derive_seed

    return derive_seed(base, spec.dataset, f"{spec.epsilon:g}", spec.fitter, spec.method)


def _fitter(name: str, iters: int) -> DatasetFitter:
    if name == "mw":
        return MultiplicativeWeights()
    from dpstream.tabular.pgm import PrivatePGM

    return PrivatePGM(iters=iters)


def _counter(method: str) -> CounterFactory:
    if method == "proposed-block":
        return lambda eps, noise: UnboundedBlockCounter(eps, noise=noise)
    return lambda eps, noise: SimpleCounter(eps, noise=noise)


def run_one(spec: RunSpec, domain: Domain, steps: Sequence[StreamStep], k: int, seed: int,
            fitter: DatasetFitter, zero: ZeroRule = "skip", floor: float = 1e-3,
            bar: Progress | None = None) -> list[dict[str, float]]:
    """Run one method on one stream; metrics at every time step (003-sec7.3); ``bar`` counts the steps."""
    W: list[Workload] = all_workloads(domain, 2)
    sizes = [float(s.size) for s in steps]                    # the public batch schedule of the construction
    total = TotalRule.public(lambda t: sizes[t - 1] if t <= len(sizes) else 0.0)
    noise: NoiseSource = InsecureSeededNoise(seed)           # INSECURE: simulation only
    alg: StreamingMWEM | MainAlgorithm
    if spec.method == "baseline":
        alg = StreamingMWEM(domain, W, k, spec.epsilon, noise=noise, total=total, fitter=fitter, bias=BiasRule.PRINTED)
    else:
        alg = MainAlgorithm(domain, W, k, spec.epsilon, noise=noise, total=total, fitter=fitter,
                            counter_factory=_counter(spec.method))
    truth = CumulativeMarginals(domain, [w.columns for w in W])
    rows = []
    for t, step in enumerate(steps, start=1):
        g = alg.step(step)
        truth.update(step)
        metrics = stream_metrics(W, truth.tables, truth.total, g, zero=zero, floor=floor)
        rows.append({"t": float(t), **metrics.as_dict()})
        if bar is not None:
            bar.update(1)
    return rows


@dataclass(frozen=True, eq=False)
class IndependentDataset:
    """The product of the exact one-way marginals of f_t, scaled to |f_t| (a NON-private reference release).

    Used only by ``--relwe-reference``: a release whose AvgWE is close to the paper's, against which the
    RelWE conventions are compared (docs/tabular.md, "RelWE").
    """

    domain: Domain
    one_way: tuple[npt.NDArray[np.float64], ...]
    total: float

    def marginal(self, columns: tuple[int, ...]) -> npt.NDArray[np.float64]:
        table = np.asarray(self.total, dtype=np.float64)
        for c in columns:
            share = self.one_way[c] / self.total if self.total > 0 else self.one_way[c] * 0.0
            table = np.multiply.outer(table, share)
        return np.asarray(table, dtype=np.float64)


RELWE_CONVENTIONS: tuple[tuple[str, ZeroRule, float], ...] = (
    ("printed formula, q(f_t) = 0 skipped", "skip", 1e-3),
    ("denominator max(q(f_t), 0.001 n_t) (001-sec5.4)", "floor", 1e-3),
    ("denominator max(q(f_t), 0.01 n_t) (001-sec5.4's '1%')", "floor", 1e-2),
)


def relwe_reference(domain: Domain, steps: Sequence[StreamStep], times: Sequence[int]
                    ) -> list[tuple[int, float, str, dict[str, float]]]:
    """The four metrics of :class:`IndependentDataset` at the given times, under each RelWE convention."""
    W: list[Workload] = all_workloads(domain, 2)
    truth = CumulativeMarginals(domain, [w.columns for w in W] + [(c,) for c in range(domain.p)])
    out = []
    for t, step in enumerate(steps, start=1):
        truth.update(step)
        if t in times:
            g = IndependentDataset(domain, tuple(truth.tables[(c,)] for c in range(domain.p)), truth.total)
            for label, zero, floor in RELWE_CONVENTIONS:
                m = stream_metrics(W, truth.tables, truth.total, g, zero=zero, floor=floor)
                out.append((t, truth.total, label, m.as_dict()))
    return out


def _relwe_report(data_dir: Path, B: int, seed: int) -> str:
    domain, records = _load(data_dir, None)
    steps = adult_randomized(domain, records, B, seed)
    times = sorted({min(40, len(steps)), len(steps)})
    lines = [f"# RelWE conventions on a non-private reference release (Adult-randomized-bs-{B}, all "
             f"{domain.p} attributes, all 2-way workloads)", "",
             "g_t = product of the exact one-way marginals of f_t (independence model, NOT private); "
             "n_t = |f_t|; answers normalised by n_t.", "",
             "| t | records in f_t | RelWE convention | AvgWE | MaxWE | AvgRelWE | MaxRelWE |",
             "|---|---|---|---|---|---|---|"]
    for t, n, label, m in relwe_reference(domain, steps, times):
        lines.append(f"| {t} | {n:.0f} | {label} | {m['AvgWE']:.4f} | {m['MaxWE']:.4f} | {m['AvgRelWE']:.4f} | "
                     f"{m['MaxRelWE']:.4f} |")
    paper = {m: PAPER_TABLES_1_2[(f"Adult-randomized-bs-{B}", 1.0, m)] for m in METRIC_NAMES
             if (f"Adult-randomized-bs-{B}", 1.0, m) in PAPER_TABLES_1_2}
    if paper:
        lines += ["", f"003 Tables 1-2, Adult-randomized-bs-{B}, eps = 1 (Baseline / Proposed): "
                  + ", ".join(f"{m} {b:.4f} / {p:.4f}" for m, (b, p) in paper.items())]
    return "\n".join(lines)


def _load(data_dir: Path, columns: Sequence[str] | None) -> tuple[Domain, IntArray]:
    with materialized(DATA, data_dir) as paths:
        try:
            return load_table_csv(paths[TABLE], paths[DOMAIN], columns=columns)
        except DataRowError as exc:  # name the file in the data dir, not its temporary copy
            raise DataRowError(TABLE.shipped(data_dir), exc.line, exc.field, exc.rule, exc.value) from exc


def _streams(domain: Domain, records: IntArray, B: int, seed: int, horizon: int | None
             ) -> dict[str, list[StreamStep]]:
    out = {"randomized": adult_randomized(domain, records, B, seed), "ordered": adult_ordered(domain, records, B)}
    return {name: steps[:horizon] if horizon else steps for name, steps in out.items()}


def _last10(rows: Sequence[dict[str, float]]) -> dict[str, float]:
    tail = rows[-10:]
    return {m: float(np.mean([r[m] for r in tail])) for m in METRIC_NAMES}


def _fmt(x: float | None) -> str:
    return "-" if x is None or not math.isfinite(x) else f"{x:.4f}"


def _side_by_side(results: dict[RunSpec, list[dict[str, float]]], fitter: str, epsilons: Sequence[float],
                  datasets: Sequence[str], methods: tuple[str, str],
                  paper_table: dict[tuple[str, float, str], tuple[float, float]]) -> list[str]:
    """Rows '| dataset | eps | metric | ours (2 methods) | paper (2 columns) |' in the layout of 003 Tables 1-3."""
    lines = []
    for ds in datasets:
        for eps in epsilons:
            a, b = (_find(results, ds, eps, fitter, method) for method in methods)
            for m in METRIC_NAMES:
                paper = paper_table.get((ds, eps, m))
                lines.append(f"| {ds} | {eps:g} | {m} | {_fmt(a.get(m) if a else None)} | "
                             f"{_fmt(b.get(m) if b else None)} | {_fmt(paper[0] if paper else None)} | "
                             f"{_fmt(paper[1] if paper else None)} |")
    return lines


def _tables(results: dict[RunSpec, list[dict[str, float]]], fitters: Sequence[str], epsilons: Sequence[float],
            datasets: Sequence[str]) -> str:
    lines: list[str] = []
    for fitter in fitters:
        name = "MW on a 5-attribute projection" if fitter == "mw" else "PGM on all 15 attributes"
        lines += [f"### Tables 1-2 layout, A_Dataset = {name}", "",
                  "| Dataset | eps | Metric | Baseline (ours) | Proposed (ours) | Baseline (paper) "
                  "| Proposed (paper) |",
                  "|---|---|---|---|---|---|---|"]
        lines += _side_by_side(results, fitter, epsilons, datasets, ("baseline", "proposed-simple"), PAPER_TABLES_1_2)
        lines += ["", f"### Table 3 layout (Simple vs unbounded block counter), A_Dataset = {name}", "",
                  "| Dataset | eps | Metric | Simple (ours) | Block (ours) | Simple (paper) | Block (paper) |",
                  "|---|---|---|---|---|---|---|"]
        lines += _side_by_side(results, fitter, epsilons, datasets, ("proposed-simple", "proposed-block"),
                               PAPER_TABLE_3)
        lines.append("")
    return "\n".join(lines)


PGM_MISSING = ("PGM not run: the optional package mbi is not installed. Install it with pip install 'dpstream[pgm]' "
               "(in a clone: pip install -e '.[pgm]'), then: dpstream reproduce tabular-adult --fitters pgm")
PAPER_COLUMNS = {"baseline": (PAPER_TABLES_1_2, 0), "proposed-simple": (PAPER_TABLES_1_2, 1),
                 "proposed-block": (PAPER_TABLE_3, 1)}
"""Where the paper's value of each method is: (table, column)."""


def paper_ratios(results: dict[RunSpec, list[dict[str, float]]]) -> dict[tuple[str, str], list[float]]:
    """(fitter, metric) -> ours / paper over every cell of ``results`` that has a paper value."""
    out: dict[tuple[str, str], list[float]] = {}
    for spec, rows in results.items():
        table, column = PAPER_COLUMNS[spec.method]
        ours = _last10(rows) if rows else {}
        for m in METRIC_NAMES:
            paper = table.get((spec.dataset, spec.epsilon, m))
            if paper is not None and paper[column] > 0 and math.isfinite(ours.get(m, math.nan)):
                out.setdefault((spec.fitter, m), []).append(ours[m] / paper[column])
    return out


def _notes(results: dict[RunSpec, list[dict[str, float]]], skipped: dict[str, str], full: bool,
           horizons: dict[str, str], stream_lengths: dict[int, int]) -> str:
    """What the tables can and cannot be compared with, why cells are empty, and the commands that fill them."""
    lines = ["## Reading these tables", ""]
    if not full:
        lengths = " and ".join(f"{n} (B = {B})" for B, n in sorted(stream_lengths.items()))
        epsilons = ", ".join(sorted({f"{s.epsilon:g}" for s in results}))
        lines.append(f"* REDUCED configuration (the default unless --full): eps = {epsilons} and the first "
                     f"{' / '.join(horizons.values())} time steps of streams of {lengths} steps (fewer than 10 "
                     "steps: the average is over all of them); the paper averages the last 10 steps of whole streams "
                     "at eps = 0.5, 1, 2, 4, and errors fall over time. Whole streams, all four eps: "
                     "`dpstream reproduce tabular-adult --full` (hours of CPU with PGM); MW only: "
                     "`dpstream reproduce tabular-adult --full --fitters mw` (minutes); PGM on whole "
                     "streams, B = 200, eps = 1: `dpstream reproduce tabular-adult --fitters pgm --batch-sizes 200 "
                     "--epsilons 1 --horizon 245 --pgm-horizon 245` (about 30 minutes; docs/tabular.md).")
    ratios = paper_ratios(results)
    for fitter in dict.fromkeys(s.fitter for s in results):
        spans = [f"{m} x{min(r):.2g}-x{max(r):.2g}" for m in METRIC_NAMES if (r := ratios.get((fitter, m)))]
        if spans:
            lines.append(f"* Ours / paper ({fitter.upper()}, over the cells with a paper value): " + ", ".join(spans)
                         + ".")
    lines.append("* Why ours differ besides run length (docs/tabular.md, \"How and why ours differ from the "
                 "paper's\"): MW runs on a 5-attribute projection of Adult (the paper's numbers are PGM on all 15 "
                 "attributes) and, as printed, converges slowly; RelWE is the printed formula with q(f_t) = 0 "
                 "skipped, where rare cells dominate; the paper most likely floors small counts "
                 "(`--relwe-zero floor --relwe-floor 0.01`).")
    missing_paper = sorted({s.dataset for s in results if s.method == "proposed-block"
                            and all((s.dataset, s.epsilon, m) not in PAPER_TABLE_3 for m in METRIC_NAMES)})
    if missing_paper:
        lines.append(f"* \"-\" in Simple (paper) / Block (paper) for {', '.join(missing_paper)}: 003 Table 3 has no "
                     "such rows (it reports the block counter for B = 50 only); no command can fill them.")
    other = sorted({f"{s.epsilon:g}" for s in results if (s.dataset, s.epsilon, "AvgWE") not in PAPER_TABLES_1_2
                    and s.dataset in {k[0] for k in PAPER_TABLES_1_2}})
    if other:
        lines.append(f"* \"-\" in the paper columns for eps = {', '.join(other)}: 003 reports eps = 0.5, 1, 2, 4 only.")
    if any(not math.isfinite(v) for rows in results.values() if rows for v in _last10(rows).values()):
        lines.append("* \"-\" in an \"ours\" column: the metric is undefined there (no query with q(f_t) > 0).")
    lines += [f"* {reason}" for reason in skipped.values()]
    return "\n".join(lines) + "\n"


def _find(results: dict[RunSpec, list[dict[str, float]]], ds: str, eps: float, fitter: str, method: str
          ) -> dict[str, float] | None:
    for spec, rows in results.items():
        if spec.dataset == ds and spec.epsilon == eps and spec.fitter == fitter and spec.method == method and rows:
            return _last10(rows)
    return None


def _plot(results: dict[RunSpec, list[dict[str, float]]], out: Path) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    groups: dict[tuple[str, float, str], dict[str, list[dict[str, float]]]] = {}
    for spec, rows in results.items():
        groups.setdefault((spec.dataset, spec.epsilon, spec.fitter), {})[spec.method] = rows
    paths = []
    for (ds, eps, fitter), runs in sorted(groups.items()):
        fig, axes = plt.subplots(1, 4, figsize=(16, 3.4))
        for ax, metric in zip(axes, ("AvgWE", "MaxWE", "AvgRelWE", "MaxRelWE"), strict=True):
            for method, rows in sorted(runs.items()):
                ax.plot([r["t"] for r in rows], [r[metric] for r in rows], label=method)
            ax.set_title(metric)
            ax.set_xlabel("t")
        axes[0].legend(fontsize=7)
        fig.suptitle(f"{ds}, eps={eps:g}, A_Dataset={fitter} (insecure seeded noise)")
        fig.tight_layout()
        path = out / f"metrics-{ds}-eps{eps:g}-{fitter}.png"
        fig.savefig(path, dpi=90)
        plt.close(fig)
        paths.append(path)
    return paths


def _attribute(text: str) -> str:
    if not text.strip():
        raise argparse.ArgumentTypeError(f"attribute names must not be empty (got {text!r})")
    return text.strip()


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--full", action="store_true", help="the paper's grid: eps 0.5,1,2,4 and whole streams")
    parser.add_argument("--epsilons", type=comma_list(positive_float), nargs="+", action=Flatten, default=None,
                        help="override the eps grid")
    parser.add_argument("--batch-sizes", type=comma_list(positive_int), nargs="+", action=Flatten, default=[50, 200],
                        help="batch sizes B (default: 50 200)")
    parser.add_argument("--horizon", type=positive_int, default=None,
                        help=f"time steps per stream (default {REDUCED_HORIZON}; --full: all)")
    parser.add_argument("--pgm-horizon", type=positive_int, default=None,
                        help=f"time steps with PGM (default {REDUCED_PGM_HORIZON}; --full: all)")
    parser.add_argument("--fitters", nargs="+", choices=FITTERS, default=None,
                        help="A_Dataset: mw, pgm (default: both; pgm needs the extra 'pgm', else it is skipped)")
    parser.add_argument("--k", type=positive_int, default=3, help="selections per time step (not stated in 003)")
    parser.add_argument("--pgm-iters", type=positive_int, default=100, help="mirror-descent iterations per PGM fit")
    parser.add_argument("--mw-columns", type=comma_list(_attribute), default=list(MW_COLUMNS),
                        help="attributes of the MW projection, comma-separated (default: %(default)s)")
    parser.add_argument("--seed", type=non_negative_int, default=0,
                        help="seed of the (insecure) simulation noise and shuffles")
    parser.add_argument("--relwe-zero", choices=["skip", "floor"], default="skip",
                        help="RelWE for q(f_t) = 0: skip the query (default) or use max(q(f_t), floor)")
    parser.add_argument("--relwe-floor", type=fraction, default=1e-3,
                        help="the floor of --relwe-zero floor, as a share of |f_t|, in (0, 1] (default 0.001; "
                             "001-sec5.4)")
    parser.add_argument("--relwe-reference", action="store_true",
                        help="only print the metrics of a non-private reference release (the product of the exact "
                             "one-way marginals) under the RelWE conventions, for each batch size")


def _pgm_installed() -> bool:
    """Whether mbi can be found (cheap: nothing is imported; :func:`mbi_available` imports it)."""
    return importlib.util.find_spec("mbi") is not None


def check(args: argparse.Namespace) -> None:
    """Before any work: the data are there and intact, the MW attributes exist, k fits the workloads, and an
    explicitly requested PGM can run."""
    check_files(DATA, args.data_dir)
    try:
        names = list(json.loads(verified_bytes(DOMAIN, args.data_dir)))
    except ValueError as exc:
        raise DPStreamInputError("--data-dir", f"{DOMAIN.name} is not a JSON object of attribute sizes ({exc})",
                                 str(DOMAIN.folder(args.data_dir))) from exc
    fitters = args.fitters or list(FITTERS)
    if "mw" in fitters:
        unknown = [c for c in args.mw_columns if c not in names]
        if unknown:
            raise DPStreamInputError("--mw-columns", f"not attributes of Adult ({', '.join(names)})",
                                     ",".join(unknown))
        if len(set(args.mw_columns)) != len(args.mw_columns) or len(args.mw_columns) < 2:
            raise DPStreamInputError("--mw-columns", "needs at least 2 distinct attributes (2-way workloads)",
                                     ",".join(args.mw_columns))
    for fitter in fitters:
        p = len(args.mw_columns) if fitter == "mw" else len(names)
        if args.k > p * (p - 1) // 2:
            raise DPStreamInputError("--k", f"must not exceed the {p * (p - 1) // 2} 2-way workloads of "
                                     f"{fitter.upper()}'s {p} attributes", args.k)
    if args.fitters and "pgm" in args.fitters and not _pgm_installed():
        raise DPStreamInputError("--fitters", "pgm needs the optional package mbi: pip install 'dpstream[pgm]' "
                                 "(or pip install -e '.[pgm]' in a clone)", "pgm")


def run(args: argparse.Namespace) -> int:
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    epsilons = args.epsilons or ([0.5, 1.0, 2.0, 4.0] if args.full else [1.0])
    horizon = args.horizon if args.horizon is not None else (None if args.full else REDUCED_HORIZON)
    pgm_horizon = args.pgm_horizon if args.pgm_horizon is not None else (None if args.full else REDUCED_PGM_HORIZON)
    if args.relwe_reference:
        report = "\n\n".join(_relwe_report(args.data_dir, B, args.seed) for B in args.batch_sizes)
        (out / "relwe_reference.md").write_text(report + "\n", encoding="utf-8")
        print(report)
        return 0
    print("NOTE: insecure seeded noise (InsecureSeededNoise) -- a simulation, not a private release.", flush=True)
    fitters = args.fitters or list(FITTERS)
    print(f"tabular-adult: reading {TABLE.name} from {args.data_dir}" + (" and loading mbi/JAX for PGM"
          if "pgm" in fitters else ""), file=sys.stderr, flush=True)
    data: dict[str, tuple[Domain, IntArray]] = {}
    skipped: dict[str, str] = {}
    if "mw" in fitters:
        data["mw"] = _load(args.data_dir, args.mw_columns)
    if "pgm" in fitters:
        from dpstream.tabular.pgm import mbi_available

        if not mbi_available():
            skipped["pgm"] = PGM_MISSING
            print(f"tabular-adult: {PGM_MISSING}", file=sys.stderr)
        else:
            data["pgm"] = _load(args.data_dir, None)
    specs: list[tuple[RunSpec, list[StreamStep], Domain]] = []
    datasets: list[str] = []
    for fitter, (domain, records) in data.items():
        for B in args.batch_sizes:
            h = horizon if fitter == "mw" else (pgm_horizon if pgm_horizon is not None else horizon)
            streams = _streams(domain, records, B, args.seed, h)
            for name, steps in streams.items():
                for eps in epsilons:
                    for method in METHODS:
                        spec = RunSpec(name, B, eps, fitter, method)
                        specs.append((spec, steps, domain))
                        if spec.dataset not in datasets:
                            datasets.append(spec.dataset)
    results: dict[RunSpec, list[dict[str, float]]] = {}
    started = time.time()
    what = (f"{len(specs)} runs (methods x streams x eps x A_Dataset {'/'.join(data)}), "
            f"{sum(len(steps) for _, steps, _ in specs)} time steps, noise: {noise_mode(False, args.seed)}")
    with (out / "metrics.csv").open("w", newline="", encoding="utf-8") as fh, \
            progress(sum(len(steps) for _, steps, _ in specs), "tabular-adult", what) as bar:
        writer = csv.writer(fh)
        writer.writerow(["dataset", "eps", "fitter", "method", "t", *METRIC_NAMES])
        for spec, steps, domain in specs:
            bar.set_postfix_str(f"{spec.dataset} eps={spec.epsilon:g} {spec.fitter} {spec.method}")
            rows = run_one(spec, domain, steps, args.k, _seed(args.seed, spec), _fitter(spec.fitter, args.pgm_iters),
                           args.relwe_zero, args.relwe_floor, bar)
            results[spec] = rows
            for r in rows:
                writer.writerow([spec.dataset, spec.epsilon, spec.fitter, spec.method, int(r["t"]),
                                 *[f"{r[m]:.6g}" for m in METRIC_NAMES]])
    table = _tables(results, list(data), epsilons, datasets)
    horizons = {"mw": f"{horizon or 'all'} (MW)", "pgm": f"{pgm_horizon or horizon or 'all'} (PGM)"}
    header = (f"# tabular-adult: last-10-steps averages (k={args.k}, horizon "
              f"{' / '.join(horizons[f] for f in data)}, RelWE zero rule: {args.relwe_zero}"
              f"{f' {args.relwe_floor:g}' if args.relwe_zero == 'floor' else ''}, "
              f"{time.time() - started:.0f} s)\n\n"
              f"Noise: {noise_mode(False, args.seed)}. Command: `{command_line(args)}`\n\n")
    n_records = next(iter(data.values()))[1].shape[0] if data else 0
    notes = _notes(results, skipped, args.full, {f: horizons[f] for f in data},
                   {B: -(-n_records // B) for B in args.batch_sizes})
    (out / "table.md").write_text(header + table + "\n" + notes + "\n", encoding="utf-8")
    _plot(results, out)
    print(header + table)
    print(notes)
    return 0


EXPERIMENT = Experiment(
    name="tabular-adult",
    help="003 Tables 1-3: StreamingMWEM vs Algorithm 3 (Simple/block counters) on Adult streams, MW and PGM",
    add_arguments=add_arguments,
    run=run,
    anchors=("003-alg2", "003-alg3", "003-alg4"),
    data=DATA,
    check=check,
)

