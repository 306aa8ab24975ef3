"""The selected event test (dpstream.audit.selected_event): a conjunction chosen on selection runs, certified on
held-out runs; power on a pair above a pure-DP claim, no certificate for a pair at it."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from dpstream.audit.selected_event import SelectedEvent, choose_event, selected_event_test
from dpstream.noise import data_rng


def discrete_laplace(rng: np.random.Generator, scale: float, n: int) -> np.ndarray:
    """Lap_Z(scale) as the difference of two geometric variables (P(k) proportional to exp(-|k| / scale))."""
    p = 1.0 - math.exp(-1.0 / scale)
    return (rng.geometric(p, n) - rng.geometric(p, n)).astype(np.float64)


def pair(loss_sum: float, loss_end: float, n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Two statistics per run, as 004-alg3's law pair: a noisy sum that the pair moves by one (Lap_Z of log-ratio
    ``loss_sum`` per unit) and a rare 'end' (probability 0.02 on the first input, 0.02 e^-loss_end on the second).
    The largest log-ratio of any event is loss_sum + loss_end: the pair's pure-DP loss."""
    rng = data_rng(seed)
    first = np.stack([discrete_laplace(rng, 1 / loss_sum, n) + 1, (rng.random(n) < 0.02).astype(float)], axis=1)
    second = np.stack([discrete_laplace(rng, 1 / loss_sum, n),
                       (rng.random(n) < 0.02 * math.exp(-loss_end)).astype(float)], axis=1)
    return first, second


def test_a_pair_above_its_claim_is_certified_through_the_conjunction() -> None:
    """Loss 0.75 + 0.75 = 1.5 against a claim of 1: neither statistic alone exceeds the claim (0.75 each); the
    conjunction {sum >= 1 and end} does. 150000 runs per input, a fifth of them choosing."""
    first, second = pair(0.75, 0.75, 150_000, 1)
    test = selected_event_test("planted", ("sum", "end"), first, second, 30_000, 1.0, 0.001)
    assert test is not None and test.verdict == "violation", test
    assert "sum >=" in test.event and "end >= 1" in test.event and test.favours_f
    assert test.eps_lower_bound <= 1.5 + 1e-9  # never above the pair's true loss (at this level, this seed)
    assert test.to_data()["test"] == "selected event" and test.bound()["claimed_eps"] == 1.0


def test_a_pair_at_its_claim_is_not_certified() -> None:
    """Loss 0.5 + 0.5 = the claim 1: each seed certifies with probability at most the level 0.01, so two or more
    certificates among 8 seeds have probability below 28 * 0.01^2 = 0.0028 (the assertion's false alarm)."""
    certified = 0
    for seed in range(8):
        first, second = pair(0.5, 0.5, 30_000, 100 + seed)
        test = selected_event_test("exact", ("sum", "end"), first, second, 6_000, 1.0, 0.01)
        assert test is not None
        certified += test.verdict == "violation"
    assert certified <= 1


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(-3, 3), st.integers(0, 1)), min_size=5, max_size=80))
def test_identical_selection_runs_predict_no_excess(rows: list[tuple[int, int]]) -> None:
    """The same runs on both inputs: every event's favoured count at its lower bound is at most the other's at its
    upper bound, so the predicted bound is at most 0 (the selection never prefers an event for noise alone)."""
    X = np.asarray(rows, dtype=np.float64)
    chosen = choose_event(X, X, 0.05, 1000)
    assert chosen is None or chosen[1] <= 1e-9


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(-2, 2), st.integers(0, 1)), min_size=8, max_size=60),
       st.lists(st.tuples(st.integers(-2, 2), st.integers(0, 1)), min_size=8, max_size=60))
def test_the_held_out_counts_are_the_chosen_events(a: list[tuple[int, int]], b: list[tuple[int, int]]) -> None:
    """The reported counts are the chosen event's on the held-out runs, and the bound trails their plug-in ratio."""
    first, second = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    test = selected_event_test("p", ("x", "y"), first, second, 4, 0.5, 0.05)
    if test is None:
        return
    n = test.runs
    assert n == min(len(a), len(b)) - 4
    if test.favoured > 0 and test.other > 0:
        assert test.eps_lower_bound <= math.log(test.favoured / test.other) + 1e-9


def test_an_event_holds_where_each_condition_does() -> None:
    event = SelectedEvent(((0, True, 1.0), (1, False, 0.0)), favours_first=True)
    X = np.array([[1.0, 0.0], [2.0, 1.0], [0.0, 0.0], [5.0, -1.0]])
    assert event.holds(X).tolist() == [True, False, False, True]
    assert event.describe(("s", "m")) == "{s >= 1 and m <= 0}"


def test_the_witness_draws_the_event_bin_by_bin() -> None:
    """The report's picture: the held-out runs over the event's first statistic among those meeting its other
    condition; the bins inside the event hold exactly the counted runs, on each side."""
    from dpstream.conformance.pictures import _rows, witnesses_of

    first, second = pair(0.75, 0.75, 50_000, 3)
    test = selected_event_test("planted", ("sum", "end"), first, second, 10_000, 1.0, 0.001)
    assert test is not None and test.histogram is not None
    hist = test.histogram
    assert hist["statistic"] == "sum" and hist["among"] == "{end >= 1}"
    assert sum(hist["f"]) == int((first[10_000:, 1] >= 1).sum())
    ((title, witness),) = witnesses_of({"composed_event": test.to_data()})
    assert title == "pair test witness"
    inside = [(f, fp) for _, f, fp, into in _rows(witness["histogram"]) if into]
    favoured, other = sum(f for f, _ in inside), sum(fp for _, fp in inside)
    assert (favoured, other) == (test.favoured, test.other)
