"""What one neighbouring pair composes at the noise door, with everything the algorithm sees held equal.

The accountant of every entry composes the shares of the draws a neighbouring pair moves: an additive draw of
scale b spends |move| / b (pure DP), a Gaussian of variance sigma^2 spends move^2 / (2 sigma^2) (zCDP), a selection
the largest log-ratio of its candidates' probabilities. :mod:`dpstream.conformance.composed` measures the moves
through the released features, which needs releases linear in the noise; this module measures them where the
algorithm hands its sensitive values to the noise door, which needs nothing of the releases (multiplicative
weights, a tree's synthetic points, a selection of the query to measure next):

* **Held equal.** The reference runs on f with a transcript's draws; then on f' with every value the door hands
  back held at f's: an additive draw returns f's noisy value at the same site (its noise on f' is
  z_s + v_s(f) - v_s(f'), a move of m_s = v_s(f') - v_s(f)), an exponential mechanism returns f's index, every
  other draw its value on f. The releases are a post-processing of what the door returns (each entry's proof note
  argues it), so f' then releases exactly what f did: the run is checked for that (a pair that changes which sites
  are drawn, or a release that differs with every door value held, is *not composed*: ``diverged`` says why).
* **Composed loss along the path.** The log-likelihood ratio of that output between the pair is the sum over the
  draws of log p_s(z_s) - log p_s(z_s - m_s) plus, per selection, log P(i | scores on f) - log P(i | scores on
  f') of the index i the run took. Each additive draw whose noisy value a release shows reaches its largest share
  in its tail; the selections' log-ratios are the path's own. Pure DP: sum |m_s| / b_s + |sum of the selections'
  log-ratios|; zCDP: sum m_s^2 / (2 sigma_s^2) (a Laplace draw (m_s / b_s)^2 / 2) + per selection (the range of its
  candidates' log-ratios)^2 / 8 (Cesar and Rogers: an eps-bounded-range selection is eps^2 / 8-zCDP). An additive
  draw whose noisy value no release shows (a small move of it changes nothing: a split compared with a threshold)
  is a *decision*: listed, not counted, because decisions do not compose by their shares (PrivTree's splits along
  a path cost a geometric series, 001-alg5); :mod:`dpstream.conformance.composed` measures those.
  With the reference's parameters the sum is what the pair *reaches* on that path; with the parameters the program
  reports at the same sites, what the program's own transcript *implies* on it (a site the reference draws and the
  program did not: infinite). It is the program's word and the reference's accounting, never a certificate:
  certificates come from held-out runs (docs/conformance.md, "Transcript mode").
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpstream.claims import Measure, PrivacyClaim
from dpstream.conformance.composed import additive_loss
from dpstream.conformance.entry_sampler import Run, entry_run
from dpstream.conformance.implied import json_number
from dpstream.conformance.statistical import StatisticalPlan, horizon_of
from dpstream.errors import DPStreamInputError, StateError
from dpstream.insecure import InsecureSeededNoise
from dpstream.noise import (
    ADDITIVE_KINDS,
    BaseNoiseSource,
    DrawKind,
    Params,
    dispatch,
    dispatch_add,
    em_log_weights,
)
from dpstream.tape import Draw

__all__ = ["DOOR_RUNS", "DoorDraw", "DoorRun", "HeldEqual", "Share", "door_pairs", "door_run", "held_equal"]

RELEASE_TOLERANCE = 1e-9
"""Largest relative difference of a release of f' (every door value held at f's) from f's for them to be equal."""

REFUSALS = (DPStreamInputError, StateError, ValueError, ArithmeticError, IndexError, KeyError, TypeError)
"""What a run of the reference may raise on a transcript's draws or with f's values held on f' (states the algorithm
never meets with its own noise): the run is then not composed."""

@dataclass(frozen=True)
class DoorDraw:
    """One draw as the door saw it: for an additive kind the sensitive value and the noisy value handed back, for
    a selection its scores (in ``params``) and the index, otherwise the value."""

    site: str
    kind: DrawKind
    params: Params
    value: Any
    sensitive: float | None = None


