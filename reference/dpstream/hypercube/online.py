"""Online synthetic data in [0,1]^d: 004-alg1 (He, Vershynin, Zhu), :class:`OnlineSyntheticData`.

One point x_t arrives per step; the step releases t synthetic points Y_t. The partition
grows breadth first (depth j from t_j = ceil(2^j/eps) on, 004-sec3.1); every region
Omega_theta of depth 1..r has its own inhomogeneous sparse counter A_theta (004-alg3,
:class:`~dpstream.counters.sparse.InhomogeneousSparseCounter`) with starting level
r0 = |theta| and budgets eps_{|theta|,r} of (4.1) when d >= 2, r0 = 0 and (5.1) when d = 1
(:class:`~dpstream.hypercube.schedule.PrivacySchedule`). The noisy counts are made
consistent (004-alg4) and the output places m_theta uniform points in every region of
depth r, with post-processing draws only.

Readings of the printed box (docs/errata/hypercube.md):

* u2 (E-hypercube-1): as printed the loop exits with r = floor(log2(eps t)) + 1, one more
  than the depth floor(log2(eps t)) of section 3.2 and the proofs. Default: depth
  floor(log2(eps t)) (0 before t_1). ``as_printed=True`` uses the printed r; its deepest
  regions then exist one level before their counters start (r0 = |theta|) and report 0.
* u6 (E-hypercube-2): the printed input stream of A_theta starts at i = 2^{|theta|}, while
  004-alg3 starts at t_{r0} and section 5 says that for d = 1 no earlier data is ignored.
  Default: A_theta receives 1{x_i in Omega_theta} for every i from its first time
  (t_{|theta|} for r0 = |theta|; for r0 = 0 the history from i = 1 is replayed when the
  region is created, the data being available by the Input line); 004-alg3 itself ignores
  i < t_{r0}. ``as_printed=True`` feeds 0 instead of the indicator for i < 2^{|theta|}.
* u7 (E-hypercube-8): "{N_theta}_{|theta| < r}" is read as |theta| <= r (u8 needs depth r);
  the root, which has no counter, gets n'_root = t: one point arrives per step, so t is
  public under the neighbour relation "one point replaced".
* u8: the "arbitrary" locations are uniform in the region (a ``uniform_box`` draw).

Privacy: eps-DP under POINT_REPLACE (004-prop4.1, 004-prop5.1); a replaced point changes
the input of the counters on two root-to-leaf paths, each path costs sup_s sum_j eps_{j,s}
<= eps/2 (:meth:`PrivacySchedule.path_budget`). Exact audit: dpstream.audit.hypercube.loss.
Proofs: proofs/proof_hypercube_privacy.py (004-prop4.1, 004-prop5.1), proofs/proof_sparse_counting.py (the
counters, 004-lem3.2, 004-lem3.3), proofs/proof_hypercube_lemma43.py (Lemma 4.3 of the accuracy bound).

Efficiency options that do not change any release's law: ``sample_times`` restricts the
Output draws (u8) to the given times (the other releases carry the consistent counts but
no points); every counter still steps at every t. The lazy version with the same releases under
one tape is :class:`dpstream.hypercube.efficient.EfficientOnlineSyntheticData`. ``operations``
counts the steps of the region counters (for the operation-count test of the efficient version).
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from dpstream.claims import Neighbour, PrivacyClaim
from dpstream.convention import convention
from dpstream.counters.base import Counter
from dpstream.counters.sparse import InhomogeneousSparseCounter, SparseCounter, SparseFactory
from dpstream.errors import DPStreamInputError, require_positive_finite
from dpstream.hypercube.consistency import ConsistencyRule, consistency
from dpstream.hypercube.partition import BinaryPartition, Region, depth_as_printed, depth_at
from dpstream.hypercube.schedule import PrivacySchedule, ScheduleKind
from dpstream.noise import NoiseSource, default_noise, scoped, site
from dpstream.staged import Staged, order_free, run_all

__all__ = ["MAX_START_DEPTH", "HypercubeRelease", "OnlineParameters", "OnlineSyntheticData", "RegionCounterFactory",
           "as_count"]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

MAX_START_DEPTH = 16
"""Deepest partition accepted at t = 1 (depth floor(log2 eps), so eps < 2^17): 2^16 regions, each with a counter
stepped at every time, i.e. the partition a stream of 2^16 steps reaches at eps = 1 (seconds per step in Python;
the cost of a step grows as eps t). A larger eps is refused when the algorithm is built, not met as a step that
takes minutes (the privacy a larger eps would buy is none)."""

RegionCounterFactory = Callable[[Region, int, Callable[[int], float], int, NoiseSource], Counter]
"""Makes A_theta from (region, r0, eps_levels: r -> eps_{|theta|,r}, first global time, scoped noise)."""


@dataclass(frozen=True, eq=False)
class HypercubeRelease:
    """What 004-alg1 releases at time t (compared field by field with numpy, not with ``==``).

    ``noisy[j]`` are the counts N_theta of the 2^j regions of depth j (``noisy[0] = [t]``),
    ``consistent[j]`` the output of 004-alg4, ``points`` Y_t (t x d) or None when the Output
    step was not sampled at this t (``sample_times``).
    """

    t: int
    depth: int
    noisy: tuple[IntArray, ...]
    consistent: tuple[IntArray, ...]
    points: FloatArray | None


class OnlineParameters:
    """What both versions of 004-alg1 share: parameters and their checks, the claim, the depth rule (u2),
    the input rule of A_theta (u6) and the Output step (u8). See the module docstring for the options."""

    anchor = "004-alg1"

    def __init__(
        self,
        epsilon: float,
        d: int,
        *,
        noise: NoiseSource | None = None,
        schedule: PrivacySchedule | None = None,
        as_printed: bool = False,
        rule: ConsistencyRule = ConsistencyRule.EQUAL_SHIFT,
        sample_times: Collection[int] | None = None,
        sparse_as_printed: bool = False,
    ) -> None:
        # Input: privacy budget eps and an infinite data sequence {x_i} in [0,1]^d
        self.epsilon = require_positive_finite("epsilon", epsilon)
        self.partition = BinaryPartition(d)
        self.d = self.partition.d
        self.schedule = PrivacySchedule(self.epsilon, self.d) if schedule is None else schedule
        if not isinstance(self.schedule, PrivacySchedule) or self.schedule.epsilon != self.epsilon \
                or self.schedule.d != self.d:
            raise DPStreamInputError("schedule", f"must be a PrivacySchedule for eps={epsilon}, d={d}", schedule)
        for name, flag in (("as_printed", as_printed), ("sparse_as_printed", sparse_as_printed)):
            if not isinstance(flag, bool):
                raise DPStreamInputError(name, "must be a bool", flag)
        if not isinstance(rule, ConsistencyRule):
            raise DPStreamInputError("rule", "must be a ConsistencyRule", rule)
        self.as_printed = as_printed
        if self.depth(1) > MAX_START_DEPTH:
            raise DPStreamInputError("epsilon", f"must be < 2^{MAX_START_DEPTH + 1 - int(as_printed)}: at t = 1 the "
                                     f"partition would have depth {self.depth(1)} > {MAX_START_DEPTH} "
                                     "(2^depth regions, each with a counter stepped at every time)", epsilon)
        self.sparse_as_printed = sparse_as_printed
        self.rule = rule
        self.sample_times = None if sample_times is None else frozenset(int(s) for s in sample_times)
        self.noise: NoiseSource = default_noise() if noise is None else noise
        # Initialization: t = 1, Omega_root = Omega, depth r <- 0 (t counts the steps taken)
        self.t = 0
        self.r = 0
        self.history: list[FloatArray] = []  # x_1, ..., x_t (available by the Input line)
        self.operations = 0  # region-counter operations (steps of A_theta) so far

    @property
    def claim(self) -> PrivacyClaim:
        source = "004-prop5.1" if self.schedule.kind is not ScheduleKind.EQ41 else "004-prop4.1"
        return PrivacyClaim.pure(
            self.epsilon, Neighbour.POINT_REPLACE, source,
            note=f"schedule {self.schedule.kind}: 2 sup_s sum_j eps_(j,s) = "
                 f"{self.schedule.total_budget_bound():.6g} <= eps")

    def depth(self, t: int) -> int:
        """The partition depth at time t (printed u2 rule when ``as_printed``)."""
        return depth_as_printed(t, self.epsilon) if self.as_printed else depth_at(t, self.epsilon)

    def _input(self, j: int, i: int, inside: bool) -> int:
        """The entry of A_theta's input stream at time i for a depth-j region (u6)."""
        if self.as_printed and i < 2**j:  # printed stream {1_{x_i in Omega_theta}}_{i = 2^{|theta|}}^t
            return 0
        return int(inside)

    def _first_time(self, j: int, t: int) -> int:
        """The first global time read by the counter of a depth-j region created at time t."""
        return t if self.schedule.r0(j) == j else 1  # r0 = 0: the counter also reads the history from i = 1

    def _output(self, t: int, r: int, m: IntArray) -> FloatArray:
        """[004-alg1 u8] m_theta points in every Omega_theta of depth r, uniform (independent of the data)."""
        parts = []
        for index in np.flatnonzero(m):
            region = Region(r, int(index))
            low, high = self.partition.box(region)
            # [004-alg1 u8] m_theta points in Omega_theta, |theta| = r, located independently of the data
            parts.append(self.noise.uniform_box(site("004-alg1 u8", t=t, theta=region.label),
                                                low.tolist(), high.tolist(), int(m[index])))
        if not parts:
            return np.zeros((0, self.d), dtype=np.float64)
        return np.concatenate(parts, axis=0)


