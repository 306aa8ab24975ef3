"""The privacy loss a program's own transcript implies, composed as the reference composes its draws.

Transcript mode replays the reference on the draws a program reports. Where a privacy-relevant draw's parameters
differ from the reference's at the same site (docs/conformance.md, "Transcript mode"), the reported parameters say
how much stronger (less noisy) that draw is than the reference's: its *strength ratio* r, in the unit of the
entry's claim (pure DP: epsilon; zCDP: rho):

==========================  ===================================  =====================================
kind                        pure-DP claim                        zCDP claim
==========================  ===================================  =====================================
laplace, discrete_laplace   scale_ref / scale_prog               (scale_ref / scale_prog)^2
discrete_gaussian           (not a pure-DP draw: inf)            sigma2_ref / sigma2_prog
exponential_mechanism       (eps/sens)_prog / (eps/sens)_ref     ((eps/sens)_prog / (eps/sens)_ref)^2
a site the reference draws  inf (the value it protects is        inf
and the program did not     released without noise)
==========================  ===================================  =====================================

The reference's accountant composes its sites' shares of the claim additively (basic composition for pure DP,
additivity of rho for zCDP), and the shares of a neighbouring pair sum to at most the claim. A site whose draw is r
times as strong spends r times its share, so the loss the transcript implies is at most claim * max r, and equals
claim * r when every privacy-relevant draw of the run is r times as strong (a scale divided everywhere). It exceeds
the claim whenever a site with r > 1 carries a positive share for some neighbouring pair -- which the black-box
search then has to show: the implied loss is the program's own word, never a certificate (an honest report is
hypothesis H1 of proofs/proof_transcript_inheritance.py; a lying program could report anything).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.optimize import brentq

from dpstream.audit.draw_laws import selection_moments
from dpstream.claims import Measure, PrivacyClaim
from dpstream.conformance.tape_mode import DrawIssue
from dpstream.noise import DrawKind
from dpstream.tape import Draw

__all__ = ["EffectiveScale", "ImpliedLoss", "SiteRatio", "effective_draws", "implied_loss", "json_number",
           "site_line", "strength_ratio"]


@dataclass(frozen=True)
class SiteRatio:
    """One privacy-relevant draw of a transcript that is stronger or weaker than the reference's."""

    site: str
    kind: str
    reported: Mapping[str, Any] | None
    """The program's parameters (None: the site was not reported)."""
    reference: Mapping[str, Any]
    ratio: float

    def describe(self) -> str:
        if self.reported is None:
            return f"{self.site!r}: the reference draws a {self.kind} there, the program drew nothing"
        return (f"{self.site!r}: {self.kind} {_shown(self.reported)} where the reference draws "
                f"{_shown(self.reference)} (strength x{self.ratio:.3g})")

    def to_json(self) -> dict[str, Any]:
        return {"site": self.site, "kind": self.kind, "reported": _plain(self.reported),
                "reference": _plain(self.reference), "ratio": json_number(self.ratio)}


@dataclass(frozen=True)
class ImpliedLoss:
    """What a transcript implies (module docstring): ``at_most`` = claim x the largest ratio; ``uniform`` when every
    privacy-relevant draw compared has that one ratio (then the implied loss is exactly ``at_most``)."""

    claim: float
    symbol: str
    sites: tuple[SiteRatio, ...]
    compared: int
    """Privacy-relevant draws compared (the ratios are over these)."""

    @property
    def worst(self) -> SiteRatio | None:
        return max(self.sites, key=lambda s: s.ratio, default=None)

    @property
    def ratio(self) -> float:
        return self.worst.ratio if self.worst is not None else 1.0

    @property
    def at_most(self) -> float:
        return self.claim * self.ratio

    @property
    def exceeds(self) -> bool:
        return self.ratio > 1.0

    @property
    def uniform(self) -> bool:
        return bool(self.sites) and len(self.sites) == self.compared and len({s.ratio for s in self.sites}) == 1

    def describe(self) -> str:
        if not self.exceeds:
            return f"the reported draws imply no loss above the claim ({self.symbol} = {self.claim:.4g})"
        assert self.worst is not None
        how = (f"every one of its {self.compared} privacy-relevant draws x{self.ratio:.3g} as strong as the "
               f"reference's, so the loss is {self.symbol} = {self.at_most:.4g}" if self.uniform else
               f"{len(self.sites)} of {self.compared} privacy-relevant draws found stronger than the reference's "
               f"(where a decision went otherwise, the reference draws no counterpart to compare), the "
               f"strongest x{self.ratio:.3g} ({self.worst.describe()}), so the loss is above the claim wherever "
               f"that site carries a share, and at most {self.symbol} = {self.at_most:.4g}")
        return f"the program's transcript implies more than the claim {self.symbol} = {self.claim:.4g}: {how}"

    def to_json(self) -> dict[str, Any]:
        return {"claim": self.claim, "measure": self.symbol, "ratio": json_number(self.ratio),
                "at_most": json_number(self.at_most), "uniform": self.uniform, "compared": self.compared,
                "sites": [s.to_json() for s in sorted(self.sites, key=lambda s: -s.ratio)[:20]]}


