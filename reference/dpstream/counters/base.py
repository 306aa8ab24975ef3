"""What every continual counter shares: the streaming ``step`` protocol.

A counter (001-def4.1, 003-def3.11, 002-defA.1) consumes a stream of values
f(1), f(2), ... and after each one releases an estimate g(t) of the prefix sum
sum_{t' <= t} f(t'). Contract of :meth:`Counter.step`:

* the input is validated first (finite real; integer for integer-noise counters;
  not past a finite horizon); a bad input raises a
  :class:`~dpstream.errors.DPStreamInputError` before any draw and before any state
  change;
* all draws of one step are made before any state is committed, so a failing draw
  (a tape mismatch, say) leaves the counter as it was;
* every draw names its site (``dpstream.noise.site``), ``t`` being the 1-based time.

Two-phase steps (additive, optional): a counter that implements :meth:`Counter._prepare`
(draw everything into locals, return the release and a ``commit`` closure) can be
stepped in two phases with :meth:`Counter.prepare`; a wrapper stepping several
counters at once (:class:`dpstream.counters.multidim.MultiDimensionalCounter`) prepares
all of them before committing any, so a failing draw in one leaves all unchanged.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import ClassVar, TypeAlias

from dpstream.claims import PrivacyClaim
from dpstream.errors import (
    HorizonExceededError,
    require_finite_real,
    require_int_at_least,
    require_integer_value,
)
from dpstream.noise import NoiseSource, default_noise

__all__ = ["Counter", "CounterFactory", "PreparedStep", "StagedStep"]


@dataclass(frozen=True)
class PreparedStep:
    """A drawn but not yet committed step: ``release`` is g(t); :meth:`commit` makes it happen."""

    counter: Counter
    t: int
    release: float
    _commit: Callable[[], None]

    def commit(self) -> float:
        """Apply the prepared state change (no draws, cannot fail) and return g(t)."""
        if self.counter.t != self.t - 1:
            raise RuntimeError(f"stale prepared step for t={self.t} (counter is at t={self.counter.t})")
        self._commit()
        self.counter.t = self.t
        self.counter.releases.append(self.release)
        return self.release


@dataclass(frozen=True)
class StagedStep:
    """A step staged by :meth:`Counter.stage`: its release and the call that applies it."""

    release: float
    commit: Callable[[], object]


class Counter(ABC):
    """Base class of the continual counters.

    Subclasses set ``anchor`` (the paper id, e.g. ``"001-alg8"``), implement
    :meth:`_step` and :meth:`state_size`, and state their :attr:`claim`.
    ``horizon`` is the finite time horizon T, or ``None`` for unbounded counters.
    ``integer_input`` counters accept only integer values (integer-noise counters).
    """

    anchor: ClassVar[str]
    integer_input: bool = False
    """Only integer inputs are accepted (integer-noise counters); a class default, instances may override."""
    loss_scales_with_l1: ClassVar[bool] = False
    """True when the privacy loss against inputs at l1 distance D <= 1 is at most D * eps (pure DP)
    or D^2 * rho (zCDP), not merely eps / rho. Holds for every counter that adds independent
    Laplace / discrete-Gaussian noise to linear statistics of sensitivity <= 1 per input
    (``LinearReleaseModel``); :class:`~dpstream.counters.multidim.MultiDimensionalCounter` needs it
    for its l1 claim (proofs/proof_multidimensional_counter.py)."""

    def __init__(self, noise: NoiseSource | None, horizon: int | None) -> None:
        self.noise: NoiseSource = default_noise() if noise is None else noise
        self.horizon = None if horizon is None else require_int_at_least("T", horizon, 1)
        self.t = 0
        self.releases: list[float] = []

    @property
    @abstractmethod
    def claim(self) -> PrivacyClaim:
        """The privacy guarantee this counter instance meets (for a printed variant: what it really meets)."""

    @property
    def paper_claim(self) -> PrivacyClaim:
        """What the paper states for this counter; differs from :attr:`claim` only for ``as_printed`` variants."""
        return self.claim

    def _step(self, x: float, t: int) -> float:
        """Consume f(t) = x at time t (already validated) and return g(t).

        Subclasses implement either this or :meth:`_prepare` (which gives it for free).
        """
        g, commit = self._prepare(x, t)
        commit()
        return g

    def _prepare(self, x: float, t: int) -> tuple[float, Callable[[], None]]:
        """Draw everything for f(t) = x into locals; return g(t) and a closure committing the state.

        Must not change any state of the counter. Optional: counters without it cannot be
        stepped in two phases (:attr:`supports_prepare` is False).
        """
        raise NotImplementedError(f"{type(self).__name__} does not implement two-phase steps")

    @property
    def supports_prepare(self) -> bool:
        return type(self)._prepare is not Counter._prepare

    def prepare(self, x: float) -> PreparedStep:
        """Validate f(t) = x and draw its noise without changing state; ``.commit()`` applies it."""
        value = self.validate_input(x)
        t = self.t + 1
        g, commit = self._prepare(value, t)
        return PreparedStep(self, t, g, commit)

    def stage(self, x: float) -> StagedStep:
        """One step for algorithms that drive several counters: two-phase when :attr:`supports_prepare`
        (nothing changes until ``.commit()``), otherwise stepped at once (not atomic; ``commit`` is a no-op)."""
        if self.supports_prepare:
            p = self.prepare(x)
            return StagedStep(p.release, p.commit)
        return StagedStep(self.step(x), lambda: None)

    @abstractmethod
    def state_size(self) -> int:
        """How many numbers the counter stores between steps (checked against its promise)."""

    def validate_input(self, x: object) -> float:
        """Check one input value without changing state (used by algorithms that wrap counters)."""
        if self.horizon is not None and self.t >= self.horizon:
            raise HorizonExceededError("t", f"cannot step past the horizon T = {self.horizon}", self.t + 1)
        if self.integer_input:
            return float(require_integer_value("f(t)", x))
        return require_finite_real("f(t)", x)

    def step(self, x: float) -> float:
        """Consume the next input value f(t) and release g(t)."""
        value = self.validate_input(x)
        g = self._step(value, self.t + 1)
        self.t += 1
        self.releases.append(g)
        return g

    def run(self, stream: Iterable[float]) -> list[float]:
        """Step through ``stream`` and return the releases of these steps."""
        return [self.step(x) for x in stream]


CounterFactory: TypeAlias = Callable[[float, NoiseSource], Counter]
"""A counter maker given the privacy parameter and a (scoped) noise source,
e.g. ``lambda eps, n: BlockCounter(eps, 8, noise=n)``."""
