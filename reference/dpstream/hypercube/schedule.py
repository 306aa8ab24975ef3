"""Privacy schedules eps_{j,r} of 004-alg1: the budget of a depth-j region's counter during level r.

* (4.1), d >= 2, starting level r0 = j (004-eq4.1):
  eps_{j,r} = C1 eps 2^{(j-r)(1-1/d)/2}, C1 = (1 - 2^{-(1-1/d)/2}) / 2.
* (5.1), d = 1, starting level r0 = 0 (004-prop5.1): eps_{j,r} = (3/pi^2) eps / (j+1)^2.
* ``EQ51_FULL``: (3/pi^2) eps / j^2, the d = 1 schedule whose two-path sum is exactly eps
  (not in the paper; 004-prop5.1's printed sum equals (1 - 6/pi^2) eps, see
  docs/errata/hypercube.md E-hypercube-7). Offered for comparison, never a default.

A point arriving at level s (t_s <= t < t_{s+1}) enters the counter of every region on its
root-to-leaf path whose starting level r0 <= s, each at eps_{j,s} (004-lem3.3); the
*path budget* is the sum of these, and 004-prop4.1 needs sup_s path_budget(s) <= eps/2
(two paths change when one point is replaced). :meth:`PrivacySchedule.path_budget` computes
it exactly; proofs/proof_hypercube_privacy.py checks it symbolically.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import StrEnum

from dpstream.arithmetic import kernel
from dpstream.errors import DPStreamInputError, require_int_at_least, require_positive_finite

__all__ = ["PrivacySchedule", "ScheduleKind"]


class ScheduleKind(StrEnum):
    EQ41 = "eq4.1"
    EQ51 = "eq5.1"
    EQ51_FULL = "eq5.1-full"


@dataclass(frozen=True)
class PrivacySchedule:
    """eps_{j,r} for the regions' counters of 004-alg1; ``kind`` None picks (4.1) for d >= 2, (5.1) for d = 1."""

    epsilon: float
    d: int
    kind: ScheduleKind | None = None

    def __post_init__(self) -> None:
        require_positive_finite("epsilon", self.epsilon)
        require_int_at_least("d", self.d, 1)
        if self.kind is None:
            object.__setattr__(self, "kind", ScheduleKind.EQ41 if self.d >= 2 else ScheduleKind.EQ51)
        elif not isinstance(self.kind, ScheduleKind):
            raise DPStreamInputError("kind", "must be a ScheduleKind", self.kind)
        if self.kind is ScheduleKind.EQ41 and self.d < 2:
            raise DPStreamInputError("kind", "(4.1) needs d >= 2 (C1 = 0 when d = 1)", self.kind)

    @property
    def alpha(self) -> float:
        """alpha = 2^{(1-1/d)/2} of (4.2)."""
        return kernel().power(2.0, (1.0 - 1.0 / self.d) / 2.0)

    @property
    def C1(self) -> float:
        """C1 = (1 - 2^{-(1-1/d)/2}) / 2 of (4.1)."""
        return (1.0 - kernel().power(2.0, -(1.0 - 1.0 / self.d) / 2.0)) / 2.0

    def r0(self, j: int) -> int:
        """Starting level of a depth-j region's counter: j for (4.1), 0 for (5.1) (004-alg1 u4)."""
        j = require_int_at_least("j", j, 1)
        return j if self.kind is ScheduleKind.EQ41 else 0

    def __call__(self, j: int, r: int) -> float:
        """eps_{j,r} for a depth-j region (j >= 1) during level r >= r0(j)."""
        j = require_int_at_least("j", j, 1)
        r = require_int_at_least("r", r, self.r0(j))
        eps = self.epsilon
        if self.kind is ScheduleKind.EQ41:
            return self.C1 * eps * kernel().power(2.0, (j - r) * (1.0 - 1.0 / self.d) / 2.0)  # (4.1)
        if self.kind is ScheduleKind.EQ51:
            return 3.0 / math.pi**2 * eps / (j + 1) ** 2  # (5.1)
        return 3.0 / math.pi**2 * eps / j**2

    def path_budget(self, s: int) -> float:
        """Sum of eps_{j,s} over the depths j >= 1 whose counter sees a point arriving at level s.

        (4.1): j = 1..s (regions deeper than s are created later and ignore the point);
        (5.1): every j >= 1, in closed form eps (1/2 - 3/pi^2); full variant: eps/2.
        """
        s = require_int_at_least("s", s, 0)
        if self.kind is ScheduleKind.EQ41:
            return math.fsum(self(j, s) for j in range(1, s + 1))
        if self.kind is ScheduleKind.EQ51:
            return self.epsilon * (0.5 - 3.0 / math.pi**2)
        return self.epsilon / 2.0

    def total_budget_bound(self) -> float:
        """2 sup_s path_budget(s): the eps the proof of 004-prop4.1 / 004-prop5.1 gives (<= eps)."""
        if self.kind is ScheduleKind.EQ41:
            return 2.0 * self.C1 * self.epsilon / (1.0 - 1.0 / self.alpha)  # the limit s -> inf of (4.2)
        return 2.0 * self.path_budget(0)
