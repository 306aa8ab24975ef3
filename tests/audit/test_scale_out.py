"""Trials give the same rows whatever runs them: this process, 2 local worker processes, a Dask cluster."""

from __future__ import annotations

import numpy as np
import pytest

from dpstream.audit.counters.models import binary_tree_counter_model, simple_counter_model
from dpstream.audit.sampler import FactorySampler, run_reduced, run_trials, trial_executor
from dpstream.audit.vectorised import LinearModelSampler
from dpstream.counters import SimpleCounter
from dpstream.noise import NoiseSource

T = 16


def simple(noise: NoiseSource) -> SimpleCounter:
    return SimpleCounter(1.0, noise=noise)


@pytest.mark.slow  # starts worker processes; the reduction itself is checked below in the default run
def test_one_and_two_local_workers_give_identical_rows() -> None:
    vectorised = LinearModelSampler(binary_tree_counter_model(1.0, T))
    line_by_line = FactorySampler(simple)
    one_v = run_trials(vectorised, [1] * T, 120_000, seed=5)
    one_l = run_trials(line_by_line, [1] * T, 5000, seed=5)
    with trial_executor(workers=2) as pool:
        two_v = run_trials(vectorised, [1] * T, 120_000, seed=5, executor=pool)
        two_l = run_trials(line_by_line, [1] * T, 5000, seed=5, executor=pool)
    np.testing.assert_array_equal(one_v, two_v)
    np.testing.assert_array_equal(one_l, two_l)
    assert one_v.shape == (120_000, T) and one_l.shape == (5000, T)
    assert not np.array_equal(one_v[:50_000], one_v[50_000:100_000])  # chunks get different seeds


@pytest.mark.slow  # starts a Dask cluster
def test_a_dask_local_cluster_gives_identical_rows() -> None:
    distributed = pytest.importorskip("dask.distributed", reason="the 'dask' extra is not installed")
    vectorised = LinearModelSampler(simple_counter_model(1.0, T))
    expected = run_trials(vectorised, [0, 1] * 8, 150_000, seed=8)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        got = run_trials(vectorised, [0, 1] * 8, 150_000, seed=8, executor=client.get_executor())
        lam = run_trials(FactorySampler(lambda n: SimpleCounter(1.0, noise=n)), [1] * T, 4500, seed=2,
                         executor=client.get_executor())  # a lambda factory travels by cloudpickle
    np.testing.assert_array_equal(expected, got)
    np.testing.assert_array_equal(lam, run_trials(FactorySampler(simple), [1] * T, 4500, seed=2))


def _over_two(R: np.ndarray) -> np.ndarray:
    """Per release, how many runs exceed 2 (a sum over rows, as the held-out event counts are)."""
    return np.asarray((R > 2.0).sum(axis=0))


def test_counts_reduced_on_the_workers_are_the_counts_of_the_rows() -> None:
    """run_reduced samples and counts each chunk where it runs; the sums equal counting run_trials' rows, for this
    process, 2 local workers and (if installed) a Dask LocalCluster."""
    vectorised = LinearModelSampler(binary_tree_counter_model(1.0, T))
    expected = _over_two(run_trials(vectorised, [1] * T, 120_000, seed=5))
    assert expected.sum() > 0
    np.testing.assert_array_equal(run_reduced(vectorised, [1] * T, 120_000, 5, _over_two), expected)
    with trial_executor(workers=2) as pool:
        np.testing.assert_array_equal(run_reduced(vectorised, [1] * T, 120_000, 5, _over_two, pool), expected)
        # a reducer pickle cannot send (a lambda) travels by cloudpickle, or the chunks are counted here
        np.testing.assert_array_equal(
            run_reduced(vectorised, [1] * T, 120_000, 5, lambda R: (R > 2.0).sum(axis=0), pool), expected)