class _Door(BaseNoiseSource):
    """INSECURE (conformance only): answers by site from ``answers`` (f: the transcript's noise, index or value
    where the kinds agree; f': f's door draws, the noisy value held) and from a seeded source elsewhere; records
    every draw."""

    def __init__(self, answers: Mapping[str, Draw | DoorDraw], hold: bool) -> None:
        self.answers = answers
        self.hold = hold
        self.fallback = InsecureSeededNoise(0)
        self.seen: list[DoorDraw] = []
        self.unheld: list[str] = []

    def _known(self, site: str, kind: DrawKind) -> Draw | DoorDraw | None:
        d = self.answers.get(site)
        return d if d is not None and d.kind is kind else None

    def _draw(self, site: str, kind: DrawKind, params: Params) -> Any:
        d = self._known(site, kind)
        if self.hold and d is not None and kind is not DrawKind.EXPONENTIAL_MECHANISM and dict(d.params) != params:
            d = None  # another draw than f's at this site (a count, a box): the path is not held
        if d is None:
            if self.hold:
                self.unheld.append(site)
            value = dispatch(self.fallback, site, kind, params)
        else:
            value = d.value
            if kind in ADDITIVE_KINDS:  # a bare sample: what it is added to never reaches the door
                self.unheld.append(site)
        self.seen.append(DoorDraw(site, kind, dict(params), value))
        return value

    def _add(self, site: str, kind: DrawKind, params: Params, value: Any) -> tuple[Any, Any]:
        d = self._known(site, kind)
        if self.hold and isinstance(d, DoorDraw):
            noisy = d.value
        elif d is not None:
            noisy = value + d.value
        else:
            if self.hold:
                self.unheld.append(site)
            noisy = dispatch_add(self.fallback, site, kind, params, value)[0]
        self.seen.append(DoorDraw(site, kind, dict(params), noisy, float(value)))
        return noisy, noisy - value


@dataclass(frozen=True)
class Share:
    """One draw the pair moves: an additive draw's move, or a selection's scores on f and on f'; the reference's
    parameters and the program's (None: the program reported no draw there)."""

    site: str
    kind: DrawKind
    move: float
    scores: tuple[tuple[float, ...], tuple[float, ...]] | None
    index: int | None
    """The index a selection took on the run."""
    reference: Mapping[str, Any]
    reported: Mapping[str, Any] | None

    def loss(self, measure: Measure, params: Mapping[str, Any] | None) -> float:
        """This draw's share of the pair's composed loss with draw parameters ``params`` (module docstring)."""
        if self.kind is not DrawKind.EXPONENTIAL_MECHANISM:
            return additive_loss(self.kind, self.move, measure, params)
        if params is None:
            return math.inf
        assert self.scores is not None and self.index is not None
        lr = _log_probabilities(self.scores[0], params) - _log_probabilities(self.scores[1], params)
        return float(np.ptp(lr)) ** 2 / 8 if measure is Measure.ZCDP else float(lr[self.index])

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"site": self.site, "kind": self.kind.value}
        if self.scores is None:
            out["move"] = round(self.move, 6)
        reference = {k: v for k, v in self.reference.items() if k != "scores"}
        reported = None if self.reported is None else {k: v for k, v in self.reported.items() if k != "scores"}
        return {**out, "reference": reference, "reported": reported}


def _log_probabilities(scores: Sequence[float], params: Mapping[str, Any]) -> np.ndarray[Any, Any]:
    w = em_log_weights({"scores": list(scores), "epsilon": params["epsilon"], "sensitivity": params["sensitivity"]})
    top = float(np.max(w))
    return np.asarray(w - (top + math.log(float(np.sum(np.exp(w - top))))))


