"""The n x T model, pattern codes, the padding population and the query helpers of 002."""

from __future__ import annotations

import itertools
import math

import pytest

from dpstream.errors import DPStreamInputError
from dpstream.insecure import InsecureSeededNoise
from dpstream.longitudinal.cumulative import CumulativeSynthesizer
from dpstream.longitudinal.data import (
    LongitudinalData,
    columns,
    pattern_code,
    pattern_string,
    validate_matrix,
    window_histogram,
)
from dpstream.longitudinal.generators import random_matrix
from dpstream.longitudinal.padding import de_bruijn, padding_matrix
from dpstream.longitudinal.queries import CumulativeQuery, WindowQuery, histogram_queries, poverty_queries


def test_pattern_codes_round_trip() -> None:
    assert pattern_code("011") == 3 and pattern_code("110") == 6 and pattern_code([1, 0]) == 2
    for w in (1, 2, 4):
        for c in range(2**w):
            assert pattern_code(pattern_string(c, w)) == c
    assert pattern_code("21", alphabet=3) == 7 and pattern_string(7, 2, 3) == "21"
    with pytest.raises(DPStreamInputError):
        pattern_code("012")


def test_model_validation() -> None:
    X = [[0, 1, 1], [1, 1, 0]]
    data = LongitudinalData(X)
    assert (data.n, data.T) == (2, 3)
    assert data.column(2).tolist() == [1, 1]
    assert data.hamming(3).tolist() == [2, 2] and data.hamming(0).tolist() == [0, 0]
    assert data.histogram(3, 2).tolist() == [0, 0, 1, 1]  # windows (x^2, x^3): "11" (code 3) and "10" (code 2)
    assert [c.tolist() for c in columns(X)] == [[0, 1], [1, 1], [1, 0]]
    for bad in ([[0, 2]], [[0.5, 1]], [0, 1], [[0, 1], [1]]):
        with pytest.raises(DPStreamInputError):
            validate_matrix(bad)


def test_de_bruijn_and_padding_population() -> None:
    for A, k in ((2, 1), (2, 3), (2, 5), (3, 2), (4, 2)):
        B = de_bruijn(k, A)
        L = len(B)
        assert A**k == L
        windows = {tuple(B[(i + j) % L] for j in range(k)) for i in range(L)}
        assert len(windows) == A**k  # every k-string exactly once, cyclically
        P = padding_matrix(k, k + 6, 3, A)
        for t in range(k, k + 7):
            assert window_histogram(P, t, k, A).tolist() == [3] * A**k


def test_poverty_query_weights() -> None:
    q = poverty_queries(3)
    expected = {
        "at least one month": {"001", "010", "011", "100", "101", "110", "111"},
        "at least two months": {"011", "101", "110", "111"},
        "two consecutive months": {"011", "110", "111"},
        "all months": {"111"},
    }
    for name, patterns in expected.items():
        assert set(q[name].weights) == patterns and all(w == 1.0 for w in q[name].weights.values())


def test_lift_and_answers() -> None:
    X = random_matrix(40, 6, seed=3)
    q = WindowQuery(2, {"01": 2.0, "11": -1.0})
    lifted = q.lift(3)
    assert lifted == {1: 2.0, 5: 2.0, 3: -1.0, 7: -1.0}
    for t in range(3, 7):
        assert q.answer(X, t) == pytest.approx(q.from_histogram(window_histogram(X, t, 3), 3))
    assert sum(h.answer(X, 4) for h in histogram_queries(3)) == 40
    assert WindowQuery.indicator("1").padding_answer(3, 5) == 4 * 5
    with pytest.raises(DPStreamInputError):
        q.lift(1)
    with pytest.raises(DPStreamInputError):
        WindowQuery(2, {"011": 1.0})


def test_cumulative_queries_on_synthetic_data() -> None:
    """c_b^t on Algorithm 2's synthetic data equals the released monotonized counts S^_b^t."""
    X = random_matrix(30, 6, seed=5)
    synth = CumulativeSynthesizer(6, 2.0, noise=InsecureSeededNoise(5))
    releases = synth.run(X)
    S = synth.synthetic
    for t, release in enumerate(releases, start=1):
        assert [CumulativeQuery(b).answer(S, t) for b in range(t + 1)] == release.S_hat.tolist()
    assert CumulativeQuery(0).answer(X, 0) == 30 and CumulativeQuery(1).answer(X, 0) == 0
    # reduction of 002-sec2.1: with k = T, c_b^t = sum over |s| >= b of q_s^t
    T = 6
    for b in range(T + 1):
        weights = {"".join(map(str, s)): 1.0 for s in itertools.product((0, 1), repeat=T) if sum(s) >= b}
        if weights:
            assert WindowQuery(T, weights).answer(X, T) == CumulativeQuery(b).answer(X, T)
    assert math.isfinite(CumulativeQuery(2).answer(X, 3))
