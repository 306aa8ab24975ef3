"""Unbounded block counter (003-alg4 = 000-alg4): error law, variance, schedule, vectors, calibration."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpstream.audit.counters.loss import stream_entry_epsilon
from dpstream.audit.counters.models import unbounded_block_model, unbounded_block_schedule
from dpstream.claims import Measure, Neighbour
from dpstream.counters import UnboundedBlockCounter
from dpstream.errors import DPStreamInputError
from dpstream.insecure import InsecureSeededNoise, TapeRecorder, TapeReplay
from dpstream.tape import TapeMismatchError
from dpstream.testing import record_run, replay_vector
from dpstream.vectors import KnownAnswerVector
from dpstream.vectors.corpus import known_answer

VECTORS = list(known_answer("003-alg4"))


def partition_of(u: int) -> tuple[int, int]:
    """(block size B, delta = u - t_atPartition) of time u: partitions of B^2 steps, B = 2, 3, ... (003 sec. 8)."""
    start, B = 0, 2
    while u > start + B * B:
        start += B * B
        B += 1
    return B, u - start


def is_block_end(u: int) -> bool:
    B, delta = partition_of(u)
    return delta % B == 0


def hand_error(noise: dict[str, float], t: int) -> float:
    """From L12-L22: alpha_lastBlock carries the L14 draws of every block end <= t; alpha_synthInBlock
    the L21 draws of the times after the last block end, up to t."""
    ends = [u for u in range(1, t + 1) if is_block_end(u)]
    last = ends[-1] if ends else 0
    return (sum(noise[f"003-alg4 L14 t={u}"] for u in ends)
            + sum(noise[f"003-alg4 L21 t={u}"] for u in range(last + 1, t + 1)))


def test_schedule_matches_partition_rule() -> None:
    """Partitions 4, 9, 16, 25 with blocks 2, 3, 4, 5: block ends at 2,4 | 7,10,13 | 17,21,25,29 | 34, ..."""
    ends = [t for t, (end, _) in enumerate(unbounded_block_schedule(60), start=1) if end]
    assert ends[:12] == [2, 4, 7, 10, 13, 17, 21, 25, 29, 34, 39, 44]
    assert ends == [u for u in range(1, 61) if is_block_end(u)]


def test_exact_error_law() -> None:
    f = [1, 0, 2, -1, 0.5, 3, 1, 1, 0, 2, 2, 1, 0, 4, 1, 1, 0, 0, 2, 1, 3, 1, 0, 1, 2, 1, 1, 0, 1, 1, 2]
    releases, tape = record_run(lambda n: UnboundedBlockCounter(0.8, noise=n), f, seed=13)
    noise = {d.site: d.value for d in tape}
    for t in range(1, len(f) + 1):
        assert releases[t - 1] - sum(f[:t]) == pytest.approx(hand_error(noise, t), abs=1e-12)
    model = unbounded_block_model(0.8, len(f))
    assert np.allclose(model.mean(f), np.cumsum(f))
    assert np.allclose(np.asarray(releases) - np.cumsum(f), model.error(noise), atol=1e-12)
    assert model.injective


def test_exact_error_variance() -> None:
    """Var = 8 (block ends <= t + steps since the last block end) / eps^2."""
    eps, T = 0.5, 120
    expected = []
    for t in range(1, T + 1):
        ends = [u for u in range(1, t + 1) if is_block_end(u)]
        expected.append(8 * (len(ends) + t - (ends[-1] if ends else 0)) / eps**2)
    assert np.allclose(unbounded_block_model(eps, T).error_variance(), expected, rtol=1e-12)


def test_variance_at_partition_ends_grows_like_t_to_two_thirds() -> None:
    """Finding (docs/counters.md): at the end of partition m (block size m+1) the error is a sum of
    sum_{B=2}^{m+1} B block noises, t = sum_{B=2}^{m+1} B^2: variance ~ (3t)^(2/3) 4/eps^2, not ~ sqrt(t)."""
    eps = 1.0
    ends, blocks, t = [], 0, 0
    for B in range(2, 12):
        t += B * B
        blocks += B
        ends.append((t, blocks))
    var = unbounded_block_model(eps, ends[-1][0]).error_variance()
    for t, blocks in ends:
        assert var[t - 1] == pytest.approx(8 * blocks / eps**2, rel=1e-12)
    t_last, b_last = ends[-1]
    assert b_last / t_last ** (2 / 3) > 1.0 > b_last / t_last**0.5 / 5  # 65 blocks at t = 505


def test_calibration_printed_algorithm_meets_claim() -> None:
    """003-thm8.1 holds as printed: worst loss eps (in-block value + block sum, each Lap(2/eps))."""
    assert stream_entry_epsilon(unbounded_block_model(1.0, 200)).value == pytest.approx(1.0, rel=1e-12)
    a = record_run(lambda n: UnboundedBlockCounter(1.0, noise=n), [1, 2, 3, 4, 5], seed=1)
    b = record_run(lambda n: UnboundedBlockCounter(1.0, noise=n, as_printed=True), [1, 2, 3, 4, 5], seed=1)
    assert a[0] == b[0] and a[1].dumps() == b[1].dumps()


@pytest.mark.parametrize("vector", VECTORS, ids=[v.id for v in VECTORS])
def test_known_answer_vectors(vector: KnownAnswerVector) -> None:
    eps = vector.params["epsilon"]
    got = replay_vector(lambda n: UnboundedBlockCounter(eps, noise=n), vector)
    assert got == pytest.approx(vector.expected, abs=1e-12)
    noise = {d.site: d.value for d in vector.tape}
    model = unbounded_block_model(eps, len(vector.inputs))
    assert model.mean(vector.inputs) + model.error(noise) == pytest.approx(vector.expected, abs=1e-9)
    hand = [sum(vector.inputs[:t]) + hand_error(noise, t) for t in range(1, len(vector.inputs) + 1)]
    assert hand == pytest.approx(vector.expected, abs=1e-9)


def test_claim_and_state() -> None:
    counter = UnboundedBlockCounter(0.5, noise=InsecureSeededNoise(0))
    claim = counter.claim
    assert (claim.measure, claim.parameter, claim.neighbour) == (Measure.PURE_DP, 0.5, Neighbour.STREAM_ENTRY)
    counter.run([1] * 30)
    assert counter.state_size() == 6 and counter.B == 5


def test_failed_draw_leaves_state_unchanged() -> None:
    recorder = TapeRecorder(InsecureSeededNoise(0))
    UnboundedBlockCounter(1.0, noise=recorder).run([1, 2])
    bad = UnboundedBlockCounter(3.0, noise=TapeReplay(recorder.tape))
    before = bad.state
    with pytest.raises(TapeMismatchError):
        bad.step(1)
    assert bad.state == before and bad.t == 0 and bad.releases == []


@pytest.mark.parametrize(("eps", "field"), [(0.0, "epsilon"), (-2.0, "epsilon"), (math.inf, "epsilon"),
                                            ("1", "epsilon")])
def test_bad_parameters(eps: float, field: str) -> None:
    with pytest.raises(DPStreamInputError) as info:
        UnboundedBlockCounter(eps, noise=InsecureSeededNoise(0))
    assert info.value.field == field