@dataclass(frozen=True)
class HeldEqual:
    """A pair's composition at the door along one run (module docstring); ``diverged`` when it cannot be held."""

    label: str
    claim: PrivacyClaim
    shares: tuple[Share, ...]
    decisions: tuple[Share, ...]
    """Additive draws the pair moves whose value no release shows (listed, not counted)."""
    diverged: str | None = None

    def loss(self, reported: bool) -> float:
        """The composed loss with the program's parameters (``reported``) or the reference's."""
        if self.diverged is not None:
            return math.nan
        losses = [s.loss(self.claim.measure, s.reported if reported else s.reference) for s in self.shares
                  if s.index is None]
        return sum(losses) + self.selections(reported)

    def selections(self, reported: bool) -> float:
        """The selections' part of :meth:`loss`: |the sum of the path's log-ratios| (pure DP) or the sum of their
        shares (zCDP)."""
        if self.diverged is not None:
            return math.nan
        losses = [s.loss(self.claim.measure, s.reported if reported else s.reference) for s in self.shares
                  if s.index is not None]
        return sum(losses) if self.claim.measure is Measure.ZCDP else abs(sum(losses))

    @property
    def reached(self) -> float:
        return self.loss(False)

    @property
    def implied(self) -> float:
        return self.loss(True)

    def describe(self) -> str:
        symbol = "rho" if self.claim.measure is Measure.ZCDP else "eps"
        if self.diverged is not None:
            return f"the pair {self.label!r} is not composed at the noise door: {self.diverged}"
        top = sorted(self.shares, key=lambda s: -abs(s.loss(self.claim.measure, s.reported)))[:3]
        named = ", ".join(f"{s.site!r} {abs(s.loss(self.claim.measure, s.reported)):.4g}" for s in top)
        return (f"the pair {self.label!r} composes {symbol} = {self.implied:.4g} over the {len(self.shares)} "
                f"draw(s) it moves with the program's parameters ({self.reached:.4g} with the reference's; the "
                f"claim {self.claim.parameter:.4g}; largest: {named})")

    def to_json(self) -> dict[str, Any]:
        if self.diverged is not None:
            return {"pair": self.label, "diverged": self.diverged}
        m = self.claim.measure
        return {"pair": self.label, "reached": json_number(self.reached), "implied": json_number(self.implied),
                "claim": self.claim.parameter, "decisions": [d.site for d in self.decisions][:20],
                "shares": [{**s.to_json(), "reached": json_number(s.loss(m, s.reference)),
                            "implied": json_number(s.loss(m, s.reported))} for s in self.shares[:20]]}


@dataclass(frozen=True)
class DoorRun:
    """The reference's run on f with a transcript's draws, as the door saw it: its draws, its releases, and the
    additive draws whose noisy value no release shows (a small move of it changes nothing: a decision's draw, such
    as a split compared with a threshold, or an unreleased one)."""

    f: tuple[Any, ...]
    seen: tuple[DoorDraw, ...]
    releases: tuple[Any, ...]
    decisions: frozenset[str]


def door_run(run: Run, f: Sequence[Any], draws: Sequence[Draw]) -> DoorRun | None:
    """The run of the reference on f with ``draws`` (answered by site where the kinds agree, seeded elsewhere); None
    if the reference refuses f."""
    on_f = _Door({d.site: d for d in draws}, hold=False)
    try:
        released = run(on_f, f)
    except REFUSALS:
        return None
    decisions: set[str] = set()
    for i, d in enumerate(on_f.seen):
        if d.kind in ADDITIVE_KINDS and d.sensitive is not None:
            step: Any = DECISION_PROBE * float(d.params.get("scale", 1.0)) if d.kind is DrawKind.LAPLACE else 1
            if not all(_shows(run, f, on_f.seen, i, sign * step, released) for sign in (1, -1)):
                decisions.add(d.site)
    return DoorRun(tuple(f), tuple(on_f.seen), tuple(released), frozenset(decisions))


DECISION_PROBE = 1e-3
"""How far (in scales; one unit for the discrete kinds) a draw's noisy value is moved, each way, to see whether a
release shows it: a released value changes the releases both ways; a decision's draw (compared with a threshold)
changes them one way at most, where the move crosses its threshold."""


def _shows(run: Run, f: Sequence[Any], seen: Sequence[DoorDraw], i: int, by: Any, released: Sequence[Any]) -> bool:
    """Whether the releases on f change when draw i's noisy value moves by ``by`` (everything else held)."""
    moved = list(seen)
    d = seen[i]
    moved[i] = DoorDraw(d.site, d.kind, d.params, d.value + by, d.sensitive)
    try:
        again = run(_Door({x.site: x for x in moved}, hold=True), f)
    except REFUSALS:
        return True
    return not _equal(released, again)


