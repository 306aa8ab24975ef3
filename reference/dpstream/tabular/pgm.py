"""A_Dataset by a probabilistic graphical model (003-pgm, 003-sec7): ``mbi`` (private-pgm 2.0).

:class:`PrivatePGM` fits P_θ(x) = exp(sum_C θ_C(x_C)) / Z (003-pgm) to the measurements
with mbi's mirror descent (``mbi.estimation.MirrorDescent``, the proximal algorithm of
McKenna et al. 2019) and returns a :class:`PGMDataset` (the model times the total).

How A_Dataset(M, h) uses the initial dataset h (003-sec4: "an initialization dataset h",
003-alg3 L18: h_{t,l-1}) is not specified for PGM. Our reading, stated in docs/tabular.md:

* the measurements M are LinearMeasurements on their workloads' cliques (a marginal
  query is one cell of its clique's table), with standard deviation proportional to their
  noise scale;
* the one-way marginals of h on the attributes that no measurement of M touches are added
  as pseudo-measurements (weight ``init_weight`` relative to a measurement), so that those
  attributes keep h's distribution instead of becoming uniform;
* the optimiser is warm-started from h's model when h carries one (for an average of
  models, the last one), since a mixture of graphical models is not a graphical model.

The model's cliques are those of M plus the one-way cliques, so its size stays that of a
few workloads even for all 15 Adult attributes. JAX compiles one program per clique
structure (tens of seconds on a CPU); structures repeat when the same workloads are
selected again, and the compiled programs are cached for the process.

Long runs: JAX keeps every compiled program, and on a CPU each holds about 220 memory
mappings (measured: 13736 mappings after 60 fits with distinct clique structures, 537 when the
caches are cleared every 10 fits). A process that fits a few hundred distinct structures (the
full ``tabular-adult`` grid) reaches the kernel's ``vm.max_map_count`` (65530 by default) and
XLA's LLVM then fails with "Cannot allocate memory" and a segmentation fault (seen after
about 1000 steps of a PGM run). :func:`release_compiled_programs` therefore drops JAX's caches
after a fit when the process holds more than ``MAX_MEMORY_MAPPINGS`` mappings (read from
``/proc/self/maps``; nothing happens where that file does not exist). Results do not change:
the programs are recompiled on demand.

``mbi`` is imported lazily: everything else in dpstream works without it. No randomness
is used (mbi's ``synthetic_data`` draws from ``numpy.random`` and is not called).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpstream.errors import DPStreamInputError, require_finite_real, require_int_at_least, require_positive_finite
from dpstream.tabular.datasets import SyntheticDataset
from dpstream.tabular.domain import Domain
from dpstream.tabular.fitting import Measurement
from dpstream.tabular.queries import FloatArray, MarginalQuery, Workload

__all__ = ["MAX_MEMORY_MAPPINGS", "PGMDataset", "PrivatePGM", "mbi_available", "release_compiled_programs"]

MAX_MEMORY_MAPPINGS = 30000
"""Drop JAX's compiled programs above this many memory mappings (half the kernel default 65530)."""


def _import_mbi() -> None:
    """Import mbi once, silencing its start-up advice about JAX configuration (float32, cache)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="JAX is running in float32 mode", category=UserWarning)
        warnings.filterwarnings("ignore", message="JAX persistent compilation cache", category=UserWarning)
        import mbi  # noqa: F401


def _memory_mappings() -> int | None:
    """The number of memory mappings of this process (Linux ``/proc/self/maps``), None elsewhere."""
    try:
        with open("/proc/self/maps", "rb") as maps:
            return sum(1 for _ in maps)
    except OSError:
        return None


def release_compiled_programs(limit: int | None = None) -> bool:
    """Clear JAX's caches when the process holds more than ``limit`` memory mappings; True if cleared.

    ``limit`` defaults to :data:`MAX_MEMORY_MAPPINGS` (read at call time); see the module docstring.
    """
    count = _memory_mappings()
    if count is None or count <= (MAX_MEMORY_MAPPINGS if limit is None else limit):
        return False
    import jax

    clear: Callable[[], None] = jax.clear_caches  # untyped in jax
    clear()
    return True


def mbi_available() -> bool:
    """Whether the optional ``mbi`` package (pip extra ``pgm``) can be imported."""
    try:
        _import_mbi()
    except ImportError:
        return False
    return True


@dataclass(frozen=True)
class _CellQuery:
    """An mbi query reading one cell of a clique's table (a marginal query inside a workload)."""

    index: int

    def __call__(self, factor: Any) -> Any:
        return factor.datavector()[self.index:self.index + 1]


