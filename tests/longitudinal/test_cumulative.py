"""Cumulative time synthesizer (002-alg2): replay against the tree-aggregation model, realisation of
the monotonized counts, persistence, pluggable counters, atomic steps, claims and bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpstream.audit.counters.models import tree_aggregation_model
from dpstream.claims import Measure, Neighbour, PrivacyClaim
from dpstream.counters import SimpleCounter
from dpstream.counters.base import Counter
from dpstream.errors import DPStreamInputError, HorizonExceededError
from dpstream.insecure import InsecureSeededNoise, InsecureZeroNoise, TapeRecorder, TapeReplay
from dpstream.longitudinal.bounds import levels, rho_b_allocation
from dpstream.longitudinal.cumulative import CumulativeSynthesizer
from dpstream.longitudinal.generators import random_matrix
from dpstream.noise import NoiseSource, site
from dpstream.tape import TapeMismatchError


def _true_S(X: np.ndarray, t: int) -> list[int]:
    w = X[:, :t].sum(axis=1)
    return [int(np.count_nonzero(w >= b)) for b in range(t + 1)]


def _z_streams(X: np.ndarray) -> dict[int, list[int]]:
    """z_b^t for t = b..T, from the definition (weight b-1 before t and x^t = 1)."""
    T = X.shape[1]
    out: dict[int, list[int]] = {}
    for b in range(1, T + 1):
        out[b] = []
        for t in range(b, T + 1):
            before = X[:, : t - 1].sum(axis=1)
            out[b].append(int(np.count_nonzero((before == b - 1) & (X[:, t - 1] == 1))))
    return out


@pytest.mark.parametrize(("T", "rho", "seed", "as_printed"),
                         [(8, 2.0, 1, False), (6, 0.5, 2, True), (5, 20.0, 3, False)])
def test_replay_against_tree_model(T: int, rho: float, seed: int, as_printed: bool) -> None:
    """S~ from the tree-aggregation model on the tape; S^ by the clamp; synthetic weights realise S^."""
    X = random_matrix(80, T, seed=seed)
    recorder = TapeRecorder(InsecureSeededNoise(seed))
    synth = CumulativeSynthesizer(T, rho, noise=recorder, as_printed=as_printed)
    releases = synth.run(X)
    noise = {d.site: float(d.value) for d in recorder.tape if " u5 b=" in d.site}
    z = _z_streams(X)
    factor = 1.0 if as_printed else 2.0
    S_tilde: dict[int, list[float]] = {}
    for b, rb in enumerate(rho_b_allocation(T, rho), start=1):
        model = tree_aggregation_model(rb / factor, T - b + 1)
        prefix = site("002-alg2 u5", b=b) + " / "
        local = {s: noise[prefix + s] for s in model.sites}
        S_tilde[b] = list(model.mean(z[b]) + model.error(local))
    S_hat_prev = [80]
    S = synth.synthetic
    for t, release in enumerate(releases, start=1):
        expected = [80]
        for b in range(1, t + 1):
            upper = S_hat_prev[b - 1]
            lower = S_hat_prev[b] if b < t else 0
            expected.append(int(min(max(S_tilde[b][t - b], lower), upper)))
        assert release.S_hat.tolist() == expected
        assert list(release.S_tilde) == pytest.approx([S_tilde[b][t - b] for b in range(1, t + 1)], abs=1e-9)
        weights = S[:, :t].sum(axis=1)
        assert [int(np.count_nonzero(weights >= b)) for b in range(t + 1)] == expected
        S_hat_prev = expected
    with TapeReplay(recorder.tape) as replay:
        again = CumulativeSynthesizer(T, rho, noise=replay, as_printed=as_printed).run(X)
    assert all(np.array_equal(a.column, b.column) for a, b in zip(releases, again, strict=True))


def test_sites() -> None:
    recorder = TapeRecorder(InsecureSeededNoise(0))
    CumulativeSynthesizer(4, 1.0, noise=recorder).run(random_matrix(10, 4, seed=0))
    sites = [d.site for d in recorder.tape]
    assert [s for s in sites if s.startswith("002-alg2 u8")] == [
        f"002-alg2 u8 t={t} b={b}" for t in range(1, 5) for b in range(1, t + 1)]
    counter_sites = [s for s in sites if s.startswith("002-alg2 u5")]
    assert counter_sites == [f"002-alg2 u5 b={b} / 002-alg3 u8 t={t - b + 1}" for t in range(1, 5)
                             for b in range(1, t + 1)]


def test_zero_noise_is_exact_and_persistent() -> None:
    T = 7
    X = random_matrix(50, T, seed=4)
    synth = CumulativeSynthesizer(T, 1.0, noise=InsecureZeroNoise())
    previous = np.zeros((50, 0), dtype=np.int64)
    for t in range(1, T + 1):
        release = synth.step(X[:, t - 1])
        assert release.S_hat.tolist() == _true_S(X, t)
        S = synth.synthetic
        assert np.array_equal(S[:, : t - 1], previous)
        assert not release.column.flags.writeable
        previous = S


def test_allocation_and_claims() -> None:
    T, rho = 12, 0.005
    allocation = rho_b_allocation(T, rho)
    assert sum(allocation) == pytest.approx(rho, rel=1e-12)
    cubes = [max(math.ceil(math.log2(T - b + 1)), 1) ** 3 for b in range(1, T + 1)]
    assert [a / c for a, c in zip(allocation, cubes, strict=True)] == pytest.approx([rho / sum(cubes)] * T)
    assert [levels(T - b + 1) for b in range(1, T + 1)] == [4, 4, 4, 4, 3, 3, 3, 3, 2, 2, 1, 1]
    default = CumulativeSynthesizer(T, rho, noise=InsecureZeroNoise())
    printed = CumulativeSynthesizer(T, rho, noise=InsecureZeroNoise(), as_printed=True)
    assert default.counter_rho == pytest.approx([a / 2 for a in allocation])
    assert printed.counter_rho == pytest.approx(allocation)
    assert default.claim.neighbour is Neighbour.INDIVIDUAL_SUBSTITUTE
    assert default.claim.parameter == pytest.approx(rho)
    assert printed.claim.parameter == pytest.approx(2 * rho) and "AS PRINTED" in printed.claim.note
    assert printed.paper_claim.parameter == rho == default.paper_claim.parameter
    assert printed.paper_claim.neighbour is Neighbour.INDIVIDUAL_SUBSTITUTE
    assert default.claims[Neighbour.INDIVIDUAL_ADD_REMOVE].measure is Measure.NOT_PRIVATE


class _PlainCounter(Counter):
    """A counter without two-phase steps, with real-valued noise (exercises rounding and snapshots)."""

    anchor = "test"

    def __init__(self, eps: float, T: int, noise: NoiseSource) -> None:
        super().__init__(noise, T)
        self.eps, self.total = eps, 0.0

    @property
    def claim(self) -> PrivacyClaim:
        return PrivacyClaim.pure(self.eps, Neighbour.STREAM_ENTRY, "test")

    def _step(self, x: float, t: int) -> float:
        self.total += x
        return self.noise.add_laplace(site("test L1", t=t), self.total, 1.0 / self.eps)

    def state_size(self) -> int:
        return 1


@pytest.mark.parametrize("factory", [
    lambda r, T, n: SimpleCounter(math.sqrt(2 * r), T, noise=n),
    lambda r, T, n: _PlainCounter(math.sqrt(2 * r), T, n),
])
def test_pluggable_counters_realise_counts(factory: object) -> None:
    T = 6
    X = random_matrix(40, T, seed=9)
    synth = CumulativeSynthesizer(T, 3.0, noise=InsecureSeededNoise(9), counter_factory=factory)  # type: ignore[arg-type]
    assert synth.substitution_factor == 4.0
    for t, release in enumerate(synth.run(X), start=1):
        weights = synth.synthetic[:, :t].sum(axis=1)
        assert [int(np.count_nonzero(weights >= b)) for b in range(t + 1)] == release.S_hat.tolist()
        assert all(np.diff(release.S_hat) <= 0)


@pytest.mark.parametrize("plain", [False, True])
def test_failed_draw_leaves_state_unchanged(plain: bool) -> None:
    X = random_matrix(30, 5, seed=2)
    factory = (lambda r, T, n: _PlainCounter(1.0, T, n)) if plain else None
    recorder = TapeRecorder(InsecureSeededNoise(2))
    CumulativeSynthesizer(5, 1.0, noise=recorder, counter_factory=factory).run(X)
    # drop the last choice of round 3: replay fails in the middle of the round
    draws = tuple(d for d in recorder.tape if d.site != "002-alg2 u8 t=3 b=3")
    replay = TapeReplay(type(recorder.tape)(draws))
    synth = CumulativeSynthesizer(5, 1.0, noise=replay, counter_factory=factory)
    synth.run(X[:, :2])
    states = [c.t for c in synth.counters]
    with pytest.raises(Exception, match="not on the tape"):
        synth.step(X[:, 2])
    assert synth.t == 2 and [c.t for c in synth.counters] == states and len(synth.history) == 2


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"T": 0, "rho": 1.0}, "T"),
        ({"T": 4, "rho": 0.0}, "rho"),
        ({"T": 4, "rho": -2.0}, "rho"),
        ({"T": 4, "rho": 1.0, "rho_b": [0.5, 0.5]}, "rho_b"),
        ({"T": 2, "rho": 1.0, "rho_b": [0.5, 0.6]}, "rho_b"),
        ({"T": 2, "rho": 1.0, "rho_b": [1.0, 0.0]}, "rho_b"),
        ({"T": 2, "rho": 1.0, "substitution_factor": 0.5}, "substitution_factor"),
    ],
)
def test_bad_parameters(kwargs: dict[str, object], field: str) -> None:
    with pytest.raises(DPStreamInputError) as info:
        CumulativeSynthesizer(noise=InsecureZeroNoise(), **kwargs)  # type: ignore[arg-type]
    assert info.value.field == field


@pytest.mark.parametrize("column", [[0, 1, 2], [0, 1], [0.5, 0, 1], [True, False, True, True]])
def test_bad_column_and_horizon(column: object) -> None:
    recorder = TapeRecorder(InsecureSeededNoise(0))
    synth = CumulativeSynthesizer(2, 1.0, noise=recorder)
    synth.step([0, 1, 1])
    draws = len(recorder.tape)
    with pytest.raises(DPStreamInputError):
        synth.step(column)
    assert synth.t == 1 and len(recorder.tape) == draws
    synth.step([1, 1, 0])
    with pytest.raises(HorizonExceededError):
        synth.step([1, 1, 0])


def test_tape_mismatch_type() -> None:
    recorder = TapeRecorder(InsecureSeededNoise(0))
    X = random_matrix(10, 3, seed=0)
    CumulativeSynthesizer(3, 1.0, noise=recorder).run(X)
    with pytest.raises(TapeMismatchError):
        CumulativeSynthesizer(3, 2.0, noise=TapeReplay(recorder.tape)).run(X)
