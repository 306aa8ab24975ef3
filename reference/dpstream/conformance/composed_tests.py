"""The composed tests: a neighbouring pair whose composed loss exceeds the claim, tested on the program's runs.

:mod:`dpstream.conformance.composed` composes one pair's loss over the draws it moves and builds its statistic;
this module picks the pairs (:func:`composed_pairs` on a program's reported draws, :func:`reference_pairs` on the
reference's own) and tests them: pure DP, the pair's pre-registered composed event counted on fresh own-mode runs
(:func:`event_test`); zCDP, the Renyi divergence of the pair's composed ratio on such runs (:func:`renyi_pair_test`),
or, for a pair without a composed ratio, the witness search with its composed statistics as features
(:func:`composed_search`); the first two run until their time or their cap of runs (:func:`_pair_runs`), the
search is sized by the program's own speed (:func:`composed_budget`);
:func:`pair_test` chooses between them. Transcript
mode runs them where the program's transcript implies more than the claim; the statistical mode beside its search on
both profiles, on the reference's design pair (docs/conformance.md, "Transcript mode", step 5, and "Statistical
checks").
"""

from __future__ import annotations

import copy
import math
import re
import time
from collections.abc import Callable, Hashable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, replace
from functools import partial
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import numpy as np

from dpstream.audit.hypercube.reach import LawPair
from dpstream.audit.profiles import profile_spec
from dpstream.audit.registry import Profile
from dpstream.audit.renyi import RenyiTest, renyi_test
from dpstream.audit.sampler import run_trials, run_trials_until, trial_executor
from dpstream.audit.search import SearchBudget, SearchResult, SearchSpace, Setting, detectable_excess, search
from dpstream.audit.selected_event import SELECTION, HeldOutEvent, SelectedEventTest, selected_event_test
from dpstream.audit.stats import eps_lower_bound
from dpstream.catalog import Entry
from dpstream.claims import Measure, PrivacyClaim
from dpstream.conformance.composed import (
    Composed,
    ComposedRatio,
    Influence,
    carried_over,
    compose_pair,
    influence,
)
from dpstream.conformance.entry_sampler import Run, entry_run
from dpstream.conformance.held_equal import DoorRun, door_run, held_equal
from dpstream.conformance.replays import answered, completed, reference_features, seeded_tape
from dpstream.conformance.statistical import (
    RUN_SHARE,
    ProtocolSampler,
    StatisticalPlan,
    horizon_of,
    setting_label,
)
from dpstream.interrupts import stop_pool
from dpstream.noise import ADDITIVE_KINDS, DrawKind, derived_seed
from dpstream.tape import Draw

if TYPE_CHECKING:
    from dpstream.conformance.runner import ConformConfig

__all__ = ["AIMED_BUDGET", "AIMED_FLOOR", "COMPOSED_HOLDOUT", "COMPOSED_PAIRS", "COMPOSED_SECONDS", "EVENT_PROBE",
           "EVENT_TOLERANCE", "SELECTION_PATHS", "EventTest", "aimed_budget", "certifiable", "composed_budget",
           "composed_pairs", "composed_search", "earliest", "event_ratio", "event_sides", "event_test",
           "expected_margin", "law_pair_test", "own_speed", "pair_holdout", "pair_test", "reference_pairs",
           "renyi_pair_test"]


AIMED_BUDGET = {Profile.QUICK: SearchBudget(fit=1000, select=1000, holdout=20_000, carried=4, tail=4),
                Profile.THOROUGH: SearchBudget(fit=5000, select=5000, holdout=200_000, carried=8, tail=4)}
"""The aimed search's budget (runs of the program in own mode) for an entry of cost 1; an entry of cost c gets it
divided by c (floors :data:`AIMED_FLOOR`), as the statistical mode does."""


AIMED_FLOOR = SearchBudget(fit=300, select=300, holdout=4000, carried=4, tail=4)


SELECTION_PATHS = 8
"""Paths along which a pair is composed where the run selects (exponential mechanisms): the reported run, then the
same run with one selection's index changed to another candidate, earliest selection first, at most this many in
all; a pair keeps the path of its largest implied loss. A selection's log-ratio differs from index to index: the
candidate a run rarely takes may be where the selection spends most of its share, and a run's own index seldom
is (the path is where the test aims; its certificate still comes from held-out runs)."""


