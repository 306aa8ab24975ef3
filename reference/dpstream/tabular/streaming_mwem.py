"""StreamingMWEM (003-alg2) and the generic offline-to-stream baseline (000-alg2).

003 section 5: run an independent instance of an offline algorithm A on the differential
dataset ∇f_t at every time t and add its output to the stream. If A is ε-DP (offline)
the streaming algorithm is ε-DP under 003-def3.3: a neighbouring stream changes ∇f_τ at
one time τ only, and each time uses fresh randomness.

Corrections to the printed box (docs/errata/tabular.md):

* E-tabular-1: L11 samples with P ∝ exp((ε/2k) e), the exponential mechanism with budget
  ε/k per selection (Δ_u = 1): the k selections and k measurements Lap(2k/ε) of one step
  cost 3ε/2, not ε. Default: ε/(2k) per selection (Definition 3.8, as in App. A eq (12)).
  ``selection_law=SelectionLaw.PRINTED_ALG2_L11`` restores the printed law.
* E-tabular-3: L20 makes h_{t,l} "|∇f_t| times the distribution", so |g_t| - |g_{t-1}| =
  |∇f_t| exactly: the printed algorithm is not DP at all under one-record add/remove
  neighbours. The mass comes from a :class:`TotalRule` (public sizes or the noisy
  workload measurements); ``TotalRule.true_size()`` restores the printed behaviour.
* E-tabular-6: L3 initialises g(0, x) <- 1, which adds the all-ones dataset to every
  release (q(g_t) is biased by |X|/|X_columns(q)| for ever); 000-alg2 L3 and the accuracy
  proof (App. A) start from 0. Default g_0 = 0; ``g0_ones=True`` restores L3.
* h_{t,0} is never initialised in the box (L8 needs it); App. A eq (17) bounds
  Ψ_{t,0} <= ln|X|, which holds for the uniform dataset of mass N_t: that is h_{t,0}.
* L20 writes the measurement as m_j; it is m(t, j) of L17.

Proofs: proofs/proof_tabular_main_privacy.py (budget ε per step, 3ε/2 with the printed L11 law) and
proofs/proof_tabular_streaming_mwem.py (the accuracy bound of App. A).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from dpstream.claims import Neighbour, PrivacyClaim
from dpstream.convention import convention
from dpstream.errors import DPStreamInputError, require_int_at_least, require_positive_finite
from dpstream.noise import NoiseSource, default_noise, scoped, site
from dpstream.tabular.datasets import SyntheticDataset, UniformDataset, add, answer, average, materialize
from dpstream.tabular.domain import Domain
from dpstream.tabular.fitting import DatasetFitter, Measurement, MultiplicativeWeights
from dpstream.tabular.queries import FloatArray, MarginalQuery, Query, Workload
from dpstream.tabular.selection import (
    BiasRule,
    SelectionLaw,
    Selector,
    query_scores,
    require_round_budget,
    score_sensitivity,
)
from dpstream.tabular.stream import DifferentialDataset, RecordMultiset, StreamStep, coerce_step
from dpstream.tabular.totals import TotalKind, TotalRule

__all__ = ["LaplaceMeasurer", "OfflineToStream", "StreamingMWEM", "StreamingMWEMStep", "default_cliques"]


def default_cliques(domain: Domain, queries: Sequence[Query]) -> list[tuple[int, ...]]:
    """The cliques a streaming algorithm keeps answers for: every query's columns and every attribute."""
    cliques = {q.columns for q in queries}
    cliques.update((c,) for c in range(domain.p))
    return sorted(cliques, key=lambda c: (len(c), c))


def checked_queries(queries: Sequence[Query], *, distinct: bool = True) -> list[Query]:
    """Q as a list: non-empty, all marginal queries or all workloads, and (``distinct``) no query twice."""
    Q = list(queries)
    if not Q:
        raise DPStreamInputError("Q", "must be non-empty", queries)
    if not (all(isinstance(q, MarginalQuery) for q in Q) or all(isinstance(q, Workload) for q in Q)):
        raise DPStreamInputError("Q", "must contain only MarginalQuery or only Workload objects", queries)
    if distinct and len({(q.columns, getattr(q, "values", None)) for q in Q}) != len(Q):
        raise DPStreamInputError("Q", "must not contain the same query twice", queries)
    return Q


