"""Transcript mode of ``dpstream conform``: white-box checks of a program that uses its own randomness.

A program announcing the noise mode ``transcript`` draws from its own generator (as in ``own`` mode) and reports,
with every release, the draws it made for it (docs/conformance.md, "Transcript mode"). Per algorithm, the check:

1. **exactness**, on fresh inputs no vector fixed in advance: each run's reported draws must be exactly the
   reference's for that input (sites, kinds, parameters: the known-answer rules of
   :class:`~dpstream.conformance.tape_mode.TapeAnswerer`), and its releases the reference's deterministic replay of
   the reported values, both within the entry's error model evaluated on the case (a case with an ambiguous
   decision is skipped, neither convicted nor counted);
2. **the seed**: ``init`` with the same seed and the same run again gives the same releases and draws;
3. **the law of the reported values** over many runs on one input per setting: goodness of fit per kind and
   parameters and per site (power in the tails), no draw that never varies, no value reused between sites or runs,
   no correlation between sites or between consecutive runs (:func:`dpstream.audit.draw_laws.law_findings`);
4. **the implied loss**: where a reported privacy-relevant draw is stronger than the reference's at its site (a
   smaller scale or variance, a larger epsilon of an exponential mechanism) or missing, the loss the program's own
   transcript implies, composed as the reference's accountant composes its sites (:mod:`dpstream.conformance.implied`);
   and the loss each design pair composes over the draws and decisions it moves (:mod:`dpstream.conformance.
   composed`): what the reference's draws reach there, what the program's compose to;
5. **aimed search**: first, where a pair's composed loss exceeds the claim, that pair: its pre-registered composed
   event on fresh own-mode runs (:func:`dpstream.conformance.composed_tests.event_test`; pure DP) or the Renyi
   divergence test of its composed log-likelihood ratio (zCDP; the witness search with that ratio as a feature
   where the pair has none), looking at its runs as they come and ending at the first look that certifies
   (``composed_tests.LOOKS``); then, where the law tests point at a site (a constant or reused draw, a law that
   does not fit) or the implied loss exceeds the claim at a site of a design setting, the black-box witness search
   is aimed there, in own mode: the input where it was seen, the neighbours that move the statistic the site's
   noise protects (found by replaying the reference with that draw perturbed; from the reference's own draws where
   the program's cannot be replayed) and that statistic as a declared
   contrast, whose thresholds are the likelihood-ratio events of an additive mechanism with the wrong scale; a leak
   seen in the transcript is then certified as a ``violation`` with its witness when it is one;
6. **never weaker than the statistical mode**: when the transcript shows anything (1-4) and no aimed search
   certified it, the statistical mode's own witness search (its design, :func:`~dpstream.conformance.statistical.
   privacy_check`) runs on the program too, within what is left of the check's time (at least
   :data:`DESIGN_SECONDS`), with the design pair's composed event beside it where the transcript implies more than
   the claim and step 5 tested no composed event (a transcript that only deviates, such as rounded releases, gets
   the search alone: the event would take most of the check's time, and ``--mode statistical``, part of the
   default ``all``, tests it anyway). The outcome says which certified the leak (``certificate``): black-box aimed
   at a site, black-box by the design's search, or the implied loss of the program's own transcript only, with the
   smallest excess the searches could have certified (why the budget did not reach a witness).

A program whose transcripts pass 1-3 inherits the reference's proof (proofs/proof_transcript_inheritance.py): its
releases are the reference's function of draws with the reference's laws, provided the report is honest and the
values are used as reported. Findings of 1-3 are ``deviation``\\ s; a certified aimed search is a ``violation``.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np

from dpstream.audit.draw_laws import LawFinding, law_findings
from dpstream.audit.events import Linear
from dpstream.audit.profiles import profile_spec
from dpstream.audit.registry import Profile
from dpstream.audit.renyi import RenyiTest
from dpstream.audit.sampler import trial_executor
from dpstream.audit.search import SearchResult, SearchSpace, Setting, search
from dpstream.catalog import Entry
from dpstream.catalog.codecs import compare
from dpstream.conformance.composed import Composed
from dpstream.conformance.composed_tests import (
    COMPOSED_PAIRS,
    EventTest,
    aimed_budget,
    certifiable,
    composed_pairs,
    earliest,
    expected_margin,
    own_speed,
    pair_holdout,
    pair_test,
)
from dpstream.conformance.entry_sampler import featurise
from dpstream.conformance.held_equal import HeldEqual, door_pairs
from dpstream.conformance.implied import ImpliedLoss, effective_draws, implied_loss
from dpstream.conformance.outcome import Mode, Outcome, Verdict
from dpstream.conformance.replays import lenient_replay, replay, seeded_tape
from dpstream.conformance.statistical import (
    PAIR_END,
    PAIR_HOLDOUT,
    PAIR_STOP,
    TIME_LIMIT,
    ProtocolSampler,
    StatisticalPlan,
    fit_to_time,
    horizon_of,
    privacy_check,
    setting_label,
    statistical_checks,
)
from dpstream.conformance.wire import Program, ProtocolError
from dpstream.errors import DPStreamInputError, StateError
from dpstream.insecure import InsecureSeededNoise
from dpstream.noise import ADDITIVE_KINDS, DrawKind, data_rng, derived_seed, validated_params
from dpstream.tape import Draw, TapeError, value_from_json

if TYPE_CHECKING:
    from dpstream.conformance.runner import ConformConfig, Task

__all__ = ["LAW_RUNS", "TranscriptError", "check_seconds", "pair_seconds", "parse_draws", "transcript_tasks"]

LAW_RUNS = {Profile.QUICK: 300, Profile.THOROUGH: 3000}
"""Runs per setting whose reported draws the law tests pool."""
EXACT_CASES = {Profile.QUICK: 6, Profile.THOROUGH: 40}
"""Fresh inputs per algorithm whose transcripts are replayed on the reference."""
AIMED_PAIRS = 3
NAME = "transcript: draws and releases"
COMPOSED_SETTINGS = 2
"""Design settings whose best composed pair is tested, best first, until one certifies (they share one target's
level: an estimated or rounded ratio can rank a setting whose event is rarer first)."""
LATER_SETTINGS_TIME = 1 / 3
"""The share of the first composed test's time a setting after the first gets, within the check's time
(:func:`check_seconds`) less :data:`RESERVED_SECONDS` (for the searches after it)."""
CHECK_SECONDS = {Profile.QUICK: 60.0, Profile.THOROUGH: 300.0}
"""What a transcript check aims to take (docs/conformance.md, "Transcript mode") where the program's transcript
implies no more loss than the claim; where it implies more, :func:`check_seconds`."""
RESERVED_SECONDS = 10.0
FIRST_TEST_MARGIN = 4.0
"""Seconds the first composed test leaves of the check's time (its speed probe and the report): a leak it
certifies is reported within the check's time; where it certifies nothing the searches after it take longer."""


