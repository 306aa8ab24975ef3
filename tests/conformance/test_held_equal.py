"""The loss a neighbouring pair composes at the noise door (dpstream.conformance.held_equal).

Expected values come from the papers' accounting, never from the code under test: a selection's log-ratio from
003-def3.8's law written out by hand, a measurement's share 1 / b with b = 2k / eps (003-alg2 L16) for a record
that moves one count by one, and every pair of a correct entry within its claim (the entries' privacy theorems).
Deterministic (seeded reference runs): no false-alarm probability."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpstream.audit.registry import Profile
from dpstream.catalog import entries
from dpstream.claims import Measure, Neighbour, PrivacyClaim
from dpstream.conformance.entry_sampler import entry_run
from dpstream.conformance.held_equal import door_pairs, door_run, held_equal
from dpstream.conformance.replays import seeded_tape
from dpstream.conformance.statistical import horizon_of, plan_for
from dpstream.insecure.planted import PlantedLeak, PlantedNoise
from dpstream.noise import DrawKind, NoiseSource
from dpstream.tape import Draw

CLAIM = PrivacyClaim(Measure.PURE_DP, 1.0, Neighbour.EVENT, "test", "")
DESIGNED = [e.anchor for e in entries(streaming=True) if e.statistical is not None and e.statistical.design]


def _selection(eps: float) -> Any:
    """A toy run: one exponential mechanism per input over the scores (x, 0), sensitivity 1, released as is."""
    def run(source: NoiseSource, inputs: Sequence[Any]) -> list[Any]:
        return [source.exponential_mechanism(f"s t={t}", [float(x), 0.0], eps, 1.0) for t, x in enumerate(inputs)]
    return run


def _count(scale: float, released: bool = True) -> Any:
    """A toy run: a Laplace count of each input; released, or only compared with 0 (a decision)."""
    def run(source: NoiseSource, inputs: Sequence[Any]) -> list[Any]:
        noisy = [source.add_laplace(f"c t={t}", float(x), scale) for t, x in enumerate(inputs)]
        return noisy if released else [bool(v > 0) for v in noisy]
    return run


@given(st.floats(0.1, 4.0), st.integers(0, 1), st.integers(1, 3))
@settings(max_examples=40, deadline=None)
def test_a_selection_counts_the_log_ratio_of_the_index_taken(eps: float, index: int, score: int) -> None:
    """003-def3.8: P(i | u) = exp(eps u_i / 2) / sum_j exp(eps u_j / 2); scores (score, 0) on f, (0, 0) on f'."""
    run = _selection(eps)
    draws = [Draw("s t=0", DrawKind.EXPONENTIAL_MECHANISM, {"scores": [float(score), 0.0], "epsilon": eps,
                                                             "sensitivity": 1.0}, index)]
    base = door_run(run, [score], draws)
    assert base is not None
    h = held_equal(run, CLAIM, "pair", base, [0], {})
    a = eps * score / 2
    p_f = (a if index == 0 else 0.0) - math.log(math.exp(a) + 1)
    p_g = -math.log(2)
    assert h.diverged is None and len(h.shares) == 1
    assert h.reached == pytest.approx(abs(p_f - p_g), rel=1e-12)
    assert h.reached <= eps * score + 1e-12  # the mechanism's bound, eps times the scores' move


@given(st.floats(0.5, 8.0), st.integers(1, 3), st.floats(1.1, 4.0))
@settings(max_examples=30, deadline=None)
def test_a_released_count_counts_its_move_over_its_scale(scale: float, move: int, divisor: float) -> None:
    """A Laplace count moved by m spends |m| / b; the program's scale b / c makes it c |m| / b."""
    run = _count(scale)
    draws = [Draw("c t=0", DrawKind.LAPLACE, {"scale": scale}, 0.3)]
    base = door_run(run, [0], draws)
    assert base is not None and not base.decisions
    reported = {"c t=0": Draw("c t=0", DrawKind.LAPLACE, {"scale": scale / divisor}, 0.3)}
    h = held_equal(run, CLAIM, "pair", base, [move], reported)
    assert h.reached == pytest.approx(move / scale, rel=1e-12)
    assert h.implied == pytest.approx(divisor * move / scale, rel=1e-9)


def test_a_decision_is_listed_not_counted() -> None:
    run = _count(1.0, released=False)
    base = door_run(run, [5], [Draw("c t=0", DrawKind.LAPLACE, {"scale": 1.0}, 0.25)])
    assert base is not None and base.decisions == {"c t=0"}
    h = held_equal(run, CLAIM, "pair", base, [4], {})
    assert h.diverged is None and not h.shares and [d.site for d in h.decisions] == ["c t=0"]
    assert h.reached == 0


