"""Audits of PHDStream (seed 001): PrivTree_T, PHDStream (naive and compute-efficient), baselines.

Neighbour relation: EVENT (one point added or removed at one time, ||f - f'||_nabla = 1).
Parameters: Omega = [0, 1]^2, binary tree (beta = 2) of depth D = 3, eps = 1, theta = 0, and a
two-step stream with a removal (:data:`BASE`); the neighbours add an insertion at t = 2, drop one
of the removals at t = 2, or add an insertion at t = 1 (:data:`PAIRS`).

Checks (docs/audits.md):

* exact loss -- PrivTree: the finite law of subtrees, a product of Laplace tail probabilities,
  enumerated (26 subtrees for D = 3); PHDStream: the exact sup of the transcript's privacy loss.
  Only the step tau where the neighbours differ contributes (the transcript density factorises,
  proofs/proof_phdstream.py); its sup over outputs given a past transcript is computed exactly by
  :func:`dpstream.audit.phdstream.loss.phdstream_step_sup_loss`. Past transcripts: three sampled
  from the implementation and the *adversarial past* of
  :func:`dpstream.audit.phdstream.loss.adversarial_past` (a reachable G(., tau-1) that is not
  path-monotone), which attains the worst case;
* black-box -- the exact log-likelihood ratio of the paper's model as the score;
* calibration -- the recovered leaf noise d(v, t) - nabla F(v, t) against Lap(2/eps) (KS) and the
  first subtree against its exact law (chi-square).

``expect_failure`` cases show E-phdstream-3 (PrivTree's App. A scale on a non-monotone input;
PHDStream with the App. A scale, the authors' choice; Algorithm 1 as printed at D = 8;
Algorithm 6/7 as printed), the non-private baseline 1 and baseline 2 as printed (E-phdstream-9).
Baselines are audited against the claim they could be mistaken for, pure eps.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any

import numpy as np

from dpstream.audit.blackbox import black_box
from dpstream.audit.calibration import calibration_finite, marginal_pvalue
from dpstream.audit.cases import Effort, finite_case
from dpstream.audit.exact import ExactLoss, LossFigures, exact_loss_finite
from dpstream.audit.linear_model import NoiseLaw
from dpstream.audit.neighbours import NeighbourPair, event_pairs
from dpstream.audit.phdstream.loss import (
    adversarial_past,
    enumerate_subtrees,
    laplace_log_pdf,
    phdstream_step_sup_loss,
    privtree_log_probability,
)
from dpstream.audit.protocol import MechanismFactory, Transcript, derive_seed, run_once, sample_transcripts
from dpstream.audit.registry import FAMILY_BUDGETS, AuditCase, AuditContext, CheckKind, CheckResult
from dpstream.audit.scores import feature_score
from dpstream.claims import Neighbour, PrivacyClaim
from dpstream.insecure import InsecureSeededNoise
from dpstream.noise import NoiseSource
from dpstream.phdstream.baselines import OfflinePrivTreeOnDifferential, OfflinePrivTreeOnStream
from dpstream.phdstream.counters_tree import PHDStreamTreeWithCounters
from dpstream.phdstream.efficient import EfficientPHDStream
from dpstream.phdstream.partition import HypercubePartition, Node, Partition
from dpstream.phdstream.phdstream_tree import PHDStreamTree
from dpstream.phdstream.privtree import LambdaRule, PrivTree, Subtree, privtree, privtree_scales
from dpstream.phdstream.stream import PointEvents, TrueStream
from dpstream.phdstream.tree_function import TreeFunction, consistent_extension, tree_function

__all__ = [
    "BASE",
    "EPS",
    "PAIRS",
    "PHDStreamModel",
    "cases",
    "phdstream_calibration",
    "phdstream_exact_loss",
    "phdstream_llr",
    "to_batch",
]

EPS = 1.0
THETA = 0.0
P3 = HypercubePartition(2, 3)
Event = tuple[float, float, int]
BASE: tuple[tuple[Event, ...], ...] = (
    ((0.1, 0.1, 1),) * 8 + ((0.8, 0.3, 1),) * 4,
    ((0.1, 0.1, -1),) * 3 + ((0.3, 0.8, 1),) * 5,
)
PAIRS: list[NeighbourPair] = (
    event_pairs(BASE, [2], (0.1, 0.1, 1))
    + event_pairs(BASE, [2], (0.1, 0.1, -1), remove=True)
    + event_pairs(BASE, [1], (0.8, 0.3, 1))
)
STATISTICAL_SHARE = 2.9e-5
EXACT_ONLY_SHARE = 1e-6


def to_batch(events: Sequence[Event]) -> PointEvents:
    """A batch of (x, y, move) events as :class:`PointEvents`."""
    if not events:
        return PointEvents.empty(2)
    arr = np.asarray([[e[0], e[1]] for e in events], dtype=np.float64)
    return PointEvents.of(arr, [int(e[2]) for e in events])


def _differential(partition: Partition, events: Sequence[Event]) -> TreeFunction:
    batch = to_batch(events)
    return tree_function(partition, batch.points, batch.moves)


TreeItem = tuple[Subtree, dict[Node, float]]


class NaiveTreeAdapter:
    """Algorithm 3 (Simple counters) on event batches; releases (T(t), G on the leaves of T(t))."""

    def __init__(self, noise: NoiseSource, partition: Partition = P3, rule: LambdaRule = LambdaRule.GENERAL) -> None:
        self.alg = PHDStreamTreeWithCounters(partition, EPS, THETA, noise=noise, lambda_rule=rule)
        self.stream = TrueStream(partition)

    def step(self, events: Sequence[Event]) -> TreeItem:
        prepared = self.stream.stage(to_batch(events))
        release = self.alg.step(prepared.release.dF)
        prepared.commit()
        return release.tree, release.leaf_values


class EfficientAdapter:
    """Algorithm 6/7 on event batches; releases (T(t), G on the leaves of T(t))."""

    def __init__(self, noise: NoiseSource, partition: Partition = P3) -> None:
        self.alg = EfficientPHDStream(partition, EPS, THETA, noise=noise)

    def step(self, events: Sequence[Event]) -> TreeItem:
        release = self.alg.step(to_batch(events))
        return release.tree, dict(release.leaf_values)


class PHDStreamModel:
    """The paper's model of one PHDStream run: PrivTree scale, bias, threshold, leaf-noise scale."""

    def __init__(self, partition: Partition, lam: float, delta: float, theta: float, count_scale: float) -> None:
        self.partition, self.lam, self.delta, self.theta, self.count_scale = partition, lam, delta, theta, count_scale

    @classmethod
    def default(cls, partition: Partition = P3, rule: LambdaRule = LambdaRule.GENERAL,
                count_scale: float | None = None, tree_epsilon: float | None = None) -> PHDStreamModel:
        lam, delta = privtree_scales(partition, EPS / 2 if tree_epsilon is None else tree_epsilon, rule)
        return cls(partition, lam, delta, THETA, 2.0 / EPS if count_scale is None else count_scale)

    def increments(self, transcript: Sequence[TreeItem]) -> list[dict[Node, float]]:
        """d(., t) from the released leaf values: on a leaf v of T(t), G(v, t) - G(v, t-1) = d(v, t)."""
        D: TreeFunction = {}
        out = []
        for tree, leaf_values in transcript:
            previous = consistent_extension(self.partition, D, nodes=tree.leaves)
            d = {v: leaf_values[v] - previous[v] for v in tree.leaves}
            for v, x in d.items():
                D[v] = D.get(v, 0.0) + x
            out.append(d)
        return out

    def log_likelihood(self, transcript: Sequence[TreeItem], batches: Sequence[Sequence[Event]]) -> float:
        """log p(transcript | stream): PrivTree decisions on G(., t-1) + nabla F(., t) and Laplace leaf noise."""
        total = 0.0
        D: TreeFunction = {}
        for (tree, _), d, events in zip(transcript, self.increments(transcript), batches, strict=True):
            dF = _differential(self.partition, events)
            nodes = list(tree.nodes)
            G = consistent_extension(self.partition, D, nodes=nodes)
            inputs = {v: G[v] + dF.get(v, 0.0) for v in nodes}
            total += privtree_log_probability(self.partition, inputs, tree, self.lam, self.delta, self.theta)
            total += sum(laplace_log_pdf(d[v] - dF.get(v, 0.0), self.count_scale) for v in tree.leaves)
            for v, x in d.items():
                D[v] = D.get(v, 0.0) + x
        return total


