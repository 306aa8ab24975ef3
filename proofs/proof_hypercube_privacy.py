"""Proof note — online synthetic data (004-alg1) is eps-DP: 004-prop4.1 (d >= 2, schedule (4.1))
and 004-prop5.1 (d = 1, schedule (5.1)); the schedule sums (4.2) and (5.1).

Neighbours (004-def2.2): X, X' equal except x_tau != x'_tau (POINT_REPLACE). The number of points
at time t is t under both, so the root count n_root = t is public and carries no noise.

Which counters see the change
-----------------------------
A_theta's input at time tau is 1{x_tau in Omega_theta}. It differs between X and X' only if exactly
one of x_tau, x'_tau lies in Omega_theta, i.e. for theta on the root-to-leaf path of x_tau or of
x'_tau but not on both (regions on the common part of the two paths see 1 under both). The
partition itself (which regions exist when) depends on t only, never on the data. So the
changed counters lie on two paths, at most one region per depth on each
(property_tests/test_hypercube_properties.py checks this on the true counts).

Cost along one path
-------------------
Let s be the level of tau (t_s <= tau < t_{s+1}). By 004-lem3.3 (proofs/proof_sparse_counting.py)
the counter of the depth-j region on the path costs eps_{j,s} if s >= r0(j) and 0 otherwise.
* d >= 2, (4.1), r0 = j: only j = 1..s pay; sum_{j=1}^s eps_{j,s} = C1 eps (1 - alpha^{-s}) /
  (1 - alpha^{-1}) < C1 eps / (1 - alpha^{-1}) = eps/2 exactly (C1 = (1 - alpha^{-1})/2): (4.2).
  The supremum over s is eps/2 (a limit, never attained).
* d = 1, (5.1), r0 = 0: every depth j >= 1 pays, including regions created after tau (their
  counters replay the history from t_{r0} = t_0; section 5 "we do not ignore the earlier data"):
  sum_{j>=1} (3/pi^2) eps / (j+1)^2 = (3/pi^2) (pi^2/6 - 1) eps = (1/2 - 3/pi^2) eps ~ 0.196 eps.

Code (reference/dpstream/hypercube/online.py, ``OnlineSyntheticData``; counters/sparse.py; hypercube/schedule.py)
-------------------------------------------------------------------------------------------------------------
* ``[004-alg1 u4]`` ``_new_counters``: A_theta = ``InhomogeneousSparseCounter(eps, r0 = schedule.r0(j), eps_levels =
  lambda r: schedule(j, r), first, scoped(noise, "004-alg1 u6 theta=<theta>"))``, r0 = j for (4.1), 0 for (5.1);
* ``[004-alg1 u6]`` every A_theta of depth 1..r reads ``1{x_t in Omega_theta}`` (``index == mine``);
* ``[004-alg3 u3]`` inside A_theta, level s ends with ``S + level_sum + <draw, scale 2.0 / eps_s>`` and
  ``[004-alg3 u2]`` runs 004-alg2 with ``eps_s / 2``: a change at level s costs eps_{j,s} (Lemma 3.3);
* ``[004-alg1 u7]`` consistency and ``[004-alg1 u8]`` the output points: post-processing.

The counters are independent mechanisms (separate draws), consistency (004-alg4) and the output
(004-alg1 u8) are post-processing, so the loss is at most the sum over the changed counters:
2 sup_s path(s) <= eps. For d >= 2 that is eps (in the limit); for d = 1 the printed proof states

    2 sup_s sum_{j>=1} eps_{j,s} = (6/pi^2) sum_{j>=1} eps/(j+1)^2 = eps,

but the middle expression equals (1 - 6/pi^2) eps ~ 0.392 eps (checked below): the claim eps-DP
holds with room to spare, the equality is wrong (docs/errata/hypercube.md E-hypercube-7). The
sum would be exactly eps/2 per path with eps_{j,r} = (3/pi^2) eps / j^2 (``ScheduleKind.EQ51_FULL``).

Checks below (sympy): (4.2) in closed form for d = 2..8 and symbolic s, C1 / (1 - 1/alpha) = 1/2,
alpha in [2^{1/4}, sqrt 2); the d = 1 series exactly; the implementation's
:class:`~dpstream.hypercube.schedule.PrivacySchedule` against these closed forms.
"""

from __future__ import annotations