def composed_pairs(plan: StatisticalPlan, si: int, reported: Sequence[Draw]) -> list[Composed]:
    """The design's pairs of setting ``si`` with their composed loss (:mod:`dpstream.conformance.composed`), the
    largest implied loss first. The influences are taken at the program's reported draws on the setting's first
    input (its decisions), or at a seeded run of the reference where the reference cannot run on them; where that
    run selects, along the paths of :data:`SELECTION_PATHS` too, each pair keeping its largest."""
    e, params, space = plan.entry, plan.settings[si], plan.spaces[si]
    assert e.codec is not None
    T = horizon_of(e, params)
    f = next(iter(space.families.values()))(T)
    thresholds: dict[Hashable, float | None] = {}  # the decisions' thresholds on f, shared by the pairs and paths
    along = partial(_composed_along, plan, si, f, reference_features(e, params), _linear_rows(e, params, T),
                    entry_run(e, params), _feature_steps(e, params, T), thresholds)
    best: dict[str, Composed] = {}
    for i, path in enumerate(_selection_paths(reported)):
        for c in along(path if i == 0 else _completed_path(e, params, f, path)):
            kept = best.get(c.label)
            if kept is None or c.implied > kept.implied + 1e-3 * c.claim:  # near ties: the earlier, likelier path
                best[c.label] = c
    return sorted(best.values(), key=lambda c: (-round(c.implied / c.claim, 6), earliest(c), -c.event_probability))


def _completed_path(e: Entry, params: Mapping[str, Any], f: Sequence[Any], path: list[Draw]) -> list[Draw]:
    """A path with another choice as the reference runs it on f: the draws it asks for after that choice (another
    counter's, at other sites) seeded where the path has none; the path's own draw (the program's parameters) where
    the reference took its value."""
    released, asked = answered(e, params, f, path, seeded_noise=True, keep_choices=True, forced=True)
    if released is None:
        return path
    mine = {d.site: d for d in path}
    carried = carried_over(mine, {d.site: (d.kind, d.params) for d in asked}, asked)  # a new site: the program's
    out = []
    for d in asked:
        m = mine.get(d.site)
        if m is not None and m.kind is d.kind and m.value == d.value:
            out.append(m)
        elif m is None and d.site in carried:
            out.append(carried[d.site])
        else:
            out.append(d)
    return out


def _selection_paths(reported: Sequence[Draw]) -> list[list[Draw]]:
    """The reported run, then (:data:`SELECTION_PATHS` in all) the likeliest paths through one rare choice: one
    selection at another index than its most likely (its highest score), every other at its most likely; then the
    reported run with one selection's index changed and every later one at its most likely."""
    paths = [list(reported)]
    chosen = [i for i, d in enumerate(reported) if d.kind is DrawKind.EXPONENTIAL_MECHANISM]
    mode = {i: int(np.argmax(reported[i].params["scores"])) for i in chosen}

    def path(i: int, j: int, others_at_mode: bool) -> list[Draw]:
        return [Draw(d.site, d.kind, d.params, j if k == i else mode[k])
                if k in mode and (k >= i or others_at_mode) else d for k, d in enumerate(reported)]

    for others_at_mode in (True, False):
        for i in chosen:
            for j in range(len(reported[i].params["scores"])):
                if j == (mode[i] if others_at_mode else int(reported[i].value)):
                    continue
                candidate = path(i, j, others_at_mode)
                if candidate not in paths:
                    if len(paths) >= SELECTION_PATHS:
                        return paths
                    paths.append(candidate)
    return paths


def _composed_along(plan: StatisticalPlan, si: int, f: Sequence[Any], features: Any, rows: list[bool] | None,
                    run: Run, steps: list[int] | None, thresholds: dict[Hashable, float | None],
                    reported: Sequence[Draw]) -> list[Composed]:
    """:func:`composed_pairs` along one reported run (``features``, ``rows`` and ``run``: the setting's reference
    features, the rows the influence reads, the reference as a run; ``thresholds``: the decisions' thresholds on f,
    :func:`dpstream.conformance.composed.decisions_moved`)."""
    e, params, space = plan.entry, plan.settings[si], plan.spaces[si]
    tape = list(reported)
    inf = influence(tape, f, features, rows)
    if inf is None or not inf.draws:
        seeded = seeded_tape(e, params, f)
        if seeded is None:
            return []
        tape = seeded
        inf = influence(tape, f, features, rows)
    if inf is None:
        return []
    reference = _reference_params(e, params, f, tape)
    by_site = {d.site: d for d in reported}
    base = door_run(run, f, tape) if any(d.kind is DrawKind.EXPONENTIAL_MECHANISM for d in tape) else None
    out = []
    for label, g in space.neighbours(list(f)):
        c = compose_pair(e.claim(params), label, f, g, tape, inf, features, by_site, reference,
                         partial(completed, e, params), thresholds, steps)
        if c is not None:
            out.append(_with_selections(c, e.claim(params), run, base, by_site, inf, steps, features, f, tape))
    return out


