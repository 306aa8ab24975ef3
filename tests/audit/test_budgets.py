"""The registered cases respect the false-alarm budgets (registry.FAMILY_BUDGETS, TOTAL_FALSE_ALARM_BUDGET)."""

from __future__ import annotations

import math

from dpstream.audit.registry import FAMILY_BUDGETS, TOTAL_FALSE_ALARM_BUDGET, discover


def test_family_budgets_sum_to_at_most_total() -> None:
    assert sum(FAMILY_BUDGETS.values()) <= TOTAL_FALSE_ALARM_BUDGET * (1 + 1e-12)


def test_cases_within_family_budgets() -> None:
    used: dict[str, float] = {}
    for case in discover():
        assert case.family in FAMILY_BUDGETS, f"{case.component}: family {case.family!r} has no budget"
        assert 0.0 < case.false_alarm < 1.0 and math.isfinite(case.false_alarm), case.component
        used[case.family] = used.get(case.family, 0.0) + case.false_alarm
    for family, total in used.items():
        assert total <= FAMILY_BUDGETS[family] * (1 + 1e-12), f"{family}: {total:g} > {FAMILY_BUDGETS[family]:g}"
    assert sum(used.values()) <= TOTAL_FALSE_ALARM_BUDGET * (1 + 1e-12)


def test_case_ids_unique() -> None:
    ids = [(c.family, c.component) for c in discover()]
    assert len(ids) == len(set(ids))
