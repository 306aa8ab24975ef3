"""Privacy claims as values.

A claim is (measure, parameter, neighbour relation, where it is proved). Every
algorithm exposes its claim; audits read it and documentation prints it
(docs/developing.md, "Claims, errors, atomic steps").
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from enum import Enum

from dpstream.errors import DPStreamInputError, require_positive_finite

__all__ = ["Measure", "Neighbour", "PrivacyClaim", "zcdp_to_approx_dp"]


class Measure(Enum):
    """What the parameter of a claim measures."""

    PURE_DP = "pure-dp"
    """eps-differential privacy: P[A(f) in S] <= e^eps P[A(f') in S]."""
    ZCDP = "zcdp"
    """rho-zCDP: D_alpha(A(f) || A(f')) <= rho * alpha for all alpha > 1 (002-def2.1)."""
    NOT_PRIVATE = "not-private"
    """No differential-privacy guarantee holds (e.g. 001 section 5.3 baseline 1)."""


class Neighbour(Enum):
    """The neighbour relation a claim is proved for."""

    EVENT = "event"
    """One event added or removed at one time: ||f - f'||_nabla = 1 (000-def2.1, 001-eq2-3, 003-def3.3)."""
    STREAM_ENTRY = "stream-entry"
    """Counter inputs at l1 distance <= 1: sum_t ||f(t) - f'(t)||_1 <= 1 (001-def4.1, 001-sec4.3, 002-defA.1).

    For scalar counters with integer inputs this is "one entry changes by at most 1".
    """
    INDIVIDUAL_ADD_REMOVE = "individual-add-remove"
    """One individual's whole record sequence added or removed (n changes by one)."""
    INDIVIDUAL_SUBSTITUTE = "individual-substitute"
    """One individual's whole record sequence replaced, n fixed (002-sec2.1, the paper's model)."""
    POINT_REPLACE = "point-replace"
    """One data point x_t of the sequence replaced by another (004-def2.1, 004-def2.2)."""

    @property
    def description(self) -> str:
        return _NEIGHBOUR_TEXT[self]


_NEIGHBOUR_TEXT = {
    Neighbour.EVENT: "one event added or removed at one time (||f - f'||_nabla = 1)",
    Neighbour.STREAM_ENTRY: "counter inputs at l1 distance <= 1 (sum_t ||f(t)-f'(t)||_1 <= 1)",
    Neighbour.INDIVIDUAL_ADD_REMOVE: "one individual's whole sequence added or removed",
    Neighbour.INDIVIDUAL_SUBSTITUTE: "one individual's whole sequence substituted (n fixed)",
    Neighbour.POINT_REPLACE: "one data point replaced",
}


@dataclass(frozen=True)
class PrivacyClaim:
    """A privacy guarantee: ``measure`` with ``parameter`` under ``neighbour``.

    ``source`` is the anchor of the theorem that proves it (e.g. ``"001-thm3.2"``),
    ``note`` says anything a reader must know (an erratum it depends on, a horizon).
    """

    measure: Measure
    parameter: float
    neighbour: Neighbour
    source: str
    note: str = ""

    def __post_init__(self) -> None:
        if self.measure is Measure.NOT_PRIVATE:
            if not math.isinf(self.parameter):
                raise DPStreamInputError("parameter", "a NOT_PRIVATE claim has parameter inf", self.parameter)
        else:
            require_positive_finite("parameter", self.parameter)

    @classmethod
    def pure(cls, epsilon: float, neighbour: Neighbour, source: str, note: str = "") -> PrivacyClaim:
        return cls(Measure.PURE_DP, epsilon, neighbour, source, note)

    @classmethod
    def zcdp(cls, rho: float, neighbour: Neighbour, source: str, note: str = "") -> PrivacyClaim:
        return cls(Measure.ZCDP, rho, neighbour, source, note)

    @classmethod
    def not_private(cls, neighbour: Neighbour, source: str, note: str) -> PrivacyClaim:
        return cls(Measure.NOT_PRIVATE, math.inf, neighbour, source, note)

    @property
    def symbol(self) -> str:
        return {Measure.PURE_DP: "eps", Measure.ZCDP: "rho", Measure.NOT_PRIVATE: "-"}[self.measure]

    def describe(self) -> str:
        """One line for tables and docs, e.g. ``eps=1 pure DP, one event added or removed ...``."""
        if self.measure is Measure.NOT_PRIVATE:
            head = "NOT differentially private"
        elif self.measure is Measure.PURE_DP:
            head = f"eps={self.parameter:g} pure DP"
        else:
            head = f"rho={self.parameter:g} zCDP"
        text = f"{head}; neighbours: {self.neighbour.description} [{self.source}]"
        return f"{text}; {self.note}" if self.note else text

    def to_dict(self) -> dict[str, object]:
        return {
            "measure": self.measure.value,
            "parameter": None if math.isinf(self.parameter) else self.parameter,
            "neighbour": self.neighbour.value,
            "source": self.source,
            "note": self.note,
        }


@functools.lru_cache(maxsize=4096)  # the searches ask for the same few (rho, delta) pairs millions of times
def zcdp_to_approx_dp(rho: float, delta: float) -> float:
    """eps such that rho-zCDP implies (eps, delta)-DP, by Canonne-Kamath-Steinke 2020 (Prop. 12 with the Renyi
    bound D_alpha <= alpha rho): for every alpha > 1,

        eps(alpha) = alpha rho + (ln(1/delta) + (alpha - 1) ln(1 - 1/alpha) - ln(alpha)) / (alpha - 1)

    is valid; this returns the least over a fine grid of alpha (each point valid, so the minimum is too; it is within
    1e-6 of the infimum). Never above Bun-Steinke's rho + 2 sqrt(rho ln(1/delta)) (2016, Prop 1.3), which it
    replaces; proofs/proof_zcdp_conversion.py checks the algebra and the soundness against the Gaussian mechanism."""
    require_positive_finite("rho", rho)
    if not 0.0 < delta < 1.0:
        raise DPStreamInputError("delta", "must lie in (0, 1)", delta)
    log_inv = math.log(1.0 / delta)
    classic = rho + 2.0 * math.sqrt(rho * log_inv)
    best = classic
    centre = 1.0 + math.sqrt(log_inv / rho)  # the minimiser of the Bun-Steinke relaxation
    lo, hi = math.log(max(centre / 64.0, 1e-9)), math.log(centre * 64.0)
    for _ in range(3):  # a coarse grid in log(alpha - 1), then twice a finer one around its best point
        step = (hi - lo) / 256
        best_x = lo
        for i in range(257):
            x = lo + i * step
            eps = _cks_eps(rho, log_inv, 1.0 + math.exp(x))
            if eps < best:
                best, best_x = eps, x
        lo, hi = best_x - 2 * step, best_x + 2 * step
    return max(0.0, best)  # eps(alpha) < 0 means (0, delta) holds already (CKS's delta decreases in eps)


def _cks_eps(rho: float, log_inv: float, alpha: float) -> float:
    """eps(alpha) of :func:`zcdp_to_approx_dp` (inf where it cannot be evaluated)."""
    if not alpha > 1.0 or not math.isfinite(alpha):
        return math.inf
    a1 = alpha - 1.0
    return alpha * rho + (log_inv + a1 * math.log1p(-1.0 / alpha) - math.log(alpha)) / a1