@convention(("epsilon", "d", "noise"))
class OnlineSyntheticData(OnlineParameters):
    """004-alg1 with budget ``epsilon`` in dimension ``d``, every counter stepped at every t (line by line)."""

    def __init__(
        self,
        epsilon: float,
        d: int,
        *,
        noise: NoiseSource | None = None,
        schedule: PrivacySchedule | None = None,
        as_printed: bool = False,
        rule: ConsistencyRule = ConsistencyRule.EQUAL_SHIFT,
        sample_times: Collection[int] | None = None,
        sparse_as_printed: bool = False,
        region_counter: RegionCounterFactory | None = None,
    ) -> None:
        super().__init__(epsilon, d, noise=noise, schedule=schedule, as_printed=as_printed, rule=rule,
                         sample_times=sample_times, sparse_as_printed=sparse_as_printed)
        sparse: SparseFactory = lambda eps, T, n: SparseCounter(eps, T, noise=n, as_printed=sparse_as_printed)  # noqa: E731
        self.region_counter = region_counter  # as given (None: 004-alg3 with Algorithm 2 per level)
        self._region_counter: RegionCounterFactory = region_counter if region_counter is not None else (
            lambda region, r0, eps_levels, first, n: InhomogeneousSparseCounter(
                self.epsilon, r0, eps_levels, noise=n, first_time=first, sparse=sparse))
        self.counters: list[list[Counter]] = [[]]  # counters[j][index]: A_theta; the root has none

    def new_region_counter(self, region: Region, t: int) -> Counter:
        """[004-alg1 u4] A_theta of ``region``, created at time t (004-alg3 with r0 and eps_(|theta|, r) of the
        schedule, scope ``"004-alg1 u6 theta=<bits>"``); creating it draws nothing, the history is not replayed."""
        j = region.depth
        eps_levels: Callable[[int], float] = lambda r, j=j: self.schedule(j, r)  # type: ignore[misc]  # noqa: E731
        return self._region_counter(region, self.schedule.r0(j), eps_levels, self._first_time(j, t),
                                    scoped(self.noise, site("004-alg1 u6", theta=region.label)))

    def _new_counters(self, j: int, t: int) -> tuple[list[Counter], int]:
        """[004-alg1 u3-u4] the regions of depth j and their subroutines A_theta (created at time t),
        and the number of counter steps made to replay the history."""
        first = self._first_time(j, t)
        made: list[Counter] = []
        history = np.asarray(self.history, dtype=np.float64).reshape(-1, self.d)
        cells = self.partition.cell_indices(history, j) if first < t else np.zeros(0, dtype=np.int64)
        for index in range(2**j):
            counter = self.new_region_counter(Region(j, index), t)
            for i in range(first, t):  # replay x_first..x_{t-1}
                counter.step(self._input(j, i, bool(cells[i - 1] == index)))
            made.append(counter)
        return made, (t - first) * 2**j

    def step(self, x: object) -> HypercubeRelease:
        """Consume x_t and release Y_t (all draws first; nothing changes if any check or draw fails)."""
        point = self.partition.validate_point(x)
        t = self.t + 1  # [004-alg1 u1] while t in N;  [004-alg1 u9] t <- t + 1
        r = self.depth(t)  # [004-alg1 u2] while t >= 2^r/eps do r <- r + 1 (see module doc)
        counters = list(self.counters)
        operations = 0
        for j in range(self.r + 1, r + 1):
            # [004-alg1 u3] partition Omega_theta into Omega_theta0, Omega_theta1 for every |theta| = j - 1
            made, replayed = self._new_counters(j, t)  # [004-alg1 u4] initiate A_theta (004-alg3)
            counters.append(made)
            operations += replayed
        # [004-alg1 u6] perturbation: every A_theta, 1 <= |theta| <= r, reads 1_{x_t in Omega_theta}
        leaf = int(self.partition.cell_indices(point, r)[0])
        prepared: list[list[Staged[float]]] = [[]]
        batched = order_free(self.noise)  # secure source: one OpenDP vector call per round of the level's draws
        for j in range(1, r + 1):
            mine = leaf >> (r - j)
            stagings = [c.staging(self._input(j, t, index == mine)) for index, c in enumerate(counters[j])]
            prepared.append(run_all(stagings, batched))
        noisy = (np.array([t], dtype=np.int64),
                 *(np.array([as_count(p.release) for p in level], dtype=np.int64) for level in prepared[1:]))
        # [004-alg1 u7] consistency (004-alg4) on {N_theta}_{|theta| <= r}, n'_root = t
        consistent = tuple(consistency(noisy, rule=self.rule))
        points = None
        if self.sample_times is None or t in self.sample_times:
            points = self._output(t, r, consistent[r])
        for level in prepared:  # commit: nothing below can fail
            for p in level:
                p.commit()
        self.counters, self.r, self.t = counters, r, t
        self.operations += operations + sum(len(level) for level in prepared)
        self.history.append(point)
        return HypercubeRelease(t, r, noisy, consistent, points)

    def run(self, stream: npt.ArrayLike) -> list[HypercubeRelease]:
        """Step through the rows of ``stream`` (shape (n, d)); return the releases."""
        return [self.step(x) for x in np.asarray(stream, dtype=np.float64).reshape(-1, self.d)]


def as_count(value: float) -> int:
    """A counter's release as the integer count N_theta (the discrete noise keeps it integral)."""
    count = round(value)
    if count != value:
        raise DPStreamInputError("N_theta", "counters of 004-alg1 must release integers (discrete noise)", value)
    return int(count)