def _on_path(ratio: ComposedRatio, c: Composed, inf: Influence, steps: list[int], features: Any, f: Sequence[Any],
             tape: Sequence[Draw]) -> ComposedRatio:
    """The pair's ratio read from the features of the steps up to the first its draws move, and held only on the
    runs whose features there lie on the path's (:meth:`ComposedRatio.on_path`); unchanged where the path's own run
    with every additive draw moved a quarter scale up, or down, leaves the path (a draw clamped on one side leaves it
    only that way) or where those features do not identify the pair's draws."""
    sites = {m.site for m in c.moves}
    moved = [j for j, d in enumerate(inf.draws) if d.site in sites]
    read = np.asarray(inf.rows if inf.rows is not None else [True] * inf.base.size)
    first = min((steps[r] for r in np.flatnonzero(np.any(np.abs(inf.matrix[:, moved]) > 1e-12, axis=1))), default=0)
    mask = read & (np.asarray(steps) <= first)
    near = influence(tape, f, features, [bool(x) for x in mask])  # the draws linear on those features
    if near is None or not sites <= {d.site for d in near.draws}:
        return ratio
    rows = [int(r) for r in np.flatnonzero(mask)]
    A = near.matrix[rows]
    P = np.asarray(np.linalg.pinv(A), dtype=np.float64)
    on_path = ratio.on_path(rows, np.eye(len(rows)) - A @ P,
                            P[[j for j, d in enumerate(near.draws) if d.site in sites]])
    shifted = [F for by in (0.25, -0.25) if (F := features(f, _shifted(tape, by))) is not None]
    return on_path if any(not bool(on_path.off_path(F[None, :])[0]) for F in shifted) else ratio


def _shifted(tape: Sequence[Draw], by: float) -> list[Draw]:
    """The tape with every additive draw moved by ``by`` scales (one unit, signed, for the discrete kinds)."""
    return [Draw(d.site, d.kind, d.params, d.value + (by * float(d.params["scale"]) if d.kind is DrawKind.LAPLACE
                                                      else int(math.copysign(1, by))))
            if d.kind in ADDITIVE_KINDS else d for d in tape]


def _feature_steps(e: Entry, params: Mapping[str, Any], T: int) -> list[int] | None:
    """The step of each feature (its name's ``t=<t>``), or None where a name has none."""
    design = e.statistical.design if e.statistical is not None else None
    if design is None:
        return None
    found = [re.match(r"t=(\d+) ", name) for name in design.features(e.params.validate(params), T).names]
    return None if any(m is None for m in found) else [int(m.group(1)) for m in found if m is not None]


def _linear_rows(e: Entry, params: Mapping[str, Any], T: int) -> list[bool] | None:
    """The features the composition reads (``SearchDesign.linear``), or None for all."""
    design = e.statistical.design if e.statistical is not None else None
    if design is None or design.linear is None:
        return None
    return [design.linear in name for name in design.features(e.params.validate(params), T).names]


def _with_selections(c: Composed, claim: PrivacyClaim, run: Run, base: DoorRun | None,
                     reported: Mapping[str, Draw], inf: Influence, steps: list[int] | None,
                     features: Any, f: Sequence[Any], tape: Sequence[Draw]) -> Composed:
    """The pair's composition with the log-ratio of the selections its run took (held equal at the noise door along
    ``base``, None where the run selects nothing; unchanged where the pair cannot be held). Where every draw of the
    path selects, its ratio reads the features of the steps up to the first its draws move and holds only on the
    runs whose features there lie on the path's (:meth:`ComposedRatio.on_path`: the selections up to that step
    taken as on the path), so that its events carry those selections' log-ratio too."""
    if base is None:
        return c
    h = held_equal(run, claim, c.label, base, c.g, reported)
    if h.diverged is not None:
        return c
    ratio = c.ratio
    if ratio is not None and steps is not None and h.selections(True) > 0:
        ratio = _on_path(ratio, c, inf, steps, features, f, tape)
    return replace(c, selections=(h.selections(False), h.selections(True)), ratio=ratio)


def earliest(c: Composed) -> int:
    """The tape position of the pair's first decision (none: 0). Among pairs of equal loss the one whose decisions
    come first is tested: a later decision's threshold depends on the releases before it, which vary from run to
    run, so its outcome's ratio is the decision's whole share only on some runs."""
    return min((d.index for d in c.decisions), default=0)


def event_sides(pair: Composed) -> list[tuple[bool, float]]:
    """The composed event's sides (f favoured or not, and the threshold of the pair's log-likelihood ratio): the
    ratio at its extreme, both ways; on the branch of its largest decision, the side its outcome favours (its term,
    then the linear extreme). |threshold| is the event's log-ratio; none without a composed statistic."""
    if pair.branch is not None:
        extreme = pair.branch.inner.extreme if pair.branch.inner is not None else 0.0
        favoured = pair.branch.outcome < 0
        return [(favoured, pair.branch.outcome + (-extreme if favoured else extreme))]
    if pair.ratio is None:
        return []
    return [(True, -pair.ratio.extreme), (False, pair.ratio.extreme)]


def event_ratio(c: Composed) -> float:
    """The log-ratio of the pair's composed event: its largest |threshold| (:func:`event_sides`; 0 without one),
    plus the log-ratio of the selections on its path where the statistic holds on that path only
    (:meth:`ComposedRatio.on_path`). Where it is not above the claim (pure DP) no run count certifies with that
    event."""
    on_path = c.branch is None and c.ratio is not None and bool(c.ratio.path_rows)
    return max((abs(t) for _, t in event_sides(c)), default=0.0) + (c.selections[1] if on_path else 0.0)


