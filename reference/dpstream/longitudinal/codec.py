"""JSON forms of the longitudinal synthesizers' inputs and releases (the protocol's INPUT and RELEASE for 002-*).

* INPUT of both boxes: the column D^t = (x_1^t, ..., x_n^t), a JSON array of n reports 0 or 1 (n is fixed by the
  first column; the synthesizer checks the values and the length);
* RELEASE of 002-alg1: ``null`` for t < k (nothing is released before the first window), else
  ``{"p": [p_s^t for s = 0..2^k-1], "columns": [...]}`` where ``columns`` holds the new synthetic columns, each a
  list of m = n* reports (k columns at t = k, one later): the transposed block of the new synthetic data;
* RELEASE of 002-alg2: ``{"column": [x^_1^t, ..., x^_n^t], "S_hat": [S^_0^t, ..., S^_t^t]}``, the synthetic column
  and the monotonized counts of synthetic records of weight >= b (S^_0^t = n).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dpstream.errors import DPStreamInputError
from dpstream.longitudinal.cumulative import CumulativeRelease
from dpstream.longitudinal.fixed_window import WindowRelease

__all__ = ["decode_column", "encode_cumulative", "encode_window"]


def decode_column(value: Any, params: Any = None) -> list[int | float]:
    """D^t: a JSON array of numbers (the synthesizer checks that they are 0 or 1 and that there are n)."""
    if not isinstance(value, list) or not all(isinstance(x, int | float) and not isinstance(x, bool) for x in value):
        raise DPStreamInputError("D^t", "must be a JSON array of reports (numbers 0 or 1)", value)
    return list(value)


def encode_window(release: WindowRelease | None) -> dict[str, Any] | None:
    if release is None:
        return None
    return {"p": [int(v) for v in release.p], "columns": np.asarray(release.columns).T.tolist()}


def encode_cumulative(release: CumulativeRelease) -> dict[str, Any]:
    return {"column": [int(v) for v in release.column], "S_hat": [int(v) for v in release.S_hat]}
