"""Tree-based aggregation with discrete Gaussian noise (rho-zCDP) — 002-alg3.

The same dyadic tree as 001-alg10: at time t with lowest set bit i, the node alpha_i
(the sum of z over (t - 2^i, t]) is formed (u4) and released once with fresh discrete
Gaussian noise (u8); S~^t sums the noisy nodes of the set bits of t (u9).

Noise (erratum E-counters-3, docs/errata/counters.md): u8 prints ``N(0, log T/(2 rho))``.
One input lies in up to floor(log2 T) + 1 nodes, each of sensitivity 1; by 002-thm2.1
(composition) and the discrete Gaussian's zCDP bound Delta^2/(2 sigma^2), the tree is
rho-zCDP iff sigma^2 >= (floor(log2 T) + 1)/(2 rho). With log = log2 the printed variance
gives rho (floor(log2 T)+1)/log2 T > rho (and sigma^2 = 0 at T = 1); with log = ln it is
worse. The default uses ``sigma^2 = (floor(log2 T) + 1)/(2 rho)``; ``as_printed=True``
uses ``log2(T)/(2 rho)`` (the reading least unfavourable to the paper) and accepts real
inputs as the box's ``z in R^T`` says.

Inputs (erratum E-counters-4): the box says z in R^T, but a discrete Gaussian shifted by
a non-integer amount has a disjoint support: neighbours f(t) = 0 and f(t) = 0.5 are then
perfectly distinguishable. 002-defA.1 speaks of natural numbers; the default accepts
integers only (any sign).

Claim: rho-zCDP under ``Neighbour.STREAM_ENTRY`` (002-defA.1: one entry changes by at most 1).
Error at t: the sum of popcount(t) i.i.d. N_Z(0, sigma^2); its exact variance is
``popcount(t) * Var(N_Z(0, sigma^2))`` (computed by summing the pmf; slightly below sigma^2).
State: O(log t). Proof: proofs/proof_tree_aggregation_counter.py.

Range: |z^t| and every p-sum alpha_i of u4 within +-(2^53 - 1) (``dpstream.errors.MAX_STREAM_SUM``), computed
correctly rounded as in 001-alg10 (``dpstream.counters.binary_tree.p_sum``); a step leaving it is refused before any
draw (docs/counters.md, "Range").
"""

from __future__ import annotations

import math

from dpstream.claims import Neighbour, PrivacyClaim
from dpstream.convention import convention
from dpstream.counters.base import Counter, CounterStaging
from dpstream.counters.binary_tree import lowest_set_bit, p_sum
from dpstream.errors import (
    MAX_STREAM_SUM,
    DPStreamInputError,
    require_int_at_least,
    require_positive_finite,
    require_stream_sum,
)
from dpstream.noise import DrawKind, NoiseSource, require_drawable, site
from dpstream.staged import discrete_gaussian

__all__ = ["TreeAggregationCounter", "tree_aggregation_sigma2"]

ANCHOR = "002-alg3"


def tree_aggregation_sigma2(rho: float, T: int, *, as_printed: bool = False) -> float:
    """Variance parameter of 002-alg3 u8: (floor(log2 T)+1)/(2 rho), or the printed log2(T)/(2 rho)."""
    rho = require_positive_finite("rho", rho)
    T = require_int_at_least("T", T, 1)
    if as_printed:
        if T < 2:
            raise DPStreamInputError(
                "T", "as_printed needs T >= 2: the printed variance log(T)/(2 rho) is 0 at T = 1 (no noise)", T)
        return math.log2(T) / (2.0 * rho)
    return T.bit_length() / (2.0 * rho)


