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


def test_finite_case_refuses_more_checks_than_its_level_was_split_over() -> None:
    """finite_case splits its share over 2 + extra_checks checks; an ``extra`` adding more is an ERROR.

    The "pass" outcome uses a fair coin audited against its own law (fixed seed 0; false-alarm
    probability <= 1e-4, the case's share)."""
    from collections.abc import Sequence
    from typing import Any

    from dpstream.audit.cases import Effort, finite_case
    from dpstream.audit.neighbours import NeighbourPair
    from dpstream.audit.registry import CheckKind, CheckResult, Profile
    from dpstream.audit.report import status
    from dpstream.audit.runner import run_case
    from dpstream.claims import Neighbour, PrivacyClaim
    from dpstream.noise import NoiseSource

    class Coin:
        def __init__(self, noise: NoiseSource) -> None:
            self.noise = noise

        def step(self, x: Any) -> int:
            return int(self.noise.coin("c"))

    def law(inputs: Sequence[Any]) -> dict[int, float]:
        return {0: 0.5, 1: 0.5}

    def two(runs: Sequence[Any], pair: NeighbourPair, level: float) -> list[CheckResult]:
        return [CheckResult(CheckKind.ACCURACY, True, 0.0, 1.0, name) for name in "ab"]

    pair = NeighbourPair((0,), (1,), "x", Neighbour.EVENT)
    claim = PrivacyClaim.pure(1.0, Neighbour.EVENT, "x")
    for extra_checks, expected in ((1, "ERROR"), (2, "pass")):
        case = finite_case("coin", "x", claim, Coin, law, [pair], false_alarm=1e-4, effort=Effort(quick=50, full=50),
                           extra=two, extra_checks=extra_checks)
        assert status(run_case(case, Profile.QUICK, seed=0)) == expected