EVENT_TOLERANCE = 1e-6
"""Relative margin by which a composed event's log-ratio must exceed the claim (:func:`certifiable`): a decision's
threshold is found by bisection (to about 1e-8 of its scale), so a correct program's event can compose a hair above
it."""


def certifiable(c: Composed) -> bool:
    """Whether the pair's composed test can certify at all: its implied loss exceeds the claim, it has a composed
    statistic, and under pure DP its event's log-ratio (:func:`event_ratio`) exceeds the claim (a branch whose
    outcome and linear draws are alternatives, each within the claim, has no such event)."""
    return c.exceeds and (c.ratio is not None or c.branch is not None) and (
        c.measure is not Measure.PURE_DP or event_ratio(c) > c.claim * (1 + EVENT_TOLERANCE))


def expected_margin(c: Composed, runs: int, level: float) -> float:
    """How far above the claim (a share of it) the pair's composed event (:func:`event_sides`) would certify on
    ``runs`` runs per input at ``level``, were its ratio its threshold's and its probability
    :attr:`Composed.event_probability`: its log-ratio's excess less the smallest excess those runs certify
    (``detectable_excess``), rounded to 1 % of the claim; negative where it cannot certify. It ranks the pairs (and
    settings) the composed tests try: an event that lies in a far tail (a split decision deep in its Laplace tail
    when the claim is large) certifies less than one implying as much whose event is frequent. Under
    zCDP (the witness search, no fixed event): the implied share of the claim less 1."""
    if c.measure is not Measure.PURE_DP:
        return round(c.implied / c.claim - 1, 6)
    ratio = event_ratio(c)
    p0 = c.event_probability * math.exp(-ratio)
    return round((ratio - c.claim - detectable_excess(runs, p0, level, c.claim)) / c.claim, 2)


def _reference_params(e: Entry, params: Mapping[str, Any], f: Sequence[Any], draws: Sequence[Draw]
                      ) -> dict[str, tuple[DrawKind, dict[str, Any]]]:
    """The kind and parameters the reference asks for at each site when run on f with ``draws`` (lenient replay,
    the selections' indices kept: the same path)."""
    asked = answered(e, params, f, draws, seeded_noise=True, keep_choices=True, forced=True)[1]
    return {d.site: (d.kind, dict(d.params)) for d in asked}


def reference_pairs(plan: StatisticalPlan, share: float) -> tuple[int, Composed] | None:
    """The design pair (and its setting) whose loss composed over the reference's own draws (a seeded run on the
    setting's first input) is the largest share of the claim, if that share is at least ``share`` and the pair has a
    composed statistic: where a leak of factor c > 1/share shows through what the pair moves (pure DP: its
    composed event, :func:`event_test`; zCDP: the search with its composed log-likelihood ratio,
    :func:`composed_search`)."""
    e = plan.entry
    assert e.codec is not None
    best: tuple[int, Composed] | None = None
    for si, (params, space) in enumerate(zip(plan.settings, plan.spaces, strict=True)):
        tape = seeded_tape(e, params, next(iter(space.families.values()))(horizon_of(e, params)))
        if tape is None:
            continue
        for c in composed_pairs(plan, si, tape):
            if (c.ratio is not None or c.branch is not None) and c.reached >= share * c.claim and (
                    best is None or _rank(c) < _rank(best[1])):
                best = (si, c)
    return best


def _rank(c: Composed) -> tuple[float, int, float]:
    """Larger share of the claim first, then the earlier first decision (:func:`earliest`), then the more frequent
    composed event."""
    return -round(c.reached / c.claim, 6), earliest(c), -c.event_probability