def check_seconds(profile: Profile, leak: bool) -> float:
    """The seconds a transcript check may take: :data:`CHECK_SECONDS`, and where the transcript implies more loss
    than the claim (``leak``) at least the statistical mode's time limit (``statistical.TIME_LIMIT``: 120 s at
    quick), so that the composed test of the program's pair gets the time and runs the statistical check's pair test
    gets (step 5 is never weaker than ``--mode statistical``; until the evening of 2026-11-29 it had 45 s and
    100000 runs per input at quick, and the outside 002-alg2 with its variance divided by 2.25, certified by the
    statistical check in 113 s, was certified in transcript mode in two runs of three)."""
    return max(CHECK_SECONDS[profile], TIME_LIMIT[profile]) if leak else CHECK_SECONDS[profile]


def pair_seconds(profile: Profile, elapsed: float) -> float:
    """Seconds the first composed test plans its runs on, ``elapsed`` seconds into the check: until the share of the
    statistical time limit by which the statistical check's pair test plans to end (``statistical.PAIR_END``: 96 s
    of 120 s at quick)."""
    return PAIR_END[profile] * TIME_LIMIT[profile] - elapsed


MIN_TEST_SECONDS = 5.0
DESIGN_SECONDS = 15.0
"""Seconds the statistical design's search (step 6) gets at least, when the tests before it left less of
:data:`CHECK_SECONDS`: it runs within what they left, its budget scaled to fit; it tests the design pair's composed
event beside it only where the transcript implies more than the claim and no composed event was tested before it
(:func:`dpstream.conformance.statistical.privacy_check`)."""
LAW_TESTS = ("law", "tails", "site law", "selection")
"""The law tests whose failure lets the values' own spread stand for the stated parameter (implied.effective_draws)."""


class TranscriptError(RuntimeError):
    """A transcript that cannot be read: a draw object of the wrong shape, a site reported twice."""


def parse_draws(raw: Any) -> list[Draw]:
    """The reported draws (a JSON list of draw objects, as a tape writes them), validated; TranscriptError if not."""
    if not isinstance(raw, list):
        raise TranscriptError(f"'draws' must be a JSON array of draw objects, got {str(raw)[:80]}")
    out: list[Draw] = []
    seen: set[str] = set()
    for item in raw:
        if not isinstance(item, dict) or set(item) != {"site", "kind", "params", "value"}:
            raise TranscriptError(f"a draw is {{site, kind, params, value}}, got {str(item)[:120]}")
        try:
            kind = DrawKind(str(item["kind"]))
            params = validated_params(kind, item["params"] if isinstance(item["params"], dict) else {})
            value = value_from_json(kind, item["value"], params)
        except (ValueError, KeyError, TypeError, TapeError, DPStreamInputError) as exc:
            raise TranscriptError(f"draw {str(item)[:120]}: {exc}") from exc
        site = str(item["site"])
        if site in seen:
            raise TranscriptError(f"site {site!r} reported twice in one run")
        seen.add(site)
        out.append(Draw(site, kind, params, value))
    return out