def checked_round(queries: Sequence[Query], k: object, epsilon: object, total: object
                  ) -> tuple[list[Query], int, float, TotalRule]:
    """The inputs shared by 003-alg2 L1 and 003-alg3 L1, validated: Q, k <= |Q| selections per time, eps > 0, and
    the :class:`TotalRule` (checked against Q)."""
    Q = checked_queries(queries)
    k = require_int_at_least("k", k, 1)
    if k > len(Q):
        raise DPStreamInputError("k", f"must not exceed |Q| = {len(Q)} (J_t,l would be empty)", k)
    eps = require_positive_finite("epsilon", epsilon)
    require_round_budget(eps, k)
    if not isinstance(total, TotalRule):
        raise DPStreamInputError("total", "must be a TotalRule", total)
    total.check_queries(Q)
    return Q, k, eps, total


@dataclass(frozen=True)
class LaplaceMeasurer:
    """The Laplace mechanism of 003-alg2 L16-L17: value + Lap(scale), drawn at ``site`` (value-in: the noise door
    adds the noise to the cell's answer)."""

    scale: float

    def measure(self, noise: NoiseSource, site_name: str, value: float) -> float:
        return noise.add_laplace(site_name, float(value), self.scale)

    def measure_many(self, noise: NoiseSource, sites: Sequence[str], values: Sequence[float]) -> list[float]:
        """:meth:`measure` for every (site, value), in order, in one batch call (the cells' draws are independent;
        one OpenDP vector call in the secure source; element by element, in the same order, in the others)."""
        return [float(m) for m in noise.add_laplace_many(sites, [float(v) for v in values], self.scale)]


@dataclass(frozen=True)
class StreamingMWEMStep:
    """What happened at one time t (kept when ``keep_trace=True``)."""

    t: int
    selected: tuple[int, ...]
    scores: tuple[tuple[float, ...], ...]
    measurements: tuple[FloatArray, ...]
    total: float


