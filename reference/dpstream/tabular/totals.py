"""Where the mass N of a fitted dataset comes from.

MW returns "|f| times the distribution" (003-mw, 003-alg2 L20 with |∇f_t|). Under the
papers' neighbour relation (one record added or removed at one time, 003-def3.3) the
size |∇f_t| of the differential dataset changes by one between neighbours, so releasing
a dataset of mass exactly |∇f_t| reveals it: the printed StreamingMWEM is not
differentially private at all (docs/errata/tabular.md, E-tabular-3). The total must
therefore come from somewhere that is not the private data:

* :meth:`TotalRule.public` — sizes known in advance (e.g. the batch size B of the
  Adult streams, 003-sec7.1.2); the algorithm never reads |∇f_t|;
* :meth:`TotalRule.measured` — estimated from the noisy workload measurements only
  (the sum of a measured workload's cells estimates the dataset size; the estimates
  of several workloads are averaged with inverse-variance weights, as ``mbi`` does);
  pure post-processing. Needs workloads: a single marginal query says nothing about
  the size;
* :meth:`TotalRule.true_size` — reads the true size from the data, as printed in
  003-alg2 L20. NOT private; kept for the ``as_printed`` variant and for tests.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum

from dpstream.errors import DPStreamInputError, require_finite_real
from dpstream.tabular.fitting import Measurement
from dpstream.tabular.queries import Query, Workload

__all__ = ["ConstantSize", "TotalKind", "TotalRule"]


class TotalKind(StrEnum):
    PUBLIC = "public"
    MEASURED = "measured"
    TRUE_SIZE = "true-size"


@dataclass(frozen=True)
class ConstantSize:
    """n_t = n at every time t: the sizes of ``TotalRule.public(n)`` (data, not a closure: checkpoints write it)."""

    n: float

    def __call__(self, t: int) -> float:
        return self.n


@dataclass(frozen=True)
class TotalRule:
    """How an algorithm chooses the mass of the datasets it fits (see the module docstring)."""

    kind: TotalKind
    sizes: Callable[[int], float] | None = None

    @classmethod
    def public(cls, sizes: float | Callable[[int], float]) -> TotalRule:
        """Public sizes: a constant n (e.g. the batch size B) or a function t -> n_t of the time."""
        if callable(sizes):
            return cls(TotalKind.PUBLIC, sizes)
        n = require_finite_real("sizes", sizes)
        if n < 0:
            raise DPStreamInputError("sizes", "must be >= 0", sizes)
        return cls(TotalKind.PUBLIC, ConstantSize(n))

    @classmethod
    def measured(cls) -> TotalRule:
        """Estimate the size from the noisy workload measurements (post-processing)."""
        return cls(TotalKind.MEASURED)

    @classmethod
    def true_size(cls) -> TotalRule:
        """Read the true size from the data (as printed in 003-alg2 L20; NOT private)."""
        return cls(TotalKind.TRUE_SIZE)

    @property
    def private(self) -> bool:
        """Whether the rule keeps the algorithm differentially private under EVENT neighbours."""
        return self.kind is not TotalKind.TRUE_SIZE

    def check_queries(self, queries: Sequence[Query]) -> None:
        """``measured`` needs workloads (a marginal query carries no information on the size)."""
        if self.kind is TotalKind.MEASURED and not all(isinstance(q, Workload) for q in queries):
            raise DPStreamInputError(
                "total", "TotalRule.measured() needs Q to consist of workloads; for marginal queries pass "
                "TotalRule.public(n) (or TotalRule.true_size(), which is not private)", self.kind.value)

    def public_size(self, t: int) -> float:
        """n_t of a public rule."""
        if self.kind is not TotalKind.PUBLIC or self.sizes is None:
            raise DPStreamInputError("total", "is not a public rule", self.kind.value)
        n = require_finite_real("sizes(t)", self.sizes(t))
        if n < 0:
            raise DPStreamInputError("sizes(t)", "must be >= 0", n)
        return n

    @staticmethod
    def estimate(measurements: Sequence[Measurement], fallback: float) -> float:
        """Inverse-variance weighted mean of the sums of the measured workloads (>= 0).

        A workload's sum has variance dim * 2 b^2 under Laplace(b) noise per cell.
        Without any workload measurement the ``fallback`` is returned.
        """
        num = den = 0.0
        for m in measurements:
            if isinstance(m.query, Workload):
                weight = 1.0 / (m.query.dim * m.noise_scale**2)
                num += weight * float(m.value.sum())
                den += weight
        if den == 0.0:
            return fallback
        return max(0.0, num / den)
