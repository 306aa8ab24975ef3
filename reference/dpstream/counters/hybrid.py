"""Hybrid mechanism: an unbounded binary-tree counter (Chan, Shi & Song 2011).

Source
------
T.-H. H. Chan, E. Shi, D. Song, "Private and Continual Release of Statistics", ACM
Transactions on Information and System Security 14(3), Article 26, 2011 (ICALP 2010),
the section on counting without a known time upper bound: the *Logarithmic Mechanism*
L and the *Hybrid Mechanism* H built from L and the Binary Mechanism B. Cited by 003
(003-def3.11 "Hybrid Mechanism", 003-lemB.1 accuracy O(eps^-1 (log t)^1.5 log 1/beta))
and by 004 (section 1: "a modified Hybrid Mechanism was developed for the infinite case
in [14]"; 004 Lemma 6.1 quotes its "Corollary 4.8"). None of our five papers prints the
algorithm, so there are no line tags; the construction below is the article's, stated in
our terms. Caveat for auditors: the full text of the 2011 article was not retrievable in
this environment (the search tools return its abstract only), so the construction was
written from the published description as recalled and then proved from scratch in
proofs/proof_hybrid_counter.py, which is what the claim rests on. A public third-party
implementation (Rust) has the same structure: L with eps/2 releasing at powers of two,
and at each power 2^k a fresh Binary Mechanism with eps/2 for the following steps,
released as L(2^k) + B(t - 2^k).

Deliberate differences from the article as we understand it (neither weakens privacy):

* B_k's horizon is 2^k - 1 (the inputs it actually sees) rather than the time bound 2^k;
  the input at 2^(k+1) is counted by L, so a horizon of 2^k would only add one tree level
  of noise.
* B_k is this package's :class:`BinaryTreeCounter`, i.e. with the corrected node scale
  (floor(log2 T) + 1)/eps' of erratum E-counters-1, not the printed log2(T)/eps'.

Construction (budget eps split eps/2 + eps/2)
---------------------------------------------
* L (Logarithmic Mechanism, eps/2): at every t = 2^k (k >= 0) it adds the true sum of
  the inputs in (2^(k-1), 2^k] (for k = 0: f(1)) plus fresh Lap(2/eps) to its running
  value beta and releases beta. Each input enters exactly one L statistic.
* B_k (Binary Mechanism, eps/2), k >= 1: a :class:`BinaryTreeCounter` (001-alg10 with the
  corrected scale) with budget eps/2 and horizon 2^k - 1 runs on the inputs at times
  2^k + 1, ..., 2^(k+1) - 1 (local time tau = t - 2^k). Its scale is
  bit_length(2^k - 1)/(eps/2) = 2k/eps.
* Release: g(t) = beta at t = 2^k; g(t) = beta(2^k) + B_k(t - 2^k) for 2^k < t < 2^(k+1).
  (The input at 2^(k+1) is counted by L at that time; B_k never sees it, so its horizon
  is 2^k - 1, not 2^k: one tree node less per input than a horizon of 2^k.)

Claim: eps-DP under ``Neighbour.STREAM_ENTRY``: an input enters one L statistic (loss
<= eps/2) and, unless its time is a power of two, the nodes of one B_k (loss <= eps/2).
Error at t = 2^k + tau: the k + 1 L noises Lap(2/eps) plus the popcount(tau) node
noises Lap(2k/eps); variance 8 (k + 1)/eps^2 + 8 k^2 popcount(tau)/eps^2
(tau = 0: only the first term). State: O(log t) (beta, the pending L sum, B_k's nodes).

Range: |f(t)|, the sum of the inputs since the last power of two (L's next statistic, kept in ``pending``,
after every input) and B_k's p-sums within +-(2^53 - 1) (``dpstream.errors.MAX_STREAM_SUM``); a step leaving it
is refused before any draw (docs/counters.md, "Range").

Sites: L draws at ``"CSS11-hybrid L t=<t>"``; B_k draws in the scope
``"CSS11-hybrid B k=<k>"``, e.g. ``"CSS11-hybrid B k=2 / 001-alg10 L8 t=3"`` (its local t).
"""

from __future__ import annotations