def composed_search(config: ConformConfig, plan: StatisticalPlan, si: int, chosen: Sequence[Composed], level: float,
                    bulk: bool, profile: Profile, seed: int, speed: float, seconds: float | None = None,
                    holdout: int | None = None) -> SearchResult:
    """The witness search on the pairs whose composed loss exceeds the claim, with each pair's composed
    log-likelihood ratio as the first features (module docstring, step 5), its budget :func:`composed_budget` at
    the program's ``speed`` (runs per second of its transcript runs) within ``seconds``, at most
    :data:`COMPOSED_SECONDS` (it begins no run by a deadline and learns its events on every held-out run: the outside
    Rust 002-alg2 with a counter released exactly, whose ratio is infinite, took 145 s of transcript mode's 120 s
    when it was given the pair tests' 90 s), at most ``holdout`` held-out runs per input (default
    :data:`COMPOSED_HOLDOUT`)."""
    e, params, space = plan.entry, plan.settings[si], plan.spaces[si]
    T = horizon_of(e, params)
    f = next(iter(space.families.values()))(T)
    ratios = [r for c in chosen for r in (c.ratio, c.branch) if r is not None]
    pairs = [(c.label, c.g) for c in chosen]
    aimed = SearchSpace(families={"aimed": lambda T: f}, neighbours=lambda x: list(pairs),
                        features=partial(_with_ratios, tuple(ratios), space.features),
                        feature_names=lambda k: [name for c in chosen for name in (
                            [f"composed log-likelihood ratio of {c.label!r}"] if c.ratio is not None else [])
                            + ([f"{c.label!r} on the branch of {c.decisions[0].site!r}"] if c.branch is not None
                               else [])] + list(space.feature_names(k)),
                        threshold_columns=lambda k: len(ratios) + space.threshold_columns(k),
                        statistics=space.statistics)
    sampler = ProtocolSampler(config.command, e.anchor, params, timeout=config.timeout, bulk=bulk)
    setting = Setting(setting_label(params), sampler, e.claim(params), T, aimed)
    began = time.perf_counter()
    with trial_executor(config.jobs, config.scheduler) as executor:
        own = own_speed(sampler, [f], seed, executor, config.jobs)[0]
        allowed = COMPOSED_SECONDS[profile] if seconds is None else min(seconds, COMPOSED_SECONDS[profile])
        left = allowed - (time.perf_counter() - began)
        # runs planned on RUN_SHARE of it, as the statistical search plans them: the rest is the search's own work
        budget = composed_budget(profile, e, max(speed, own), 1 + len(pairs), RUN_SHARE * left, holdout)
        return search([setting], aimed, budget, level=level, seed=seed,
                      target_excess=profile_spec(profile).target_excess, executor=executor)


def own_speed(sampler: ProtocolSampler, inputs: Sequence[Sequence[Any]], seed: int, executor: Any, workers: int = 1
              ) -> tuple[float, list[np.ndarray[Any, Any]]]:
    """Runs per second of the program in own mode on ``workers`` workers (its transcript runs, which also report
    every draw, are slower), and the timed runs (fresh runs of the program on each of ``inputs``): what the
    composed tests plan their held-out runs with. One chunk of :data:`EVENT_PROBE_WARM` runs per worker starts the
    workers and their programs, then one of :data:`EVENT_PROBE` per worker on each input is timed (the held-out runs
    fill every worker; a single probe chunk would time one). The number of timed runs is fixed before any run, so a
    test may keep them as its first held-out runs: the rest of its size then depends on their time only, never on
    what they release."""
    probe = copy.copy(sampler)
    parallel = max(1, workers) if executor is not None else 1
    probe.chunk = EVENT_PROBE_WARM
    run_trials(probe, inputs[0], EVENT_PROBE_WARM * parallel, derived_seed(seed, "warm"), executor)
    probe.chunk = EVENT_PROBE
    began = time.perf_counter()
    timed = [run_trials(probe, x, EVENT_PROBE * parallel, derived_seed(seed, "probe", i), executor)
             for i, x in enumerate(inputs)]
    return len(inputs) * EVENT_PROBE * parallel / max(time.perf_counter() - began, 1e-6), timed


@dataclass(frozen=True)
class EventTest(HeldOutEvent):
    """The pre-registered test of one pair's composed event (:func:`event_test`): the event, fixed before any run,
    counted on fresh runs of the program on f and on f'."""

    def detail(self) -> str:
        side = "f" if self.favours_f else "f'"
        return (f"the composed event of the pair {self.pair!r}, {self.event} ({side} favoured), fixed before the runs: "
                f"{self.favoured}/{self.runs} vs {self.other}/{self.runs}, eps lower bound {self.eps_lower_bound:.4g} "
                f"vs claimed {self.claimed:.4g} (level {self.level:.2g})")

    def to_data(self) -> dict[str, Any]:
        return {"verdict": self.verdict, "pair": self.pair, "event": self.event, "favours_f": self.favours_f,
                "counts": {"favoured": self.favoured, "other": self.other, "runs": self.runs},
                "eps_lower_bound": self.eps_lower_bound, "claimed_eps": self.claimed, "level": self.level,
                "detectable_excess": self.detectable_excess, "trials": 2 * self.runs}


LOOKS = {Profile.QUICK: (0.4, 0.6, 0.8), Profile.THOROUGH: (0.5,)}
"""Shares of a pair test's window (from its first fresh run to its planned end) after which it looks at the runs so
far: a leak its runs certify early ends it there (transcript mode's 60 s at quick; the outside JavaScript 002-alg2
with its variance divided by 2.25 was certified at the end of its 96 s plan, with room to spare: rho >= 0.567
against 0.5 where 0.071 was the smallest excess it could show)."""
LOOK_LEVEL = {Profile.QUICK: 0.5, Profile.THOROUGH: 0.2}
"""The share of a pair test's false-alarm level its early looks (:data:`LOOKS`) spend, equally; the last test, on
every run, gets the rest. A union bound over the looks keeps the whole test's false-alarm probability within its
level, however the looks end it: each look's runs are fixed by time, never by what they release. The thorough
profile is for power at the edge (000-alg3's `scale/1.5` was certified there by 0.00002): its one look spends a
fifth, so its last test loses about 0.001 of an eps bound to it where the quick profile's loses 0.002-0.005."""


