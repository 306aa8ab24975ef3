"""Unbounded block counter — 003-alg4 (= 000-alg4).

Time is cut into partitions of lengths 4, 9, 16, ... (T = B^2); inside the partition
with block size B the counter runs the block counter of 001-alg9: an in-block value
f(t) + Lap(2/eps) at every t that does not end a block (003 L21), a block sum
alpha_trueInBlock + Lap(2/eps) at every block end (003 L14). alpha_lastBlock carries
all block sums of all partitions so far.

003-alg4 and 000-alg4 are the same algorithm: 000 prints ``end if``/``end for`` lines
(so its numbering shifts: 003 L20-L23 = 000 L21-L23, L25), and typos in L1/L2/L7
("privacy budget a", "q : N -> R", "sunthInBlock"); both print the typo
``alpha_tueInBlock`` in L14 (read as alpha_trueInBlock). Every printed line carries
both tags below.

Privacy (003-thm8.1 / 000-thm4.2, checked in proofs/proof_unbounded_block_counter.py):
an input enters its in-block statistic (unless its time ends a block) and the sum of
its block, each Lap(2/eps) with sensitivity 1, so the printed algorithm is eps-DP under
``Neighbour.STREAM_ENTRY``; no correction is needed. ``as_printed`` is accepted for the
agreed API and changes nothing.

Accuracy (finding, no claim in the papers): alpha_lastBlock accumulates one noise per
block of *every* past partition. After m full partitions (t = sum_{B=2}^{m+1} B^2 ~ m^3/3)
there are sum_{B=2}^{m+1} B ~ m^2/2 block noises, so the error standard deviation grows
like t^{1/3}, not like the t^{1/4} of a bounded block counter with B = sqrt(T).
Exact variance at t: 8 (blocks completed so far + in-block steps since the last block
end) / eps^2. State: 6 numbers (O(1)). docs/counters.md gives the numbers.

Range: |f(t)| and the block's true sum alpha_trueInBlock (L12, after every input) within +-(2^53 - 1)
(``dpstream.errors.MAX_STREAM_SUM``); a step leaving it is refused before any draw (docs/counters.md, "Range").
"""

from __future__ import annotations

from dataclasses import dataclass

from dpstream.claims import Neighbour, PrivacyClaim
from dpstream.convention import convention
from dpstream.counters.base import Counter, CounterStaging
from dpstream.errors import MAX_STREAM_SUM, DPStreamInputError, require_positive_finite, require_stream_sum
from dpstream.noise import DrawKind, NoiseSource, require_drawable, site
from dpstream.staged import laplace

__all__ = ["UnboundedBlockCounter"]


@dataclass(frozen=True)
class _State:
    T: int
    B: int
    alpha_lastBlock: float
    alpha_trueInBlock: float
    alpha_synthInBlock: float
    t_atPartition: int


@convention(("epsilon", "noise"))
class UnboundedBlockCounter(Counter):
    """003-alg4 / 000-alg4. ``epsilon``: budget. Unbounded (no horizon)."""

    anchor = "003-alg4"
    loss_scales_with_l1 = True

    def __init__(self, epsilon: float, *, noise: NoiseSource | None = None, as_printed: bool = False) -> None:
        # [003-alg4 L1] [000-alg4 L1] Input: input stream f : N -> R, the privacy budget eps
        # [003-alg4 L2] [000-alg4 L2] Output: a synthetic stream g : N -> R
        self.epsilon = require_positive_finite("epsilon", epsilon)
        require_drawable("epsilon", epsilon, DrawKind.LAPLACE, scale=2.0 / self.epsilon)
        if not isinstance(as_printed, bool):
            raise DPStreamInputError("as_printed", "must be a bool", as_printed)
        self.as_printed = as_printed  # the printed algorithm meets its claim: nothing to switch
        super().__init__(noise, None)
        self.state = _State(
            T=4,  # [003-alg4 L3] [000-alg4 L3] partition size T <- 4
            B=2,  # [003-alg4 L4] [000-alg4 L4] block size B <- 2
            alpha_lastBlock=0.0,  # [003-alg4 L5] [000-alg4 L5]
            alpha_trueInBlock=0.0,  # [003-alg4 L6] [000-alg4 L6]
            alpha_synthInBlock=0.0,  # [003-alg4 L7] [000-alg4 L7]
            t_atPartition=0,  # [003-alg4 L8] [000-alg4 L8]
        )
        self.g0 = 0.0  # [003-alg4 L9] [000-alg4 L9] g(0) = 0

    @property
    def claim(self) -> PrivacyClaim:
        return PrivacyClaim.pure(self.epsilon, Neighbour.STREAM_ENTRY, "003-thm8.1",
                                 note="= 000-thm4.2; Lap(2/eps) at both levels")

    @property
    def B(self) -> int:
        return self.state.B

    def _check_sums(self, x: float) -> None:
        total = self.state.alpha_trueInBlock + x
        if not -MAX_STREAM_SUM <= total <= MAX_STREAM_SUM:
            require_stream_sum("f(t)", "the block sum alpha_trueInBlock (003-alg4 L12)", total, x)

    def _staging(self, x: float, t: int) -> CounterStaging:
        # [003-alg4 L10] [000-alg4 L10] for t = 1, 2, ... (one call per t)
        s = self.state
        T, B, t_atPartition = s.T, s.B, s.t_atPartition
        alpha_lastBlock, alpha_synthInBlock = s.alpha_lastBlock, s.alpha_synthInBlock
        scale = 2.0 / self.epsilon
        delta = t - t_atPartition  # [003-alg4 L11] [000-alg4 L11]
        alpha_trueInBlock = s.alpha_trueInBlock + x  # [003-alg4 L12] [000-alg4 L12]
        if delta % B == 0:  # [003-alg4 L13] [000-alg4 L13] delta = kB for some k in Z
            # [003-alg4 L14] [000-alg4 L14] (printed "alpha_tueInBlock": a typo for alpha_trueInBlock)
            alpha_lastBlock = alpha_lastBlock + (yield laplace(  # the block's true sum, value-in
                self.noise, site("003-alg4 L14", t=t), alpha_trueInBlock, scale))
            alpha_trueInBlock, alpha_synthInBlock = 0.0, 0.0  # [003-alg4 L15] [000-alg4 L15]
            g = alpha_lastBlock  # [003-alg4 L16] [000-alg4 L16]
            if delta == T:  # [003-alg4 L17] [000-alg4 L17]
                t_atPartition = t  # [003-alg4 L18] [000-alg4 L18]
                B = B + 1  # [003-alg4 L19] [000-alg4 L19] B <- B + 1 and T <- B^2 (in this order)
                T = B * B
        else:  # 003 L20 / 000 L21: else
            alpha_synthInBlock = alpha_synthInBlock + (yield laplace(
                self.noise, site("003-alg4 L21", t=t), x, scale))  # [003-alg4 L21] [000-alg4 L22]
            g = alpha_lastBlock + alpha_synthInBlock  # [003-alg4 L22] [000-alg4 L23]
        new = _State(T, B, alpha_lastBlock, alpha_trueInBlock, alpha_synthInBlock, t_atPartition)

        def commit() -> None:
            self.state = new

        return g, commit  # [003-alg4 L23] [000-alg4 L25] release g(t)

    def state_size(self) -> int:
        return 6
