"""Ready-made audit cases: the four checks wired together for common kinds of component.

* :func:`linear_case` — anything whose releases follow a
  :class:`~dpstream.audit.linear_model.LinearReleaseModel` (all counters, Laplace mechanism,
  count-release parts of larger algorithms): exact loss over all given pairs, black-box on
  the worst pair with the model's log-likelihood ratio, calibration of the recovered noise,
  and any number of accuracy bounds.
* :func:`finite_case` — a one-shot selection with an explicit finite output law
  (exponential mechanism, PrivTree subtree choice): exact loss over all pairs, black-box with
  the exact log ratio of the laws, chi-square calibration of the selection frequencies.

Both return an :class:`~dpstream.audit.registry.AuditCase`; the case's ``false_alarm`` is split
equally over its statistical checks (the exact-loss check is deterministic and uses none).
Sample sizes come from an :class:`Effort` per profile. The checks reuse the same runs on f for
black-box, calibration and accuracy (Bonferroni holds under dependence).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from dpstream.audit.accuracy import AccuracyBound, accuracy_check
from dpstream.audit.blackbox import black_box
from dpstream.audit.calibration import calibration_finite, calibration_linear
from dpstream.audit.exact import DEFAULT_ALPHAS, exact_loss_finite, exact_loss_linear
from dpstream.audit.linear_model import LinearReleaseModel
from dpstream.audit.neighbours import NeighbourPair
from dpstream.audit.protocol import Encoder, MechanismFactory, Transcript, derive_seed, flatten, sample_transcripts
from dpstream.audit.registry import AuditCase, AuditContext, CheckResult, Profile
from dpstream.audit.sampler import Sampler
from dpstream.audit.scores import FiniteLLR, ModelLLR, Score, ScoreLearner
from dpstream.audit.search import SearchSpace, Setting, counter_space, search, search_check
from dpstream.audit.vectorised import LinearModelSampler
from dpstream.claims import PrivacyClaim
from dpstream.errors import DPStreamInputError, require_int_at_least

__all__ = ["Effort", "finite_case", "linear_case", "run_linear_checks"]

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class Effort:
    """Runs per input and split for each profile (the black-box check uses 2 x runs per input)."""

    quick: int = 1000
    full: int = 10000

    def __post_init__(self) -> None:
        require_int_at_least("quick", self.quick, 10)
        require_int_at_least("full", self.full, 10)

    def runs(self, profile: Profile) -> int:
        return self.quick if profile is Profile.QUICK else self.full


@dataclass(frozen=True)
class _LinearSpec:
    claim: PrivacyClaim
    factory: MechanismFactory
    model: LinearReleaseModel
    pairs: tuple[NeighbourPair, ...]
    black_box_pair: NeighbourPair | None
    accuracy: Callable[[], Sequence[AccuracyBound]]
    truth: Callable[[FloatArray], FloatArray] | None
    effort: Effort
    encode: Encoder
    input_vector: Encoder
    extra_scores: tuple[tuple[str, Score | ScoreLearner, bool], ...] = field(default=())
    independence: bool = True
    informational: Callable[[Sequence[Transcript], FloatArray], Sequence[CheckResult]] | None = None
    alphas: tuple[float, ...] = DEFAULT_ALPHAS
    search: tuple[Callable[[], Sampler], Callable[[Profile], SearchSpace], int] | None = None


def run_linear_checks(spec: _LinearSpec, ctx: AuditContext) -> list[CheckResult]:
    """The checks of :func:`linear_case` (exposed for families that compose their own cases)."""
    checks: list[CheckResult] = [
        exact_loss_linear(spec.model, spec.pairs, spec.claim, input_vector=spec.input_vector, alphas=spec.alphas)
    ]
    pair = spec.black_box_pair or _worst_pair(spec.pairs, checks[0])
    bounds = list(spec.accuracy())
    n_stat = 2 + len(spec.extra_scores) + len(bounds) + (spec.search is not None)
    level = ctx.false_alarm / n_stat
    if spec.search is not None:
        ctx.progress("witness search")
        checks.append(_search(spec, ctx, level))
    runs = spec.effort.runs(ctx.profile)
    ctx.progress(f"sampling {2 * runs} runs on f and on f'")
    on_f = sample_transcripts(spec.factory, pair.f, 2 * runs, derive_seed(ctx.seed, "f"))
    on_fp = sample_transcripts(spec.factory, pair.f_prime, 2 * runs, derive_seed(ctx.seed, "f'"))
    fv, fpv = spec.input_vector(pair.f), spec.input_vector(pair.f_prime)
    ctx.progress("black-box")
    checks.append(black_box(on_f, on_fp, spec.claim, level, score=ModelLLR(spec.model, fv, fpv, spec.encode),
                            label=f"{pair.label}, model LLR"))
    for name, scorer, learned in spec.extra_scores:
        if learned:
            checks.append(black_box(on_f, on_fp, spec.claim, level, learn=scorer,  # type: ignore[arg-type]
                                    label=f"{pair.label}, {name}"))
        else:
            checks.append(black_box(on_f, on_fp, spec.claim, level, score=scorer,  # type: ignore[arg-type]
                                    label=f"{pair.label}, {name}"))
    ctx.progress("calibration")
    checks.append(calibration_linear(spec.model, on_f, fv, level, encode=spec.encode,
                                     independence=spec.independence))
    if bounds:
        ctx.progress("accuracy")
        truth = spec.truth(fv) if spec.truth is not None else spec.model.mean(fv)
        for bound in bounds:
            checks.append(accuracy_check(on_f, truth, bound, level, encode=spec.encode))
    if spec.informational is not None:
        truth = spec.truth(fv) if spec.truth is not None else spec.model.mean(fv)
        for check in spec.informational(on_f, truth):
            if check.passed is not None:
                raise DPStreamInputError("informational", "checks must have passed=None", check)
            checks.append(check)
    return checks


def _search(spec: _LinearSpec, ctx: AuditContext, level: float) -> CheckResult:
    """The model-free witness search on the case's own parameters (vectorised sampler, profile budget)."""
    from dpstream.audit.profiles import profile_spec

    assert spec.search is not None
    make, space, horizon = spec.search
    prof = profile_spec(ctx.profile)
    result = search([Setting(f"T={horizon}", make(), spec.claim, horizon)], space(ctx.profile), prof.registered,
                    level=level, seed=derive_seed(ctx.seed, "witness search"), target_excess=prof.target_excess,
                    executor=ctx.executor, progress=ctx.progress)
    return search_check(result)


