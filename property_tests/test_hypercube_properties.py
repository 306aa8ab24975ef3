"""Hypothesis properties of seed 004: consistency, released point count, partition refinement,
two changed paths, the sparse counters' causality, and the efficient 004-alg1 against the line-by-line one."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from dpstream.counters.sparse import InhomogeneousSparseCounter, SparseCounter
from dpstream.hypercube.consistency import ConsistencyRule, consistency
from dpstream.hypercube.efficient import EfficientOnlineSyntheticData, SparseForm, geometric_region_counter
from dpstream.hypercube.online import OnlineSyntheticData
from dpstream.hypercube.partition import BinaryPartition
from dpstream.noise import InsecureSeededNoise, NoiseSource
from dpstream.testing import record_run, replay_run

coordinate = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)


@st.composite
def noisy_trees(draw: st.DrawFn) -> list[list[int]]:
    r = draw(st.integers(0, 5))
    return [draw(st.lists(st.integers(-10**6, 10**6), min_size=2**j, max_size=2**j)) for j in range(r + 1)]


@settings(max_examples=150, deadline=None)
@given(noisy=noisy_trees(), rule=st.sampled_from(list(ConsistencyRule)))
def test_consistency_nonnegative_and_exact(noisy: list[list[int]], rule: ConsistencyRule) -> None:
    m = consistency(noisy, rule)
    assert m[0][0] == max(noisy[0][0], 0)
    for j in range(len(noisy) - 1):
        m0, m1 = m[j + 1][0::2], m[j + 1][1::2]
        assert np.all(m0 >= 0) and np.all(m1 >= 0)
        assert np.array_equal(m0 + m1, m[j])  # exactly consistent, integers
        a = np.maximum(np.asarray(noisy[j + 1][0::2]), 0)
        b = np.maximum(np.asarray(noisy[j + 1][1::2]), 0)
        assert np.all((m0 - a) * (m1 - b) >= 0)  # the printed condition (with n')


@settings(max_examples=12, deadline=None)
@given(d=st.integers(1, 3), eps=st.sampled_from([0.5, 1.0, 3.0]), seed=st.integers(0, 2**31 - 1),
       n=st.integers(1, 14), data=st.data())
def test_released_point_count_equals_t(d: int, eps: float, seed: int, n: int, data: st.DataObject) -> None:
    points = [data.draw(st.lists(coordinate, min_size=d, max_size=d)) for _ in range(n)]
    alg = OnlineSyntheticData(eps, d, InsecureSeededNoise(seed))
    for t, x in enumerate(points, start=1):
        rel = alg.step(x)
        assert rel.points is not None and rel.points.shape == (t, d)
        assert int(rel.consistent[-1].sum()) == t


@settings(max_examples=200, deadline=None)
@given(d=st.integers(1, 4), x=st.lists(coordinate, min_size=4, max_size=4), j=st.integers(0, 9),
       extra=st.integers(1, 6))
def test_partition_refines_monotonically(d: int, x: list[float], j: int, extra: int) -> None:
    P = BinaryPartition(d)
    point = x[:d]
    coarse, fine = P.locate(point, j), P.locate(point, j + extra)
    assert fine.ancestor(j) == coarse
    (lo_c, hi_c), (lo_f, hi_f) = P.box(coarse), P.box(fine)
    assert np.all(lo_c <= lo_f) and np.all(hi_f <= hi_c)
    assert np.all(lo_f <= np.asarray(point)) and np.all(np.asarray(point) <= hi_f)


@settings(max_examples=100, deadline=None)
@given(d=st.integers(1, 3), seed=st.integers(0, 2**31 - 1), n=st.integers(1, 30), depth=st.integers(0, 7),
       data=st.data())
def test_one_replaced_point_changes_at_most_two_paths(d: int, seed: int, n: int, depth: int,
                                                      data: st.DataObject) -> None:
    X = np.asarray([data.draw(st.lists(coordinate, min_size=d, max_size=d)) for _ in range(n)])
    tau = data.draw(st.integers(0, n - 1))
    Y = X.copy()
    Y[tau] = data.draw(st.lists(coordinate, min_size=d, max_size=d))
    P = BinaryPartition(d)
    a, b = P.true_counts(X, depth), P.true_counts(Y, depth)
    paths = {(r.depth, r.index) for r in P.path(X[tau], depth)} | {(r.depth, r.index) for r in P.path(Y[tau], depth)}
    for j in range(depth + 1):
        changed = {(j, int(i)) for i in np.flatnonzero(a[j] != b[j])}
        assert changed <= paths
        assert len(changed) <= 2
        assert np.all(np.abs(a[j] - b[j]) <= 1)


streams = st.lists(st.integers(0, 1), min_size=1, max_size=40)


@settings(max_examples=40, deadline=None)
@given(f=streams, g=streams, seed=st.integers(0, 2**32 - 1), printed=st.booleans(),
       eps=st.sampled_from([1.0, 3.0, 8.0]))
def test_sparse_counter_causal_and_lagging(f: list[int], g: list[int], seed: int, printed: bool, eps: float) -> None:
    """004-alg2's release at t depends on X_1..X_{t-1} only (u5 outputs N~ before the segment's tests on X_t).

    eps = 8 gives T_0 = 9 log 40 / 8 = 4.1, so segments end often within 40 steps (eps = 1: T_0 = 33, rarely).
    """
    def make(n: NoiseSource) -> SparseCounter:
        return SparseCounter(eps, 40, n, as_printed=printed)

    a, tape = record_run(make, f, seed=seed)
    assert replay_run(make, f, tape) == a
    assert all(float(v).is_integer() for v in a)
    k = min(len(f), len(g))
    changed = f[:k] + g[k:]
    b, _ = record_run(make, changed, seed=seed)
    assert a[:k] == b[:k]
    if k < len(f) and len(changed) == len(f):  # changing X_{k+1} does not move the release at k+1
        assert a[k] == b[k]


@settings(max_examples=25, deadline=None)
@given(f=streams, seed=st.integers(0, 2**32 - 1), r0=st.integers(0, 3))
def test_inhomogeneous_counter_integer_and_replayable(f: list[int], seed: int, r0: int) -> None:
    def make(n: NoiseSource) -> InhomogeneousSparseCounter:
        return InhomogeneousSparseCounter(1.0, r0, lambda r: 2.0, n)

    a, tape = record_run(make, f, seed=seed)
    assert replay_run(make, f, tape) == a
    assert all(float(v).is_integer() for v in a)
    assert all(v == 0.0 for v in a[: 2**r0 - 1])  # t < t_{r0} = 2^{r0}: no output yet


@settings(max_examples=40, deadline=None)
@given(d=st.integers(1, 3), eps=st.sampled_from([0.5, 1.0, 3.0]), seed=st.integers(0, 2**31 - 1),
       n=st.integers(1, 24), geometric=st.booleans(), as_printed=st.booleans(), data=st.data())
def test_efficient_version_replays_the_line_by_line_tape(d: int, eps: float, seed: int, n: int, geometric: bool,
                                                         as_printed: bool, data: st.DataObject) -> None:
    """Random point streams: EfficientOnlineSyntheticData releases what OnlineSyntheticData releases under its tape."""
    points = data.draw(st.lists(st.lists(coordinate, min_size=d, max_size=d), min_size=n, max_size=n))
    times = data.draw(st.sets(st.integers(1, n), max_size=4)) | {n}
    region_counter = geometric_region_counter(eps) if geometric else None
    form = SparseForm.GEOMETRIC if geometric else SparseForm.PRINTED
    reference, tape = record_run(lambda noise: OnlineSyntheticData(eps, d, noise, as_printed=as_printed,
                                                                   sample_times=times, region_counter=region_counter),
                                 points, seed)
    releases = replay_run(lambda noise: EfficientOnlineSyntheticData(eps, d, noise, as_printed=as_printed,
                                                                     sample_times=times, sparse_form=form),
                          points, tape)
    assert [r.t for r in releases if r is not None] == sorted(times)
    for r in releases:
        if r is not None:
            a = reference[r.t - 1]
            assert [u.tolist() for u in a.noisy] == [v.tolist() for v in r.noisy]
            assert [u.tolist() for u in a.consistent] == [v.tolist() for v in r.consistent]
            assert r.points is not None and a.points is not None and np.array_equal(a.points, r.points)
