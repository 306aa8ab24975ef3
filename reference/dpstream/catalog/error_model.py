"""The error model: how far two correct floating-point evaluations of an entry's computation can be apart.

Every comparison the kit makes between the reference and another implementation -- a release number, a draw
parameter, a branch -- allows what rounding can explain, and nothing more (docs/conformance.md, "The error model").
An :class:`ErrorModel` on each streaming catalog entry turns one case (parameters, inputs, tape) into
:class:`Bounds`: the tolerance of its releases, the tolerance of its draw parameters, and the slack its computed
decisions inherit. The bounds are derived from the computation -- the size of its operands, the number of rounded
operations, the elementary functions in it -- with u = 2^-53 and gamma(n) = n u / (1 - n u)
(:mod:`dpstream.arithmetic`); they hold for every evaluation order, with or without FMA, with elementary functions
within :data:`~dpstream.arithmetic.FUNCTION_ULPS` units in the last place. Nothing here is tuned to pass: the
perturbation self-test (tests/catalog/test_error_model.py) measures how much of each bound the reference's own
re-orderings use, and the planted mistakes it must still convict lie far outside.

Two shapes of computation:

* ``sums`` (the counters, PHDStream, PrivTree, the longitudinal and hypercube synthesizers): every released number
  is a sum of at most n operands -- input values and additive noise values, each scaled by at most ``extra_ops``
  more rounded operations (Ext_T's divisions by the fanout) -- so two evaluations differ by at most
  2 gamma(n + extra_ops) A, A the sum of the operands' absolute values (inputs by the entry's ``mass``, plus every
  additive draw on the tape). Integer releases are compared exactly whatever the bound (by value).
* ``mw`` (the multiplicative-weights entries 000-alg1..3, 003-alg1..3): a fit is a chain of K MW steps
  p <- p e^a / sum(p e^a), a = (m - N q(p)) / (2N) on the query's cells. Each step adds to the log of every weight at
  most e = 2 u ((FUNCTION_ULPS + 3)(L + A) + 2 n + FUNCTION_ULPS + 4) (n = |X| cells; L >= |log p| for a non-zero
  weight, at most 745; A >= |a|), and the normalisation removes any error common to all cells, so the spread of the
  log-errors after K steps is at most B = sum of e over the steps (first order; the step is non-expansive in L2(p)
  for an error already in p, which is where the chain's feedback would enter). A weight's relative error is then
  below B (below 1 in every case: a fitted dataset of mass N holds at most N per cell), a release of total mass
  R is within R min(B, 1) + 2 gamma(terms) R, and a score |q(nabla f) - q(h)| is within the same on the mass N plus
  the rounding of its own sum. A is bounded by (M + N) / (2 N) with M the largest measurement (the records of the
  run plus every noise value) and N the smallest positive mass a fit uses; L by ln n + 2 A per step so far. Where
  a weight falls below the smallest normal double relative to the largest (:data:`LOG_NORMAL`), B is 1: kept as a
  double the weight is lost, kept as a logarithm it is not, and a later step can raise it to any size.

Draw parameters: a float parameter computed from the privacy parameters by at most ``param_ops`` rounded
operations and ``param_functions`` elementary functions is compared within the relative tolerance
2 gamma(param_ops + FUNCTION_ULPS param_functions) (both sides err); a cell bound of a ``uniform_box`` (PHDStream:
lo + i w / fanout at every level, within [0, 1]) within 2 gamma(cell_ops) absolutely; a score of an exponential
mechanism (``mw``) within the score bound above.

Decisions (:class:`dpstream.arithmetic.Decision`): the algorithm notes the band of each compared quantity's own
evaluation; a quantity computed from the run's sums (``inherits``) carries the case's release bound on top. A case
with a decision within its band is *ambiguous* (:func:`ambiguous_decisions`): the vector generator never ships
one, the differential mode neither convicts nor counts one.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from dpstream.arithmetic import FUNCTION_ULPS, Decision, Notes, U, gamma
from dpstream.catalog.codecs import Tolerance, features_of
from dpstream.noise import ADDITIVE_KINDS
from dpstream.tape import Tape

__all__ = [
    "Bounds",
    "ErrorModel",
    "ambiguous_decisions",
    "moves_mass",
    "numbers_mass",
    "records_mass",
    "steps_mass",
]

LOG_SMALLEST = 745.2
"""|ln| of the smallest positive double (4.9e-324): a weight below it is 0 in every evaluation that keeps weights
as doubles."""
LOG_NORMAL = 708.39
"""|ln| of the smallest normal double (2^-1022 = 2.2e-308). A weight further below the largest is subnormal or 0
where weights are kept as doubles (the reference's order, docs/tabular.md's ``mw_fit``) and exact where they are
kept as logarithms (a log-space evaluation, as correct): a later step that raises it shows the difference at any
size (the outside Rust 003-alg2, 2026-11-29: 0.25 released where the reference releases 0, eps = 0.01). A fit in
which a weight falls this low constrains its releases to nothing but their mass (:meth:`ErrorModel._mw`)."""

Mass = Callable[[Mapping[str, Any], Sequence[Any]], float]
"""(params, inputs) -> the sum of the absolute values of the input operands a release sums."""


def numbers_mass(params: Mapping[str, Any], inputs: Sequence[Any]) -> float:
    """every number of the inputs (counters, tree functions, reports, noisy counts)"""
    return math.fsum(abs(x) for x in features_of(list(inputs)) if math.isfinite(x))


def moves_mass(params: Mapping[str, Any], inputs: Sequence[Any]) -> float:
    """the moves of the batches (+1 inserts, -1 removes; the coordinates only locate points)"""
    return math.fsum(abs(float(m)) for batch in inputs if isinstance(batch, Mapping) for m in batch.get("moves", ()))


def steps_mass(params: Mapping[str, Any], inputs: Sequence[Any]) -> float:
    """one count per step (a point, 004-alg1)"""
    return float(len(inputs))


def _records(x: Any) -> int:
    if isinstance(x, Mapping):
        return len(x.get("added", ())) + len(x.get("removed", ()))
    return len(x) if isinstance(x, list) else 0


def records_mass(params: Mapping[str, Any], inputs: Sequence[Any]) -> float:
    """one count per record added or removed (the codes only locate a cell)"""
    return float(sum(_records(x) for x in inputs))


@dataclass(frozen=True)
class Bounds:
    """The tolerances of one case: ``release`` (every float of every release), ``draws`` (every float draw
    parameter), and ``slack``, the band a decision on a computed quantity inherits (the release bound)."""

    release: Tolerance
    draws: Tolerance
    slack: float

    def to_json(self) -> dict[str, Any]:
        return {"release": self.release.to_json(), "draws": self.draws.to_json(), "slack": self.slack}


def _noise(tape: Tape) -> tuple[int, float]:
    """(number of additive draws, sum of their absolute values)."""
    values = [abs(float(d.value)) for d in tape.draws if d.kind in ADDITIVE_KINDS]
    return len(values), math.fsum(values)


def _ops(ops: int | Callable[[Mapping[str, Any]], int], params: Mapping[str, Any]) -> int:
    return ops(params) if callable(ops) else ops


def _input_terms(inputs: Sequence[Any]) -> int:
    return max(len(features_of(list(inputs))), len(inputs))


@dataclass(frozen=True)
class ErrorModel:
    """How an entry computes (module docstring); :meth:`bounds` evaluates it on one case."""

    kind: Literal["sums", "mw"]
    mass: Mass = numbers_mass
    extra_ops: int | Callable[[Mapping[str, Any]], int] = 0
    """Rounded operations on an operand beyond the sum (a division by the fanout per tree level, an average); a
    function of the parameters where it depends on them (the tree's depth D)."""
    param_ops: int = 4
    param_functions: int = 0
    cell_ops: int | Callable[[Mapping[str, Any]], int] = 0
    """Rounded operations of a ``uniform_box`` bound within [0, 1] (0: the bounds are exact, e.g. dyadic); a function
    of the parameters where it depends on them."""
    decisions: tuple[str, ...] = ()
    """The branches the entry takes on computed quantities (documented in its page; noted by the algorithms)."""
    g0_ones: bool = False
    """``mw``: the stream starts from the all-ones dataset (003-alg3 L4), |X| more mass in every release."""
    fits_per_step: Callable[[Mapping[str, Any]], int] = lambda p: int(p.get("k", 1))
    """``mw``: A_Dataset calls per step."""

    def bounds(self, params: Mapping[str, Any], inputs: Sequence[Any], tape: Tape,
               notes: Notes | None = None) -> Bounds:
        """The bounds of one case (``params`` as sent: the JSON object). ``notes``: what the reference noted while
        running the case (:func:`dpstream.arithmetic.recording`); the ``mw`` bound needs the fits' masses and
        exponents from it (without it, a bound from the parameters alone, which the measured totals make loose)."""
        n_draws, noise = _noise(tape)
        relative = 2.0 * gamma(self.param_ops + FUNCTION_ULPS * self.param_functions)
        if self.kind == "sums":
            A = self.mass(params, inputs) + noise
            release = 2.0 * gamma(_input_terms(inputs) + n_draws + _ops(self.extra_ops, params)) * A
            cells = 2.0 * gamma(_ops(self.cell_ops, params))
            return Bounds(Tolerance(release, 0.0), Tolerance(cells, relative), release)
        return self._mw(params, inputs, noise, relative, notes)

    def _mw(self, params: Mapping[str, Any], inputs: Sequence[Any], noise: float, relative: float,
            notes: Notes | None) -> Bounds:
        sizes = [int(v) for v in params.get("domain", {}).get("sizes", [1])]
        n = max(1, math.prod(sizes))
        k = max(1, self.fits_per_step(params))
        start = float(n) if self.g0_ones else 0.0
        M = records_mass(params, inputs) + noise + start              # |m| of every measurement of the run
        underflow = False
        if notes is not None:
            fits = [s.get("N") for s in notes.steps if s.what == "003-fit"]
            chain = [(s.get("A"), s.get("L")) for s in notes.steps if s.what == "003-mw"]
            underflow = any(s.get("low") < -LOG_NORMAL for s in notes.steps if s.what == "003-mw")
        else:                                                         # a priori: public sizes, running totals
            public = params.get("sizes")
            masses = [abs(float(v)) for v in public] if isinstance(public, list) else [M] * max(1, len(inputs))
            running = [math.fsum(masses[: i + 1]) for i in range(len(masses))]
            fits = [*masses, *running] * k
            positive = [m for m in fits if m > 0.0]
            A = (M + math.fsum(fits)) / (2.0 * min(positive)) + 0.5 if positive else 0.0
            newest = params.get("A_Dataset", "mw") == "mw"
            count = max(1, len(inputs)) * (k if newest else k * (k + 1) // 2)
            chain, L = [], math.log(n)
            for _ in range(count):
                chain.append((A, L))
                L = min(LOG_SMALLEST, L + 2.0 * A)
            underflow = L + 2.0 * A > LOG_NORMAL
        R = math.fsum(fits) / k + start                               # bounds every cell of every release
        spread = 0.0
        for A, L in chain:
            spread += 2.0 * U * ((FUNCTION_ULPS + 3) * (min(L, LOG_SMALLEST) + A) + 2 * n + FUNCTION_ULPS + 4)
            if spread >= 1.0:
                break
        weights = 1.0 if underflow else min(spread, 1.0)  # LOG_NORMAL: a weight lost in one order, kept in another
        terms = max(1, len(inputs)) * (k + 1) + n + 2
        release = R * weights + 2.0 * gamma(terms) * (R + M)
        scores = R * weights + 2.0 * gamma(n + 4) * (R + M + n)
        return Bounds(Tolerance(release, 0.0), Tolerance(scores, relative), release)

    def describe(self) -> str:
        """One paragraph for docs/catalog.md: the model, as this entry instantiates it."""
        params = (f"draw parameters within the relative tolerance 2 gamma({self.param_ops}"
                  + (f" + {FUNCTION_ULPS} x {self.param_functions}" if self.param_functions else "") + ")")
        if self.kind == "sums":
            extra = _describe_ops(self.extra_ops)
            mass = (self.mass.__doc__ or "").strip()
            text = (f"sums: a release number is a sum of at most n operands ({mass}, and every additive draw on the "
                    "tape)"
                    + (f", each scaled by at most {extra} more operations" if extra else "")
                    + f": releases within 2 gamma(n{' + ' + extra if extra else ''}) A, "
                    f"A the operands' absolute sum; {params}")
            cells = _describe_ops(self.cell_ops)
            if cells:
                text += f"; `uniform_box` bounds within 2 gamma({cells}) absolutely"
        else:
            text = ("mw: multiplicative-weights steps over n = |X| cells, each adding at most "
                    f"e = 2 u (({FUNCTION_ULPS} + 3)(L + A) + 2n + {FUNCTION_ULPS + 4}) to the spread of the "
                    "log-weights (A, L: the step's largest |exponent| and |log weight|), B the sum of e (B = 1 "
                    "where a weight falls below the smallest normal double, 2.2e-308 of the largest: kept as a "
                    "double it is lost, as a logarithm it is not); releases "
                    "within R min(B, 1) + 2 gamma(terms)(R + M), scores of the exponential mechanism within "
                    f"R min(B, 1) + 2 gamma(n + 4)(R + M + n); {params}"
                    + ("; the stream starts from the all-ones dataset (|X| more mass)" if self.g0_ones else ""))
        if self.decisions:
            text += "; decisions: " + "; ".join(self.decisions)
        return text


def _describe_ops(ops: int | Callable[[Mapping[str, Any]], int]) -> str:
    """An operation count as the docs state it (a function of the parameters documents itself)."""
    if callable(ops):
        return (ops.__doc__ or "").strip() or "a function of the parameters"
    return str(ops) if ops else ""


def ambiguous_decisions(decisions: Sequence[Decision], bounds: Bounds) -> list[Decision]:
    """The decisions of a case that another correct evaluation may take the other way."""
    return [d for d in decisions if d.ambiguous(bounds.slack)]
