"""The witness search's event classes against leaks that live only in the joint law, and the honest ``pass``.

Samplers here are small synthetic mechanisms with two released numbers (seeded with ``dpstream.noise.data_rng``):

* ``joint``: x1 = f1 + z, x2 = f2 - z with z ~ Lap(4): each release alone is a Laplace mechanism that loses 1/4 on
  the neighbour f1 + 1 (below the claim eps = 1), but x1 + x2 = f1 + f2 exactly: the true loss is infinite;
* ``coupled``: x1 ~ Lap(4); x2 ~ Lap(4) independent of x1 on f, x2 = |Lap(4)| sign(x1) on f' (same marginals, the
  signs agree on f'): {x1 >= 0 and x2 <= 0} has probability 1/4 on f and 0 on f';
* ``independent``: x1 = f1 + z1, x2 = f2 + z2, z1, z2 ~ Lap(4) independent: loses 1/4 <= eps on every neighbour.

Statistical tests fix their seeds; each search runs at level 1e-3 (its false-alarm probability).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from dpstream.audit.power_statement import PowerRow, PowerStatement
from dpstream.audit.proposals import EVENT_CLASSES, exact_relations
from dpstream.audit.search import SearchBudget, SearchResult, SearchSpace, Setting, search
from dpstream.claims import Neighbour, PrivacyClaim
from dpstream.noise import data_rng, derived_seed

FloatArray = npt.NDArray[np.float64]
CLAIM = PrivacyClaim.pure(1.0, Neighbour.STREAM_ENTRY, "synthetic two-release mechanism")
BUDGET = SearchBudget(fit=1000, select=1000, holdout=4000, carried=4, tail=2)


class TwoReleases:
    """``kind`` of the module docstring; picklable, one row (x1, x2) per run."""

    def __init__(self, kind: str) -> None:
        self.kind = kind

    def sample(self, inputs: Sequence[Any], runs: int, seed: int) -> FloatArray:
        rng = data_rng(derived_seed(seed, self.kind))
        f1, f2 = float(inputs[0]), float(inputs[1])
        z1, z2 = rng.laplace(0.0, 4.0, runs), rng.laplace(0.0, 4.0, runs)
        if self.kind == "joint":
            return np.column_stack([f1 + z1, f2 - z1])
        if self.kind == "coupled":
            second = np.abs(z2) * np.sign(z1) if f1 > 0 else z2
            return np.column_stack([z1, second])
        return np.column_stack([f1 + z1, f2 + z2])


def _search(kind: str, power: PowerStatement | None = None) -> SearchResult:
    space = SearchSpace(families={"base": lambda T: [0, 0]},
                        neighbours=lambda f: [("f1 + 1", [f[0] + 1, f[1]])],
                        features=lambda R: np.asarray(np.round(R, 9), dtype=np.float64),
                        feature_names=lambda k: ["x1", "x2"], threshold_columns=lambda k: k)
    return search([Setting("eps=1", TwoReleases(kind), CLAIM, 2)], space, BUDGET, level=1e-3, seed=5,
                  target_excess=1.0, power=power)


def test_an_exact_relation_between_two_releases_is_certified() -> None:
    result = _search("joint")
    assert result.verdict == "violation"
    assert result.best is not None and result.best.witness.origin == "relation"
    assert result.best.k0 == 0 and result.best.k1 == BUDGET.holdout  # the sum is exact: certain on f, never on f'


def test_a_leak_in_the_signs_alone_is_certified_by_a_joint_event() -> None:
    result = _search("coupled")
    assert result.verdict == "violation"
    assert result.best is not None
    event = result.best.witness.event
    used = {c for s in event.statistics for c in s.columns}
    assert used == {0, 1}  # each release alone has the same law on f and f': the witness reads both
    certified = [c for c in result.certified if c.eps_lb > c.claimed]
    assert all({col for s in c.witness.event.statistics for col in s.columns} == {0, 1} for c in certified)


def test_independent_noise_is_not_a_violation_and_without_power_not_a_pass() -> None:
    result = _search("independent")
    assert result.verdict == "inconclusive"
    assert "no measured power" in result.detail()
    assert result.classes == EVENT_CLASSES and "classes: threshold, atom" in result.detail()


def test_pass_needs_a_power_statement_that_backs_it() -> None:
    strong = PowerStatement.of([PowerRow(leak, 1.0, 10, 10) for leak in ("scale/2", "shared")], "measured here")
    weak = PowerStatement.of([PowerRow("scale/2", 1.0, 10, 10), PowerRow("shared", 1.0, 8, 10)], "measured here")
    assert strong.backs_pass and not weak.backs_pass
    assert _search("independent", strong).verdict == "pass"
    result = _search("independent", weak)
    assert result.verdict == "inconclusive" and "shared (lower bound" in result.detail()
    assert _search("joint", strong).verdict == "violation"  # power never hides a certified leak


def test_power_rows_round_trip_and_the_floor_is_a_lower_confidence_bound() -> None:
    row = PowerRow("noiseless", float("inf"), 9, 10)
    assert PowerRow.from_json(row.to_json()) == row
    assert 0.6 <= row.lower < 0.9  # 9 of 10: Clopper-Pearson 95% lower bound 0.606
    assert PowerRow("noiseless", float("inf"), 8, 10).lower < 0.6


def test_exact_relations_are_found_and_spurious_ones_are_not() -> None:
    rng = data_rng(3)
    z = rng.laplace(0.0, 1.0, (200, 3))
    A = np.column_stack([z[:, 0], 5.0 - z[:, 0], z[:, 1], z[:, 1] + z[:, 2]])  # x0 + x1 = 5 exactly
    relations = exact_relations(np.round(A, 9))
    assert [(r.columns, r.weights) for r in relations] == [((0, 1), (1.0, 1.0))]
    assert not np.any(relations[0](np.round(A, 9)))