def phdstream_llr(model: PHDStreamModel, pair: NeighbourPair) -> Callable[[Transcript], float]:
    """Black-box score: the exact log-likelihood ratio log p(o | f) - log p(o | f') of the model."""
    def score(transcript: Transcript) -> float:
        return model.log_likelihood(transcript, pair.f) - model.log_likelihood(transcript, pair.f_prime)
    return score


def _differing_time(pair: NeighbourPair) -> int:
    for t, (a, b) in enumerate(zip(pair.f, pair.f_prime, strict=True), start=1):
        if tuple(a) != tuple(b):
            return t
    raise ValueError("the inputs of the pair do not differ")


def phdstream_exact_loss(model: PHDStreamModel, pairs: Sequence[NeighbourPair], claim: PrivacyClaim,
                         factory: MechanismFactory | None, seed: int, sampled_pasts: int = 3) -> CheckResult:
    """Exact sup of the transcript loss for each pair: the step tau, given sampled and adversarial pasts."""
    figures = LossFigures(claim, ())
    P = model.partition
    for pair in pairs:
        tau = _differing_time(pair)
        dF = _differential(P, pair.f[tau - 1])
        dF2 = _differential(P, pair.f_prime[tau - 1])
        pasts: list[tuple[str, TreeFunction]] = []  # (label, G(., tau-1))
        if tau == 1:
            pasts.append(("G(., 0) = 0", {}))
        else:
            if factory is not None:
                for i in range(sampled_pasts):
                    noise = InsecureSeededNoise(derive_seed(seed, "past", pair.label, i))
                    past = run_once(factory, pair.f[: tau - 1], noise)
                    D: TreeFunction = {}
                    for d in model.increments(past):
                        for v, x in d.items():
                            D[v] = D.get(v, 0.0) + x
                    pasts.append((f"sampled past {i}", consistent_extension(P, D)))
            changed = [v for v in set(dF) | set(dF2) if dF.get(v, 0.0) != dF2.get(v, 0.0)]
            leaf = max(changed, key=len)  # the changed point's leaf of T (depth D)
            pasts.append(("adversarial past", adversarial_past(P, leaf, dF, model.delta, model.theta)))
        for label, G in pasts:
            nodes = set(G) | set(dF) | set(dF2)
            inputs = {v: G.get(v, 0.0) + dF.get(v, 0.0) for v in nodes}
            inputs2 = {v: G.get(v, 0.0) + dF2.get(v, 0.0) for v in nodes}
            loss = phdstream_step_sup_loss(P, inputs, inputs2, dF, dF2, model.lam, model.delta, model.theta,
                                           model.count_scale)
            figures.add(f"{pair.label}, {label}", loss)
    return figures.result("exact sup of the step-tau loss (PrivTree tails x Laplace densities)")