import math
import re

import sympy as sp

from dpstream.hypercube.consistency import ConsistencyRule, consistency
from dpstream.hypercube.online import OnlineSyntheticData
from dpstream.hypercube.schedule import PrivacySchedule, ScheduleKind
from dpstream.insecure import InsecureZeroNoise, TapeRecorder
from dpstream.noise import data_rng

eps = sp.symbols("epsilon", positive=True)
j, s = sp.symbols("j s", integer=True, positive=True)


def _alpha(d: int) -> sp.Expr:
    return sp.Integer(2) ** ((1 - sp.Rational(1, d)) / 2)


def _C1(d: int) -> sp.Expr:
    return (1 - sp.Integer(2) ** (-(1 - sp.Rational(1, d)) / 2)) / 2


def test_eq_4_2_closed_form_and_limit() -> None:
    A = 1 + sp.symbols("delta", positive=True)  # any alpha > 1
    total = sp.summation(A ** (j - s), (j, 1, s))  # sum_{j=1}^s alpha^{j-s}
    assert sp.simplify(total - (1 - A ** (-s)) / (1 - 1 / A)) == 0
    assert sp.limit(A ** (-s), s, sp.oo) == 0  # so the sum increases to 1/(1 - 1/alpha), never reaching it
    x = sp.symbols("x", positive=True)  # x = (1 - 1/d)/2, alpha = 2^x, C1 = (1 - 2^{-x})/2
    ratio = ((1 - sp.Integer(2) ** (-x)) / 2) / (1 - 1 / sp.Integer(2) ** x)
    assert sp.simplify(ratio - sp.Rational(1, 2)) == 0  # C1 eps / (1 - 1/alpha) = eps/2 for every d
    for d in range(2, 9):
        alpha, C1 = _alpha(d), _C1(d)
        assert abs(sp.N(C1 / (1 - 1 / alpha), 50) - sp.Rational(1, 2)) < sp.Float("1e-45")
        assert sp.Integer(2) ** sp.Rational(1, 4) <= alpha < sp.sqrt(2)


def test_eq_5_1_series_is_not_eps() -> None:
    basel = sp.summation(1 / j**2, (j, 1, sp.oo))  # pi^2/6
    assert basel == sp.pi**2 / 6
    per_path = 3 / sp.pi**2 * eps * (basel - 1)  # sum_{j>=1} 1/(j+1)^2 = sum_{i>=2} 1/i^2
    assert sp.simplify(per_path - (sp.Rational(1, 2) - 3 / sp.pi**2) * eps) == 0
    printed_total = 2 * per_path  # "2 sup_s sum_j eps_{j,s}" of 004-prop5.1
    assert sp.simplify(printed_total - (1 - 6 / sp.pi**2) * eps) == 0
    assert sp.simplify(printed_total - eps) != 0  # the printed "= eps" is false ...
    assert float(1 - 6 / sp.pi**2) < 1  # ... but the bound <= eps holds
    assert abs(float(1 - 6 / sp.pi**2) - 0.39207) < 1e-5
    # starting the sum at j = 0 (equivalently 1/j^2 for j >= 1) gives exactly eps
    assert sp.simplify(2 * 3 / sp.pi**2 * eps * basel - eps) == 0
    # the shift sum_{j>=1} 1/(j+1)^2 = basel - 1, checked on partial sums exactly
    for n in (1, 5, 40):
        assert sum(sp.Rational(1, (i + 1) ** 2) for i in range(1, n + 1)) == \
            sum(sp.Rational(1, i**2) for i in range(1, n + 2)) - 1


def test_schedule_implementation_matches_closed_forms() -> None:
    for d in (2, 3, 5):
        sched = PrivacySchedule(0.7, d)
        for level in (1, 2, 5, 12):
            closed = float(_C1(d) * 0.7 * (1 - _alpha(d) ** (-level)) / (1 - 1 / _alpha(d)))
            assert math.isclose(sched.path_budget(level), closed, rel_tol=1e-12)
            assert sched.path_budget(level) < 0.35
        assert math.isclose(sched.total_budget_bound(), 0.7, rel_tol=1e-12)
    d1 = PrivacySchedule(0.7, 1)
    assert d1.kind is ScheduleKind.EQ51
    assert math.isclose(d1.path_budget(4), 0.7 * (0.5 - 3 / math.pi**2), rel_tol=1e-12)
    N = 20_000  # partial sum; the tail sum_{k > N} c/(k+1)^2 is below c/(N+1)
    partial = math.fsum(3 / math.pi**2 * 0.7 / (k + 1) ** 2 for k in range(1, N + 1))
    assert partial <= d1.path_budget(4) <= partial + 3 / math.pi**2 * 0.7 / (N + 1)
    assert all(d1(k, r) == 3 / math.pi**2 * 0.7 / (k + 1) ** 2 for k in (1, 5) for r in (0, 3))
    assert math.isclose(PrivacySchedule(0.7, 1, ScheduleKind.EQ51_FULL).total_budget_bound(), 0.7)


