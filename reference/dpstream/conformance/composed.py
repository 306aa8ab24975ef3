"""What one neighbouring pair composes over the additive draws it moves: its loss, and the statistic that shows it.

A privacy claim bounds the loss of every neighbouring pair, composed over every draw the pair moves. A leak of 1.1x
to 2x the claim (every scale divided by 1.5, a variance divided by 2.25) shows in no single draw's share: only
the composition over a pair's draws exceeds the claim. This module measures that composition on the reference and
builds the statistic that carries it (docs/conformance.md, "Transcript mode"):

* **Influence.** For a run of the reference on input f with its draws z0 held fixed, the influence of an additive
  draw s is how the features move when z_s moves: (F(z0 + h e_s) - F(z0 - h e_s)) / 2h. A draw whose two one-sided
  moves disagree decides a branch (a split, a selection): it is left out, its share of the claim is spent on
  decisions. The rest form the influence matrix A (features x draws); where A has full column rank, the features
  determine the draws' values: z = z0 + A^+ (F - F(f; z0)).
* **Moves.** A neighbour g shifts the features by F(g; z0) - F(f; z0) with the draws held fixed; the least-squares
  solution of A d = shift is the move d_s of each draw's measured value (1 for a count the pair changes by one).
  The residual is the part of the shift no draw explains (a decision the pair flips).
* **Composed loss.** Pure DP: sum_s |d_s| / b_s over Laplace draws of scale b_s; zCDP: sum_s d_s^2 / (2 sigma_s^2)
  over Gaussian draws of variance sigma_s^2 (a Laplace draw counts (d_s / b_s)^2 / 2). With the reference's
  parameters it is what the pair reaches through its additive draws (``reached``; a leak of factor c can show on
  this pair only where c times it exceeds the claim); with the parameters the program reports, the loss its own
  transcript implies on the pair (``implied``).
* **Decisions.** A Laplace draw that decides a branch (a PrivTree split: the features jump where the draw crosses
  a threshold) is moved by the pair when its threshold on f' differs from f's, with the releases before it held
  equal (the linear draws of f' shifted back by their moves: a later decision sees earlier releases, which are
  public, so only the pair's own change of that decision's statistic counts). Its share is |shift| / b, the
  log-ratio of its outcome in the tail where both thresholds lie; ``reached`` and ``implied`` include it.
* **Statistic.** The pair's log-likelihood ratio composed over its draws, with the program's parameters:
  L(F) = sum_s log p_s(z_s - d_s) - log p_s(z_s) for z = z0 + A^+ (F - F(f; z0)): the most powerful statistic
  for an additive mechanism (Neyman-Pearson); its threshold events {L >= c} have ratio at least e^c. Where the pair
  moves a decision, the *branch* statistic (:class:`BranchRatio`): on the runs whose structural features (those no
  linear draw moves) are those of the outcome in the tail of the largest decision, that outcome's log-ratio plus
  the linear ratio of that branch; the event at its extreme (every draw on the favoured side, the decision in its
  tail) has the ratio of the whole composed loss. Each is a fixed function of a run's features, chosen before the
  held-out runs: a test on it keeps its false-alarm bound, for a correct program as for any other.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from dpstream.claims import Measure, PrivacyClaim
from dpstream.conformance.implied import json_number
from dpstream.noise import ADDITIVE_KINDS, DrawKind
from dpstream.tape import Draw

__all__ = [
    "BranchRatio",
    "Composed",
    "ComposedRatio",
    "Decision",
    "Influence",
    "Move",
    "additive_loss",
    "branch_ratio",
    "carried_over",
    "compose",
    "compose_pair",
    "decisions_moved",
    "influence",
]

FloatArray = npt.NDArray[np.float64]
LINEAR_TOLERANCE = 1e-6
"""Largest difference between a draw's two one-sided influences (relative to their size) for it to count as linear."""
RESIDUAL_SHARE = 0.05
"""A pair whose shift the draws explain to within this share of its norm moves nothing but additive draws."""