def phdstream_calibration(model: PHDStreamModel, runs_on_f: Sequence[Transcript], pair: NeighbourPair,
                          level: float) -> list[CheckResult]:
    """The leaf noise d(v, t) - nabla F(v, t) against Lap(count_scale); the first subtree against its law."""
    P = model.partition
    dFs = [_differential(P, events) for events in pair.f]
    z = [d[v] - dFs[t].get(v, 0.0) for run in runs_on_f for t, d in enumerate(model.increments(run)) for v in d]
    p, test = marginal_pvalue(NoiseLaw.laplace(model.count_scale), z)
    noise_check = CheckResult(CheckKind.CALIBRATION, p > level / 2, p, level / 2,
                              f"{len(z)} recovered leaf noises vs Lap({model.count_scale:g}): {test}, "
                              f"p = {p:.3g} vs level {level / 2:.2g}")
    law: dict[Hashable, float] = {
        S.nodes: math.exp(privtree_log_probability(P, dFs[0], S, model.lam, model.delta, model.theta))
        for S in enumerate_subtrees(P)}
    tree_check = calibration_finite([run[0][0].nodes for run in runs_on_f], law, level / 2,
                                    label="T(1) against the product of Laplace tails")
    return [noise_check, tree_check]


def _phdstream_run(factory: MechanismFactory, model: PHDStreamModel, claim: PrivacyClaim, effort: Effort,
                   black_box_pair: NeighbourPair) -> Callable[[AuditContext], list[CheckResult]]:
    def run(ctx: AuditContext) -> list[CheckResult]:
        checks = [phdstream_exact_loss(model, PAIRS, claim, factory, ctx.seed)]
        level = ctx.false_alarm / 2
        n = effort.runs(ctx.profile)
        ctx.progress(f"sampling {2 * n} runs on f and on f'")
        on_f = sample_transcripts(factory, black_box_pair.f, 2 * n, derive_seed(ctx.seed, "f"))
        on_fp = sample_transcripts(factory, black_box_pair.f_prime, 2 * n, derive_seed(ctx.seed, "f'"))
        checks.append(black_box(on_f, on_fp, claim, level, score=phdstream_llr(model, black_box_pair),
                                label=f"{black_box_pair.label}, model LLR"))
        checks.extend(phdstream_calibration(model, on_f, black_box_pair, level))
        return checks
    return run


