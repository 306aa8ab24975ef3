"""Seed 004 (He, Vershynin, Zhu): online DP synthetic data in [0,1]^d.

* :mod:`~dpstream.hypercube.partition` — the growing binary partition and its level times (004-sec3.1);
* :mod:`~dpstream.hypercube.schedule` — the privacy schedules eps_{j,r} (004-eq4.1, 004-prop5.1);
* :mod:`~dpstream.hypercube.consistency` — 004-alg4;
* :mod:`~dpstream.hypercube.online` — 004-alg1, :class:`OnlineSyntheticData`;
* :mod:`~dpstream.hypercube.efficient` — 004-alg1 with lazy counters, :class:`EfficientOnlineSyntheticData`;
* :mod:`~dpstream.hypercube.wasserstein` — exact W_1 under l_inf (004-sec2.3) and upper bounds;
* :mod:`~dpstream.audit.hypercube.loss` — exact privacy loss of 004-alg2/3/1 on small streams;
* :mod:`~dpstream.hypercube.streams` — uniform and clustered test streams.

The counters 004-alg2 and 004-alg3 live in :mod:`dpstream.counters.sparse` (their lazy forms in
:mod:`dpstream.counters.sparse_lazy` and :mod:`dpstream.counters.sparse_geometric`).
"""

from dpstream.hypercube.consistency import ConsistencyRule, consistency
from dpstream.hypercube.online import HypercubeRelease, OnlineSyntheticData
from dpstream.hypercube.partition import BinaryPartition, Region, depth_at, level_time
from dpstream.hypercube.schedule import PrivacySchedule, ScheduleKind
from dpstream.hypercube.streams import StreamKind, make_stream
from dpstream.hypercube.wasserstein import wasserstein1

__all__ = [
    "BinaryPartition",
    "ConsistencyRule",
    "HypercubeRelease",
    "OnlineSyntheticData",
    "PrivacySchedule",
    "Region",
    "ScheduleKind",
    "StreamKind",
    "consistency",
    "depth_at",
    "level_time",
    "make_stream",
    "wasserstein1",
]
