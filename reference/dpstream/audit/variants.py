"""Counters written the way an outside implementation would be: leaky ones, and correct-but-different ones.

INSECURE BY DESIGN (the leaky ones). Together with :mod:`dpstream.audit.broken` they are the test bed of
the witness search (``tests/audit/test_search_power.py``): every leaky class must get ``violation`` from the
black-box search alone; every correct-but-different one must never get it (it may well be a ``deviation``
from the reference law). Nothing here subclasses the library's counters; draws go through the NoiseSource
with the Simple counter's site, or, for :class:`OwnRngSimpleCounter`, through its own seeded generator
(the seed hook, :class:`dpstream.audit.sampler.SeededFactorySampler`).

Leaky (true guarantee in brackets, eps the budget):

* :class:`ExactAtRoundNumbersCounter` -- 001-alg8 that releases the exact prefix sum whenever it is a
  positive multiple of 10 (value-dependent exact release; not private).
* :class:`ReusedNoiseSimpleCounter` -- 001-alg8 drawing one Laplace value per two steps and using it at both
  (noise reused across steps; not private: d(2j) - d(2j-1) = f(2j) - f(2j-1) exactly).
* :class:`WrongBoundaryBlockCounter` -- 001-alg9 shape whose true block sum is reset only every 2B steps (a
  wrong block boundary): an input in the first half of a 2B window enters two block sums and its in-block
  statistic, 3 statistics of scale 2/eps [1.5 eps].

Correct but different (post-processing of an eps-DP Simple counter, or its own randomness):
:class:`ClampedSimpleCounter` (max(0, g)), :class:`RoundedSimpleCounter` (round(g)),
:class:`MonotoneSimpleCounter` (running maximum of the releases: a projection onto non-decreasing
sequences), :class:`OwnRngSimpleCounter` (Laplace noise from its own generator seeded by the hook).
"""

from __future__ import annotations

from dpstream.insecure.batch import BulkNoise
from dpstream.noise import NoiseSource, site

__all__ = [
    "ClampedSimpleCounter",
    "ExactAtRoundNumbersCounter",
    "MonotoneSimpleCounter",
    "OwnRngSimpleCounter",
    "ReusedNoiseSimpleCounter",
    "RoundedSimpleCounter",
    "WrongBoundaryBlockCounter",
]


class _Simple:
    """g(t) = g(t-1) + f(t) + Lap(1/eps), the noisy running sum every variant starts from."""

    def __init__(self, epsilon: float, noise: NoiseSource) -> None:
        self.scale = 1.0 / epsilon
        self.noise = noise
        self.g = 0.0
        self.total = 0.0
        self.t = 0

    def advance(self, x: float) -> float:
        self.t += 1
        self.total += x
        self.g += self.noise.add_laplace(site("001-alg8 L4", t=self.t), x, self.scale)
        return self.g


class ExactAtRoundNumbersCounter(_Simple):
    """Releases the exact prefix sum when it is a positive multiple of ``every`` (default 10), else g(t)."""

    def __init__(self, epsilon: float, noise: NoiseSource, every: int = 10) -> None:
        super().__init__(epsilon, noise)
        self.every = every

    def step(self, x: float) -> float:
        g = self.advance(x)
        exact = self.total > 0 and self.total % self.every == 0
        return self.total if exact else g


class ReusedNoiseSimpleCounter:
    """001-alg8 with one draw per pair of steps, used at both steps of the pair."""

    def __init__(self, epsilon: float, noise: NoiseSource) -> None:
        self.scale = 1.0 / epsilon
        self.noise = noise
        self.g = 0.0
        self.z = 0.0
        self.t = 0

    def step(self, x: float) -> float:
        self.t += 1
        if self.t % 2 == 1:
            noisy = self.noise.add_laplace(site("001-alg8 L4", t=self.t), x, self.scale)
            self.z = noisy - x  # the mistake: this noise is used again at the next step
        self.g += x + self.z
        return self.g


class WrongBoundaryBlockCounter:
    """Block counter (B, Lap(2/eps) at both levels) whose true block sum resets every 2B steps, not every B.

    At t = kB the released block statistic is the true sum since the last multiple of 2B plus Lap(2/eps);
    the noisy prefix P adds the block statistics; g(t) = P + the in-block noisy values since kB."""

    def __init__(self, epsilon: float, B: int, noise: NoiseSource) -> None:
        self.scale = 2.0 / epsilon
        self.B = B
        self.noise = noise
        self.block_sum = 0.0
        self.prefix = 0.0
        self.alpha = 0.0
        self.t = 0

    def step(self, x: float) -> float:
        self.t += 1
        self.block_sum += x
        if self.t % self.B == 0:
            self.prefix += self.noise.add_laplace(site("001-alg9 L7", t=self.t), self.block_sum, self.scale)
            self.alpha = 0.0
            if self.t % (2 * self.B) == 0:  # the mistake: should reset at every block end
                self.block_sum = 0.0
        else:
            self.alpha += self.noise.add_laplace(site("001-alg9 L10", t=self.t), x, self.scale)
        return self.prefix + self.alpha


class ClampedSimpleCounter(_Simple):
    """Releases max(0, g(t)) (the running state stays unclamped): post-processing, still eps-DP."""

    def step(self, x: float) -> float:
        return max(0.0, self.advance(x))


class RoundedSimpleCounter(_Simple):
    """Releases round(g(t)): post-processing, still eps-DP."""

    def step(self, x: float) -> float:
        return float(round(self.advance(x)))


class MonotoneSimpleCounter(_Simple):
    """Releases max(previous release, g(t)) (projection onto non-decreasing sequences): still eps-DP."""

    def __init__(self, epsilon: float, noise: NoiseSource) -> None:
        super().__init__(epsilon, noise)
        self.last = -float("inf")

    def step(self, x: float) -> float:
        self.last = max(self.last, self.advance(x))
        return self.last


class OwnRngSimpleCounter:
    """001-alg8 with its own seeded generator; built by the seed hook ``lambda s: OwnRngSimpleCounter(eps, s)``."""

    def __init__(self, epsilon: float, seed: int) -> None:
        self.scale = 1.0 / epsilon
        self.rng = BulkNoise(seed)
        self.g = 0.0

    def step(self, x: float) -> float:
        self.g += x + float(self.rng.laplace_array(self.scale, 1)[0])
        return self.g