def _exact_only(model: PHDStreamModel, claim: PrivacyClaim, pairs: Sequence[NeighbourPair]
                ) -> Callable[[AuditContext], list[CheckResult]]:
    def run(ctx: AuditContext) -> list[CheckResult]:
        return [phdstream_exact_loss(model, pairs, claim, None, ctx.seed)]
    return run


# ----------------------------------------------------------------------------------- PrivTree


class _PrivTreeOnce:
    """PrivTree_T as a one-step streaming object: input F (a tree function), release the subtree's vertex set."""

    def __init__(self, noise: NoiseSource, partition: Partition, rule: LambdaRule) -> None:
        self.noise, self.partition, self.rule = noise, partition, rule

    def step(self, F: Mapping[Node, float]) -> frozenset[Node]:
        return privtree(self.partition, F, EPS, THETA, noise=self.noise, lambda_rule=self.rule).nodes


def _privtree_law(partition: Partition, rule: LambdaRule) -> Callable[[Sequence[Any]], dict[Hashable, float]]:
    lam, delta = privtree_scales(partition, EPS, rule)
    subtrees = list(enumerate_subtrees(partition))

    def law(inputs: Sequence[Any]) -> dict[Hashable, float]:
        F = inputs[-1]
        return {S.nodes: math.exp(privtree_log_probability(partition, F, S, lam, delta, THETA)) for S in subtrees}
    return law


def _privtree_pairs(partition: Partition, rule: LambdaRule) -> list[NeighbourPair]:
    """One point added to: a clustered count function, a spread one, and a non-monotone consistent F."""
    _, delta = privtree_scales(partition, EPS, rule)
    D = partition.max_depth
    clustered = [[0.1, 0.1]] * 6 + [[0.2, 0.15]] * 3 + [[0.9, 0.7]] * 2
    spread = [[0.1, 0.1], [0.4, 0.9], [0.6, 0.2], [0.9, 0.9]] * 2
    out = []
    for name, pts in (("counts (clustered)", clustered), ("counts (spread)", spread)):
        F = tree_function(partition, pts)
        F2 = tree_function(partition, [*pts, [0.1, 0.1]])
        out.append(NeighbourPair((F,), (F2,), f"{name}: one point added", Neighbour.EVENT))
    leaf = (0,) * D
    G = adversarial_past(partition, leaf, {}, delta, THETA)
    G2 = {v: x + (1.0 if leaf[: len(v)] == v else 0.0) for v, x in G.items()}
    out.append(NeighbourPair((G,), (G2,), "non-monotone F in C(T): one point added", Neighbour.EVENT))
    return out


# ----------------------------------------------------------------------------------- baselines


class _BaselineAdapter:
    def __init__(self, alg: OfflinePrivTreeOnStream | OfflinePrivTreeOnDifferential) -> None:
        self.alg = alg

    def step(self, events: Sequence[Event]) -> tuple[Subtree, dict[Node, float], int]:
        r = self.alg.step(to_batch(events))
        return r.tree, dict(r.leaf_values), r.size


BASELINE_STREAM: tuple[tuple[Event, ...], ...] = (
    ((0.1, 0.1, 1),) * 6 + ((0.8, 0.3, 1),) * 3,
    ((0.3, 0.8, 1),) * 2,
    ((0.8, 0.3, -1),) * 2,
    ((0.6, 0.6, 1),) * 3,
)
BASELINE_PAIR = event_pairs(BASELINE_STREAM, [1], (0.1, 0.1, 1))[0]


