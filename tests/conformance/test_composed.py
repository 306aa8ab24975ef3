"""A neighbouring pair's loss composed over the additive draws it moves (dpstream.conformance.composed), and the
transcript mode's use of it (docs/conformance.md, "Transcript mode").

Expected values come from the papers' accounting, not from the code: a counter's pair moves every node of its
path by 1 at scale (levels)/eps, so it reaches the whole claim (001-alg10); 002-alg1's substitution moves two bins
by 1 with variance 1 at rho = 1 (rho = 2 x 1/2); PHDStream's counts carry eps/2 (001-alg1, the other half is
PrivTree's split decisions the other half)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpstream.audit.registry import Profile
from dpstream.claims import Measure, Neighbour, PrivacyClaim
from dpstream.conformance.composed import ComposedRatio, Influence, Move, compose, influence
from dpstream.conformance.composed_tests import (
    EVENT_PROBE,
    EVENT_PROBE_WARM,
    composed_pairs,
    event_ratio,
    expected_margin,
    own_speed,
)
from dpstream.conformance.replays import completed, seeded_tape
from dpstream.conformance.statistical import horizon_of, plan_for
from dpstream.conformance.transcript import _testable
from dpstream.noise import DrawKind
from dpstream.tape import Draw


def _tape(anchor: str, si: int, seed: int = 1) -> tuple[Any, list[Draw]]:
    plan = plan_for(anchor, Profile.QUICK)
    assert not isinstance(plan, str)
    e, params = plan.entry, plan.settings[si]
    tape = seeded_tape(e, params, next(iter(plan.spaces[si].families.values()))(horizon_of(e, params)), seed)
    assert tape is not None
    return plan, tape


def _weakened(draws: list[Draw], c: float) -> list[Draw]:
    """The draws as a program with every scale divided by c (every variance by c^2) reports them."""
    out = []
    for d in draws:
        if d.kind in (DrawKind.LAPLACE, DrawKind.DISCRETE_LAPLACE):
            out.append(Draw(d.site, d.kind, {"scale": float(d.params["scale"]) / c}, d.value))
        elif d.kind is DrawKind.DISCRETE_GAUSSIAN:
            out.append(Draw(d.site, d.kind, {**d.params, "sigma2": float(d.params["sigma2"]) / c / c}, d.value))
        else:
            out.append(d)
    return out


def test_a_counters_pairs_reach_the_whole_claim_and_a_weaker_scale_composes_above_it() -> None:
    plan, draws = _tape("001-alg10", 0)
    pairs = composed_pairs(plan, 0, _weakened(draws, 1.5))
    assert pairs and all(c.ratio is not None and c.residual <= 0.05 for c in pairs)
    # a change at t moves the completed dyadic nodes containing t, each by 1 at scale (floor(log2 T) + 1)/eps:
    # t = 1 lies in four nodes completed by T = 13, so that pair reaches eps; later times fewer
    assert max(c.reached for c in pairs) == pytest.approx(pairs[0].claim, rel=1e-9)
    for c in pairs:
        assert c.reached <= c.claim * (1 + 1e-9) and c.implied == pytest.approx(1.5 * c.reached, rel=1e-9)
        assert all(abs(m.delta) == pytest.approx(1.0, abs=1e-9) for m in c.moves)
        assert c.reached == pytest.approx(len(c.moves) * c.claim / 4, rel=1e-9)
    assert pairs[0].exceeds


def test_zcdp_substitution_moves_two_bins_and_reaches_rho() -> None:
    plan, draws = _tape("002-alg1", 1)
    pairs = composed_pairs(plan, 1, _weakened(draws, 1.5))
    assert pairs and pairs[0].measure is Measure.ZCDP
    for c in pairs:
        assert len(c.moves) == 2 and c.reached == pytest.approx(1.0, rel=1e-9) == c.claim
        assert c.implied == pytest.approx(2.25, rel=1e-9)


def test_the_crowd_shows_most_of_002_alg2s_rho_and_its_best_pair_is_tested() -> None:
    """002-alg2 at T = 4, rho = 0.5 (docs/conformance.md, "Why the crowd"): Corollary B.1 gives rho_b = rho (8, 8,
    1, 1) / 18, counter b the budget rho_b / 2 over T - b + 1 steps, and the prefix sums of 002-alg3 use the dyadic
    nodes [1], [1,2], [3], [1..4]. Individual 0 (all ones) with its first half zeroed moves counter 1 at local times
    1 and 3 (nodes [1], [1,2], [3] of 3 levels: rho_1 / 2), counter 2 at local 1 and 3 (nodes [1], [1,2], [3] of 2
    levels: 3/4 rho_2), counters 3 and 4 once (rho_b / 2): 11/18 of rho. All zeros: every counter once, rho / 2."""
    from dpstream.conformance.composed_tests import reference_pairs
    from dpstream.conformance.statistical import PAIR_REACH

    plan, draws = _tape("002-alg2", 0)
    pairs = {c.label: c for c in composed_pairs(plan, 0, _weakened(draws, 1.5))}
    half = pairs["individual 0 gets its first half zeroed [0, 0, 1, 1]"]
    assert half.reached == pytest.approx(11 / 18 * half.claim, rel=1e-9) and half.ratio is not None
    assert half.implied == pytest.approx(2.25 * half.reached, rel=1e-9)
    assert all(c.reached <= half.reached for c in pairs.values())
    best = reference_pairs(plan, PAIR_REACH)
    assert best is not None and best[1].reached == pytest.approx(11 / 18 * best[1].claim, rel=1e-9)


def test_phdstream_pairs_reach_the_claim_through_a_count_and_a_split_decision() -> None:
    """PHDStream's eps is half the leaf counts' (scale 2/eps), half PrivTree's (lambda = 2D/eps): a point inserted at
    t = 1 moves one count by 1 and the root's split threshold by 1, the later steps' decisions only through the
    released counts (held equal); so each pair reaches exactly the claim, and never more."""
    plan, draws = _tape("001-alg1", 0)
    pairs = composed_pairs(plan, 0, _weakened(draws, 1.5))
    assert pairs and all(c.reached == pytest.approx(c.claim, rel=1e-6) for c in pairs)
    for c in pairs:
        assert len(c.moves) == 1 and len(c.decisions) == 1 and abs(c.decisions[0].shift) == pytest.approx(1.0)
        assert c.decisions[0].site.endswith("v=root") and c.branch is not None
        assert c.implied == pytest.approx(1.5 * c.claim, rel=1e-6) and c.exceeds
    plan1, draws1 = _tape("001-alg1", 1)
    labels = {c.label for c in composed_pairs(plan1, 1, draws1)}
    every = {label for label, _ in plan1.spaces[1].neighbours(
        next(iter(plan1.spaces[1].families.values()))(horizon_of(plan1.entry, plan1.settings[1])))}
    assert labels < every  # the pair whose shift no additive draw explains (it flips a split) is not composed


def test_the_branch_event_carries_the_programs_scale_and_the_likelier_setting_is_tried_first() -> None:
    """On the branch of the root's decision (the root not split) the count moved is the root's own, a site the
    program's run did not report: it takes the program's scale where the program drew Laplace at the reference's
    stated scale (``carried_over``), so the event's log-ratio is the pair's whole loss on D = 1 (eps = 0.5: count
    0.25 c + root decision 0.25 c at scale / c). On D = 2 (eps = 2: count scale 2/eps = 1, lambda = 2D/eps = 2) the
    pair also moves the second level's decision, which the event does not hold: 1 c + 0.5 c of the implied 2 c, above
    the claim only for c > 4/3; and its event lies in the root's far tail, so with the runs of a quick check the
    D = 1 setting is tried first, and a correct program's (c = 1) event is not tried at all."""
    found: dict[int, list[Any]] = {}
    for si in (0, 1):
        plan, draws = _tape("001-alg1", si)
        for c, want in ((1.0, 0.5), (1.5, 0.75)) if si == 0 else ((1.5, 2.25),):  # D = 2 at c = 1: 1.5 < 2
            pairs = composed_pairs(plan, si, _weakened(draws, c))
            assert pairs[0].branch is not None and event_ratio(pairs[0]) == pytest.approx(want, rel=1e-6)
            assert pairs[0].implied == pytest.approx((0.5, 2.0)[si] * c, rel=1e-6)
            if c == 1.0:
                assert not _testable({si: pairs}, 30_000, 1e-4)
            else:
                found[si] = pairs
    order = _testable(found, 30_000, 1e-4)
    assert [si for si, _ in order] == [0, 1] and event_ratio(order[1][1][0]) > 2.0
    assert expected_margin(order[0][1][0], 30_000, 1e-4) > expected_margin(order[1][1][0], 30_000, 1e-4)