Releases = Callable[[Sequence[Any], Sequence[Draw]], "FloatArray | None"]
"""Features of the reference's run on an input with the given draws (None if it cannot run on them)."""
Completes = Callable[[Sequence[Any], Sequence[Draw]], list[Draw]]
"""Every draw the reference asks for on an input given draws (theirs where they fit, new ones seeded): the tape of
a run on a branch the given draws did not take."""


@dataclass(frozen=True)
class Influence:
    """The influence of the linear additive draws of one reference run on input f (module docstring)."""

    base: FloatArray
    """F(f; z0)."""
    matrix: FloatArray
    """A: features x draws, one column per draw of ``draws``."""
    draws: tuple[Draw, ...]
    """The linear additive draws, with their values z0."""
    decisions: int
    """Additive draws left out because they decide a branch."""
    rows: tuple[bool, ...] | None = None
    """The features the influence reads (``SearchDesign.linear``; None: all); the others' rows of A are 0."""

    def masked(self, shift: FloatArray) -> FloatArray:
        """A feature shift restricted to the rows the influence reads."""
        return shift if self.rows is None else np.where(np.asarray(self.rows), shift, 0.0)

    @property
    def identified(self) -> bool:
        """The features determine every linear draw's value (A has full column rank)."""
        return bool(self.draws) and int(np.linalg.matrix_rank(self.matrix)) == len(self.draws)


def influence(draws: Sequence[Draw], f: Sequence[Any], features: Releases, rows: Sequence[bool] | None = None
              ) -> Influence | None:
    """The influence of each additive draw of a run on f (``draws``: its whole tape) on its features (``rows``: only
    those features, the design's linear ones); None if the reference cannot run on the draws."""
    base = features(f, draws)
    if base is None:
        return None
    inf = Influence(base, np.zeros((base.size, 0)), (), 0, None if rows is None else tuple(bool(r) for r in rows))
    columns: list[FloatArray] = []
    kept: list[Draw] = []
    decisions = 0
    for i, d in enumerate(draws):
        if d.kind not in ADDITIVE_KINDS:
            continue
        h: float = 0.25 * float(d.params["scale"]) if d.kind is DrawKind.LAPLACE else 1
        moved = [features(f, _moved(draws, i, sign * h)) for sign in (1, -1)]
        if moved[0] is None or moved[1] is None:
            decisions += 1
            continue
        up, down = inf.masked((moved[0] - base) / h), inf.masked((base - moved[1]) / h)
        size = max(float(np.max(np.abs(up))), float(np.max(np.abs(down))))
        if size <= 1e-12:
            continue  # moves no feature: not released
        if float(np.max(np.abs(up - down))) > LINEAR_TOLERANCE * max(1.0, size):
            decisions += 1
            continue
        columns.append(np.asarray((up + down) / 2, dtype=np.float64))
        kept.append(d)
    matrix = np.stack(columns, axis=1) if columns else np.zeros((base.size, 0))
    return replace(inf, matrix=matrix, draws=tuple(kept), decisions=decisions)


def _moved(draws: Sequence[Draw], i: int, by: float) -> list[Draw]:
    """The draws with draw i moved by ``by`` (a whole number of units for the discrete kinds)."""
    d = draws[i]
    return _set(draws, i, d.value + (by if d.kind is DrawKind.LAPLACE else int(by)))


def additive_loss(kind: DrawKind, delta: float, measure: Measure, params: Mapping[str, Any] | None) -> float:
    """A pair's share of the claim through one additive draw whose measured value it moves by ``delta``, with draw
    parameters ``params`` (None: the program drew nothing there, infinite): pure DP |delta| / scale (a Gaussian
    draw is not pure DP: infinite); zCDP delta^2 / (2 sigma^2), a Laplace draw (delta / scale)^2 / 2. A scale or
    variance of 0 (the values a program reported never vary: ``implied.effective_draws`` takes that for its
    parameter) is no noise: infinite where the pair moves the value, 0 where it does not."""
    if params is None:
        return math.inf
    spread = float(params["sigma2"] if kind is DrawKind.DISCRETE_GAUSSIAN else params["scale"])
    if spread == 0.0:
        return 0.0 if delta == 0 else math.inf
    if kind is DrawKind.DISCRETE_GAUSSIAN:
        return delta ** 2 / (2 * spread) if measure is Measure.ZCDP else math.inf
    eps = abs(delta) / spread
    return eps * eps / 2 if measure is Measure.ZCDP else eps


