"""Compute-efficient 004-alg1 (EfficientOnlineSyntheticData): equal to the line-by-line version under one tape,
and its operation count (counted, not timed)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from dpstream.errors import DPStreamInputError
from dpstream.experiments.hypercube_rate import fit_exponent
from dpstream.hypercube.consistency import ConsistencyRule
from dpstream.hypercube.efficient import EfficientOnlineSyntheticData, SparseForm, geometric_region_counter
from dpstream.hypercube.online import HypercubeRelease, OnlineSyntheticData
from dpstream.hypercube.streams import make_stream
from dpstream.insecure import InsecureSeededNoise, InsecureZeroNoise, TapeRecorder, TapeReplay
from dpstream.noise import NoiseSource
from dpstream.tape import Tape, TapeSiteMissingError
from dpstream.testing import by_value, replay_run
from dpstream.vectors import KnownAnswerVector
from dpstream.vectors.corpus import known_answer


def assert_same(a: HypercubeRelease, b: HypercubeRelease) -> None:
    assert (a.t, a.depth) == (b.t, b.depth)
    assert [u.tolist() for u in a.noisy] == [v.tolist() for v in b.noisy]
    assert [u.tolist() for u in a.consistent] == [v.tolist() for v in b.consistent]
    assert a.points is not None and b.points is not None and np.array_equal(a.points, b.points)


CONFIGS = [  # (d, eps, n, as_printed, sparse_as_printed, rule, stream)
    (1, 1.0, 60, False, False, ConsistencyRule.EQUAL_SHIFT, "uniform"),
    (1, 0.5, 60, True, False, ConsistencyRule.PROPORTIONAL, "clustered"),
    (2, 1.0, 60, False, False, ConsistencyRule.EQUAL_SHIFT, "uniform"),
    (2, 0.4, 50, False, False, ConsistencyRule.EQUAL_SHIFT, "clustered"),
    (2, 4.0, 40, False, False, ConsistencyRule.PROPORTIONAL, "uniform"),
    (2, 1.0, 40, True, True, ConsistencyRule.EQUAL_SHIFT, "uniform"),
    (3, 2.0, 50, False, False, ConsistencyRule.EQUAL_SHIFT, "clustered"),
    (3, 1.0, 40, True, False, ConsistencyRule.EQUAL_SHIFT, "uniform"),
]


@pytest.mark.parametrize(("d", "eps", "n", "as_printed", "sparse_as_printed", "rule", "stream"), CONFIGS)
def test_efficient_equals_line_by_line_under_one_tape(d: int, eps: float, n: int, as_printed: bool,
                                                      sparse_as_printed: bool, rule: ConsistencyRule,
                                                      stream: str) -> None:
    X = make_stream(stream, n, d, seed=d + n)

    def line_by_line(noise: NoiseSource, times: set[int] | None = None) -> OnlineSyntheticData:
        return OnlineSyntheticData(eps, d, noise=noise, as_printed=as_printed, sparse_as_printed=sparse_as_printed,
                                   rule=rule, sample_times=times)

    def efficient(noise: NoiseSource, times: set[int] | None = None) -> EfficientOnlineSyntheticData:
        return EfficientOnlineSyntheticData(eps, d, noise=noise, as_printed=as_printed,
                                            sparse_as_printed=sparse_as_printed, rule=rule, sample_times=times)

    # line by line -> efficient, every release (every tape site used exactly once: TapeReplay checks it)
    recorder = TapeRecorder(InsecureSeededNoise(3))
    reference = line_by_line(recorder).run(X)
    with TapeReplay(recorder.tape) as replay:
        releases = efficient(replay).run(X)
    assert len(releases) == n
    for a, b in zip(reference, releases, strict=True):
        assert_same(a, b)
    # efficient -> line by line, releases at a few times only (the lazy path), then caught up
    times = {3, n // 3, n // 2 + 1, n}
    recorder = TapeRecorder(InsecureSeededNoise(4))
    alg = efficient(recorder, times)
    sampled = alg.run(X)
    alg.catch_up()
    with TapeReplay(recorder.tape) as replay:
        reference = line_by_line(replay, times).run(X)
    assert [r.t for r in sampled] == sorted(times)
    for b in sampled:
        assert_same(reference[b.t - 1], b)


@pytest.mark.parametrize(("d", "eps", "n", "as_printed"), [(1, 1.0, 60, False), (2, 1.0, 60, False),
                                                           (2, 4.0, 40, True), (3, 0.5, 60, False)])
def test_geometric_form_equals_its_line_by_line_version(d: int, eps: float, n: int, as_printed: bool) -> None:
    X = make_stream("uniform", n, d, seed=n + d)
    recorder = TapeRecorder(InsecureSeededNoise(5))
    reference = OnlineSyntheticData(eps, d, noise=recorder, as_printed=as_printed,
                                    region_counter=geometric_region_counter(eps)).run(X)
    with TapeReplay(recorder.tape) as replay:
        efficient = EfficientOnlineSyntheticData(eps, d, noise=replay, as_printed=as_printed,
                                                 sparse_form=SparseForm.GEOMETRIC).run(X)
    for a, b in zip(reference, efficient, strict=True):
        assert_same(a, b)
    times = {n // 2, n}
    recorder = TapeRecorder(InsecureSeededNoise(6))
    alg = EfficientOnlineSyntheticData(eps, d, noise=recorder, as_printed=as_printed, sample_times=times,
                                       sparse_form=SparseForm.GEOMETRIC)
    sampled = alg.run(X)
    with TapeReplay(recorder.tape) as replay:  # the last time is sampled: every counter is caught up
        reference = OnlineSyntheticData(eps, d, noise=replay, as_printed=as_printed, sample_times=times,
                                        region_counter=geometric_region_counter(eps)).run(X)
    for b in sampled:
        assert_same(reference[b.t - 1], b)


ONLINE_VECTORS = list(known_answer("004-alg1"))


@pytest.mark.parametrize("vector", ONLINE_VECTORS, ids=[v.id for v in ONLINE_VECTORS])
def test_known_answer_vectors_replay_through_the_efficient_version(vector: KnownAnswerVector) -> None:
    """Every 004-alg1 known-answer vector of the corpus (recorded through the line-by-line version) replays through
    the efficient version: same releases, every tape site used exactly once."""
    p = by_value(vector.params)
    releases = replay_run(lambda n: EfficientOnlineSyntheticData(p["epsilon"], p["d"], noise=n),
                          [np.asarray(x) for x in vector.inputs], vector.tape)
    assert len(releases) == len(vector.expected)
    for release, want in zip(releases, vector.expected, strict=True):
        assert release is not None
        assert [level.tolist() for level in release.noisy] == want["noisy"]
        assert [level.tolist() for level in release.consistent] == want["consistent"]
        assert release.points is not None and release.points.tolist() == want["points"]


def run_counts(alg: OnlineSyntheticData | EfficientOnlineSyntheticData, X: np.ndarray) -> int:
    for x in X:
        alg.step(x)
    return alg.operations


@pytest.mark.slow  # about 17 s
def test_operation_counts() -> None:
    """Counted operations (region-counter steps, level changes, segment ends, region visits of a release).

    Geometric form, one release at the end: at most C (d t + eps t log2 t) operations and draws with
    C = 10, and the count grows like t log t (its fitted exponent of t on 2^7..2^10 exceeds that of
    d t + eps t log2 t by less than 0.1). The line-by-line version and the printed form step every
    counter at every t: their operations over d t + eps t log2 t grow by more than 1.5 per doubling of t
    (fitted exponents of t on 2^4..2^8 above 1.8).
    """
    C = 10.0
    for d, eps in ((1, 1.0), (2, 1.0), (2, 4.0), (3, 1.0)):
        ts, ops = [], []
        for k in range(7, 11):
            t = 2**k
            recorder = TapeRecorder(InsecureSeededNoise(k))
            alg = EfficientOnlineSyntheticData(eps, d, noise=recorder, sample_times={t},
                                               sparse_form=SparseForm.GEOMETRIC)
            count = run_counts(alg, make_stream("uniform", t, d, seed=k))
            budget = C * (d * t + eps * t * math.log2(t))
            assert count <= budget and len(recorder.tape) <= budget, (d, eps, t, count, len(recorder.tape))
            ts.append(t)
            ops.append(count)
        theory = [d * t + eps * t * math.log2(t) for t in ts]
        assert fit_exponent(ts, ops) < fit_exponent(ts, theory) + 0.1, (d, eps, ops)
    ts, line_ops, printed_ops = [], [], []
    for k in range(4, 9):
        t = 2**k
        X = make_stream("uniform", t, 2, seed=k)
        ts.append(t)
        line_ops.append(run_counts(OnlineSyntheticData(1.0, 2, noise=InsecureZeroNoise(), sample_times=()), X))
        efficient = EfficientOnlineSyntheticData(1.0, 2, noise=InsecureZeroNoise(), sample_times={t})
        printed_ops.append(run_counts(efficient, X))
    ratio = [o / (2 * t + t * math.log2(t)) for o, t in zip(line_ops, ts, strict=True)]
    assert all(b > 1.5 * a for a, b in itertools.pairwise(ratio)), ratio
    assert fit_exponent(ts, line_ops) > 1.8 and fit_exponent(ts, printed_ops) > 1.8


@pytest.mark.parametrize("x", [[0.2, 1.5], [math.nan, 0.1], [0.1], "ab", None])
def test_bad_points_no_draw_no_state_change(x: object) -> None:
    recorder = TapeRecorder(InsecureSeededNoise(0))
    alg = EfficientOnlineSyntheticData(1.0, 2, noise=recorder, sample_times={5})
    alg.run(make_stream("uniform", 5, 2, seed=0))
    drawn, ops = len(recorder.tape), alg.operations
    with pytest.raises(DPStreamInputError) as info:
        alg.step(x)
    assert info.value.field == "x_t"
    assert alg.t == 5 and len(recorder.tape) == drawn and alg.operations == ops
    assert alg.step([0.5, 0.5]) is None  # still usable


def test_failed_draw_stops_the_run() -> None:
    X = make_stream("uniform", 9, 2, seed=4)
    recorder = TapeRecorder(InsecureSeededNoise(5))
    OnlineSyntheticData(1.0, 2, noise=recorder).run(X)
    draws = tuple(d for d in recorder.tape if not d.site.startswith("004-alg1 u6 theta=10 "))
    alg = EfficientOnlineSyntheticData(1.0, 2, noise=TapeReplay(Tape(draws)))
    with pytest.raises(TapeSiteMissingError):
        alg.run(X)
    with pytest.raises(RuntimeError):
        alg.step(X[0])


def test_parameters_and_state() -> None:
    with pytest.raises(DPStreamInputError):
        EfficientOnlineSyntheticData(1.0, 2, noise=InsecureZeroNoise(), sparse_form="geometric")  # type: ignore[arg-type]
    with pytest.raises(DPStreamInputError) as info:
        EfficientOnlineSyntheticData(1.0, 2, noise=InsecureZeroNoise(), sparse_as_printed=True,
                                     sparse_form=SparseForm.GEOMETRIC)
    assert info.value.field == "sparse_as_printed"
    X = make_stream("uniform", 20, 2, seed=1)
    a = EfficientOnlineSyntheticData(1.0, 2, noise=InsecureZeroNoise(), sample_times=())
    a.run(X)
    assert a.history == []  # r0 = |theta| (d >= 2): nobody replays the history, it is not kept
    assert a.claim == OnlineSyntheticData(1.0, 2, noise=InsecureZeroNoise()).claim
    b = EfficientOnlineSyntheticData(1.0, 1, noise=InsecureZeroNoise(), sample_times=())
    b.run(X[:, :1])
    assert len(b.history) == 20  # r0 = 0 (d = 1): new regions replay it
