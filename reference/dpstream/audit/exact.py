"""Exact privacy loss (white-box model checks): the paper's proof, checked numerically.

**One result type.** Every exact loss computed in the verification room, whatever the family, is an
:class:`ExactLoss`: a loss known to lie in ``[lower, upper]`` (equal ends when it is exact; a bracket when
a sum is truncated or a chain rule bounds it), in the claim's measure (pure DP: sup_o |log p(o|f) - log p(o|f')|;
zCDP: max_alpha D_alpha / alpha, or D_alpha at one order ``alpha``), with where it is attained, its named parts
and, for streams, its split over time. :class:`LossFigures` turns the losses of many pairs into the
audit's :class:`~dpstream.audit.registry.CheckResult` (kind ``EXACT_LOSS``).

Three entry points for models given as data, each returning a :class:`~dpstream.audit.registry.CheckResult` of kind
``EXACT_LOSS`` and needing no randomness (no false alarm):

(a) :func:`exact_loss_linear` — a :class:`~dpstream.audit.linear_model.LinearReleaseModel` on
    concrete neighbouring inputs. With W of full column rank the releases are a bijective
    image of the noisy statistics s = S f + z, so the privacy loss of the transcript equals
    that of s, a sum over independent terms. Pure DP: sup_o |log p(o|f) - log p(o|f')| =
    sum_j |shift_j| / b_j for Laplace and discrete Laplace terms (integer shifts), infinite
    for a discrete Gaussian with a non-zero shift. zCDP: D_alpha of each term in closed form
    (Laplace) or by summation over the integer support (discrete Laplace, discrete
    Gaussian), added over the terms, compared with alpha * rho on a grid of alpha.
(b) :func:`exact_loss_finite` — output laws given as explicit {output: probability} tables
    (an exponential mechanism's selection law, a PrivTree subtree distribution).
(c) :func:`exact_loss_pointwise` — any model that gives log p(o | f) pointwise, evaluated on an
    enumerated finite set of outputs (e.g. :func:`integer_grid` for integer noise). The
    enumerated part of the Renyi sum and the sup over enumerated outputs are *lower* bounds of
    the true values (omitted terms are non-negative), so a failure is always a real violation;
    the mass left out, 1 - sum_o p(o|f), is reported as the stated truncation.

A printed noise scale that does not cover the number of statistics an input enters (e.g.
001-alg10 as printed: scale log2(T)/eps, while an input enters floor(log2 T) + 1 nodes) shows
up in (a) as a loss above the claim.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from dpstream.audit.linear_model import LinearReleaseModel, NoiseLaw
from dpstream.audit.neighbours import NeighbourPair
from dpstream.audit.protocol import Encoder, flatten
from dpstream.audit.registry import CheckKind, CheckResult
from dpstream.claims import Measure, PrivacyClaim
from dpstream.errors import DPStreamInputError, require_int_at_least
from dpstream.lazy import LazyModule
from dpstream.noise import DrawKind

_special = LazyModule("scipy.special")

__all__ = [
    "DEFAULT_ALPHAS",
    "ExactLoss",
    "LossFigures",
    "exact_loss_finite",
    "exact_loss_linear",
    "exact_loss_pointwise",
    "finite_renyi",
    "finite_sup_loss",
    "integer_grid",
    "linear_renyi",
    "linear_sup_loss",
    "renyi_shift",
    "sup_loss_shift",
]

FloatArray = npt.NDArray[np.float64]

DEFAULT_ALPHAS: tuple[float, ...] = (1.25, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0, 12.0, 16.0, 32.0, 64.0)
"""Renyi orders checked against alpha * rho for zCDP claims."""

_REL_TOL = 1e-9  # floating-point slack when comparing an exact loss with the claim


@dataclass(frozen=True)
class ExactLoss:
    """A privacy loss computed from a model of the algorithm (never from a run): it lies in ``[lower, upper]``.

    * ``lower == upper``: known exactly (:meth:`exact`); ``lower < upper``: bracketed (a truncated sum, a
      chain-rule bracket); ``upper = inf``: unbounded (e.g. a discrete Gaussian under a non-integer shift,
      releases that are not a post-processing of the noisy statistics).
    * ``measure``: ``PURE_DP`` for the pure-DP loss sup_o |log p(o|f) - log p(o|f')| (or its value at one
      output, where the computation is for one sampled output); ``ZCDP`` for the zCDP cost
      max_alpha D_alpha / alpha, or, when ``alpha`` is set, the Renyi divergence D_alpha at that order (not
      divided by alpha).
    * ``where``: what attains it (the worst pair, output, segment pattern, region); ``parts``: named
      components (JSON-compatible floats); ``per_time``: the loss split over the time steps t = 1, 2, ...
      where the computation gives it (signed: log p(o_t | ...) - log p'(o_t | ...)).
    """

    lower: float
    upper: float
    where: str = ""
    parts: Mapping[str, float] = field(default_factory=dict)
    measure: Measure = Measure.PURE_DP
    alpha: float | None = None
    per_time: tuple[float, ...] = ()

    def __post_init__(self) -> None:
        if self.measure is Measure.NOT_PRIVATE:
            raise DPStreamInputError("measure", "must be PURE_DP or ZCDP", self.measure)
        if self.alpha is not None and (self.measure is not Measure.ZCDP or not self.alpha > 1.0):
            raise DPStreamInputError("alpha", "is an order > 1 of a ZCDP loss (D_alpha)", self.alpha)

    @classmethod
    def exact(cls, value: float, where: str = "", parts: Mapping[str, float] | None = None, *,
              measure: Measure = Measure.PURE_DP, alpha: float | None = None,
              per_time: Sequence[float] = ()) -> ExactLoss:
        """A loss known exactly: ``lower == upper == value``."""
        v = float(value)
        return cls(v, v, where, dict(parts or {}), measure, alpha, tuple(float(x) for x in per_time))

    @classmethod
    def renyi(cls, value: float, alpha: float, where: str = "") -> ExactLoss:
        """D_alpha known exactly."""
        return cls.exact(value, where, measure=Measure.ZCDP, alpha=alpha)

    @classmethod
    def zero(cls, where: str = "") -> ExactLoss:
        return cls(0.0, 0.0, where)

    @property
    def value(self) -> float:
        """The headline number: the upper end (the loss itself when it is exact)."""
        return self.upper

    @property
    def width(self) -> float:
        """``upper - lower`` (0 when exact)."""
        return self.upper - self.lower

    def __add__(self, other: ExactLoss) -> ExactLoss:
        """The loss of two independent mechanisms run together (basic composition: ends, parts and times add)."""
        if (self.measure, self.alpha) != (other.measure, other.alpha):
            raise DPStreamInputError("other", "must have the same measure and order alpha", other.measure)
        parts = dict(self.parts)
        for k, v in other.parts.items():
            parts[k] = parts.get(k, 0.0) + v
        n = max(len(self.per_time), len(other.per_time))
        per_time = tuple((self.per_time[i] if i < len(self.per_time) else 0.0)
                         + (other.per_time[i] if i < len(other.per_time) else 0.0) for i in range(n))
        where = "; ".join(w for w in (self.where, other.where) if w)
        return ExactLoss(self.lower + other.lower, self.upper + other.upper, where, parts, self.measure, self.alpha,
                         per_time)


def _is_integer(x: float) -> bool:
    return abs(x - round(x)) <= 1e-9


def sup_loss_shift(law: NoiseLaw, d: float) -> float:
    """sup_z |log p(z) - log p(z - d)| for one additive term whose mean moves by d."""
    if d == 0.0:
        return 0.0
    if law.kind is DrawKind.LAPLACE:
        return abs(d) / law.parameter
    if not _is_integer(d):
        return math.inf  # disjoint integer supports
    if law.kind is DrawKind.DISCRETE_LAPLACE:
        return abs(round(d)) / law.parameter
    return math.inf  # discrete Gaussian: the log ratio is linear in z, unbounded


def _support_radius(law: NoiseLaw, d: float, alpha: float) -> int:
    sd = math.sqrt(law.variance())
    if law.kind is DrawKind.DISCRETE_LAPLACE:
        tail = 800.0 * law.parameter  # exp(-|z|/b) below e^-800
    else:
        tail = 40.0 * sd
    return math.ceil(alpha * abs(d) + tail) + 2


def renyi_shift(law: NoiseLaw, d: float, alpha: float) -> float:
    """D_alpha(P || Q), P the law of z and Q that of z + d (order alpha > 1).

    Laplace: closed form (1/(alpha-1)) log[alpha/(2alpha-1) e^{(alpha-1)|d|/b} + (alpha-1)/(2alpha-1)
    e^{-alpha|d|/b}]. Integer laws: exact sum over the integer support (terms below e^-700 of the
    largest are beyond double precision); a non-integer shift gives disjoint supports (infinite).
    """
    if not alpha > 1.0:
        raise DPStreamInputError("alpha", "must be > 1", alpha)
    if d == 0.0:
        return 0.0
    if law.kind is DrawKind.LAPLACE:
        x = abs(d) / law.parameter
        a = alpha
        terms = [math.log(a / (2 * a - 1)) + (a - 1) * x, math.log((a - 1) / (2 * a - 1)) - a * x]
        return float(_special.logsumexp(terms)) / (a - 1)
    if not _is_integer(d):
        return math.inf
    shift = round(d)
    radius = _support_radius(law, shift, alpha)
    z = np.arange(-radius, radius + 1, dtype=np.float64)
    lp = law.log_pdf(z)
    lq = law.log_pdf(z - shift)
    return float(_special.logsumexp(alpha * lp + (1.0 - alpha) * lq)) / (alpha - 1.0)


def linear_sup_loss(model: LinearReleaseModel, f: npt.ArrayLike, f_prime: npt.ArrayLike) -> float:
    """sum_j sup-loss of term j under the statistic shift S (f - f') (the pure-DP privacy loss)."""
    shift = model.statistic_shift(f, f_prime)
    return float(sum(sup_loss_shift(law, float(d)) for law, d in zip(model.laws, shift, strict=True)))


def linear_renyi(model: LinearReleaseModel, f: npt.ArrayLike, f_prime: npt.ArrayLike, alpha: float) -> float:
    """D_alpha of the statistics under f against under f' (additive over independent terms)."""
    shift = model.statistic_shift(f, f_prime)
    return float(sum(renyi_shift(law, float(-d), alpha) for law, d in zip(model.laws, shift, strict=True)))


def _claim_passes(claim: PrivacyClaim, value: float) -> bool | None:
    if claim.measure is Measure.NOT_PRIVATE:
        return None
    return value <= claim.parameter * (1.0 + _REL_TOL)


class LossFigures:
    """Accumulates per-pair :class:`ExactLoss` values (pure: the upper end) or D_alpha curves (zCDP: the
    largest D_alpha / alpha) into a CheckResult."""

    def __init__(self, claim: PrivacyClaim, alphas: Sequence[float]) -> None:
        self.claim = claim
        self.alphas = tuple(float(a) for a in alphas)
        self.labels: list[str] = []
        self.values: list[float] = []
        self.curves: list[list[float]] = []

    @property
    def zcdp(self) -> bool:
        return self.claim.measure is Measure.ZCDP

    def add(self, label: str, loss: ExactLoss) -> None:
        """A pure-DP loss of one pair (its upper end is what the claim is compared with)."""
        if self.zcdp or loss.measure is not Measure.PURE_DP:
            raise DPStreamInputError("loss", "must be a pure-DP loss of a pure-DP claim (zCDP: add_curve)", loss)
        self.labels.append(label)
        self.values.append(float(loss.upper))

    def add_curve(self, label: str, curve: Sequence[ExactLoss]) -> None:
        """The D_alpha of one pair at every order of ``alphas`` (their upper ends)."""
        if [c.alpha for c in curve] != list(self.alphas):
            raise DPStreamInputError("curve", f"must give D_alpha at alpha = {list(self.alphas)}",
                                     [c.alpha for c in curve])
        self.labels.append(label)
        values = [float(c.upper) for c in curve]
        self.curves.append(values)
        self.values.append(max(r / a for r, a in zip(values, self.alphas, strict=True)))

    def result(self, method: str, extra: str = "", inconclusive_above: bool = False) -> CheckResult:
        if not self.values:
            raise DPStreamInputError("pairs", "must contain at least one neighbouring pair", [])
        worst = int(np.argmax(self.values))
        value = self.values[worst]
        passed = _claim_passes(self.claim, value)
        if inconclusive_above and passed is False:
            passed = None
        what = "max_alpha D_alpha/alpha" if self.zcdp else "sup |log p(o|f) - log p(o|f')|"
        detail = (f"{method}: {what} = {value:.6g} at {self.labels[worst]} over {len(self.values)} pair(s); "
                  f"claim {self.claim.symbol} = {self.claim.parameter:g}")
        if extra:
            detail += f"; {extra}"
        data: dict[str, Any] = {"labels": self.labels, "values": [_json_float(v) for v in self.values],
                                "method": method}
        if self.zcdp:
            data["alphas"] = list(self.alphas)
            data["renyi_worst"] = [_json_float(v) for v in self.curves[worst]]
        return CheckResult(CheckKind.EXACT_LOSS, passed, value, self.claim.parameter, detail, data)


def _json_float(v: float) -> float | None:
    return None if not math.isfinite(v) else float(v)


def exact_loss_linear(
    model: LinearReleaseModel,
    pairs: Sequence[NeighbourPair],
    claim: PrivacyClaim,
    *,
    input_vector: Encoder = flatten,
    alphas: Sequence[float] = DEFAULT_ALPHAS,
) -> CheckResult:
    """(a) Exact loss of a linear release model on every pair; the worst pair is the headline.

    ``input_vector`` maps a pair's input sequence to the model's input vector f (default: flatten).
    When W is not injective the computed loss is only an upper bound (the releases are a function of
    the statistics): a value above the claim is then reported as inconclusive (``passed=None``).
    """
    figures = LossFigures(claim, alphas)
    for pair in pairs:
        f, g = input_vector(pair.f), input_vector(pair.f_prime)
        if figures.zcdp:
            figures.add_curve(pair.label, [
                ExactLoss.renyi(max(linear_renyi(model, f, g, a), linear_renyi(model, g, f, a)), a)
                for a in figures.alphas])
        else:
            figures.add(pair.label, ExactLoss.exact(linear_sup_loss(model, f, g)))
    laws = sorted({law.describe() for law in model.laws})
    extra = f"terms {len(model.laws)} ({', '.join(laws[:3])}{', ...' if len(laws) > 3 else ''})"
    if not model.injective:
        extra += "; W not injective: the value is an upper bound"
    return figures.result("linear model", extra, inconclusive_above=not model.injective)


def finite_sup_loss(p: Mapping[Any, float], q: Mapping[Any, float]) -> float:
    """sup_o |log p(o) - log q(o)| over the union of supports (infinite if the supports differ)."""
    worst = 0.0
    for o in set(p) | set(q):
        a, b = float(p.get(o, 0.0)), float(q.get(o, 0.0))
        if a == 0.0 and b == 0.0:
            continue
        if a == 0.0 or b == 0.0:
            return math.inf
        worst = max(worst, abs(math.log(a) - math.log(b)))
    return worst


def finite_renyi(p: Mapping[Any, float], q: Mapping[Any, float], alpha: float) -> float:
    """D_alpha(p || q) = (1/(alpha-1)) log sum_o p(o)^alpha q(o)^(1-alpha) (alpha > 1)."""
    if not alpha > 1.0:
        raise DPStreamInputError("alpha", "must be > 1", alpha)
    logs: list[float] = []
    for o, a in p.items():
        if a <= 0.0:
            continue
        b = float(q.get(o, 0.0))
        if b <= 0.0:
            return math.inf
        logs.append(alpha * math.log(a) + (1.0 - alpha) * math.log(b))
    return float(_special.logsumexp(logs)) / (alpha - 1.0) if logs else 0.0


def exact_loss_finite(
    laws: Sequence[tuple[str, Mapping[Any, float], Mapping[Any, float]]],
    claim: PrivacyClaim,
    *,
    alphas: Sequence[float] = DEFAULT_ALPHAS,
) -> CheckResult:
    """(b) Exact loss between explicit output laws (label, law under f, law under f') for each pair."""
    figures = LossFigures(claim, alphas)
    for label, p, q in laws:
        for name, law in (("p", p), ("q", q)):
            total = float(sum(law.values()))
            if any(v < 0 for v in law.values()) or abs(total - 1.0) > 1e-9:
                raise DPStreamInputError(name, "must be a probability table summing to 1", total)
        if figures.zcdp:
            figures.add_curve(label, [ExactLoss.renyi(max(finite_renyi(p, q, a), finite_renyi(q, p, a)), a)
                                      for a in figures.alphas])
        else:
            figures.add(label, ExactLoss.exact(finite_sup_loss(p, q)))
    return figures.result("finite output law")


def exact_loss_pointwise(
    log_p: Callable[[Any, Sequence[Any]], float],
    outputs: Callable[[NeighbourPair], Iterable[Any]],
    pairs: Sequence[NeighbourPair],
    claim: PrivacyClaim,
    *,
    alphas: Sequence[float] = DEFAULT_ALPHAS,
    max_truncated_mass: float = 1e-9,
) -> CheckResult:
    """(c) Generic hook: ``log_p(o, inputs)`` pointwise, summed over ``outputs(pair)`` (a finite set).

    Reports the truncated mass 1 - sum_o p(o|f) (and under f'); values computed on the enumerated
    set are lower bounds of the full sup and Renyi sums, so ``passed=False`` is always a real
    violation. ``passed=True`` additionally requires the truncated mass to be at most
    ``max_truncated_mass`` (otherwise the result is inconclusive, ``passed=None``).
    """
    figures = LossFigures(claim, alphas)
    truncated = 0.0
    for pair in pairs:
        lp: list[float] = []
        lq: list[float] = []
        for o in outputs(pair):
            lp.append(float(log_p(o, pair.f)))
            lq.append(float(log_p(o, pair.f_prime)))
        a, b = np.asarray(lp), np.asarray(lq)
        mass_p = float(np.exp(_special.logsumexp(a))) if a.size else 0.0
        mass_q = float(np.exp(_special.logsumexp(b))) if b.size else 0.0
        truncated = max(truncated, 1.0 - mass_p, 1.0 - mass_q)
        both = np.isfinite(a) & np.isfinite(b)
        one = np.isfinite(a) ^ np.isfinite(b)
        sup = math.inf if one.any() else float(np.max(np.abs(a[both] - b[both]), initial=0.0))
        if figures.zcdp:
            figures.add_curve(pair.label, [
                ExactLoss.renyi(max(_renyi_from_logs(a, b, al), _renyi_from_logs(b, a, al)), al)
                for al in figures.alphas])
        else:
            figures.add(pair.label, ExactLoss.exact(sup))
    result = figures.result("pointwise model", f"truncated mass <= {max(truncated, 0.0):.3g}")
    if result.passed and truncated > max_truncated_mass:
        return CheckResult(result.kind, None, result.value, result.bound,
                           result.detail + f" (inconclusive: truncated mass above {max_truncated_mass:g})", result.data)
    return result


def _renyi_from_logs(a: FloatArray, b: FloatArray, alpha: float) -> float:
    keep = np.isfinite(a)
    if np.any(keep & ~np.isfinite(b)):
        return math.inf
    if not keep.any():
        return 0.0
    return float(_special.logsumexp(alpha * a[keep] + (1.0 - alpha) * b[keep])) / (alpha - 1.0)


def integer_grid(center: Sequence[int], radius: int) -> Iterator[tuple[int, ...]]:
    """All integer vectors within l_inf distance ``radius`` of ``center`` (for :func:`exact_loss_pointwise`)."""
    radius = require_int_at_least("radius", radius, 0)
    ranges = [range(int(c) - radius, int(c) + radius + 1) for c in center]
    return itertools.product(*ranges)