def _worst_pair(pairs: Sequence[NeighbourPair], exact: CheckResult) -> NeighbourPair:
    """The pair with the largest exact loss (None in the data encodes an infinite loss)."""
    values = exact.data.get("values", [])
    if len(values) != len(pairs):
        return pairs[0]
    return pairs[int(np.argmax([np.inf if v is None else float(v) for v in values]))]


def _most_distinguishable(
    pairs: Sequence[NeighbourPair], laws: Sequence[tuple[str, Mapping[Any, float], Mapping[Any, float]]]
) -> NeighbourPair:
    """The pair whose output laws are furthest apart in total variation (the best chance for a sampled test;
    the pair with the largest sup loss often puts it on an outcome of negligible probability)."""
    def tv(p: Mapping[Any, float], q: Mapping[Any, float]) -> float:
        return 0.5 * sum(abs(p.get(o, 0.0) - q.get(o, 0.0)) for o in set(p) | set(q))

    return pairs[int(np.argmax([tv(p, q) for _, p, q in laws]))]


def linear_case(
    component: str,
    anchor: str,
    claim: PrivacyClaim,
    factory: MechanismFactory,
    model: LinearReleaseModel,
    pairs: Sequence[NeighbourPair],
    *,
    false_alarm: float,
    accuracy: Callable[[], Sequence[AccuracyBound]] | Sequence[AccuracyBound] = (),
    truth: Callable[[FloatArray], FloatArray] | None = None,
    black_box_pair: NeighbourPair | None = None,
    effort: Effort = Effort(),
    encode: Encoder = flatten,
    input_vector: Encoder = flatten,
    extra_scores: Sequence[tuple[str, Score | ScoreLearner, bool]] = (),
    independence: bool = True,
    informational: Callable[[Sequence[Transcript], FloatArray], Sequence[CheckResult]] | None = None,
    search: bool = False,
    search_space: Callable[[Profile], SearchSpace] | None = None,
    errata: tuple[str, ...] = (),
    expect_failure: bool = False,
) -> AuditCase:
    """An audit case for a component following a linear release model (see the module docstring).

    ``search``: the case also runs the model-free witness search (:mod:`dpstream.audit.search`) over
    ``search_space(profile)`` (default: the counter space with the profile's registered families) on the model's
    horizon, with the vectorised sampler of ``model`` (:class:`~dpstream.audit.vectorised.LinearModelSampler`;
    the catalog's models equal the line-by-line components: ``tests/audit/test_vectorised.py``).

    ``pairs``: the neighbouring inputs for the exact check (all of them are evaluated); the
    black-box check uses ``black_box_pair`` or the pair with the largest exact loss.
    ``truth(f)``: the exact answer the releases estimate (default: the model's mean W S f).
    ``extra_scores``: additional black-box scores ``(name, score_or_learner, is_learner)``, e.g.
    a model-free :func:`~dpstream.audit.scores.histogram_score`.
    ``informational(runs_on_f, truth)``: extra checks with ``passed=None`` (no level used), e.g. the
    constant implied by a bound stated only up to a constant.
    """
    if not pairs:
        raise DPStreamInputError("pairs", "must contain at least one neighbouring pair", pairs)
    bound_fn: Callable[[], Sequence[AccuracyBound]] = accuracy if callable(accuracy) else (lambda: tuple(accuracy))
    searching = None
    if search:
        horizon = len(pairs[0].f)
        searching = (lambda: LinearModelSampler(model), search_space or _registered_counter_space, horizon)
    spec = _LinearSpec(claim, factory, model, tuple(pairs), black_box_pair, bound_fn, truth, effort, encode,
                       input_vector, tuple(extra_scores), independence, informational, search=searching)
    return AuditCase(component=component, anchor=anchor, claim=claim,
                     run=lambda ctx: run_linear_checks(spec, ctx), false_alarm=false_alarm,
                     errata=errata, expect_failure=expect_failure)


