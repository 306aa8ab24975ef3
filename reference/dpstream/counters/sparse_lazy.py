"""Inhomogeneous sparse counting (004-alg3) advanced lazily: zero inputs are caught up in batches.

:class:`~dpstream.counters.sparse.InhomogeneousSparseCounter` is stepped once per global time;
in 004-alg1 almost all of its inputs are 0 (a region receives a point only when x_t falls in it).
:class:`LazyInhomogeneousCounter` holds the same state and makes the same draws at the same sites,
but is told only about the inputs 1 (:meth:`LazyInhomogeneousCounter.step` at their times) and
is caught up over the zeros in between when its value is needed (:meth:`LazyInhomogeneousCounter.advance`).
The level logic mirrors 004-alg3 u1-u3 line by line; the zero steps inside a level are handed to
the level's 004-alg2 instance:

* :class:`~dpstream.counters.sparse.SparseCounter` (the printed tests): one step at a time, the
  printed code itself (its step, :meth:`~dpstream.counters.base.Counter.advance`), so every printed test draw
  is made at its site;
  k zeros cost k operations and k draws;
* :class:`~dpstream.counters.sparse_geometric.GeometricSparseCounter`: ``skip_zeros`` in
  O(1 + segment ends).

Fed the same inputs and the same tape, the lazy counter reaches the state of the line-by-line
counter at every time it is caught up to (tests/hypercube/test_sparse_lazy.py records a tape
through either and replays it through the other: every site used exactly once). Unlike a
:class:`~dpstream.counters.base.Counter` it keeps no list of past releases (that list is what
made the memory of 004-alg1 grow with t), and a failing draw may leave it part-way (the
efficient 004-alg1 then refuses further steps). Proof note: proofs/proof_hypercube_efficient.py (claim A).
"""

from __future__ import annotations

from collections.abc import Callable

from dpstream.counters.sparse import SparseCounter, SparseFactory, level_start
from dpstream.counters.sparse_geometric import GeometricSparseCounter
from dpstream.errors import DPStreamInputError, require_int_at_least, require_positive_finite
from dpstream.noise import NoiseSource, scoped, site

__all__ = ["LazyInhomogeneousCounter", "advance_sparse"]


def advance_sparse(sub: SparseCounter, x: int, k: int = 1) -> int:
    """k steps of a level's 004-alg2 instance with input x (k = 1 unless x = 0); returns the operations."""
    if k > 1 and x != 0:
        raise DPStreamInputError("k", "several steps at once need input 0", k)
    if x == 0 and type(sub) is GeometricSparseCounter:  # (type, not isinstance: the hot path)
        return sub.skip_zeros(k)
    for _ in range(k):
        sub.advance(float(x))  # the printed step (all its draws), without keeping its release
    return k


class LazyInhomogeneousCounter:
    """004-alg3 with the parameters of :class:`~dpstream.counters.sparse.InhomogeneousSparseCounter`.

    ``t`` is the last global time processed (``first_time - 1`` at creation). :meth:`advance` feeds
    zeros up to a time, :meth:`step` feeds one input at the next time, :attr:`value` is the release
    S~ + c_t at time ``t`` (0 before t_{r0}). ``sparse`` makes each level's 004-alg2 instance.
    """

    __slots__ = ("S_tilde", "_sparse", "eps_levels", "epsilon", "first_time", "level_sum", "noise", "r", "r0",
                 "sub", "t", "t_next", "t_r0")

    def __init__(self, epsilon: float, r0: int, eps_levels: Callable[[int], float], *, noise: NoiseSource,
                 first_time: int = 1, sparse: SparseFactory | None = None) -> None:
        self.epsilon = require_positive_finite("epsilon", epsilon)
        self.r0 = require_int_at_least("r0", r0, 0)
        self.eps_levels = eps_levels
        self.first_time = require_int_at_least("first_time", first_time, 1)
        self.t_r0 = level_start(self.r0, self.epsilon)
        if self.first_time > self.t_r0:
            raise DPStreamInputError("first_time", f"must be <= t_r0 = {self.t_r0} (no input may be missed)",
                                     first_time)
        self.noise = noise
        self._sparse: SparseFactory = sparse if sparse is not None else (
            lambda eps, T, n: SparseCounter(eps, T, noise=n))
        self.S_tilde = 0.0
        self.r: int | None = None
        self.t_next = self.t_r0
        self.level_sum = 0
        self.sub: SparseCounter | None = None
        self.t = self.first_time - 1

    def eps_r(self, r: int) -> float:
        return require_positive_finite(f"eps_levels({r})", self.eps_levels(r))

    def _start_level(self, tg: int) -> int:
        """The level changes at global time tg: mirrors the level block of InhomogeneousSparseCounter's step."""
        ending = [] if self.r is None else [self.r]
        first_new = self.r0 if self.r is None else self.r + 1
        while tg >= level_start(first_new + 1, self.epsilon):
            ending.append(first_new)
            first_new += 1
        budgets = {k: self.eps_r(k) for k in [*ending, first_new]}
        for k in ending:
            # [004-alg3 u3] S~ <- S~ + sum_{t=t_r}^{t_{r+1}-1} X_t + Lap_Z(2/eps_r); r <- r + 1
            self.S_tilde = self.S_tilde + self.noise.add_discrete_laplace(
                site("004-alg3 u3", r=k), self.level_sum, 2.0 / budgets[k])
            self.level_sum = 0
        # [004-alg3 u1] the current level is r
        self.r, self.t_next = first_new, level_start(first_new + 1, self.epsilon)
        # [004-alg3 u2] Algorithm 2 with horizon t_{r+1} - t_r and eps_r / 2 for t in [t_r, t_{r+1})
        horizon = self.t_next - level_start(self.r, self.epsilon)
        sub = self._sparse(budgets[self.r] / 2.0, horizon, scoped(self.noise, site("004-alg3 u2", r=self.r)))
        if not isinstance(sub, SparseCounter):
            raise DPStreamInputError("sparse", "must make SparseCounter instances (lazy steps)", sub)
        self.sub = sub
        return 1 + len(ending)

    def advance(self, tg: int) -> int:
        """Feed input 0 at the global times t+1..tg (nothing when tg <= t); returns the operations."""
        if self.t >= tg:
            return 0
        operations = 0
        while self.t < tg:
            if self.t + 1 < self.t_r0:  # before the starting level the inputs are not used (004-lem3.3 (2))
                self.t = min(tg, self.t_r0 - 1)
                continue
            if self.r is None or self.t + 1 >= self.t_next:
                operations += self._start_level(self.t + 1)
            last = min(tg, self.t_next - 1)
            assert self.sub is not None
            operations += advance_sparse(self.sub, 0, last - self.t)  # [004-alg3 u2] c_t of the zero steps
            self.t = last
        return operations

    def step(self, x: int) -> int:
        """Feed input x (0 or 1) at global time t + 1; returns the operations."""
        if x not in (0, 1):
            raise DPStreamInputError("x", "must be 0 or 1 (a Boolean data sequence)", x)
        tg = self.t + 1
        if tg < self.t_r0:
            self.t = tg
            return 1
        operations = 1
        if self.r is None or tg >= self.t_next:
            operations += self._start_level(tg)
        assert self.sub is not None
        advance_sparse(self.sub, x)  # [004-alg3 u2] record the output c_t
        self.level_sum += x
        self.t = tg
        return operations

    @property
    def value(self) -> float:
        """[004-alg3 u3] the release S~ + c_t at time t (0 before t_{r0})."""
        if self.t < self.t_r0 or self.sub is None:
            return 0.0
        return self.S_tilde + self.sub.N_tilde