class _Decided(Protocol):
    """What a pair's test returns (:class:`EventTest`, ``RenyiTest``, ``SelectedEventTest``): its verdict."""

    @property
    def verdict(self) -> str: ...


T = TypeVar("T", bound=_Decided)


def _pair_runs(config: ConformConfig, plan: StatisticalPlan, si: int, g: Sequence[Any], statistic: Any, bulk: bool,
               profile: Profile, seed: int, seconds: float | None, holdout: int | None,
               decide: Callable[[int, np.ndarray[Any, Any], np.ndarray[Any, Any], float], T | None], level: float,
               f: Sequence[Any] | None = None, deadline: float = math.inf) -> T | None:
    """A pair's test (``decide(runs per input, statistic on f, statistic on f', level)``) on fresh own-mode runs of
    the program on f (default: the setting's first family's stream) and on f' = ``g``: the timed runs of
    :func:`own_speed` first, then fresh ones, at most ``holdout`` per input (default :data:`COMPOSED_HOLDOUT`),
    round by round until ``seconds`` after the start (default :data:`COMPOSED_SECONDS`) or ``deadline``
    (``time.perf_counter()``), whichever comes first, at the pace of the rounds so far
    (:func:`~dpstream.audit.sampler.run_trials_until`): how many runs there are depends on the time they take,
    never on what they release. Until the evening of 2026-11-29 their number was fixed from the speed measured
    before them (:func:`pair_holdout` at the faster of ``speed`` and :func:`own_speed`'s): on a machine busy while
    it was measured and quiet after, the outside 002-alg2's statistical check planned 65 s of 1000 runs per second,
    ran at 1933 and ended at 71 s of its 120 s, short of the certificate it gets on a quiet machine. The test looks
    at the runs so far at :data:`LOOKS` of its window, each look at its share of :data:`LOOK_LEVEL` of ``level``,
    and ends at the first that certifies; otherwise the test of every run at the rest of ``level``."""
    e, params, space = plan.entry, plan.settings[si], plan.spaces[si]
    if f is None:
        f = next(iter(space.families.values()))(horizon_of(e, params))
    sampler = ProtocolSampler(config.command, e.anchor, params, timeout=config.timeout, bulk=bulk)
    began = time.perf_counter()
    with trial_executor(config.jobs, config.scheduler) as executor:
        timed = own_speed(sampler, [f, g], seed, executor, config.jobs)[1]
        n = max(COMPOSED_HOLDOUT[profile] if holdout is None else holdout, len(timed[0]))  # per input, at most
        end = min(deadline, began + (COMPOSED_SECONDS[profile] if seconds is None else seconds))
        assert len(timed[0]) == len(timed[1])

        def joined(rest: Sequence[np.ndarray[Any, Any]]) -> list[np.ndarray[Any, Any]]:
            return [np.concatenate([R, extra]) if len(extra) else R for R, extra in zip(timed, rest, strict=True)]

        early: list[T] = []  # the look that certified, if one did

        def look(rest: list[np.ndarray[Any, Any]]) -> bool:
            both = joined(rest)
            got = decide(len(both[0]), statistic(both[0]), statistic(both[1]),
                         level * LOOK_LEVEL[profile] / len(LOOKS[profile]))
            early.extend([got] if got is not None and got.verdict == "violation" else [])
            return bool(early)

        first = time.perf_counter()
        rest = run_trials_until(sampler, [f, g], n - len(timed[0]), [derived_seed(seed, "f"), derived_seed(seed, "g")],
                                executor, end, looks=[first + share * (end - first) for share in LOOKS[profile]],
                                look=look
                                ) if n > len(timed[0]) else [np.zeros((0, 0))] * 2
        if len(rest[0]) < n - len(timed[0]) and isinstance(executor, ProcessPoolExecutor):
            stop_pool(executor)  # cut by the deadline or a look: its running chunks are not wanted
        if early:
            return early[0]
        both = joined(rest)
        return decide(len(both[0]), statistic(both[0]), statistic(both[1]), level * (1 - LOOK_LEVEL[profile]))


