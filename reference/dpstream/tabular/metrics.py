"""The evaluation metrics of 003-sec7.3: WE, RelWE, AvgWE, MaxWE, AvgRelWE, MaxRelWE.

WE(W, f, g, t)    = 1/|W| sum_{q in W} |q(f_t) - q(g_t)|
RelWE(W, f, g, t) = 1/|W| sum_{q in W} |(q(f_t) - q(g_t)) / q(f_t)|
AvgWE / MaxWE / AvgRelWE / MaxRelWE = mean / max over the workloads W in Q.

Two choices the paper leaves open, stated here and in docs/tabular.md:

* **Scale.** The tables of 003 report WE values around 0.01 for streams of tens of
  thousands of records, so the answers are fractions, not counts. ``normalize=True``
  (default) divides q(f_t) by |f_t| and q(g_t) by |g_t| (each dataset as a
  distribution); ``normalize=False`` compares raw counts.
* **Zero true counts in RelWE.** The relative error of a query with q(f_t) = 0 is
  undefined. ``zero="skip"`` (default) averages only over the queries of W with
  q(f_t) != 0 (RelWE(W) = 0 if there are none); ``zero="floor"`` replaces the
  denominator by max(q(f_t), ``floor``) where ``floor`` is in the same units as the
  answers (for normalised answers, e.g. 0.001 = 0.1 % of the records, the convention of
  001-sec5.4).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from dpstream.errors import DPStreamInputError, require_positive_finite
from dpstream.tabular.datasets import SyntheticDataset, answer
from dpstream.tabular.domain import Domain
from dpstream.tabular.queries import FloatArray, Workload
from dpstream.tabular.stream import DifferentialDataset, StreamStep

__all__ = ["METRIC_NAMES", "CumulativeMarginals", "Metrics", "ZeroRule", "relative_workload_error", "stream_metrics",
           "workload_error"]

METRIC_NAMES = ("AvgRelWE", "AvgWE", "MaxRelWE", "MaxWE")
"""In the row order of 003 Tables 1-3."""

ZeroRule = Literal["skip", "floor"]


def workload_error(true: FloatArray, synthetic: FloatArray) -> float:
    """WE: the mean absolute error over the queries of one workload."""
    t, s = np.asarray(true, dtype=np.float64), np.asarray(synthetic, dtype=np.float64)
    if t.shape != s.shape or t.size == 0:
        raise DPStreamInputError("synthetic", f"must have the workload's shape {t.shape}", s.shape)
    return float(np.abs(t - s).mean())


def relative_workload_error(true: FloatArray, synthetic: FloatArray, zero: ZeroRule = "skip",
                            floor: float = 1e-3) -> float:
    """RelWE with the stated handling of q(f_t) = 0 (module docstring)."""
    t, s = np.asarray(true, dtype=np.float64), np.asarray(synthetic, dtype=np.float64)
    if t.shape != s.shape or t.size == 0:
        raise DPStreamInputError("synthetic", f"must have the workload's shape {t.shape}", s.shape)
    if zero == "skip":
        nz = t != 0
        return float(np.mean(np.abs((t[nz] - s[nz]) / t[nz]))) if np.any(nz) else 0.0
    if zero == "floor":
        floor = require_positive_finite("floor", floor)
        return float(np.mean(np.abs(t - s) / np.maximum(np.abs(t), floor)))
    raise DPStreamInputError("zero", "must be 'skip' or 'floor'", zero)


@dataclass(frozen=True)
class Metrics:
    """The four aggregates at one time (003-sec7.3)."""

    AvgWE: float
    MaxWE: float
    AvgRelWE: float
    MaxRelWE: float

    def as_dict(self) -> dict[str, float]:
        return {"AvgWE": self.AvgWE, "MaxWE": self.MaxWE, "AvgRelWE": self.AvgRelWE, "MaxRelWE": self.MaxRelWE}


def stream_metrics(workloads: Sequence[Workload], true: Mapping[tuple[int, ...], FloatArray], true_total: float,
                   g: SyntheticDataset, *, normalize: bool = True, zero: ZeroRule = "skip",
                   floor: float = 1e-3) -> Metrics:
    """AvgWE, MaxWE, AvgRelWE, MaxRelWE of g_t against f_t given f_t's marginal tables ``true``."""
    if not workloads:
        raise DPStreamInputError("Q", "must hold at least one workload", workloads)
    g_total = g.total
    we: list[float] = []
    rel: list[float] = []
    for W in workloads:
        t_ans = W.from_table(true[W.columns])
        g_ans = answer(W, g)
        if normalize:
            t_ans = t_ans / true_total if true_total > 0 else t_ans * 0.0
            g_ans = g_ans / g_total if g_total > 0 else g_ans * 0.0
        we.append(workload_error(t_ans, g_ans))
        rel.append(relative_workload_error(t_ans, g_ans, zero, floor))
    return Metrics(float(np.mean(we)), float(np.max(we)), float(np.mean(rel)), float(np.max(rel)))


class CumulativeMarginals:
    """The true f_t's marginal tables on fixed cliques, updated with ∇f_t (for metrics over time)."""

    def __init__(self, domain: Domain, cliques: Sequence[tuple[int, ...]]) -> None:
        self.domain = domain
        self.tables: dict[tuple[int, ...], FloatArray] = {c: np.zeros(domain.shape_of(c)) for c in cliques}
        self.total = 0.0

    def update(self, step: StreamStep) -> None:
        diff = DifferentialDataset(self.domain, step)
        for c in self.tables:
            self.tables[c] = self.tables[c] + diff.marginal(c)
        self.total += step.size
