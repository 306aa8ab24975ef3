"""Black-box distinguishing: a Clopper-Pearson lower bound on eps from runs on f and on f'.

Procedure (docs/audits.md, "Black-box distinguishing"):

1. Run the implementation ``2n`` times on f and ``2n`` times on f' (seeded sources
   ``InsecureSeededNoise.independent``). The first n runs of each side are the *selection*
   split, the last n the *held-out* split.
2. Score every transcript (default: the reference model's exact log-likelihood ratio).
3. On the selection split only, choose the rejection event E = {score >= tau} or
   {score <= tau}, which side it favours, and (zCDP) the delta, maximising the lower bound
   minus the claimed eps.
4. On the held-out split count k1/n (runs on the favoured input in E) and k0/n (others in E):
   eps_lb = log((CP_lower(k1) - delta) / CP_upper(k0)), each bound at level a/2.
5. Fail iff eps_lb exceeds the claim: eps for pure DP; for rho-zCDP the eps(delta) of Canonne-Kamath-Steinke 2020
   (Prop. 12; at most Bun-Steinke's rho + 2 sqrt(rho ln(1/delta)): :func:`dpstream.claims.zcdp_to_approx_dp`).

Because E is fixed before the held-out split is looked at, the only multiplicity is the two
Clopper-Pearson bounds: the false-alarm probability is at most ``a``. Point estimates are
never compared with the claim.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from dpstream.audit.neighbours import NeighbourPair
from dpstream.audit.protocol import MechanismFactory, Transcript, derive_seed, sample_transcripts
from dpstream.audit.registry import CheckKind, CheckResult
from dpstream.audit.scores import Score, ScoreLearner, score_all
from dpstream.audit.stats import eps_lower_bound, eps_lower_bounds
from dpstream.claims import Measure, PrivacyClaim, zcdp_to_approx_dp
from dpstream.errors import DPStreamInputError

__all__ = ["ZCDP_DELTAS", "Event", "black_box", "black_box_audit", "choose_event", "claimed_eps"]

FloatArray = npt.NDArray[np.float64]

ZCDP_DELTAS: tuple[float, ...] = (0.2, 0.1, 0.05, 0.02, 0.01, 0.001)
"""The deltas among which the selection split picks one for a zCDP claim."""


@dataclass(frozen=True)
class Event:
    """E = {score >= threshold} (``upper``) or {score <= threshold}; ``favours_f``: P[E|f] is the larger."""

    threshold: float
    upper: bool
    favours_f: bool
    delta: float = 0.0

    def contains(self, scores: FloatArray) -> npt.NDArray[np.bool_]:
        return scores >= self.threshold if self.upper else scores <= self.threshold

    def describe(self) -> str:
        op = ">=" if self.upper else "<="
        side = "f" if self.favours_f else "f'"
        text = f"{{score {op} {self.threshold:.4g}}} favouring {side}"
        return text + (f", delta={self.delta:g}" if self.delta else "")


def claimed_eps(claim: PrivacyClaim, delta: float) -> float:
    """The eps an event with this delta is compared with: eps (pure DP), eps(delta) of
    :func:`dpstream.claims.zcdp_to_approx_dp` (zCDP)."""
    if claim.measure is Measure.PURE_DP:
        return claim.parameter
    if claim.measure is Measure.ZCDP:
        return zcdp_to_approx_dp(claim.parameter, delta)
    return math.inf


def _finite_range(values: FloatArray) -> FloatArray:
    finite = values[np.isfinite(values)]
    return finite if finite.size else np.zeros(1)


def choose_event(s1: FloatArray, s0: FloatArray, claim: PrivacyClaim, level: float) -> tuple[Event, float]:
    """The event maximising (eps lower bound - claimed eps) on the selection split; returns it and that margin."""
    deltas: Sequence[float] = ZCDP_DELTAS if claim.measure is Measure.ZCDP else (0.0,)
    pooled = np.concatenate([s1, s0])
    finite = _finite_range(pooled)
    qs = np.quantile(finite, np.linspace(0.0, 1.0, 257))
    candidates = np.unique(np.concatenate([qs, pooled[~np.isfinite(pooled)]]))
    a1, a0 = np.sort(s1), np.sort(s0)
    n1, n0 = a1.size, a0.size
    best: tuple[float, Event] | None = None
    for upper in (True, False):
        if upper:
            k1 = n1 - np.searchsorted(a1, candidates, side="left")
            k0 = n0 - np.searchsorted(a0, candidates, side="left")
        else:
            k1 = np.searchsorted(a1, candidates, side="right")
            k0 = np.searchsorted(a0, candidates, side="right")
        for favours_f in (True, False):
            hi_k, hi_n, lo_k, lo_n = (k1, n1, k0, n0) if favours_f else (k0, n0, k1, n1)
            for delta in deltas:
                lbs = eps_lower_bounds(hi_k, hi_n, lo_k, lo_n, level, delta)
                margins = lbs - claimed_eps(claim, delta) if math.isfinite(claimed_eps(claim, delta)) else lbs
                i = int(np.argmax(margins))
                if best is None or margins[i] > best[0]:
                    best = (float(margins[i]), Event(float(candidates[i]), upper, favours_f, delta))
    assert best is not None
    return best[1], best[0]


def _histogram(values: FloatArray, lo: float, hi: float, bins: int = 40) -> dict[str, Any]:
    clipped = np.clip(values[np.isfinite(values)], lo, hi)
    counts, edges = np.histogram(clipped, bins=bins, range=(lo, hi) if hi > lo else (lo - 0.5, lo + 0.5))
    return {"edges": [float(e) for e in edges], "counts": [int(c) for c in counts],
            "neg_inf": int(np.sum(np.isneginf(values))), "pos_inf": int(np.sum(np.isposinf(values)))}


def black_box(
    on_f: Sequence[Transcript],
    on_f_prime: Sequence[Transcript],
    claim: PrivacyClaim,
    level: float,
    *,
    score: Score | None = None,
    learn: ScoreLearner | None = None,
    label: str = "",
) -> CheckResult:
    """Black-box check from already sampled transcripts (first half: selection, second half: held-out).

    Give exactly one of ``score`` (a fixed statistic) or ``learn`` (fitted on the selection split).
    """
    if (score is None) == (learn is None):
        raise DPStreamInputError("score", "give exactly one of score or learn", (score, learn))
    n = min(len(on_f), len(on_f_prime)) // 2
    if n < 10:
        raise DPStreamInputError("runs", "need at least 20 runs per input", n)
    sel_f, hold_f = on_f[:n], on_f[n:2 * n]
    sel_fp, hold_fp = on_f_prime[:n], on_f_prime[n:2 * n]
    scorer = score if score is not None else learn(sel_f, sel_fp)  # type: ignore[misc]
    s1_sel, s0_sel = score_all(scorer, sel_f), score_all(scorer, sel_fp)
    event, sel_margin = choose_event(s1_sel, s0_sel, claim, level)
    h1, h0 = score_all(scorer, hold_f), score_all(scorer, hold_fp)
    k1 = int(event.contains(h1).sum())
    k0 = int(event.contains(h0).sum())
    hi_k, lo_k = (k1, k0) if event.favours_f else (k0, k1)
    lb = eps_lower_bound(hi_k, n, lo_k, n, level, event.delta)
    bound = claimed_eps(claim, event.delta)
    passed: bool | None = None if claim.measure is Measure.NOT_PRIVATE else bool(lb <= bound)
    value = lb if math.isfinite(lb) else 0.0
    what = "eps(delta)" if claim.measure is Measure.ZCDP else "eps"
    detail = (f"{label + ': ' if label else ''}held-out event {event.describe()}: {hi_k}/{n} vs {lo_k}/{n}; "
              f"eps lower bound {lb:.4g} (level {level:.2g}) vs claimed {what} {bound:.4g}")
    all_scores = np.concatenate([s1_sel, h1, s0_sel, h0])
    fin = _finite_range(all_scores)
    lo, hi = float(fin.min()), float(fin.max())
    data = {
        "eps_lower_bound": value, "claimed_eps": bound, "delta": event.delta, "runs_per_split": n,
        "event": event.describe(), "selection_margin": sel_margin, "level": level,
        "scores_f": _histogram(np.concatenate([s1_sel, h1]), lo, hi),
        "scores_f_prime": _histogram(np.concatenate([s0_sel, h0]), lo, hi),
    }
    return CheckResult(CheckKind.BLACK_BOX, passed, value, bound, detail, data)


def black_box_audit(
    factory: MechanismFactory,
    pair: NeighbourPair,
    claim: PrivacyClaim,
    *,
    runs: int,
    seed: int,
    level: float,
    score: Score | None = None,
    learn: ScoreLearner | None = None,
    progress: Callable[[str], None] | None = None,
) -> CheckResult:
    """Sample ``2 * runs`` transcripts on each input of ``pair`` and run :func:`black_box`."""
    on_f = sample_transcripts(factory, pair.f, 2 * runs, derive_seed(seed, "black-box f"), progress)
    on_fp = sample_transcripts(factory, pair.f_prime, 2 * runs, derive_seed(seed, "black-box f'"), progress)
    return black_box(on_f, on_fp, claim, level, score=score, learn=learn, label=pair.label)
