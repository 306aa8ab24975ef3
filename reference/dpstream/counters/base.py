"""What every continual counter shares: the streaming ``step`` protocol.

A counter (001-def4.1, 003-def3.11, 002-defA.1) consumes a stream of values
f(1), f(2), ... and after each one releases an estimate g(t) of the prefix sum
sum_{t' <= t} f(t'). Contract of :meth:`Counter.step`:

* the input is validated first (finite real; integer for integer-noise counters;
  not past a finite horizon; within the range below); a bad input raises a
  :class:`~dpstream.errors.DPStreamInputError` before any draw and before any state
  change;
* all draws of one step are made before any state is committed, so a failing draw
  (a tape mismatch, say) leaves the counter as it was;
* every draw names its site (``dpstream.noise.site``), ``t`` being the 1-based time.

Range (docs/counters.md, "Range"): every input and every sum of inputs a counter forms (the statistics it noises and
the true sums it keeps for later steps) must lie within +-:data:`~dpstream.errors.MAX_STREAM_SUM` = 2^53 - 1. Beyond
it float64 sums round, so inputs at l1 distance 1 could give statistics 2 apart (or, for real inputs, up to one unit
in the last place of the sum apart: 2^48 at 2^100), and the claims would not hold. :meth:`Counter.validate_input`
refuses such a step with :class:`~dpstream.errors.StreamRangeError` before anything is drawn or changed; a counter
names its sums in :meth:`Counter._check_sums`. Within the range every sum of integer inputs is exact (a running sum
grows by one input per step and is checked at every step; the trees' p-sums are computed correctly rounded with
``math.fsum``). A refusal depends on the data, so it is not private: the claims are for streams inside the range
(bound or clamp the data first; the domains of the OpenDP measurements, ``dpstream.interop.opendp``, lie inside it).

Staged steps (``dpstream.staged``): a counter writes its step as a *staging generator*
:meth:`Counter._staging` that yields its additive draws as requests (``(yield laplace(...))``) and
returns g(t) with a closure committing the state. :meth:`Counter.stage` draws them at once and
returns a :class:`~dpstream.staged.Staged` step (nothing changes until ``.commit()``);
:meth:`Counter.staging` hands the generator to a driver that steps many counters together
(:func:`dpstream.staged.run_all`: one batched draw per round; all drawn before any is committed).
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Callable, Generator, Iterable
from functools import partial
from typing import Any, ClassVar, TypeAlias

from dpstream.claims import PrivacyClaim
from dpstream.errors import (
    MAX_STREAM_SUM,
    DPStreamInputError,
    HorizonExceededError,
    require_int_at_least,
    require_stream_value,
)
from dpstream.noise import NoiseSource, default_noise
from dpstream.staged import DrawRequest, Staged, Staging, run, staged_now

__all__ = ["Counter", "CounterFactory", "CounterStaging"]

CounterStaging: TypeAlias = Generator[DrawRequest, Any, tuple[float, Callable[[], None]]]
"""What :meth:`Counter._staging` is: yields draw requests, returns (g(t), commit)."""


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

        Subclasses implement either this or :meth:`_staging` (then :meth:`step` stages and commits).
        """
        raise NotImplementedError(f"{type(self).__name__} implements neither _staging nor _step")

    def _staging(self, x: float, t: int) -> CounterStaging:
        """Generator: request every additive draw for f(t) = x (``(yield request)``), compute into locals,
        and return g(t) with a closure committing the state.

        Must not change any state of the counter. Optional: counters without it cannot be
        staged (:attr:`supports_staging` is False) and are stepped at once by :meth:`stage`.
        """
        raise NotImplementedError(f"{type(self).__name__} does not implement staged steps")
        yield  # pragma: no cover - makes this a generator

    _has_staging: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._has_staging = cls._staging is not Counter._staging

    @property
    def supports_staging(self) -> bool:
        """Whether the counter writes its step as a staging generator (then its steps are atomic and batchable)."""
        return self._has_staging

    def staging(self, x: float) -> Staging[float]:
        """Validate f(t) = x now; the generator yields the step's draws and returns its :class:`Staged` step.

        Counters without :meth:`_staging` are stepped when the generator is first advanced (not atomic;
        the staged step's commit is then a no-op).
        """
        value = self.validate_input(x)
        if not self._has_staging:
            return self._stepped(value)
        t = self.t + 1
        return self._staged(self._staging(value, t), t)

    def _stepped(self, value: float) -> Staging[float]:
        return staged_now(self.step(value))
        yield  # pragma: no cover - makes this a generator

    def _staged(self, inner: CounterStaging, t: int) -> Staging[float]:
        g, commit = yield from inner
        if not math.isfinite(g):  # a float overflow of the running sums: refused, nothing changes
            raise DPStreamInputError("f(t)", "the release g(t) would not be a finite number (float overflow)", g)
        return Staged(g, partial(self._apply, commit, g, t))  # (a partial, not a closure: fewer objects per step)

    def _apply(self, commit: Callable[[], None], g: float, t: int) -> None:
        """Commit a staged step made at time t."""
        if self.t != t - 1:
            raise RuntimeError(f"stale staged step for t={t} (counter is at t={self.t})")
        commit()
        self.t = t
        self.releases.append(g)

    def stage(self, x: float) -> Staged[float]:
        """Validate f(t) = x and draw its noise without changing state; ``.commit()`` applies the step
        (for counters without :attr:`supports_staging`: stepped at once, commit is a no-op)."""
        return run(self.staging(x))  # line by line: each request drawn at once

    @abstractmethod
    def state_size(self) -> int:
        """How many numbers the counter stores between steps (checked against its promise)."""

    def validate_input(self, x: object) -> float:
        """Check one input value without changing state (used by algorithms that wrap counters): not past the
        horizon, a finite real (an integer for ``integer_input``) within +-MAX_STREAM_SUM, and every sum the next
        step would form with it within the same range (:meth:`_check_sums`)."""
        if self.horizon is not None and self.t >= self.horizon:
            raise HorizonExceededError("t", f"cannot step past the horizon T = {self.horizon}", self.t + 1)
        if ((type(x) is int or (type(x) is float and not self.integer_input))
                and -MAX_STREAM_SUM <= x <= MAX_STREAM_SUM):
            value = float(x)  # fast path: the rules of require_stream_value, checked inline
        else:
            value = require_stream_value("f(t)", x, integer=self.integer_input)
        self._check_sums(value)
        return value

    def _check_sums(self, x: float) -> None:
        """Refuse f(t) = x (``dpstream.errors.require_stream_sum``) if a sum of inputs that the next step would form
        (a statistic to noise, or a true sum kept for a later step) would leave +-MAX_STREAM_SUM. Changes nothing.

        The default forms no sums (every input is noised alone, as in 001-alg8)."""
        return None

    def advance(self, x: float) -> float:
        """:meth:`step` without keeping the release in :attr:`releases` (for drivers that step a counter many
        times and keep only its latest output, e.g. the lazy 004-alg1)."""
        g = self.step(x)
        self.releases.pop()
        return g

    def step(self, x: float) -> float:
        """Consume the next input value f(t) and release g(t)."""
        if self.supports_staging:
            return self.stage(x).commit()
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

