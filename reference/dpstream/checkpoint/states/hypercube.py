"""Documented state of the online synthetic data algorithm in the hypercube (paper 004, docs/hypercube.md):
004-alg1, its region counters A_theta (004-alg3 states) made by the algorithm itself."""

from __future__ import annotations

from typing import Any

import numpy as np

from dpstream.checkpoint.kinds import BOOL, COUNT, POSITIVE, Array, EnumOf, Function, Int, Kind, ListOf, Nullable, SetOf
from dpstream.checkpoint.kinds import fail as refuse
from dpstream.checkpoint.spec import Field, StateSpec, require
from dpstream.checkpoint.states.common import AS_PRINTED, T_STEPS
from dpstream.hypercube.consistency import ConsistencyRule
from dpstream.hypercube.online import OnlineSyntheticData
from dpstream.hypercube.partition import Region
from dpstream.hypercube.schedule import PrivacySchedule, ScheduleKind

__all__ = ["SPECS"]

FAMILY = "hypercube"


def created_at(o: OnlineSyntheticData, j: int) -> int:
    """The time the regions of depth j were made: the first t with depth(t) >= j (depth is non-decreasing)."""
    low, high = 1, max(o.t, 1)
    while low < high:
        mid = (low + high) // 2
        if o.depth(mid) >= j:
            high = mid
        else:
            low = mid + 1
    return low


class _RegionCounters(Kind):
    """A_theta for every region theta of depth 1..r: one list of 2^j counter states per depth j."""

    doc = "one list per depth j = 1..r of the 2^j region counters' states (004-alg3)"

    def encode(self, value: Any, w: Any, path: str) -> Any:
        if not isinstance(value, list) or not value or value[0] != []:
            raise refuse(path, "expected [[], depth-1 counters, ...]", None)
        return [[w.state(c, f"{path}[{j}][{i}]") for i, c in enumerate(level)]
                for j, level in enumerate(value) if j >= 1]

    def decode(self, raw: Any, r: Any, path: str) -> Any:
        o = r.owner
        if not isinstance(raw, list) or len(raw) != o.r:
            raise refuse(path, f"must hold one list per depth 1..r = {o.r}", None)
        out: list[list[Any]] = [[]]
        for j, level in enumerate(raw, start=1):
            if not isinstance(level, list) or len(level) != 2**j:
                raise refuse(f"{path}[{j - 1}]", f"depth {j} has 2^{j} regions", None)
            t_j = created_at(o, j)
            out.append([r.restore(doc, o.new_region_counter(Region(j, i), t_j), f"{path}[{j - 1}][{i}]")
                        for i, doc in enumerate(level)])
        return out


def _build(params: dict[str, Any], noise: Any, reader: Any, doc: dict[str, Any]) -> OnlineSyntheticData:
    schedule = PrivacySchedule(params["epsilon"], params["d"], params["schedule"])
    return OnlineSyntheticData(params["epsilon"], params["d"], noise=noise, schedule=schedule,
                               as_printed=params["as_printed"], rule=params["rule"],
                               sample_times=params["sample_times"], sparse_as_printed=params["sparse_as_printed"],
                               region_counter=params["region_counter"])


def _check(o: OnlineSyntheticData) -> None:
    """r is the depth at time t; the history holds x_1..x_t in [0, 1]^d; one list of 2^j region counters per depth j
    <= r, each having read the inputs from its first time on; their parameters are the owner's."""
    require(o.r == (o.depth(o.t) if o.t else 0), "r is the depth of the partition at time t (u2)")
    require(len(o.history) == o.t, "the history holds x_1, ..., x_t")
    require(all(p.shape == (o.d,) and bool(np.all((p >= 0.0) & (p <= 1.0))) for p in o.history),
            "every x_i is a point of [0, 1]^d")
    require(len(o.counters) == o.r + 1, "one list of region counters per depth 0..r")
    for j in range(1, o.r + 1):
        first = o._first_time(j, created_at(o, j))
        require(all(c.t == o.t - first + 1 for c in o.counters[j]), f"the depth-{j} counters have read the inputs "
                                                                     f"from time {first} on")


ONLINE = StateSpec(
    OnlineSyntheticData, FAMILY, "004-alg1",
    "Online synthetic data in [0, 1]^d: a region counter A_theta (004-alg3) per region, consistency (004-alg4), "
    "t uniform points per step.",
    params=(
        Field("epsilon", POSITIVE, "privacy budget eps"),
        Field("d", Int(1), "dimension d"),
        Field("schedule", EnumOf(ScheduleKind), "the budgets eps_(j, r) of the region counters: (4.1) or (5.1)",
              attr="schedule.kind"),
        AS_PRINTED,
        Field("rule", EnumOf(ConsistencyRule), "the consistency rule of 004-alg4"),
        Field("sample_times", Nullable(SetOf(Int(1))), "the times whose Output step is sampled (null: every t)"),
        Field("sparse_as_printed", BOOL, "the printed 004-alg2 inside the region counters"),
        Field("region_counter", Function(nullable=True), "A_theta's maker (null: 004-alg3 with 004-alg2 per level)"),
    ),
    variables=(
        T_STEPS,
        Field("r", COUNT, "the depth r of the partition (u2)"),
        Field("history", ListOf(Array("float64", 1)), "x_1, ..., x_t (a region made later reads them, u6)"),
        Field("operations", COUNT, "region-counter steps so far (the work log)"),
        Field("counters", _RegionCounters(), "A_theta of every region of depth 1..r, made at the time its depth "
                                             "appeared (scope \"004-alg1 u6 theta=<bits>\")"),
    ),
    build=_build,
    check=_check,
)

SPECS = (ONLINE,)
