"""Cumulative time synthesizer — 002-alg2 (Bun, Gaboardi, Neunhoeffer, Zhang 2024, section 4).

Round t reveals D^t. For every threshold b = 1..t, z_b^t counts the individuals whose weight
reaches b at time t (weight b-1 after t-1 rounds and x_i^t = 1, u4); stream counter M_b turns
z_b^1, z_b^2, ... into noisy prefix sums S~_b^t of S_b^t = #{i : weight after t rounds >= b}
(u5); the monotonization clamp S^_b^t = min{max{S~_b^t, S^_b^{t-1}}, S^_{b-1}^{t-1}} (u6) makes
the counts realisable; then z^_b^t = S^_b^t - S^_b^{t-1} of the n synthetic records of weight b-1
get the bit 1, the others 0 (u7-u9). The synthetic Hamming-weight counts equal S^_b^t exactly.

Counters: one per b, created when b is first used (t = b) with horizon T - b + 1 (z_b^t = 0 for
t < b) and its own noise namespace ``"002-alg2 u5 b=<b> / ..."``. The default counter is the
foundation's :class:`~dpstream.counters.tree_aggregation.TreeAggregationCounter` (002-alg3);
any ``counter_factory(rho_b, horizon, noise) -> Counter`` can be plugged in (it must be
rho_b-zCDP under ``Neighbour.STREAM_ENTRY``). Budget: Corollary B.1's rho_b allocation
(:func:`~dpstream.longitudinal.bounds.rho_b_allocation`) unless ``rho_b`` is given.

Sites of this module: ``"002-alg2 u8 t=<t> b=<b>"`` (choice of I_b among the positions of
I, the synthetic records of weight b-1 in increasing index order).

Deviations from the printed box (docs/errata/longitudinal.md):

* E-longitudinal-7 (privacy, default changed): Theorem 4.1 composes counters that each see
  neighbouring streams, but when one individual's sequence is *substituted* (the paper's
  relation) counter b's stream changes in two entries (-1 when the old sequence reaches b,
  +1 when the new one does). For counters that add independent Gaussian noise to non-negative
  linear statistics (tree aggregation) this at most doubles the Renyi divergence, so the
  default gives counter b the budget rho_b / 2 (``substitution_factor``; 4 for other counters,
  zCDP group privacy for 2 changes). ``as_printed=True`` gives counter b the printed rho_b.
  Under add/remove Algorithm 2 is not differentially private at all: it outputs exactly n records.
* E-longitudinal-8 (u3, u6): the loop is run for b = 1..t (z_0^t = 0 always, and the input
  gives privacy parameters for b = 1..T only); S^_0^t = n (everybody has weight >= 0; n is
  public in the paper's model) and S^_b^{b-1} = 0 (nobody has weight b after b-1 rounds).
* E-longitudinal-9 (u8): I is printed over the true records x_i; it must be the synthetic
  records (section 4.1, "Generating synthetic data").
* A counter with real-valued noise may release a non-integer S~_b^t; it is rounded to the
  nearest integer before the clamp (post-processing). The default counter is integer-valued.

Proof: proofs/proof_longitudinal_cumulative.py (Theorem 4.1 per neighbour relation, Lemma 4.2,
Corollary B.1); the counters: proofs/proof_tree_aggregation_counter.py.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

import numpy as np

from dpstream.claims import Neighbour, PrivacyClaim
from dpstream.convention import convention
from dpstream.counters.base import Counter
from dpstream.counters.tree_aggregation import TreeAggregationCounter, tree_aggregation_sigma2
from dpstream.errors import (
    DPStreamInputError,
    HorizonExceededError,
    require_int_at_least,
    require_positive_finite,
)
from dpstream.longitudinal.bounds import rho_b_allocation
from dpstream.longitudinal.data import IntArray, frozen, validate_column
from dpstream.noise import DrawKind, NoiseSource, default_noise, require_drawable, scoped, site
from dpstream.staged import order_free, run_all

__all__ = [
    "CumulativeRelease",
    "CumulativeSynthesizer",
    "HorizonCounterFactory",
    "monotonize",
    "tree_aggregation_factory",
]

ANCHOR = "002-alg2"

HorizonCounterFactory: TypeAlias = Callable[[float, int, NoiseSource], Counter]
"""``factory(rho_b, horizon, noise)``: a rho_b-zCDP (STREAM_ENTRY) counter for ``horizon`` steps."""


def tree_aggregation_factory(rho: float, horizon: int, noise: NoiseSource) -> Counter:
    """The default counter of 002-alg2: tree-based aggregation (002-alg3)."""
    return TreeAggregationCounter(rho, horizon, noise=noise)


def monotonize(S_tilde: float, S_hat_b_prev: float, S_hat_bm1_prev: float) -> float:
    """002-alg2 u6: S^_b^t = min{max{S~_b^t, S^_b^{t-1}}, S^_{b-1}^{t-1}}.

    Lemma 4.2: |S^ - S| <= max{|S~ - S|, |S^_b^{t-1} - S_b^{t-1}|, |S^_{b-1}^{t-1} - S_{b-1}^{t-1}|}
    for true counts with S_b^{t-1} <= S_b^t <= S_{b-1}^{t-1} (property_tests check it on arbitrary inputs).
    """
    return min(max(S_tilde, S_hat_b_prev), S_hat_bm1_prev)


@dataclass(frozen=True)
class CumulativeRelease:
    """Round t's release: the synthetic column D^^t (length n) and the monotonized counts.

    ``S_hat[b]`` is S^_b^t for b = 0..t (``S_hat[0] = n``): the number of synthetic records of
    weight >= b (post-processing of the counters' outputs). ``S_tilde[b-1]`` is counter b's raw
    output S~_b^t (already differentially private; kept for audits).
    """

    t: int
    column: IntArray
    S_hat: IntArray
    S_tilde: tuple[float, ...]


def _as_count(value: float) -> int:
    """S~ as an integer count (nearest integer; exact for integer-valued counters)."""
    return math.floor(value + 0.5)


@convention(("T", "rho", "noise"))
class CumulativeSynthesizer:
    """002-alg2. Stream the columns D^1, ..., D^T through :meth:`step`.

    ``T``: time upper bound; ``rho``: total zCDP budget; ``rho_b``: per-counter budgets summing to
    ``rho`` (default Corollary B.1); ``counter_factory``: see :data:`HorizonCounterFactory`
    (default tree aggregation); ``substitution_factor``: how much a substitution (two opposite
    unit changes of one counter's stream) can cost relative to one change (default 2 for the
    default counter, 4 otherwise); ``as_printed``: give counter b the printed rho_b.
    """

    anchor = ANCHOR

    def __init__(
        self,
        T: int,
        rho: float,
        *,
        noise: NoiseSource | None = None,
        n: int | None = None,
        rho_b: Sequence[float] | None = None,
        counter_factory: HorizonCounterFactory | None = None,
        substitution_factor: float | None = None,
        as_printed: bool = False,
    ) -> None:
        # Input: time upper bound T, stream counter M with (rho_1, ..., rho_T), sum_b rho_b = rho
        self.T = require_int_at_least("T", T, 1)
        self.rho = require_positive_finite("rho", rho)
        if not isinstance(as_printed, bool):
            raise DPStreamInputError("as_printed", "must be a bool", as_printed)
        self.as_printed = as_printed
        if rho_b is None:
            allocation = rho_b_allocation(self.T, self.rho)
        else:
            allocation = [require_positive_finite("rho_b", r) for r in rho_b]
            if len(allocation) != self.T:
                raise DPStreamInputError("rho_b", f"must hold T = {self.T} budgets (b = 1..T)", len(allocation))
            if not math.isclose(sum(allocation), self.rho, rel_tol=1e-9):
                raise DPStreamInputError("rho_b", f"must sum to rho = {self.rho:g}", sum(allocation))
        self.rho_b = tuple(allocation)
        self.counter_factory: HorizonCounterFactory = (tree_aggregation_factory if counter_factory is None
                                                        else counter_factory)
        if substitution_factor is None:
            substitution_factor = 2.0 if counter_factory is None else 4.0
        self.substitution_factor = require_positive_finite("substitution_factor", substitution_factor)
        if self.substitution_factor < 1.0:
            raise DPStreamInputError("substitution_factor", "must be >= 1 (a substitution is at least one change)",
                                     substitution_factor)
        # budget handed to counter b: printed rho_b, or rho_b / factor so that a substitution costs <= rho_b
        self.counter_rho = tuple(r if as_printed else r / self.substitution_factor for r in self.rho_b)
        if counter_factory is None:  # the variance of the default counters M_b (horizon T - b + 1)
            largest = max(tree_aggregation_sigma2(r, self.T - b) for b, r in enumerate(self.counter_rho))
            require_drawable("rho", rho, DrawKind.DISCRETE_GAUSSIAN, sigma2=largest)
        self.n = None if n is None else require_int_at_least("n", n, 0)
        self.noise: NoiseSource = default_noise() if noise is None else noise
        self.t = 0
        self.counters: list[Counter] = []  # counters[b-1] is M_b
        self._weights: IntArray | None = None  # true weights x_i^1 + ... + x_i^{t}
        self._syn_weights: IntArray | None = None  # synthetic weights
        self._S_hat: list[int] = []  # S^_b^t for b = 0..t (S^_0 = n)
        self._columns: list[IntArray] = []
        self.history: list[CumulativeRelease] = []

    # -- claims ----------------------------------------------------------------------------------
    @property
    def claims(self) -> dict[Neighbour, PrivacyClaim]:
        """zCDP under substitution (the paper's model); not private under add/remove (n records are output)."""
        spent = self.substitution_factor * self.rho if self.as_printed else self.rho
        if self.as_printed:
            note = (f"AS PRINTED: Theorem 4.1 claims {self.rho:g}; a substitution changes two entries of a counter's "
                    f"stream, which costs up to {self.substitution_factor:g} x rho_b per counter "
                    "(docs/errata/longitudinal.md E-longitudinal-7)")
        else:
            note = f"counter b gets rho_b / {self.substitution_factor:g} (E-longitudinal-7)"
            if self.rho_b == tuple(rho_b_allocation(self.T, self.rho)):
                note += "; rho_b of Corollary B.1"
        return {
            Neighbour.INDIVIDUAL_SUBSTITUTE: PrivacyClaim.zcdp(spent, Neighbour.INDIVIDUAL_SUBSTITUTE, "002-thm4.1",
                                                               note=note),
            Neighbour.INDIVIDUAL_ADD_REMOVE: PrivacyClaim.not_private(
                Neighbour.INDIVIDUAL_ADD_REMOVE, "002-thm4.1",
                note="the output has exactly n synthetic records, so n is released exactly (E-longitudinal-7)"),
        }

    @property
    def claim(self) -> PrivacyClaim:
        return self.claims[Neighbour.INDIVIDUAL_SUBSTITUTE]

    @property
    def paper_claim(self) -> PrivacyClaim:
        """Theorem 4.1 as stated: rho-zCDP in the paper's model (one individual's record substituted)."""
        return PrivacyClaim.zcdp(self.rho, Neighbour.INDIVIDUAL_SUBSTITUTE, "002-thm4.1",
                                 note="the paper's statement (Theorem 4.1)")

    # -- state views -------------------------------------------------------------------------------
    @property
    def synthetic(self) -> IntArray:
        """The n x t synthetic matrix released so far (a copy)."""
        if not self._columns:
            return np.zeros((0 if self.n is None else self.n, 0), dtype=np.int64)
        return np.column_stack(self._columns).astype(np.int64)

    def validate(self, column: Any) -> IntArray:
        if self.t >= self.T:
            raise HorizonExceededError("t", f"cannot step past the horizon T = {self.T}", self.t + 1)
        return validate_column(column, self.n)

    def new_counter(self, b: int) -> Counter:
        """M_b of 002-alg2 u5, created at t = b: budget ``counter_rho[b-1]``, horizon T - b + 1, scope
        ``"002-alg2 u5 b=<b>"`` (creating it draws nothing)."""
        return self.counter_factory(self.counter_rho[b - 1], self.T - b + 1,
                                    scoped(self.noise, site("002-alg2 u5", b=b)))

    # -- one round -----------------------------------------------------------------------------------
    def step(self, column: Any) -> CumulativeRelease:
        """Consume D^t and release the synthetic column D^^t."""
        x = self.validate(column)
        n = int(x.shape[0])
        t = self.t + 1  # [002-alg2 u1] for t <- 1 to T
        weights = np.zeros(n, dtype=np.int64) if self._weights is None else self._weights
        syn_weights = np.zeros(n, dtype=np.int64) if self._syn_weights is None else self._syn_weights
        S_hat_prev = self._S_hat if self._S_hat else [n]  # S^_b^{t-1}, b = 0..t-1
        S_hat_prev = [*S_hat_prev, 0]  # (u6 initial value) S^_t^{t-1} = 0: nobody has weight t after t-1 rounds
        D_hat_t = np.zeros(n, dtype=np.int64)  # [002-alg2 u2] initialize D^^t = (0, ..., 0)
        reach = np.bincount(weights[x == 1], minlength=t)  # reach[b-1] = #{i : weight b-1, x_i^t = 1}
        # M_t starts at t = b (its stream is 0 before), horizon T - t + 1 (creating it draws nothing)
        new_counter = self.new_counter(t)
        M = [*self.counters[:t - 1], new_counter]
        # with an order-free source the t counter steps of u5 are independent: drawn in one batch up front
        staged = (run_all([M[b - 1].staging(int(reach[b - 1])) for b in range(1, t + 1)], True)
                  if order_free(self.noise) and all(c.supports_staging for c in M) else None)
        commits: list[Callable[[], object]] = []
        restore: list[tuple[int, Counter]] = []
        S_hat = [n]
        S_tilde: list[float] = []
        try:
            for b in range(1, t + 1):  # [002-alg2 u3] for b <- 1 to t  (b = 0 omitted: E-longitudinal-8)
                z_b = int(reach[b - 1])  # [002-alg2 u4] z_b^t = #{i | x_i^1 + ... + x_i^{t-1} = b-1 and x_i^t = 1}
                counter = M[b - 1]
                # [002-alg2 u5] S~_b^t <- M_b(z_b^1, ..., z_b^t)  (staged: committed after the loop)
                if counter.supports_staging:
                    step = staged[b - 1] if staged is not None else counter.stage(z_b)
                    raw = step.release
                    commits.append(step.apply)
                else:
                    if counter is not new_counter:
                        restore.append((b - 1, copy.deepcopy(counter, memo={id(counter.noise): counter.noise})))
                    raw = counter.step(z_b)
                S_tilde.append(raw)
                S_hat_b = int(monotonize(_as_count(raw), S_hat_prev[b], S_hat_prev[b - 1]))  # [002-alg2 u6]
                z_hat_b = S_hat_b - S_hat_prev[b]  # [002-alg2 u7] z^_b^t = S^_b^t - S^_b^{t-1}
                # [002-alg2 u8] select z^_b^t indices I_b from I = {i | x^_i^1 + ... + x^_i^{t-1} = b-1}
                # (synthetic records, E-longitudinal-9; printed with the true x_i)
                I = np.flatnonzero(syn_weights == b - 1)
                picked = self.noise.choice(site("002-alg2 u8", t=t, b=b), int(I.size), int(z_hat_b))
                in_I_b = np.zeros(I.size, dtype=bool)
                in_I_b[list(picked)] = True  # I_b = I[picked]
                D_hat_t[I[in_I_b]] = 1  # [002-alg2 u9] x^_i^t <- 1 for i in I_b
                D_hat_t[I[~in_I_b]] = 0  # [002-alg2 u9] x^_i^t <- 0 for i in I \ I_b
                S_hat.append(S_hat_b)
        except BaseException:
            for index, snapshot in restore:
                self.counters[index] = snapshot
            raise
        # commit (no draws below)
        for commit in commits:
            commit()
        self.counters.append(new_counter)
        if self.n is None:
            self.n = n
        self._weights = frozen(weights + x)
        self._syn_weights = frozen(syn_weights + D_hat_t)
        self._S_hat = S_hat
        self.t = t
        release = CumulativeRelease(t, frozen(D_hat_t), frozen(np.asarray(S_hat)), tuple(S_tilde))
        self._columns.append(release.column)
        self.history.append(release)
        return release

    def run(self, matrix: Any) -> list[CumulativeRelease]:
        """Step through all columns of an n x t matrix (t <= T)."""
        arr = np.asarray(matrix)
        if arr.ndim != 2:
            raise DPStreamInputError("D", "must be an n x T matrix", getattr(arr, "shape", matrix))
        return [self.step(arr[:, j]) for j in range(arr.shape[1])]
