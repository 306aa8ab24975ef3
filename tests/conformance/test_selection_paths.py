"""A tabular pair composed along the path of a rare selection (composed_tests.composed_pairs, SELECTION_PATHS).

Expected values from the papers, by hand: 003-alg2 on the catalog's k = 1 setting (queries a = 0 and b = 0 of
{0,1}^2, eps 0.5, 20 records per step, public sizes) and its ``balanced`` input (the records alternate (0,1) and
(1,1): a = 0 counts 10 of 20, b = 0 counts 0), the pair "insert (0,0) at t = 1". The selection (003-alg2 L11,
eps/(2k) = 0.25, sensitivity 1: P(i) proportional to exp(0.125 u_i), 003-def3.8) sees the errors |q(D) - q(A)|
against a uniform start (10 per query): u = (0, 10) on f and (1, 9) on f'. On the path that selects a = 0 the
log-ratio is log(1 + e^1.25) - log(1 + e^1) = 0.18864; the measurement (L16, Laplace 2k/eps = 4) moves by 1:
1/4. The pair composes 0.43864 of the claim 0.5 there (88 %); on the path that selects b = 0 only 0.25 +
log((1 + e^-1) / (1 + e^-1.25)) = 0.3113."""

from __future__ import annotations

import math

import pytest

from dpstream.audit.registry import Profile
from dpstream.conformance.composed_tests import SELECTION_PATHS, _selection_paths, composed_pairs
from dpstream.conformance.replays import seeded_tape
from dpstream.conformance.statistical import StatisticalPlan, horizon_of, plan_for
from dpstream.noise import DrawKind
from dpstream.tape import Draw

A_PATH = 0.25 + math.log(1 + math.exp(1.25)) - math.log(1 + math.e)


def _plan() -> StatisticalPlan:
    plan = plan_for("003-alg2", Profile.QUICK)
    assert isinstance(plan, StatisticalPlan)
    return plan


def test_the_rare_selection_path_is_composed_whichever_path_the_run_took() -> None:
    plan = _plan()
    e, params = plan.entry, plan.settings[0]
    assert params["k"] == 1 and params["sizes"] == [20, 20, 20]
    f = plan.spaces[0].families["balanced"](horizon_of(e, params))
    for seed in (0, 1, 2):
        tape = seeded_tape(e, params, f, seed)
        assert tape is not None
        best = {c.label: c for c in composed_pairs(plan, 0, tape)}["t=1: insert a record of the first cell [0, 0]"]
        assert best.reached == pytest.approx(A_PATH, abs=1e-9)
        assert best.ratio is not None  # the measurement is read from the releases' log-scale features


def test_selection_paths_go_through_one_rare_choice() -> None:
    """Four selections of scores (1, 2, 3) (most likely index 2), each reported at 1: first every selection at 2 but
    one at 0 or 1 (the likeliest paths through that choice), then the reported run with one selection changed and the
    later ones at 2; no path twice, SELECTION_PATHS in all."""
    em = [Draw(f"s t={t}", DrawKind.EXPONENTIAL_MECHANISM, {"scores": [1.0, 2.0, 3.0], "epsilon": 1.0,
                                                             "sensitivity": 1.0}, 1) for t in (1, 2, 3, 4)]
    noise = Draw("m t=1", DrawKind.LAPLACE, {"scale": 1.0}, 0.5)
    paths = _selection_paths([em[0], noise, *em[1:]])
    assert len(paths) == SELECTION_PATHS and paths[0] == [em[0], noise, *em[1:]]
    values = [[d.value for d in p if d.kind is DrawKind.EXPONENTIAL_MECHANISM] for p in paths]
    assert values[1:] == [[0, 2, 2, 2], [1, 2, 2, 2], [2, 0, 2, 2], [2, 1, 2, 2], [2, 2, 0, 2], [2, 2, 1, 2],
                          [2, 2, 2, 0]]
    assert all(p[1] == noise for p in paths)
    assert _selection_paths([noise]) == [[noise]]