def held_equal(run: Run, claim: PrivacyClaim, label: str, base: DoorRun, g: Sequence[Any],
               reported: Mapping[str, Draw]) -> HeldEqual:
    """The pair (f, g)'s composition at the door along ``base`` (the run on f); ``reported``: the program's draws by
    site (their parameters are the implied loss's). A selection counts the log-ratio of the index the run took
    (the path's own outcome), an additive draw whose value a release shows its largest share (its tail); a
    decision's draw is listed, not counted (its composition is the entry's own argument: PrivTree's is not the
    sum of its splits' shares)."""
    on_g = _Door({d.site: d for d in base.seen}, hold=True)
    try:
        released_g = run(on_g, g)
    except REFUSALS as exc:
        return HeldEqual(label, claim, (), (), f"the reference refuses f' with f's draws held ({exc})")
    sites_f, sites_g = [d.site for d in base.seen], [d.site for d in on_g.seen]
    if sites_f != sites_g or on_g.unheld:
        first = next((a for a, b in zip(sites_f, sites_g, strict=False) if a != b), None) or (
            on_g.unheld[0] if on_g.unheld else "the number of draws")
        return HeldEqual(label, claim, (), (), f"f' draws at other sites than f with every value held ({first!r})")
    if not _equal(base.releases, released_g):
        return HeldEqual(label, claim, (), (), "f' releases other values than f with every door value held (a "
                                               "release that is not a post-processing of what the noise door returns)")
    shares: list[Share] = []
    decisions: list[Share] = []
    for a, b in zip(base.seen, on_g.seen, strict=True):
        if not a.kind.privacy_relevant:
            continue
        mine = reported.get(a.site)
        theirs = None if mine is None or mine.kind is not a.kind else dict(mine.params)
        if a.kind is DrawKind.EXPONENTIAL_MECHANISM:
            u, v = tuple(float(x) for x in a.params["scores"]), tuple(float(x) for x in b.params["scores"])
            if u != v:
                shares.append(Share(a.site, a.kind, 0.0, (u, v), int(a.value), dict(a.params), theirs))
        elif a.sensitive is not None and b.sensitive is not None and b.sensitive != a.sensitive:
            (decisions if a.site in base.decisions else shares).append(
                Share(a.site, a.kind, b.sensitive - a.sensitive, None, None, dict(a.params), theirs))
    return HeldEqual(label, claim, tuple(shares), tuple(decisions))


def _equal(a: Any, b: Any) -> bool:
    """Releases equal: the same structure, strings and flags; numbers within :data:`RELEASE_TOLERANCE`."""
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return set(a) == set(b) and all(_equal(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple, np.ndarray)) and isinstance(b, (list, tuple, np.ndarray)):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, (bool, str)) or isinstance(b, (bool, str)) or a is None or b is None:
        return bool(a == b)
    if isinstance(a, (int, float, np.number)) and isinstance(b, (int, float, np.number)):
        return math.isclose(float(a), float(b), rel_tol=RELEASE_TOLERANCE, abs_tol=RELEASE_TOLERANCE)
    return bool(a == b)




DOOR_RUNS = 8
"""Reported runs along which the design's pairs are composed (each pair keeps its largest implied loss)."""


def door_pairs(plan: StatisticalPlan, si: int, runs: Sequence[Sequence[Draw]], f: Sequence[Any] | None = None,
               run: Run | None = None) -> list[HeldEqual]:
    """The design pairs of setting ``si`` composed at the door along the program's reported runs on f (default: the
    setting's first input; the first :data:`DOOR_RUNS` runs; a pair keeps the run of its largest implied loss), the
    largest implied loss first, then those not composed. ``run``: the reference (default) or a variant of it."""
    e, params, space = plan.entry, plan.settings[si], plan.spaces[si]
    claim = e.claim(params)
    if run is None:
        run = entry_run(e, params)
    if f is None:
        f = next(iter(space.families.values()))(horizon_of(e, params))
    best: dict[str, HeldEqual] = {}
    for draws in runs[:DOOR_RUNS]:
        base = door_run(run, f, draws)
        if base is None:
            continue
        reported = {d.site: d for d in draws}
        for label, g in space.neighbours(list(f)):
            h = held_equal(run, claim, label, base, g, reported)
            kept = best.get(label)
            if kept is None or (h.diverged is None and (kept.diverged is not None or h.implied > kept.implied)):
                best[label] = h
    return sorted(best.values(), key=lambda h: (h.diverged is not None, -(h.implied if h.diverged is None else 0)))