@dataclass(frozen=True)
class Move:
    """How far a neighbouring pair moves one draw's measured value, and the draw's parameters (the reference's and
    the program's reported ones; None: the program reported no draw there)."""

    site: str
    kind: DrawKind
    delta: float
    reference: Mapping[str, Any]
    reported: Mapping[str, Any] | None

    def loss(self, measure: Measure, params: Mapping[str, Any] | None) -> float:
        """This move's share of the pair's loss with draw parameters ``params`` (module docstring)."""
        return additive_loss(self.kind, self.delta, measure, params)

    def to_json(self) -> dict[str, Any]:
        return {"site": self.site, "move": round(self.delta, 6), "reference": dict(self.reference),
                "reported": None if self.reported is None else dict(self.reported)}


@dataclass(frozen=True)
class Decision:
    """A Laplace draw that decides a branch (z > threshold or not), and the thresholds on f and on f' with the
    releases before it held equal: the pair moves the decision by their difference."""

    site: str
    index: int
    threshold_f: float
    threshold_g: float
    reference: Mapping[str, Any]
    reported: Mapping[str, Any] | None

    @property
    def shift(self) -> float:
        return self.threshold_f - self.threshold_g

    def loss(self, measure: Measure, params: Mapping[str, Any] | None) -> float:
        """The largest log-ratio of the decision's outcome between the pair (reached in the tail where both
        thresholds lie): |shift| / scale, squared over 2 under zCDP."""
        return additive_loss(DrawKind.LAPLACE, self.shift, measure, params)

    def to_json(self) -> dict[str, Any]:
        return {"site": self.site, "threshold_f": round(self.threshold_f, 6), "threshold_g": round(self.threshold_g, 6),
                "reference": dict(self.reference), "reported": None if self.reported is None else dict(self.reported)}


DECISION_RANGE = 12.0
"""A decision's threshold is looked for within this many scales of the draw's value."""
BISECTIONS = 32
"""Halvings of the range: the threshold to 24 scales / 2^32."""
BRANCH_OUTSIDE = 1e6
"""The branch statistic's value on runs outside the branch (beyond every threshold the search tries)."""


def decisions_moved(draws: Sequence[Draw], f: Sequence[Any], g: Sequence[Any], inf: Influence,
                    delta: Sequence[float], features: Releases, reported: Mapping[str, Draw],
                    reference: Mapping[str, tuple[DrawKind, Mapping[str, Any]]],
                    on_f: dict[Hashable, float | None] | None = None) -> list[Decision]:
    """The Laplace draws of ``draws`` that decide a branch on f (the features jump where the draw crosses a value
    within :data:`DECISION_RANGE` scales) and whose threshold the pair moves, on f' the linear draws shifted by
    -``delta`` so that the releases they make are f's (what a later decision sees of earlier releases is then the
    same: only the pair's own change of the decision's statistic is counted). ``on_f`` keeps the thresholds on f
    by :func:`_decided_by` (shared by the pairs, and by the paths that agree up to the draw)."""
    linear = {d.site for d in inf.draws}
    matched = list(draws)
    by_site = {d.site: j for j, d in enumerate(inf.draws)}
    for i, d in enumerate(matched):
        j = by_site.get(d.site)
        if j is not None and abs(float(delta[j])) > 0:
            matched[i] = Draw(d.site, d.kind, d.params, d.value - float(delta[j]))
    out = []
    cache = {} if on_f is None else on_f
    for i, d in enumerate(draws):
        if d.kind is not DrawKind.LAPLACE or d.site in linear:
            continue
        key = _decided_by(draws, i)
        if key not in cache:
            cache[key] = _threshold(draws, i, f, features)
        at_f = cache[key]
        at_g = _threshold(matched, i, g, features) if at_f is not None else None
        if at_f is None or at_g is None or abs(at_f - at_g) <= 1e-6 * float(d.params["scale"]):
            continue
        r = reported.get(d.site)
        kind, asked = reference.get(d.site, (d.kind, d.params))
        out.append(Decision(d.site, i, at_f, at_g, dict(asked),
                            dict(r.params) if r is not None and r.kind is kind else None))
    return out


