"""The main algorithm of 003: a synthetic tabular stream by selective counting (003-alg3, 000-alg3).

At each time t, k queries are selected one after another with the exponential mechanism
on the error of the current dataset h_{t,l-1} against the proxy g_{t-1} + ∇f_t
(003-sec6.4); each selected query's counter consumes q_j(∇f_t); its measurement
m(t, j) = C_j(t) + r(t, j) (003-sec6.2) is passed to A_Dataset, and g_t averages the k
fitted datasets. Queries not selected at t take the remainder r(t, i) = q_i(g_t) - C_i(t).

Q may hold marginal queries or workloads; with workloads the four changes of 003-sec7.2
apply: one multi-dimensional counter (001-sec4.3) of dimension |q_i| per workload, the
l1 score with the bias term, and the score sensitivity (exactly 1 / min_i |q_i|, which
is at most the paper's 1/4 for 2-way workloads when every attribute has >= 2 values).

Privacy (003-thm6.1, proofs/proof_tabular_main_privacy.py): per time step k selections
at ε/(2k) and k counter inputs of sensitivity 1 into ε/(2k)-DP counters; everything else
(g, h, r, m, A_Dataset) is post-processing of the selections and the counter outputs. A
neighbour changes ∇f_τ at one time τ only, so the loss is that of time τ: ε. The
structure is exactly online selective counting (001-alg4); see
:mod:`dpstream.tabular.selective` for the decomposition and its equivalence test.

Notes on the printed box (docs/errata/tabular.md):

* L12 calls "ExponentialMechanism(e, ε/2k)" of Definition 3.8, whose printed exponent
  has a minus sign (E-tabular-2): the default selects large errors;
  ``selection_law=SelectionLaw.PRINTED_DEF_3_8`` keeps the printed sign.
* h_{t,0} is not initialised in the box: §6.1 says h_{t,0} = g_{t-1}.
* L15 "invoke C_j with input ∇f_t": a counter consumes numbers; the input is q_j(∇f_t)
  (a vector for workloads).
* L16/L21 against §6.2: the prose's cases of r(t, i) are swapped; the box is the
  consistent version (E-tabular-7; tests/tabular/test_remainder_rule.py).
* A_Dataset needs a total mass for MW: :class:`~dpstream.tabular.totals.TotalRule`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from dpstream.claims import Measure, Neighbour, PrivacyClaim
from dpstream.convention import convention
from dpstream.counters.base import Counter, CounterFactory
from dpstream.counters.multidim import MultiDimensionalCounter
from dpstream.counters.simple import SimpleCounter
from dpstream.errors import DPStreamInputError, HorizonExceededError
from dpstream.noise import NoiseSource, default_noise, scoped, site
from dpstream.staged import Staged
from dpstream.tabular.datasets import SyntheticDataset, UniformDataset, answer, average, materialize
from dpstream.tabular.domain import Domain
from dpstream.tabular.fitting import DatasetFitter, Measurement, MultiplicativeWeights
from dpstream.tabular.queries import FloatArray, Query, Workload
from dpstream.tabular.selection import (
    BiasRule,
    SelectionLaw,
    Selector,
    query_scores,
    score_sensitivity,
    workload_bias,
)
from dpstream.tabular.stream import DifferentialDataset, RecordMultiset, StreamStep, coerce_step
from dpstream.tabular.streaming_mwem import checked_round, default_cliques
from dpstream.tabular.totals import TotalKind, TotalRule

__all__ = [
    "MainAlgorithm",
    "MainAlgorithmStep",
    "StepState",
    "counter_site",
    "simple_factory",
    "stage_counter",
]

AnyCounter = Counter | MultiDimensionalCounter


def simple_factory(epsilon: float, noise: NoiseSource) -> Counter:
    """The default A_Counter: the Simple counter (001-alg8), as in the experiments of 003-sec7."""
    return SimpleCounter(epsilon, noise=noise)


def counter_site(i: int) -> str:
    """The namespace of counter C_i: ``"003-alg3 L3 i=<i>"``."""
    return site("003-alg3 L3", i=i)


@dataclass(frozen=True)
class MainAlgorithmStep:
    """One time step (kept when ``keep_trace=True``): the selections η_{t,1..k}, the scores,
    C_i(t), r(t, i) and q_i(g_t) for every i after L21, and the masses used."""

    t: int
    selected: tuple[int, ...]
    scores: tuple[tuple[float, ...], ...]
    counter_inputs: tuple[FloatArray, ...]
    C: tuple[FloatArray, ...]
    r: tuple[FloatArray, ...]
    m: tuple[FloatArray, ...]
    g_answers: tuple[FloatArray, ...]
    totals: tuple[float, ...]


@dataclass
class StepState:
    """The working state of one time step t (locals of 003-alg3 L8-L18; committed by ``finish``)."""

    t: int
    step: StreamStep
    q_diff: list[FloatArray]
    target: list[FloatArray]
    I: list[int]
    h_prev: SyntheticDataset
    r: list[FloatArray]
    m: list[FloatArray]
    C: list[FloatArray]
    hs: list[SyntheticDataset] = field(default_factory=list)
    scores: list[tuple[float, ...]] = field(default_factory=list)
    totals: list[float] = field(default_factory=list)


def stage_counter(counter: AnyCounter, value: FloatArray) -> Staged[FloatArray]:
    """Validate, draw and hold back one counter step (scalar counters and 001-sec4.3 vectors, whose
    coordinates are drawn in one batch with the secure source).

    Atomic for counters with staged steps (every dpstream counter); see :meth:`Counter.stage`.
    """
    if isinstance(counter, MultiDimensionalCounter):
        return counter.stage(np.asarray(value, dtype=np.float64))
    scalar = counter.stage(float(value[0]))
    return Staged(np.array([scalar.release]), scalar.apply)


@convention(("domain", "queries", "k", "epsilon", "noise"))
class MainAlgorithm:
    """003-alg3 (= 000-alg3). ``step(∇f_t)`` returns the synthetic dataset g_t.

    ``aggregate="last"`` releases g_t = h_{t,k} instead of the average of L19; it is not in the
    paper and exists to show that the counting and remainder machinery tracks f_t exactly when
    nothing is noisy (with the average, even exact fitting does not: docs/tabular.md).

    ``counter_factory``: A_Counter (``CounterFactory``, Simple by default; e.g.
    ``lambda eps, n: UnboundedBlockCounter(eps, noise=n)`` as in 003-sec8); ``fitter``: A_Dataset
    (MW by default; PGM via :class:`dpstream.tabular.pgm.PrivatePGM`); ``total``: where the
    mass of the fitted datasets comes from (required).
    """

    anchor = "003-alg3"

    def __init__(
        self,
        domain: Domain,
        queries: Sequence[Query],
        k: int,
        epsilon: float,
        *,
        noise: NoiseSource | None = None,
        total: TotalRule,
        counter_factory: CounterFactory | None = None,
        fitter: DatasetFitter | None = None,
        selection_law: SelectionLaw = SelectionLaw.DEF_3_8,
        bias: BiasRule = BiasRule.PRINTED,
        printed_workload_sensitivity: bool = False,
        cliques: Sequence[tuple[int, ...]] | None = None,
        keep_trace: bool = False,
        aggregate: Literal["average", "last"] = "average",
    ) -> None:
        # [003-alg3 L1] [000-alg3 L1] Input: stream f, ordered queries Q, k, eps, A_Counter, A_Dataset
        self.domain = domain
        self.Q, self.k, self.epsilon, self.total_rule = checked_round(queries, k, epsilon, total)
        if selection_law is SelectionLaw.PRINTED_ALG2_L11:
            raise DPStreamInputError("selection_law", "003-alg3 L12 uses Definition 3.8 (def-3.8 or printed-def-3.8)",
                                     selection_law)
        if aggregate not in ("average", "last"):
            raise DPStreamInputError("aggregate", "must be 'average' (L19) or 'last'", aggregate)
        self.aggregate = aggregate
        self.fitter: DatasetFitter = MultiplicativeWeights() if fitter is None else fitter
        self.workloads = isinstance(self.Q[0], Workload)
        # the selector is calibrated with the printed 1/4 if asked (E-tabular-8), but accounts with the true Δ_u
        self.selector = Selector(self.epsilon, self.k, score_sensitivity(self.Q), selection_law,
                                 score_sensitivity(self.Q, True) if printed_workload_sensitivity else None)
        self.bias = bias
        self.biases = [workload_bias(domain, q, bias) if isinstance(q, Workload) else 0.0 for q in self.Q]
        self.noise: NoiseSource = default_noise() if noise is None else noise
        self.counter_factory: CounterFactory = simple_factory if counter_factory is None else counter_factory
        self.cliques = list(cliques) if cliques is not None else default_cliques(domain, self.Q)
        # [003-alg3 L2] [000-alg3 L2] Output: a synthetic stream g
        eps_counter = self.epsilon / (2 * self.k)
        # [003-alg3 L3] [000-alg3 L3] C_1..C_|Q|: independent A_Counter instances with budget eps/2k
        self.counters: list[AnyCounter] = []
        for i, q in enumerate(self.Q):
            ns = scoped(self.noise, counter_site(i))
            if isinstance(q, Workload):
                self.counters.append(MultiDimensionalCounter.build(self.counter_factory, q.dim, eps_counter, noise=ns))
            else:
                self.counters.append(self.counter_factory(eps_counter, ns))
        self._check_counters()
        self.g: SyntheticDataset = UniformDataset(domain, 1.0)              # [003-alg3 L4] [000-alg3 L4] g(0,x) <- 1
        self.m = [np.zeros(q.dim) for q in self.Q]                          # [003-alg3 L5] [000-alg3 L5] m(0,i) <- 0
        self.r = [np.zeros(q.dim) for q in self.Q]                          # [003-alg3 L6] [000-alg3 L6] r(0,i) <- 0
        self.C = [np.zeros(q.dim) for q in self.Q]                          # C_i(0) = 0 (no input yet)
        self.t = 0
        self.releases: list[SyntheticDataset] = []
        self.trace: list[MainAlgorithmStep] | None = [] if keep_trace else None
        self._true = RecordMultiset(domain)
        self._public_total = 0.0

    def _check_counters(self) -> None:
        for c in self.counters:
            claim = c.claim
            if claim.measure is not Measure.PURE_DP or claim.neighbour is not Neighbour.STREAM_ENTRY:
                raise DPStreamInputError(
                    "counter_factory", "must build pure-DP counters for STREAM_ENTRY neighbours (003-thm6.1 "
                    "composes pure eps)", claim.describe())

    @property
    def claim(self) -> PrivacyClaim:
        """The guarantee this instance meets: k selections + the k counters' budgets per step (003-thm6.1)."""
        if not self.total_rule.private:
            return PrivacyClaim.not_private(Neighbour.EVENT, "003-thm6.1",
                                            "the mass of g_t is the true size |f_t| (TotalRule.true_size)")
        eps_m = self.k * self.selector.epsilon_spent
        eps_c = self.k * max(c.claim.parameter for c in self.counters)
        note = f"k={self.k} selections ({eps_m:g}) + k counter inputs ({eps_c:g}) per time step"
        if self.selector.law is SelectionLaw.PRINTED_DEF_3_8:
            note += "; printed Def 3.8 sign: selects the smallest error (E-tabular-2)"
        assumed = self.selector.assumed_sensitivity
        if assumed is not None and assumed != self.selector.sensitivity:
            note += (f"; selection calibrated with the printed sensitivity {assumed:g} while the score's is "
                     f"{self.selector.sensitivity:g} (E-tabular-8)")
        return PrivacyClaim.pure(eps_m + eps_c, Neighbour.EVENT, "003-thm6.1", note)

    @property
    def paper_claim(self) -> PrivacyClaim:
        return PrivacyClaim.pure(self.epsilon, Neighbour.EVENT, "003-thm6.1")

    def _total(self, t: int, M: Sequence[Measurement], fallback: float, step: StreamStep) -> float:
        rule = self.total_rule
        if rule.kind is TotalKind.PUBLIC:
            return self._public_total + rule.public_size(t)
        if rule.kind is TotalKind.MEASURED:
            return TotalRule.estimate(M, fallback)
        return float(self._true.size + step.size)  # |f_t| read from the data (not private)

    def _check_horizons(self) -> None:
        for c in self.counters:
            parts = c.counters if isinstance(c, MultiDimensionalCounter) else [c]
            for part in parts:
                if part.horizon is not None and part.t >= part.horizon:
                    raise HorizonExceededError("t", f"a counter cannot step past its horizon T = {part.horizon}",
                                               part.t + 1)

    # -- the two halves of selective counting (see dpstream.tabular.selective) --------------

    def select(self, t: int, l: int, J: Sequence[int], target: Sequence[FloatArray], h_prev: SyntheticDataset
               ) -> tuple[int, list[float]]:
        """L11-L12: scores e_{t,l} over J and the exponential mechanism; returns (eta_{t,l}, e_{t,l})."""
        current = [answer(self.Q[i], h_prev) if i in J else target[i] for i in range(len(self.Q))]
        # [003-alg3 L11] [000-alg3 L11] e_{t,l} <- (|q_i(∇f_t + g_{t-1}) - q_i(h_{t,l-1})|)_{i in J_{t,l}}
        e = query_scores(self.Q, J, target, current, self.biases)
        # [003-alg3 L12] [000-alg3 L12] eta_{t,l} <- ExponentialMechanism(e_{t,l}, eps/2k)
        index = self.selector.select(self.noise, site("003-alg3 L12", t=t, l=l), e)
        return J[index], e

    def begin(self, x: object) -> StepState:
        """Validate ∇f_t (before any draw) and set up time t: L7-L8, h_{t,0} = g_{t-1}."""
        step = coerce_step(self.domain, x)
        self._true.check(step)
        self._check_horizons()
        t = self.t + 1                                                       # [003-alg3 L7] [000-alg3 L7] for t
        if self.total_rule.kind is TotalKind.PUBLIC:
            self.total_rule.public_size(t)  # n_t must exist and be >= 0: checked here, before the first draw
        diff = DifferentialDataset(self.domain, step)
        q_diff = [diff.answer(q) for q in self.Q]
        target = [q_diff[i] + answer(q, self.g) for i, q in enumerate(self.Q)]  # q_i(∇f_t + g_{t-1})
        return StepState(t=t, step=step, q_diff=q_diff, target=target,
                         I=[],                                               # [003-alg3 L8] [000-alg3 L8] I_{t,0}
                         h_prev=self.g,                                      # h_{t,0} = g_{t-1} (003-sec6.1)
                         r=list(self.r), m=list(self.m), C=list(self.C))

    def candidates(self, state: StepState) -> list[int]:
        """J_{t,l} <- [|Q|] minus I_{t,l-1} (L10)."""
        return [i for i in range(len(self.Q)) if i not in state.I]    # [003-alg3 L10] [000-alg3 L10] J_{t,l}

    def iteration(self, state: StepState, j: int, scores: Sequence[float], counter_release: FloatArray) -> None:
        """L13-L18 once j = eta_{t,l} is selected and C_j has consumed q_j(∇f_t) (its release is C_j(t))."""
        state.I.append(j)                                                    # [003-alg3 L14] [000-alg3 L14] I_{t,l}
        state.C[j] = np.asarray(counter_release, dtype=np.float64)           # C_j(t), from L15
        state.r[j] = self.r[j]                                               # [003-alg3 L16] [000-alg3 L16]
        state.m[j] = state.C[j] + state.r[j]                                 # [003-alg3 L17] [000-alg3 L17]
        M = [Measurement(self.Q[i], state.m[i], 2.0 * self.k / self.epsilon) for i in state.I]
        N = self._total(state.t, M, state.h_prev.total, state.step)
        # [003-alg3 L18] [000-alg3 L18] h_{t,l} <- A_Dataset({(q_i, m(t,i))}_{i in I_{t,l}}, h_{t,l-1})
        h_l = self.fitter.fit(M, state.h_prev, N)
        state.hs.append(h_l)
        state.scores.append(tuple(scores))
        state.totals.append(N)
        state.h_prev = h_l

    def finish(self, state: StepState, commits: Sequence[Callable[[], object]]) -> SyntheticDataset:
        """L19-L21, then commit the counters (``commits``) and the state; returns g_t."""
        if self.aggregate == "last":
            g_t = materialize(state.hs[-1], self.cliques)   # not in the paper (see __init__)
        else:
            g_t = materialize(average(state.hs), self.cliques)               # [003-alg3 L19] [000-alg3 L20] g_t
        g_answers = [answer(q, g_t) for q in self.Q]
        for i in range(len(self.Q)):
            if i not in state.I:
                state.C[i] = self.C[i]                       # [003-alg3 L20] [000-alg3 L21] C_i(t) <- C_i(t-1)
                state.r[i] = g_answers[i] - state.C[i]       # [003-alg3 L21] [000-alg3 L22] r(t,i) <- q_i(g_t) - C_i(t)
                state.m[i] = g_answers[i]                    # m(t,i) = C_i(t) + r(t,i) (003-sec6.2)
        for commit in commits:
            commit()
        self._true.apply(state.step)
        if self.total_rule.kind is TotalKind.PUBLIC:
            self._public_total += self.total_rule.public_size(state.t)
        self.g, self.r, self.m, self.C, self.t = g_t, state.r, state.m, state.C, state.t
        self.releases.append(g_t)
        if self.trace is not None:
            self.trace.append(MainAlgorithmStep(
                state.t, tuple(state.I), tuple(state.scores), tuple(state.q_diff[j] for j in state.I),
                tuple(state.C), tuple(state.r), tuple(state.m), tuple(g_answers), tuple(state.totals)))
        return g_t

    def step(self, x: object) -> SyntheticDataset:
        """Consume ∇f_t and release g_t (atomic: a failing draw changes nothing)."""
        state = self.begin(x)
        pending: list[Staged[FloatArray]] = []
        for l in range(1, self.k + 1):                                       # [003-alg3 L9] [000-alg3 L9] for l
            J = self.candidates(state)
            eta, e = self.select(state.t, l, J, state.target, state.h_prev)
            j = eta                                                          # [003-alg3 L13] [000-alg3 L13] j
            # [003-alg3 L15] [000-alg3 L15] invoke C_j with input ∇f_t, i.e. q_j(∇f_t) (vector for workloads)
            pending.append(stage_counter(self.counters[j], state.q_diff[j]))
            self.iteration(state, j, e, pending[-1].release)
        return self.finish(state, [p.apply for p in pending])

    def run(self, stream: Sequence[object]) -> list[SyntheticDataset]:
        return [self.step(x) for x in stream]
