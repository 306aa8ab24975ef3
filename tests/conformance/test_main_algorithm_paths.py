"""003-alg3's design pair composed along a rare selection, and the event that carries the selection's log-ratio.

Expected values from the paper, by hand: 003-alg3 (= 000-alg3) on the catalog's k = 1 setting (queries a = 0 and
b = 0 of {0,1}^2, eps 0.5, 20 records per step, public sizes) and its ``opposed`` input. At t = 2 the increments
count a = 0 fifteen times and b = 0 minus five times; the first-round scores are |q_i(nabla f_t)| (L11 with h_{t,0}
= g_{t-1}), so (15, 5) on f and (16, 4) once a record (0, 0) is inserted at t = 2: a two-way move. The selection
(L12, eps/(2k) = 0.25, sensitivity 1: P(i) proportional to exp(0.125 u_i)) takes b with log-ratio
log(1 + e^1.5) - log(1 + e^1.25) = 0.19948 between f and f'; the Simple counter of b (L15, Laplace 2k/eps = 4) moves
by 1: 1/4. On the path that takes b at t = 2 the pair composes 0.44948 of the claim 0.5 (90 %)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpstream.audit.registry import Profile
from dpstream.conformance.composed_tests import composed_pairs, event_ratio
from dpstream.conformance.replays import reference_features, seeded_tape
from dpstream.conformance.statistical import StatisticalPlan, horizon_of, plan_for
from dpstream.noise import DrawKind
from dpstream.tape import Draw

B_PATH = 0.25 + math.log(1 + math.exp(1.5)) - math.log(1 + math.exp(1.25))
PAIR = "t=2: insert a record of the first cell [0, 0]"


def _plan(anchor: str = "003-alg3") -> StatisticalPlan:
    plan = plan_for(anchor, Profile.QUICK)
    assert isinstance(plan, StatisticalPlan)
    return plan


def _choices(tape: list[Draw]) -> tuple[int, ...]:
    return tuple(int(d.value) for d in tape if d.kind is DrawKind.EXPONENTIAL_MECHANISM)


@pytest.mark.parametrize("anchor", ["003-alg3", "000-alg3"])
def test_the_opposed_input_moves_the_first_round_scores_two_ways(anchor: str) -> None:
    plan = _plan(anchor)
    e, params = plan.entry, plan.settings[0]
    assert params["k"] == 1 and params["sizes"] == [20, 20, 20]
    f = next(iter(plan.spaces[0].families.values()))(horizon_of(e, params))
    label, g = plan.spaces[0].neighbours(f)[0]
    assert label == PAIR  # the quick profile's few begin with it
    scores = []
    for stream in (f, g):
        tape = seeded_tape(e, params, stream, 1)
        assert tape is not None
        scores.append(next(d.params["scores"] for d in tape if d.site == "003-alg3 L12 t=2 l=1"))
    assert scores == [[pytest.approx(15.0), pytest.approx(5.0)], [pytest.approx(16.0), pytest.approx(4.0)]]


def test_the_pair_composes_along_the_rare_selection_and_its_event_holds_on_that_path_only() -> None:
    plan = _plan()
    e, params = plan.entry, plan.settings[0]
    f = next(iter(plan.spaces[0].families.values()))(horizon_of(e, params))
    features = reference_features(e, params)
    read = 0
    for seed in (1, 2, 3):
        tape = seeded_tape(e, params, f, seed)
        assert tape is not None
        best = {c.label: c for c in composed_pairs(plan, 0, tape)}[PAIR]
        assert best.reached == pytest.approx(B_PATH, abs=1e-9), _choices(tape)
        assert best.selections[0] == pytest.approx(B_PATH - 0.25, abs=1e-9)
        ratio = best.ratio
        assert ratio is not None
        if not ratio.path_rows:
            continue  # the path's own shifted run left it (a draw not linear there): no path event on this run
        read += 1
        assert event_ratio(best) == pytest.approx(B_PATH, abs=1e-9)  # the count's 1/4 and the selection's log-ratio
        on, off = 0, 0
        for run in range(4, 64):  # seeded runs of the reference: L is 0 exactly off the path (b not taken at t = 2)
            other = seeded_tape(e, params, f, run)
            assert other is not None
            F = features(f, other)
            assert F is not None
            takes_b = _choices(other)[:2] == (0, 1)
            assert bool(ratio.off_path(F[None, :])[0]) is not takes_b
            L = float(ratio(F[None, :])[0])
            assert (L == 0.0) if not takes_b else abs(L) <= ratio.extreme + 1e-9
            on, off = on + takes_b, off + (not takes_b)
        assert on > 0 and off > 0
        assert np.isclose(ratio.extreme, 0.25)
    assert read >= 1  # seed 1: the run took b at t = 2, and the event reads that path from the releases