# --------------------------------------------------------------------------------------------- cases


def _cases(plan: StatisticalPlan, count: int, seed: int) -> list[tuple[Mapping[str, Any], list[Any]]]:
    """Fresh inputs, ``count`` of them, that the reference accepts: half the differential mode's fresh random cases
    of the entry (random parameters and inputs, weighted toward the edges; docs/conformance.md "Differential
    checks"), half a seeded choice among the search design's streams and their neighbours (the inputs the law
    tests and the aimed search use)."""
    from dpstream.conformance.differential import fresh_cases

    e = plan.entry
    pool: list[tuple[Mapping[str, Any], list[Any]]] = []
    for params, space in zip(plan.settings, plan.spaces, strict=True):
        T = horizon_of(e, params)
        for make in space.families.values():
            f = make(T)
            pool.append((params, f))
            pool.extend((params, g) for _, g in space.neighbours(f))
    order = data_rng(derived_seed(seed, "transcript cases")).permutation(len(pool))
    chosen = [pool[i] for i in order[:count - count // 2]]
    if e.cases is not None:
        chosen += [(case.params, case.inputs) for case, _ in fresh_cases(e.anchor, seed, 2 * count)]
    return [c for c in chosen if _accepted(e, *c)][:count]


def _accepted(e: Entry, params: Mapping[str, Any], inputs: Sequence[Any]) -> bool:
    """The reference runs ``inputs`` with these parameters (a seeded run; a case it refuses is not a case)."""
    assert e.codec is not None
    try:
        algorithm = e.make(params, InsecureSeededNoise(0))
        valid = e.params.validate(params)
        for x in inputs:
            algorithm.step(e.codec.decode_input(x, valid))
    except (DPStreamInputError, StateError):
        return False
    return True


# --------------------------------------------------------------------------------------------- tasks


def transcript_tasks(config: ConformConfig, anchors: Sequence[str], modes: Sequence[str], ops: Sequence[str],
                     level: float) -> tuple[list[Task], list[Outcome]]:
    """One task per announced algorithm with a statistical plan (each at false-alarm ``level``), and skipped
    outcomes for the others."""
    from dpstream.conformance.runner import Task

    plans, skipped = statistical_checks(config, anchors, modes, ops, mode=Mode.TRANSCRIPT, noise="transcript")
    tasks = [Task(Mode.TRANSCRIPT, anchor, NAME, partial(_check, config, plan, level, "runs" in ops))
             for anchor, plan in plans]
    return tasks, skipped


@dataclass
class _Findings:
    exact: list[str]
    law: list[tuple[int, LawFinding]]
    details: dict[str, Any]
    effective: list[str] = field(default_factory=list)
    """Groups of reported draws whose values show a smaller scale than stated (implied.effective_draws)."""


def _run(program: Program, anchor: str, params: Mapping[str, Any], inputs: Sequence[Any], seed: int
         ) -> tuple[list[Any] | None, list[Draw], Any, str | None]:
    """One transcript run: (releases, parsed draws, raw draws, refusal)."""
    refused = program.init(anchor, params, "transcript", seed)
    if refused is not None:
        return None, [], None, f"valid parameters {dict(params)} refused: {refused}"
    reply = program.run(inputs)
    if reply.kind == "error":
        return None, [], None, f"a valid stream was refused: {reply.value}"
    if reply.draws is None:
        raise program.broken("bad-reply", "transcript mode: a run's reply has no 'draws'")
    try:
        draws = parse_draws(reply.draws)
    except TranscriptError as exc:
        raise program.broken("bad-reply", f"transcript mode: {exc}") from None
    return list(reply.value), draws, reply.draws, None


def _exactness(program: Program, plan: StatisticalPlan, cases: Sequence[tuple[Mapping[str, Any], list[Any]]],
               seed: int, found: _Findings) -> None:
    e = plan.entry
    assert e.codec is not None
    checked = 0
    for i, (params, inputs) in enumerate(cases):
        s = derived_seed(seed, "exact", i)
        releases, draws, raw, refused = _run(program, e.anchor, params, inputs, s)
        if refused is not None or releases is None:
            found.exact.append(f"case {i}: {refused}")
            continue
        checked += 1
        ref = replay(e, params, inputs, draws)
        if ref.ambiguous:  # a branch within rounding of its threshold: no ground truth
            found.details["ambiguous_cases"] = found.details.get("ambiguous_cases", 0) + 1
            checked -= 1
            continue
        where = f"case {i} ({setting_label(params)}, {len(inputs)} steps)"
        if ref.failed:
            found.exact.append(f"{where}: the reference cannot run on the reported draws: {ref.failed}")
        for issue in ref.issues[:3]:
            if issue.what == "unexpected-site":  # asked for by the reference, absent from the report
                found.exact.append(f"{where}: step {issue.step}: the reference draws {issue.site!r} "
                                   f"({issue.got}), which the program did not report")
            elif issue.what in ("kind", "params"):  # the tape is the program's report, the request the reference's
                found.exact.append(f"{where}: step {issue.step}: site {issue.site!r}: the program reported "
                                   f"{issue.what} {issue.expected!r}, the reference draws {issue.got!r}")
            else:
                found.exact.append(f"{where}: {issue.describe()}")
        if ref.unused:
            found.exact.append(f"{where}: {len(ref.unused)} reported draw(s) the reference never makes, e.g. "
                               f"{ref.unused[0]!r}")
        if not ref.failed:
            assert ref.bounds is not None
            diff = compare(ref.releases, releases, ref.bounds.release)
            if diff is not None:
                found.exact.append(f"{where}: the releases are not the replay of the reported draws: {diff}")
        again, _, raw_again, _ = _run(program, e.anchor, params, inputs, s)
        if again != releases or json.dumps(raw_again, sort_keys=True) != json.dumps(raw, sort_keys=True):
            found.exact.append(f"{where}: the same seed did not reproduce the run")
        if len(found.exact) >= 8:
            break
    found.details["exact_cases"] = checked


def _law_runs(program: Program, anchor: str, params: Mapping[str, Any], inputs: Sequence[Any], runs: int,
              seed: int, bulk: bool) -> list[list[Draw]]:
    refused = program.init(anchor, params, "transcript", seed)
    if refused is not None:
        raise program.broken("bad-reply", f"transcript mode: valid parameters refused: {refused}")
    raw: list[Any] = []
    if bulk:
        for start in range(0, runs, 500):
            reply = program.runs(inputs, min(500, runs - start))
            if reply.kind == "error" or reply.draws is None:
                raise program.broken("bad-reply", f"transcript mode: 'runs' gave no draws ({reply.value})"[:300])
            raw.extend(reply.draws)
    else:
        for reply in program.run_many(list(inputs), runs):
            if reply.kind == "error" or reply.draws is None:
                raise program.broken("bad-reply", f"transcript mode: a run gave no draws ({reply.value})"[:300])
            raw.append(reply.draws)
    try:
        return [parse_draws(r) for r in raw]
    except TranscriptError as exc:
        raise program.broken("bad-reply", f"transcript mode: {exc}") from None


def _check(config: ConformConfig, plan: StatisticalPlan, level: float, bulk: bool, program: Program) -> Outcome:
    started = time.perf_counter()
    e = plan.entry
    profile = Profile(config.profile)
    seed = derived_seed(config.seed, e.anchor, "transcript")
    found = _Findings([], [], {})
    law_runs: dict[int, list[list[Draw]]] = {}
    try:
        _exactness(program, plan, _cases(plan, EXACT_CASES[profile], seed), seed, found)
        law_level = level / 2 / len(plan.settings)
        tests = 0
        law_seconds = 0.0
        for si, (params, space) in enumerate(zip(plan.settings, plan.spaces, strict=True)):
            f = next(iter(space.families.values()))(horizon_of(e, params))
            began = time.perf_counter()
            runs = _law_runs(program, e.anchor, params, f, LAW_RUNS[profile], derived_seed(seed, "law", si), bulk)
            law_seconds += time.perf_counter() - began
            law_runs[si] = runs
            failed, m = law_findings(runs, law_level, derived_seed(seed, "pit", si))
            tests += m
            found.law.extend((si, x) for x in failed)
        found.details["law_tests"] = tests
        speed = LAW_RUNS[profile] * len(plan.settings) / max(law_seconds, 1e-6)
        found.details["transcript_runs_per_second"] = round(speed, 1)
    except ProtocolError as exc:
        return Outcome(Mode.TRANSCRIPT, e.anchor, NAME, Verdict.PROTOCOL_ERROR, message=str(exc),
                       details={"kind": exc.kind, "stderr_tail": exc.stderr[-2000:]},
                       seconds=time.perf_counter() - started)
    effective: dict[int, list[list[Draw]]] = {}
    for si, runs in law_runs.items():
        flagged = {site for sj, x in found.law if sj == si and x.test in LAW_TESTS for site in x.sites}
        effective[si], scales = effective_draws(runs, flagged)
        for scale in scales:
            found.details.setdefault("effective_params", []).append(
                {"setting": setting_label(plan.settings[si]), **scale.to_json()})
            found.effective.append(scale.describe())
    implied = _implied_by_setting(plan, effective)
    worst = max(implied.items(), key=lambda x: x[1].ratio, default=None)
    if worst is not None:
        found.details["implied_loss"] = {"setting": setting_label(plan.settings[worst[0]]), **worst[1].to_json()}
    pairs = {si: composed_pairs(plan, si, effective[si][0]) for si, imp in implied.items() if imp.exceeds}
    ranked = sorted(((si, c[0]) for si, c in pairs.items() if c),
                    key=lambda x: (-round(x[1].implied / x[1].claim, 6), earliest(x[1]), -x[1].event_probability))
    composed = ranked[0] if ranked else None
    if composed is not None:
        found.details["composed_loss"] = {"setting": setting_label(plan.settings[composed[0]]),
                                          **composed[1].to_json()}
    door = _door(plan, effective, implied)
    if door is not None:
        found.details["door_loss"] = {"setting": setting_label(door[0]), **door[1].to_json()}
    if any(certifiable(c) for cs in pairs.values() for c in cs):
        try:
            speed = max(speed, _own_speed(config, plan, bulk, seed))
        except ProtocolError as exc:
            found.details["own_speed_error"] = str(exc)
    leak = any(imp.exceeds for imp in implied.values())
    affordable = pair_holdout(profile, speed, pair_seconds(profile, time.perf_counter() - started), PAIR_HOLDOUT)
    searches = _certify(config, plan, found, implied, law_runs, level / 2, bulk, profile, seed,
                        _testable(pairs, affordable, level / 8)[:COMPOSED_SETTINGS], speed,
                        started + check_seconds(profile, leak), started)
    return _outcome(e.anchor, found, worst[1] if worst is not None else None, searches, started,
                    composed[1] if composed is not None else None, door[1] if door is not None else None)


def _own_speed(config: ConformConfig, plan: StatisticalPlan, bulk: bool, seed: int) -> float:
    """The program's own-mode runs per second on the first setting's input (``own_speed``, as the composed tests
    measure it): the held-out runs a composed event will get, which rank the settings (:func:`_testable`). The
    transcript runs, which report every draw, are several times slower (001-alg1 through ``dpstream serve``: 380
    against about 1800 per second); ranked at their speed, a setting whose frequent event certifies on the runs it
    gets ranked below one whose event lies in a far tail."""
    e, params = plan.entry, plan.settings[0]
    f = next(iter(plan.spaces[0].families.values()))(horizon_of(e, params))
    sampler = ProtocolSampler(config.command, e.anchor, params, timeout=config.timeout, bulk=bulk)
    with trial_executor(config.jobs, config.scheduler) as executor:
        return own_speed(sampler, [f], derived_seed(seed, "own speed"), executor, config.jobs)[0]


def _testable(pairs: Mapping[int, list[Composed]], runs: int, level: float) -> list[tuple[int, list[Composed]]]:
    """Per setting, its pairs whose test can certify (``certifiable``), in ``composed_pairs``' order (the largest
    implied loss, then the earliest first decision, whose outcome's ratio no earlier release dilutes); the settings
    in the order of what their first pair's event could certify on ``runs`` runs (``expected_margin``), then the
    earlier first decision, then the more frequent event."""
    out = [(si, [c for c in cs if certifiable(c)]) for si, cs in pairs.items()]
    return sorted(((si, cs) for si, cs in out if cs), key=lambda x: (
        -expected_margin(x[1][0], runs, level), earliest(x[1][0]), -x[1][0].event_probability))


def _door(plan: StatisticalPlan, law_runs: Mapping[int, list[list[Draw]]], implied: Mapping[int, ImpliedLoss]
          ) -> tuple[Mapping[str, Any], HeldEqual] | None:
    """Where the transcript implies more than the claim: the design pair (and its setting) whose loss composed at
    the noise door (:mod:`dpstream.conformance.held_equal`) with the program's parameters is the largest."""
    found = [(plan.settings[si], h) for si, imp in implied.items() if imp.exceeds
             for h in door_pairs(plan, si, law_runs[si])[:1]]
    composed = [x for x in found if x[1].diverged is None]
    return max(composed, key=lambda x: x[1].implied / x[1].claim.parameter, default=found[0] if found else None)


def _implied_by_setting(plan: StatisticalPlan, law_runs: Mapping[int, list[list[Draw]]]) -> dict[int, ImpliedLoss]:
    """Per design setting, the loss implied by the first law run's reported draws (replayed on the reference)."""
    e = plan.entry
    out: dict[int, ImpliedLoss] = {}
    for si, runs in law_runs.items():
        params = plan.settings[si]
        f = next(iter(plan.spaces[si].families.values()))(horizon_of(e, params))
        ref = replay(e, params, f, runs[0])
        relevant = sum(1 for d in runs[0] if d.kind.privacy_relevant)  # reported, and asked for but not reported
        missing = sum(1 for x in ref.issues if x.what == "unexpected-site")
        out[si] = implied_loss(e.claim(params), ref.issues, relevant + missing)
    return out


@dataclass
class _Searches:
    """The black-box searches run for a transcript's findings, and the one that certified (if any)."""

    aimed: list[tuple[str, SearchResult | EventTest | RenyiTest]] = field(default_factory=list)
    design: Outcome | None = None
    certificate: str | None = None
    errors: list[str] = field(default_factory=list)


SITES_TRIED = 8
"""Sites of the largest implied ratio tried in turn until one has neighbours that move what it protects (a draw
that decides a branch far from its threshold, e.g. PrivTree's root split, moves no release)."""


def _targets(found: _Findings, implied: Mapping[int, ImpliedLoss]) -> list[tuple[int, list[LawFinding]]]:
    """Where to aim, most telling first, at most two targets, each a list of sites to try in turn: a constant or
    reused draw; the design setting with the largest implied ratio above 1 (its sites of that ratio, one per line of
    the algorithm first: :data:`SITES_TRIED`); any other law finding that names a site."""
    out: list[tuple[int, list[LawFinding]]] = []
    gross = [(si, x) for si, x in found.law if x.sites and x.kind in ("constant", "reused")]
    out += [(si, [x]) for si, x in gross[:1]]
    ranked = sorted(((si, imp) for si, imp in implied.items() if imp.exceeds), key=lambda x: -x[1].ratio)
    for si, imp in ranked[:1]:
        top = [site for site in imp.sites if site.ratio == imp.ratio]
        lines: dict[str, list[str]] = {}
        for site in top:
            lines.setdefault(site.site.split(" t=")[0], []).append(site.site)
        order = [group[i] for i in range(max(map(len, lines.values()))) for group in lines.values() if i < len(group)]
        out.append((si, [LawFinding("implied loss", (site,), 0.0, imp.describe(), "scale")
                         for site in order[:SITES_TRIED]]))
    if not out:
        out += [(si, [x]) for si, x in found.law if x.sites][:1]
    return out[:2]


def _certify(config: ConformConfig, plan: StatisticalPlan, found: _Findings, implied: Mapping[int, ImpliedLoss],
             law_runs: Mapping[int, list[list[Draw]]], level: float, bulk: bool, profile: Profile, seed: int,
             composed: Sequence[tuple[int, list[Composed]]] = (), speed: float = 0.0,
             deadline: float = math.inf, started: float | None = None) -> _Searches:
    """The aimed searches at the targets (half of ``level``, split equally; the pairs whose composed loss exceeds
    the claim one more target, tried first: the first pair of each setting in ``composed`` (:func:`_testable`), at most
    :data:`COMPOSED_SETTINGS`, which share that target's level; the first plans its runs to end when the statistical
    check's pair test would, :func:`pair_seconds` after the check's ``started``, and begins none after the share of
    the statistical time limit that test's would (``statistical.PAIR_STOP``), a later one :data:`LATER_SETTINGS_TIME`
    of the first's time), then, when the transcript showed anything and none certified, the statistical design's
    search (the other half): module docstring, 5-6."""
    out = _Searches()
    began = time.perf_counter() if started is None else started
    exceeds = any(imp.exceeds for imp in implied.values())
    if not (found.exact or found.law or exceeds):
        return out
    targets = _targets(found, implied)
    tried = [(si, pairs[:COMPOSED_PAIRS]) for si, pairs in composed if pairs]
    share = level / 2 / max(1, len(targets) + (1 if tried else 0))
    composed_tested = False
    first = pair_seconds(profile, time.perf_counter() - began)
    stop = min(deadline, began + PAIR_STOP[profile] * TIME_LIMIT[profile])
    for n, (si, chosen) in enumerate(tried):
        labels = ("composed event",) if n == 0 else ("composed event", si)
        left = deadline - time.perf_counter()
        seconds = min(first, left - FIRST_TEST_MARGIN) if n == 0 else min(
            first * LATER_SETTINGS_TIME, left - RESERVED_SECONDS)
        if seconds < MIN_TEST_SECONDS:
            break
        try:
            pair_result = pair_test(config, plan, si, chosen, share / len(tried), bulk, profile,
                                    derived_seed(seed, *labels), speed, seconds, holdout=PAIR_HOLDOUT,
                                    search_seed=derived_seed(seed, "composed", *labels[1:]), deadline=stop)
        except ProtocolError as exc:
            out.errors.append(f"aimed at the composed pairs: {exc}")
            break
        where = f"the pair {chosen[0].label!r} composed over {len(chosen[0].moves)} draw(s)"
        found.details.setdefault("aimed_at", []).append(
            {"setting": setting_label(plan.settings[si]), "pairs": [c.label for c in chosen],
             "test": "composed log-likelihood ratio"})
        out.aimed.append((where, pair_result))
        composed_tested = True
        if pair_result.verdict == "violation":
            out.certificate = f"black-box, aimed at {where}"
            return out
    for si, candidates in targets:
        for target in candidates:
            try:  # within what the check has left, less the design's search (step 6)
                result = _aimed_search(config, plan, si, law_runs[si][0], target, share, bulk,
                                       profile, derived_seed(seed, "target", target.sites[0]),
                                       deadline - time.perf_counter() - DESIGN_SECONDS, speed)
            except ProtocolError as exc:
                out.errors.append(f"aimed at {target.sites[0]!r}: {exc}")
                break
            if result is None:
                out.errors.append(f"aimed at {target.sites[0]!r}: no neighbour of the design moves what it protects")
                continue
            found.details.setdefault("aimed_at", []).append(
                {"setting": setting_label(plan.settings[si]), "sites": list(target.sites), "test": target.test})
            out.aimed.append((target.sites[0], result))
            if result.verdict == "violation":
                out.certificate = f"black-box, aimed at site {target.sites[0]!r}"
                return out
            break
    left = deadline - time.perf_counter()
    out.design = privacy_check(config, plan, level / 2, bulk, Program(config.command, timeout=config.timeout),
                               seconds=None if math.isinf(left) else max(DESIGN_SECONDS, left),
                               event=exceeds and not composed_tested)
    if out.design.privacy is Verdict.VIOLATION:
        out.certificate = "black-box, the statistical design's witness search"
    elif out.design.verdict is Verdict.PROTOCOL_ERROR:
        out.errors.append(f"the design's search: {out.design.message}")
    return out


def _outcome(anchor: str, found: _Findings, implied: ImpliedLoss | None, searches: _Searches, started: float,
             composed: Composed | None = None, door: HeldEqual | None = None) -> Outcome:
    lines = list(found.exact)
    lines += [f"[{setting}] {x.what} ({x.test}, p = {x.p:.2g})" for setting, x in
              ((f"setting {si + 1}", x) for si, x in found.law)]
    details = {**found.details, "exact_findings": found.exact,
               "law_findings": [{"setting": si, "test": x.test, "sites": list(x.sites), "p": x.p, "what": x.what}
                                for si, x in found.law]}
    leak = implied is not None and implied.exceeds
    conformance = Verdict.DEVIATION if lines or leak else Verdict.PASS
    privacy: Verdict | None = None
    message = "; ".join(lines[:4]) + (f"; and {len(lines) - 4} more" if len(lines) > 4 else "")
    if leak:
        assert implied is not None
        pair = (f"; {composed.describe()}" if composed is not None else
                f"; at the noise door, {door.describe()}" if door is not None else "")
        head = "; ".join([*found.effective, implied.describe()]) + pair
        message = f"{head}; {message}" if message else head
    if searches.aimed:
        details["aimed_search"] = searches.aimed[-1][1].to_data()
        details["aimed_searches"] = [{"site": site, **r.to_data()} for site, r in searches.aimed]
    if searches.design is not None:
        details["design_search"] = searches.design.to_json()
    if searches.errors:
        details["search_errors"] = searches.errors
    details["certificate"] = searches.certificate or ("implied by the program's own transcript only" if leak
                                                      else None)
    if searches.certificate is not None:
        privacy = Verdict.VIOLATION
        best = (searches.aimed[-1][1].detail() if searches.certificate.startswith("black-box, aimed") else
                searches.design.message if searches.design is not None else "")
        message = f"certified ({searches.certificate}): {best}; transcript: {message}"
    elif searches.aimed or searches.design is not None:
        reach = [f"aimed at {site if site.startswith('the pair') else repr(site)}: {r.verdict}, smallest excess it "
                 f"could have certified {r.detectable_excess:.3g}" for site, r in searches.aimed]
        if searches.design is not None:
            excess = searches.design.details.get("detectable_excess")
            reach.append(f"the design's search: {searches.design.privacy.value if searches.design.privacy else '-'}"
                         + (f", smallest excess it could have certified {excess:.3g}"
                            if isinstance(excess, float) else ""))
        if door is not None and door.diverged is None and door.implied <= door.claim.parameter:
            reach.append(f"along the program's reported runs no pair of the design composes more than the claim "
                         f"with the program's parameters "
                         f"(at most {door.implied:.4g} of {door.claim.parameter:.4g}): its pairs cannot show "
                         f"this leak")
        why = "; ".join(reach)
        message += (f"; not certified black-box ({why})" if not leak else
                    f"; implied by the program's own transcript only, not certified black-box: the budget did not "
                    f"reach a witness ({why})")
    if not lines and not leak:
        message = (f"{details.get('exact_cases', 0)} fresh inputs replayed exactly, the seed reproduces, "
                   f"{details.get('law_tests', 0)} tests of the reported draws' laws passed")
    return Outcome(Mode.TRANSCRIPT, anchor, NAME, conformance, privacy, message=message, details=details,
                   seconds=time.perf_counter() - started)


# --------------------------------------------------------------------------------------------- aimed search


def _perturbed(draws: Sequence[Draw], site: str) -> list[Draw] | None:
    """The draws with the one at ``site`` moved by three of its standard deviations (additive kinds only)."""
    out = []
    moved = False
    for d in draws:
        if d.site == site and d.kind in ADDITIVE_KINDS:
            if d.kind is DrawKind.DISCRETE_GAUSSIAN:
                shift: float = max(1, round(3 * math.sqrt(float(d.params["sigma2"]))))
            else:
                shift = 3 * float(d.params["scale"])
            value = d.value + (int(shift) if d.kind is not DrawKind.LAPLACE else shift)
            out.append(Draw(d.site, d.kind, d.params, value))
            moved = True
        else:
            out.append(d)
    return out if moved else None


def _influence(e: Entry, params: Mapping[str, Any], f: Sequence[Any], draws: Sequence[Draw], site: str
               ) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any], list[Draw]] | None:
    """(features of the replay on f, change of the features when the draw at ``site`` moves, the draws used): the
    statistic the site's noise protects. A site the program did not report is taken from a seeded reference run."""
    if not any(d.site == site for d in draws):
        seeded = seeded_tape(e, params, f)
        if seeded is None:
            return None
        draws = seeded
    moved = _perturbed(draws, site)
    if moved is None:
        return None
    base, shifted = replay(e, params, f, draws), lenient_replay(e, params, f, moved)
    if base.failed or shifted is None:
        return None
    F0 = featurise(e.anchor, params, [base.releases])[0]
    F1 = featurise(e.anchor, params, [shifted])[0]
    return F0, F1 - F0, list(draws)


