"""Trials give the same rows whatever runs them: this process, 2 local worker processes, a Dask cluster."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from dpstream.audit.counters.models import binary_tree_counter_model, simple_counter_model
from dpstream.audit.sampler import FactorySampler, run_reduced, run_trials, run_trials_until, trial_executor
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
        until = run_trials_until(vectorised, [[1] * T, [0] * T], 120_000, [5, 6], pool, float("inf"))
        passed = run_trials_until(vectorised, [[1] * T, [0] * T], 120_000, [5, 6], pool, 0.0)
    np.testing.assert_array_equal(until[0], one_v)
    np.testing.assert_array_equal(until[1], run_trials(vectorised, [0] * T, 120_000, seed=6))
    assert passed[0].shape[0] == passed[1].shape[0] and passed[0].shape[0] < 120_000
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


class _SlowAfter:
    """A vectorised sampler whose chunks after the first ``fast`` ones each take ``pause`` seconds (a machine that
    got busy after the runs were planned)."""

    chunk = 1000

    def __init__(self, fast: int, pause: float) -> None:
        self.inner = LinearModelSampler(simple_counter_model(1.0, T))
        self.fast, self.pause, self.calls = fast, pause, 0

    def sample(self, inputs: Sequence[Any], runs: int, seed: int) -> npt.NDArray[np.float64]:
        import time

        self.calls += 1
        if self.calls > self.fast:
            time.sleep(self.pause)
        return np.asarray(self.inner.sample(inputs, runs, seed), dtype=np.float64)


def test_runs_until_a_deadline_are_a_prefix_of_the_runs_and_equal_per_input() -> None:
    import time

    f, g = [1] * T, [0] * T
    full = [run_trials(_SlowAfter(10**6, 0.0), x, 6000, seed=s) for x, s in ((f, 3), (g, 4))]
    # no deadline: exactly run_trials' rows
    got = run_trials_until(_SlowAfter(100, 0.0), [f, g], 6000, [3, 4], None, deadline=float("inf"))
    for a, b in zip(got, full, strict=True):
        np.testing.assert_array_equal(a, b)
    # the machine slows after 2 chunks (one per input): the deadline stops both inputs at the same chunk
    began = time.perf_counter()
    cut = run_trials_until(_SlowAfter(2, 0.3), [f, g], 6000, [3, 4], None, deadline=began + 0.5)
    assert time.perf_counter() - began < 2.0  # 12 chunks would take 3 s
    assert cut[0].shape == cut[1].shape and 1000 <= cut[0].shape[0] < 6000
    for a, b in zip(cut, full, strict=True):
        np.testing.assert_array_equal(a, b[:a.shape[0]])
    # every chunk 0.3 s: the first round ends at 0.6 s, and the second, at that pace, would end after the deadline
    began = time.perf_counter()
    paced = run_trials_until(_SlowAfter(0, 0.3), [f, g], 6000, [3, 4], None, deadline=began + 0.9)
    assert [x.shape[0] for x in paced] == [1000, 1000] and time.perf_counter() - began < 0.9
    # a deadline already passed: nothing
    assert [x.shape[0] for x in run_trials_until(_SlowAfter(0, 0.0), [f, g], 6000, [3, 4], None, 0.0)] == [0, 0]


def test_a_look_that_decides_ends_the_runs_and_one_that_does_not_changes_nothing() -> None:
    """``run_trials_until``'s looks: called once per look time passed, after a whole round, with the rows so far (a
    prefix of the runs, equal per input); True begins no further round, False leaves the runs as without looks."""
    f, g = [1] * T, [0] * T
    full = [run_trials(_SlowAfter(10**6, 0.0), x, 6000, seed=s) for x, s in ((f, 3), (g, 4))]
    seen: list[tuple[int, int]] = []

    def never(rows: list[npt.NDArray[np.float64]]) -> bool:
        seen.append((rows[0].shape[0], rows[1].shape[0]))
        return False

    kept = run_trials_until(_SlowAfter(0, 0.0), [f, g], 6000, [3, 4], None, float("inf"), looks=[0.0, 0.0, 1.0],
                            look=never)
    for a, b in zip(kept, full, strict=True):
        np.testing.assert_array_equal(a, b)
    assert seen == [(1000, 1000)]  # the three past look times fall before one round: one look

    def decides(rows: list[npt.NDArray[np.float64]]) -> bool:
        seen.append((rows[0].shape[0], rows[1].shape[0]))
        return bool(rows[0].shape[0] >= 2000)

    import time

    seen.clear()  # a round takes 0.1 s: the looks at 0 and 0.15 s come after rounds 1 and 2, which decides
    began = time.perf_counter()
    cut = run_trials_until(_SlowAfter(0, 0.05), [f, g], 6000, [3, 4], None, float("inf"),
                           looks=[began, began + 0.15, began + 0.35], look=decides)
    assert seen == [(1000, 1000), (2000, 2000)] and [x.shape[0] for x in cut] == [2000, 2000]
    for a, b in zip(cut, full, strict=True):
        np.testing.assert_array_equal(a, b[:2000])