def event_test(config: ConformConfig, plan: StatisticalPlan, si: int, pair: Composed, level: float, bulk: bool,
               profile: Profile, seed: int, seconds: float | None = None, holdout: int | None = None,
               deadline: float = math.inf) -> EventTest | None:
    """The composed event of a pure-DP pair, tested on fresh runs: on the branch of its largest decision (when it
    moves one) or everywhere, every moved draw on the favoured side's extreme, i.e. the pair's log-likelihood ratio
    at its extreme (the event whose ratio is the pair's whole composed loss: e^(sum |d|/b) for Laplace draws, a
    decision's tail ratio). Its probability is about 2^-(draws moved) times the branch's, so it needs many runs:
    at most ``holdout`` per input (default :data:`COMPOSED_HOLDOUT`), as many as ``seconds`` give
    (:func:`_pair_runs`). Both sides are tested (Bonferroni over the two)."""
    statistic: Any = pair.branch if pair.branch is not None else pair.ratio
    if statistic is None:
        return None
    sides = event_sides(pair)
    claim = float(pair.claim)

    def decide(n: int, on_f: np.ndarray[Any, Any], on_g: np.ndarray[Any, Any], level: float) -> EventTest | None:
        best: EventTest | None = None
        a = level / len(sides)
        for favours_f, threshold in sides:
            def count(L: np.ndarray[Any, Any], favours_f: bool = favours_f, threshold: float = threshold) -> int:
                return int(np.sum(threshold + 1e-9 >= L) if favours_f else np.sum(threshold - 1e-9 <= L))
            k1, k0 = (count(on_f), count(on_g)) if favours_f else (count(on_g), count(on_f))
            event = (f"{{composed log-likelihood ratio {'<=' if favours_f else '>='} {threshold:.4g}}}"
                     + (" on the branch of its largest decision" if pair.branch is not None else ""))
            test = EventTest(pair.label, event, favours_f, k1, k0, n, eps_lower_bound(k1, n, k0, n, a), claim, a,
                             detectable_excess(n, k0 / n, a, claim))
            if best is None or test.eps_lower_bound > best.eps_lower_bound:
                best = test
        return best

    return _pair_runs(config, plan, si, pair.g, statistic, bulk, profile, seed, seconds, holdout, decide, level,
                      deadline=deadline)


def renyi_pair_test(config: ConformConfig, plan: StatisticalPlan, si: int, pair: Composed, level: float, bulk: bool,
                    profile: Profile, seed: int, seconds: float | None = None,
                    holdout: int | None = None, deadline: float = math.inf) -> RenyiTest | None:
    """The Renyi divergence test of a zCDP pair (:mod:`dpstream.audit.renyi`) on its composed log-likelihood ratio,
    counted on fresh own-mode runs sized as :func:`event_test`'s: the first :data:`RENYI_SELECTION` of the runs per
    input choose the order and the bins, the rest certify rho >= D / order. None without a composed ratio, and
    without a run where the pair implies an infinite loss (a draw the values show to have variance 0: its ratio is
    infinite on every run, and no partition of infinite values can be chosen; the outside Rust 002-alg2 with a
    counter released exactly spent 100 s of runs on it before the composed search certified it)."""
    if pair.ratio is None or math.isinf(pair.implied):
        return None
    def decide(n: int, on_f: np.ndarray[Any, Any], on_g: np.ndarray[Any, Any], level: float) -> RenyiTest | None:
        return renyi_test(pair.label, "composed log-likelihood ratio", on_f, on_g, max(1, int(RENYI_SELECTION * n)),
                          float(pair.claim), level)

    return _pair_runs(config, plan, si, pair.g, pair.ratio, bulk, profile, seed, seconds, holdout, decide, level,
                      deadline=deadline)


def law_pair_test(config: ConformConfig, plan: StatisticalPlan, si: int, pair: LawPair, level: float, bulk: bool,
                  profile: Profile, seed: int, seconds: float | None = None,
                  holdout: int | None = None, deadline: float = math.inf) -> SelectedEventTest | None:
    """The selected event test (:mod:`dpstream.audit.selected_event`) of a pair the entry's exact law names
    (:class:`~dpstream.audit.hypercube.reach.LawPair`) on the statistics it names, counted on fresh own-mode runs
    sized as :func:`event_test`'s: the first :data:`~dpstream.audit.selected_event.SELECTION` of the runs per input
    choose the event, the rest certify."""
    def decide(n: int, on_f: np.ndarray[Any, Any], on_g: np.ndarray[Any, Any], level: float
               ) -> SelectedEventTest | None:
        return selected_event_test(pair.label, pair.statistics.names, on_f, on_g, max(1, int(SELECTION * n)),
                                   pair.claim, level, pair.why)

    return _pair_runs(config, plan, si, list(pair.g), pair.statistics, bulk, profile, seed, seconds, holdout,
                      decide, level, f=list(pair.f), deadline=deadline)


RENYI_SELECTION = 0.2
"""The share of a zCDP pair's runs that choose the Renyi test's order and bins (the rest are held out): on a
Gaussian pair of 1.375 times the claimed rho 0.5, 57800 runs per input at level 0.0005 (six seeds), 0.2 gave a
median bound of rho >= 0.503 (5 of 6 certified) against 0.492 with 0.1 and 0.494 with 0.3."""


