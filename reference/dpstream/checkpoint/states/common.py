"""Fields and checks shared by the documented states of several algorithms."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dpstream.checkpoint.kinds import BOOL, COUNT, POSITIVE, Int, Kind, ListOf, Nullable
from dpstream.checkpoint.spec import Field, require

__all__ = ["AS_PRINTED", "EPSILON", "HORIZON", "T_STEPS", "check_steps", "releases", "same_float"]

T_STEPS = Field("t", COUNT, "time steps so far (the next input is f(t+1))")
EPSILON = Field("epsilon", POSITIVE, "privacy budget eps")
HORIZON = Field("T", Nullable(Int(1)), "time horizon T (null: unbounded)")
AS_PRINTED = Field("as_printed", BOOL, "the printed variant (docs/errata.md) instead of the corrected default")


def releases(kind: Kind, what: str = "g(1), ..., g(t)") -> Field:
    """The releases the algorithm keeps (``releases``)."""
    return Field("releases", ListOf(kind), f"the releases so far, {what}")


def check_steps(t: int, horizon: int | None, kept: Sequence[Any] | None) -> None:
    """t within the horizon, one kept release per step."""
    require(horizon is None or t <= horizon, f"t = {t} is past the horizon T = {horizon}")
    require(kept is None or len(kept) == t, f"holds {len(kept) if kept is not None else 0} releases for t = {t}")


def same_float(a: float, b: float) -> bool:
    """Bit for bit (a restored release must be the value the state computes)."""
    return isinstance(a, float) and isinstance(b, float) and a.hex() == b.hex()
