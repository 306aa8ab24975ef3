"""Registration of audits: one :class:`AuditCase` per audited component.

Every algorithm family has a room ``dpstream.audit.<family>`` (its models, exact losses and checks);
its module ``dpstream.audit.<family>.cases`` defines ``cases() -> list[AuditCase]``, and :func:`discover`
collects them, family by family (the families of :data:`FAMILY_BUDGETS`, which a test holds equal to
the catalog's). ``dpstream audit`` (``make demo``) and the test suite (``tests/audit/test_registered_audits.py``)
run exactly these cases. A case's ``anchor`` is a catalog anchor (``dpstream.catalog.entry``), so that the
generated index ``docs/catalog.md`` lists each algorithm's cases, or, for a mechanism or theorem that is not an
algorithm box (000-def3.1, 003-def3.8, 001-thm3.2, ...), the paper statement it checks
(``tests/catalog/test_catalog.py`` checks both).

False alarms: every case declares ``false_alarm``, the probability that its
statistical checks fail on a *correct* implementation. The total over all registered
cases must stay within :data:`TOTAL_FALSE_ALARM_BUDGET` (a test enforces this), and
every case must split its share across its own checks (e.g. Bonferroni).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from dpstream.claims import PrivacyClaim

__all__ = [
    "FAMILY_BUDGETS",
    "LAW_CHECKS",
    "PRIVACY_CHECKS",
    "TOTAL_FALSE_ALARM_BUDGET",
    "AuditCase",
    "AuditContext",
    "CheckKind",
    "CheckResult",
    "ComponentReport",
    "Profile",
    "Verdict",
    "discover",
]

TOTAL_FALSE_ALARM_BUDGET = 1e-3
"""Probability that the whole default audit suite fails on correct implementations."""

FAMILY_BUDGETS: Mapping[str, float] = {
    "counters": 3.0e-4,  # counters and basic mechanisms (foundation)
    "phdstream": 1.5e-4,
    "longitudinal": 1.5e-4,
    "hypercube": 1.5e-4,
    "tabular": 1.5e-4,
}
"""Share of the budget per family room (``dpstream.audit.<family>.cases``); 1e-4 is kept in reserve."""


class Profile(StrEnum):
    """How long to audit: QUICK for CI and ``make demo``, THOROUGH for ``--profile thorough``
    (``FULL`` and ``--full`` are aliases of THOROUGH). Sizes per profile: :mod:`dpstream.audit.profiles`."""

    QUICK = "quick"
    THOROUGH = "thorough"
    FULL = "thorough"

    @classmethod
    def _missing_(cls, value: object) -> Profile | None:
        return cls.THOROUGH if value == "full" else None


class CheckKind(StrEnum):
    EXACT_LOSS = "exact-loss"
    BLACK_BOX = "black-box"
    CALIBRATION = "calibration"
    ACCURACY = "accuracy"
    SEARCH = "witness-search"


PRIVACY_CHECKS = frozenset({CheckKind.EXACT_LOSS, CheckKind.BLACK_BOX, CheckKind.SEARCH})
"""Checks whose failure is a certified ``violation`` of the privacy claim."""
LAW_CHECKS = frozenset({CheckKind.CALIBRATION, CheckKind.ACCURACY})
"""Checks whose failure is a ``deviation`` from the reference algorithm's law (never a violation)."""


class Verdict(StrEnum):
    """The four verdicts, reported separately (docs/audits.md, "Verdicts").

    ``violation``: a certified lower bound on the privacy loss above the claim (white-box exact loss, or a
    held-out black-box bound at the stated confidence, with its witness). ``deviation``: the implementation's
    law differs from the reference algorithm's (calibration, accuracy; in ``dpstream conform`` also known
    answers and must-reject). ``pass``: no violation, and something backs it (the exact loss with a calibration,
    or a witness search with a measured power); or no deviation. ``inconclusive``: no violation found, and
    nothing backs a pass.
    """

    VIOLATION = "violation"
    DEVIATION = "deviation"
    PASS = "pass"
    INCONCLUSIVE = "inconclusive"


