"""Compute-efficient online synthetic data (004-alg1): lazy region counters, releases only when sampled.

:class:`~dpstream.hypercube.online.OnlineSyntheticData` steps the counter A_theta of every region at
every time and makes the counts consistent at every time. Here a region's counter
(:class:`~dpstream.counters.sparse_lazy.LazyInhomogeneousCounter`, 004-alg3 with the same state) is
touched only

* when x_t falls in the region ([004-alg1 u6]: the r regions on x_t's root-to-leaf path; every other
  region reads 1{x_t in Omega_theta} = 0, which is not fed at once), and
* when a release needs its value ([004-alg1 u7]-[004-alg1 u8] at a time of ``sample_times``, or every
  time when ``sample_times`` is None), or :meth:`EfficientOnlineSyntheticData.catch_up` is called:

then the zeros since its last step are fed in one batch. Counters are created at the same times with
the same r0, budgets, first times and sites ([004-alg1 u3]-[004-alg1 u4]); for r0 = 0 (d = 1) the
history is replayed as its inputs 1 only. The Consistency (004-alg4) and Output steps are the
line-by-line ones (:func:`~dpstream.hypercube.consistency.consistency`,
:meth:`~dpstream.hypercube.online.OnlineParameters._output`).

Two forms of 004-alg2's threshold tests (``sparse_form``):

* ``SparseForm.PRINTED`` (default): the printed tests, one Lap_Z draw per step of every region's
  current 004-alg2 instance, made when the zeros are caught up. Fed the same points and the same
  tape, this class releases what OnlineSyntheticData releases at every sampled time, and after
  :meth:`catch_up` it has used exactly the tape's sites (tests/hypercube/test_efficient.py records
  through either and replays through the other). The draws cannot be fewer: the printed box draws a
  test for every region at every step, so the work stays Theta(eps t^2) draws (docs/errata/hypercube.md
  E-hypercube-15); what is saved is the per-step bookkeeping, the consistency and output at
  unsampled times, and the per-step release lists.
* ``SparseForm.GEOMETRIC``: the tests as first-failure times
  (:class:`~dpstream.counters.sparse_geometric.GeometricSparseCounter`, equal in law to the printed
  tests up to floating-point rounding). Under one tape it equals OnlineSyntheticData with
  ``region_counter=geometric_region_counter(eps)`` (the line-by-line 004-alg1 with that counter).
  Work: O(r) per point plus O(1) per region and level plus O(eps t) per sampled release, so
  O(t log(eps t) + eps t) operations for t steps and a bounded number of releases (counted by
  :attr:`operations`; tests/hypercube/test_efficient.py::test_operation_counts). This is the form
  that reaches t = 2^17 (``dpstream reproduce hypercube-rate``).

No region state can be freed for good: every A_theta runs for ever and adds Lap_Z(2/eps_r) at every
level end. What is freed is each level's 004-alg2 state at the level end, the per-step releases,
and the history when no counter replays it (r0 = |theta|, d >= 2).

Proof note: proofs/proof_hypercube_efficient.py (claim A: lazy = line by line under one tape; claim B: the
first-failure form has the printed law).

Steps are not atomic against failing *draws* (a tape that does not match): the object then refuses
further steps. Bad points raise DPStreamInputError before any draw or state change, as in the
line-by-line version.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from enum import StrEnum

import numpy as np
import numpy.typing as npt

from dpstream.convention import convention
from dpstream.counters.base import Counter
from dpstream.counters.sparse import InhomogeneousSparseCounter, SparseCounter, SparseFactory
from dpstream.counters.sparse_geometric import GeometricSparseCounter
from dpstream.counters.sparse_lazy import LazyInhomogeneousCounter
from dpstream.errors import DPStreamInputError
from dpstream.hypercube.consistency import ConsistencyRule, consistency
from dpstream.hypercube.online import HypercubeRelease, OnlineParameters, RegionCounterFactory, as_count
from dpstream.hypercube.partition import Region
from dpstream.hypercube.schedule import PrivacySchedule
from dpstream.noise import NoiseSource, scoped, site

__all__ = ["EfficientOnlineSyntheticData", "SparseForm", "geometric_region_counter"]

IntArray = npt.NDArray[np.int64]


class SparseForm(StrEnum):
    """How the threshold tests of 004-alg2 are drawn (see the module docstring)."""

    PRINTED = "printed"
    GEOMETRIC = "geometric"


def geometric_region_counter(epsilon: float) -> RegionCounterFactory:
    """A_theta for the line-by-line OnlineSyntheticData with 004-alg2 in the first-failure form."""

    def make(region: Region, r0: int, eps_levels: Callable[[int], float], first: int, noise: NoiseSource) -> Counter:
        return InhomogeneousSparseCounter(epsilon, r0, eps_levels, noise=noise, first_time=first,
                                          sparse=lambda eps, T, n: GeometricSparseCounter(eps, T, noise=n))

    return make


@convention(("epsilon", "d", "noise"))
class EfficientOnlineSyntheticData(OnlineParameters):
    """004-alg1 with lazy region counters; ``step`` returns the release at sampled times and None otherwise."""

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
        sparse_form: SparseForm = SparseForm.PRINTED,
    ) -> None:
        super().__init__(epsilon, d, noise=noise, schedule=schedule, as_printed=as_printed, rule=rule,
                         sample_times=sample_times, sparse_as_printed=sparse_as_printed)
        if not isinstance(sparse_form, SparseForm):
            raise DPStreamInputError("sparse_form", "must be a SparseForm", sparse_form)
        if sparse_form is SparseForm.GEOMETRIC and sparse_as_printed:
            raise DPStreamInputError("sparse_as_printed", "the first-failure form has the default reading only",
                                     sparse_as_printed)
        self.sparse_form = sparse_form
        self._sparse: SparseFactory = (
            (lambda eps, T, n: GeometricSparseCounter(eps, T, noise=n)) if sparse_form is SparseForm.GEOMETRIC
            else (lambda eps, T, n: SparseCounter(eps, T, noise=n, as_printed=sparse_as_printed)))
        self.regions: list[list[LazyInhomogeneousCounter]] = [[]]  # regions[j][index]: A_theta
        # the history is kept only when a counter will replay it (r0 = 0)
        self._keep_history = self.schedule.r0(1) == 0
        self._broken = False

    def _new_regions(self, j: int, t: int) -> list[LazyInhomogeneousCounter]:
        """The counters A_theta of the 2^j regions of depth j, created at time t (mirrors [004-alg1 u3-u4])."""
        r0, first = self.schedule.r0(j), self._first_time(j, t)
        eps_levels: Callable[[int], float] = lambda r, j=j: self.schedule(j, r)  # type: ignore[misc]  # noqa: E731
        made = [LazyInhomogeneousCounter(self.epsilon, r0, eps_levels,
                                         noise=scoped(self.noise, site("004-alg1 u6", theta=Region(j, index).label)),
                                         first_time=first, sparse=self._sparse)
                for index in range(2**j)]
        if first < t:  # r0 = 0: replay x_first..x_{t-1}; only the inputs 1 are fed, the zeros lazily
            history = np.asarray(self.history, dtype=np.float64).reshape(-1, self.d)
            cells = self.partition.cell_indices(history, j)
            for i in range(first, t):
                if self._input(j, i, True):
                    counter = made[int(cells[i - 1])]
                    self.operations += counter.advance(i - 1) + counter.step(1)
        return made

    def step(self, x: object) -> HypercubeRelease | None:
        """Consume x_t; return Y_t (with the counts) if t is sampled, else None."""
        point = self.partition.validate_point(x)
        if self._broken:
            raise RuntimeError("a draw failed in an earlier step; the counters are part-way (start a new run)")
        t = self.t + 1  # mirrors [004-alg1 u1], [004-alg1 u9]
        r = self.depth(t)  # mirrors [004-alg1 u2]
        self._broken = True  # until the step completes
        for j in range(self.r + 1, r + 1):  # mirrors [004-alg1 u3]-[004-alg1 u4]
            self.regions.append(self._new_regions(j, t))
        # mirrors [004-alg1 u6]: only the regions containing x_t read a 1; the others' zeros are fed lazily
        leaf = self.partition.cell_index(point, r)
        for j in range(1, r + 1):
            if self._input(j, t, True):
                counter = self.regions[j][leaf >> (r - j)]
                self.operations += counter.advance(t - 1) + counter.step(1)
        self.t, self.r = t, r
        if self._keep_history:
            self.history.append(point)
        release = self._release() if self.sample_times is None or t in self.sample_times else None
        self._broken = False
        return release

    def catch_up(self) -> None:
        """Feed every counter its zeros up to the current time (all draws a line-by-line run has made).

        Counts one operation per region visited plus the counters' own work."""
        for level in self.regions[1:]:
            for counter in level:
                self.operations += 1 + counter.advance(self.t)

    def noisy_counts(self) -> tuple[IntArray, ...]:
        """N_theta^(t) of every region of depth 0..r at the current time (catches every counter up)."""
        self.catch_up()
        return (np.array([self.t], dtype=np.int64),
                *(np.array([as_count(c.value) for c in level], dtype=np.int64) for level in self.regions[1:]))

    def _release(self) -> HypercubeRelease:
        t, r = self.t, self.r
        noisy = self.noisy_counts()
        consistent = tuple(consistency(noisy, rule=self.rule))  # mirrors [004-alg1 u7]
        points = self._output(t, r, consistent[r])  # mirrors [004-alg1 u8]
        return HypercubeRelease(t, r, noisy, consistent, points)

    def run(self, stream: npt.ArrayLike) -> list[HypercubeRelease]:
        """Step through the rows of ``stream`` (shape (n, d)); return the sampled releases."""
        out = []
        for x in np.asarray(stream, dtype=np.float64).reshape(-1, self.d):
            release = self.step(x)
            if release is not None:
                out.append(release)
        return out
