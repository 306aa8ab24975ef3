"""Sparse counting (004-alg2) and inhomogeneous sparse counting (004-alg3).

:class:`SparseCounter` — 004-alg2, modified by the paper from Dwork, Naor, Reingold and
Rothblum (2015). A Boolean stream X_1..X_T is cut into *segments*: segment j keeps its
count N_j and a private threshold T~_j = T_0 + lambda_j, T_0 = 9 log T / eps (natural log),
lambda_j ~ Lap_Z(2/eps); after every input it tests N_j + lambda'_t <= T~_j with a fresh
lambda'_t ~ Lap_Z(2/eps) and ends the segment when the test fails. Every ended segment's
count is fed to the online counting subroutine A_sub (the Binary Mechanism with eps/2:
:class:`~dpstream.counters.binary_tree.BinaryTreeCounter` with ``discrete=True``, horizon T),
and the release at every time t of a segment is A_sub's latest output N~ (the private
count of the earlier, ended segments).

Streaming form and the printed loop (docs/errata/hypercube.md E-hypercube-3, -4):

* u5 "Output" is read *inside* the inner loop: the release at t is N~ as it stands when
  X_t is read (the only online reading; the extraction merges u5 with the end of the loop).
* u3 tests ``t <= T`` and u4 then reads X_{t+1}, so X_{T+1} can be read. Here a step
  consumes X_t for t = 1..T only; the tests that happen after X_t (at "time t") decide
  the release at t + 1, so the printed test at time T and X_{T+1} would only affect a
  release after the horizon and are not made.
* Default: a new segment is first tested after it has read one input. As printed, a new
  segment is also tested at once with N_j = 0 (at t = 0 and right after every segment
  end). That test does not depend on the data, but it can end empty segments, several
  at the same time, so the number of A_sub inputs is unbounded while the Binary
  Mechanism's guarantee needs at most T of them. The default ends at most one segment
  per time step, so at most T - 1 segments are fed to A_sub. ``as_printed=True`` keeps the
  printed tests (and raises HorizonExceededError in the very unlikely event that A_sub
  would be stepped past T; the counter is then left unchanged).

Privacy (004-lem3.2; proof: proofs/proof_sparse_counting.py; exact audit:
dpstream.audit.hypercube.loss): given the segment boundaries, neighbouring streams (one
X_t changed) give A_sub neighbouring inputs, eps/2. The boundaries are an AboveThreshold
run per segment with *monotone* queries (the counts since the segment start), and only
the segment containing t depends on X_t; for monotone queries the loss of one such run is
max(1/b_threshold, 1/b_test) = eps/2, not their sum. Total eps.

:class:`InhomogeneousSparseCounter` — 004-alg3. Levels r >= r0 of the global time (level r
is t_r <= t < t_{r+1}, t_r = ceil(2^r / eps) with eps the *global* budget of 004-alg1,
which the box uses but does not list as an input); a fresh :class:`SparseCounter` with
eps_r / 2 and horizon t_{r+1} - t_r counts inside level r (output c_t), and S~ adds each
finished level's exact count plus Lap_Z(2/eps_r). The release at t is S~ + c_t (printed
"S + c_t"). Inputs before t_{r0} are not used (004-lem3.3 (2)); a change at a time of
level r >= r0 costs eps_r (004-lem3.3 (1)).

Range (docs/counters.md, "Range"): both take 0/1 inputs, so every count they form (N_j, the level sums, A_sub's
p-sums) is at most the number of steps, far inside +-(2^53 - 1); the counts are Python integers, and A_sub applies
the rule itself.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Generator
from fractions import Fraction
from functools import lru_cache
from typing import Any

from dpstream.arithmetic import FUNCTION_ULPS, ceil_of, floor_of, gamma, kernel, recording_active
from dpstream.claims import Neighbour, PrivacyClaim
from dpstream.convention import convention
from dpstream.counters.base import Counter, CounterFactory, CounterStaging
from dpstream.counters.binary_tree import binary_tree_scale
from dpstream.errors import DPStreamInputError, require_int_at_least, require_positive_finite
from dpstream.noise import DrawKind, NoiseSource, require_drawable, scoped, site
from dpstream.staged import DrawRequest, discrete_laplace

__all__ = [
    "InhomogeneousSparseCounter",
    "SparseCounter",
    "SparseFactory",
    "binary_mechanism",
    "level_start",
    "sparse_threshold",
]

SparseFactory = Callable[[float, int, NoiseSource], Counter]
"""Makes the per-level counter of 004-alg3 from (eps_r / 2, horizon t_{r+1} - t_r, scoped noise)."""


def level_start(r: int, epsilon: float) -> int:
    """t_r = ceil(2^r / eps), the first time of level r (004-alg3 Initialization, 004-sec3.1).

    Taken on the exact value of the double eps (the rational it stands for), not on the rounded quotient; a quotient
    within one rounding of an integer is an ambiguous decision (``dpstream.arithmetic``: another correct evaluation,
    ceil of the float quotient, may land on the other integer), noted when decisions are recorded."""
    r, epsilon = require_int_at_least("r", r, 0), require_positive_finite("epsilon", epsilon)
    if recording_active():
        quotient = Fraction(2**r) / Fraction(epsilon)
        # an integer quotient is a double: a correctly rounded division gives it exactly (band 0)
        band = 0.0 if quotient.denominator == 1 else 2.0 * gamma(1) * float(quotient)
        ceil_of("004-sec3.1 t_r = ceil(2^r / eps)", quotient, band)
    return _level_start(r, epsilon)


@lru_cache(maxsize=4096)
def _level_start(r: int, epsilon: float) -> int:
    return math.ceil(Fraction(2**r) / Fraction(epsilon))  # exact: the float eps as a rational


def sparse_threshold(epsilon: float, T: int) -> float:
    """T_0 = 9 log T / eps, the partition threshold of 004-alg2 (natural logarithm)."""
    return 9.0 * kernel().log_scalar(require_int_at_least("T", T, 1)) / require_positive_finite("epsilon", epsilon)


def floor_T0(T0: float) -> int:
    """floor(T_0), the integer part of the threshold that decides every segment end of 004-alg2 (the noisy count
    N_j + lambda' is an integer, so N_j + lambda' > T~_j depends on T_0 only through floor(T_0)); noted as a decision:
    T_0 = 9 ln T / eps is a logarithm, a multiplication and a division away from its operands."""
    return floor_of("004-alg2 floor(T_0), T_0 = 9 ln T / eps", T0, 2.0 * gamma(FUNCTION_ULPS + 2) * abs(T0))


def binary_mechanism(T: int) -> CounterFactory:
    """A_sub of 004-alg2: the Binary Mechanism (001-alg10 on integers with Lap_Z noise), horizon T."""
    from dpstream.counters.binary_tree import BinaryTreeCounter

    T = require_int_at_least("T", T, 1)
    return lambda eps, noise: BinaryTreeCounter(eps, T, noise=noise, discrete=True)


def _require_bool(field: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise DPStreamInputError(field, "must be a bool", value)
    return value


def _require_boolean_input(counter: Counter, x: object) -> float:
    if (type(x) is int or type(x) is float) and (x == 0 or x == 1) and (
            counter.horizon is None or counter.t < counter.horizon):
        return float(x)  # fast path for plain 0/1 (the checks below give the same answer)
    value = Counter.validate_input(counter, x)
    if value not in (0.0, 1.0):
        raise DPStreamInputError("f(t)", "must be 0 or 1 (a Boolean data sequence)", x)
    return value


@convention(("epsilon", "T", "noise"))
class SparseCounter(Counter):
    """004-alg2 with horizon ``T``; ``subroutine`` makes A_sub from (eps/2, noise) (default: Binary Mechanism)."""

    anchor = "004-alg2"
    integer_input = True

    def __init__(
        self,
        epsilon: float,
        T: int,
        *,
        noise: NoiseSource | None = None,
        as_printed: bool = False,
        subroutine: CounterFactory | None = None,
    ) -> None:
        # Input: time horizon T < inf, Boolean data sequence {X_i}_{i=1}^T, privacy parameter eps
        self.epsilon = require_positive_finite("epsilon", epsilon)
        T = require_int_at_least("T", T, 1)
        self.as_printed = _require_bool("as_printed", as_printed)
        super().__init__(noise, T)
        self.T = T
        # Initialization: T_0 = 9 log T / eps, j = 1, t = 0, N~ = 0
        self.T0 = sparse_threshold(self.epsilon, T)
        # the thresholds' Lap_Z(2/eps) noises the public floor(T_0); the default A_sub runs at eps/2
        require_drawable("epsilon", epsilon, DrawKind.DISCRETE_LAPLACE, scale=2.0 / self.epsilon,
                         statistic=floor_T0(self.T0) if math.isfinite(self.T0) else self.T0)
        if subroutine is None:
            require_drawable("epsilon", epsilon, DrawKind.DISCRETE_LAPLACE,
                             scale=binary_tree_scale(self.epsilon / 2.0, T))
        self.j = 1
        self.N_tilde = 0.0
        self.N = 0  # N_j, the count of the open segment
        self.T_tilde: float | None = None  # T~_j of the open segment (None before t = 1)
        self.read = 0  # inputs read by the open segment
        # Online counting subroutine: A_sub with eps/2, made at the first segment end.
        self.subroutine = subroutine  # as given (None: the Binary Mechanism with horizon T)
        self._subroutine = subroutine if subroutine is not None else binary_mechanism(T)
        self.sub: Counter | None = None
        self.segments_ended = 0

    @property
    def claim(self) -> PrivacyClaim:
        note = ("Boolean inputs; segments by thresholds with Lap_Z(2/eps) (monotone counts: eps/2), "
                "segment counts by A_sub with eps/2")
        if self.as_printed:
            note += "; AS PRINTED: empty segments may exhaust A_sub's horizon T (then a step raises)"
        return PrivacyClaim.pure(self.epsilon, Neighbour.STREAM_ENTRY, "004-lem3.2", note=note)

    def validate_input(self, x: object) -> float:
        return _require_boolean_input(self, x)

    def _threshold(self, j: int) -> Generator[DrawRequest, Any, float]:
        # AboveThreshold's proof noises the PUBLIC threshold: the door gets T_0 (its integer part, as the noise
        # is integer; the fractional part is public, and floor(T_0) + lambda_j + frac(T_0) is the same float as
        # T_0 + lambda_j: both operands are exact and the sum is rounded once)
        base = floor_T0(self.T0)
        noisy: int = yield discrete_laplace(self.noise, site("004-alg2 u2", j=j), base, 2.0 / self.epsilon)
        return noisy + (self.T0 - base)  # [004-alg2 u2] T~_j = T_0 + lambda_j, lambda_j ~ Lap_Z(2/eps)

    def new_subroutine(self) -> Counter:
        """A new A_sub (eps/2, in the scope ``"004-alg2 u8"``), as made at the first segment end (draws nothing)."""
        return self._subroutine(self.epsilon / 2.0, scoped(self.noise, "004-alg2 u8"))

    def _copy_sub(self) -> Counter:
        """A_sub to be stepped in this step: a copy of the current one (copy-on-write) or a new one."""
        if self.sub is None:
            return self.new_subroutine()
        return copy.deepcopy(self.sub, memo={id(self.noise): self.noise})

    def _staging(self, x: float, t: int) -> CounterStaging:
        j, N, T_tilde, read, N_tilde = self.j, self.N, self.T_tilde, self.read, self.N_tilde
        sub: Counter | None = None
        ended = 0
        u = t - 1  # the tests below see the segment's count through X_u ("time u")
        # [004-alg2 u1] while t <= T: the base class refuses steps past the horizon
        if T_tilde is None:
            N, read = 0, 0  # [004-alg2 u2] segment count N_j = 0
            T_tilde = yield from self._threshold(j)
        while self.as_printed or read > 0:
            # [004-alg2 u3] while t <= T and N_j + lambda'_t <= T~_j, lambda'_t ~ Lap_Z(2/eps)
            # the query noise lambda'_t goes on the segment's COUNT N_j (AboveThreshold's proof): value-in
            if (yield discrete_laplace(self.noise, f"004-alg2 u3 j={j} t={u}", N, 2.0 / self.epsilon)) <= T_tilde:
                break  # (the site is site("004-alg2 u3", j=j, t=u), built inline on this hot path)
            j += 1  # [004-alg2 u7] end the segment j and set j <- j + 1
            ended += 1
            if sub is None:
                sub = self._copy_sub()
            # [004-alg2 u8] run A_sub on N_{j-1}; N~ <- its latest output
            N_tilde = (yield from sub.staging(N)).commit()  # (sub is this step's copy: committed at once)
            N, read = 0, 0  # [004-alg2 u2] next segment: N_j = 0, T~_j = T_0 + lambda_j
            T_tilde = yield from self._threshold(j)
        N, read = N + int(x), read + 1  # [004-alg2 u4] t <- t + 1, N_j <- N_j + X_t
        g = N_tilde  # [004-alg2 u5] output the same N~ for all t in this segment

        def commit() -> None:
            self.j, self.N, self.T_tilde, self.read, self.N_tilde = j, N, T_tilde, read, N_tilde
            self.segments_ended += ended
            if sub is not None:
                self.sub = sub

        return g, commit

    def state_size(self) -> int:
        return 6 + (0 if self.sub is None else self.sub.state_size())


@convention(("epsilon", "r0", "eps_levels", "noise"))
class InhomogeneousSparseCounter(Counter):
    """004-alg3: starting level ``r0``, per-level budgets ``eps_levels(r)``, global ``epsilon`` for t_r.

    The counter is stepped once per *global* time from ``first_time`` on (its local step k is
    the global time first_time + k - 1); ``first_time <= t_{r0}``. ``sparse`` makes each
    level's counter from (eps_r / 2, t_{r+1} - t_r, noise) (default :class:`SparseCounter`).
    """

    anchor = "004-alg3"
    integer_input = True

    def __init__(
        self,
        epsilon: float,
        r0: int,
        eps_levels: Callable[[int], float],
        *,
        noise: NoiseSource | None = None,
        first_time: int = 1,
        sparse: SparseFactory | None = None,
    ) -> None:
        # Input: starting level r0, Boolean data sequence {X_t}, noise parameters eps_{r0}, eps_{r0+1}, ...
        self.epsilon = require_positive_finite("epsilon", epsilon)
        self.r0 = require_int_at_least("r0", r0, 0)
        if not callable(eps_levels):
            raise DPStreamInputError("eps_levels", "must be a function r -> eps_r", eps_levels)
        self.eps_levels = eps_levels
        require_positive_finite(f"eps_levels({self.r0})", eps_levels(self.r0))
        self.first_time = require_int_at_least("first_time", first_time, 1)
        # Initialization: S~ <- 0, r <- r0, timestamps t_{r0} = ceil(2^{r0}/eps), t_{r0+1} = ceil(2^{r0+1}/eps)
        self.t_r0 = level_start(self.r0, self.epsilon)
        if self.first_time > self.t_r0:
            raise DPStreamInputError("first_time", f"must be <= t_r0 = {self.t_r0} (no input may be missed)",
                                     first_time)
        super().__init__(noise, None)
        self.sparse = sparse  # as given (None: SparseCounter)
        self._sparse: SparseFactory = sparse if sparse is not None else (
            lambda eps, T, n: SparseCounter(eps, T, noise=n))
        # the first level's draws, checked now: its sum's Lap_Z(2/eps_r) and its Algorithm 2 with eps_r / 2
        # (built, then dropped: creation draws nothing)
        eps_first = self.eps_r(self.r0)
        field = f"eps_levels({self.r0})"
        require_drawable(field, eps_first, DrawKind.DISCRETE_LAPLACE, scale=2.0 / eps_first)
        horizon = level_start(self.r0 + 1, self.epsilon) - self.t_r0
        try:
            if horizon >= 1:  # (an empty level, t_r = t_{r+1}, runs no Algorithm 2)
                self._sparse(eps_first / 2.0, horizon, self.noise)
        except DPStreamInputError as exc:
            raise DPStreamInputError(field, f"its level's Algorithm 2 refuses eps_r / 2: {exc}", eps_first) from None
        self.S_tilde = 0.0
        self.r: int | None = None  # current level; None before t_{r0}
        self.t_next = self.t_r0  # t_{r+1}, the first time after the current level (t_{r0} before it)
        self.level_sum = 0  # sum of X_t over the current level so far
        self.sub: Counter | None = None  # the current level's Algorithm 2

    def eps_r(self, r: int) -> float:
        return require_positive_finite(f"eps_levels({r})", self.eps_levels(r))

    @property
    def claim(self) -> PrivacyClaim:
        # eps_r for every level a stream can reach (t_{r0+63} > 2^63 / eps: beyond any run)
        worst = max(self.eps_r(r) for r in range(self.r0, self.r0 + 64))
        return PrivacyClaim.pure(
            worst, Neighbour.STREAM_ENTRY, "004-lem3.3",
            note=f"Boolean inputs; a change at a time of level r >= r0 = {self.r0} costs eps_r, "
                 f"inputs before t_r0 = {self.t_r0} are not used")

    def validate_input(self, x: object) -> float:
        return _require_boolean_input(self, x)

    def global_time(self, t: int) -> int:
        return self.first_time + t - 1

    def level_counter(self, r: int, eps_r: float | None = None) -> Counter:
        """Level r's Algorithm 2 (004-alg3 u2): budget eps_r / 2, horizon t_{r+1} - t_r, scope ``"004-alg3 u2 r=<r>"``
        (creating it draws nothing)."""
        budget = self.eps_r(r) if eps_r is None else eps_r
        horizon = level_start(r + 1, self.epsilon) - level_start(r, self.epsilon)
        return self._sparse(budget / 2.0, horizon, scoped(self.noise, site("004-alg3 u2", r=r)))

    def _staging(self, x: float, t: int) -> CounterStaging:
        tg = self.global_time(t)
        if tg < self.t_r0:  # before the starting level: X_t is not used (004-lem3.3 (2))
            return 0.0, lambda: None
        r, t_next, S, level_sum, sub = self.r, self.t_next, self.S_tilde, self.level_sum, self.sub
        if r is None or tg >= t_next:
            # a level starts: the levels that end before tg (several when levels are empty,
            # t_r = t_{r+1}) and the new one; every budget is checked before any draw
            ending = [] if r is None else [r]
            first_new = self.r0 if r is None else r + 1
            while tg >= level_start(first_new + 1, self.epsilon):
                ending.append(first_new)
                first_new += 1
            budgets = {k: self.eps_r(k) for k in [*ending, first_new]}
            for k in ending:
                # [004-alg3 u3] S~ <- S~ + sum_{t=t_r}^{t_{r+1}-1} X_t + Lap_Z(2/eps_r); r <- r + 1
                S = S + (yield discrete_laplace(self.noise, site("004-alg3 u3", r=k), level_sum, 2.0 / budgets[k]))
                level_sum = 0
            # [004-alg3 u1] while r0 <= r < inf: the current level is r
            r, t_next = first_new, level_start(first_new + 1, self.epsilon)
            # [004-alg3 u2] for t in [t_r, t_{r+1}): Algorithm 2 with horizon t_{r+1} - t_r and eps_r / 2
            sub = self.level_counter(r, budgets[r])
        assert sub is not None
        sub_step = yield from sub.staging(x)
        c_t = sub_step.release
        # [004-alg3 u2] record the output c_t
        g = S + c_t  # [004-alg3 u3] output S~ + c_t (printed "S + c_t")

        def commit() -> None:
            self.r, self.t_next, self.S_tilde, self.level_sum, self.sub = r, t_next, S, level_sum + int(x), sub
            sub_step.commit()

        return g, commit

    def state_size(self) -> int:
        return 3 + (0 if self.sub is None else self.sub.state_size())