def _decided_by(draws: Sequence[Draw], i: int) -> Hashable:
    """What draw i's threshold on one input depends on: the draws before it (sites and values: a lenient replay
    reads nothing else of them) and its own site. Later draws do not move where its decision flips."""
    return i, draws[i].site, tuple((d.site, _key(d.value)) for d in draws[:i])


def _key(value: Any) -> Hashable:
    """A draw's value as a dict key (a vector kind's value is an array)."""
    return value if isinstance(value, (int, float, str)) else (np.shape(value), np.asarray(value).tobytes())


def _threshold(draws: Sequence[Draw], i: int, inputs: Sequence[Any], features: Releases) -> float | None:
    """The value of draw i where the features jump (bisection), or None if they do not within the range."""
    d = draws[i]
    scale = float(d.params["scale"])
    lo, hi = float(d.value) - DECISION_RANGE * scale, float(d.value) + DECISION_RANGE * scale
    low, high = features(inputs, _set(draws, i, lo)), features(inputs, _set(draws, i, hi))
    if low is None or high is None or low.shape != high.shape or np.array_equal(low, high):
        return None
    for _ in range(BISECTIONS):
        mid = (lo + hi) / 2
        at = features(inputs, _set(draws, i, mid))
        if at is not None and at.shape == low.shape and np.array_equal(at, low):
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def _set(draws: Sequence[Draw], i: int, value: float) -> list[Draw]:
    out = list(draws)
    d = out[i]
    out[i] = Draw(d.site, d.kind, d.params, value)
    return out


@dataclass(frozen=True)
class BranchRatio:
    """The pair's log-likelihood ratio on the runs whose structural features (those no linear draw moves and the
    decision flips) are the branch's: the linear ratio of that branch plus the decision's outcome term; outside,
    :data:`BRANCH_OUTSIDE` on the side no threshold event favouring the branch's party includes (picklable)."""

    columns: tuple[int, ...]
    values: tuple[float, ...]
    inner: ComposedRatio | None
    outcome: float
    """log P_g(outcome) - log P_f(outcome) of the branch's decision outcome, with the program's scale."""

    def __call__(self, F: FloatArray) -> FloatArray:
        inside = np.all(np.abs(F[:, list(self.columns)] - np.asarray(self.values)) <= 1e-6, axis=1)
        L = (self.inner(F) if self.inner is not None else np.zeros(F.shape[0])) + self.outcome
        outside = BRANCH_OUTSIDE if self.outcome < 0 else -BRANCH_OUTSIDE
        return np.asarray(np.where(inside, L, outside), dtype=np.float64)


def _nudged(draws: Sequence[Draw], sign: float) -> list[Draw]:
    """Every Laplace draw moved by 1 % of its scale, alternately up and down (``sign`` first)."""
    out = []
    for i, d in enumerate(draws):
        if d.kind is DrawKind.LAPLACE:
            step = sign * (1 if i % 2 == 0 else -1) * 0.01 * float(d.params["scale"])
            out.append(Draw(d.site, d.kind, d.params, float(d.value) + step))
        else:
            out.append(d)
    return out


def _stated(params: Mapping[str, Any]) -> tuple[tuple[str, float], ...]:
    """A draw's numeric parameters, as a key."""
    return tuple(sorted((k, float(v)) for k, v in params.items() if isinstance(v, (int, float))))


