"""JSON forms of the longitudinal synthesizers' inputs and releases (the protocol's INPUT and RELEASE for 002-*).

* INPUT of both boxes: the column D^t = (x_1^t, ..., x_n^t), a JSON array of n reports 0 or 1 (n is fixed by the
  first column; the synthesizer checks the values and the length);
* RELEASE of 002-alg1: ``null`` for t < k (nothing is released before the first window), else
  ``{"p": [p_s^t for s = 0..2^k-1], "columns": [...]}`` where ``columns`` holds the new synthetic columns, each a
  list of m = n* reports (k columns at t = k, one later): the transposed block of the new synthetic data;
* RELEASE of 002-alg2: ``{"column": [x^_1^t, ..., x^_n^t], "S_hat": [S^_0^t, ..., S^_t^t]}``, the synthetic column
  and the monotonized counts of synthetic records of weight >= b (S^_0^t = n).

Features for the statistical checks (a fixed number of floats per run): :func:`window_features` (p^t and the
number of ones of every synthetic column) and :func:`cumulative_features` (S^^t and the ones of the column).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from dpstream.catalog.codecs import Features
from dpstream.errors import DPStreamInputError
from dpstream.longitudinal.cumulative import CumulativeRelease
from dpstream.longitudinal.fixed_window import WindowRelease

__all__ = ["cumulative_features", "decode_column", "encode_cumulative", "encode_window", "window_features"]


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


def window_features(T: int, k: int) -> Features:
    """Features of a run of 002-alg1 over T steps with window k: p_s^t for every pattern s and t = k..T, then the
    number of ones of each of the T synthetic columns (k released at t = k, one at every later step)."""
    names = tuple(f"t={t} p_{s}" for t in range(k, T + 1) for s in range(2**k))
    names += tuple(f"ones in synthetic column {c}" for c in range(1, T + 1))

    def of(releases: Sequence[Any]) -> list[float]:
        patterns: list[float] = []
        ones: list[float] = []
        for t, release in enumerate(releases, start=1):
            if t < k:
                continue
            if len(release["p"]) != 2**k or len(release["columns"]) != (k if t == k else 1):
                raise ValueError(f"release {t}: 2^k = {2**k} counts p and {k if t == k else 1} new column(s)")
            patterns += [float(v) for v in release["p"]]
            ones += [float(sum(column)) for column in release["columns"]]
        return patterns + ones

    return Features(names, of)


def cumulative_features(T: int) -> Features:
    """Features of a run of 002-alg2 over T steps: S^_b^t for b = 0..t at every t, then the number of ones of each
    synthetic column."""
    names = tuple(f"t={t} S^_{b}" for t in range(1, T + 1) for b in range(t + 1))
    names += tuple(f"ones in synthetic column {t}" for t in range(1, T + 1))

    def of(releases: Sequence[Any]) -> list[float]:
        counts: list[float] = []
        for t, release in enumerate(releases, start=1):
            if len(release["S_hat"]) != t + 1:
                raise ValueError(f"release {t}: S_hat holds t + 1 = {t + 1} counts")
            counts += [float(v) for v in release["S_hat"]]
        return counts + [float(sum(release["column"])) for release in releases]

    return Features(names, of)
