"""Simple counter (Chan et al.'s "Simple II") — 001-alg8.

Each input is released once with fresh Laplace noise and accumulated:
g(t) = g(t-1) + f(t) + Lap(1/eps). An input f(tau) enters exactly one noisy
statistic (the increment at tau), so the counter is eps-DP under
:attr:`~dpstream.claims.Neighbour.STREAM_ENTRY`; the error at t is a sum of t
independent Lap(1/eps) terms, variance 2 t / eps^2 (proof: proofs/proof_simple_counter.py).

Range: |f(t)| <= 2^53 - 1 (``dpstream.errors.MAX_STREAM_SUM``), the rule of every counter (docs/counters.md,
"Range"); the counter forms no sums of inputs (g(t) sums noisy values: post-processing).
"""

from __future__ import annotations

from dpstream.claims import Neighbour, PrivacyClaim
from dpstream.convention import convention
from dpstream.counters.base import Counter, CounterStaging
from dpstream.errors import require_positive_finite
from dpstream.noise import DrawKind, NoiseSource, require_drawable, site
from dpstream.staged import laplace

__all__ = ["SimpleCounter"]


@convention(("epsilon", "noise"), ("epsilon", "noise", "horizon"), renamed={"horizon": "T"})
class SimpleCounter(Counter):
    """001-alg8. ``epsilon``: privacy budget; ``T``: optional finite horizon; ``noise``: the NoiseSource (secure by
    default)."""

    anchor = "001-alg8"
    loss_scales_with_l1 = True

    def __init__(self, epsilon: float, T: int | None = None, *, noise: NoiseSource | None = None) -> None:
        # [001-alg8 L1] Input: input stream f : N -> R, privacy budget eps
        # [001-alg8 L2] Output: output stream g : N -> R
        self.epsilon = require_positive_finite("epsilon", epsilon)
        require_drawable("epsilon", epsilon, DrawKind.LAPLACE, scale=1.0 / self.epsilon)
        super().__init__(noise, T)
        self.T = self.horizon  # the paper's name, as the other counters keep it (checkpoints record it)
        self.g = 0.0  # [001-alg8 L3] Assume g(0) <- 0

    @property
    def claim(self) -> PrivacyClaim:
        return PrivacyClaim.pure(self.epsilon, Neighbour.STREAM_ENTRY, "001-alg8")

    def _staging(self, x: float, t: int) -> CounterStaging:
        # g(t) <- g(t-1) + f(t) + Lap(1/eps): the door returns the noisy statistic f(t) + Lap(1/eps)
        # (value-in; requested with ``yield``, dpstream.staged); adding g(t-1) is post-processing
        g = self.g + (yield laplace(self.noise, site("001-alg8 L4", t=t), x, 1.0 / self.epsilon))  # [001-alg8 L4]

        def commit() -> None:
            self.g = g

        return g, commit

    def state_size(self) -> int:
        return 1