@convention(("domain", "queries", "k", "epsilon", "noise"))
class StreamingMWEM:
    """003-alg2: MWEM on every differential dataset ∇f_t; g_t = g_{t-1} + avg_l h_{t,l}.

    ``step(∇f_t)`` takes a :class:`StreamStep` (or an (n, p) array of added records) and
    returns g_t. ``fitter`` is A_Dataset (MW by default, PGM allowed); ``total`` decides
    the mass of h_{t,l} (required: see :mod:`dpstream.tabular.totals`).
    """

    anchor = "003-alg2"

    def __init__(
        self,
        domain: Domain,
        queries: Sequence[Query],
        k: int,
        epsilon: float,
        *,
        noise: NoiseSource | None = None,
        total: TotalRule,
        fitter: DatasetFitter | None = None,
        selection_law: SelectionLaw = SelectionLaw.DEF_3_8,
        g0_ones: bool = False,
        bias: BiasRule = BiasRule.NONE,
        cliques: Sequence[tuple[int, ...]] | None = None,
        keep_trace: bool = False,
    ) -> None:
        # [003-alg2 L1] Input: stream f, ordered marginal queries Q, k selections per time, budget eps
        self.domain = domain
        self.Q, self.k, self.epsilon, self.total_rule = checked_round(queries, k, epsilon, total)
        self.fitter: DatasetFitter = MultiplicativeWeights() if fitter is None else fitter
        self.selector = Selector(self.epsilon, self.k, score_sensitivity(self.Q), selection_law)
        self.bias = bias
        self.biases = [0.0] * len(self.Q) if bias is BiasRule.NONE else [
            float(np.prod(domain.shape_of(q.columns))) if bias is BiasRule.PRINTED else 1.0 for q in self.Q]
        self.lap_scale = 2.0 * self.k / self.epsilon      # Lap(2k/eps) of L16, sensitivity 1 per cell
        self.measurer = LaplaceMeasurer(self.lap_scale)
        self.noise: NoiseSource = default_noise() if noise is None else noise
        self.cliques = list(cliques) if cliques is not None else default_cliques(domain, self.Q)
        self.g0_ones = bool(g0_ones)
        # [003-alg2 L2] Output: a synthetic stream g
        # [003-alg2 L3] Initialize g(0, x) <- 1 -- default 0 (E-tabular-6); g0_ones=True as printed
        self.g: SyntheticDataset = UniformDataset(domain, 1.0 if self.g0_ones else 0.0)
        self.t = 0
        self.releases: list[SyntheticDataset] = []
        self.trace: list[StreamingMWEMStep] | None = [] if keep_trace else None
        self._true = RecordMultiset(domain)
        self._last_total = 0.0

    @property
    def claim(self) -> PrivacyClaim:
        """The guarantee this instance meets (proofs/proof_tabular_main_privacy.py)."""
        if not self.total_rule.private:
            return PrivacyClaim.not_private(
                Neighbour.EVENT, "003-alg2", "releases |g_t| - |g_{t-1}| = |∇f_t| exactly (E-tabular-3)")
        spent = self.k * self.selector.epsilon_spent + self.k * (1.0 / self.lap_scale)
        note = "k selections + k Laplace measurements per time step"
        if self.selector.law is SelectionLaw.PRINTED_ALG2_L11:
            note += "; printed L11 law: eps/k per selection (E-tabular-1)"
        return PrivacyClaim.pure(spent, Neighbour.EVENT, "003-sec5", note)

    @property
    def paper_claim(self) -> PrivacyClaim:
        """What 003 section 5 states: eps-DP under 003-def3.3."""
        return PrivacyClaim.pure(self.epsilon, Neighbour.EVENT, "003-sec5")

    def _size(self, t: int, step: StreamStep, M: Sequence[Measurement]) -> float:
        rule = self.total_rule
        if rule.kind is TotalKind.PUBLIC:
            return rule.public_size(t)
        if rule.kind is TotalKind.MEASURED:
            return TotalRule.estimate(M, self._last_total)
        return float(step.size)  # as printed: |∇f_t| read from the data (not private)

    def step(self, x: object) -> SyntheticDataset:
        """Consume ∇f_t and release g_t."""
        step = coerce_step(self.domain, x)
        self._true.check(step)                                   # before any draw
        t = self.t + 1                                           # [003-alg2 L4] for t = 1, 2, ...
        diff = DifferentialDataset(self.domain, step)
        q_diff = [diff.answer(q) for q in self.Q]
        Q, noise = self.Q, self.noise
        I: list[int] = []                                        # [003-alg2 L5] I_{t,0} <- {}
        M: list[Measurement] = []
        N = self._size(t, step, M)
        # h_{t,0}: not initialised in the box; the uniform dataset of mass N_t (App. A eq (17))
        h_prev: SyntheticDataset = UniformDataset(self.domain, N / self.domain.size)
        hs: list[SyntheticDataset] = []
        scores_log: list[tuple[float, ...]] = []
        for l in range(1, self.k + 1):                           # [003-alg2 L6] for l = 1..k
            J = [i for i in range(len(Q)) if i not in I]         # [003-alg2 L7] J_{t,l} <- [|Q|] \ I_{t,l-1}
            current = [answer(q, h_prev) if i in J else q_diff[i] for i, q in enumerate(Q)]
            e = query_scores(Q, J, q_diff, current, self.biases)  # [003-alg2 L8] e_{t,l}
            # [003-alg2 L9] (empty line)
            # [003-alg2 L10] // Exponential Mechanism
            # [003-alg2 L11] P{eta_{t,l} = i} ∝ exp((eps/2k) (e_{t,l})_i) -- law per selection_law (E-tabular-1)
            eta = J[self.selector.select(noise, site("003-alg2 L11", t=t, l=l), e)]
            j = eta                                              # [003-alg2 L12] j := eta_{t,l}
            I.append(j)                                          # [003-alg2 L13] I_{t,l} <- I_{t,l-1} u {j}
            # [003-alg2 L14] (empty line)
            # [003-alg2 L15] // Laplace Mechanism
            # [003-alg2 L16] delta_{t,l} ~ Lap(2k/eps); [003-alg2 L17] m(t, j) <- q_j(∇f_t) + delta_{t,l}
            m_tj = np.array(self.measurer.measure_many(noise, [site("003-alg2 L16", t=t, l=l, cell=c)
                                                                for c in range(Q[j].dim)], list(q_diff[j])))
            M.append(Measurement(Q[j], m_tj, self.lap_scale))
            # [003-alg2 L18] (empty line)
            # [003-alg2 L19] // Multiplicative weights
            N = self._size(t, step, M)
            h_l = self.fitter.fit(M, h_prev, N)                  # [003-alg2 L20] h_{t,l}: MW step with m_j = m(t, j)
            hs.append(h_l)
            scores_log.append(tuple(e))
            h_prev = h_l
        g_t = materialize(add(self.g, average(hs)), self.cliques)  # [003-alg2 L21] g_t <- g_{t-1} + avg_l h_{t,l}
        # commit
        self._true.apply(step)
        self.g = g_t
        self.t = t
        self._last_total = N
        self.releases.append(g_t)
        if self.trace is not None:
            self.trace.append(StreamingMWEMStep(t, tuple(I), tuple(scores_log), tuple(m.value for m in M), N))
        return g_t

    def run(self, stream: Sequence[object]) -> list[SyntheticDataset]:
        return [self.step(x) for x in stream]


