"""JSON forms of PHDStream's inputs and releases (the conformance protocol's INPUT and RELEASE for 001-*).

Encodings (docs/phdstream.md, "Known-answer vectors"):

* a vertex of T is named by its label (:func:`~dpstream.phdstream.partition.node_label`): ``"root"`` or the
  dotted path of child indices from the root, ``"0.1.1"``, each index in decimal without a leading zero (``"01"``,
  ``"+1"``, ``" 1"``, ``"0."`` are refused, so every vertex has exactly one label); lists of vertices are sorted by
  (depth, path) with the path compared as a sequence of numbers (``"0.2"`` before ``"0.10"``), which is PrivTree's
  breadth-first visiting order;
* a step of a point stream is ``{"points": [[x_1, ..., x_d], ...], "moves": [+1 | -1, ...]}``: nabla f(., t),
  one event per point (+1 inserts the point, -1 removes a point present before); an empty batch is
  ``{"points": [], "moves": []}``;
* a tree function (PrivTree's input F) is ``{label: F(v)}``; absent vertices are 0 (and consistency (6) is checked
  with those zeros: ``{"root": 5}`` with D >= 1 is refused);
* a release is ``{"t", "nodes", "leaves", "values"}`` -- T(t), its leaves and G(v, t) on T(t) -- plus, with rule
  (5), ``"counts"`` (ceil(G(v, t) - 1e-9), 0 when that is <= 0, per leaf) and ``"points"`` (for each leaf with a
  positive count, in the order of ``leaves``, the rows of its ``001-eq5 t=<t> v=<leaf>`` draw); PrivTree's release
  is ``{"nodes", "leaves"}``.

Decoding checks the JSON shape and raises :class:`~dpstream.errors.DPStreamInputError` (the algorithms check
the values: points in Omega, removals of present points, consistency (6)).

:class:`TreeLevelOnPoints` is the protocol's view of the tree-level boxes 001-alg1 and 001-alg3: their input is
F in C(T); on the wire it is the point batch, turned into nabla F(., t) by (4) after the batch is checked
against the true multiset (as PHDStream, 001-alg2 L3, does), and the release is the tree algorithm's.

Features for the statistical checks (:class:`~dpstream.catalog.codecs.Features`, a fixed number of floats per run
whatever subtree a run releases): :func:`tree_features` (per step, every vertex of T: released or not, G(v, t), and
for the synthetic releases the synthetic points per leaf cell of T) and :func:`subtree_features` (PrivTree).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from dpstream.catalog.codecs import Features, integer_list, is_json_number
from dpstream.claims import PrivacyClaim
from dpstream.errors import DPStreamInputError
from dpstream.phdstream.counters_tree import PHDStreamTreeWithCounters
from dpstream.phdstream.partition import Node, Partition, node_label
from dpstream.phdstream.phdstream_tree import PHDStreamTree
from dpstream.phdstream.privtree import Subtree
from dpstream.phdstream.stream import PointEvents, SyntheticRelease, TreeRelease, TrueStream

__all__ = [
    "TreeLevelOnPoints",
    "decode_events",
    "decode_tree_function",
    "encode_subtree",
    "encode_synthetic",
    "encode_tree",
    "encode_tree_release",
    "label_key",
    "node_of",
    "subtree_features",
    "tree_features",
]


def label_key(label: str) -> tuple[int, tuple[int, ...]]:
    """Sort key of a vertex label: (depth, path)."""
    path = node_of(label)
    return len(path), path


def node_of(label: object, partition: Partition | None = None) -> Node:
    """The vertex named ``label`` (checked against ``partition`` when given)."""
    if not isinstance(label, str) or not label:
        raise DPStreamInputError("vertex", "must be a label: 'root' or a dotted path such as '0.1.1'", label)
    if label == "root":
        return ()
    parts = label.split(".")  # decimal child indices, no sign, no spaces, no leading zero: one label per vertex
    if not all(p.isascii() and p.isdigit() and (p == "0" or p[0] != "0") for p in parts):
        raise DPStreamInputError("vertex", "must be a label: 'root' or a dotted path of child indices written "
                                           "without leading zeros, such as '0.1.10'", label)
    v = tuple(int(p) for p in parts)
    if partition is not None and not partition.is_node(v):
        raise DPStreamInputError("vertex", f"must be a vertex of T (child indices < fanout {partition.beta}, "
                                           f"depth <= D = {partition.max_depth})", label)
    return v


def decode_events(value: Any, d: int) -> PointEvents:
    """A point batch ``{"points": [[...], ...], "moves": [...]}`` in R^d (membership of Omega is the algorithm's)."""
    if not isinstance(value, dict) or set(value) != {"points", "moves"}:
        raise DPStreamInputError("input", "must be a JSON object with exactly the keys 'points' and 'moves'", value)
    points, moves = value["points"], value["moves"]
    if not isinstance(points, list) or not all(
            isinstance(p, list) and len(p) == d and all(is_json_number(c) for c in p) for p in points):
        raise DPStreamInputError("points", f"must be a JSON array of points, each an array of d = {d} numbers",
                                 points)
    moves = integer_list(moves, "moves", "must be a JSON array of integers +1 or -1")
    if len(moves) != len(points):
        raise DPStreamInputError("moves", f"must hold one move per point ({len(points)})", len(moves))
    if not points:
        return PointEvents.empty(d)
    return PointEvents.of(np.asarray(points, dtype=np.float64), np.asarray(moves, dtype=np.int64))


def decode_tree_function(value: Any, partition: Partition) -> dict[Node, float]:
    """A tree function ``{label: number}`` (consistency (6) is checked by PrivTree)."""
    if not isinstance(value, dict):
        raise DPStreamInputError("input", "must be a JSON object {vertex label: number}", value)
    out: dict[Node, float] = {}
    for label, x in value.items():
        if not is_json_number(x):
            raise DPStreamInputError("F", "values must be JSON numbers", {label: x})
        out[node_of(label, partition)] = float(x)
    return out


def _sorted(nodes: Any) -> list[Node]:
    return sorted(nodes, key=lambda u: (len(u), u))


def encode_tree(t: int | None, tree: Subtree, values: Mapping[Node, float] | None) -> dict[str, Any]:
    """``{"t", "nodes", "leaves", "values"}`` (``t`` and ``values`` omitted when None)."""
    nodes = _sorted(tree.nodes)
    out: dict[str, Any] = {} if t is None else {"t": t}
    out["nodes"] = [node_label(v) for v in nodes]
    out["leaves"] = [node_label(v) for v in tree.leaves]
    if values is not None:
        out["values"] = {node_label(v): float(values[v]) for v in nodes}
    return out


def encode_subtree(tree: Subtree) -> dict[str, Any]:
    """PrivTree's (001-alg5) release: ``{"nodes", "leaves"}``."""
    return encode_tree(None, tree, None)


def encode_tree_release(release: TreeRelease) -> dict[str, Any]:
    """A 001-alg1 / 001-alg3 release: T(t) and G(., t) on T(t) (the naive algorithms keep G on all of V(T))."""
    return encode_tree(release.t, release.tree, release.values)


def encode_synthetic(release: SyntheticRelease) -> dict[str, Any]:
    """A 001-alg2 / 001-alg6 release: T(t), G on T(t), the rule (5) counts and the synthetic points."""
    out = encode_tree(release.t, release.tree, release.node_values)
    out["counts"] = {node_label(v): int(release.counts[v]) for v in release.tree.leaves}
    out["points"] = [[float(c) for c in row] for row in release.points.tolist()]
    return out


def tree_features(partition: Partition, T: int, *, synthetic: bool = False) -> Features:
    """Features of a run of T steps of 001-alg1 / 001-alg3 (``synthetic``: 001-alg2 / 001-alg6): at every step t,
    for every vertex v of T (breadth-first), ``in T(t)`` (1 if v is released, else 0) and ``G(v)`` (its released
    value, 0 where the release has none); with ``synthetic``, the number of synthetic points in every leaf cell of T
    (depth D). Only for small trees: 2 |V(T)| (+ beta^D) numbers per step."""
    vertices = list(partition.nodes())
    labels = [node_label(v) for v in vertices]
    cells = [node_label(v) for v in partition.leaves()]
    per_step = [*(f"in T({v})" for v in labels), *(f"G({v})" for v in labels),
                *((f"points in {c}" for c in cells) if synthetic else ())]
    names = tuple(f"t={t} {n}" for t in range(1, T + 1) for n in per_step)
    beta, D = partition.beta, partition.max_depth
    weights = np.asarray([beta ** (D - 1 - k) for k in range(D)], dtype=np.int64)

    def of(releases: Sequence[Any]) -> list[float]:
        out: list[float] = []
        for release in releases:
            nodes, values = set(release["nodes"]), release["values"]
            out += [1.0 if v in nodes else 0.0 for v in labels]
            out += [float(values.get(v, 0.0)) for v in labels]
            if synthetic:
                points = partition.validate_points(release["points"], "points")
                index = partition.locate(points) @ weights if points.shape[0] else np.zeros(0, dtype=np.int64)
                out += np.bincount(index, minlength=len(cells)).astype(np.float64).tolist()
        return out

    return Features(names, of)


def subtree_features(partition: Partition) -> Features:
    """Features of PrivTree's (001-alg5) release: for every vertex v of T (breadth-first), 1 if v is in S, else 0."""
    labels = [node_label(v) for v in partition.nodes()]

    def of(releases: Sequence[Any]) -> list[float]:
        out: list[float] = []
        for release in releases:
            nodes = set(release["nodes"])
            out += [1.0 if v in nodes else 0.0 for v in labels]
        return out

    return Features(tuple(f"in S({v})" for v in labels), of)


class TreeLevelOnPoints:
    """A tree-level algorithm (001-alg1, 001-alg3) fed point batches: (4) of the checked batch, then its step."""

    def __init__(self, tree: PHDStreamTree | PHDStreamTreeWithCounters) -> None:
        self.tree = tree
        self._true = TrueStream(tree.partition)

    @property
    def claim(self) -> PrivacyClaim:
        return self.tree.claim

    @property
    def paper_claim(self) -> PrivacyClaim:
        return self.tree.paper_claim

    def step(self, batch: PointEvents) -> TreeRelease:
        prepared = self._true.stage(batch)  # points in Omega, removals of present points: before any draw
        release = self.tree.stage(prepared.release.dF).commit()
        prepared.commit()
        return release