def test_a_release_the_door_never_saw_is_not_composed() -> None:
    """A release of the raw input is no post-processing of the door's values: f' cannot be held equal."""
    def run(source: NoiseSource, inputs: Sequence[Any]) -> list[Any]:
        return [[source.add_laplace(f"c t={t}", float(x), 1.0), float(x)] for t, x in enumerate(inputs)]
    base = door_run(run, [1], [Draw("c t=0", DrawKind.LAPLACE, {"scale": 1.0}, 0.0)])
    assert base is not None
    h = held_equal(run, CLAIM, "pair", base, [2], {})
    assert h.diverged is not None and "post-processing" in h.diverged
    assert math.isnan(h.reached)


def test_a_site_the_program_did_not_report_implies_an_infinite_loss() -> None:
    run = _count(2.0)
    base = door_run(run, [0], [Draw("c t=0", DrawKind.LAPLACE, {"scale": 2.0}, 0.1)])
    assert base is not None
    assert held_equal(run, CLAIM, "pair", base, [1], {"other": Draw("other", DrawKind.LAPLACE, {"scale": 2.0}, 0.0)}
                      ).implied == math.inf


def test_streaming_mwem_measurement_share_is_eps_over_2k() -> None:
    """003-alg2 at k = 1, eps = 0.5: a record moves the measured count by one at scale 2k / eps = 4 (share 0.25),
    and the selection of its step by a log-ratio of at most eps / (2k) = 0.25 (sensitivity 1, scores move by 1)."""
    plan = plan_for("003-alg2", Profile.QUICK)
    assert not isinstance(plan, str)
    si = next(i for i, p in enumerate(plan.settings) if (p["k"], p["epsilon"]) == (1, 0.5))
    e, params, space = plan.entry, plan.settings[si], plan.spaces[si]
    f = next(iter(space.families.values()))(horizon_of(e, params))
    measured = 0
    for seed in range(4):
        tape = seeded_tape(e, params, f, seed)
        assert tape is not None
        base = door_run(entry_run(e, params), f, tape)
        assert base is not None
        for label, g in space.neighbours(f):
            h = held_equal(entry_run(e, params), e.claim(params), label, base, g, {})
            assert h.diverged is None, h.diverged
            for s in h.shares:
                if s.kind is DrawKind.LAPLACE:
                    measured += 1
                    assert abs(s.move) == 1 and s.loss(Measure.PURE_DP, s.reference) == pytest.approx(0.25)
                else:
                    assert abs(s.loss(Measure.PURE_DP, s.reference)) <= 0.25 + 1e-12
    assert measured > 0


@pytest.mark.parametrize("anchor", DESIGNED)
def test_no_pair_of_a_correct_entry_composes_more_than_its_claim(anchor: str) -> None:
    """The entries' privacy theorems, along seeded runs of the reference on every design input of the quick plan."""
    plan = plan_for(anchor, Profile.QUICK)
    assert not isinstance(plan, str)
    for si, params in enumerate(plan.settings):
        e = plan.entry
        for make in plan.spaces[si].families.values():
            f = make(horizon_of(e, params))
            tapes = [t for t in (seeded_tape(e, params, f, seed) for seed in range(2)) if t is not None]
            for h in door_pairs(plan, si, tapes, f):
                assert h.diverged is not None or h.reached <= h.claim.parameter * (1 + 1e-9), h.describe()


def test_a_planted_scale_leak_shows_as_a_pair_above_the_claim() -> None:
    """The same composition of 003-alg2 with every measurement at scale / 4 (dpstream.insecure.planted): the pair
    that moves a measured count spends 4 x 0.25 on it, above the claim 0.5 (the previous test's control)."""
    plan = plan_for("003-alg2", Profile.QUICK)
    assert not isinstance(plan, str)
    si = next(i for i, p in enumerate(plan.settings) if (p["k"], p["epsilon"]) == (1, 0.5))
    e, params, space = plan.entry, plan.settings[si], plan.spaces[si]
    f = next(iter(space.families.values()))(horizon_of(e, params))
    correct = entry_run(e, params)

    def planted(source: NoiseSource, inputs: Sequence[Any]) -> list[Any]:
        return correct(PlantedNoise(source, PlantedLeak.parse("scale/4")), inputs)

    tape = seeded_tape(e, params, f, 0)
    assert tape is not None
    base = door_run(planted, f, tape)
    assert base is not None
    worst = max(held_equal(planted, e.claim(params), label, base, g, {}).reached for label, g in space.neighbours(f))
    assert worst >= 1.0 > e.claim(params).parameter


def test_a_decision_at_its_threshold_is_still_a_decision() -> None:
    """A discrete count compared with a threshold it sits on: one unit up crosses it, one unit down does not (a
    sparse-vector test, 004-alg2's segments): a decision, although one of the two probes changes the release."""
    def run(source: NoiseSource, inputs: Sequence[Any]) -> list[Any]:
        return [bool(source.add_discrete_laplace(f"c t={t}", int(x), 2.0) > 3) for t, x in enumerate(inputs)]
    base = door_run(run, [3], [Draw("c t=0", DrawKind.DISCRETE_LAPLACE, {"scale": 2.0}, 0)])
    assert base is not None and base.decisions == {"c t=0"}
    h = held_equal(run, CLAIM, "pair", base, [2], {})
    assert not h.shares and len(h.decisions) == 1