def _program_params(reported: Mapping[str, Draw], reference: Mapping[str, tuple[DrawKind, Mapping[str, Any]]]
                   ) -> dict[tuple[DrawKind, tuple[tuple[str, float], ...]], dict[str, Any]]:
    """The program's parameters of an additive kind by the kind and parameters the reference asks for at the same
    site: what a site the program did not report (another branch's, another counter's) takes where the reference
    asks the same there."""
    return {(kind, _stated(asked)): dict(r.params) for site, (kind, asked) in reference.items()
            if kind in ADDITIVE_KINDS and (r := reported.get(site)) is not None and r.kind is kind}


def carried_over(reported: Mapping[str, Draw], reference: Mapping[str, tuple[DrawKind, Mapping[str, Any]]],
                 draws: Sequence[Draw]) -> dict[str, Draw]:
    """The program's draws by site, and for each of ``draws`` (the reference's, on another branch) at a site it did
    not report, that draw with the program's parameters where :func:`_program_params` has them. Any fixed parameters
    give a valid statistic; the program's give its events their ratio (the branch's draws at the program's scale)."""
    used = _program_params(reported, reference)
    out = {d.site: Draw(d.site, d.kind, dict(used[(d.kind, _stated(d.params))]), d.value) for d in draws
           if d.site not in reported and (d.kind, _stated(d.params)) in used}
    return {**out, **reported}


def _laplace_log_cdf(x: float, scale: float, upper: bool) -> float:
    """log P(Z <= x) (or log P(Z > x) with ``upper``) for Z ~ Laplace(0, scale)."""
    y = -x if upper else x
    return y / scale - math.log(2.0) if y <= 0 else math.log1p(-0.5 * math.exp(-y / scale))


def branch_ratio(claim: PrivacyClaim, label: str, f: Sequence[Any], g: list[Any], draws: Sequence[Draw],
                 decision: Decision, features: Releases, reported: Mapping[str, Draw],
                 reference: Mapping[str, tuple[DrawKind, Mapping[str, Any]]], complete: Completes,
                 steps: Sequence[int] | None = None) -> BranchRatio | None:
    """The ratio of the pair on the branch of ``decision`` whose outcome lies in the tail of both thresholds (the
    outcome whose log-ratio is the decision's whole loss): the draw set beyond both thresholds by one scale there,
    the branch's linear draws and the pair's moves of them found as in :func:`compose`, and the branch recognised
    by its indicator features (0 or 1: a node in the tree or not) that no draw moves a little and that differ from
    the other outcome's (the structure the decision sets; the rest, a later step's structure, rounded counts, is left
    free). Where the pair's shift on the branch is not a move of its draws (a later step's decision flips there on
    f') and ``steps`` gives each feature's step, the branch is read from the features of the steps up to the
    decision's (the first whose features it flips)."""
    scale = float((decision.reported or decision.reference)["scale"])
    below = decision.threshold_f < 0  # the lower tail: the outcome "z below the threshold"
    low, high = min(decision.threshold_f, decision.threshold_g) - scale, \
        max(decision.threshold_f, decision.threshold_g) + scale
    edge, other = (low, high) if below else (high, low)
    forced = complete(f, _set(draws, decision.index, edge))  # the branch's own draws (new sites seeded)
    inf = influence(forced, f, features)
    moved = features(g, forced)
    # the other outcome (whichever the run took): the branch shows in the structural features the decision flips
    before = features(f, complete(f, _set(draws, decision.index, other)))
    if inf is None or moved is None or before is None or not moved.shape == before.shape == inf.base.shape:
        return None
    carried = carried_over(reported, reference, forced)
    linear = compose(claim, label, g, inf.masked(moved - inf.base), inf, carried, reference) if inf.draws else None
    read = np.ones(inf.base.size, dtype=bool)
    flipped = np.abs(inf.base - before) > 1e-9
    if linear is None and steps is not None and bool(np.any(flipped)):
        upto = np.asarray(steps) <= min(steps[int(r)] for r in np.flatnonzero(flipped))
        near = influence(forced, f, features, [bool(x) for x in upto])
        if near is not None and near.draws and (
                found := compose(claim, label, g, near.masked(moved - near.base), near, carried, reference)):
            inf, linear, read = near, found, upto
    static = np.all(np.abs(inf.matrix) <= 1e-12, axis=1) if inf.draws else np.ones(inf.base.size, dtype=bool)
    for sign in (1.0, -1.0):  # and unmoved when every additive draw moves a little (non-linear ones included)
        nudged = features(f, _nudged(forced, sign))
        if nudged is None or nudged.shape != inf.base.shape:
            return None
        static &= np.abs(nudged - inf.base) <= 1e-12
    flags = np.isin(inf.base, (0.0, 1.0)) & np.isin(before, (0.0, 1.0))  # indicators: a node in the tree or not
    columns = tuple(int(c) for c in np.flatnonzero(read & static & flags & flipped))
    if not columns:
        return None
    outcome = (_laplace_log_cdf(decision.threshold_g, scale, not below)
               - _laplace_log_cdf(decision.threshold_f, scale, not below))
    return BranchRatio(columns, tuple(float(inf.base[c]) for c in columns),
                       linear.ratio if linear is not None else None, outcome)


