"""JSON forms of 004-alg1's and 004-alg4's inputs and releases (the conformance protocol's INPUT and RELEASE).

* 004-alg1: INPUT the point x_t, a JSON array of d numbers in [0, 1]; RELEASE
  ``{"t", "depth", "noisy", "consistent", "points"}``: ``noisy[j]`` the counts n'_theta of the 2^j regions of depth
  j (``noisy[0] = [t]``, the root count is public), ``consistent[j]`` the output of 004-alg4, ``points`` Y_t (t rows
  of d numbers, region by region in the order of theta);
* 004-alg4: INPUT the integer counts ``[[n'_root], [n'_0, n'_1], ...]`` (level j holds the 2^j regions of depth j,
  index = theta read in binary), RELEASE the consistent counts m_theta in the same shape.

Regions are indexed as in :mod:`dpstream.hypercube.partition` (theta in binary, first split first).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from dpstream.errors import DPStreamInputError
from dpstream.hypercube.online import HypercubeRelease

__all__ = ["decode_counts", "decode_point", "encode_counts", "encode_release"]


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def decode_point(value: Any, d: int) -> list[float]:
    """x_t: a JSON array of d numbers (the partition checks that it lies in [0, 1]^d)."""
    if not isinstance(value, list) or len(value) != d or not all(_is_number(c) for c in value):
        raise DPStreamInputError("x_t", f"must be a JSON array of d = {d} numbers", value)
    return [float(c) for c in value]


def decode_counts(value: Any) -> list[list[int | float]]:
    """The noisy counts of 004-alg4: a JSON array of levels, each an array of numbers (004-alg4 checks shapes and
    integrality)."""
    if not isinstance(value, list) or not all(
            isinstance(level, list) and all(_is_number(n) for n in level) for level in value):
        raise DPStreamInputError("noisy", "must be a JSON array of levels, each a JSON array of integer counts", value)
    return [list(level) for level in value]


def encode_counts(levels: Sequence[Any]) -> list[list[int]]:
    return [[int(v) for v in np.asarray(level).tolist()] for level in levels]


def encode_release(release: HypercubeRelease) -> dict[str, Any]:
    return {"t": release.t, "depth": release.depth, "noisy": encode_counts(release.noisy),
            "consistent": encode_counts(release.consistent),
            "points": None if release.points is None else release.points.tolist()}