@convention(("rho", "T", "noise"))
class TreeAggregationCounter(Counter):
    """002-alg3. ``rho``: zCDP budget; ``T``: time upper bound; integer inputs (see module doc)."""

    anchor = ANCHOR
    integer_input = True
    loss_scales_with_l1 = True

    def __init__(self, rho: float, T: int, *, noise: NoiseSource | None = None, as_printed: bool = False) -> None:
        # Input: time upper bound T, privacy parameter rho, stream z (taken here and by step())
        self.rho = require_positive_finite("rho", rho)
        T = require_int_at_least("T", T, 1)
        if not isinstance(as_printed, bool):
            raise DPStreamInputError("as_printed", "must be a bool", as_printed)
        self.as_printed = as_printed
        self.sigma2 = tree_aggregation_sigma2(self.rho, T, as_printed=as_printed)
        require_drawable("rho", rho, DrawKind.DISCRETE_GAUSSIAN, sigma2=self.sigma2)
        super().__init__(noise, T)
        self.T = T
        self.integer_input = not as_printed
        # Initialization: each alpha_i and alpha~_i initialised to 0 (stored lazily, as in 001-alg10)
        self.alpha: list[float] = []
        self.alpha_tilde: list[float] = []

    @property
    def claim(self) -> PrivacyClaim:
        """rho by default; as printed, the exact zCDP cost rho (floor(log2 T)+1) / log2 T on integer inputs."""
        if self.as_printed:
            worst = self.rho * self.T.bit_length() / math.log2(self.T)
            note = (f"AS PRINTED (N_Z(0, log2 T/(2 rho)), real inputs): the paper claims rho={self.rho:g}, but an "
                    f"input enters up to floor(log2 T)+1 = {self.T.bit_length()} nodes, so only rho={worst:.6g} "
                    "holds, and only for integer inputs: a non-integer input is not private at all "
                    "(docs/errata/counters.md E-counters-3, -4)")
            return PrivacyClaim.zcdp(worst, Neighbour.STREAM_ENTRY, "002-thmA.1", note=note)
        note = f"N_Z(0, (floor(log2 T)+1)/(2 rho)) per node, T = {self.T}; integer inputs"
        return PrivacyClaim.zcdp(self.rho, Neighbour.STREAM_ENTRY, "002-thmA.1", note=note)

    @property
    def paper_claim(self) -> PrivacyClaim:
        """002 Theorem A.1: rho-zCDP (not met by the printed variance, see :attr:`claim`)."""
        return PrivacyClaim.zcdp(self.rho, Neighbour.STREAM_ENTRY, "002-thmA.1", note="as stated by the paper")

    def _check_sums(self, x: float) -> None:
        t = self.t + 1
        if t & 1:
            return  # i = 0: alpha_0 = z^t, already within the range
        alpha_i = p_sum(self.alpha, lowest_set_bit(t), x)
        if not -MAX_STREAM_SUM <= alpha_i <= MAX_STREAM_SUM:
            require_stream_sum("f(t)", "the p-sum alpha_i (002-alg3 u4)", alpha_i, x)

    def _staging(self, x: float, t: int) -> CounterStaging:
        # [002-alg3 u1] for t <- 1 to T (one call per t; stepping past T is refused by the base class)
        n = t.bit_length() - 1
        Bin = [(t >> j) & 1 for j in range(n + 1)]  # [002-alg3 u2] t = sum_j Bin_j(t) 2^j
        i = min(j for j in range(n + 1) if Bin[j] != 0)  # [002-alg3 u3] i = min{j : Bin_j(t) != 0}
        alpha = self.alpha + [0.0] * (n + 1 - len(self.alpha))
        alpha_tilde = self.alpha_tilde + [0.0] * (n + 1 - len(self.alpha_tilde))
        alpha[i] = p_sum(alpha, i, x)  # [002-alg3 u4] alpha_i <- sum_{j<i} alpha_j + z^t (correctly rounded)
        for j in range(i):  # [002-alg3 u5] for j <- 0 to i - 1
            alpha[j] = 0.0  # [002-alg3 u6] alpha_j <- 0 and alpha~_j <- 0
            alpha_tilde[j] = 0.0
        # alpha~_i <- alpha_i + N(0, sigma^2): the p-sum alpha_i goes through the noise door (value-in); with
        # integer inputs it is an exact integer. AS PRINTED (real inputs, E-counters-4) the door noises its integer
        # part and the fractional part is added unnoised, as the printed alpha_i + N_Z does (same float result).
        base = int(alpha[i]) if self.integer_input else math.floor(alpha[i])
        noisy = yield discrete_gaussian(self.noise, site("002-alg3 u8", t=t), base, self.sigma2)
        alpha_tilde[i] = noisy + (0.0 if self.integer_input else alpha[i] - base)  # [002-alg3 u8]
        S = sum(alpha_tilde[j] for j in range(n + 1) if Bin[j] == 1)  # [002-alg3 u9] S~^t

        def commit() -> None:
            self.alpha = alpha
            self.alpha_tilde = alpha_tilde

        return S, commit

    def state_size(self) -> int:
        return len(self.alpha) + len(self.alpha_tilde)