def compose_pair(claim: PrivacyClaim, label: str, f: Sequence[Any], g: list[Any], draws: Sequence[Draw],
                 inf: Influence, features: Releases, reported: Mapping[str, Draw],
                 reference: Mapping[str, tuple[DrawKind, Mapping[str, Any]]], complete: Completes,
                 on_f: dict[Hashable, float | None] | None = None, steps: Sequence[int] | None = None
                 ) -> Composed | None:
    """:func:`compose` on the pair's feature shift with ``draws`` held fixed, then the decisions it moves
    (:func:`decisions_moved`) and the branch ratio of the largest (:func:`branch_ratio`)."""
    moved = features(g, draws)
    if moved is None or moved.shape != inf.base.shape:
        return None
    linear = compose(claim, label, g, inf.masked(moved - inf.base), inf, reported, reference)
    if linear is None:
        return None
    delta = [0.0] * len(inf.draws)
    sites = {d.site: j for j, d in enumerate(inf.draws)}
    for m in linear.moves:
        delta[sites[m.site]] = m.delta
    decided = decisions_moved(draws, f, g, inf, delta, features, reported, reference, on_f)
    if not decided:
        return linear
    largest = max(decided, key=lambda d: abs(d.shift))
    branch = branch_ratio(claim, label, f, g, draws, largest, features, reported, reference, complete, steps) \
        if all(d.reported is not None for d in decided) else None
    return replace(linear, decisions=tuple(decided), branch=branch)