def strength_ratio(kind: DrawKind, reported: Mapping[str, Any] | None, reference: Mapping[str, Any],
                   measure: Measure) -> float:
    """How many times as strong the reported draw is as the reference's, in the claim's unit (module docstring)."""
    if reported is None:
        return math.inf
    squared = measure is Measure.ZCDP
    try:
        if kind in (DrawKind.LAPLACE, DrawKind.DISCRETE_LAPLACE):
            r = float(reference["scale"]) / float(reported["scale"])
        elif kind is DrawKind.DISCRETE_GAUSSIAN:
            if measure is not Measure.ZCDP:
                return math.inf
            return float(reference["sigma2"]) / float(reported["sigma2"])
        elif kind is DrawKind.EXPONENTIAL_MECHANISM:
            r = ((float(reported["epsilon"]) / float(reported["sensitivity"]))
                 / (float(reference["epsilon"]) / float(reference["sensitivity"])))
        else:
            return 1.0
    except (KeyError, TypeError, ValueError, ZeroDivisionError):
        return math.inf
    return r * r if squared else r


def implied_loss(claim: PrivacyClaim, issues: Iterable[DrawIssue], compared: int) -> ImpliedLoss:
    """The loss implied by the draw issues of one or more replays (``params`` issues: the program's parameters in
    ``expected``, the reference's in ``got``; ``unexpected-site``: a draw the program did not report), over
    ``compared`` privacy-relevant draws. Only ratios above 1 are kept (a weaker draw is no leak)."""
    sites: dict[str, SiteRatio] = {}
    for issue in issues:
        if issue.what not in ("params", "unexpected-site") or not issue.kind:
            continue
        kind = DrawKind(issue.kind)
        if not kind.privacy_relevant:
            continue
        reported = issue.expected if issue.what == "params" else None  # unexpected-site: the program drew nothing
        reference = issue.got if isinstance(issue.got, Mapping) else {}
        ratio = strength_ratio(kind, reported, reference, claim.measure)
        if ratio > 1.0 and (issue.site not in sites or sites[issue.site].ratio < ratio):
            sites[issue.site] = SiteRatio(issue.site, kind.value, reported, reference, ratio)
    symbol = "rho" if claim.measure is Measure.ZCDP else "eps"
    return ImpliedLoss(claim.parameter, symbol, tuple(sites.values()), max(compared, len(sites)))


def _shown(params: Mapping[str, Any]) -> str:
    return "{" + ", ".join(f"{k}: {v:.4g}" if isinstance(v, float) else f"{k}: ..." if isinstance(v, list)
                           else f"{k}: {v}" for k, v in params.items()) + "}"


def _plain(params: Mapping[str, Any] | None) -> Any:
    if params is None:
        return None
    return {k: v for k, v in params.items() if not isinstance(v, list)}


def json_number(x: float) -> float | str:
    """``x``, or ``"inf"`` where JSON has no number for it."""
    return x if math.isfinite(x) else "inf"


@dataclass(frozen=True)
class EffectiveScale:
    """A group of reported draws (one kind, one stated parameter, one printed line) whose values do not follow the
    stated law and are less spread than it says (an exponential mechanism's indices: more concentrated on the high
    scores): the parameter their values show, which transcript mode takes as the program's (:func:`effective_draws`)."""

    kind: str
    stated: Mapping[str, Any]
    estimated: Mapping[str, Any]
    draws: int
    line: str = ""
    """The sites' line (:func:`site_line`)."""

    def describe(self) -> str:
        (name, value), = ((k, v) for k, v in self.estimated.items())
        at = f" at {self.line!r}" if self.line else ""
        return (f"the reported values of the {self.kind} draws{at} stated {_shown(self.stated)} have {name} "
                f"{value:.4g} (estimated from {self.draws} values): taken as the program's parameter")

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "line": self.line, "stated": dict(self.stated), "estimated": dict(self.estimated),
                "draws": self.draws}


def site_line(site: str) -> str:
    """The printed line a site names, its indices left out: '001-alg1 L6 t=1 v=0.0' -> '001-alg1 L6',
    '002-alg2 u5 b=1 / 002-alg3 u8 t=2' -> '002-alg2 u5 / 002-alg3 u8' (docs/conformance.md, draw sites)."""
    return " ".join(word for word in site.split() if "=" not in word)


SPREAD_ERRORS = 3.0
"""An estimated scale (variance) counts only where it is below the stated one by this many standard errors."""


ESTIMATED = (DrawKind.LAPLACE, DrawKind.DISCRETE_LAPLACE, DrawKind.DISCRETE_GAUSSIAN, DrawKind.EXPONENTIAL_MECHANISM)
"""The kinds whose parameter :func:`effective_draws` reads from the values (the others are kept as reported)."""


