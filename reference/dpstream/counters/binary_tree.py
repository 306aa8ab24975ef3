"""Binary Tree counter (Chan et al.'s Binary Mechanism) — 001-alg10.

At time t with lowest set bit j, the counter forms the p-sum alpha_j of the dyadic
interval (t - 2^j, t] (L7), releases it once with fresh noise as alpha_hat_j (L8), and
answers g(t) with the noisy p-sums of the set bits of t (L10). Every time t creates
exactly one noisy node, so over a horizon T there are T nodes; an input f(tau) lies in
the nodes tau, tau + lsb(tau), ... <= T, i.e. in at most ``floor(log2 T) + 1`` of them
(tau = 1: nodes 1, 2, 4, ..., 2^floor(log2 T)).

Noise scale (erratum E-counters-1, docs/errata/counters.md): the printed L8 draws
``Lap(log_2 T / eps)``. Since one input enters up to floor(log2 T) + 1 nodes, the
printed scale gives a worst-case loss of eps (floor(log2 T) + 1) / log2 T > eps (and a
zero scale at T = 1). The default follows the claim: scale ``(floor(log2 T) + 1) / eps``
(= ``T.bit_length() / eps``). ``as_printed=True`` keeps the printed scale (T >= 2).

``discrete=True`` is the same tree on integer inputs with discrete Laplace noise
Lap_Z(scale) (004-sec2.4): the Binary Mechanism used by 004-alg2 (004-lem3.1).

Claim: eps-DP (pure) under ``Neighbour.STREAM_ENTRY`` (001-def4.1). Error at t: the
sum of the popcount(t) node noises of the set bits of t; variance
``popcount(t) * 2 b^2`` (Laplace, b the scale) or ``popcount(t) * 2p/(1-p)^2`` with
p = exp(-1/b) (discrete Laplace). State: 2 (floor(log2 t) + 1) numbers (O(log t)).
Proof: proofs/proof_binary_tree_counter.py.

Range: |f(t)| and every p-sum alpha_j of L7 (the sum of the inputs in (t - 2^j, t]) within +-(2^53 - 1)
(``dpstream.errors.MAX_STREAM_SUM``); a step leaving it is refused before any draw (docs/counters.md, "Range").
L7 is computed correctly rounded (``math.fsum``): exact for integer inputs in the range even when a partial sum of
sum_{i<j} alpha_i leaves it (left to right, p-sums M, 2 and the input -M with M = 2^53 - 1 give 1, not 2).
"""

from __future__ import annotations

import math

from dpstream.arithmetic import kernel
from dpstream.claims import Neighbour, PrivacyClaim
from dpstream.convention import convention
from dpstream.counters.base import Counter, CounterStaging
from dpstream.errors import (
    MAX_STREAM_SUM,
    DPStreamInputError,
    require_int_at_least,
    require_positive_finite,
    require_stream_sum,
)
from dpstream.noise import DrawKind, NoiseSource, require_drawable, site
from dpstream.staged import DrawRequest, discrete_laplace, laplace

__all__ = ["BinaryTreeCounter", "binary_tree_nodes_per_input", "binary_tree_scale", "lowest_set_bit", "p_sum"]

ANCHOR = "001-alg10"


def binary_tree_nodes_per_input(T: int) -> int:
    """Most noisy nodes one input enters over horizon T: floor(log2 T) + 1 (= T.bit_length())."""
    return require_int_at_least("T", T, 1).bit_length()


def binary_tree_scale(epsilon: float, T: int, *, as_printed: bool = False) -> float:
    """Noise scale of 001-alg10 L8: (floor(log2 T)+1)/eps by default, the printed log2(T)/eps if asked."""
    epsilon = require_positive_finite("epsilon", epsilon)
    T = require_int_at_least("T", T, 1)
    if as_printed:
        if T < 2:
            raise DPStreamInputError(
                "T", "as_printed needs T >= 2: the printed scale log_2(T)/eps is 0 at T = 1 (no noise)", T)
        return math.log2(T) / epsilon
    return binary_tree_nodes_per_input(T) / epsilon


def p_sum(alpha: list[float], j: int, x: float) -> float:
    """sum_{i<j} alpha_i + x, the p-sum of 001-alg10 L7 (002-alg3 u4), correctly rounded (``math.fsum``: exact for
    integer values whose sum lies within 2^53, whatever the partial sums)."""
    return math.fsum([*alpha[:j], x])


def lowest_set_bit(t: int) -> int:
    """j = min{i : b_i != 0} for t >= 1 (001-alg10 L6, 002-alg3 u3)."""
    return (t & -t).bit_length() - 1