@dataclass(frozen=True)
class Composed:
    """One neighbouring pair's loss composed over the additive draws it moves (module docstring)."""

    label: str
    g: list[Any]
    measure: Measure
    claim: float
    moves: tuple[Move, ...]
    residual: float
    """Share of the pair's feature shift that no draw explains (decisions it flips)."""
    ratio: ComposedRatio | None
    """The pair's composed log-likelihood ratio with the program's parameters (None: the draws are not identified)."""
    decisions: tuple[Decision, ...] = ()
    """The decisions the pair moves, the releases before them held equal (:func:`decisions_moved`)."""
    branch: BranchRatio | None = None
    """The ratio on the branch of its largest decision where that decision's loss is exact (:func:`branch_ratio`)."""
    selections: tuple[float, float] = (0.0, 0.0)
    """The log-ratio of the selections the run took (exponential mechanisms), with the reference's parameters and
    with the program's, composed at the noise door with every value held
    (:meth:`dpstream.conformance.held_equal.HeldEqual.selections`): the statistic reads the measurements on that
    path; where the releases tell the path's selections from the others', its events carry their ratio too."""

    @property
    def reached(self) -> float:
        """The loss the pair reaches through its additive draws with the reference's parameters."""
        return (sum(m.loss(self.measure, m.reference) for m in self.moves)
                + sum(d.loss(self.measure, d.reference) for d in self.decisions) + self.selections[0])

    @property
    def implied(self) -> float:
        """The loss the program's reported parameters imply on the pair."""
        return (sum(m.loss(self.measure, m.reported) for m in self.moves)
                + sum(d.loss(self.measure, d.reported) for d in self.decisions) + self.selections[1])

    @property
    def exceeds(self) -> bool:
        return self.implied > self.claim * (1 + 1e-9)

    @property
    def event_probability(self) -> float:
        """About how often the pair's composed event occurs on its favoured side: 1/2 per moved draw, times the tail
        probability of its largest decision's outcome at the program's scale (the event needs many runs when small)."""
        p = 0.5 ** len(self.moves)
        if self.decisions:
            d = max(self.decisions, key=lambda x: abs(x.shift))
            scale = float((d.reported or d.reference)["scale"])
            p *= 0.5 * math.exp(-min(abs(d.threshold_f), abs(d.threshold_g)) / scale)
        return p

    def describe(self) -> str:
        symbol = "rho" if self.measure is Measure.ZCDP else "eps"
        decided = f" and {len(self.decisions)} decision(s)" if self.decisions else ""
        decided += f" and its selections ({self.selections[1]:.4g})" if self.selections[1] else ""
        return (f"on the pair {self.label!r} the program's reported draws compose to {symbol} = "
                f"{self.implied:.4g} over {len(self.moves)} draw(s){decided} (claim {self.claim:.4g}; the reference's "
                f"draws reach {self.reached:.4g} there, {self.reached / self.claim:.0%} of the claim)")

    def to_json(self) -> dict[str, Any]:
        return {"pair": self.label, "measure": "rho" if self.measure is Measure.ZCDP else "eps",
                "claim": self.claim, "reached": round(self.reached, 6), "implied": _finite(self.implied),
                "reached_share": round(self.reached / self.claim, 4), "residual": round(self.residual, 4),
                "identified": self.ratio is not None, "moves": [m.to_json() for m in self.moves[:20]],
                "decisions": [d.to_json() for d in self.decisions[:20]], "branch": self.branch is not None,
                "selections": {"reached": _finite(self.selections[0]), "implied": _finite(self.selections[1])}}


@dataclass(frozen=True)
class ComposedRatio:
    """L(F) of the module docstring, a fixed function of a run's features (picklable)."""

    pseudo_inverse: tuple[tuple[float, ...], ...]
    """Rows of A^+ for the moved draws (draws x features)."""
    base: tuple[float, ...]
    origin: tuple[float, ...]
    """z0 of the moved draws."""
    delta: tuple[float, ...]
    gaussian: tuple[bool, ...]
    spread: tuple[float, ...]
    """Scale b (Laplace kinds) or variance sigma^2 (discrete Gaussian) of each moved draw, as the program reports it."""
    path_rows: tuple[int, ...] = ()
    """Where the run's path of selections must be recognised (:meth:`on_path`): the features read."""
    path_projector: tuple[tuple[float, ...], ...] = ()
    """I - A A^+ on those features: a run on the path has its features in F(f; z0) + range(A), exactly (every draw
    of the path acts linearly on them), a run on another path is off it by the other measurements' directions."""

    def on_path(self, path_rows: Sequence[int], projector: FloatArray, pseudo_inverse: FloatArray) -> ComposedRatio:
        """This L read from the features ``path_rows`` alone (``pseudo_inverse``: the moved draws' rows of A^+ on
        them), 0 on a run whose features there are off the path's (farther than :data:`PATH_TOLERANCE`): the
        events L <= -extreme and L >= extreme then hold only on the path, whose selections' log-ratio their ratio
        carries."""
        full = np.zeros((pseudo_inverse.shape[0], len(self.base)))
        full[:, list(path_rows)] = pseudo_inverse
        return replace(self, pseudo_inverse=tuple(tuple(float(x) for x in row) for row in full),
                       path_rows=tuple(int(r) for r in path_rows),
                       path_projector=tuple(tuple(float(x) for x in row) for row in projector))

    @property
    def extreme(self) -> float:
        """The largest |L| over the Laplace draws (sum |d| / b): L reaches it when every draw is on one side's
        extreme (each z beyond both means)."""
        return sum(abs(d) / b for d, b, gauss in zip(self.delta, self.spread, self.gaussian, strict=True)
                   if not gauss)

    def __call__(self, F: FloatArray) -> FloatArray:
        P = np.asarray(self.pseudo_inverse, dtype=np.float64)
        z = np.asarray(self.origin) + (F - np.asarray(self.base)) @ P.T
        d, spread = np.asarray(self.delta), np.asarray(self.spread)
        gauss = np.asarray(self.gaussian)
        laplace = (np.abs(z) - np.abs(z - d)) / spread
        normal = (z * z - (z - d) ** 2) / (2 * spread)
        L = np.asarray(np.where(gauss, normal, laplace).sum(axis=1), dtype=np.float64)
        return np.where(self.off_path(F), 0.0, L) if self.path_rows else L

    def off_path(self, F: FloatArray) -> npt.NDArray[np.bool_]:
        """Which runs' features lie off the path's (:meth:`on_path`; none without a path)."""
        if not self.path_rows:
            return np.zeros(F.shape[0], dtype=bool)
        X = (F - np.asarray(self.base))[:, list(self.path_rows)]
        return np.asarray(np.linalg.norm(X @ np.asarray(self.path_projector, dtype=np.float64).T, axis=1)
                          > PATH_TOLERANCE)


