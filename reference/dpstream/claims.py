"""Privacy claims as values.

A claim is (measure, parameter, neighbour relation, where it is proved). Every
algorithm exposes its claim; audits read it and documentation prints it
(docs/developing.md, "Claims, errors, atomic steps").
"""

from __future__ import annotations

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


def zcdp_to_approx_dp(rho: float, delta: float) -> float:
    """eps such that rho-zCDP implies (eps, delta)-DP: rho + 2 sqrt(rho ln(1/delta)) (Bun-Steinke 2016, Prop 1.3)."""
    require_positive_finite("rho", rho)
    if not 0.0 < delta < 1.0:
        raise DPStreamInputError("delta", "must lie in (0, 1)", delta)
    return rho + 2.0 * math.sqrt(rho * math.log(1.0 / delta))
