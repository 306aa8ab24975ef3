"""Block counter with block size B (Chan et al.'s "Two-Level" counter) — 001-alg9.

Inside a block, every input is released once with fresh Lap(2/eps) noise and the noisy
values are accumulated in alpha (L10). At a block end t = kB the true block sum, kept in
beta (L5), is released once with fresh Lap(2/eps) noise (L7) and becomes the new base
beta_lastblock (L8); alpha restarts (L7). g(t) = beta_lastblock + alpha (L12).

Privacy: an input f(tau) enters at most two noisy statistics: its own in-block value
(only if tau is not a multiple of B) and the sum of its block (released at the end of
the block, if reached). Each has sensitivity 1 and scale 2/eps, so the loss is at most
2 * eps/2 = eps: Lap(2/eps) at both levels is exactly what the claim needs (checked,
no erratum; for tau = kB, and for every input when B = 1, the loss is only eps/2).

Behaviour at t = kB (checked): g(kB) = beta_lastblock = sum_{t<=kB} f(t) + k block
noises; the in-block noisy values of that block are discarded (they were released
before, and were paid for). Nothing is drawn for f(kB) at L10.

Range: |f(t)| and the block's true sum beta (L5, after every input) within +-(2^53 - 1)
(``dpstream.errors.MAX_STREAM_SUM``); a step leaving it is refused before any draw (docs/counters.md, "Range").

Claim: eps-DP under ``Neighbour.STREAM_ENTRY``. Error at t: the floor(t/B) block noises
plus the (t mod B) in-block noises of the current block; variance
``8 (floor(t/B) + t mod B) / eps^2``. State: 3 numbers (O(1)).
Proof: proofs/proof_block_counter.py.
"""

from __future__ import annotations

from dpstream.claims import Neighbour, PrivacyClaim
from dpstream.convention import convention
from dpstream.counters.base import Counter, CounterStaging
from dpstream.errors import MAX_STREAM_SUM, require_int_at_least, require_positive_finite, require_stream_sum
from dpstream.noise import DrawKind, NoiseSource, require_drawable, site
from dpstream.staged import laplace

__all__ = ["BlockCounter"]


@convention(("epsilon", "B", "noise"), ("epsilon", "B", "noise", "horizon"), renamed={"horizon": "T"})
class BlockCounter(Counter):
    """001-alg9. ``epsilon``: budget; ``B``: block size (>= 1); ``T``: optional finite horizon."""

    anchor = "001-alg9"
    loss_scales_with_l1 = True

    def __init__(
        self, epsilon: float, B: int, T: int | None = None, *, noise: NoiseSource | None = None
    ) -> None:
        # [001-alg9 L1] Input: input stream f : N -> R, privacy budget eps, block size B
        # [001-alg9 L2] Output: output stream g : N -> R
        self.epsilon = require_positive_finite("epsilon", epsilon)
        require_drawable("epsilon", epsilon, DrawKind.LAPLACE, scale=2.0 / self.epsilon)
        self.B = require_int_at_least("B", B, 1)
        super().__init__(noise, T)
        self.T = self.horizon  # the paper's name, as the other counters keep it (checkpoints record it)
        self.alpha, self.beta, self.beta_lastblock = 0.0, 0.0, 0.0  # [001-alg9 L3]

    @property
    def claim(self) -> PrivacyClaim:
        return PrivacyClaim.pure(self.epsilon, Neighbour.STREAM_ENTRY, "001-alg9",
                                 note=f"B = {self.B}; Lap(2/eps) at both levels")

    def _check_sums(self, x: float) -> None:
        beta = self.beta + x
        if not -MAX_STREAM_SUM <= beta <= MAX_STREAM_SUM:
            require_stream_sum("f(t)", "the block sum beta (001-alg9 L5)", beta, x)

    def _staging(self, x: float, t: int) -> CounterStaging:
        # [001-alg9 L4] for t = 1, 2, ... (one call per t)
        scale = 2.0 / self.epsilon
        alpha, beta, beta_lastblock = self.alpha, self.beta, self.beta_lastblock
        # Value-in noise (dpstream.noise): beta holds the TRUE sum of the current block, the statistic the
        # door noises at L7; the printed beta (the running noisy total) is beta_lastblock + beta here.
        beta = beta + x  # [001-alg9 L5] beta <- beta + f(t)
        if t % self.B == 0:  # [001-alg9 L6] t = k B for some k in N
            alpha, beta = 0.0, (yield laplace(self.noise, site("001-alg9 L7", t=t), beta, scale))  # [001-alg9 L7]
            beta_lastblock, beta = beta_lastblock + beta, 0.0  # [001-alg9 L8] (the next block's sum restarts at 0)
        else:
            alpha = alpha + (yield laplace(self.noise, site("001-alg9 L10", t=t), x, scale))  # [001-alg9 L10]
        g = beta_lastblock + alpha  # [001-alg9 L12]

        def commit() -> None:
            self.alpha, self.beta, self.beta_lastblock = alpha, beta, beta_lastblock

        return g, commit

    def state_size(self) -> int:
        return 3
