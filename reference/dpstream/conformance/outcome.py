"""What one conformance check concluded, and the exit status of a whole run.

Every check yields an :class:`Outcome` with two verdict columns:

* ``privacy``: ``violation`` (a certified lower bound on the privacy loss above the claim, with its
  witness), ``pass``, ``inconclusive`` (the run could not have detected the excess it reports), or
  ``None`` when the check says nothing about privacy (known-answer, must-reject);
* ``conformance``: ``deviation`` (the program's outputs or noise law differ from the reference:
  a known-answer mismatch, an accepted must-reject input, a calibration or accuracy failure) or
  ``pass``;

plus ``protocol-error`` (crash, timeout, bad JSON, wrong reply shape) and ``skipped`` (a mode or an
algorithm the program does not announce). :func:`exit_status` maps the worst to the exit code:
0 conforms, 1 deviates, 2 privacy violation certified, 3 the program broke the protocol.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

__all__ = ["Mode", "Outcome", "Verdict", "exit_status", "severity", "worst"]


class Verdict(StrEnum):
    PASS = "pass"
    INCONCLUSIVE = "inconclusive"
    SKIPPED = "skipped"
    DEVIATION = "deviation"
    VIOLATION = "violation"
    PROTOCOL_ERROR = "protocol-error"

    @property
    def exit_code(self) -> int:
        return _EXIT[self]


_EXIT = {Verdict.PASS: 0, Verdict.INCONCLUSIVE: 0, Verdict.SKIPPED: 0, Verdict.DEVIATION: 1,
         Verdict.VIOLATION: 2, Verdict.PROTOCOL_ERROR: 3}


class Mode(StrEnum):
    KNOWN_ANSWER = "known-answer"
    MUST_REJECT = "must-reject"
    STATISTICAL = "statistical"
    TRANSCRIPT = "transcript"
    DIFFERENTIAL = "differential"


@dataclass(frozen=True)
class Outcome:
    """One check: ``name`` is the vector id or the statistical setting, ``message`` one line for people,
    ``details`` the machine-readable rest (first divergence, witness, counts, stderr tail)."""

    mode: Mode
    algorithm: str
    name: str
    conformance: Verdict | None
    privacy: Verdict | None = None
    message: str = ""
    details: Mapping[str, Any] = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def verdict(self) -> Verdict:
        """The worse of the two columns (the one that decides the exit status)."""
        return worst(v for v in (self.conformance, self.privacy) if v is not None)

    def to_json(self) -> dict[str, Any]:
        return {"mode": self.mode.value, "algorithm": self.algorithm, "name": self.name,
                "verdict": self.verdict.value,
                "conformance": None if self.conformance is None else self.conformance.value,
                "privacy": None if self.privacy is None else self.privacy.value,
                "message": self.message, "details": dict(self.details), "seconds": round(self.seconds, 4)}


def severity(verdict: Verdict) -> tuple[int, int]:
    """How bad a verdict is: its exit code, ties broken by the order pass < inconclusive < skipped."""
    return verdict.exit_code, list(Verdict).index(verdict)


def worst(verdicts: Iterable[Verdict]) -> Verdict:
    """The verdict with the highest :func:`severity`."""
    found = list(verdicts)
    if not found:
        return Verdict.SKIPPED
    return max(found, key=severity)


def exit_status(outcomes: Iterable[Outcome]) -> int:
    """0 conforms, 1 deviates, 2 privacy violation certified, 3 protocol broken (the worst decides)."""
    return worst(o.verdict for o in outcomes).exit_code
