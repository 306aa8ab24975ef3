"""Online synthetic data (004-alg1): releases, wiring of the region counters, output, options, bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpstream.audit.hypercube.loss import record_wiring
from dpstream.claims import Measure, Neighbour
from dpstream.errors import DPStreamInputError
from dpstream.hypercube.consistency import consistency
from dpstream.hypercube.online import OnlineSyntheticData
from dpstream.hypercube.partition import BinaryPartition, Region, depth_as_printed, depth_at, level_time
from dpstream.hypercube.schedule import PrivacySchedule, ScheduleKind
from dpstream.hypercube.streams import make_stream
from dpstream.insecure import InsecureSeededNoise, InsecureZeroNoise, TapeRecorder, TapeReplay
from dpstream.tape import Tape, TapeError, TapeSiteMissingError
from dpstream.testing import by_value, replay_run
from dpstream.vectors import KnownAnswerVector
from dpstream.vectors.corpus import known_answer


@pytest.mark.parametrize(("d", "eps"), [(1, 1.0), (2, 1.0), (3, 2.0), (2, 0.4)])
def test_releases_have_t_points_in_the_cube(d: int, eps: float) -> None:
    X = make_stream("clustered", 40, d, seed=d)
    alg = OnlineSyntheticData(eps, d, noise=InsecureSeededNoise(7))
    for t, x in enumerate(X, start=1):
        rel = alg.step(x)
        assert rel.t == t and rel.depth == depth_at(t, eps)
        assert rel.points is not None and rel.points.shape == (t, d)
        assert np.all((rel.points >= 0.0) & (rel.points <= 1.0))
        assert rel.noisy[0].tolist() == [t]  # the root count is public: one point per step
        assert len(rel.noisy) == len(rel.consistent) == rel.depth + 1
        assert [c.tolist() for c in consistency(rel.noisy)] == [c.tolist() for c in rel.consistent]
        # each depth-r region holds exactly m_theta output points
        P = BinaryPartition(d)
        cells = np.bincount(P.cell_indices(rel.points, rel.depth), minlength=2**rel.depth)
        assert cells.tolist() == rel.consistent[rel.depth].tolist()


@pytest.mark.parametrize(("d", "eps", "as_printed"), [(1, 1.0, False), (2, 1.0, False), (2, 0.5, True),
                                                      (1, 2.0, True), (3, 3.0, False)])
def test_wiring_of_the_region_counters(d: int, eps: float, as_printed: bool) -> None:
    """A_theta gets r0 and eps_{|theta|,r} of the schedule and the stream 1{x_i in Omega_theta} (u4, u6)."""
    X = make_stream("uniform", 24, d, seed=11)
    made = record_wiring(lambda rc: OnlineSyntheticData(eps, d, noise=InsecureZeroNoise(), as_printed=as_printed,
                                                        region_counter=rc), list(X))
    schedule = PrivacySchedule(eps, d)
    P = BinaryPartition(d)
    depth = depth_as_printed(24, eps) if as_printed else depth_at(24, eps)
    assert {(r.depth, r.index) for r in made} == {(j, i) for j in range(1, depth + 1) for i in range(2**j)}
    for region, counter in made.items():
        j = region.depth
        assert counter.r0 == schedule.r0(j)
        assert all(counter.eps_levels(r) == schedule(j, r) for r in range(counter.r0, counter.r0 + 5))
        created = min(t for t in range(1, 25) if (depth_as_printed(t, eps) if as_printed else depth_at(t, eps)) >= j)
        first = created if counter.r0 == j else 1
        assert counter.first_time == first
        inside = P.cell_indices(X, j) == region.index
        expected = [int(inside[i - 1]) if not (as_printed and i < 2**j) else 0 for i in range(first, 25)]
        assert counter.inputs == expected
        assert counter.t == 25 - first


def test_default_schedules() -> None:
    assert OnlineSyntheticData(1.0, 1, noise=InsecureZeroNoise()).schedule.kind is ScheduleKind.EQ51
    assert OnlineSyntheticData(1.0, 3, noise=InsecureZeroNoise()).schedule.kind is ScheduleKind.EQ41
    claim = OnlineSyntheticData(0.7, 2, noise=InsecureZeroNoise()).claim
    assert claim.measure is Measure.PURE_DP and claim.parameter == 0.7
    assert claim.neighbour is Neighbour.POINT_REPLACE and claim.source == "004-prop4.1"
    assert OnlineSyntheticData(0.7, 1, noise=InsecureZeroNoise()).claim.source == "004-prop5.1"


def test_sample_times_change_no_count() -> None:
    """Sampling the output only at some times leaves every count and every sampled Y_t unchanged."""
    X = make_stream("uniform", 20, 2, seed=1)
    recorder = TapeRecorder(InsecureSeededNoise(3))
    full = OnlineSyntheticData(1.0, 2, noise=recorder).run(X)
    sparse = OnlineSyntheticData(1.0, 2, noise=TapeReplay(recorder.tape), sample_times={5, 20}).run(X)
    for a, b in zip(full, sparse, strict=True):
        assert all(np.array_equal(u, v) for u, v in zip(a.noisy, b.noisy, strict=True))
        if b.t in (5, 20):
            assert b.points is not None and a.points is not None and np.array_equal(a.points, b.points)
        else:
            assert b.points is None


def test_output_sites_and_laws() -> None:
    recorder = TapeRecorder(InsecureSeededNoise(2))
    alg = OnlineSyntheticData(2.0, 2, noise=recorder)
    rel = alg.run(make_stream("uniform", 6, 2, seed=0))[-1]
    out = [d for d in recorder.tape if d.site.startswith("004-alg1 u8 t=6 ")]
    P = BinaryPartition(2)
    assert sum(d.params["count"] for d in out) == 6
    for d in out:
        label = d.site.split("theta=")[1]
        low, high = P.box(Region(rel.depth, int(label, 2)))
        assert d.params["low"] == low.tolist() and d.params["high"] == high.tolist()


@pytest.mark.parametrize("x", [[0.2, 1.5], [math.nan, 0.1], [0.1], [0.1, 0.2, 0.3], "ab", None, [-0.01, 0.5]])
def test_bad_points_no_draw_no_state_change(x: object) -> None:
    recorder = TapeRecorder(InsecureSeededNoise(0))
    alg = OnlineSyntheticData(1.0, 2, noise=recorder)
    alg.run(make_stream("uniform", 5, 2, seed=0))
    drawn, counters = len(recorder.tape), [[c.t for c in level] for level in alg.counters]
    with pytest.raises(DPStreamInputError) as info:
        alg.step(x)
    assert info.value.field == "x_t"
    assert alg.t == 5 and len(recorder.tape) == drawn
    assert [[c.t for c in level] for level in alg.counters] == counters


@pytest.mark.parametrize(("eps", "d"), [(0.0, 2), (-1.0, 2), (math.nan, 2), (math.inf, 2), (1.0, 0), (1.0, 1.5)])
def test_bad_parameters(eps: float, d: int) -> None:
    with pytest.raises(DPStreamInputError):
        OnlineSyntheticData(eps, d, noise=InsecureZeroNoise())


def test_bad_schedule_and_flags() -> None:
    with pytest.raises(DPStreamInputError):
        OnlineSyntheticData(1.0, 2, noise=InsecureZeroNoise(), schedule=PrivacySchedule(2.0, 2))
    with pytest.raises(DPStreamInputError):
        PrivacySchedule(1.0, 1, ScheduleKind.EQ41)
    with pytest.raises(DPStreamInputError):
        OnlineSyntheticData(1.0, 2, noise=InsecureZeroNoise(), as_printed=1)  # type: ignore[arg-type]


def test_failed_draw_leaves_everything_unchanged() -> None:
    X = make_stream("uniform", 9, 2, seed=4)
    recorder = TapeRecorder(InsecureSeededNoise(5))
    OnlineSyntheticData(1.0, 2, noise=recorder).run(X)
    draws = tuple(d for d in recorder.tape if not d.site.startswith("004-alg1 u6 theta=10 "))  # drop one region
    alg = OnlineSyntheticData(1.0, 2, noise=TapeReplay(Tape(draws)))
    done = 0
    with pytest.raises(TapeSiteMissingError):
        for x in X:
            alg.step(x)
            done += 1
    assert alg.t == done and len(alg.history) == done
    assert all(c.t == done - c.first_time + 1 for level in alg.counters for c in level)  # type: ignore[attr-defined]


def test_replay_with_other_epsilon_fails_loudly() -> None:
    X = make_stream("uniform", 4, 2, seed=4)
    recorder = TapeRecorder(InsecureSeededNoise(5))
    OnlineSyntheticData(1.0, 2, noise=recorder).run(X)
    alg = OnlineSyntheticData(1.5, 2, noise=TapeReplay(recorder.tape))
    with pytest.raises(TapeError):
        alg.run(X)


def test_level_creation_times() -> None:
    """Regions of depth j appear at t_j (default) and at t_{j-1} as printed (u2)."""
    for as_printed in (False, True):
        alg = OnlineSyntheticData(0.5, 2, noise=InsecureZeroNoise(), as_printed=as_printed)
        seen: dict[int, int] = {}
        for t, x in enumerate(make_stream("uniform", 20, 2, seed=0), start=1):
            rel = alg.step(x)
            seen.setdefault(rel.depth, t)
        for j, t in seen.items():
            if j > 0:
                assert t == (level_time(j - 1, 0.5) if as_printed else level_time(j, 0.5))


ONLINE_VECTORS = list(known_answer("004-alg1"))


@pytest.mark.parametrize("vector", ONLINE_VECTORS, ids=[v.id for v in ONLINE_VECTORS])
def test_online_vector(vector: KnownAnswerVector) -> None:
    """Replaying a corpus vector of 004-alg1 gives its releases exactly; the consistent counts are 004-alg4 of the
    noisy ones and every output point lies in its region."""
    p = by_value(vector.params)
    releases = replay_run(lambda n: OnlineSyntheticData(p["epsilon"], p["d"], noise=n),
                          [np.asarray(x) for x in vector.inputs], vector.tape)
    P = BinaryPartition(p["d"])
    for release, want in zip(releases, vector.expected, strict=True):
        assert [level.tolist() for level in release.noisy] == want["noisy"]
        assert [level.tolist() for level in release.consistent] == want["consistent"]
        assert [level.tolist() for level in consistency(release.noisy)] == want["consistent"]
        assert release.points is not None and release.points.tolist() == want["points"]
        cells = np.bincount(P.cell_indices(release.points, release.depth), minlength=2**release.depth)
        assert cells.tolist() == want["consistent"][-1]