def test_region_counters_spend_the_schedule() -> None:
    """A recorded run of OnlineSyntheticData (zero noise, 40 points): the S~ draw (004-alg3 u3) of a depth-j
    region at the end of level s has scale 2/eps_{j,s} and its 004-alg2 draws 2/(eps_{j,s}/2), so the region's
    counter costs eps_{j,s} for a point of level s; for d = 2 only depths j <= s draw at level s (r0 = j), and
    the sum along a path is the schedule's path budget, below eps/2; for d = 1 every depth pays (r0 = 0)."""
    pattern = re.compile(r"^004-alg1 u6 theta=([01]+) / 004-alg3 u(\d) r=(\d+)(?: / 004-alg2 u[23] .*)?$")
    for d, eps in ((2, 4.0), (1, 4.0)):
        recorder = TapeRecorder(InsecureZeroNoise())
        alg = OnlineSyntheticData(eps, d, noise=recorder, sample_times=[])
        alg.run(data_rng(2).random((40, d)))
        sched = alg.schedule
        cost: dict[tuple[str, int], float] = {}
        for draw in recorder.tape:
            m = pattern.match(draw.site)
            assert m is not None, draw.site
            theta, line, level = m.group(1), m.group(2), int(m.group(3))
            budget = sched(len(theta), level)
            if line == "3" and "004-alg2" not in draw.site:
                assert math.isclose(draw.params["scale"], 2 / budget, rel_tol=1e-15)
                cost[theta, level] = budget / 2 + 1 / draw.params["scale"]  # 004-alg2 at eps/2 + S~ (Lemma 3.3)
            else:
                assert math.isclose(draw.params["scale"], 2 / (budget / 2), rel_tol=1e-15)
        levels = sorted({s for _, s in cost})
        assert len(levels) >= 3
        for s in levels[:-1]:  # complete levels: every depth on the path of theta = 0...0 that read level s
            depths = sorted(len(th) for th, lv in cost if lv == s and set(th) == {"0"})
            if d == 2:
                assert depths == list(range(1, s + 1))  # r0 = j
                path = math.fsum(cost["0" * j, s] for j in depths)
                assert math.isclose(path, sched.path_budget(s), rel_tol=1e-12) and path < eps / 2
            else:
                assert depths and depths[0] == 1  # r0 = 0: depth 1 pays from level 0 on
                assert all(math.isclose(cost["0" * j, s], sched(j, s), rel_tol=1e-12) for j in depths)


def test_consistency_is_post_processing_of_the_noisy_counts_alone() -> None:
    """004-alg4 reads only the noisy counts n' ([004-alg4 u1], [004-alg4 u4]) and draws nothing: a deterministic
    map of a private release, hence private with the same parameter (post-processing). Checked on random noisy
    trees: the same counts give the same output, the output is non-negative and consistent (m_theta = m_theta0 +
    m_theta1), and a change in the counts of one region changes nothing above it in the tree."""
    rng = data_rng(11)
    for rule in ConsistencyRule:
        for _ in range(20):
            noisy = [rng.integers(-3, 9, size=2**j) for j in range(4)]
            m = consistency(noisy, rule=rule)
            assert [list(a) for a in m] == [list(a) for a in consistency([a.copy() for a in noisy], rule=rule)]
            for j in range(3):
                assert all(x >= 0 for x in m[j])
                assert list(m[j]) == [int(m[j + 1][2 * i] + m[j + 1][2 * i + 1]) for i in range(2**j)]
            changed = [a.copy() for a in noisy]
            changed[3][0] += 5
            assert list(consistency(changed, rule=rule)[0]) == list(m[0])
