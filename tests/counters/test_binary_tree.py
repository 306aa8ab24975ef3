"""Binary Tree counter (001-alg10), Laplace and discrete: exact error law, variance, vectors, calibration."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpstream.audit.counters.loss import stream_entry_epsilon
from dpstream.audit.counters.models import binary_tree_counter_model
from dpstream.claims import Measure, Neighbour
from dpstream.counters import BinaryTreeCounter
from dpstream.errors import DPStreamInputError, HorizonExceededError
from dpstream.insecure import InsecureSeededNoise, TapeRecorder, TapeReplay
from dpstream.tape import TapeMismatchError
from dpstream.testing import by_value, record_run, replay_vector
from dpstream.vectors import KnownAnswerVector
from dpstream.vectors.corpus import known_answer

VECTORS = [*known_answer("001-alg10"), *known_answer("004-lem3.1")]


def hand_error(noise: dict[str, float], t: int) -> float:
    """Derived from L5-L10 by hand: g(t) uses alpha_hat_i for every set bit i of t, and alpha_hat_i was
    last written (L8) at the time u_i = t with its bits below i cleared; so the error is the sum of
    the L8 draws at those times."""
    return sum(noise[f"001-alg10 L8 t={(t >> i) << i}"] for i in range(t.bit_length()) if (t >> i) & 1)


@pytest.mark.parametrize("discrete", [False, True])
def test_exact_error_law(discrete: bool) -> None:
    f = [3, -1, 0, 2, 5, 0, 1, 4, 2, 2, -3, 0, 1]
    T = 16
    releases, tape = record_run(lambda n: BinaryTreeCounter(0.7, T, noise=n, discrete=discrete), f, seed=5)
    noise = {d.site: d.value for d in tape}
    for t in range(1, len(f) + 1):
        assert releases[t - 1] - sum(f[:t]) == pytest.approx(hand_error(noise, t), abs=1e-12)
    model = binary_tree_counter_model(0.7, T, discrete=discrete, releases=len(f))
    assert np.allclose(model.mean(f), np.cumsum(f))
    assert np.allclose(np.asarray(releases) - np.cumsum(f), model.error(noise), atol=1e-12)
    assert model.injective
    if discrete:
        assert all(float(r).is_integer() for r in releases)


def test_one_node_per_time_and_site_names() -> None:
    _, tape = record_run(lambda n: BinaryTreeCounter(1.0, 8, noise=n), [1] * 8, seed=0)
    assert [d.site for d in tape] == [f"001-alg10 L8 t={t}" for t in range(1, 9)]
    assert {d.params["scale"] for d in tape} == {4.0}  # (floor(log2 8) + 1) / 1


@pytest.mark.parametrize("T", [1, 2, 3, 5, 8, 13, 16, 31, 32])
def test_exact_error_variance(T: int) -> None:
    """Var(g(t) - S(t)) = popcount(t) * 2 b^2 with b = (floor(log2 T) + 1)/eps (Laplace), and
    popcount(t) * 2p/(1-p)^2, p = exp(-1/b) (discrete Laplace, 004-sec2.4)."""
    eps = 0.4
    b = (math.floor(math.log2(T)) + 1) / eps
    pop = np.array([bin(t).count("1") for t in range(1, T + 1)])
    var = binary_tree_counter_model(eps, T).error_variance()
    assert np.allclose(var, pop * 2 * b**2, rtol=1e-12)
    p = math.exp(-1 / b)
    var_d = binary_tree_counter_model(eps, T, discrete=True).error_variance()
    assert np.allclose(var_d, pop * 2 * p / (1 - p) ** 2, rtol=1e-12)


@pytest.mark.parametrize("T", [1, 2, 3, 4, 7, 8, 9, 100, 128, 255, 256])
def test_calibration_meets_claim_exactly(T: int) -> None:
    """Exact worst-case loss over unit changes equals eps (input at t=1 enters floor(log2 T)+1 nodes)."""
    eps = 0.5
    model = binary_tree_counter_model(eps, T)
    assert stream_entry_epsilon(model).value == pytest.approx(eps, rel=1e-12)
    assert stream_entry_epsilon(binary_tree_counter_model(eps, T, discrete=True)).value == pytest.approx(eps, rel=1e-12)


@pytest.mark.parametrize("T", [2, 3, 4, 8, 100, 256])
def test_as_printed_violates_claim(T: int) -> None:
    """E-counters-1: the printed Lap(log2 T / eps) gives loss eps (floor(log2 T)+1)/log2 T > eps."""
    eps = 0.5
    loss = stream_entry_epsilon(binary_tree_counter_model(eps, T, as_printed=True)).value
    assert loss == pytest.approx(eps * (math.floor(math.log2(T)) + 1) / math.log2(T), rel=1e-12)
    assert loss > eps * (1 + 1e-3)
    counter = BinaryTreeCounter(eps, T, noise=InsecureSeededNoise(0), as_printed=True)
    # the claim states what holds (the exact worst case), the paper's eps stays readable
    assert counter.claim.parameter == pytest.approx(loss, rel=1e-12)
    assert counter.paper_claim.parameter == eps and "AS PRINTED" in counter.claim.note
    assert counter.scale == pytest.approx(math.log2(T) / eps)


def test_as_printed_T1_has_zero_scale_and_is_refused() -> None:
    with pytest.raises(DPStreamInputError) as info:
        BinaryTreeCounter(1.0, 1, noise=InsecureSeededNoise(0), as_printed=True)
    assert info.value.field == "T"
    assert BinaryTreeCounter(1.0, 1, noise=InsecureSeededNoise(0)).scale == 1.0  # default: one node per input


@pytest.mark.parametrize("vector", VECTORS, ids=[v.id for v in VECTORS])
def test_known_answer_vectors(vector: KnownAnswerVector) -> None:
    p = by_value(vector.params)
    discrete = vector.algorithm == "004-lem3.1"  # the Binary Mechanism: 001-alg10 with Lap_Z noise
    got = replay_vector(lambda n: BinaryTreeCounter(p["epsilon"], p["T"], noise=n, discrete=discrete), vector)
    assert got == pytest.approx(vector.expected, abs=1e-12)
    noise = {d.site: d.value for d in vector.tape}
    model = binary_tree_counter_model(p["epsilon"], p["T"], discrete=discrete, releases=len(vector.inputs))
    assert model.mean(vector.inputs) + model.error(noise) == pytest.approx(vector.expected, abs=1e-9)
    hand = [sum(vector.inputs[:t]) + hand_error(noise, t) for t in range(1, len(vector.inputs) + 1)]
    assert hand == pytest.approx(vector.expected, abs=1e-9)


def test_claim() -> None:
    claim = BinaryTreeCounter(0.25, 10, noise=InsecureSeededNoise(0)).claim
    assert (claim.measure, claim.parameter, claim.neighbour) == (Measure.PURE_DP, 0.25, Neighbour.STREAM_ENTRY)


def test_state_size_is_logarithmic() -> None:
    counter = BinaryTreeCounter(1.0, 5000, noise=InsecureSeededNoise(0))
    for t in range(1, 5001):
        counter.step(1.0)
        assert counter.state_size() == 2 * t.bit_length()


@pytest.mark.parametrize("x", [0.5, 1.25, math.nan, "1", True])
def test_discrete_rejects_non_integers_before_any_draw(x: object) -> None:
    recorder = TapeRecorder(InsecureSeededNoise(0))
    counter = BinaryTreeCounter(1.0, 4, noise=recorder, discrete=True)
    with pytest.raises(DPStreamInputError) as info:
        counter.step(x)  # type: ignore[arg-type]
    assert info.value.field == "f(t)" and counter.t == 0 and len(recorder.tape) == 0


def test_horizon_and_failed_draw() -> None:
    counter = BinaryTreeCounter(1.0, 2, noise=InsecureSeededNoise(0))
    counter.run([1, 1])
    with pytest.raises(HorizonExceededError):
        counter.step(1)
    recorder = TapeRecorder(InsecureSeededNoise(0))
    BinaryTreeCounter(1.0, 4, noise=recorder).run([1, 2, 3])
    replayed = BinaryTreeCounter(1.0, 8, noise=TapeReplay(recorder.tape))  # other T: other scale
    with pytest.raises(TapeMismatchError):
        replayed.step(1)
    assert replayed.t == 0 and replayed.alpha == [] and replayed.alpha_hat == [] and replayed.releases == []


@pytest.mark.parametrize(("kwargs", "field"), [
    ({"epsilon": 0.0, "T": 4}, "epsilon"), ({"epsilon": 1.0, "T": 0}, "T"), ({"epsilon": 1.0, "T": 2.0}, "T"),
    ({"epsilon": math.inf, "T": 4}, "epsilon"), ({"epsilon": 1.0, "T": 4, "discrete": 1}, "discrete"),
])
def test_bad_parameters(kwargs: dict[str, object], field: str) -> None:
    with pytest.raises(DPStreamInputError) as info:
        BinaryTreeCounter(noise=InsecureSeededNoise(0), **kwargs)  # type: ignore[arg-type]
    assert info.value.field == field