OfflineAlgorithm = Callable[[DifferentialDataset, NoiseSource], SyntheticDataset]
"""An offline synthetic-data algorithm A(∇f_t, ε) with its budget bound in (000-alg2 L5)."""


@convention(("domain", "offline", "claim", "noise"), ("domain", "offline", "claim", "noise", "cliques"))
class OfflineToStream:
    """000-alg2: g(t, x) = g(t-1, x) + h_t(x) with h_t <- A(∇f_t, ε) from any offline ε-DP A.

    The offline algorithm receives ``scoped(noise, "000-alg2 L5 t=<t>")`` so that every
    time has its own draw sites. Claim: that of A (003 section 5, 000 "proof of privacy
    of baseline Algorithm 2").
    """

    anchor = "000-alg2"

    def __init__(self, domain: Domain, offline: OfflineAlgorithm, claim: PrivacyClaim, *,
                 noise: NoiseSource | None = None, cliques: Sequence[tuple[int, ...]] | None = None) -> None:
        # [000-alg2 L1] Input: stream f, a DP algorithm A generating synthetic datasets, budget eps
        self.domain = domain
        self.offline = offline
        self._claim = claim
        self.noise: NoiseSource = default_noise() if noise is None else noise
        self.cliques = list(cliques) if cliques is not None else [(c,) for c in range(domain.p)]
        # [000-alg2 L2] Output: a synthetic stream g
        self.g: SyntheticDataset = UniformDataset(domain, 0.0)   # [000-alg2 L3] g(0, x) = 0
        self.t = 0
        self.releases: list[SyntheticDataset] = []
        self._true = RecordMultiset(domain)

    @property
    def claim(self) -> PrivacyClaim:
        return self._claim

    def step(self, x: object) -> SyntheticDataset:
        step = coerce_step(self.domain, x)
        self._true.check(step)
        t = self.t + 1                                            # [000-alg2 L4] for t = 1, 2, ...
        diff = DifferentialDataset(self.domain, step)
        h_t = self.offline(diff, scoped(self.noise, site("000-alg2 L5", t=t)))  # [000-alg2 L5] h_t <- A(∇f_t, eps)
        g_t = materialize(add(self.g, h_t), self.cliques)         # [000-alg2 L6] g(t,x) = g(t-1,x) + h_t(x)
        self._true.apply(step)
        self.g, self.t = g_t, t
        self.releases.append(g_t)                                 # [000-alg2 L7] Release g_t
        return g_t
