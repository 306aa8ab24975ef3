"""Audits of the tabular family (seeds 003/000): StreamingMWEM (003-alg2) and Algorithm 3 (003-alg3).

Neighbour relation: EVENT (003-def3.3: one record added or removed at one time). Setting: the
domain X = {0,1} x {0,1,2} (|X| = 6), the five 1-way marginal queries (or the 2-way workloads
of a 3-attribute domain), eps = 1, and a three-step turnstile stream with removals at t = 2
(:data:`BASE`), so that marginal values move in both directions. The neighbours (:func:`pairs`)
add any record at any time, drop one addition or one removal, or remove one more present record.

Checks (docs/audits.md, docs/tabular.md):

* exact loss, k = 1 -- the exact sup over outputs of the privacy loss at the differing time tau
  (:func:`dpstream.audit.tabular.loss.step_sup_loss`): the exponential mechanism's log-ratio for
  every selectable query plus the Laplace loss of its measurement, with the scale the
  implementation actually draws with. Only tau contributes;
* exact loss, sampled transcripts -- log p(o|f) - log p(o|f') of transcripts sampled on f, by
  forcing the selections and measurements through the algorithm on f and f'; checks that the
  loss vanishes at t != tau and that the releases are post-processing of the transcript (if not:
  infinite loss). Values are lower bounds of the sup, so a value above the claim is real;
* black-box -- histogram score of the release of the query containing the changed record;
* calibration -- the selection frequencies at t = 1 against the exact exponential-mechanism law
  (chi-square) and the measurement noise at t = 1 against Lap(2k/eps) (KS), Bonferroni;
* accuracy -- StreamingMWEM against the explicit bound of 003 App. A (Theorem 5.1).

``expect_failure`` cases: StreamingMWEM with the sampling law printed in 003-alg2 L11
(E-tabular-1) and with the mass |∇f_t| of 003-alg2 L20 (E-tabular-3), audited against the
paper's claim eps.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from dpstream.audit.accuracy import AccuracyBound, accuracy_check
from dpstream.audit.blackbox import black_box
from dpstream.audit.calibration import calibration_finite, marginal_pvalue
from dpstream.audit.counters.models import simple_counter_model
from dpstream.audit.exact import LossFigures
from dpstream.audit.linear_model import NoiseLaw
from dpstream.audit.neighbours import NeighbourPair
from dpstream.audit.protocol import derive_seed
from dpstream.audit.registry import FAMILY_BUDGETS, AuditCase, AuditContext, CheckKind, CheckResult, Profile
from dpstream.audit.scores import histogram_score
from dpstream.audit.stats import split_level
from dpstream.audit.tabular.loss import step_sup_loss, transcript_losses
from dpstream.claims import Neighbour, PrivacyClaim
from dpstream.insecure import InsecureSeededNoise
from dpstream.noise import NoiseSource
from dpstream.tabular.accuracy import streaming_mwem_differential_bound
from dpstream.tabular.datasets import SyntheticDataset, answer
from dpstream.tabular.domain import Domain
from dpstream.tabular.main_algorithm import MainAlgorithm
from dpstream.tabular.queries import MarginalQuery, Query, all_marginal_queries, all_workloads
from dpstream.tabular.selection import SelectionLaw
from dpstream.tabular.stream import DifferentialDataset, RecordMultiset, StreamStep, generate_records
from dpstream.tabular.streaming_mwem import StreamingMWEM
from dpstream.tabular.totals import TotalRule

__all__ = ["BASE", "DOMAIN", "EPS", "Q1", "cases", "exact_sup_check", "pairs", "transcript_check"]

EPS = 1.0
DOMAIN = Domain(("A", "B"), (2, 3))
Q1: list[Query] = list(all_marginal_queries(DOMAIN, 1))


def _step(added: Sequence[tuple[int, ...]], removed: Sequence[tuple[int, ...]] = ()) -> StreamStep:
    return StreamStep.build(DOMAIN, list(added), list(removed))


BASE: tuple[StreamStep, ...] = (
    _step([(0, 0)] * 3 + [(0, 1)] * 2 + [(1, 2)] * 4 + [(1, 0)]),
    _step([(0, 2)] * 2 + [(1, 1)] * 3, [(0, 0)] * 2 + [(1, 2)] * 3),
    _step([(1, 1)] * 2 + [(0, 1)]),
)
SIZES = tuple(float(s.size) for s in BASE)


def _public() -> TotalRule:
    return TotalRule.public(lambda t: SIZES[t - 1] if t <= len(SIZES) else 0.0)


def _with(step: StreamStep, add: Sequence[tuple[int, ...]] = (), drop_add: tuple[int, ...] | None = None,
          remove: Sequence[tuple[int, ...]] = (), drop_remove: tuple[int, ...] | None = None) -> StreamStep:
    added = [tuple(int(v) for v in r) for r in step.added]
    removed = [tuple(int(v) for v in r) for r in step.removed]
    if drop_add is not None:
        added.remove(drop_add)
    if drop_remove is not None:
        removed.remove(drop_remove)
    return StreamStep.build(step_domain(step), added + list(add), removed + list(remove))


def step_domain(step: StreamStep) -> Domain:
    return DOMAIN if step.added.shape[1] == DOMAIN.p else Domain(("A", "B", "C"), (2, 2, 3))


def _valid(stream: Sequence[StreamStep], domain: Domain) -> bool:
    tracker = RecordMultiset(domain)
    try:
        for s in stream:
            tracker.check(s)
            tracker.apply(s)
    except ValueError:
        return False
    return True


def pairs(base: Sequence[StreamStep] = BASE, domain: Domain = DOMAIN) -> list[NeighbourPair]:
    """Every EVENT neighbour of ``base`` of the kinds listed in the module docstring (valid streams only)."""
    out: list[NeighbourPair] = []
    cells = [tuple(int(v) for v in np.unravel_index(i, domain.sizes)) for i in range(domain.size)]
    present = RecordMultiset(domain)
    for tau, step in enumerate(base, start=1):
        variants: list[tuple[str, StreamStep]] = []
        variants += [(f"add {x} at t={tau}", _with(step, add=[x])) for x in cells]
        variants += [(f"drop an addition of {x} at t={tau}", _with(step, drop_add=x))
                     for x in sorted({tuple(int(v) for v in r) for r in step.added})]
        variants += [(f"drop a removal of {x} at t={tau}", _with(step, drop_remove=x))
                     for x in sorted({tuple(int(v) for v in r) for r in step.removed})]
        have = present.records(domain.p)
        variants += [(f"remove one more {x} at t={tau}", _with(step, remove=[x]))
                     for x in sorted({tuple(int(v) for v in r) for r in have})]
        for label, changed in variants:
            f_prime = (*base[:tau - 1], changed, *base[tau:])
            if _valid(f_prime, domain):
                out.append(NeighbourPair(tuple(base), f_prime, label, Neighbour.EVENT))
        present.apply(step)
    return out


def _tau(pair: NeighbourPair) -> int:
    for t, (a, b) in enumerate(zip(pair.f, pair.f_prime, strict=True), start=1):
        if a is not b:
            return t
    raise ValueError("the pair does not differ")


def exact_sup_check(build: Callable[[NoiseSource], StreamingMWEM | MainAlgorithm], claim: PrivacyClaim,
                    neighbour_pairs: Sequence[NeighbourPair], seed: int) -> CheckResult:
    """The exact sup of the loss at tau for every pair (k = 1), both directions."""
    figures = LossFigures(claim, ())
    for pair in neighbour_pairs:
        tau = _tau(pair)
        prefix = list(pair.f[:tau - 1])
        loss = step_sup_loss(build, prefix, pair.f[tau - 1], pair.f_prime[tau - 1], seed)
        figures.add(pair.label, loss)
    return figures.result("exact sup over outputs at the differing time (k = 1; common prefix from the "
                          "implementation)")


def transcript_check(build: Callable[[NoiseSource], StreamingMWEM | MainAlgorithm], claim: PrivacyClaim,
                     neighbour_pairs: Sequence[NeighbourPair], seeds: Sequence[int]) -> CheckResult:
    """Exact loss of sampled transcripts (lower bounds of the sup), zero loss away from tau, post-processing."""
    figures = LossFigures(claim, ())
    leak = 0.0
    broken: list[str] = []
    for pair in neighbour_pairs:
        tau = _tau(pair)
        losses = transcript_losses(build, list(pair.f), list(pair.f_prime), seeds, simple_counter_model)
        for i, loss in enumerate(losses):
            if loss.parts["postprocessing"] == 0.0:
                broken.append(pair.label)
            away = np.delete(np.asarray(loss.per_time), tau - 1)
            leak = max(leak, float(np.abs(away).max(initial=0.0)))
            figures.add(f"{pair.label}, transcript {i}", loss)
    extra = f"max |loss| at t != tau: {leak:.3g}"
    if broken:
        extra += f"; releases are NOT post-processing of the transcript for {broken[0]} (infinite loss)"
    result = figures.result(f"exact loss of {len(seeds)} sampled transcript(s) per pair (lower bounds of the sup)",
                            extra)
    if leak > 1e-9 and result.passed:
        return CheckResult(result.kind, False, result.value, result.bound, result.detail, result.data)
    return result


def _runs(profile: Profile, quick: int, full: int) -> int:
    return quick if profile is Profile.QUICK else full


def _sample(build: Callable[[NoiseSource], Any], stream: Sequence[StreamStep], runs: int, seed: int
            ) -> list[tuple[list[SyntheticDataset], Any]]:
    out = []
    for source in InsecureSeededNoise.independent(seed, runs):
        alg = build(source)
        releases = [alg.step(x) for x in stream]
        out.append((releases, alg))
    return out


def _feature(query: Query, t: int) -> Callable[[Sequence[SyntheticDataset]], float]:
    def feature(transcript: Sequence[SyntheticDataset]) -> float:
        return float(answer(query, transcript[t - 1])[0])
    return feature


def _containing(pair: NeighbourPair, queries: Sequence[Query]) -> Query:
    tau = _tau(pair)
    a = DifferentialDataset(DOMAIN, pair.f[tau - 1])
    b = DifferentialDataset(DOMAIN, pair.f_prime[tau - 1])
    for q in queries:
        if np.any(a.answer(q) != b.answer(q)):
            return q
    return queries[0]


def _calibration(build: Callable[[NoiseSource], StreamingMWEM | MainAlgorithm], samples: Sequence[tuple[Any, Any]],
                 level: float) -> CheckResult:
    """Selection at t = 1 (chi-square against the law) and the measurement noise at t = 1 (KS), Bonferroni."""
    probe = build(InsecureSeededNoise(0))
    first = BASE[0]
    diff = DifferentialDataset(DOMAIN, first)
    if isinstance(probe, MainAlgorithm):
        scores = [float(abs(diff.answer(q)[0])) for q in probe.Q]         # l = 1: e = |q(∇f_1)|
    else:
        h0 = SIZES[0] / DOMAIN.size
        scores = [float(abs(diff.answer(q)[0] - h0 * DOMAIN.size / math.prod(DOMAIN.shape_of(q.columns))))
                  for q in probe.Q]
    law = dict(enumerate(np.exp(probe.selector.log_probabilities(scores)).tolist()))
    chosen: list[int] = []
    noise: list[float] = []
    for _, alg in samples:
        trace = alg.trace[0]
        j = trace.selected[0]
        chosen.append(j)
        if isinstance(alg, MainAlgorithm):
            noise.append(float(trace.C[j][0] - diff.answer(alg.Q[j])[0]))
        else:
            noise.append(float(trace.measurements[0][0] - diff.answer(alg.Q[j])[0]))
    each = split_level(level, 2)
    sel = calibration_finite(chosen, law, each, "selection at t=1")
    scale = 2.0 * probe.k / probe.epsilon
    p, test = marginal_pvalue(NoiseLaw.laplace(scale), noise)
    passed = bool(sel.passed) and p > each
    detail = f"{sel.detail}; measurement noise at t=1 vs Lap({scale:g}): {test}, p = {p:.3g} (level {each:.2g} each)"
    return CheckResult(CheckKind.CALIBRATION, passed, min(float(sel.value or 0.0), p), level, detail,
                       {"selection": dict(sel.data), "noise_p": p})


def _full_run(build: Callable[[NoiseSource], StreamingMWEM | MainAlgorithm], claim: PrivacyClaim,
              quick: int, full: int, *, sup: bool = True) -> Callable[[AuditContext], list[CheckResult]]:
    def run(ctx: AuditContext) -> list[CheckResult]:
        all_pairs = pairs()
        checks: list[CheckResult] = []
        if sup:
            checks.append(exact_sup_check(build, claim, all_pairs, derive_seed(ctx.seed, "prefix")))
        worst = all_pairs[0] if not checks else all_pairs[int(np.argmax(checks[0].data["values"]))]
        n_tr = 5 if ctx.profile is Profile.QUICK else 20
        seeds = [derive_seed(ctx.seed, "transcript", i) for i in range(n_tr)]
        checks.append(transcript_check(build, claim, [worst, *all_pairs[:: max(1, len(all_pairs) // 4)]], seeds))
        runs = _runs(ctx.profile, quick, full)
        level = split_level(ctx.false_alarm, 2)
        ctx.progress("black-box runs")
        traced = lambda noise: _traced(build(noise))  # noqa: E731
        on_f = _sample(traced, list(worst.f), 2 * runs, derive_seed(ctx.seed, "black-box f"))
        on_fp = _sample(traced, list(worst.f_prime), 2 * runs, derive_seed(ctx.seed, "black-box f'"))
        feature = _feature(_containing(worst, Q1), _tau(worst))
        checks.append(black_box([r for r, _ in on_f], [r for r, _ in on_fp], claim, level,
                                learn=histogram_score(feature, bins=16), label=worst.label))
        checks.append(_calibration(build, on_f, level))
        return checks
    return run


def _traced(alg: StreamingMWEM | MainAlgorithm) -> StreamingMWEM | MainAlgorithm:
    alg.trace = []
    return alg


def _mwem(law: SelectionLaw = SelectionLaw.DEF_3_8, total: TotalRule | None = None
          ) -> Callable[[NoiseSource], StreamingMWEM]:
    return lambda noise: StreamingMWEM(DOMAIN, Q1, 1, EPS, noise=noise, total=total or _public(), selection_law=law)


def _main(k: int = 1) -> Callable[[NoiseSource], MainAlgorithm]:
    return lambda noise: MainAlgorithm(DOMAIN, Q1, k, EPS, noise=noise, total=_public())


# --- workloads (003-sec7.2) on a 3-attribute domain --------------------------------------------
DOMAIN3 = Domain(("A", "B", "C"), (2, 2, 3))
W2 = list(all_workloads(DOMAIN3, 2))
_R = generate_records(DOMAIN3, 24, seed=7)
BASE3: tuple[StreamStep, ...] = (
    StreamStep.build(DOMAIN3, _R[:12]),
    StreamStep.build(DOMAIN3, _R[12:20], _R[:3]),
    StreamStep.build(DOMAIN3, _R[20:]),
)


def _workload_run(ctx: AuditContext) -> list[CheckResult]:
    def build(noise: NoiseSource) -> MainAlgorithm:
        return MainAlgorithm(DOMAIN3, W2, 2, EPS, noise=noise, total=TotalRule.measured())

    claim = build(InsecureSeededNoise(0)).claim
    all_pairs = pairs(BASE3, DOMAIN3)
    chosen = all_pairs[:: max(1, len(all_pairs) // (6 if ctx.profile is Profile.QUICK else 40))]
    n_tr = 5 if ctx.profile is Profile.QUICK else 20
    seeds = [derive_seed(ctx.seed, "transcript", i) for i in range(n_tr)]
    return [transcript_check(build, claim, chosen, seeds)]


# --- accuracy of StreamingMWEM (Theorem 5.1 via App. A) ------------------------------------------
ACC_DOMAIN = Domain(("A", "B", "C"), (2, 2, 2))
ACC_Q: list[Query] = [*all_marginal_queries(ACC_DOMAIN, 1), *all_marginal_queries(ACC_DOMAIN, 2)]
ACC_K = 12
ACC_N = 20_000
ACC_T = 3
ACC_BETA = 0.1


def _accuracy_run(ctx: AuditContext) -> list[CheckResult]:
    records = generate_records(ACC_DOMAIN, ACC_N * ACC_T, seed=11)
    stream = [StreamStep.build(ACC_DOMAIN, records[i * ACC_N:(i + 1) * ACC_N]) for i in range(ACC_T)]
    runs = _runs(ctx.profile, 100, 1000)
    errors = []
    for source in InsecureSeededNoise.independent(derive_seed(ctx.seed, "accuracy"), runs):
        alg = StreamingMWEM(ACC_DOMAIN, ACC_Q, ACC_K, EPS, noise=source, total=TotalRule.public(ACC_N))
        prev = np.zeros(len(ACC_Q))
        row = []
        for step in stream:
            g = alg.step(step)
            now = np.array([answer(q, g)[0] for q in ACC_Q])
            diff = DifferentialDataset(ACC_DOMAIN, step)
            row.append(float(np.max(np.abs((now - prev) - np.array([diff.answer(q)[0] for q in ACC_Q])))))
            prev = now
        errors.append(row)
    alpha = streaming_mwem_differential_bound(ACC_N, ACC_DOMAIN.size, ACC_K, EPS, len(ACC_Q), ACC_BETA)
    bound = AccuracyBound("003 App. A (Thm 5.1), per-step max_q |q(∇g_t) - q(∇f_t)|", ACC_BETA,
                          tuple(alpha for _ in range(ACC_T)))
    return [accuracy_check([list(r) for r in errors], np.zeros(ACC_T), bound, ctx.false_alarm)]


def cases() -> list[AuditCase]:
    budget = FAMILY_BUDGETS["tabular"]
    share = budget / 5.0
    out: list[AuditCase] = []
    main_claim = _main()(InsecureSeededNoise(0)).claim
    out.append(AuditCase(
        "Algorithm 3, marginal queries (k=1, Simple counters, eps=1)", "003-alg3", main_claim,
        _full_run(_main(), main_claim, 200, 3000), false_alarm=share, errata=("E-tabular-2", "E-tabular-7")))
    out.append(AuditCase(
        "Algorithm 3, 2-way workloads (k=2, multi-dim Simple counters)", "003-alg3",
        MainAlgorithm(DOMAIN3, W2, 2, EPS, noise=InsecureSeededNoise(0), total=TotalRule.measured()).claim,
        _workload_run, false_alarm=share / 10, errata=("E-tabular-8",)))
    mwem_claim = _mwem()(InsecureSeededNoise(0)).claim
    out.append(AuditCase(
        "StreamingMWEM (k=1, eps=1, public sizes)", "003-alg2", mwem_claim,
        _full_run(_mwem(), mwem_claim, 200, 3000), false_alarm=share, errata=("E-tabular-1", "E-tabular-3")))
    paper = PrivacyClaim.pure(EPS, Neighbour.EVENT, "003-sec5", "the paper's claim")
    out.append(AuditCase(
        "StreamingMWEM, sampling law as printed in L11", "003-alg2", paper,
        lambda ctx: [exact_sup_check(_mwem(SelectionLaw.PRINTED_ALG2_L11), paper, pairs(),
                                     derive_seed(ctx.seed, "prefix"))],
        false_alarm=share / 10, errata=("E-tabular-1",), expect_failure=True))
    out.append(AuditCase(
        "StreamingMWEM, mass |∇f_t| as printed in L20", "003-alg2", paper,
        lambda ctx: [transcript_check(_mwem(total=TotalRule.true_size()), paper, pairs()[:2], [0])],
        false_alarm=share / 10, errata=("E-tabular-3",), expect_failure=True))
    out.append(AuditCase(
        f"StreamingMWEM accuracy, App. A bound (|X|=8, k={ACC_K}, n_t={ACC_N})", "003-thm5.1", mwem_claim,
        _accuracy_run, false_alarm=share, errata=("E-tabular-1",)))
    assert sum(c.false_alarm for c in out) <= budget
    return out


__all__ += ["DOMAIN3", "MarginalQuery"]