def pair_test(config: ConformConfig, plan: StatisticalPlan, si: int, chosen: Sequence[Composed], level: float,
              bulk: bool, profile: Profile, seed: int, speed: float, seconds: float | None = None, *,
              holdout: int | None = None, search_seed: int | None = None, deadline: float = math.inf
              ) -> EventTest | RenyiTest | SearchResult:
    """The test of the pairs ``chosen`` of setting ``si`` (their claim's measure the entry's): under pure DP the
    first pair's composed event (:func:`event_test`, at most ``holdout`` runs per input); under zCDP the first
    pair's Renyi divergence test on its composed ratio (:func:`renyi_pair_test`); where that pair has no composed
    ratio (or event), the witness search with the pairs' composed log-likelihood ratios (:func:`composed_search`,
    seeded by ``search_seed``, default ``seed``, and sized at ``speed``); each within ``seconds``, the pair's runs
    begun by ``deadline`` (:func:`_pair_runs`). Transcript mode's step 5 tests the program's pairs with it, the
    statistical check the reference's design pair."""
    tested: EventTest | RenyiTest | None
    if plan.entry.claim(plan.settings[si]).measure is Measure.PURE_DP:
        tested = event_test(config, plan, si, chosen[0], level, bulk, profile, seed, seconds, holdout, deadline)
    else:
        tested = renyi_pair_test(config, plan, si, chosen[0], level, bulk, profile, seed, seconds, holdout,
                                 deadline)
    if tested is not None:
        return tested
    return composed_search(config, plan, si, chosen, level, bulk, profile,
                           seed if search_seed is None else search_seed, speed, seconds)


COMPOSED_HOLDOUT = {Profile.QUICK: 100_000, Profile.THOROUGH: 400_000}
"""Held-out runs per input of the composed search (a leak of 1.1-2x the claim shows only in tails this deep), whatever
the entry's cost; fewer only where the program is too slow for :data:`COMPOSED_SECONDS`."""


COMPOSED_SECONDS = {Profile.QUICK: 45.0, Profile.THOROUGH: 240.0}
"""Seconds of program runs the composed search may plan, at the speed of the program's transcript runs."""


EVENT_PROBE = 1000
"""Own-mode runs per worker that time the program before the composed event's held-out runs are planned."""
EVENT_PROBE_WARM = 200
"""Own-mode runs per worker that start the workers and their programs before :data:`EVENT_PROBE` is timed."""


COMPOSED_PAIRS = 1
"""Pairs the composed search tries: the one whose implied loss is the largest (its held-out split is the budget)."""


def composed_budget(profile: Profile, e: Entry, speed: float, inputs: int, seconds: float | None = None,
                    holdout: int | None = None) -> SearchBudget:
    """The composed search's budget: the aimed search's fit and select splits (:func:`aimed_budget`) and
    ``holdout`` (default :data:`COMPOSED_HOLDOUT`) held-out runs per input, scaled down (not below the aimed
    search's) only where ``inputs`` inputs would take longer than ``seconds`` (default :data:`COMPOSED_SECONDS`) at
    ``speed`` runs per second."""
    base = aimed_budget(profile, e)
    holdout = COMPOSED_HOLDOUT[profile] if holdout is None else holdout
    held = min(2 * (base.carried + base.tail), inputs)
    allowed = speed * (COMPOSED_SECONDS[profile] if seconds is None else seconds) - (base.fit + base.select) * inputs
    if holdout * held > allowed:
        holdout = max(base.holdout, int(allowed / held) if allowed > 0 else 0)
    return SearchBudget(fit=base.fit, select=base.select, holdout=holdout, carried=base.carried, tail=base.tail)


def pair_holdout(profile: Profile, speed: float, seconds: float | None = None, holdout: int | None = None) -> int:
    """Fresh runs per input a pair's test (:func:`event_test`, :func:`renyi_pair_test`) plans on its two inputs:
    what ``seconds`` (default :data:`COMPOSED_SECONDS`) of the program's runs at ``speed`` give, at most ``holdout``
    (default :data:`COMPOSED_HOLDOUT`). Until 2026-11-29 these tests took :func:`composed_budget`'s held-out split,
    which also set aside the fit and select runs of a search they do not make (20000 runs at thorough)."""
    cap = COMPOSED_HOLDOUT[profile] if holdout is None else holdout
    return max(0, min(cap, int(speed * (COMPOSED_SECONDS[profile] if seconds is None else seconds) / 2)))


def _with_ratios(ratios: Sequence[Any], features: Any, R: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """The composed log-likelihood ratios of the runs R, then the space's own features."""
    extra = np.stack([np.round(r(R), 9) for r in ratios], axis=1)
    return np.asarray(np.concatenate([extra, features(R)], axis=1), dtype=np.float64)


def aimed_budget(profile: Profile, e: Entry) -> SearchBudget:
    base, cost = AIMED_BUDGET[profile], e.statistical.cost if e.statistical is not None else 1
    return SearchBudget(fit=max(AIMED_FLOOR.fit, base.fit // cost), select=max(AIMED_FLOOR.select, base.select // cost),
                        holdout=max(AIMED_FLOOR.holdout, base.holdout // cost), carried=base.carried, tail=base.tail)