PATH_TOLERANCE = 1e-6
"""How far (Euclidean, on the log-scale features) a run may lie from a path's affine set and be taken on it: far
above the rounding of another evaluation order (1e-13 here), far below the distance of a run on another path
(0.009 and more on 003-alg3's design pair). Any fixed value gives a valid test; it only sets the event."""


def compose(claim: PrivacyClaim, label: str, g: list[Any], shift: FloatArray, inf: Influence,
            reported: Mapping[str, Draw], reference: Mapping[str, tuple[DrawKind, Mapping[str, Any]]]
            ) -> Composed | None:
    """The pair (f, g)'s composed loss from its feature shift with the draws held fixed (module docstring); None if
    it moves no linear additive draw or flips a decision (residual above :data:`RESIDUAL_SHARE`). ``reported``: the
    program's draws by site; ``reference``: the kind and parameters the reference asks for at each site (where
    absent, the influence's draw's own)."""
    if not inf.draws:
        return None
    delta, *_ = np.linalg.lstsq(inf.matrix, shift, rcond=None)
    norm = float(np.linalg.norm(shift))
    if norm <= 1e-12:
        return None
    residual = float(np.linalg.norm(inf.matrix @ delta - shift)) / norm
    if residual > RESIDUAL_SHARE:
        return None  # the pair flips a decision: its shift is not a move of additive draws
    moved = [j for j in range(len(inf.draws)) if abs(float(delta[j])) > 1e-6]
    if not moved:
        return None
    moves = []
    for j in moved:
        d = inf.draws[j]
        r = reported.get(d.site)
        kind, asked = reference.get(d.site, (d.kind, d.params))
        moves.append(Move(d.site, kind, float(delta[j]), dict(asked),
                          dict(r.params) if r is not None and r.kind is kind else None))
    ratio = None
    if inf.identified:  # the program's parameters where it reported the draw, else the reference's (any fixed
        P = np.linalg.pinv(inf.matrix)[moved]  # choice gives a valid statistic; the program's give the most power)
        spread = [float((m.reported or m.reference)["sigma2" if m.kind is DrawKind.DISCRETE_GAUSSIAN else "scale"])
                  for m in moves]
        ratio = ComposedRatio(tuple(tuple(float(x) for x in row) for row in P), tuple(float(x) for x in inf.base),
                              tuple(float(inf.draws[j].value) for j in moved), tuple(m.delta for m in moves),
                              tuple(m.kind is DrawKind.DISCRETE_GAUSSIAN for m in moves), tuple(spread))
    return Composed(label, g, claim.measure, float(claim.parameter), tuple(moves), residual, ratio)


def _finite(x: float) -> float | str:
    return json_number(round(x, 6))