@pytest.mark.parametrize("seed", [1, 8])
def test_the_branch_is_read_up_to_its_decisions_step_where_a_later_decision_flips(seed: int) -> None:
    """Seed 8's run: on the root's branch (not split at t = 1) the pair's shift is no move of the branch's draws
    on the whole run (a later step's decision flips on f'); read from the features of t = 1 alone it is the root's
    count moved by 1, so the event holds the whole 0.25 c + 0.25 c (without the steps it held the outcome's 0.375
    only). Seed 1's is composed on the whole run, as before."""
    plan, draws = _tape("001-alg1", 0, seed)
    branched = [c for c in composed_pairs(plan, 0, _weakened(draws, 1.5)) if c.branch is not None]
    assert branched and all(event_ratio(c) == pytest.approx(0.75, rel=1e-6) == c.implied for c in branched)


def test_a_run_that_took_the_rare_outcome_still_composes_its_branch() -> None:
    """The reported run already took the root's rare outcome at t = 1 (its split draw at -30: not split): the other
    outcome, from which the branch's indicators differ, is the draw forced beyond both thresholds the other way,
    not the run itself (before, no indicator differed and the pair had no branch event: 001-alg3's eps = 0.5 runs
    under ``serve --plant scale/2``)."""
    plan, draws = _tape("001-alg1", 0)
    e, params = plan.entry, plan.settings[0]
    f = next(iter(plan.spaces[0].families.values()))(horizon_of(e, params))
    i = next(k for k, d in enumerate(draws) if d.site == "001-alg5 L11 t=1 v=root")
    rare = list(draws)
    rare[i] = Draw(rare[i].site, rare[i].kind, rare[i].params, -30.0)
    tape = _weakened(completed(e, params, f, rare), 1.5)  # the draws of the branch it took, every scale / 1.5
    first = [c for c in composed_pairs(plan, 0, tape) if c.label.startswith("t=1")]
    assert first and all(c.branch is not None and event_ratio(c) == pytest.approx(0.75, rel=1e-6) for c in first)


