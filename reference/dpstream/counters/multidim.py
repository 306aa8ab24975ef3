"""Multi-dimensional counter — 001-sec4.3: d independent counters, one per coordinate.

g(t) = (C_1(f(t)_1), ..., C_d(f(t)_d)). 001-sec4.3 states its privacy under the norm
||f|| = sum_t ||f(t)||_1, i.e. neighbours f, f' with sum_t ||f(t) - f'(t)||_1 <= 1: the
unit change may be *split across coordinates* (D_i = sum_t |f(t)_i - f'(t)_i|,
sum_i D_i <= 1).

What composition gives (proofs/proof_multidimensional_counter.py)
-----------------------------------------------------------------
* For arbitrary eps_i-DP component counters nothing better than sequential composition
  holds: a change of l1 size D_i < 1 in coordinate i is itself a neighbour of C_i, so
  C_i may lose its whole eps_i on it, and the total is sum_i eps_i (e.g. d * eps). Parallel
  composition ("max_i eps_i") is *not* automatic.
* It does hold for counters whose loss scales with the l1 distance, i.e. loss
  <= D_i * eps_i (pure DP; true for every counter adding independent Laplace noise to
  linear statistics, as all of ours do: the loss is sum_j |(S (f - f'))_j| / b_j, linear
  in the change) or <= D_i^2 * rho_i (zCDP with discrete Gaussian noise). Then the total is
  sum_i D_i eps_i <= max_i eps_i (resp. sum_i D_i^2 rho_i <= max_i rho_i).

The claim below uses max_i when every component declares
``Counter.loss_scales_with_l1`` and sum_i otherwise, and says which in its note.
Components must share the measure (all pure DP or all zCDP).

Steps are atomic across coordinates when every component supports staged steps
(``Counter.staging``): all coordinates are validated, then all are drawn, then all are
committed. With an order-free source (the secure one) the d draws of a step are made in one
batched call (``dpstream.staged.run_all``); with the seeded source coordinate by coordinate.
Range: every coordinate is validated by its own counter, including the range rule (docs/counters.md, "Range":
inputs and sums within +-(2^53 - 1)); one coordinate out of range refuses the whole step before any draw.

Sites: build the components with :meth:`MultiDimensionalCounter.build`, which scopes
coordinate i as ``"001-sec4.3 i=<i>"``; components that would draw through the same source
and scope (hence at the same sites) are refused.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt

from dpstream.claims import Measure, Neighbour, PrivacyClaim
from dpstream.convention import convention
from dpstream.counters.base import Counter
from dpstream.errors import DPStreamInputError, require_int_at_least
from dpstream.noise import NoiseSource, ScopedNoise, default_noise, scoped, site
from dpstream.staged import Staged, order_free, run_all, staged_now

__all__ = ["MULTIDIM_ANCHOR", "MultiDimensionalCounter"]

MULTIDIM_ANCHOR = "001-sec4.3"

FloatArray = npt.NDArray[np.float64]


def _scope(i: int) -> str:
    return site(MULTIDIM_ANCHOR, i=i)


def _site_namespace(noise: NoiseSource) -> tuple[object, ...]:
    """Where a source's sites land: the innermost source's identity and the chain of scope prefixes."""
    prefixes: list[str] = []
    while isinstance(noise, ScopedNoise):
        prefixes.append(noise.prefix)
        noise = noise.inner
    return (id(noise), *reversed(prefixes))


class MultiDimensionalCounter:
    """001-sec4.3: ``step(vector) -> np.ndarray`` with one independent counter per coordinate."""

    anchor = MULTIDIM_ANCHOR

    def __init__(self, counters: Sequence[Counter]) -> None:
        counters = list(counters)
        if not counters:
            raise DPStreamInputError("counters", "must hold at least one counter (d >= 1)", counters)
        for c in counters:
            if not isinstance(c, Counter):
                raise DPStreamInputError("counters", "every component must be a Counter", c)
        if len({id(c) for c in counters}) != len(counters):
            raise DPStreamInputError("counters", "must be d distinct counter objects", counters)
        if any(c.t != 0 for c in counters):
            raise DPStreamInputError("counters", "every component must be fresh (t = 0)", [c.t for c in counters])
        spaces = [_site_namespace(c.noise) for c in counters]
        if len(set(spaces)) != len(spaces):
            # Components draw at their own local sites ("001-alg8 L4 t=1", ...): through one unscoped
            # source those sites would repeat, breaking site uniqueness (tapes, replay).
            raise DPStreamInputError(
                "counters", "components must draw through distinct noise scopes (use MultiDimensionalCounter.build "
                "or scoped(noise, ...) per coordinate)", [type(c).__name__ for c in counters])
        measures = {c.claim.measure for c in counters}
        if len(measures) != 1 or Measure.NOT_PRIVATE in measures:
            raise DPStreamInputError("counters", "components must share one privacy measure (pure DP or zCDP)",
                                     sorted(m.value for m in measures))
        self.counters = counters
        self.batched = all(order_free(c.noise) for c in counters)
        """Whether a step's draws are batched across coordinates (every component's source is order free)."""
        self.d = len(counters)
        self.t = 0
        self.releases: list[FloatArray] = []

    @classmethod
    @convention(("factory", "d", "parameter", "noise"))
    def build(
        cls, factory: Callable[[float, NoiseSource], Counter], d: int, parameter: float, *,
        noise: NoiseSource | None = None,
    ) -> MultiDimensionalCounter:
        """d counters ``factory(parameter, scoped(noise, "001-sec4.3 i=<i>"))``."""
        d = require_int_at_least("d", d, 1)
        source = default_noise() if noise is None else noise
        return cls([factory(parameter, scoped(source, _scope(i))) for i in range(d)])

    @property
    def claim(self) -> PrivacyClaim:
        claims = [c.claim for c in self.counters]
        measure = claims[0].measure
        scales = all(c.loss_scales_with_l1 for c in self.counters)
        value = max(cl.parameter for cl in claims) if scales else sum(cl.parameter for cl in claims)
        how = ("max over coordinates: every component's loss scales with the l1 change" if scales else
               "SUM over coordinates: some component does not declare loss_scales_with_l1")
        note = f"d = {self.d}; neighbours under sum_t ||f(t)-f'(t)||_1 <= 1; {how}"
        if measure is Measure.PURE_DP:
            return PrivacyClaim.pure(value, Neighbour.STREAM_ENTRY, MULTIDIM_ANCHOR, note=note)
        return PrivacyClaim.zcdp(value, Neighbour.STREAM_ENTRY, MULTIDIM_ANCHOR, note=note)

    def _values(self, x: object) -> list[float]:
        try:
            arr = np.asarray(x, dtype=object)
        except Exception as exc:  # pragma: no cover - numpy accepts almost anything as object
            raise DPStreamInputError("f(t)", f"must be a vector of length d = {self.d}", x) from exc
        if arr.ndim != 1 or arr.shape[0] != self.d:
            raise DPStreamInputError("f(t)", f"must be a vector of length d = {self.d}", x)
        # validate every coordinate before any draw (each counter's own rule: finite, integer, horizon)
        return [c.validate_input(v) for c, v in zip(self.counters, arr.tolist(), strict=True)]

    @property
    def supports_staging(self) -> bool:
        """Whether every component supports staged steps (then :meth:`step` is atomic)."""
        return all(c.supports_staging for c in self.counters)

    def stage(self, x: Sequence[float] | FloatArray) -> Staged[FloatArray]:
        """Validate f(t) and draw every coordinate's noise without changing state; ``.commit()`` applies it
        (components without staged steps: stepped at once, as :meth:`Counter.stage`)."""
        if not self.supports_staging:
            return staged_now(self.step(x))
        values = self._values(x)
        parts = run_all([c.staging(v) for c, v in zip(self.counters, values, strict=True)], self.batched)
        release = np.array([p.release for p in parts], dtype=np.float64)
        t = self.t + 1

        def apply() -> None:
            if self.t != t - 1:
                raise RuntimeError(f"stale staged step for t={t} (counter is at t={self.t})")
            for part in parts:
                part.commit()
            self.t = t
            self.releases.append(release)

        return Staged(release, apply)

    def step(self, x: Sequence[float] | FloatArray) -> FloatArray:
        """Consume f(t) in R^d and release g(t) in R^d (atomic across coordinates, see module doc)."""
        if self.supports_staging:
            return self.stage(x).commit()
        # components without two-phase steps: sequential (not atomic if a later draw fails)
        values = self._values(x)
        out = np.array([c.step(v) for c, v in zip(self.counters, values, strict=True)], dtype=np.float64)
        self.t += 1
        self.releases.append(out)
        return out

    def state_size(self) -> int:
        return sum(c.state_size() for c in self.counters)