@dataclass(frozen=True, eq=False)
class PGMDataset:
    """A fitted graphical model as a dataset: marginals of P_θ (003-pgm) scaled to ``total``.

    Marginals are computed from the fitted potentials θ_C by exact tensor contraction with
    numpy (``np.einsum`` with an optimised contraction order: variable elimination on the
    model's few small cliques), which avoids one JAX compilation per projected clique.
    """

    domain: Domain
    model: Any
    total: float
    _cache: dict[tuple[int, ...], FloatArray] = field(default_factory=dict, repr=False)
    _factors: list[tuple[tuple[int, ...], FloatArray]] = field(default_factory=list, repr=False)

    @property
    def warm_start(self) -> Any:
        return self.model

    def factors(self) -> list[tuple[tuple[int, ...], FloatArray]]:
        """exp(θ_C - max θ_C) for every clique C of the model, axes in column order."""
        if not self._factors:
            potentials = self.model.potentials
            for clique in potentials.cliques:
                factor = potentials[clique]
                names = tuple(factor.domain.attributes)
                cols = tuple(self.domain.names.index(n) for n in names)
                values = np.asarray(factor.values, dtype=np.float64)
                order = tuple(np.argsort(cols))
                values = np.transpose(values, order)
                self._factors.append((tuple(sorted(cols)), np.exp(values - values.max())))
        return self._factors

    def marginal(self, columns: tuple[int, ...]) -> FloatArray:
        table = self._cache.get(columns)
        if table is None:
            if not columns:
                return np.asarray(self.total, dtype=np.float64)
            operands: list[Any] = []
            for cols, values in self.factors():
                operands.extend([values, list(cols)])
            covered = {c for cols, _ in self.factors() for c in cols}
            for c in columns:  # attributes in no clique are uniform under the model
                if c not in covered:
                    operands.extend([np.ones(self.domain.sizes[c]), [c]])
            raw = np.asarray(np.einsum(*operands, list(columns), optimize="greedy"), dtype=np.float64)
            mass = float(raw.sum())
            table = raw * (self.total / mass) if mass > 0 else raw
            self._cache[columns] = table
        return table.copy()


@dataclass(frozen=True)
class PrivatePGM:
    """A_Dataset via mbi: ``iters`` mirror-descent iterations (see the module docstring)."""

    iters: int = 200
    init_weight: float = 1.0
    warm_start: bool = True

    def __post_init__(self) -> None:
        require_int_at_least("iters", self.iters, 1)
        require_positive_finite("init_weight", self.init_weight)

    def fit(self, measurements: Sequence[Measurement], init: SyntheticDataset, total: float) -> SyntheticDataset:
        _import_mbi()
        from mbi import Domain as MbiDomain
        from mbi import LinearMeasurement
        from mbi.estimation import MirrorDescent

        N = require_finite_real("total", total)
        if N < 0:
            raise DPStreamInputError("total", "must be >= 0", total)
        domain = init.domain
        mdom = MbiDomain(domain.names, domain.sizes)
        scale = min((m.noise_scale for m in measurements), default=1.0)
        lin: list[Any] = []
        for m in measurements:
            clique = tuple(domain.names[c] for c in m.query.columns)
            if isinstance(m.query, Workload):
                lin.append(LinearMeasurement(np.asarray(m.value), clique, stddev=float(m.noise_scale)))
            elif isinstance(m.query, MarginalQuery):
                index = int(np.ravel_multi_index(m.query.values, domain.shape_of(m.query.columns)))
                lin.append(LinearMeasurement(np.asarray(m.value), clique, stddev=float(m.noise_scale),
                                             query=_CellQuery(index)))
            else:
                raise DPStreamInputError("measurements", "queries must be marginal queries or workloads", m.query)
        init_total = init.total
        covered = {c for m in measurements for c in m.query.columns}
        for c in range(domain.p):
            if c in covered:
                continue
            one_way = init.marginal((c,))
            values = one_way * (N / init_total) if init_total > 0 else np.full(domain.sizes[c], N / domain.sizes[c])
            lin.append(LinearMeasurement(np.asarray(values), (domain.names[c],),
                                         stddev=float(scale / self.init_weight)))
        warm = getattr(init, "warm_start", None) if self.warm_start else None
        model = MirrorDescent().estimate(mdom, lin, known_total=max(N, 1e-9), iters=self.iters, warm_start=warm)
        release_compiled_programs()
        return PGMDataset(domain, model, N)