def _aimed_search(config: ConformConfig, plan: StatisticalPlan, si: int, draws: Sequence[Draw], finding: LawFinding,
                  level: float, bulk: bool, profile: Profile, seed: int, seconds: float = math.inf,
                  speed: float = 0.0) -> SearchResult | None:
    """The witness search aimed at ``finding`` (module docstring, step 4), its budget scaled to fit ``seconds`` at
    ``speed`` runs per second (the transcript runs': own-mode runs are faster); None if no neighbour moves what its
    site protects.

    The influence w of the site's draw on the features (the replay with that draw moved, divided by how far) gives
    the statistic the draw protects; a neighbour g moves it by w.(F(g) - F(f)) / |w|^2 with the draws held fixed.
    For a draw reused at two sites a and b the leak is in the difference of what they protect, so g is ranked by
    the difference of its two moves. The chosen neighbours' shifts (F(g) - F(f), draws held fixed) and w are
    declared to the search as linear statistics."""
    e, params, space = plan.entry, plan.settings[si], plan.spaces[si]
    T = horizon_of(e, params)
    f = next(iter(space.families.values()))(T)
    distinct = list(dict.fromkeys(finding.sites))
    sites = distinct[:2] if finding.kind == "reused" else distinct[:1]
    influences = [_influence(e, params, f, draws, site) for site in sites]
    if any(x is None for x in influences):
        return None
    F0, _, used = influences[0]  # type: ignore[misc]
    ws = [x[1] for x in influences if x is not None]
    if not all(np.any(np.abs(w) > 1e-9) for w in ws):
        return None
    effects = []
    for label, g in space.neighbours(f):
        replayed = replay(e, params, g, used)
        releases = lenient_replay(e, params, g, used) if replayed.failed else replayed.releases
        if releases is None:
            continue
        shift = featurise(e.anchor, params, [releases])[0] - F0
        moves = [float(w @ shift) / float(w @ w) for w in ws]
        effects.append((abs(moves[0] - moves[1]) if len(moves) == 2 else abs(moves[0]), label, g, shift))
    ranked = [x for x in sorted(effects, key=lambda x: -x[0]) if x[0] > 1e-9][:AIMED_PAIRS]
    if not ranked:
        return None
    chosen = [(label, g) for _, label, g, _ in ranked]
    contrasts = []
    for site, w in zip(sites, ws, strict=True):
        cols = np.flatnonzero(np.abs(w) > 1e-9)
        contrasts.append(Linear(tuple(int(c) for c in cols), tuple(float(x) for x in w[cols]),
                                f"what the noise at {site!r} protects"))
    for _, label, _, shift in ranked:
        cols = np.flatnonzero(np.abs(shift) > 1e-9)
        if cols.size:
            contrasts.append(Linear(tuple(int(c) for c in cols), tuple(float(x) for x in shift[cols]),
                                    f"the shift of {label!r} with the draws held fixed"))

    def neighbours(x: list[Any]) -> list[tuple[str, list[Any]]]:
        return list(chosen)

    aimed = SearchSpace(families={"aimed": lambda T: f}, neighbours=neighbours, features=space.features,
                        feature_names=space.feature_names, threshold_columns=space.threshold_columns,
                        statistics=lambda names: [*contrasts, *space.statistics(names)])
    sampler = ProtocolSampler(config.command, e.anchor, params, timeout=config.timeout, bulk=bulk)
    setting = Setting(setting_label(params), sampler, e.claim(params), T, aimed)
    budget = aimed_budget(profile, e)
    if math.isfinite(seconds) and speed > 0:
        budget, _ = fit_to_time(StatisticalPlan(e, (params,), (aimed,)), budget, speed, max(seconds, MIN_TEST_SECONDS))
    with trial_executor(config.jobs, config.scheduler) as executor:
        return search([setting], aimed, budget, level=level, seed=derived_seed(seed, "aimed"),
                      target_excess=profile_spec(profile).target_excess, executor=executor)

