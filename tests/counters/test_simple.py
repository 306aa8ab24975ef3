"""Simple counter (001-alg8): exact error law, exact variance, vectors, bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpstream.audit.counters.models import simple_counter_model
from dpstream.claims import Measure, Neighbour
from dpstream.counters import SimpleCounter
from dpstream.errors import DPStreamInputError, HorizonExceededError
from dpstream.insecure import InsecureSeededNoise, TapeRecorder, TapeReplay
from dpstream.tape import TapeMismatchError
from dpstream.testing import record_run, replay_vector
from dpstream.vectors import KnownAnswerVector
from dpstream.vectors.corpus import known_answer

VECTORS = list(known_answer("001-alg8"))


def test_exact_error_law() -> None:
    """g(t) - sum_{t'<=t} f(t') equals exactly the sum of the Lap draws at sites 'L4 t=1..t'."""
    f = [3, -1, 0, 2, 5, 0, 1]
    releases, tape = record_run(lambda n: SimpleCounter(0.7, noise=n), f, seed=4)
    noise = {d.site: d.value for d in tape}
    for t in range(1, len(f) + 1):
        prescribed = sum(noise[f"001-alg8 L4 t={j}"] for j in range(1, t + 1))  # derived from L4
        assert releases[t - 1] - sum(f[:t]) == pytest.approx(prescribed, abs=1e-12)
    model = simple_counter_model(0.7, len(f))
    assert np.allclose(model.mean(f), np.cumsum(f))
    assert np.allclose(np.asarray(releases) - np.cumsum(f), model.error(noise), atol=1e-12)


def test_exact_error_variance() -> None:
    """Var(g(t) - S(t)) = t * Var(Lap(1/eps)) = 2 t / eps^2."""
    eps, T = 0.3, 12
    var = simple_counter_model(eps, T).error_variance()
    assert np.allclose(var, [2 * t / eps**2 for t in range(1, T + 1)], rtol=1e-12)


@pytest.mark.parametrize("vector", VECTORS, ids=[v.id for v in VECTORS])
def test_known_answer_vectors(vector: KnownAnswerVector) -> None:
    eps = vector.params["epsilon"]
    got = replay_vector(lambda n: SimpleCounter(eps, noise=n), vector)
    assert got == pytest.approx(vector.expected, abs=1e-12)
    # independent recomputation from the tape by the closed form
    model = simple_counter_model(eps, len(vector.inputs))
    noise = {d.site: d.value for d in vector.tape}
    closed = model.mean(vector.inputs) + model.error(noise)
    assert closed == pytest.approx(vector.expected, abs=1e-9)


def test_claim() -> None:
    claim = SimpleCounter(0.25, noise=InsecureSeededNoise(0)).claim
    assert claim.measure is Measure.PURE_DP
    assert claim.parameter == 0.25
    assert claim.neighbour is Neighbour.STREAM_ENTRY


@pytest.mark.parametrize("eps", [0, -1.0, math.nan, math.inf, "1", True])
def test_bad_epsilon(eps: object) -> None:
    with pytest.raises(DPStreamInputError) as info:
        SimpleCounter(eps, noise=InsecureSeededNoise(0))  # type: ignore[arg-type]
    assert info.value.field == "epsilon"


@pytest.mark.parametrize("x", [math.nan, math.inf, "1", None, True, [1]])
def test_bad_input_no_draw_no_state_change(x: object) -> None:
    recorder = TapeRecorder(InsecureSeededNoise(0))
    counter = SimpleCounter(1.0, noise=recorder)
    counter.step(1)
    with pytest.raises(DPStreamInputError) as info:
        counter.step(x)  # type: ignore[arg-type]
    assert info.value.field == "f(t)"
    assert counter.t == 1 and len(recorder.tape) == 1 and len(counter.releases) == 1


def test_horizon() -> None:
    counter = SimpleCounter(1.0, 2, noise=InsecureSeededNoise(0))
    counter.run([1, 1])
    with pytest.raises(HorizonExceededError):
        counter.step(1)
    assert counter.t == 2


def test_failed_draw_leaves_state_unchanged() -> None:
    recorder = TapeRecorder(InsecureSeededNoise(0))
    SimpleCounter(1.0, noise=recorder).run([1, 2])
    counter = SimpleCounter(2.0, noise=TapeReplay(recorder.tape))  # wrong eps: scale mismatch
    with pytest.raises(TapeMismatchError):
        counter.step(1)
    assert counter.t == 0 and counter.g == 0.0 and counter.releases == []
