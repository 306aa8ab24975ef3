"""Vectorised samplers equal the line-by-line counters (same noise in, same releases out); the samplers
are reproducible."""

from __future__ import annotations

import numpy as np
import pytest

from dpstream.audit.sampler import FactorySampler, SeededFactorySampler
from dpstream.audit.vectorised import COUNTERS, LinearModelSampler, counter_sampler
from dpstream.insecure import InsecureSeededNoise, TapeRecorder
from dpstream.insecure.batch import BulkNoise
from dpstream.noise import data_rng

T = 16


def _stream(name: str, seed: int) -> list[object]:
    entry = COUNTERS[name]
    rng = data_rng(seed)
    if entry.dimension > 1:
        return [[float(v) for v in rng.integers(0, 2, size=entry.dimension)] for _ in range(T)]
    return [int(v) for v in rng.integers(0, 2, size=T)]


@pytest.mark.parametrize("name", sorted(COUNTERS))
def test_vectorised_sampler_replays_the_line_by_line_counter(name: str) -> None:
    entry = COUNTERS[name]
    param = 0.5 if "tree aggregation" in name else 1.0
    sampler = counter_sampler(name, param, T)
    for seed in (1, 2, 3):
        inputs = _stream(name, seed)
        recorder = TapeRecorder(InsecureSeededNoise(seed))
        mechanism = entry.factory(param, T)(recorder)
        line_by_line = np.concatenate([np.ravel(np.asarray(mechanism.step(x), dtype=np.float64)) for x in inputs])
        values = recorder.tape.by_site()
        assert sorted(values) == sorted(sampler.model.sites), "every draw of the counter is a term of the model"
        Z = np.array([[float(values[s].value) for s in sampler.model.sites]])
        vectorised = sampler.releases(inputs, Z)[0]
        np.testing.assert_allclose(vectorised, line_by_line, rtol=0.0, atol=1e-9)


def test_bulk_laws_have_their_moments() -> None:
    # Sample means/variances of 200000 draws against the exact values (5 standard errors: false alarm < 1e-5).
    bulk = BulkNoise(7)
    n = 200_000
    lap = bulk.laplace_array(2.0, n)
    assert abs(lap.mean()) < 5 * np.sqrt(8.0 / n)
    assert abs(lap.var() - 8.0) < 5 * np.sqrt((24 * 16 - 64) / n)
    p = np.exp(-1.0 / 3.0)
    dl = bulk.discrete_laplace_array(3.0, n)
    assert dl.dtype == np.int64
    var = 2 * p / (1 - p) ** 2
    assert abs(dl.var() - var) < 5 * np.sqrt(6 * var * var / n) + 0.05 * var
    dg = bulk.discrete_gaussian_array(4.0, n)
    assert abs(dg.mean()) < 5 * np.sqrt(4.0 / n)
    assert abs(dg.var() - 4.0) < 5 * np.sqrt(2 * 16.0 / n)


def test_factory_and_seed_hook_samplers_are_reproducible() -> None:
    from dpstream.counters import SimpleCounter

    fs = FactorySampler(lambda n: SimpleCounter(1.0, noise=n))
    a = fs.sample([1, 0, 1], 5, seed=3)
    np.testing.assert_array_equal(a, fs.sample([1, 0, 1], 5, seed=3))
    assert a.shape == (5, 3)
    inner = counter_sampler("simple", 1.0, 3)

    class OneRun:  # an "outside" counter whose randomness comes from the seed it is given
        def __init__(self, seed: int) -> None:
            self.releases = iter(inner.sample([1, 0, 1], 1, seed)[0])

        def step(self, x: object) -> float:
            return float(next(self.releases))

    hook = SeededFactorySampler(OneRun)
    b = hook.sample([1, 0, 1], 4, seed=9)
    np.testing.assert_array_equal(b, hook.sample([1, 0, 1], 4, seed=9))
    assert not np.array_equal(b[0], b[1])


def test_linear_model_sampler_mean_is_the_model_mean() -> None:
    # 100000 runs: the sample mean of each release within 6 standard errors of W S f (false alarm < 1e-7 per t).
    sampler = LinearModelSampler(COUNTERS["block"].model(1.0, T))
    f = [1, 0] * 8
    R = sampler.sample(f, 100_000, seed=11)
    se = np.sqrt(sampler.model.error_variance() / 100_000)
    assert np.all(np.abs(R.mean(axis=0) - sampler.model.mean(f)) < 6 * se)