from dpstream.claims import Neighbour, PrivacyClaim
from dpstream.convention import convention
from dpstream.counters.base import Counter, CounterStaging
from dpstream.counters.binary_tree import BinaryTreeCounter, binary_tree_scale
from dpstream.errors import MAX_STREAM_SUM, require_positive_finite, require_stream_sum
from dpstream.noise import DrawKind, NoiseSource, require_drawable, scoped, site
from dpstream.staged import laplace

__all__ = ["HYBRID_ANCHOR", "HybridCounter"]

HYBRID_ANCHOR = "CSS11-hybrid"
"""Anchor of the hybrid mechanism (Chan, Shi & Song 2011; not one of the five seed papers)."""


def _is_power_of_two(t: int) -> bool:
    return t > 0 and t & (t - 1) == 0


@convention(("epsilon", "noise"))
class HybridCounter(Counter):
    """Chan-Shi-Song Hybrid Mechanism: Logarithmic Mechanism at powers of two + a Binary
    Mechanism on each interval (2^k, 2^(k+1)); ``epsilon`` split in halves. Unbounded."""

    anchor = HYBRID_ANCHOR
    loss_scales_with_l1 = True

    def __init__(self, epsilon: float, *, noise: NoiseSource | None = None) -> None:
        self.epsilon = require_positive_finite("epsilon", epsilon)
        require_drawable("epsilon", epsilon, DrawKind.LAPLACE, scale=2.0 / self.epsilon)
        # the binary mechanisms B_k (horizon 2^k - 1, eps/2) of every interval a 64-bit time can reach
        require_drawable("epsilon", epsilon, DrawKind.LAPLACE, scale=binary_tree_scale(self.epsilon / 2.0, 2**63 - 1))
        super().__init__(noise, None)
        self.beta = 0.0  # L's running noisy count, released at powers of two
        self.pending = 0.0  # true sum of the inputs since the last power of two (L's next statistic)
        self.k = 0  # current interval: 2^k <= t < 2^(k+1)
        self.binary: BinaryTreeCounter | None = None  # B_k for the current interval

    @property
    def claim(self) -> PrivacyClaim:
        return PrivacyClaim.pure(self.epsilon, Neighbour.STREAM_ENTRY, "CSS11-hybrid",
                                 note="Chan, Shi & Song 2011 Hybrid Mechanism: eps/2 Logarithmic + "
                                      "eps/2 Binary (proofs/proof_hybrid_counter.py)")

    def binary_mechanism(self, k: int) -> BinaryTreeCounter:
        """B_k (k >= 1): budget eps/2, horizon 2^k - 1, scope ``"CSS11-hybrid B k=<k>"`` (creating it draws nothing)."""
        scope = site(f"{HYBRID_ANCHOR} B", k=k)
        return BinaryTreeCounter(self.epsilon / 2.0, 2**k - 1, noise=scoped(self.noise, scope))

    def _check_sums(self, x: float) -> None:
        pending = self.pending + x
        if not -MAX_STREAM_SUM <= pending <= MAX_STREAM_SUM:
            require_stream_sum("f(t)", "L's sum since the last power of two", pending, x)
        if not _is_power_of_two(self.t + 1) and self.binary is not None:
            self.binary._check_sums(x)  # B_k's p-sums (x itself is checked; B_k's horizon holds by construction)

    def _staging(self, x: float, t: int) -> CounterStaging:
        if _is_power_of_two(t):
            k = t.bit_length() - 1
            # L's statistic (the true sum since the last power of two) through the noise door (value-in)
            beta = self.beta + (yield laplace(self.noise, site(f"{HYBRID_ANCHOR} L", t=t), self.pending + x,
                                              2.0 / self.epsilon))
            binary = self.binary_mechanism(k) if k >= 1 else None

            def commit_power() -> None:
                self.beta, self.pending, self.k, self.binary = beta, 0.0, k, binary

            return beta, commit_power
        if self.binary is None:  # pragma: no cover - every non-power t > 2 follows a power t >= 2
            raise AssertionError(f"no binary mechanism at t={t}")
        step = yield from self.binary.staging(x)
        pending = self.pending + x

        def commit_between() -> None:
            step.commit()
            self.pending = pending

        return self.beta + step.release, commit_between

    def state_size(self) -> int:
        return 3 + (0 if self.binary is None else self.binary.state_size())
