"""Documented states of the catalog's adapters (docs/conformance.md): the objects ``Entry.make`` builds for the
boxes without a stream interface of their own. They are rebuilt from the catalog entry and its JSON parameters
(the file's ``origin``), so their parameters are the entry's."""

from __future__ import annotations

import json
from typing import Any

from dpstream.catalog.adapters import OneShot, Stateless
from dpstream.catalog.codecs.phdstream import TreeLevelOnPoints
from dpstream.catalog.origins import origin
from dpstream.checkpoint.kinds import BOOL, COUNT, STR, Component, Int, Kind, fail
from dpstream.checkpoint.spec import Field, StateSpec, require
from dpstream.checkpoint.states.phdstream import F_TRUE, check_counts, check_points

__all__ = ["SPECS"]

FAMILY = "catalog"


class _Json(Kind):
    """Plain JSON, as the conformance protocol's parameters are."""

    doc = "JSON (the entry's protocol parameters)"

    def encode(self, value: Any, w: Any, path: str) -> Any:
        try:
            return json.loads(json.dumps(value, allow_nan=False))
        except (TypeError, ValueError) as exc:
            raise fail(path, f"not plain JSON: {exc}", None) from exc

    def decode(self, raw: Any, r: Any, path: str) -> Any:
        return raw


def _origin_of(o: Any) -> Any:
    made = origin(o)
    if made is None:
        raise fail("state", f"a {type(o).__name__} is checkpointed through the catalog entry that built it; this one "
                            "was not built by dpstream.catalog (Entry.make)", type(o).__name__)
    return made


def _build_from_catalog(params: dict[str, Any], noise: Any, reader: Any, doc: dict[str, Any]) -> Any:
    from dpstream.catalog import entry

    return entry(params["catalog"]).make(params["params"], noise, as_printed=params["as_printed"])


ORIGIN_PARAMS = (
    Field("catalog", STR, "the catalog entry (anchor) that built it", get=lambda o: _origin_of(o).anchor),
    Field("params", _Json(), "the entry's parameters (protocol JSON)", get=lambda o: dict(_origin_of(o).params)),
    Field("as_printed", BOOL, "the entry's printed variant", get=lambda o: _origin_of(o).as_printed),
)


def _check_one_shot(o: OneShot) -> None:
    """t is 0 or 1."""
    require(o.t in (0, 1), "a one-shot algorithm takes one input (t is 0 or 1)")


ONE_SHOT = StateSpec(
    OneShot, FAMILY, "001-alg5, 000-alg1, 003-alg1 (one-shot boxes as streams of length 1)",
    "A one-shot algorithm served as a stream of length 1: its only state is whether it has run.",
    params=ORIGIN_PARAMS,
    variables=(Field("t", Int(0, 1), "steps so far: 0 (not run) or 1 (done)"),),
    build=_build_from_catalog,
    check=_check_one_shot,
    noise_of=lambda o: _origin_of(o).noise,
)

STATELESS = StateSpec(
    Stateless, FAMILY, "004-alg4 (a deterministic map as a stream)",
    "A deterministic function applied at every step: nothing is kept but the step count.",
    params=ORIGIN_PARAMS,
    variables=(Field("t", COUNT, "steps so far"),),
    build=_build_from_catalog,
    noise_of=lambda o: None,
)


def _build_tree_level(params: dict[str, Any], noise: Any, reader: Any, doc: dict[str, Any]) -> TreeLevelOnPoints:
    return TreeLevelOnPoints(reader.make(doc["variables"]["tree"], "state.variables.tree", noise))


def _check_tree_level(o: TreeLevelOnPoints) -> None:
    """the points of f lie in Omega and the tree algorithm's F is (4) of f."""
    check_points(o.tree.partition, o._true.present)
    check_counts(o.tree.partition, o._true.present, o.tree._true.F)


TREE_LEVEL_ON_POINTS = StateSpec(
    TreeLevelOnPoints, FAMILY, "001-alg1, 001-alg3 fed point batches (the protocol's view)",
    "A tree-level algorithm fed point batches: F by (4) of each checked batch, then the algorithm's step.",
    params=(),
    variables=(
        Field("tree", Component(doc="PHDStreamTree or PHDStreamTreeWithCounters state"), "the tree-level algorithm"),
        F_TRUE,
    ),
    build=_build_tree_level,
    check=_check_tree_level,
    noise_of=lambda o: o.tree.noise,
)

SPECS = (ONE_SHOT, STATELESS, TREE_LEVEL_ON_POINTS)