class _Recorder:
    """A sampler that releases its inputs' first value and records every chunk it is asked for."""

    chunk = 7

    def __init__(self) -> None:
        self.asked: list[tuple[int, int]] = []

    def sample(self, inputs: Any, runs: int, seed: int) -> np.ndarray[Any, Any]:
        self.asked.append((int(inputs[0]), runs))
        return np.full((runs, 1), float(inputs[0]))


def test_the_event_tests_timing_runs_are_fixed_in_number_and_kept_per_input() -> None:
    """own_speed: one warm-up chunk on the first input (not returned), then EVENT_PROBE runs on each input, returned
    as that input's first held-out runs; their number never depends on what they release."""
    sampler = _Recorder()
    speed, timed = own_speed(sampler, [[1.0], [2.0]], 0, None)  # type: ignore[arg-type]
    assert speed > 0 and [R.shape for R in timed] == [(EVENT_PROBE, 1), (EVENT_PROBE, 1)]
    assert [float(R[0, 0]) for R in timed] == [1.0, 2.0] and sampler.chunk == 7  # the caller's sampler unchanged
    assert sampler.asked == [(1, EVENT_PROBE_WARM), (1, EVENT_PROBE), (2, EVENT_PROBE)]  # chunks of a copy


def test_a_missing_draw_composes_to_an_unbounded_loss() -> None:
    move = Move("s", DrawKind.LAPLACE, 1.0, {"scale": 2.0}, None)
    assert move.loss(Measure.PURE_DP, move.reference) == 0.5 and math.isinf(move.loss(Measure.PURE_DP, None))
    gauss = Move("s", DrawKind.DISCRETE_GAUSSIAN, 2.0, {"sigma2": 4.0}, {"sigma2": 4.0})
    assert gauss.loss(Measure.ZCDP, gauss.reference) == 0.5 and math.isinf(gauss.loss(Measure.PURE_DP, {"sigma2": 4.0}))


@settings(max_examples=40, deadline=None)
@given(scale=st.floats(0.1, 10.0), delta=st.floats(-3.0, 3.0).filter(lambda x: abs(x) > 1e-3),
       z=st.lists(st.floats(-50.0, 50.0), min_size=1, max_size=20))
