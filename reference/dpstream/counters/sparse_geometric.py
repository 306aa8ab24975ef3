"""Sparse counting (004-alg2) with its threshold tests drawn as first-failure times: equal in law.

The printed 004-alg2 draws a fresh test noise lambda'_u ~ Lap_Z(b) at *every* time u of a
segment (site ``004-alg2 u3 j=<j> t=<u>``), also when X_u = 0; a region of 004-alg1 that receives
no point still makes one draw per step, so t steps of 004-alg1 make Theta(eps t^2) draws
(docs/errata/hypercube.md E-hypercube-15). The tests are used only through their outcomes:
the test of time u passes iff N_j + lambda'_u <= T~_j, i.e. iff lambda'_u <= c with
c = floor(T~_j) - N_j. While the count N_j does not change (inputs 0), the outcomes are
independent with the same pass probability P(Lap_Z(b) <= c), so what matters is the index
of the *first* failing test of such a run, a geometric variable truncated at the horizon.

:class:`GeometricSparseCounter` draws exactly that: at the first test made with a new count
(the segment's first test, or the first test after an input 1) it draws, for the tests of
times u0, u0 + 1, ..., T - 1 that would all see this count, the time of the first failure
or "none" (:func:`first_failure`). The draw is discarded when an input 1 changes the count
first (the outcomes of the remaining tests are independent of the past, so redrawing them
with the new count gives the same law). Every other line is 004-alg2 as in
:class:`~dpstream.counters.sparse.SparseCounter` (default reading, E-hypercube-3/4), with the
same threshold and A_sub sites. Equal in law, *not* under one tape: the printed tests'
sites ``004-alg2 u3 j=<j> t=<u>`` are replaced by ``004-alg2 u3 j=<j> first=<u0>`` (whether some
test of the run fails) and ``... first=<u0> within=<lo>,<hi>`` (bisection of the failure time).

Draws: one per run of equal counts (one per input 1 and one per segment), plus
ceil(log2(T - u0)) when a segment ends. :meth:`GeometricSparseCounter.skip_zeros` advances k
zero steps with O(1 + segment ends) work, which is what makes the efficient 004-alg1
(:mod:`dpstream.hypercube.efficient`) cost O(t log t + eps t) operations instead of Theta(eps t^2).

Each Bernoulli event is one discrete Laplace draw (:func:`bernoulli`): for Z ~ Lap_Z(s),
P(Z != 0) = 2p/(1+p) with p = exp(-1/s), so s = -1/log(p) with p = pi/(2 - pi) gives the event
{Z != 0} probability pi (the smaller of pi and 1 - pi is drawn, so s <= 1/log 3). The
probabilities are computed in floating point (relative error about 1e-13; an event whose
probability underflows to 0 is not drawn): the law equals the printed one up to that rounding.
Proof of the equality in law: proofs/proof_hypercube_efficient.py (claim B); tested against the law of
the printed box written again in tests/hypercube/test_sparse_geometric.py. Use it for simulations (the
``hypercube-rate`` experiment); the default 004-alg1 keeps the printed tests.
"""

from __future__ import annotations

import math

from dpstream.claims import Neighbour, PrivacyClaim
from dpstream.convention import convention
from dpstream.counters.base import CounterFactory, CounterStaging
from dpstream.counters.sparse import SparseCounter
from dpstream.errors import DPStreamInputError
from dpstream.noise import NoiseSource, site
from dpstream.staged import run

__all__ = ["GeometricSparseCounter", "bernoulli", "first_failure", "log_test_pass"]


def _discrete_laplace(noise: NoiseSource, where: str, value: int, scale: float) -> int:
    """The only draw of this module (one helper per draw kind): value + Lap_Z(scale) at ``where``."""
    return noise.add_discrete_laplace(where, value, scale)


