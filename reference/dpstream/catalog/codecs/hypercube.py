"""JSON forms of 004-alg1's and 004-alg4's inputs and releases (the conformance protocol's INPUT and RELEASE).

* 004-alg1: INPUT the point x_t, a JSON array of d numbers in [0, 1]; RELEASE
  ``{"t", "depth", "noisy", "consistent", "points"}``: ``noisy[j]`` the counts n'_theta of the 2^j regions of depth
  j (``noisy[0] = [t]``, the root count is public), ``consistent[j]`` the output of 004-alg4, ``points`` Y_t (t rows
  of d numbers, region by region in the order of theta);
* 004-alg4: INPUT the integer counts ``[[n'_root], [n'_0, n'_1], ...]`` (level j holds the 2^j regions of depth j,
  index = theta read in binary), RELEASE the consistent counts m_theta in the same shape.

Regions are indexed as in :mod:`dpstream.hypercube.partition` (theta in binary, first split first).

Features for the statistical checks: :func:`online_features` (the noisy counts and the synthetic points per region,
at the depth the reference releases at each t).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from dpstream.catalog.codecs import Features, is_json_number
from dpstream.errors import DPStreamInputError
from dpstream.hypercube.online import HypercubeRelease
from dpstream.hypercube.partition import BinaryPartition, depth_at

__all__ = ["decode_counts", "decode_point", "encode_counts", "encode_release", "online_features"]


def decode_point(value: Any, d: int) -> list[float]:
    """x_t: a JSON array of d numbers (the partition checks that it lies in [0, 1]^d)."""
    if not isinstance(value, list) or len(value) != d or not all(is_json_number(c) for c in value):
        raise DPStreamInputError("x_t", f"must be a JSON array of d = {d} numbers", value)
    return [float(c) for c in value]


def decode_counts(value: Any) -> list[list[int | float]]:
    """The noisy counts of 004-alg4: a JSON array of levels, each an array of numbers (004-alg4 checks shapes and
    integrality)."""
    if not isinstance(value, list) or not all(
            isinstance(level, list) and all(is_json_number(n) for n in level) for level in value):
        raise DPStreamInputError("noisy", "must be a JSON array of levels, each a JSON array of integer counts", value)
    return [list(level) for level in value]


def encode_counts(levels: Sequence[Any]) -> list[list[int]]:
    return [[int(v) for v in np.asarray(level).tolist()] for level in levels]


def encode_release(release: HypercubeRelease) -> dict[str, Any]:
    return {"t": release.t, "depth": release.depth, "noisy": encode_counts(release.noisy),
            "consistent": encode_counts(release.consistent),
            "points": None if release.points is None else release.points.tolist()}


def online_features(epsilon: float, d: int, T: int) -> Features:
    """Features of a run of 004-alg1 over T steps: at every t, with r = the depth of time t (``depth_at``), the noisy
    counts n'_theta of every region of depth 1..r (depth 0 is t, public), then the number of points of Y_t in every
    region of depth r (0 where the step releases no points)."""
    partition = BinaryPartition(d)
    depths = [depth_at(t, epsilon) for t in range(1, T + 1)]
    names: list[str] = []
    for t, r in enumerate(depths, start=1):
        names += [f"t={t} n'({i:0{j}b})" for j in range(1, r + 1) for i in range(2**j)]
        names += [f"t={t} points in ({i:0{r}b})" if r else f"t={t} points" for i in range(2**r)]

    def of(releases: Sequence[Any]) -> list[float]:
        out: list[float] = []
        for release, r in zip(releases, depths, strict=True):
            noisy = release["noisy"]
            for j in range(1, r + 1):
                if len(noisy[j]) != 2**j:
                    raise ValueError(f"noisy[{j}] holds the 2^{j} counts of depth {j}")
                out += [float(v) for v in noisy[j]]
            points = release["points"]
            if points is None or len(points) == 0:
                out += [0.0] * 2**r
            else:
                rows = np.asarray(points, dtype=np.float64).reshape(-1, d)
                if not np.all((rows >= 0.0) & (rows <= 1.0)):
                    raise ValueError(f"synthetic points lie in [0, 1]^{d}")
                cells = partition.cell_indices(rows, r)
                out += np.bincount(cells, minlength=2**r).astype(np.float64).tolist()
        return out

    return Features(tuple(names), of)