def test_a_laplace_ratio_is_bounded_by_the_pairs_loss(scale: float, delta: float, z: list[float]) -> None:
    """For one Laplace draw the composed log-likelihood ratio lies in [-|d|/b, |d|/b], and reaches the bound
    beyond the two means (the event where the pair's loss is exact)."""
    ratio = ComposedRatio(((1.0,),), (0.0,), (0.0,), (delta,), (False,), (scale,))
    L = ratio(np.asarray(z, dtype=np.float64).reshape(-1, 1))
    assert np.all(np.abs(L) <= abs(delta) / scale * (1 + 1e-12))
    far = np.asarray([[delta + math.copysign(1.0, delta)], [-math.copysign(1.0, delta)]])
    assert ratio(far) == pytest.approx([abs(delta) / scale, -abs(delta) / scale])


def test_influence_separates_linear_draws_from_decisions() -> None:
    """A release that is the draw plus a count is linear; one that thresholds the draw is a decision."""
    draws = [Draw("a", DrawKind.LAPLACE, {"scale": 1.0}, 0.3), Draw("b", DrawKind.LAPLACE, {"scale": 1.0}, 0.05),
             Draw("c", DrawKind.COIN, {}, True)]

    def features(x: Any, ds: Any) -> Any:
        a, b = ds[0].value, ds[1].value
        return np.asarray([x[0] + a, 1.0 if x[0] + b > 0.5 else 0.0])

    inf = influence(draws, [0.5], features)
    assert isinstance(inf, Influence) and [d.site for d in inf.draws] == ["a"] and inf.decisions == 1
    claim = PrivacyClaim.pure(1.0, Neighbour.EVENT, "test")
    moved = compose(claim, "x-0.1", [0.4], features([0.4], draws) - inf.base, inf, {}, {})
    assert moved is None  # the shift flips the decision: no additive draw explains it
    kept = compose(claim, "x+0.01", [0.51], np.asarray([0.01, 0.0]), inf, {d.site: d for d in draws}, {})
    assert kept is not None and kept.reached == pytest.approx(0.01) and kept.ratio is not None


@pytest.mark.parametrize(("leak", "certified"), [(None, False), (1.5, True)])
def test_the_composed_event_certifies_a_scale_leak_and_never_a_correct_program(monkeypatch: pytest.MonkeyPatch,
                                                                              leak: float | None,
                                                                              certified: bool) -> None:
    """The pre-registered composed event of a counter's pair (001-alg10, t = 1: four tree nodes, the whole claim):
    on the reference it is not a violation; with every scale / 1.5 (loss 1.5 eps, no single node over its share) it
    is, with the event's exact ratio e^(1.5 eps) = e^0.75 (its probability 2^-4 on the favoured side). Runs of the
    reference in process (EntrySampler, vectorised), the program's reported scales those of the run's law."""
    from dpstream.conformance import composed_tests
    from dpstream.conformance.entry_sampler import EntrySampler
    from dpstream.conformance.runner import ConformConfig
    from dpstream.insecure.planted import PlantedLeak

    plan, draws = _tape("001-alg10", 0)
    reported = draws if leak is None else _weakened(draws, leak)
    pair = max(composed_pairs(plan, 0, reported), key=lambda c: c.reached)
    assert pair.reached == pytest.approx(pair.claim) and pair.label.startswith("t=1 ")
    planted = None if leak is None else PlantedLeak("scale", leak)
    monkeypatch.setattr(composed_tests, "ProtocolSampler",
                        lambda command, anchor, params, **kw: EntrySampler(anchor, params, planted))
    monkeypatch.setitem(composed_tests.COMPOSED_HOLDOUT, Profile.QUICK, 60_000)
    test = composed_tests.event_test(ConformConfig(command=("reference",)), plan, 0, pair, 1e-4, True, Profile.QUICK,
                                 seed=7)
    assert test is not None and test.runs == 60_000
    assert (test.verdict == "violation") is certified, test.detail()
    if certified:
        assert test.favoured / test.other == pytest.approx(math.exp(0.75), rel=0.2)
        assert test.eps_lower_bound > pair.claim
    else:
        assert test.eps_lower_bound <= pair.claim
