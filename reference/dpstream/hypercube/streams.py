"""Input streams for tests and the ``hypercube-rate`` experiment (non-private randomness: data_rng).

* ``uniform``: x_t i.i.d. uniform on [0,1]^d — the worst case of the minimax lower bound the
  paper cites (004 section 1.3: "uniformly distributed data represents the worst-case
  configuration"), so the rate of 004-thm1.1 should be visible on it.
* ``clustered``: x_t i.i.d. from an equal mixture of ``k`` Gaussian clusters (standard deviation
  ``spread`` per coordinate) with centres uniform in [0.2, 0.8]^d, clipped to [0,1]^d.
"""

from __future__ import annotations

from enum import StrEnum

import numpy as np
import numpy.typing as npt

from dpstream.errors import DPStreamInputError, require_int_at_least, require_positive_finite
from dpstream.noise import data_rng

__all__ = ["StreamKind", "make_stream"]

FloatArray = npt.NDArray[np.float64]


class StreamKind(StrEnum):
    UNIFORM = "uniform"
    CLUSTERED = "clustered"


def make_stream(kind: StreamKind | str, n: int, d: int, seed: int, *, k: int = 3, spread: float = 0.05) -> FloatArray:
    """``n`` points of [0,1]^d (shape (n, d)) of the given kind, reproducible from ``seed``."""
    try:
        kind = StreamKind(kind)
    except ValueError as exc:
        raise DPStreamInputError("kind", f"must be one of {[s.value for s in StreamKind]}", kind) from exc
    n = require_int_at_least("n", n, 0)
    d = require_int_at_least("d", d, 1)
    rng = data_rng(seed)
    if kind is StreamKind.UNIFORM:
        return np.asarray(rng.random((n, d)), dtype=np.float64)
    k = require_int_at_least("k", k, 1)
    spread = require_positive_finite("spread", spread)
    centres = 0.2 + 0.6 * rng.random((k, d))
    labels = rng.integers(0, k, size=n)
    points = centres[labels] + spread * rng.standard_normal((n, d))
    return np.asarray(np.clip(points, 0.0, 1.0), dtype=np.float64)
