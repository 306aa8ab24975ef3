"""Hybrid mechanism (Chan, Shi & Song 2011): error law, variance, vectors, calibration."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpstream.audit.counters.loss import stream_entry_epsilon
from dpstream.audit.counters.models import hybrid_counter_model
from dpstream.claims import Measure, Neighbour
from dpstream.counters import HybridCounter
from dpstream.errors import DPStreamInputError
from dpstream.insecure import InsecureSeededNoise, TapeRecorder, TapeReplay
from dpstream.tape import TapeMismatchError, TapeSiteMissingError
from dpstream.testing import record_run, replay_vector
from dpstream.vectors import KnownAnswerVector
from dpstream.vectors.corpus import known_answer

VECTORS = list(known_answer("CSS11-hybrid"))


def hand_error(noise: dict[str, float], t: int) -> float:
    """From the construction: the L draws at 1, 2, 4, ..., 2^k (k = floor(log2 t)) plus, for
    t = 2^k + tau with tau > 0, the B_k draws at the local times tau with its low bits cleared."""
    k = t.bit_length() - 1
    err = sum(noise[f"CSS11-hybrid L t={2**i}"] for i in range(k + 1))
    tau = t - 2**k
    err += sum(noise[f"CSS11-hybrid B k={k} / 001-alg10 L8 t={(tau >> i) << i}"]
               for i in range(tau.bit_length()) if (tau >> i) & 1)
    return err


def test_exact_error_law() -> None:
    f = [1, 0, 2, 1, -1, 0, 3, 1, 1, 0, 2, 2, 1, 0, 4, 1, 1, 0, 2.5]
    releases, tape = record_run(lambda n: HybridCounter(0.6, noise=n), f, seed=21)
    noise = {d.site: d.value for d in tape}
    for t in range(1, len(f) + 1):
        assert releases[t - 1] - sum(f[:t]) == pytest.approx(hand_error(noise, t), abs=1e-12)
    model = hybrid_counter_model(0.6, len(f))
    assert np.allclose(model.mean(f), np.cumsum(f))
    assert np.allclose(np.asarray(releases) - np.cumsum(f), model.error(noise), atol=1e-12)
    assert model.injective
    scales = {d.site: d.params["scale"] for d in tape}
    assert scales["CSS11-hybrid L t=8"] == pytest.approx(2 / 0.6)
    assert scales["CSS11-hybrid B k=3 / 001-alg10 L8 t=2"] == pytest.approx(2 * 3 / 0.6)


def test_exact_error_variance() -> None:
    """Var at t = 2^k + tau: 8 (k+1)/eps^2 + 8 k^2 popcount(tau)/eps^2."""
    eps, T = 0.7, 200
    expected = []
    for t in range(1, T + 1):
        k = t.bit_length() - 1
        expected.append(8 * (k + 1) / eps**2 + 8 * k * k * bin(t - 2**k).count("1") / eps**2)
    assert np.allclose(hybrid_counter_model(eps, T).error_variance(), expected, rtol=1e-12)


@pytest.mark.parametrize(("T", "expected"), [(1, 0.5), (3, 0.5), (4, 1.0), (64, 1.0), (300, 1.0)])
def test_calibration(T: int, expected: float) -> None:
    """eps/2 for L + eps/2 for the B_k an input enters; eps/2 when no input has both within T."""
    assert stream_entry_epsilon(hybrid_counter_model(1.0, T)).value == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("vector", VECTORS, ids=[v.id for v in VECTORS])
def test_known_answer_vectors(vector: KnownAnswerVector) -> None:
    eps = vector.params["epsilon"]
    got = replay_vector(lambda n: HybridCounter(eps, noise=n), vector)
    assert got == pytest.approx(vector.expected, abs=1e-12)
    noise = {d.site: d.value for d in vector.tape}
    model = hybrid_counter_model(eps, len(vector.inputs))
    assert model.mean(vector.inputs) + model.error(noise) == pytest.approx(vector.expected, abs=1e-9)
    hand = [sum(vector.inputs[:t]) + hand_error(noise, t) for t in range(1, len(vector.inputs) + 1)]
    assert hand == pytest.approx(vector.expected, abs=1e-9)


def test_claim_and_state_size() -> None:
    counter = HybridCounter(0.5, noise=InsecureSeededNoise(0))
    claim = counter.claim
    assert (claim.measure, claim.parameter, claim.neighbour) == (Measure.PURE_DP, 0.5, Neighbour.STREAM_ENTRY)
    for t in range(1, 3000):
        counter.step(1)
        assert counter.state_size() <= 3 + 2 * t.bit_length()


def test_failed_draw_leaves_state_unchanged() -> None:
    """A draw failing inside B_k (site missing from the tape) changes neither the hybrid nor B_k."""
    recorder = TapeRecorder(InsecureSeededNoise(0))
    HybridCounter(1.0, noise=recorder).run([1, 1])  # draws L t=1, L t=2 only
    counter = HybridCounter(1.0, noise=TapeReplay(recorder.tape))
    counter.run([1, 1])
    binary = counter.binary
    assert binary is not None
    state = (counter.t, counter.beta, counter.pending, binary.t, list(binary.alpha_hat), len(counter.releases))
    with pytest.raises(TapeSiteMissingError):
        counter.step(1)  # t = 3: B_1 draws at its local t = 1
    assert (counter.t, counter.beta, counter.pending, binary.t, binary.alpha_hat, len(counter.releases)) == state
    bad = HybridCounter(2.0, noise=TapeReplay(recorder.tape))  # L scale mismatch at t = 1
    with pytest.raises(TapeMismatchError):
        bad.step(1)
    assert (bad.t, bad.beta, bad.pending, bad.binary, bad.releases) == (0, 0.0, 0.0, None, [])


@pytest.mark.parametrize("eps", [0.0, -1.0, math.nan, "x"])
def test_bad_parameters(eps: float) -> None:
    with pytest.raises(DPStreamInputError) as info:
        HybridCounter(eps, noise=InsecureSeededNoise(0))
    assert info.value.field == "epsilon"