@dataclass(frozen=True)
class CheckResult:
    """The outcome of one audit check.

    ``passed`` is ``None`` when the check is informational only. ``value`` is the
    headline number (exact loss found, eps lower bound, smallest p-value, failure
    frequency), ``bound`` what it was compared with (the claim, the test level, beta).
    ``data`` carries series for plots (JSON-compatible).
    """

    kind: CheckKind
    passed: bool | None
    value: float | None
    bound: float | None
    detail: str
    data: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class AuditContext:
    """What a case's ``run`` receives: the profile, its seed, its false-alarm share, a progress hook."""

    profile: Profile
    seed: int
    false_alarm: float
    progress: Callable[[str], None] = lambda message: None
    executor: Any = None
    """A ``concurrent.futures.Executor`` for trials (None: this process); results do not depend on it."""


@dataclass(frozen=True)
class AuditCase:
    """One audited component (an algorithm instance with concrete parameters).

    ``expect_failure`` marks cases that exist to show an audit catching a known
    violation (e.g. a non-private baseline or an ``as_printed`` variant): for them a
    failed check is the expected outcome, and the table shows it as such.
    """

    component: str
    anchor: str
    claim: PrivacyClaim
    run: Callable[[AuditContext], Sequence[CheckResult]]
    false_alarm: float
    errata: tuple[str, ...] = ()
    expect_failure: bool = False
    family: str = ""


@dataclass(frozen=True)
class ComponentReport:
    """All check results of one case, with its run time."""

    case: AuditCase
    checks: tuple[CheckResult, ...]
    seconds: float

    @property
    def passed(self) -> bool:
        """True when every applicable check passed (or, for ``expect_failure`` cases, some check failed).

        A case that raised (a check whose ``data`` holds ``"error"``, see :func:`dpstream.audit.runner.run_case`)
        never passes."""
        if any("error" in c.data for c in self.checks):
            return False
        failed = any(c.passed is False for c in self.checks)
        return failed if self.case.expect_failure else not failed

    @property
    def privacy(self) -> Verdict | None:
        """``violation`` if a privacy check failed; else ``pass`` when something backs it, else ``inconclusive``
        (None: no privacy check). What backs a pass (docs/audits.md, "Verdicts"): an exact-loss check that passed
        (the model meets the claim) with a calibration check that passed (the implementation draws the model's
        noise), or a witness search that says ``pass`` (a measured power statement backs it). A black-box bound
        below the claim alone backs nothing."""
        checks = [c for c in self.checks if c.kind in PRIVACY_CHECKS and "error" not in c.data]
        if not checks:
            return None
        if any(c.passed is False for c in checks):
            return Verdict.VIOLATION
        return Verdict.PASS if self.pass_backed_by else Verdict.INCONCLUSIVE

    @property
    def pass_backed_by(self) -> str | None:
        """What backs a privacy ``pass`` (``"exact+cal"`` or ``"power"``), or None."""
        def ok(kind: CheckKind) -> bool:
            return any(c.kind is kind and c.passed is True and "error" not in c.data for c in self.checks)

        if ok(CheckKind.EXACT_LOSS) and ok(CheckKind.CALIBRATION):
            return "exact+cal"
        if any(c.kind is CheckKind.SEARCH and c.data.get("verdict") == Verdict.PASS.value for c in self.checks):
            return "power"
        return None

    @property
    def law(self) -> Verdict | None:
        """``deviation`` if a calibration or accuracy check failed, else ``pass`` (None: no such check)."""
        checks = [c for c in self.checks if c.kind in LAW_CHECKS]
        if not checks:
            return None
        return Verdict.DEVIATION if any(c.passed is False for c in checks) else Verdict.PASS


def discover() -> list[AuditCase]:
    """All cases of every family room (``dpstream.audit.<family>.cases``), families in alphabetical order;
    ``family`` is set to the family's name."""
    found: list[AuditCase] = []
    for family in sorted(FAMILY_BUDGETS):
        module = importlib.import_module(f"dpstream.audit.{family}.cases")
        for case in module.cases():
            if not isinstance(case, AuditCase):
                raise TypeError(f"{family}.cases() returned {case!r}, not an AuditCase")
            found.append(case if case.family else _with_family(case, family))
    return found


def _with_family(case: AuditCase, family: str) -> AuditCase:
    from dataclasses import replace

    return replace(case, family=family)