def _registered_counter_space(profile: Profile) -> SearchSpace:
    from dpstream.audit.profiles import profile_spec

    return counter_space(families=profile_spec(profile).registered_families)


def finite_case(
    component: str,
    anchor: str,
    claim: PrivacyClaim,
    factory: MechanismFactory,
    law: Callable[[Sequence[Any]], Mapping[Any, float]],
    pairs: Sequence[NeighbourPair],
    *,
    false_alarm: float,
    key: Callable[[Transcript], Hashable] = lambda t: t[-1],
    black_box_pair: NeighbourPair | None = None,
    effort: Effort = Effort(),
    extra: Callable[[Sequence[Transcript], NeighbourPair, float], Sequence[CheckResult]] | None = None,
    extra_checks: int = 0,
    errata: tuple[str, ...] = (),
    expect_failure: bool = False,
) -> AuditCase:
    """An audit case for a component with an explicit finite output law ``law(inputs)``.

    The black-box check uses ``black_box_pair`` or the pair whose laws are furthest apart in total
    variation. ``key`` maps a transcript to the outcome (default: the last release). ``extra(runs_on_f, pair,
    level)`` may add ``extra_checks`` more statistical checks (e.g. an accuracy statement).
    """
    if not pairs:
        raise DPStreamInputError("pairs", "must contain at least one neighbouring pair", pairs)

    def run(ctx: AuditContext) -> list[CheckResult]:
        laws = [(p.label, law(p.f), law(p.f_prime)) for p in pairs]
        checks: list[CheckResult] = [exact_loss_finite(laws, claim)]
        pair = black_box_pair or _most_distinguishable(pairs, laws)
        level = ctx.false_alarm / (2 + extra_checks)
        runs = effort.runs(ctx.profile)
        on_f = sample_transcripts(factory, pair.f, 2 * runs, derive_seed(ctx.seed, "f"))
        on_fp = sample_transcripts(factory, pair.f_prime, 2 * runs, derive_seed(ctx.seed, "f'"))
        p, q = law(pair.f), law(pair.f_prime)
        checks.append(black_box(on_f, on_fp, claim, level, score=FiniteLLR(p, q, key),
                                label=f"{pair.label}, exact LLR"))
        checks.append(calibration_finite([key(t) for t in on_f], p, level, label=pair.label))
        if extra is not None:
            added = list(extra(on_f, pair, level))
            if sum(1 for c in added if c.passed is not None) > extra_checks:
                # the level was split over 2 + extra_checks checks: more would exceed the case's share
                raise DPStreamInputError("extra_checks", f"extra returned more than {extra_checks} pass/fail checks",
                                         [c.kind.value for c in added])
            checks.extend(added)
        return checks

    return AuditCase(component=component, anchor=anchor, claim=claim, run=run, false_alarm=false_alarm,
                     errata=errata, expect_failure=expect_failure)
