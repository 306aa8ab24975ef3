"""Initialization time t0 (001-sec5.2).

For t0 in N the algorithm runs on the shifted stream f^(., t) = f(., t + t0 - 1): its first
step sees f(., t0) all at once (nabla f^(., 1) = f(., t0), since f^(., 0) = 0), then the
batches t0 + 1, t0 + 2, ... one by one. :func:`initialize` merges the first t0 batches.

For the concentric-circles data t0 in [0, 1] is instead the share of all events used for the
initialization (section 5.1): :func:`initialize_by_ratio` puts the first floor(ratio * n)
events in batch 1 and cuts the rest into batches of ``batch_size`` (the last one shorter).
"""

from __future__ import annotations

from collections.abc import Sequence

from dpstream.errors import DPStreamInputError, require_finite_real, require_int_at_least
from dpstream.phdstream.stream import PointEvents

__all__ = ["initialize", "initialize_by_ratio"]


def initialize(batches: Sequence[PointEvents], t0: int) -> list[PointEvents]:
    """The batches of f^(., t) = f(., t + t0 - 1): batches 1..t0 merged into one, then the rest (t0 >= 1)."""
    t0 = require_int_at_least("t0", t0, 1)
    if t0 > len(batches):
        raise DPStreamInputError("t0", f"must be <= the number of batches ({len(batches)})", t0)
    if not batches:
        return []
    d = batches[0].points.shape[1]
    return [PointEvents.concatenate(batches[:t0], d), *batches[t0:]]


def initialize_by_ratio(events: PointEvents, ratio: float, batch_size: int) -> list[PointEvents]:
    """Batch 1 = the first floor(ratio * n) events (if any), then batches of ``batch_size`` events."""
    ratio = require_finite_real("t0", ratio)
    if not 0.0 <= ratio <= 1.0:
        raise DPStreamInputError("t0", "the initialization ratio must lie in [0, 1]", ratio)
    batch_size = require_int_at_least("batch_size", batch_size, 1)
    n = len(events)
    n0 = int(ratio * n)
    out = []
    if n0:
        out.append(PointEvents(events.points[:n0], events.moves[:n0]))
    for start in range(n0, n, batch_size):
        out.append(PointEvents(events.points[start:start + batch_size], events.moves[start:start + batch_size]))
    return out
