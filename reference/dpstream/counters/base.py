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
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable
from typing import ClassVar

from dpstream.claims import PrivacyClaim
from dpstream.errors import (
    HorizonExceededError,
    require_finite_real,
    require_int_at_least,
    require_integer_value,
)
from dpstream.noise import NoiseSource, default_noise

__all__ = ["Counter"]


class Counter(ABC):
    """Base class of the continual counters.

    Subclasses set ``anchor`` (the paper id, e.g. ``"001-alg8"``), implement
    :meth:`_step` and :meth:`state_size`, and state their :attr:`claim`.
    ``horizon`` is the finite time horizon T, or ``None`` for unbounded counters.
    ``integer_input`` counters accept only integer values (integer-noise counters).
    """

    anchor: ClassVar[str]
    integer_input: ClassVar[bool] = False

    def __init__(self, noise: NoiseSource | None, horizon: int | None) -> None:
        self.noise: NoiseSource = default_noise() if noise is None else noise
        self.horizon = None if horizon is None else require_int_at_least("T", horizon, 1)
        self.t = 0
        self.releases: list[float] = []

    @property
    @abstractmethod
    def claim(self) -> PrivacyClaim:
        """The privacy guarantee this counter instance meets."""

    @abstractmethod
    def _step(self, x: float, t: int) -> float:
        """Consume f(t) = x at time t (already validated) and return g(t)."""

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