def baseline1_exact_loss(pair: NeighbourPair, claim: PrivacyClaim) -> CheckResult:
    """Baseline 1: every release runs PrivTree+Counting on f(., t); the losses of the T steps add up."""
    lam, delta = privtree_scales(P3, EPS / 2, LambdaRule.PROOF)  # the baselines' default scale
    F: TreeFunction = {}
    F2: TreeFunction = {}
    forward = backward = 0.0
    for a, b in zip(pair.f, pair.f_prime, strict=True):
        for target, events in ((F, a), (F2, b)):
            for v, x in _differential(P3, events).items():
                target[v] = target.get(v, 0.0) + x
        loss = phdstream_step_sup_loss(P3, F, F2, F, F2, lam, delta, THETA, 2.0 / EPS)
        forward += loss.parts["forward"]
        backward += loss.parts["backward"]
    figures = LossFigures(claim, ())
    total = ExactLoss.exact(max(forward, backward), "sum over the releases", {"forward": forward, "backward": backward})
    figures.add(f"{pair.label}, over {len(pair.f)} releases", total)
    return figures.result("sum over the releases of the exact PrivTree+Counting sup losses")


def _baseline1_run() -> Callable[[AuditContext], list[CheckResult]]:
    claim = PrivacyClaim.pure(EPS, Neighbour.EVENT, "001-sec5.3", "the claim baseline 1 could be mistaken for")

    def run(ctx: AuditContext) -> list[CheckResult]:
        return [baseline1_exact_loss(BASELINE_PAIR, claim)]
    return run


def _baseline2_printed_run(effort: Effort) -> Callable[[AuditContext], list[CheckResult]]:
    claim = PrivacyClaim.pure(EPS, Neighbour.EVENT, "001-sec5.3", "the paper's claim for baseline 2")

    def run(ctx: AuditContext) -> list[CheckResult]:
        n = effort.runs(ctx.profile)
        factory: MechanismFactory = lambda noise: _BaselineAdapter(  # noqa: E731
            OfflinePrivTreeOnDifferential(P3, EPS, THETA, noise=noise, as_printed=True))
        on_f = sample_transcripts(factory, BASELINE_PAIR.f, 2 * n, derive_seed(ctx.seed, "f"))
        on_fp = sample_transcripts(factory, BASELINE_PAIR.f_prime, 2 * n, derive_seed(ctx.seed, "f'"))
        size = feature_score(lambda t: float(t[-1][2]))
        return [black_box(on_f, on_fp, claim, ctx.false_alarm, score=size,
                          label=f"{BASELINE_PAIR.label}, size of the last release")]
    return run


# ----------------------------------------------------------------------------------- cases


def _adversarial_pairs() -> list[NeighbourPair]:
    """The t = 2 insertion pair (the adversarial past is built for it on any partition)."""
    return event_pairs(BASE, [2], (0.1, 0.1, 1))


