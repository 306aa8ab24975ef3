"""A_Dataset: find a dataset given noisy query measurements (003-sec4, 003-sec6.3, 000-sec4.2).

One protocol for every fitting subroutine, so that each plugs into 003-alg1, 003-alg2
and 003-alg3 alike::

    fit(measurements, init, total) -> SyntheticDataset

``measurements`` are all the (query, noisy value) pairs of the current round in the
order they were selected (the newest last), ``init`` the dataset to start from
(h_{i-1} in 003-alg1 L10, h_{t,l-1} in 003-alg3 L18) and ``total`` the mass the result
must have ("|f| times the distribution", 003-mw). The caller decides ``total``
(see :mod:`dpstream.tabular.totals`): reading the true size of private data there
would leak it. A_Dataset itself never sees the data, so it is post-processing and
"is not required to satisfy differential privacy" (003-sec6.3).

Implementations:

* :class:`MultiplicativeWeights` — 003-mw / 003-alg2 L20, on the explicit domain;
* :class:`InformationProjection` — exact fitting by iterative proportional fitting
  (used by tests: "no noise and exact fitting tracks the true stream");
* :class:`dpstream.tabular.pgm.PrivatePGM` — a graphical model fitted by ``mbi``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol, runtime_checkable

import numpy as np

from dpstream.arithmetic import kernel, note_step, recording_active
from dpstream.errors import DPStreamInputError, require_finite_real, require_int_at_least, require_positive_finite
from dpstream.tabular.datasets import ExplicitDataset, SyntheticDataset, answer, explicit_counts
from dpstream.tabular.domain import Domain
from dpstream.tabular.queries import FloatArray, MarginalQuery, Query, Workload

__all__ = [
    "DatasetFitter",
    "InformationProjection",
    "Measurement",
    "MultiplicativeWeights",
    "rescaled_counts",
]


@dataclass(frozen=True, eq=False)
class Measurement:
    """A noisy measurement m of query q: ``value`` has length ``query.dim``.

    ``noise_scale`` is the scale of the Laplace noise the value carries (or its
    standard-deviation equivalent); fitters may use it as a weight.
    """

    query: Query
    value: FloatArray
    noise_scale: float = 1.0

    def __post_init__(self) -> None:
        arr = np.asarray(self.value, dtype=np.float64).reshape(-1)
        if arr.shape[0] != self.query.dim or not np.all(np.isfinite(arr)):
            raise DPStreamInputError("value", f"must be {self.query.dim} finite numbers", self.value)
        object.__setattr__(self, "value", arr)


@runtime_checkable
class DatasetFitter(Protocol):
    """A_Dataset (003-alg1 L1, 003-alg3 L1)."""

    def fit(self, measurements: Sequence[Measurement], init: SyntheticDataset, total: float) -> SyntheticDataset:
        """A dataset of mass ``total`` complying with ``measurements``, starting from ``init``."""
        ...


def rescaled_counts(init: SyntheticDataset, total: float) -> FloatArray:
    """init as an explicit array rescaled to mass ``total`` (uniform if init has no mass)."""
    counts = explicit_counts(init)
    mass = kernel().total(counts)
    if mass <= 0.0 or np.any(counts < 0):
        counts = np.ones_like(counts)
        mass = float(counts.size)
    return counts * (total / mass)


def _cell_delta(query: Query, domain: Domain, residual: FloatArray) -> FloatArray:
    """sum_{q' in query} q'(x) * residual_{q'} as a table on the query's columns."""
    shape = domain.shape_of(query.columns)
    if isinstance(query, MarginalQuery):
        table = np.zeros(shape, dtype=np.float64)
        table[query.values] = residual[0]
        return table
    if isinstance(query, Workload):
        return residual.reshape(shape)
    raise DPStreamInputError("query", "must be a MarginalQuery or a Workload", query)


def _broadcast(table: FloatArray, columns: tuple[int, ...], domain: Domain) -> FloatArray:
    """A table on ``columns`` viewed as an array over the whole domain."""
    shape = [1] * domain.p
    for c in columns:
        shape[c] = domain.sizes[c]
    return table.reshape(shape)


@dataclass(frozen=True)
class MultiplicativeWeights:
    """Multiplicative weights (003-mw, 003-alg2 L20): one MW step per measurement.

    h_new(x) ∝ h(x) exp( q(x) (m - q(h)) / (2 N) ), rescaled to total N. For a workload
    the queries partition X, so the exponent is (m_{q(x)} - q_{(x)}(h)) / (2N) for the
    one query q_{(x)} of the workload that contains x.

    ``updates="newest"`` (default) applies the step for the newest measurement only,
    exactly the formula of 003-mw and 003-alg2 L20; ``"all"`` applies one step for each
    measurement in order (one pass, as in Hardt et al.'s MWEM with re-used
    measurements; with init = h_0 it reproduces the whole 003-alg1 chain).
    ``init`` is first rescaled to mass N, so q(h) is compared on the same scale as m
    (for h_0 = 1 of 003-alg1 L3 this is the uniform distribution times N).
    """

    updates: Literal["newest", "all"] = "newest"

    def __post_init__(self) -> None:
        if self.updates not in ("newest", "all"):
            raise DPStreamInputError("updates", "must be 'newest' or 'all'", self.updates)

    def fit(self, measurements: Sequence[Measurement], init: SyntheticDataset, total: float) -> SyntheticDataset:
        N = require_finite_real("total", total)
        if N < 0:
            raise DPStreamInputError("total", "must be >= 0", total)
        domain = init.domain
        p = rescaled_counts(init, 1.0)                                  # h_{i-1} / |h_{i-1}| (a distribution)
        chosen = list(measurements[-1:]) if self.updates == "newest" else list(measurements)
        note_step("003-fit", N=N)                                       # the fit's mass, for the error model
        if N == 0.0:
            return ExplicitDataset(domain, np.zeros(domain.sizes))
        arithmetic = kernel()
        log_p = arithmetic.log(p)
        for meas in chosen:
            q_h = N * answer(meas.query, ExplicitDataset(domain, p))   # q(h) for h = N p
            residual = meas.value - q_h                                 # m - q(h)
            with np.errstate(over="ignore"):
                exponent = _cell_delta(meas.query, domain, residual) / (2.0 * N)
            exponent = np.clip(exponent, -1e300, 1e300)               # N tiny: a step to the extreme cells
            log_w = log_p + _broadcast(exponent, meas.query.columns, domain)
            top = float(np.max(log_w))                                 # normalise in log space (no overflow)
            if recording_active():                                     # operand sizes for the error model
                finite = log_p[np.isfinite(log_p)]
                lowest = log_w[np.isfinite(log_w)] - top
                note_step("003-mw", N=N, A=float(np.max(np.abs(exponent))), n=float(p.size),
                          L=float(np.max(np.abs(finite))) if finite.size else 0.0,
                          low=float(np.min(lowest)) if lowest.size else 0.0)
            if arithmetic.log_space_weights:                           # log p kept; log-sum-exp normalisation
                log_p = log_w - (top + arithmetic.log_scalar(arithmetic.total(arithmetic.exp(log_w - top))))
                p = arithmetic.exp(log_p)
            else:
                weights = arithmetic.exp(log_w - top)
                p = weights / arithmetic.total(weights)
                log_p = arithmetic.log(p)
        return ExplicitDataset(domain, N * p)                          # |f| times the distribution


@dataclass(frozen=True)
class InformationProjection:
    """Exact fitting: iterative proportional fitting of ``init`` to all measurements.

    Not in the papers; a reference A_Dataset whose output matches every (consistent,
    non-negative) measurement up to ``tol`` * N, used to check that the streaming
    algorithms track the true stream when there is no noise. Negative targets are
    clipped to 0. Converges to the I-projection of init onto the measured marginals.
    """

    max_sweeps: int = 500
    tol: float = 1e-10

    def __post_init__(self) -> None:
        require_int_at_least("max_sweeps", self.max_sweeps, 1)
        require_positive_finite("tol", self.tol)

    def fit(self, measurements: Sequence[Measurement], init: SyntheticDataset, total: float) -> SyntheticDataset:
        N = require_finite_real("total", total)
        if N < 0:
            raise DPStreamInputError("total", "must be >= 0", total)
        domain = init.domain
        if N == 0.0:
            return ExplicitDataset(domain, np.zeros(domain.sizes))
        # a tiny uniform share keeps every cell positive: a multiplicative fit cannot revive a zero cell
        h = rescaled_counts(init, N) * (1.0 - 1e-12) + 1e-12 * N / domain.size
        for _ in range(self.max_sweeps):
            worst = 0.0
            for meas in measurements:
                target = np.clip(meas.value, 0.0, N)
                table = answer(meas.query, ExplicitDataset(domain, h))
                worst = max(worst, float(np.max(np.abs(table - target))))
                h = self._rake(h, meas.query, target, table, N, domain)
            if worst <= self.tol * max(N, 1.0):
                break
        return ExplicitDataset(domain, h)

    @staticmethod
    def _rake(h: FloatArray, query: Query, target: FloatArray, current: FloatArray, N: float,
              domain: Domain) -> FloatArray:
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(current > 0, target / current, 0.0)
        if isinstance(query, MarginalQuery):
            inside = ratio[0]
            rest = N - current[0]
            outside = (N - target[0]) / rest if rest > 0 else 0.0
            table = np.full(domain.shape_of(query.columns), outside, dtype=np.float64)
            table[query.values] = inside
        else:
            table = ratio.reshape(domain.shape_of(query.columns))
        out = h * _broadcast(table, query.columns, domain)
        mass = float(out.sum())
        return out * (N / mass) if mass > 0 else out