def log_test_pass(c: int, scale: float) -> tuple[float, float]:
    """(log P(Z <= c), log P(Z > c)) for Z ~ Lap_Z(scale), without cancellation (004-sec2.4).

    P(Z > c) = p^{c+1}/(1+p) for c >= 0 and P(Z <= c) = p^{-c}/(1+p) for c < 0, p = exp(-1/scale).
    """
    log_p = -1.0 / scale
    log_norm = math.log1p(math.exp(log_p))
    if c >= 0:
        log_fail = (c + 1) * log_p - log_norm
        return math.log1p(-math.exp(log_fail)), log_fail
    log_pass = -c * log_p - log_norm
    return log_pass, math.log1p(-math.exp(log_pass))


def bernoulli(noise: NoiseSource, where: str, pi: float, pi_complement: float) -> bool:
    """True with probability ``pi`` (``pi + pi_complement = 1``, both given to keep precision).

    One Lap_Z(s) draw Z at ``where``: the less likely of the two outcomes is {Z != 0}, which has
    probability 2p/(1+p) = q for p = q/(2-q) <= 1/3, s = -1/log p. No draw when q == 0.
    """
    q, q_is_pi = (pi, True) if pi <= pi_complement else (pi_complement, False)
    if q <= 0.0:
        return not q_is_pi
    p = q / (2.0 - q)
    hit = _discrete_laplace(noise, where, 0, -1.0 / math.log(p)) != 0
    return hit if q_is_pi else not hit


def first_failure(noise: NoiseSource, j: int, u0: int, H: int, log_pass: float, log_fail: float) -> int | None:
    """The time of the first failing test among H tests of times u0..u0+H-1 that pass independently
    with probability exp(log_pass), or None. Sites ``004-alg2 u3 j=<j> first=<u0>`` (some test fails)
    and ``... within=<lo>,<hi>`` (the failure lies in the first half of [lo, hi) given it lies in [lo, hi))."""
    if log_fail == 0.0 or log_pass == -math.inf:
        return u0  # the test fails surely (in floating point)
    if log_pass == 0.0:
        return None  # it passes surely (its failure probability underflows)
    # [004-alg2 u3] the tests N_j + lambda'_u <= T~_j of times u0..u0+H-1: does one of them fail?
    if not bernoulli(noise, site("004-alg2 u3", j=j, first=u0), -math.expm1(H * log_pass), math.exp(H * log_pass)):
        return None
    lo, hi = 0, H  # the first failure lies in [lo, hi) (offsets from u0)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        # P(first failure < mid | it lies in [lo, hi)) = (1 - P^(mid-lo)) / (1 - P^(hi-lo)), P = exp(log_pass)
        whole = math.expm1((hi - lo) * log_pass)
        left = math.expm1((mid - lo) * log_pass) / whole
        right = math.exp((mid - lo) * log_pass) * math.expm1((hi - mid) * log_pass) / whole
        if bernoulli(noise, site("004-alg2 u3", j=j, first=u0, within=(lo, hi)), left, right):
            hi = mid
        else:
            lo = mid
    return u0 + lo