def cases() -> list[AuditCase]:
    assert FAMILY_BUDGETS["phdstream"] >= 4 * STATISTICAL_SHARE + 5 * EXACT_ONLY_SHARE
    out: list[AuditCase] = []
    # 1. PrivTree_T with the default scale
    pt = PrivTree(P3, EPS)
    out.append(finite_case(
        "PrivTree_T (D=3, eps=1, lambda=D/eps)", "001-alg5", pt.claim,
        lambda noise: _PrivTreeOnce(noise, P3, LambdaRule.GENERAL), _privtree_law(P3, LambdaRule.GENERAL),
        _privtree_pairs(P3, LambdaRule.GENERAL), false_alarm=STATISTICAL_SHARE, effort=Effort(quick=600, full=20000),
        errata=("E-phdstream-3",)))
    # 2. PrivTree_T with the App. A scale on a non-monotone consistent F (D = 4): Theorem 3.1 fails
    P4 = HypercubePartition(2, 4)
    proof_claim = PrivTree(P4, EPS, lambda_rule=LambdaRule.PROOF).paper_claim
    law4 = _privtree_law(P4, LambdaRule.PROOF)
    pairs4 = _privtree_pairs(P4, LambdaRule.PROOF)
    out.append(AuditCase(
        "PrivTree_T, App. A scale, non-monotone F (D=4)", "001-alg5", proof_claim,
        lambda ctx: [exact_loss_finite([(p.label, law4(p.f), law4(p.f_prime)) for p in pairs4], proof_claim)],
        false_alarm=EXACT_ONLY_SHARE, errata=("E-phdstream-3",), expect_failure=True))
    # 3. PHDStream, Algorithm 3 with Simple counters (naive)
    model = PHDStreamModel.default()
    claim = PHDStreamTreeWithCounters(P3, EPS, THETA, noise=InsecureSeededNoise(0)).claim
    naive: MechanismFactory = lambda noise: NaiveTreeAdapter(noise)  # noqa: E731
    out.append(AuditCase(
        "PHDStream, Alg 3 + Simple counters (D=3, eps=1)", "001-alg3", claim,
        _phdstream_run(naive, model, claim, Effort(quick=300, full=5000), PAIRS[0]),
        false_alarm=STATISTICAL_SHARE, errata=("E-phdstream-3", "E-phdstream-5")))
    # 4. the compute-efficient PHDStream
    efficient: MechanismFactory = lambda noise: EfficientAdapter(noise)  # noqa: E731
    eff_claim = EfficientPHDStream(P3, EPS, THETA, noise=InsecureSeededNoise(0)).claim
    out.append(AuditCase(
        "Compute-efficient PHDStream, Alg 6/7 (D=3, eps=1)", "001-alg6", eff_claim,
        _phdstream_run(efficient, model, eff_claim, Effort(quick=200, full=5000), PAIRS[0]),
        false_alarm=STATISTICAL_SHARE, errata=("E-phdstream-3", "E-phdstream-6")))
    # 5. App. A scale (Algorithm 6 L3, the authors' code), D = 5
    P5 = HypercubePartition(2, 5)
    m5 = PHDStreamModel.default(P5, LambdaRule.PROOF)
    c5 = PHDStreamTreeWithCounters(P5, EPS, THETA, noise=InsecureSeededNoise(0),
                                   lambda_rule=LambdaRule.PROOF).paper_claim
    out.append(AuditCase(
        "PHDStream, App. A PrivTree scale (D=5)", "001-thm3.2", c5, _exact_only(m5, c5, _adversarial_pairs()),
        false_alarm=EXACT_ONLY_SHARE, errata=("E-phdstream-3",), expect_failure=True))
    # 6. Algorithm 1 as printed (Algorithm 5 L3 at eps/2), D = 8
    P8 = HypercubePartition(2, 8)
    m8 = PHDStreamModel.default(P8, LambdaRule.PRINTED)
    c8 = PHDStreamTree(P8, EPS, THETA, noise=InsecureSeededNoise(0),
                       lambda_rule=LambdaRule.PRINTED).paper_claim  # Alg 1
    out.append(AuditCase(
        "PHDStreamTree, Alg 1 as printed (D=8)", "001-alg1", c8, _exact_only(m8, c8, _adversarial_pairs()),
        false_alarm=EXACT_ONLY_SHARE, errata=("E-phdstream-3", "E-phdstream-4"), expect_failure=True))
    # 7. Algorithm 6/7 as printed, D = 5
    m6 = PHDStreamModel.default(P5, LambdaRule.PROOF, count_scale=4.0 / EPS)
    c6 = EfficientPHDStream(P5, EPS, THETA, noise=InsecureSeededNoise(0), as_printed=True).paper_claim
    out.append(AuditCase(
        "Compute-efficient PHDStream as printed (D=5)", "001-alg6", c6, _exact_only(m6, c6, _adversarial_pairs()),
        false_alarm=EXACT_ONLY_SHARE, errata=("E-phdstream-3", "E-phdstream-6"), expect_failure=True))
    # 8. baseline 1: not private
    out.append(AuditCase(
        "Baseline 1: offline PrivTree on f(., t) (T=4)", "001-sec5.3",
        PrivacyClaim.pure(EPS, Neighbour.EVENT, "001-sec5.3", "the claim baseline 1 could be mistaken for"),
        _baseline1_run(), false_alarm=EXACT_ONLY_SHARE, expect_failure=True))
    # 9. baseline 2 as printed: scaled by the true |f(., t)|
    out.append(AuditCase(
        "Baseline 2 as printed: true-count scaling (T=4)", "001-sec5.3",
        PrivacyClaim.pure(EPS, Neighbour.EVENT, "001-sec5.3", "the paper's claim for baseline 2"),
        _baseline2_printed_run(Effort(quick=60, full=1000)), false_alarm=STATISTICAL_SHARE,
        errata=("E-phdstream-9",), expect_failure=True))
    return out