@convention(("epsilon", "T", "noise"))
class BinaryTreeCounter(Counter):
    """001-alg10. ``epsilon``: budget; ``T``: horizon; ``discrete``: integer inputs and Lap_Z noise.

    ``as_printed=True`` draws with the printed scale log_2(T)/eps (NOT eps-DP, see module doc);
    its :attr:`claim` still states the paper's eps and says in its note that it does not hold.
    """

    anchor = ANCHOR
    loss_scales_with_l1 = True

    def __init__(
        self,
        epsilon: float,
        T: int,
        *,
        noise: NoiseSource | None = None,
        discrete: bool = False,
        as_printed: bool = False,
    ) -> None:
        # [001-alg10 L1] Input: input stream f : N -> R, privacy budget eps, time horizon T
        # [001-alg10 L2] Output: output stream g : N -> R
        self.epsilon = require_positive_finite("epsilon", epsilon)
        T = require_int_at_least("T", T, 1)
        if not isinstance(discrete, bool):
            raise DPStreamInputError("discrete", "must be a bool", discrete)
        if not isinstance(as_printed, bool):
            raise DPStreamInputError("as_printed", "must be a bool", as_printed)
        self.discrete = discrete
        self.as_printed = as_printed
        self.scale = binary_tree_scale(self.epsilon, T, as_printed=as_printed)
        require_drawable("epsilon", epsilon, DrawKind.DISCRETE_LAPLACE if discrete else DrawKind.LAPLACE,
                         scale=self.scale)
        super().__init__(noise, T)
        self.T = T
        self.integer_input = discrete
        # [001-alg10 L3] alpha_i, alpha_hat_i <- 0 for all i in N. Stored lazily: index i exists
        # once some t >= 2^i was seen (absent entries are the printed zeros).
        self.alpha: list[float] = []
        self.alpha_hat: list[float] = []

    @property
    def claim(self) -> PrivacyClaim:
        """eps by default; as printed, the exact worst-case loss eps (floor(log2 T)+1) / log2 T > eps."""
        law = "Lap_Z" if self.discrete else "Lap"
        if self.as_printed:
            nodes = binary_tree_nodes_per_input(self.T)
            worst = self.epsilon * nodes / math.log2(self.T)
            note = (f"AS PRINTED ({law}(log2 T/eps)): the paper claims eps={self.epsilon:g}, but an input enters "
                    f"up to floor(log2 T)+1 = {nodes} nodes, so only eps={worst:.6g} holds "
                    "(docs/errata/counters.md E-counters-1)")
            return PrivacyClaim.pure(worst, Neighbour.STREAM_ENTRY, "001-alg10", note=note)
        note = f"{law}((floor(log2 T)+1)/eps) per node, T = {self.T}"
        return PrivacyClaim.pure(self.epsilon, Neighbour.STREAM_ENTRY, "001-alg10", note=note)

    @property
    def paper_claim(self) -> PrivacyClaim:
        """001 App. D / Chan et al.: eps-DP (not met by the printed scale, see :attr:`claim`)."""
        return PrivacyClaim.pure(self.epsilon, Neighbour.STREAM_ENTRY, "001-alg10", note="as stated by the paper")

    def _check_sums(self, x: float) -> None:
        t = self.t + 1
        if t & 1:
            return  # j = 0: alpha_0 = f(t), already within the range
        alpha_j = p_sum(self.alpha, lowest_set_bit(t), x)
        if not -MAX_STREAM_SUM <= alpha_j <= MAX_STREAM_SUM:
            require_stream_sum("f(t)", "the p-sum alpha_j (001-alg10 L7)", alpha_j, x)

    def _noisy(self, t: int, alpha_j: float) -> DrawRequest:
        """The request alpha_j + Lap(scale) (Lap_Z when ``discrete``) to the noise door: alpha_j is the p-sum
        whose sensitivity the proof bounds (when ``discrete``, an integer within MAX_STREAM_SUM: exact in the float)."""
        where = site("001-alg10 L8", t=t)
        if self.discrete:
            return discrete_laplace(self.noise, where, int(alpha_j), self.scale)
        return laplace(self.noise, where, alpha_j, self.scale)

    def _staging(self, x: float, t: int) -> CounterStaging:
        # [001-alg10 L4] for t = 1, 2, ... (one call per t; the horizon is checked by the base class)
        # [001-alg10 L5] b_n ... b_1 b_0: the (n+1)-bit binary representation of t
        n = t.bit_length() - 1
        b = [(t >> i) & 1 for i in range(n + 1)]
        j = min(i for i in range(n + 1) if b[i] != 0)  # [001-alg10 L6] j <- min{i : b_i != 0}
        alpha = self.alpha + [0.0] * (n + 1 - len(self.alpha))
        alpha_hat = self.alpha_hat + [0.0] * (n + 1 - len(self.alpha_hat))
        alpha[j] = p_sum(alpha, j, x)  # [001-alg10 L7] alpha_j <- sum_{i<j} alpha_i + f(t) (correctly rounded)
        alpha_hat[j] = float((yield self._noisy(t, alpha[j])))  # [001-alg10 L8] alpha_hat_j <- alpha_j + Lap(scale)
        for i in range(j):  # [001-alg10 L9] alpha_i, alpha_hat_i <- 0 for all i < j
            alpha[i] = 0.0
            alpha_hat[i] = 0.0
        g = kernel().total(alpha_hat[i] for i in range(n + 1) if b[i] == 1)  # [001-alg10 L10]

        def commit() -> None:
            self.alpha = alpha
            self.alpha_hat = alpha_hat

        return g, commit

    def state_size(self) -> int:
        return len(self.alpha) + len(self.alpha_hat)