@convention(("epsilon", "T", "noise"))
class GeometricSparseCounter(SparseCounter):
    """004-alg2 (default reading) with first-failure draws instead of one test draw per step; see the module doc."""

    def __init__(self, epsilon: float, T: int, *, noise: NoiseSource | None = None,
                 as_printed: bool = False, subroutine: CounterFactory | None = None) -> None:
        if as_printed is not False:
            raise DPStreamInputError("as_printed", "the first-failure form exists for the default reading only "
                                     "(a new segment is first tested after one input)", as_printed)
        super().__init__(epsilon, T, noise=noise, subroutine=subroutine)
        self.test_scale = 2.0 / self.epsilon  # lambda'_t ~ Lap_Z(2/eps)
        self.fail_at: int | None = None  # first failing test time of the current run of equal counts
        self.drawn = False  # fail_at is drawn for the current count

    @property
    def claim(self) -> PrivacyClaim:
        base = super().claim
        return PrivacyClaim.pure(self.epsilon, Neighbour.STREAM_ENTRY, base.source,
                                 note=base.note + "; tests drawn as first-failure times (equal in law to 004-alg2 "
                                 "up to floating-point rounding of the Bernoulli probabilities)")

    def _first_failure(self, j: int, u0: int, N: int, T_tilde: float) -> int | None:
        log_pass, log_fail = log_test_pass(math.floor(T_tilde) - N, self.test_scale)
        return first_failure(self.noise, j, u0, self.T - u0, log_pass, log_fail)

    def _staging(self, x: float, t: int) -> CounterStaging:
        j, N, T_tilde, read, N_tilde = self.j, self.N, self.T_tilde, self.read, self.N_tilde
        fail_at, drawn = self.fail_at, self.drawn
        sub = None
        ended = 0
        u = t - 1  # the test below sees the segment's count through X_u ("time u")
        if T_tilde is None:
            N, read = 0, 0  # [004-alg2 u2] segment count N_j = 0
            T_tilde = yield from self._threshold(j)  # [004-alg2 u2] T~_j = T_0 + lambda_j
        if read > 0:
            # [004-alg2 u3] the test of time u; its outcome comes from the run's first-failure time
            if not drawn:
                fail_at, drawn = self._first_failure(j, u, N, T_tilde), True
            if fail_at == u:
                j += 1  # [004-alg2 u7] end the segment j and set j <- j + 1
                ended = 1
                sub = self._copy_sub()
                N_tilde = (yield from sub.staging(N)).commit()  # [004-alg2 u8] run A_sub on N_{j-1}; N~ <- its output
                N, read = 0, 0  # [004-alg2 u2] next segment: N_j = 0, T~_j = T_0 + lambda_j
                T_tilde = yield from self._threshold(j)
                drawn = False
        N, read = N + int(x), read + 1  # [004-alg2 u4] t <- t + 1, N_j <- N_j + X_t
        if x:
            drawn = False  # the count changed: the next test starts a new run
        g = N_tilde  # [004-alg2 u5] output the same N~ for all t in this segment

        def commit() -> None:
            self.j, self.N, self.T_tilde, self.read, self.N_tilde = j, N, T_tilde, read, N_tilde
            self.fail_at, self.drawn = fail_at, drawn
            self.segments_ended += ended
            if sub is not None:
                self.sub = sub

        return g, commit

    def skip_zeros(self, k: int) -> int:
        """Advance k steps with input 0 in place, with the draws of k :meth:`step` calls, O(1 + segment ends) work.

        Not atomic (a failing draw leaves the counter part-way) and the skipped releases are not
        appended to :attr:`releases`; for the lazy 004-alg1 driver. Returns the number of
        operations (1 + segment ends).
        """
        if k < 0 or (self.horizon is not None and self.t + k > self.horizon):
            raise DPStreamInputError("k", f"must lie in [0, T - t] = [0, {self.T - self.t}]", k)
        end = self.t + k
        operations = 1
        while self.t < end:
            t = self.t + 1
            if self.T_tilde is None:
                self.N, self.read = 0, 0
                self.T_tilde = run(self._threshold(self.j))  # [004-alg2 u2] the first segment's threshold
            if self.read == 0:  # no test is due before the segment's first input: read X_t = 0
                self.read, self.t = 1, t
                continue
            if not self.drawn:  # [004-alg2 u3] the first test of this run is the one of time t - 1
                self.fail_at, self.drawn = self._first_failure(self.j, t - 1, self.N, self.T_tilde), True
            if self.fail_at is None or self.fail_at > end - 1:  # the tests of times t-1..end-1 all pass
                self.read, self.t = self.read + end - self.t, end
                continue
            # [004-alg2 u3] the test of time fail_at (made in step fail_at + 1) fails; [004-alg2 u7]-[004-alg2 u8]
            assert self.fail_at >= t - 1, "the tests before time t - 1 have passed"
            self.t = self.fail_at + 1
            self.j += 1
            if self.sub is None:
                self.sub = self._copy_sub()
            self.N_tilde = self.sub.step(self.N)
            self.segments_ended += 1
            self.T_tilde = run(self._threshold(self.j))
            self.N, self.read, self.drawn = 0, 1, False  # [004-alg2 u4] the new segment reads X_t = 0
            operations += 1
        return operations
