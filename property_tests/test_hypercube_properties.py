"""Hypothesis properties of seed 004: consistency, released point count, partition refinement,
two changed paths, the sparse counters' causality, and the efficient 004-alg1 against the line-by-line one."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from dpstream.audit.hypercube.loss import SparseLaw, boolean_pairs, record_wiring, sparse_view_loss
from dpstream.counters.sparse import InhomogeneousSparseCounter, SparseCounter, level_start
from dpstream.hypercube.consistency import ConsistencyRule, consistency
from dpstream.hypercube.efficient import EfficientOnlineSyntheticData, SparseForm, geometric_region_counter
from dpstream.hypercube.online import OnlineSyntheticData
from dpstream.hypercube.partition import BinaryPartition, Region, depth_as_printed, depth_at
from dpstream.hypercube.schedule import PrivacySchedule
from dpstream.insecure import InsecureSeededNoise, InsecureZeroNoise, TapeRecorder
from dpstream.noise import NoiseSource
from dpstream.testing import pins, record_run, replay_run
from dpstream.testing.strategies import counter_streams, cube_points, epsilons, point_streams


@st.composite
def noisy_trees(draw: st.DrawFn) -> list[list[int]]:
    r = draw(st.integers(0, 5))
    return [draw(st.lists(st.integers(-10**6, 10**6), min_size=2**j, max_size=2**j)) for j in range(r + 1)]


@pins("E-hypercube-9")
@settings(max_examples=150, deadline=None)
@given(noisy=noisy_trees(), rule=st.sampled_from(list(ConsistencyRule)))
@example(noisy=[[6], [3, 3]], rule=ConsistencyRule.EQUAL_SHIFT)
def test_consistency_nonnegative_and_exact(noisy: list[list[int]], rule: ConsistencyRule) -> None:
    """004-alg4 on the clamped noisy counts n': non-negative, exactly consistent, and the printed condition holds
    with n' (E-hypercube-9: with the true counts n instead, the output would reveal the true split, e.g. [6, 0]
    or [0, 6] from the same noisy [3, 3])."""
    m = consistency(noisy, rule=rule)
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
    points = [data.draw(cube_points(d)) for _ in range(n)]
    alg = OnlineSyntheticData(eps, d, noise=InsecureSeededNoise(seed))
    for t, x in enumerate(points, start=1):
        rel = alg.step(x)
        assert rel.points is not None and rel.points.shape == (t, d)
        assert int(rel.consistent[-1].sum()) == t


@settings(max_examples=200, deadline=None)
@given(d=st.integers(1, 4), x=cube_points(4), j=st.integers(0, 9),
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
    X = np.asarray([data.draw(cube_points(d)) for _ in range(n)])
    tau = data.draw(st.integers(0, n - 1))
    Y = X.copy()
    Y[tau] = data.draw(cube_points(d))
    P = BinaryPartition(d)
    a, b = P.true_counts(X, depth), P.true_counts(Y, depth)
    paths = {(r.depth, r.index) for r in P.path(X[tau], depth)} | {(r.depth, r.index) for r in P.path(Y[tau], depth)}
    for j in range(depth + 1):
        changed = {(j, int(i)) for i in np.flatnonzero(a[j] != b[j])}
        assert changed <= paths
        assert len(changed) <= 2
        assert np.all(np.abs(a[j] - b[j]) <= 1)


streams = counter_streams("bits")


@pins("E-hypercube-3")
@settings(max_examples=40, deadline=None)
@given(f=streams, g=streams, seed=st.integers(0, 2**32 - 1), printed=st.booleans(),
       eps=st.sampled_from([1.0, 3.0, 8.0]))
@example(f=[1] * 12, g=[0] * 12, seed=0, printed=False, eps=8.0)
def test_sparse_counter_causal_and_lagging(f: list[int], g: list[int], seed: int, printed: bool, eps: float) -> None:
    """004-alg2's release at t depends on X_1..X_{t-1} only (u5 outputs N~ before the segment's tests on X_t).

    eps = 8 gives T_0 = 9 log 40 / 8 = 4.1, so segments end often within 40 steps (eps = 1: T_0 = 33, rarely).
    E-hypercube-3: u5 outputs inside the loop, a release at every t (never reading X_{T+1}); the example ends
    several segments in 12 steps.
    """
    def make(n: NoiseSource) -> SparseCounter:
        return SparseCounter(eps, 40, noise=n, as_printed=printed)

    a, tape = record_run(make, f, seed=seed)
    assert replay_run(make, f, tape) == a
    assert all(float(v).is_integer() for v in a)
    k = min(len(f), len(g))
    changed = f[:k] + g[k:]
    b, _ = record_run(make, changed, seed=seed)
    assert a[:k] == b[:k]
    if k < len(f) and len(changed) == len(f):  # changing X_{k+1} does not move the release at k+1
        assert a[k] == b[k]


@pins("E-hypercube-5")
@settings(max_examples=25, deadline=None)
@given(f=streams, seed=st.integers(0, 2**32 - 1), r0=st.integers(0, 3))
@example(f=[1] * 12, seed=0, r0=2)
def test_inhomogeneous_counter_integer_and_replayable(f: list[int], seed: int, r0: int) -> None:
    """Integer releases S~ + c_t, replayable; inputs before t_{r0} are ignored and the output is 0 there
    (E-hypercube-5: with eps = 1, t_{r0} = 2^{r0})."""
    def make(n: NoiseSource) -> InhomogeneousSparseCounter:
        return InhomogeneousSparseCounter(1.0, r0, lambda r: 2.0, noise=n)

    a, tape = record_run(make, f, seed=seed)
    assert replay_run(make, f, tape) == a
    assert all(float(v).is_integer() for v in a)
    assert all(v == 0.0 for v in a[: 2**r0 - 1])  # t < t_{r0} = 2^{r0}: no output yet


def printed_test_draws(t: int, eps: float, d: int) -> int:
    """004-alg2 u3 test draws of t steps of the line-by-line 004-alg1, from the boxes alone: every region of depth
    j (created at t_j) runs one 004-alg2 instance per level r >= r0 over the level's times up to t, and the
    instance tests once in every step but its first (a test needs an input read, E-hypercube-3/4)."""
    schedule = PrivacySchedule(eps, d)
    total = 0
    for j in range(1, depth_at(t, eps) + 1):
        r = schedule.r0(j)
        while level_start(r, eps) <= t:
            steps = min(t, level_start(r + 1, eps) - 1) - level_start(r, eps) + 1
            total += 2**j * max(steps - 1, 0)
            r += 1
    return total


dims_and_points = st.integers(1, 3).flatmap(lambda d: point_streams(d, 1, 30).map(lambda pts: (d, pts)))


@pins("E-hypercube-15")
@settings(max_examples=25, deadline=None)
@given(case=dims_and_points, eps=st.sampled_from([0.5, 1.0, 3.0]), seed=st.integers(0, 2**31 - 1))
@example(case=(2, [[0.0, 0.0]] * 30), eps=1.0, seed=0)
def test_printed_tests_draw_whatever_the_data(case: tuple[int, list[list[float]]], eps: float, seed: int) -> None:
    """E-hypercube-15: the printed 004-alg1 makes one 004-alg2 test draw per region instance and step, whatever the
    points (the example puts every point in one corner: the other regions read only zeros and still draw), so t
    steps cost Theta(eps t^2) draws; the first-failure form draws once per run of equal counts instead."""
    d, points = case
    _, tape = record_run(lambda noise: OnlineSyntheticData(eps, d, noise=noise, sample_times=()), points, seed)
    tests = sum("004-alg2 u3 j=" in draw.site and " t=" in draw.site for draw in tape)
    assert tests == printed_test_draws(len(points), eps, d)
    _, geometric = record_run(lambda noise: EfficientOnlineSyntheticData(
        eps, d, noise=noise, sample_times={len(points)}, sparse_form=SparseForm.GEOMETRIC), points, seed)
    runs = sum("004-alg2 u3 j=" in draw.site and "first=" in draw.site and "within=" not in draw.site
               for draw in geometric)
    assert runs <= tests


@settings(max_examples=40, deadline=None)
@given(d=st.integers(1, 3), eps=st.sampled_from([0.5, 1.0, 3.0]), seed=st.integers(0, 2**31 - 1),
       n=st.integers(1, 24), geometric=st.booleans(), as_printed=st.booleans(), data=st.data())
def test_efficient_version_replays_the_line_by_line_tape(d: int, eps: float, seed: int, n: int, geometric: bool,
                                                         as_printed: bool, data: st.DataObject) -> None:
    """Random point streams: EfficientOnlineSyntheticData releases what OnlineSyntheticData releases under its tape."""
    points = data.draw(point_streams(d, min_size=n, max_size=n))
    times = data.draw(st.sets(st.integers(1, n), max_size=4)) | {n}
    region_counter = geometric_region_counter(eps) if geometric else None
    form = SparseForm.GEOMETRIC if geometric else SparseForm.PRINTED
    reference, tape = record_run(lambda noise: OnlineSyntheticData(eps, d, noise=noise, as_printed=as_printed,
                                                                   sample_times=times, region_counter=region_counter),
                                 points, seed)
    releases = replay_run(lambda noise: EfficientOnlineSyntheticData(eps, d, noise=noise, as_printed=as_printed,
                                                                     sample_times=times, sparse_form=form),
                          points, tape)
    assert [r.t for r in releases if r is not None] == sorted(times)
    for r in releases:
        if r is not None:
            a = reference[r.t - 1]
            assert [u.tolist() for u in a.noisy] == [v.tolist() for v in r.noisy]
            assert [u.tolist() for u in a.consistent] == [v.tolist() for v in r.consistent]
            assert r.points is not None and a.points is not None and np.array_equal(a.points, r.points)


# --- errata pinned: the property the default meets for every input, with the erratum's case as @example ----


def _floor_log2(x: Fraction) -> int:
    """The largest j with 2^j <= x (x >= 1), exactly."""
    j = 0
    while Fraction(2) ** (j + 1) <= x:
        j += 1
    return j


@pins("E-hypercube-1")
@settings(max_examples=60, deadline=None)
@given(t=st.integers(1, 5000), eps=st.sampled_from([0.25, 0.4, 0.5, 1.0, 1.5, 3.0]))
@example(t=8, eps=1.0)
def test_partition_depth_is_floor_log2_eps_t(t: int, eps: float) -> None:
    """The depth at time t is j = floor(log2(eps t)) (t_j <= t < t_{j+1}), 0 before t_1; the printed loop of u2
    leaves one more from eps t >= 1 on (t = 8, eps = 1: 3 vs 4)."""
    x = Fraction(eps) * t
    expected = _floor_log2(x) if x >= 1 else 0
    assert depth_at(t, eps) == expected
    assert depth_as_printed(t, eps) == (expected + 1 if x >= 1 else 0)


@pins("E-hypercube-2")
@settings(max_examples=8, deadline=None)
@given(d=st.integers(1, 2), eps=st.sampled_from([0.5, 2.0, 3.0]), points=point_streams(2, 12, 20))
@example(d=2, eps=3.0, points=[[0.1, 0.1]] * 20)
def test_region_counters_read_their_region_from_its_first_time(d: int, eps: float,
                                                               points: list[list[float]]) -> None:
    """A_theta receives 1{x_i in Omega_theta} from its first time on (t_{|theta|} for d >= 2, the whole history for
    d = 1); the printed stream start 2^{|theta|} drops data in [t_j, 2^j) when eps > 1 (here eps = 3)."""
    X = np.asarray([p[:d] for p in points])
    made = record_wiring(lambda rc: OnlineSyntheticData(eps, d, noise=InsecureZeroNoise(), region_counter=rc), list(X))
    P = BinaryPartition(d)
    n = len(X)
    for region, counter in made.items():
        inside = P.cell_indices(X, region.depth) == region.index
        assert counter.inputs == [int(v) for v in inside[counter.first_time - 1:]]
        if d == 1:
            assert counter.first_time == 1
        else:
            assert counter.first_time == min(t for t in range(1, n + 1) if depth_at(t, eps) >= region.depth)


@pins("E-hypercube-4")
@settings(max_examples=30, deadline=None)
@given(eps=st.sampled_from([0.5, 1.0, 4.0, 8.0]), f=counter_streams("bits", min_size=1, max_size=30),
       seed=st.integers(0, 2**16))
@example(eps=1.0, f=[0, 0, 0, 0, 0, 0], seed=0)
def test_sparse_counting_never_overflows_its_subroutine(eps: float, f: list[int], seed: int) -> None:
    """A new segment is tested only after it has read an input, so at most T - 1 segments end over a horizon T and
    A_sub (horizon T) is never stepped past T; both loops stay within eps (exact view loss at T = 6, eps = 1:
    0.988877 eps by default, 0.999857 eps with the printed empty-segment tests)."""
    T = len(f)
    counter = SparseCounter(eps, T, noise=InsecureSeededNoise(seed))
    counter.run(f)
    assert counter.segments_ended <= T - 1
    assert counter.sub is None or counter.sub.t == counter.segments_ended <= T
    if (eps, f, seed) == (1.0, [0] * 6, 0):
        for printed in (False, True):
            law = SparseLaw.printed(1.0, 6, as_printed=printed)
            assert max(sparse_view_loss(law, x, y).upper for x, y in boolean_pairs(6)) <= 1.0 + 1e-9


@pins("E-hypercube-7")
@settings(max_examples=20, deadline=None)
@given(eps=epsilons(0.01, 10.0))
@example(eps=1.0)
def test_d1_schedule_spends_one_minus_6_over_pi2_of_eps(eps: float) -> None:
    """(5.1) for d = 1: 2 sup_s sum_j eps_{j,s} = (6/pi^2) sum_{j>=1} eps/(j+1)^2 = (1 - 6/pi^2) eps (0.392 eps), not
    the printed eps; the claim eps holds with room to spare."""
    schedule = PrivacySchedule(eps, 1)
    assert schedule.total_budget_bound() == pytest.approx((1 - 6 / math.pi**2) * eps, rel=1e-12)
    assert schedule.total_budget_bound() <= eps
    assert OnlineSyntheticData(eps, 1, noise=InsecureZeroNoise()).claim.parameter == eps


@pins("E-hypercube-8")
@settings(max_examples=12, deadline=None)
@given(d=st.integers(1, 3), eps=st.sampled_from([0.5, 1.0, 3.0]), seed=st.integers(0, 2**31 - 1),
       points=point_streams(3, 1, 14))
@example(d=2, eps=1.0, seed=0, points=[[0.1, 0.2, 0.0]] * 9)
def test_consistency_covers_every_level_with_the_public_root_count(d: int, eps: float, seed: int,
                                                                   points: list[list[float]]) -> None:
    """u7 runs over |theta| <= r (not < r) with n'_root = t (one point per step, no noise needed): t points are
    released, m_theta of them in each depth-r region, and all levels are consistent."""
    alg = OnlineSyntheticData(eps, d, noise=InsecureSeededNoise(seed))
    P = BinaryPartition(d)
    for t, x in enumerate(points, start=1):
        rel = alg.step(x[:d])
        assert rel.noisy[0].tolist() == [t] and int(rel.consistent[0][0]) == t
        assert len(rel.consistent) == rel.depth + 1
        for j in range(rel.depth):
            assert np.array_equal(rel.consistent[j + 1][0::2] + rel.consistent[j + 1][1::2], rel.consistent[j])
        assert rel.points is not None and rel.points.shape == (t, d)
        cells = np.bincount(P.cell_indices(rel.points, rel.depth), minlength=2**rel.depth)
        assert cells.tolist() == rel.consistent[rel.depth].tolist()


@pins("E-hypercube-11")
@settings(max_examples=4, deadline=None)
@given(eps=st.sampled_from([0.5, 1.0, 3.0]), T=st.integers(2, 5), printed=st.booleans())
@example(eps=1.0, T=6, printed=True)
def test_sparse_counting_thresholds_cost_half_of_eps(eps: float, T: int, printed: bool) -> None:
    """The segment ends (AboveThreshold on monotone counts, fresh threshold per segment) cost at most eps/2, so
    004-alg2 is eps-DP as Lemma 3.2 says: exact view loss over every neighbouring Boolean pair."""
    law = SparseLaw.printed(eps, T, as_printed=printed)
    for x, y in boolean_pairs(T):
        loss = sparse_view_loss(law, x, y)
        assert loss.parts["partition_only_max"] <= eps / 2 * (1 + 1e-9)
        assert loss.upper <= eps * (1 + 1e-9)


@pins("E-hypercube-12")
@settings(max_examples=20, deadline=None)
@given(eps=epsilons(4.0, 16.0), f=counter_streams("bits", min_size=2, max_size=30), seed=st.integers(0, 2**16))
@example(eps=1.0, f=[1, 1, 1, 1, 1, 1], seed=0)
def test_sparse_counting_subroutine_uses_the_corrected_binary_mechanism(eps: float, f: list[int], seed: int) -> None:
    """A_sub is the Binary Mechanism with scale (floor(log2 T) + 1)/(eps/2); with 001-alg10's printed
    log2(T)/(eps/2) the composed 004-alg2 loses 1.069 eps (exact view loss, T = 6, eps = 1)."""
    T = len(f)
    recorder = TapeRecorder(InsecureSeededNoise(seed))
    counter = SparseCounter(eps, T, noise=recorder)
    counter.run(f)
    sub_scales = sorted({d.params["scale"] for d in recorder.tape if d.site.startswith("004-alg2 u8")})
    assert sub_scales == ([] if counter.segments_ended == 0 else
                          pytest.approx([(math.floor(math.log2(T)) + 1) / (eps / 2)], rel=1e-12))
    if (eps, T, seed) == (1.0, 6, 0):
        broken = SparseLaw.printed(1.0, 6, sub_as_printed=True)
        worst = max(sparse_view_loss(broken, x, y).lower for x, y in boolean_pairs(6))
        assert worst == pytest.approx(1.069157, abs=1e-6)


@pins("E-hypercube-13")
@settings(max_examples=60, deadline=None)
@given(d=st.integers(1, 4), j=st.integers(0, 10), index=st.integers(0, 2**10 - 1))
@example(d=2, j=3, index=5)
def test_regions_have_volume_2_to_minus_j_and_diameter_2_to_minus_floor_j_over_d(d: int, j: int, index: int) -> None:
    """Halving coordinate k mod d at depth k gives every region of depth j volume 2^-j and l_inf diameter
    2^-floor(j/d) (004-sec3.1), which the paper states without a splitting rule."""
    P = BinaryPartition(d)
    low, high = P.box(Region(j, index % 2**j))
    assert float(np.prod(high - low)) == 2.0**-j
    assert float(np.max(high - low)) == 2.0 ** -(j // d)
