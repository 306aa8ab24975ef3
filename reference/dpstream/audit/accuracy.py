"""Accuracy-bound checks: does |error(t)| <= alpha(t, beta) hold with probability >= 1 - beta?

Run the implementation n times on one input, count at every checked time t the runs whose
error exceeds the bound, and put a one-sided Clopper-Pearson lower bound on the exceedance
probability (level a / #times, Bonferroni over times). The check fails when some lower bound
exceeds beta: the theorem's bound is then violated with confidence 1 - a. Tightness is the
empirical (1 - beta)-quantile of |error(t)| divided by alpha(t, beta): 1 means the bound is
exact, small values mean it is loose.

Explicit bounds for linear release models are in :mod:`dpstream.audit.bounds`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from dpstream.audit.protocol import Encoder, Transcript, flatten
from dpstream.audit.registry import CheckKind, CheckResult
from dpstream.audit.stats import clopper_pearson_lower, clopper_pearson_upper
from dpstream.errors import DPStreamInputError, require_probability

__all__ = ["AccuracyBound", "accuracy_check"]

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class AccuracyBound:
    """alpha(t, beta) at every release index (``values[i]`` bounds release i), with its provenance.

    ``name`` says which statement and which inequality produced it (e.g. "001 App. D via Chan et al.
    2011 Cor 2.9"). ``times`` restricts the check to some release indices (default: all).
    """

    name: str
    beta: float
    values: tuple[float, ...]
    times: tuple[int, ...] | None = None

    def __post_init__(self) -> None:
        require_probability("beta", self.beta)
        if not self.values or any(not v > 0 for v in self.values):
            raise DPStreamInputError("values", "must be non-empty and positive", self.values)


def accuracy_check(
    transcripts: Sequence[Transcript],
    truth: npt.ArrayLike,
    bound: AccuracyBound,
    level: float,
    *,
    encode: Encoder = flatten,
) -> CheckResult:
    """Exceedance frequencies with Clopper-Pearson lower bounds against ``bound.beta``, and tightness."""
    R = np.array([encode(t) for t in transcripts], dtype=np.float64)
    target = np.asarray(truth, dtype=np.float64)
    alpha = np.asarray(bound.values, dtype=np.float64)
    if R.shape[1] != target.size or alpha.size != target.size:
        raise DPStreamInputError("truth", f"must match the {R.shape[1]} releases and the bound", target.size)
    idx = np.arange(target.size) if bound.times is None else np.asarray(bound.times, dtype=np.int64)
    errors = np.abs(R[:, idx] - target[idx])
    n = errors.shape[0]
    exceed = (errors > alpha[idx]).sum(axis=0)
    per_level = level / idx.size
    lowers = np.array([clopper_pearson_lower(int(k), n, per_level) for k in exceed])
    quant = np.quantile(errors, 1.0 - bound.beta, axis=0)
    tight = quant / alpha[idx]
    worst = int(np.argmax(lowers))
    passed = bool(np.all(lowers <= bound.beta))
    freq = exceed / n
    upper_worst = clopper_pearson_upper(int(exceed[worst]), n, per_level)
    detail = (f"{bound.name}, beta={bound.beta:g}: {n} runs, {idx.size} times; max exceedance "
              f"{float(freq.max()):.4f}; at release {int(idx[worst]) + 1}: {int(exceed[worst])}/{n}, CP interval "
              f"[{lowers[worst]:.4f}, {upper_worst:.4f}] (level {per_level:.2g} each); "
              f"tightness q_(1-beta)/alpha in [{float(tight.min()):.3f}, {float(tight.max()):.3f}]")
    data = {
        "bound_name": bound.name, "beta": bound.beta, "t": [int(i) + 1 for i in idx],
        "bound": [float(v) for v in alpha[idx]], "quantile": [float(v) for v in quant],
        "mean_abs_error": [float(v) for v in errors.mean(axis=0)], "exceed_freq": [float(v) for v in freq],
        "tightness_max": float(tight.max()), "tightness_min": float(tight.min()), "runs": n,
    }
    return CheckResult(CheckKind.ACCURACY, passed, float(freq.max()), bound.beta, detail, data)
