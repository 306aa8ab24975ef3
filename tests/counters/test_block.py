"""Block counter (001-alg9): exact error law, variance, t = kB behaviour, vectors, calibration."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpstream.audit.counters.loss import stream_entry_epsilon
from dpstream.audit.counters.models import block_counter_model
from dpstream.claims import Measure, Neighbour
from dpstream.counters import BlockCounter
from dpstream.errors import DPStreamInputError, HorizonExceededError
from dpstream.insecure import InsecureSeededNoise, TapeRecorder, TapeReplay
from dpstream.tape import TapeMismatchError
from dpstream.testing import by_value, record_run, replay_vector
from dpstream.vectors import KnownAnswerVector
from dpstream.vectors.corpus import known_answer

VECTORS = list(known_answer("001-alg9"))


def hand_error(noise: dict[str, float], t: int, B: int) -> float:
    """From L5-L12: beta_lastblock carries the L7 draws of every block end kB <= t; alpha carries the
    L10 draws of the times after the last block end, up to t."""
    k = t // B
    return (sum(noise[f"001-alg9 L7 t={j * B}"] for j in range(1, k + 1))
            + sum(noise[f"001-alg9 L10 t={j}"] for j in range(k * B + 1, t + 1)))


@pytest.mark.parametrize("B", [1, 2, 3, 8])
def test_exact_error_law(B: int) -> None:
    f = [0.5, -1, 2, 0, 3, 1, 1, -2, 0, 4, 1, 1, 0, 2, 5, 1, 0]
    releases, tape = record_run(lambda n: BlockCounter(0.9, B, noise=n), f, seed=B)
    noise = {d.site: d.value for d in tape}
    for t in range(1, len(f) + 1):
        assert releases[t - 1] - sum(f[:t]) == pytest.approx(hand_error(noise, t, B), abs=1e-12)
    model = block_counter_model(0.9, B, len(f))
    assert np.allclose(model.mean(f), np.cumsum(f))
    assert np.allclose(np.asarray(releases) - np.cumsum(f), model.error(noise), atol=1e-12)
    assert model.injective


def test_block_end_behaviour() -> None:
    """At t = kB nothing is drawn at L10, one block draw is made at L7, and g(kB) = beta_lastblock."""
    _, tape = record_run(lambda n: BlockCounter(1.0, 3, noise=n), [1] * 7, seed=0)
    assert [d.site for d in tape] == ["001-alg9 L10 t=1", "001-alg9 L10 t=2", "001-alg9 L7 t=3",
                                      "001-alg9 L10 t=4", "001-alg9 L10 t=5", "001-alg9 L7 t=6",
                                      "001-alg9 L10 t=7"]
    assert {d.params["scale"] for d in tape} == {2.0}


@pytest.mark.parametrize("B", [1, 2, 5, 8])
def test_exact_error_variance(B: int) -> None:
    """Var(g(t) - S(t)) = (floor(t/B) + t mod B) * 2 (2/eps)^2 = 8 (floor(t/B) + t mod B) / eps^2."""
    eps, T = 0.6, 40
    expected = [8 * (t // B + t % B) / eps**2 for t in range(1, T + 1)]
    assert np.allclose(block_counter_model(eps, B, T).error_variance(), expected, rtol=1e-12)


@pytest.mark.parametrize(("B", "expected"), [(1, 0.5), (2, 1.0), (3, 1.0), (8, 1.0)])
def test_calibration(B: int, expected: float) -> None:
    """Lap(2/eps) at both levels: worst loss eps (an input inside a block enters 2 statistics);
    for B = 1 every input ends a block and enters only one statistic (eps/2)."""
    assert stream_entry_epsilon(block_counter_model(1.0, B, 30)).value == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("vector", VECTORS, ids=[v.id for v in VECTORS])
def test_known_answer_vectors(vector: KnownAnswerVector) -> None:
    p = by_value(vector.params)
    eps, B = p["epsilon"], p["B"]
    got = replay_vector(lambda n: BlockCounter(eps, B, noise=n), vector)
    assert got == pytest.approx(vector.expected, abs=1e-12)
    noise = {d.site: d.value for d in vector.tape}
    model = block_counter_model(eps, B, len(vector.inputs))
    assert model.mean(vector.inputs) + model.error(noise) == pytest.approx(vector.expected, abs=1e-9)
    hand = [sum(vector.inputs[:t]) + hand_error(noise, t, B) for t in range(1, len(vector.inputs) + 1)]
    assert hand == pytest.approx(vector.expected, abs=1e-9)


def test_claim_state_horizon() -> None:
    counter = BlockCounter(0.5, 4, 3, noise=InsecureSeededNoise(0))
    claim = counter.claim
    assert (claim.measure, claim.parameter, claim.neighbour) == (Measure.PURE_DP, 0.5, Neighbour.STREAM_ENTRY)
    counter.run([1, 2, 3])
    assert counter.state_size() == 3
    with pytest.raises(HorizonExceededError):
        counter.step(1)


def test_failed_draw_leaves_state_unchanged() -> None:
    recorder = TapeRecorder(InsecureSeededNoise(0))
    BlockCounter(1.0, 2, noise=recorder).run([1, 2])
    counter = BlockCounter(1.0, 2, noise=TapeReplay(recorder.tape))
    counter.step(1)
    bad = BlockCounter(2.0, 2, noise=TapeReplay(recorder.tape))
    with pytest.raises(TapeMismatchError):
        bad.step(1)
    assert (bad.t, bad.alpha, bad.beta, bad.beta_lastblock, bad.releases) == (0, 0.0, 0.0, 0.0, [])


@pytest.mark.parametrize(("eps", "B", "horizon", "field"), [
    (0.0, 2, None, "epsilon"), (1.0, 0, None, "B"), (1.0, 1.5, None, "B"), (1.0, True, None, "B"),
    (1.0, 2, 0, "T"), (math.nan, 2, None, "epsilon"),
])
def test_bad_parameters(eps: float, B: int, horizon: int | None, field: str) -> None:
    with pytest.raises(DPStreamInputError) as info:
        BlockCounter(eps, B, horizon, noise=InsecureSeededNoise(0))
    assert info.value.field == field
