"""PrivTree_T + Counting and the three baselines of section 5.3 (001-sec5.3).

PrivTree_T + Counting (offline, after Zhang et al. 2016): PrivTree_T with budget eps/2 gives a
subtree S; every leaf of S gets its count plus Lap(2/eps); that many points are sampled in
each leaf (rule (5)). It is eps-DP for one point added or removed (PrivTree eps/2 + Laplace
eps/2). Every baseline runs PrivTree on *counts* of a point set (f(., t), the insertions of a batch, the
initialization data), which are path-monotone, so the App. A scale (``LambdaRule.PROOF``, the paper's
and the authors' choice) is eps/2-DP there and is the default (E-phdstream-3; only PHDStream, whose
PrivTree input is G(., t-1) + nabla F(., t), needs ``LambdaRule.GENERAL``).

* Baseline 1 (:class:`OfflinePrivTreeOnStream`): at every t an independent PrivTree+Counting on
  f(., t). NOT differentially private with parameter eps: a point present during k releases
  enters k independent eps-DP releases, so the loss grows to k * eps (its claim says so; the
  audit shows the loss growing with t).
* Baseline 2 (:class:`OfflinePrivTreeOnDifferential`): at every t an independent
  PrivTree+Counting on the differential data, scaled by |f(., t)| / |nabla f(., t)|.
  PrivTree+Counting needs a point set, so (as the authors' code does) it runs on the points
  with a positive net move at t, nabla f^+. The printed scaling uses the *true* |f(., t)|,
  which is not private (E-phdstream-9; ``as_printed=True``). Default: |f(., t)| is estimated
  by post-processing: N(t) = N(t-1) + (synthetic total of nabla f^+) - (total of nabla f^- +
  Lap(1/eps)); insertions and removals are disjoint parts of the data (a neighbour changes
  exactly one of them by 1), so the pair is eps-DP by parallel composition. The scaled leaf
  values are turned into exactly round(N) points (largest remainder), as the authors' code
  re-populates its tree.
* Baseline 3 (:class:`InitPrivTreeThenCounters`): PrivTree+Counting once at the first step
  (the initialization time t0, section 5.2) gives S; then a counter with budget eps per leaf of
  S counts nabla f(v, t). eps-DP: an event before t0 enters the initialization only, a later
  event one counter only.

Sites: PrivTree ``"001-alg5 L11 t=<t> v=<v>"``; counts ``"001-sec5.3 count t=<t> v=<v>"``;
baseline 2's removal total ``"001-sec5.3 removals t=<t>"``; baseline 3's counters scoped
``"001-sec5.3 counter v=<v>"``; rule (5) ``"001-eq5 t=<t> v=<v>"``.

Proofs: the PrivTree part on counts (path-monotone inputs) is proofs/proof_privtree.py (App. A scale), the
eps/2 + eps/2 composition with the Laplace counts as in proofs/proof_phdstream.py.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping

import numpy as np

from dpstream.claims import Neighbour, PrivacyClaim
from dpstream.convention import convention
from dpstream.counters import Counter
from dpstream.errors import require_positive_finite
from dpstream.noise import NoiseSource, default_noise, scoped, site
from dpstream.phdstream.counters_tree import CounterFactory, simple_counter_factory
from dpstream.phdstream.partition import FloatArray, Node, Partition, node_label
from dpstream.phdstream.phdstream_tree import PHDStreamParameters
from dpstream.phdstream.privtree import LambdaRule, Subtree, privtree_for
from dpstream.phdstream.stream import (
    RULE5_SITE,
    PointEvents,
    SyntheticRelease,
    TrueStream,
    sample_rule5,
)
from dpstream.phdstream.tree_function import TreeFunction, prefix_sums
from dpstream.staged import Staged, order_free, run_all

__all__ = [
    "InitPrivTreeThenCounters",
    "OfflinePrivTreeOnDifferential",
    "OfflinePrivTreeOnStream",
    "apportion",
    "privtree_counting",
]

ANCHOR = "001-sec5.3"
COUNT_SITE = "001-sec5.3 count"


@convention(("partition", "F", "epsilon", "theta", "noise"))
def privtree_counting(partition: Partition, F: Mapping[Node, float], epsilon: float, theta: float, *,
                      noise: NoiseSource | None = None, t: int | None = None,
                      lambda_rule: LambdaRule = LambdaRule.PROOF) -> tuple[Subtree, dict[Node, float]]:
    """PrivTree_T (eps/2) then Lap(2/eps) on every leaf count: (S, noisy leaf counts). Sampling is rule (5)."""
    epsilon = require_positive_finite("epsilon", epsilon)
    noise = default_noise() if noise is None else noise
    S = privtree_for(noise)(partition, F, epsilon / 2.0, theta, noise=noise, t=t, lambda_rule=lambda_rule,
                            check_input=False)
    leaves = list(S.leaves)
    names = [site(COUNT_SITE, v=node_label(v)) if t is None else site(COUNT_SITE, t=t, v=node_label(v))
             for v in leaves]
    noisy = noise.add_laplace_many(names, [F.get(v, 0.0) for v in leaves], 2.0 / epsilon)  # leaf counts, value-in
    return S, dict(zip(leaves, noisy.tolist(), strict=True))


def _counts_note(rule: LambdaRule) -> str:
    return (f"PrivTree runs on counts of a point set (path-monotone), where the {rule.value!r} scale is eps/2-DP "
            "or better (App. A; E-phdstream-3)")


def apportion(weights: Mapping[Node, float], total: int) -> dict[Node, int]:
    """Split ``total`` points over the vertices proportionally to max(weight, 0), largest remainder first.

    Without positive weight the points are spread evenly (every vertex weight 1).
    """
    positive = {v: max(w, 0.0) for v, w in weights.items()}
    mass = sum(positive.values())
    if total <= 0 or not weights:
        return {v: 0 for v in weights}
    if mass <= 0.0:
        positive = {v: 1.0 for v in weights}
        mass = float(len(weights))
    exact = {v: w * total / mass for v, w in positive.items()}
    out = {v: math.floor(x) for v, x in exact.items()}
    rest = total - sum(out.values())
    order = sorted(exact, key=lambda v: (-(exact[v] - out[v]), len(v), v))
    for v in order[:rest]:
        out[v] += 1
    return out


class _SumView(Mapping[Node, float]):
    """The read-only sum of two sparse tree functions (absent vertices are 0)."""

    def __init__(self, a: Mapping[Node, float], b: Mapping[Node, float]) -> None:
        self.a, self.b = a, b

    def __getitem__(self, v: Node) -> float:
        if v not in self.a and v not in self.b:
            raise KeyError(v)
        return self.a.get(v, 0.0) + self.b.get(v, 0.0)

    def __iter__(self) -> Iterator[Node]:
        yield from self.a
        yield from (v for v in self.b if v not in self.a)

    def __len__(self) -> int:
        return len(self.a) + sum(1 for v in self.b if v not in self.a)


def _sample_counts(partition: Partition, counts: Mapping[Node, int], noise: NoiseSource, t: int) -> FloatArray:
    chunks = [partition.sample(noise, site(RULE5_SITE, t=t, v=node_label(v)), v, k)
              for v, k in sorted(counts.items(), key=lambda item: (len(item[0]), item[0])) if k]
    return np.concatenate(chunks) if chunks else np.zeros((0, partition.dimension), dtype=np.float64)


class _Baseline(PHDStreamParameters):
    def __init__(self, partition: Partition, epsilon: float, theta: float, noise: NoiseSource | None,
                 lambda_rule: LambdaRule) -> None:
        super().__init__(partition, epsilon, theta, noise, lambda_rule)
        self.t = 0
        self.releases: list[SyntheticRelease] = []
        self._true = TrueStream(partition, track_counts=True)

    def _finish(self, t: int, S: Subtree, leaf_values: dict[Node, float],
                counts: Mapping[Node, int] | None = None) -> SyntheticRelease:
        if counts is None:
            counts, points = sample_rule5(self.partition, leaf_values, self.noise, t)
        else:
            points = _sample_counts(self.partition, counts, self.noise, t)
        return SyntheticRelease(t, S, leaf_values, dict(counts), points)


@convention(("partition", "epsilon", "theta", "noise"))
class OfflinePrivTreeOnStream(_Baseline):
    """Baseline 1: independent PrivTree+Counting (eps) on f(., t) at every t. NOT eps-DP."""

    anchor = ANCHOR

    def __init__(self, partition: Partition, epsilon: float, theta: float = 0.0, *,
                 noise: NoiseSource | None = None, lambda_rule: LambdaRule = LambdaRule.PROOF) -> None:
        super().__init__(partition, epsilon, theta, noise, lambda_rule)

    @property
    def claim(self) -> PrivacyClaim:
        return PrivacyClaim.not_private(
            Neighbour.EVENT, ANCHOR,
            f"baseline 1 re-runs an eps={self.epsilon:g}-DP PrivTree+Counting on f(., t) at every t; a point "
            "present during k releases costs k*eps (no bound independent of t)")

    def step(self, batch: PointEvents) -> SyntheticRelease:
        prepared = self._true.stage(batch)
        t = self.t + 1
        F_t = _SumView(self._true.F, prepared.release.dF)  # F(., t) = F(., t-1) + nabla F(., t), without copying
        S, leaf_values = privtree_counting(self.partition, F_t, self.epsilon, self.theta, noise=self.noise, t=t,
                                           lambda_rule=self.lambda_rule)
        release = self._finish(t, S, leaf_values)
        prepared.commit()
        self.t = t
        self.releases.append(release)
        return release


@convention(("partition", "epsilon", "theta", "noise"))
class OfflinePrivTreeOnDifferential(_Baseline):
    """Baseline 2: independent PrivTree+Counting on nabla f^+(., t), scaled to |f(., t)| (private estimate)."""

    anchor = ANCHOR

    def __init__(self, partition: Partition, epsilon: float, theta: float = 0.0, *,
                 noise: NoiseSource | None = None, lambda_rule: LambdaRule = LambdaRule.PROOF,
                 as_printed: bool = False) -> None:
        super().__init__(partition, epsilon, theta, noise, lambda_rule)
        self.as_printed = as_printed
        self.N_hat = 0.0

    @property
    def claim(self) -> PrivacyClaim:
        if self.as_printed:
            return PrivacyClaim.not_private(
                Neighbour.EVENT, ANCHOR, f"AS PRINTED: the paper claims eps={self.epsilon:g}, but the output is "
                "scaled by the true |f(., t)|, which is released exactly (E-phdstream-9)")
        return PrivacyClaim.pure(self.epsilon, Neighbour.EVENT, ANCHOR,
                                 "insertions: PrivTree+Counting; removals: Lap(1/eps) total; parallel composition; "
                                 + _counts_note(self.lambda_rule))

    def step(self, batch: PointEvents) -> SyntheticRelease:
        prepared = self._true.stage(batch)
        t = self.t + 1
        net: dict[tuple[float, ...], int] = {}
        for row, m in zip(prepared.release.points.tolist(), prepared.release.moves.tolist(), strict=True):
            net[tuple(row)] = net.get(tuple(row), 0) + int(m)
        added = [k for k, c in net.items() for _ in range(max(c, 0))]
        removed = sum(max(-c, 0) for c in net.values())
        pts = np.asarray(added, dtype=np.float64).reshape(len(added), self.partition.dimension)
        F_plus: TreeFunction = prefix_sums(self.partition.locate(pts), np.ones(len(added), dtype=np.float64),
                                           self.partition.beta)
        S, leaf_values = privtree_counting(self.partition, F_plus, self.epsilon, self.theta, noise=self.noise, t=t,
                                           lambda_rule=self.lambda_rule)
        synthetic_total = sum(leaf_values.values())
        if self.as_printed:
            N = float(self._true.size + int(prepared.release.moves.sum()))
            N_hat = self.N_hat
        else:
            removals = self.noise.add_laplace(site("001-sec5.3 removals", t=t), removed, 1.0 / self.epsilon)
            N_hat = self.N_hat + synthetic_total - removals
            N = N_hat
        counts = apportion(leaf_values, round(max(N, 0.0)))
        release = self._finish(t, S, leaf_values, counts)
        prepared.commit()
        self.N_hat = N_hat
        self.t = t
        self.releases.append(release)
        return release


@convention(("partition", "epsilon", "theta", "noise"))
class InitPrivTreeThenCounters(_Baseline):
    """Baseline 3: PrivTree+Counting at the first step (t0), then one counter (budget eps) per leaf."""

    anchor = ANCHOR

    def __init__(self, partition: Partition, epsilon: float, theta: float = 0.0, *,
                 noise: NoiseSource | None = None, counter: CounterFactory = simple_counter_factory,
                 lambda_rule: LambdaRule = LambdaRule.PROOF) -> None:
        super().__init__(partition, epsilon, theta, noise, lambda_rule)
        self.factory = counter
        self.S: Subtree | None = None
        self.initial: dict[Node, float] = {}
        self.counters: dict[Node, Counter] = {}

    @property
    def claim(self) -> PrivacyClaim:
        return PrivacyClaim.pure(self.epsilon, Neighbour.EVENT, ANCHOR,
                                 "initialization PrivTree+Counting (eps) or one leaf counter (eps); "
                                 + _counts_note(self.lambda_rule))

    def leaf_counter(self, v: Node) -> Counter:
        """The counter of leaf v of S (budget eps, scope ``"001-sec5.3 counter v=<v>"``; creating it draws nothing)."""
        return self.factory(self.epsilon, scoped(self.noise, site("001-sec5.3 counter", v=node_label(v))))

    def step(self, batch: PointEvents) -> SyntheticRelease:
        prepared = self._true.stage(batch)
        t = self.t + 1
        if self.S is None:
            S, initial = privtree_counting(self.partition, prepared.release.dF, self.epsilon, self.theta,
                                           noise=self.noise, t=t, lambda_rule=self.lambda_rule)
            counters = {v: self.leaf_counter(v) for v in S.leaves}
            leaf_values = dict(initial)
            commits: list[Staged[float]] = []
        else:
            S, initial, counters = self.S, self.initial, self.counters
            dF = prepared.release.dF
            commits = run_all([counters[v].staging(dF.get(v, 0.0)) for v in S.leaves], order_free(self.noise))
            leaf_values = {v: initial[v] + step.release for v, step in zip(S.leaves, commits, strict=True)}
        release = self._finish(t, S, leaf_values)
        for p in commits:
            p.commit()
        self.S, self.initial, self.counters = S, initial, counters
        prepared.commit()
        self.t = t
        self.releases.append(release)
        return release
