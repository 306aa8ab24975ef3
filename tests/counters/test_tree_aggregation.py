"""Tree-based aggregation (002-alg3, discrete Gaussian, zCDP): error law, variance, vectors, calibration."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from dpstream.audit.counters.loss import stream_entry_rho
from dpstream.audit.counters.models import tree_aggregation_model
from dpstream.claims import Measure, Neighbour
from dpstream.counters import TreeAggregationCounter
from dpstream.errors import DPStreamInputError, HorizonExceededError
from dpstream.insecure import InsecureSeededNoise, TapeRecorder
from dpstream.testing import by_value, record_run, replay_vector
from dpstream.vectors import KnownAnswerVector
from dpstream.vectors.corpus import known_answer

VECTORS = list(known_answer("002-alg3"))


def hand_error(noise: dict[str, float], t: int) -> float:
    """From u2-u9: S~^t sums alpha~_j over the set bits j of t; alpha~_j was last written (u8) at the
    time t with its bits below j cleared."""
    return sum(noise[f"002-alg3 u8 t={(t >> j) << j}"] for j in range(t.bit_length()) if (t >> j) & 1)


def dgauss_variance(sigma2: float) -> float:
    """Var(N_Z(0, sigma2)) = sum y^2 e^{-y^2/(2 sigma2)} / sum e^{-y^2/(2 sigma2)} (002-def2.2), summed
    directly over |y| <= 60 sigma + 20 (the tail beyond is below e^{-1800})."""
    bound = int(60 * math.sqrt(sigma2)) + 20
    w = [math.exp(-y * y / (2 * sigma2)) for y in range(-bound, bound + 1)]
    return sum(y * y * wy for y, wy in zip(range(-bound, bound + 1), w, strict=True)) / sum(w)


def test_exact_error_law() -> None:
    f = [1, 0, 0, 2, 1, 1, 0, 3, 1, 0, 2]
    releases, tape = record_run(lambda n: TreeAggregationCounter(0.3, 16, noise=n), f, seed=8)
    noise = {d.site: d.value for d in tape}
    for t in range(1, len(f) + 1):
        assert releases[t - 1] - sum(f[:t]) == hand_error(noise, t)  # integers: exact
    model = tree_aggregation_model(0.3, 16, releases=len(f))
    assert np.allclose(model.mean(f), np.cumsum(f))
    assert np.array_equal(np.asarray(releases) - np.cumsum(f), model.error(noise))
    assert model.injective
    assert {d.params["sigma2"] for d in tape} == {5 / (2 * 0.3)}  # floor(log2 16) + 1 = 5 nodes


@pytest.mark.parametrize("T", [1, 2, 5, 8, 13])
def test_exact_error_variance(T: int) -> None:
    """Var(S~^t - S^t) = popcount(t) * Var(N_Z(0, sigma^2)), sigma^2 = (floor(log2 T)+1)/(2 rho)."""
    rho = 0.2
    sigma2 = (math.floor(math.log2(T)) + 1) / (2 * rho)
    v = dgauss_variance(sigma2)
    # 002-def2.2: "the variance of N(0, sigma^2) is at most sigma^2"; for sigma^2 >= 1 the gap is
    # ~ exp(-2 pi^2 sigma^2), below double precision, hence the 1e-12 slack (a strict case: below)
    assert v <= sigma2 * (1 + 1e-12)
    pop = np.array([bin(t).count("1") for t in range(1, T + 1)])
    assert np.allclose(tree_aggregation_model(rho, T).error_variance(), pop * v, rtol=1e-9)


def test_discrete_gaussian_variance_is_below_sigma2() -> None:
    for sigma2 in (0.05, 0.2, 0.5):
        assert dgauss_variance(sigma2) < sigma2 * (1 - 1e-3)
    assert dgauss_variance(0.05) == pytest.approx(2 * math.exp(-10) / (1 + 2 * math.exp(-10)), rel=1e-6)


@pytest.mark.parametrize("T", [1, 2, 3, 8, 9, 100, 256])
def test_calibration_meets_claim_exactly(T: int) -> None:
    assert stream_entry_rho(tree_aggregation_model(0.5, T)).value == pytest.approx(0.5, rel=1e-12)


@pytest.mark.parametrize("T", [2, 4, 8, 100, 256])
def test_as_printed_violates_claim(T: int) -> None:
    """E-counters-3: sigma^2 = log2(T)/(2 rho) costs rho (floor(log2 T)+1)/log2 T > rho; ln is worse."""
    rho = 0.5
    cost = stream_entry_rho(tree_aggregation_model(rho, T, as_printed=True)).value
    assert cost == pytest.approx(rho * (math.floor(math.log2(T)) + 1) / math.log2(T), rel=1e-12)
    assert cost > rho * (1 + 1e-3)
    ln_cost = rho * (math.floor(math.log2(T)) + 1) / math.log(T)  # the natural-log reading
    assert ln_cost > cost
    counter = TreeAggregationCounter(rho, T, noise=InsecureSeededNoise(0), as_printed=True)
    assert counter.claim.parameter == pytest.approx(cost, rel=1e-12)
    assert counter.paper_claim.parameter == rho and "AS PRINTED" in counter.claim.note
    counter.step(0.5)  # the printed box takes z in R^T; the default refuses (E-counters-4)


def test_real_inputs_are_refused_by_default() -> None:
    """E-counters-4: a non-integer shift of a discrete Gaussian has disjoint support (infinite loss)."""
    recorder = TapeRecorder(InsecureSeededNoise(0))
    counter = TreeAggregationCounter(1.0, 8, noise=recorder)
    with pytest.raises(DPStreamInputError) as info:
        counter.step(0.5)
    assert info.value.field == "f(t)" and counter.t == 0 and len(recorder.tape) == 0
    # the releases of 0 and 0.5 never coincide: a single output tells the neighbours apart
    a = TreeAggregationCounter(1.0, 8, noise=InsecureSeededNoise(1), as_printed=True).step(0.0)
    b = TreeAggregationCounter(1.0, 8, noise=InsecureSeededNoise(1), as_printed=True).step(0.5)
    assert Fraction(a).denominator == 1 and Fraction(b).denominator == 2


@pytest.mark.parametrize("vector", VECTORS, ids=[v.id for v in VECTORS])
def test_known_answer_vectors(vector: KnownAnswerVector) -> None:
    p = by_value(vector.params)
    rho, T = p["rho"], p["T"]
    got = replay_vector(lambda n: TreeAggregationCounter(rho, T, noise=n), vector)
    assert got == vector.expected
    noise = {d.site: d.value for d in vector.tape}
    model = tree_aggregation_model(rho, T, releases=len(vector.inputs))
    assert list(model.mean(vector.inputs) + model.error(noise)) == pytest.approx(vector.expected, abs=1e-9)
    hand = [sum(vector.inputs[:t]) + hand_error(noise, t) for t in range(1, len(vector.inputs) + 1)]
    assert hand == vector.expected


def test_claim_and_horizon() -> None:
    counter = TreeAggregationCounter(0.125, 3, noise=InsecureSeededNoise(0))
    claim = counter.claim
    assert (claim.measure, claim.parameter, claim.neighbour) == (Measure.ZCDP, 0.125, Neighbour.STREAM_ENTRY)
    counter.run([1, 1, 1])
    with pytest.raises(HorizonExceededError):
        counter.step(1)


@pytest.mark.parametrize(("rho", "T", "field"), [(0.0, 4, "rho"), (-1.0, 4, "rho"), (math.nan, 4, "rho"),
                                                 (1.0, 0, "T"), (1.0, "4", "T")])
def test_bad_parameters(rho: float, T: int, field: str) -> None:
    with pytest.raises(DPStreamInputError) as info:
        TreeAggregationCounter(rho, T, noise=InsecureSeededNoise(0))
    assert info.value.field == field