def effective_draws(runs: Sequence[Sequence[Draw]], flagged: Iterable[str]
                    ) -> tuple[list[list[Draw]], list[EffectiveScale]]:
    """``runs`` with the parameters of each group of additive draws (a kind, one stated parameter and one printed
    line: a program may draw one line's noise at the stated scale and another's, stated alike, below it) that
    contains a ``flagged`` site (a law test failed there) replaced by the ones its values show, where those are below
    the stated ones by :data:`SPREAD_ERRORS` standard errors (the values less noisy than reported: a sampler that
    divides its scale, a variance mistaken for a standard deviation). Maximum likelihood with location 0: Laplace
    scale = mean |z|; discrete Laplace: the t with E|z| = 2q / (1 - q^2), q = e^(-1/t); discrete Gaussian
    sigma^2 = mean z^2; an exponential mechanism (one stated epsilon and sensitivity, each draw its own scores): the
    epsilon that maximises the likelihood of the indices, where above the stated one (:func:`_selection_estimate`).
    The values are still the program's; only the parameters it stated are corrected, so the
    implied loss and the composed pairs are those of the noise it used. Never a certificate."""
    flagged = set(flagged)
    groups: dict[Group, list[Draw]] = {}  # an exponential mechanism's group: one stated epsilon and sensitivity (its
    # scores are the draw's own)
    for draws in runs:
        for d in draws:
            if d.kind in ESTIMATED:
                groups.setdefault(_key(d), []).append(d)
    # a law test pools one kind and stated parameter over every line (and names a few of its sites): each line of a
    # flagged pool is estimated on its own
    pools = {(kind, stated) for (kind, stated, _), draws in groups.items() if flagged & {d.site for d in draws}}
    replaced: dict[Group, dict[str, Any]] = {}
    found: list[EffectiveScale] = []
    for (kind, stated, line), draws in groups.items():
        if (kind, stated) not in pools:
            continue
        if kind is DrawKind.EXPONENTIAL_MECHANISM:
            estimate = _selection_estimate(draws, dict(stated))
        else:
            estimate = _estimate(kind, np.asarray([float(d.value) for d in draws], dtype=np.float64), dict(stated))
        if estimate is not None:
            replaced[(kind, stated, line)] = estimate
            found.append(EffectiveScale(kind.value, dict(stated), estimate, len(draws), line))
    if not replaced:
        return [list(r) for r in runs], []
    out = [[Draw(d.site, d.kind, {**d.params, **replaced[key]}, d.value)
             if d.kind in ESTIMATED and (key := _key(d)) in replaced else d
            for d in draws] for draws in runs]
    return out, found


Group = tuple[DrawKind, tuple[tuple[str, float], ...], str]


def _key(d: Draw) -> Group:
    """A group of draws: one kind, one stated parameter (an exponential mechanism's scores left out), one line."""
    return d.kind, tuple(sorted((k, float(v)) for k, v in d.params.items() if k != "scores")), site_line(d.site)


SELECTION_CAP = 64.0
"""The largest multiple of the stated epsilon :func:`_selection_estimate` reads from the indices."""


def _selection_estimate(draws: Sequence[Draw], stated: Mapping[str, float]) -> dict[str, Any] | None:
    """The epsilon the indices show (maximum likelihood: P(i) proportional to exp(eps u_i / (2 Delta)) with each draw's
    scores u), if above the stated one by :data:`SPREAD_ERRORS` standard errors (Fisher information: the sum of the
    variances of u / (2 Delta) under the estimate)."""
    if len(draws) < 30:
        return None
    e0 = float(stated["epsilon"])
    if selection_moments(draws, 0.0)[0] <= 0:
        return None  # the indices favour the low scores: no epsilon above 0 fits better
    cap = SELECTION_CAP * e0
    def slope(eps: float) -> float:
        return selection_moments(draws, eps)[0]

    estimate = cap if slope(cap) > 0 else float(brentq(slope, 0.0, cap, xtol=1e-9 * e0))
    info = selection_moments(draws, estimate)[1]
    if info <= 0:
        return None
    return {"epsilon": estimate} if estimate > e0 + SPREAD_ERRORS / math.sqrt(info) else None


def _estimate(kind: DrawKind, z: np.ndarray[Any, Any], stated: Mapping[str, float]) -> dict[str, Any] | None:
    """The parameter the values z show, if below the stated one by :data:`SPREAD_ERRORS` standard errors."""
    n = z.size
    if n < 30:
        return None
    if kind is DrawKind.DISCRETE_GAUSSIAN:
        sigma2 = float(np.mean(z * z))
        s = stated["sigma2"]
        return {"sigma2": sigma2} if sigma2 < s * (1 - SPREAD_ERRORS * math.sqrt(2 / n)) else None
    m = float(np.mean(np.abs(z)))
    s = stated["scale"]
    if kind is DrawKind.LAPLACE:
        return {"scale": m} if m < s * (1 - SPREAD_ERRORS / math.sqrt(n)) else None
    if m <= 0:
        return None
    q = (math.sqrt(1 + m * m) - 1) / m
    t = -1 / math.log(q) if 0 < q < 1 else math.inf
    return {"scale": t} if t < s * (1 - SPREAD_ERRORS / math.sqrt(n)) else None
