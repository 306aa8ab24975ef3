"""Every registered audit case's QUICK profile: correct components pass, expect_failure cases fail.

One test per case id (family/component), so ``pytest -n 2`` spreads them. False-alarm
probability: the sum of the cases' ``false_alarm`` shares, at most TOTAL_FALSE_ALARM_BUDGET
= 1e-3 for the whole suite (tests/audit/test_budgets.py); the seeds are fixed (run seed 0),
so the outcome is reproducible.
"""

from __future__ import annotations

import pytest

from dpstream.audit.registry import AuditCase, Profile, discover
from dpstream.audit.report import status
from dpstream.audit.runner import run_case

CASES = discover()

SLOW_CONTROLS = frozenset({"001-alg8", "001-alg9", "001-alg10", "004-lem3.1", "002-alg3", "003-alg4", "CSS11-hybrid",
                           "001-sec4.3"})
"""The correct streaming counters (5-10 s each on quick, their witness search on a line-by-line sampler): controls,
run by ``make test-full`` and ``make demo``; their printed variants (``expect_failure``) stay in the default run."""


def _id(case: AuditCase) -> str:
    return f"{case.family}/{case.component}"


def _param(case: AuditCase) -> object:
    slow = case.family == "counters" and case.anchor in SLOW_CONTROLS and not case.expect_failure
    return pytest.param(case, id=_id(case), marks=pytest.mark.slow if slow else ())


@pytest.mark.parametrize("case", [_param(c) for c in CASES])
def test_registered_case_quick(case: AuditCase) -> None:
    report = run_case(case, Profile.QUICK, seed=0)
    details = "\n".join(f"{c.kind.value} passed={c.passed}: {c.detail}" for c in report.checks)
    if case.expect_failure:
        assert status(report) == "expected failure", f"the known violation was not caught:\n{details}"
    else:
        assert status(report) == "pass", f"unexpected failure:\n{details}"
    assert report.checks, "a case must run at least one check"


def test_every_counter_component_is_registered() -> None:
    """The foundation components the issue lists all have a case (001-alg8/9/10, 002-alg3, 003-alg4, ...)."""
    anchors = {c.anchor for c in CASES if c.family == "counters"}
    for anchor in ("001-alg8", "001-alg9", "001-alg10", "002-alg3", "003-alg4", "CSS11-hybrid", "001-sec4.3",
                   "000-def3.1", "003-def3.8"):
        assert anchor in anchors, anchor
    printed = {c.anchor for c in CASES if c.family == "counters" and c.expect_failure}
    assert {"001-alg10", "002-alg3"} <= printed
