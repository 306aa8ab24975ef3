"""Catalog entries of PHDStream (seed 001: 001-alg1 ... 001-alg7).

Protocol parameters: the tree T of the hierarchical partition of Omega = [0, 1]^d is given by ``d``, the maximum
depth ``D`` and the ``fanout`` beta (the vertex at depth k cuts coordinate k mod d into beta equal parts);
``epsilon``, the threshold ``theta`` and the PrivTree scale ``lambda_rule`` (``"general"``: lambda = D/eps, the
default; ``"proof"``; ``"printed"``: E-phdstream-3/4). Algorithm 3 and Algorithm 6 take the counter C_v of
every vertex as ``"counter"`` (``"simple"``, 001-alg8, default; ``"block"`` with block size ``"B"``, 001-alg9);
PHDStream (001-alg2) takes ``"tree"``: ``"001-alg1"`` (default) or ``"001-alg3"`` (then ``"counter"``).

INPUT and RELEASE: :mod:`dpstream.catalog.codecs.phdstream` (a point batch per step; PrivTree: one tree function).
"""

from __future__ import annotations

from collections import Counter as Multiset
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any

from dpstream.catalog.adapters import OneShot
from dpstream.catalog.cases import Case, CaseDraw, CaseGenerator, optional
from dpstream.catalog.codecs import Codec
from dpstream.catalog.codecs.phdstream import (
    TreeLevelOnPoints,
    decode_events,
    decode_tree_function,
    encode_subtree,
    encode_synthetic,
    encode_tree_release,
    subtree_features,
    tree_features,
)
from dpstream.catalog.designs import Event, contrasts, event_neighbours
from dpstream.catalog.entry import Entry, RejectSpec, SearchDesign, StatisticalSpec, VectorSpec, with_integers_as_floats
from dpstream.catalog.error_model import ErrorModel, moves_mass, numbers_mass
from dpstream.catalog.params import Param, ParamSchema, integer, number, positive, string
from dpstream.claims import Neighbour
from dpstream.counters import BlockCounter, CounterFactory
from dpstream.errors import DPStreamInputError
from dpstream.noise import NoiseSource, data_rng, derived_seed
from dpstream.phdstream import (
    EfficientPHDStream,
    HypercubePartition,
    LambdaRule,
    PHDStream,
    PHDStreamTree,
    PHDStreamTreeWithCounters,
    PrivTree,
    node_label,
    simple_counter_factory,
)
from dpstream.phdstream.partition import Node

__all__ = ["ENTRIES", "point_stream", "privtree_input"]

P = Mapping[str, Any]
DOC = "docs/phdstream.md"

# ----------------------------------------------------------------------------------------- parameters
D_SMALL = integer("d", "dimension d of Omega = [0, 1]^d")
MAX_VERTICES = 2**22
"""Largest tree T the reference serves (its vertices, sum of fanout^k for k = 0..D): the naive boxes hold G on all
of V(T)."""
DEPTH = integer("D", "maximum depth D of the tree T (vertices at depth D are its leaves); T has at most 2^22 "
                     "vertices", minimum=0, maximum=64)
FANOUT = integer("fanout", "fanout beta of T: the vertex at depth k cuts coordinate k mod d into beta equal parts",
                 minimum=2, maximum=2**16, required=False, default=2)
EPSILON = positive("epsilon", "privacy budget eps (pure DP, EVENT neighbours)")
THETA = number("theta", "threshold count theta >= 0 of PrivTree", minimum=0.0, required=False, default=0.0)
LAMBDA_RULE = string("lambda_rule", "PrivTree's scale: general (lambda = max(D, 1)/eps), proof (App. A), printed (L3)",
                     tuple(r.value for r in LambdaRule), default=LambdaRule.GENERAL.value)
COUNTER = string("counter", "the counter C_v of every vertex: simple (001-alg8) or block (001-alg9, with B)",
                 ("simple", "block"), default="simple")
BLOCK = integer("B", "block size B of the 'block' counter", required=False)
TREE_PARAMS = (D_SMALL, DEPTH, FANOUT, EPSILON, THETA, LAMBDA_RULE)
PRIVTREE_SCHEMA = ParamSchema(TREE_PARAMS)
ALG1_SCHEMA = ParamSchema(TREE_PARAMS)
COUNTERS_SCHEMA = ParamSchema((*TREE_PARAMS, COUNTER, BLOCK))
ALG2_SCHEMA = ParamSchema((*TREE_PARAMS,
                           string("tree", "the tree algorithm PHDStream runs", ("001-alg1", "001-alg3"),
                                  default="001-alg1"),
                           Param("counter", "string", "the counter C_v with tree 001-alg3 (default simple)",
                                 required=False, default=None, enum=("simple", "block")),
                           BLOCK))


def partition(p: P) -> HypercubePartition:
    vertices = sum(p["fanout"] ** k for k in range(p["D"] + 1))
    if vertices > MAX_VERTICES:
        raise DPStreamInputError("D", f"the tree T would have {vertices:.3g} vertices (fanout {p['fanout']}, depth "
                                      f"{p['D']}); the reference serves trees of at most 2^22", p["D"])
    return HypercubePartition(p["d"], p["D"], p["fanout"])


def lambda_rule(p: P, printed: bool) -> LambdaRule:
    """The scale rule; the printed variant of a box uses 001-alg5 L3 as printed (E-phdstream-4)."""
    return LambdaRule.PRINTED if printed else LambdaRule(p["lambda_rule"])


def counter_factory(p: P) -> CounterFactory:
    name, B = p.get("counter") or "simple", p.get("B")
    if name == "block":
        if B is None:
            raise DPStreamInputError("B", "is required with counter 'block'", None)
        return lambda eps, noise: BlockCounter(eps, B, noise=noise)
    if B is not None:
        raise DPStreamInputError("B", "is only used with counter 'block'", B)
    return simple_counter_factory


# ----------------------------------------------------------------------------------------- builders
def _privtree(p: P, noise: NoiseSource, printed: bool = False) -> OneShot:
    alg = PrivTree(partition(p), p["epsilon"], p["theta"], lambda_rule=lambda_rule(p, printed))
    return OneShot(lambda F: alg.run(F, noise=noise), alg.claim, alg.paper_claim, algorithm=alg)


def _alg1(p: P, noise: NoiseSource, printed: bool = False) -> TreeLevelOnPoints:
    return TreeLevelOnPoints(PHDStreamTree(partition(p), p["epsilon"], p["theta"], noise=noise,
                                           lambda_rule=lambda_rule(p, printed)))


def _alg3(p: P, noise: NoiseSource, printed: bool = False) -> TreeLevelOnPoints:
    return TreeLevelOnPoints(PHDStreamTreeWithCounters(partition(p), p["epsilon"], p["theta"], noise=noise,
                                                       counter=counter_factory(p),
                                                       lambda_rule=lambda_rule(p, printed), as_printed=printed))


def _alg2(p: P, noise: NoiseSource, printed: bool = False) -> PHDStream:
    if p["tree"] == "001-alg1" and p.get("counter") is not None:
        raise DPStreamInputError("counter", "is only used with tree 001-alg3", p["counter"])
    counter = counter_factory(p) if p["tree"] == "001-alg3" else None
    if counter is None and p.get("B") is not None:
        raise DPStreamInputError("B", "is only used with tree 001-alg3 and counter 'block'", p["B"])
    return PHDStream(partition(p), p["epsilon"], p["theta"], noise=noise, counter=counter,
                     lambda_rule=lambda_rule(p, printed), as_printed=printed)


def _alg6(p: P, noise: NoiseSource, printed: bool = False) -> EfficientPHDStream:
    return EfficientPHDStream(partition(p), p["epsilon"], p["theta"], noise=noise, counter=counter_factory(p),
                              lambda_rule=LambdaRule(p["lambda_rule"]), as_printed=printed)


# ----------------------------------------------------------------------------------------- codecs
_NUMBERS = {"type": "array", "items": {"type": "number"}}
BATCH_SCHEMA: dict[str, Any] = {
    "type": "object", "additionalProperties": False, "required": ["points", "moves"],
    "properties": {"points": {"type": "array", "items": _NUMBERS},
                   "moves": {"type": "array", "items": {"enum": [1, -1]}}}}
LABEL_PATTERN = r"^(root|(0|[1-9][0-9]*)([.](0|[1-9][0-9]*))*)$"
"""A vertex label: ``root`` or the dotted path of child indices, in decimal without leading zeros."""
_LABELS = {"type": "array", "items": {"type": "string", "pattern": LABEL_PATTERN}}
SUBTREE_SCHEMA: dict[str, Any] = {"type": "object", "required": ["nodes", "leaves"], "additionalProperties": False,
                                  "properties": {"nodes": _LABELS, "leaves": _LABELS}}
TREE_SCHEMA: dict[str, Any] = {
    "type": "object", "required": ["t", "nodes", "leaves", "values"], "additionalProperties": False,
    "properties": {"t": {"type": "integer"}, "nodes": _LABELS, "leaves": _LABELS,
                   "values": {"type": "object", "additionalProperties": {"type": "number"}}}}
SYNTHETIC_SCHEMA: dict[str, Any] = {
    "type": "object", "required": ["t", "nodes", "leaves", "values", "counts", "points"],
    "additionalProperties": False,
    "properties": {**TREE_SCHEMA["properties"],
                   "counts": {"type": "object", "additionalProperties": {"type": "integer"}},
                   "points": {"type": "array", "items": _NUMBERS}}}


def _events(value: Any, params: P) -> Any:
    return decode_events(value, params["d"])


def _tree_function(value: Any, params: P) -> dict[Node, float]:
    return decode_tree_function(value, partition(PRIVTREE_SCHEMA.validate(params)))


PRIVTREE_CODEC = Codec({"type": "object", "propertyNames": {"pattern": LABEL_PATTERN},
                        "additionalProperties": {"type": "number"}}, SUBTREE_SCHEMA,
                       _tree_function, encode_subtree)
TREE_CODEC = Codec(BATCH_SCHEMA, TREE_SCHEMA, _events, encode_tree_release)
SYNTHETIC_CODEC = Codec(BATCH_SCHEMA, SYNTHETIC_SCHEMA, _events, encode_synthetic)

# ----------------------------------------------------------------------------------------- vector inputs
# Inputs are pure functions of their seeds (data_rng: non-private data generation). Coordinates have three
# decimals and avoid the cuts of T (no multiple of 1/8, hence of 1/2^k; a 3-decimal number in (0, 1) is never
# a multiple of 1/3^k), so that an implementation locating points in another way finds the same leaves.


def _coordinate(value: float) -> float:
    """A coordinate with 3 decimals in [0.001, 0.999] that is not on a cut of the tree (no multiple of 1/8)."""
    x = min(max(round(value, 3), 0.001), 0.999)
    return round(x + 0.001, 3) if (x * 8.0).is_integer() else x


def point_stream(seed: int, steps: int) -> list[dict[str, list[Any]]]:
    """The d = 2 stream of the first vectors: insertions clustered near (0.2, 0.3) (a point inserted twice at
    t = 2) and deletions of present points (nabla f(., t) for t = 1..steps)."""
    rng = data_rng(seed)
    present: list[list[float]] = []
    out: list[dict[str, list[Any]]] = []
    for t in range(1, steps + 1):
        n_new = [14, 6, 5, 0, 7][t - 1] if t <= 5 else 5
        new = []
        for _ in range(n_new):
            if rng.random() < 0.7:
                p = [_old_coordinate(0.2 + 0.15 * float(rng.standard_normal())),
                     _old_coordinate(0.3 + 0.1 * float(rng.standard_normal()))]
                p = [min(max(c, 0.001), 0.999) for c in p]
            else:
                p = [_old_coordinate(float(rng.random())), _old_coordinate(float(rng.random()))]
            new.append(p)
        if t == 2:
            new.append(list(new[0]))  # the same point twice: f(x, t) = 2
        n_gone = [0, 2, 3, 6, 2][t - 1] if t <= 5 else 2
        gone = [present.pop(int(rng.integers(0, len(present)))) for _ in range(min(n_gone, len(present)))]
        present += new
        out.append({"points": new + gone, "moves": [1] * len(new) + [-1] * len(gone)})
    return out


def _old_coordinate(value: float) -> float:
    x = round(value, 3)
    return x + 0.001 if (x * 8.0).is_integer() else x


def events(seed: int, d: int, plan: Sequence[tuple[int, int | str]], clustered: float = 0.6
           ) -> list[dict[str, list[Any]]]:
    """A stream in [0, 1]^d: step t inserts ``plan[t-1][0]`` points (a share ``clustered`` near a corner cluster, the
    others uniform; a repeat when there are several) and removes ``plan[t-1][1]`` present points (``"all"``: every
    present point)."""
    rng = data_rng(seed)
    centre = [0.2 + 0.1 * (j % 3) for j in range(d)]
    present: list[list[float]] = []
    out: list[dict[str, list[Any]]] = []
    for n_new, n_gone in plan:
        new: list[list[float]] = []
        for i in range(n_new):
            if i == 2:
                new.append(list(new[0]))  # the same point twice
            elif rng.random() < clustered:
                new.append([_coordinate(c + 0.12 * float(rng.standard_normal())) for c in centre])
            else:
                new.append([_coordinate(float(rng.random())) for _ in range(d)])
        count = len(present) if n_gone == "all" else min(int(n_gone), len(present))
        gone = [present.pop(int(rng.integers(0, len(present)))) for _ in range(count)]
        present += new
        out.append({"points": new + gone, "moves": [1] * len(new) + [-1] * len(gone)})
    return out


def privtree_input(p: P, seed: int = 51, kind: str = "signed") -> dict[str, float]:
    """A consistent F on V(T) as ``{label: F(v)}``: leaf values multiples of 1/4 (every sum exact), mass near the
    first vertex of depth 2; ``kind="signed"`` makes about one leaf in five negative, ``"counts"`` gives integer
    counts (path-monotone F), ``"zero"`` F = 0."""
    P_ = partition(PRIVTREE_SCHEMA.validate(p))
    rng = data_rng(seed)
    leaves: dict[Node, float] = {}
    for v in P_.leaves():
        heavy = v[:2] == (0,) * min(2, len(v))
        if kind == "zero":
            value = 0.0
        elif kind == "counts":
            value = float(rng.integers(0, 12 if heavy else 3))
        else:
            value = float(rng.integers(0, 24 if heavy else 6)) / 4.0
            if rng.random() < 0.2:
                value = -value - 0.5
        leaves[v] = value
    F: dict[Node, float] = {}
    for leaf, x in leaves.items():
        for k in range(len(leaf) + 1):
            F[leaf[:k]] = F.get(leaf[:k], 0.0) + x
    return {node_label(v): F[v] for v in sorted(F, key=lambda u: (len(u), u))}


# ----------------------------------------------------------------------------------------- vectors
BASE: dict[str, Any] = {"d": 2, "D": 3, "fanout": 2, "epsilon": 2.0, "theta": 1.0, "lambda_rule": "general"}
OLD_ALG3_PARAMS: dict[str, Any] = {**BASE, "counter": "simple"}
OLD_ALG2_PARAMS: dict[str, Any] = {**BASE, "tree": "001-alg1"}
OLD_PRIVTREE_PARAMS: dict[str, Any] = {**BASE, "D": 4}

# (name, parameter changes, plan of (inserted, removed) per step, edges)
STREAMS: tuple[tuple[str, dict[str, Any], tuple[tuple[int, int | str], ...], tuple[str, ...]], ...] = (
    ("T1-d2-D3", {}, ((6, 0),), ("T=1",)),
    ("empty-batch-d2-D3", {}, ((5, 0), (0, 0), (3, 2)), ("empty batch",)),
    ("delete-all-d2-D2", {"D": 2}, ((5, 0), (2, 3), (0, "all")), ("deletions back to zero",)),
    ("d1-D3-eps1", {"d": 1, "epsilon": 1.0}, ((5, 0), (3, 2), (2, 1), (0, 1)), ("d=1",)),
    ("d3-D4-theta0", {"d": 3, "D": 4, "theta": 0.0}, ((6, 0), (3, 2), (4, 3)), ("d=3", "theta=0")),
    ("fanout3-D2", {"fanout": 3, "D": 2, "epsilon": 4.0}, ((7, 0), (3, 3), (2, 1)), ("fanout=3",)),
    ("D0-root-only", {"D": 0}, ((4, 0), (1, 2)), ("D=0",)),
    ("lambda-proof-eps8", {"lambda_rule": "proof", "epsilon": 8.0}, ((6, 0), (4, 2), (2, 3)),
     ("lambda_rule=proof",)),
    ("lambda-printed-eps0.5", {"lambda_rule": "printed", "epsilon": 0.5}, ((6, 0), (2, 2), (3, 1)),
     ("lambda_rule=printed",)),
)


def _stream_vectors(anchor: str, base: P, old: VectorSpec | None = None, *,
                    extra: Sequence[tuple[str, dict[str, Any], tuple[tuple[int, int | str], ...], tuple[str, ...]]]
                    = ()) -> list[VectorSpec]:
    specs = [] if old is None else [old]
    for name, change, plan, edges in (*STREAMS, *extra):
        params = {**base, **change}
        inputs = events(derived_seed(1, "001-stream", name), params["d"], plan)
        specs.append(VectorSpec(name, params, inputs, derived_seed(2, anchor, name), edges))
    return specs


BLOCK_STREAMS: tuple[tuple[str, dict[str, Any], tuple[tuple[int, int | str], ...], tuple[str, ...]], ...] = (
    ("block-B2-d2-D3", {"counter": "block", "B": 2}, ((6, 0), (3, 1), (2, 2), (3, 1), (0, 2)), ("counter=block",)),
)


QUARTERS: dict[str, float] = {"root": 1.0, "0": 0.5, "1": 0.5, "0.0": 0.25, "0.1": 0.25, "1.0": 0.25, "1.1": 0.25}
"""A consistent F on the tree of D = 2, fanout 2 (every sum exact)."""

FLOAT_SUMS: dict[str, float] = {"root": 0.6, "0": 0.3, "1": 0.3, "0.0": 0.1, "0.1": 0.2, "1.0": 0.3, "1.1": 0.0}
"""Consistent within the tolerance of (6), not exactly: 0.1 + 0.2 = 0.30000000000000004 != 0.3 in doubles."""


def _alg5_vectors() -> list[VectorSpec]:
    specs = [VectorSpec("privtree-d2-D4-eps2-theta1", OLD_PRIVTREE_PARAMS, [privtree_input(OLD_PRIVTREE_PARAMS)], 51,
                        ("signed F",), "PrivTree_T (001-alg5) on one consistent F over the tree of [0,1]^2, D=4, "
                                       "fanout 2, lambda = D/eps, seed=51")]
    for name, change, kind, edges in (
            ("counts-d2-D3", {"D": 3, "epsilon": 1.0}, "counts", ("path-monotone F",)),
            ("zero-F-d2-D3", {"D": 3, "theta": 0.0}, "zero", ("F = 0",)),
            ("D0-root-only", {"D": 0}, "counts", ("D=0",)),
            ("d1-D4-eps4", {"d": 1, "D": 4, "epsilon": 4.0}, "signed", ("d=1",)),
            ("d3-D3-theta0", {"d": 3, "D": 3, "theta": 0.0}, "counts", ("d=3", "theta=0")),
            ("fanout3-D2", {"fanout": 3, "D": 2, "epsilon": 3.0}, "counts", ("fanout=3",)),
            ("lambda-proof", {"D": 3, "lambda_rule": "proof"}, "counts", ("lambda_rule=proof",)),
            ("lambda-printed-eps8", {"D": 3, "lambda_rule": "printed", "epsilon": 8.0}, "signed",
             ("lambda_rule=printed",))):
        params = {**BASE, **change}
        specs.append(VectorSpec(name, params, [privtree_input(params, derived_seed(1, "001-alg5", name), kind)],
                                derived_seed(2, "001-alg5", name), ("T=1", *edges)))
    params = {**BASE, "D": 2, "fanout": 11, "epsilon": 4.0}  # labels 10, 0.10, 10.10: ordered as numbers, not text
    specs.append(VectorSpec("fanout11-D2", params, [privtree_input(params, derived_seed(1, "001-alg5", "fanout11"),
                                                                   "counts")],
                            derived_seed(2, "001-alg5", "fanout11"), ("T=1", "fanout=11", "child index >= 10")))
    for name, F, edges in (("absent-vertices-D2", {"root": 3.0, "0": 3.0, "0.1": 3.0}, ("absent vertices count 0",)),
                           ("float-sums-D2", FLOAT_SUMS, ("F(v) = sum over children within 1e-9, not exactly",))):
        specs.append(VectorSpec(name, {**BASE, "D": 2}, [F], derived_seed(2, "001-alg5", name), ("T=1", *edges)))
    return specs


def _old(name: str, params: P, stream_seed: int, steps: int, seed: int, description: str) -> VectorSpec:
    return VectorSpec(name, dict(params), point_stream(stream_seed, steps), seed, ("insertions and deletions",),
                      description)


# ----------------------------------------------------------------------------------------- must-reject
def _param_rejects(valid: P, extra: Sequence[tuple[str, dict[str, Any], str]] = ()) -> list[RejectSpec]:
    cases: list[tuple[str, dict[str, Any], str]] = [
        ("epsilon-zero", {**valid, "epsilon": 0.0}, "epsilon must be > 0"),
        ("epsilon-negative", {**valid, "epsilon": -1.0}, "epsilon must be > 0"),
        ("epsilon-string", {**valid, "epsilon": "2"}, "epsilon must be a number"),
        ("epsilon-missing", {k: v for k, v in valid.items() if k != "epsilon"}, "epsilon is required"),
        ("d-zero", {**valid, "d": 0}, "d must be an integer >= 1"),
        ("D-negative", {**valid, "D": -1}, "D must be an integer >= 0"),
        ("D-fraction", {**valid, "D": 1.5}, "D must be an integer"),
        ("D-missing", {k: v for k, v in valid.items() if k != "D"}, "D is required"),
        ("fanout-one", {**valid, "fanout": 1}, "the fanout must be >= 2"),
        ("fanout-null", {**valid, "fanout": None}, "fanout must be an integer: a parameter is given or absent, null is "
                                                    "no value"),
        ("theta-negative", {**valid, "theta": -1.0}, "theta must be >= 0"),
        ("lambda-rule-unknown", {**valid, "lambda_rule": "other"}, "lambda_rule must be general, proof or printed"),
        ("unknown-key", {**valid, "T": 4}, "unknown parameters are refused"),
        *extra,
    ]
    return [RejectSpec(f"init-{name}", params, reason, at_init=True) for name, params, reason in cases]


def _counter_rejects(valid: P) -> list[tuple[str, dict[str, Any], str]]:
    return [("counter-unknown", {**valid, "counter": "hybrid"}, "counter must be simple or block"),
            ("block-without-B", {**valid, "counter": "block"}, "counter 'block' needs B"),
            ("B-without-block", {**valid, "counter": "simple", "B": 2}, "B is only used with counter 'block'"),
            ("B-zero", {**valid, "counter": "block", "B": 0}, "B must be >= 1")]


def _step_rejects(anchor: str, valid: P) -> list[RejectSpec]:
    first = {"points": [[0.2, 0.3], [0.7, 0.1], [0.2, 0.3]], "moves": [1, 1, 1]}
    second = {"points": [[0.4, 0.6], [0.2, 0.3]], "moves": [1, -1]}
    after = [{"points": [[0.9, 0.9], [0.7, 0.1]], "moves": [1, -1]}]
    cases: list[tuple[str, Any, str]] = [
        ("point-outside", {"points": [[0.2, 1.5]], "moves": [1]}, "a point must lie in [0, 1]^d"),
        ("point-negative", {"points": [[-0.1, 0.5]], "moves": [1]}, "a point must lie in [0, 1]^d"),
        ("point-wrong-dimension", {"points": [[0.2]], "moves": [1]}, "a point must have d coordinates"),
        ("delete-never-inserted", {"points": [[0.6, 0.6]], "moves": [-1]},
         "a removal needs the point to be present (f(x, t) >= 0)"),
        ("delete-twice", {"points": [[0.7, 0.1], [0.7, 0.1]], "moves": [-1, -1]},
         "a point present once cannot be removed twice"),
        ("move-two", {"points": [[0.5, 0.5]], "moves": [2]}, "moves must be +1 or -1"),
        ("moves-length", {"points": [[0.5, 0.5], [0.1, 0.1]], "moves": [1]}, "one move per point"),
        ("moves-missing", {"points": [[0.5, 0.5]]}, "a batch has 'points' and 'moves'"),
        ("coordinate-string", {"points": [[0.5, "0.5"]], "moves": [1]}, "coordinates must be JSON numbers"),
        ("move-bool", {"points": [[0.5, 0.5]], "moves": [True]}, "moves must be integers"),
        ("not-an-object", [[0.5, 0.5]], "a batch is a JSON object"),
    ]
    return [RejectSpec(f"step-{name}", valid, reason, before=[first, second], bad_input=bad, after=after,
                       seed=derived_seed(3, anchor, name)) for name, bad, reason in cases]


def _privtree_rejects() -> list[RejectSpec]:
    valid = {**BASE, "D": 2}
    F = privtree_input(valid, 7, "counts")
    inconsistent = {**F, "root": F["root"] + 1.0}
    cases: list[tuple[str, Any, str]] = [
        ("inconsistent", inconsistent, "F must be consistent (6): F(v) = sum over children(v)"),
        ("child-index-too-large", {"root": 1.0, "0": 1.0, "2": 0.0}, "a label's child indices are < fanout"),
        ("too-deep", {"root": 0.0, "0.0.0": 0.0}, "a vertex has depth <= D"),
        ("bad-label", {"root": 1.0, "left": 1.0}, "a vertex is 'root' or a dotted path"),
        ("value-string", {"root": "1"}, "values must be JSON numbers"),
        ("not-an-object", [1.0, 0.5, 0.5], "F is a JSON object"),
        ("root-only", {"root": 5.0}, "absent vertices count 0, so F(root) = 5 is not the sum 0 over its children (6)"),
        ("inconsistent-by-1e-6", {**QUARTERS, "root": 1.000001},
         "consistency (6) holds within 1e-9 (1 + |F(v)| + |sum over children|): a gap of 1e-6 is refused"),
        ("label-leading-zero", {("01" if k == "1" else k): x for k, x in QUARTERS.items()},
         "child indices are written without leading zeros: '01' is no label"),
    ]
    specs = _param_rejects(valid)
    specs += [RejectSpec(f"step-{name}", valid, reason, bad_input=bad, after=[F],
                         seed=derived_seed(3, "001-alg5", name)) for name, bad, reason in cases]
    specs.append(RejectSpec("step-second-input", valid, "PrivTree is one-shot: a second input is past T = 1",
                            before=[F], bad_input=F, seed=derived_seed(3, "001-alg5", "second")))
    return specs


def _sweep(**extra: Any) -> tuple[dict[str, Any], ...]:
    return tuple({"d": 1, "D": D, "fanout": 2, "epsilon": eps, "theta": 0.0, "lambda_rule": "general", **extra}
                 for eps in (0.5, 2.0) for D in (1, 2))


def _stream_sweep(**extra: Any) -> tuple[dict[str, Any], ...]:
    """The stream boxes' settings: eps = 0.5 with D = 1 and eps = 2 with D = 2 (the thorough search on the four of
    :func:`_sweep` took 306 s for 001-alg2 on 2 cores, over the 5 minutes a synthesizer entry may take; the quick
    profile searched these two already)."""
    low, high = {"epsilon": 0.5, "D": 1}, {"epsilon": 2.0, "D": 2}
    return tuple(s for s in _sweep(**extra) if any(all(s[k] == v for k, v in c.items()) for c in (low, high)))


# ----------------------------------------------------------------------------------------- differential cases
# Fresh cases (dpstream.catalog.cases): the tree's parameters with D = 0 and large fanouts weighted (beta^D <= 64 in
# the vectors' range, up to 4096 leaves and D = 12 as the fuzzer's cases grow), optional parameters left out or drawn,
# point batches on coordinates that are never on an inner cut of T (docs: "no input coordinate lies on a cut"; 0 and
# 1, the ends of Omega, are used), with empty batches and a last batch removing every present point weighted.
COORDINATES = (0.0, 0.05, 0.2, 0.33, 0.5, 0.51, 0.75, 0.9, 1.0, 0.123, 0.618, 0.999)
"""Candidate coordinates: the strategies' GRID (cell boundaries and points near them) and a few irregular ones."""
MAX_LEAVES = 64


def off_cut_coordinates(fanout: int, D: int, d: int) -> tuple[float, ...]:
    """The :data:`COORDINATES` not on an inner cut of T: x in (0, 1) with x beta^m an integer for some m <= the number
    of levels cutting one coordinate (ceil(D/d)); the decimal value is what a reader of the JSON number means."""
    m = -(-D // d)
    return tuple(x for x in COORDINATES
                 if x in (0.0, 1.0) or all((Fraction(str(x)) * fanout**k).denominator != 1 for k in range(1, m + 1)))


def _tree_params(draw: CaseDraw) -> dict[str, Any]:
    D = draw.integer(0, draw.size(4, 12), (0, 1, 2, 3))
    leaves = draw.size(MAX_LEAVES, 4096)
    widest = 16 if D <= 1 else max(2, round(leaves ** (1 / D)))
    while widest > 2 and widest**D > leaves:
        widest -= 1
    params: dict[str, Any] = {"d": draw.integer(1, 3, (1, 2, 3)), "D": D}
    params = optional(draw, params, "fanout", lambda: draw.integer(2, widest, (2, 3, widest)))
    params["epsilon"] = draw.number(0.01, 1000.0, (2.0, 1.0, 0.5, 8.0, 0.01, 1000.0))
    params = optional(draw, params, "theta", lambda: draw.number(0.0, 20.0, (0.0, 1.0, 5.0)))
    return optional(draw, params, "lambda_rule", lambda: draw.choice(("general", "proof", "printed")))


def _tree_edges(p: P) -> tuple[str, ...]:
    labels = [f"d={p['d']}", f"D={p['D']}", f"fanout={p.get('fanout', 2)}"]
    labels += [f"{k} left out" for k in ("fanout", "theta", "lambda_rule") if k not in p]
    return tuple(labels)


def _counter_params(draw: CaseDraw, params: dict[str, Any]) -> dict[str, Any]:
    """``counter`` (left out: simple) and ``B`` with the block counter."""
    params = optional(draw, params, "counter", lambda: draw.choice(("simple", "block")))
    if params.get("counter") == "block":
        params["B"] = draw.integer(1, 4, (1, 2))
    return params


def _batches(draw: CaseDraw, p: P) -> tuple[list[dict[str, list[Any]]], tuple[str, ...]]:
    d, fanout = p["d"], p.get("fanout", 2)
    coordinates = off_cut_coordinates(fanout, p["D"], d)
    if not draw.feature("boundary coordinates"):
        coordinates = tuple(x for x in coordinates if x not in (0.0, 1.0)) or coordinates
    events = draw.event_batches(d, coordinates, draw.integer(1, draw.size(5, 48), (1, 2, 3)), draw.size(8, 40))
    edges = []
    if draw.feature("back to zero") and draw.choice((False, True)):  # a last batch removing every point present
        present: Multiset[tuple[Any, ...]] = Multiset()
        for batch in events:
            present.update(e[:-1] for e in batch if e[-1] == 1)
            present.subtract(e[:-1] for e in batch if e[-1] == -1)
        events.append(tuple((*x, -1) for x, n in sorted(present.items()) for _ in range(n)))
        edges.append("deletions back to zero")
    if any(not batch for batch in events):
        edges.append("empty batch")
    if any(c in (0.0, 1.0) for batch in events for e in batch for c in e[:-1]):
        edges.append("x = 0 or 1")
    return [_events_batch(b) for b in events], (*edges, f"T={len(events)}")


def _stream_cases(counters: bool) -> CaseGenerator:
    """001-alg1 (``counters`` False), 001-alg3 and 001-alg6 (with ``counter`` and ``B``)."""
    def cases(draw: CaseDraw) -> Case:
        params = _tree_params(draw)
        if counters:
            params = _counter_params(draw, params)
        inputs, edges = _batches(draw, params)
        return Case(params, inputs, (*_tree_edges(params), *edges))

    return cases


def _phdstream_cases(draw: CaseDraw) -> Case:
    """001-alg2: ``tree`` left out (001-alg1) or drawn; with 001-alg3 its ``counter``."""
    params = optional(draw, _tree_params(draw), "tree", lambda: draw.choice(("001-alg1", "001-alg3")))
    if params.get("tree") == "001-alg3":
        params = _counter_params(draw, params)
    inputs, edges = _batches(draw, params)
    return Case(params, inputs, (*_tree_edges(params), *edges))


def _privtree_cases(draw: CaseDraw) -> Case:
    """001-alg5: F from leaf values (counts, or quarters of either sign), every vertex listed or the zero ones left
    out (absent vertices are 0)."""
    params = _tree_params(draw)
    P_ = partition(PRIVTREE_SCHEMA.validate(params))
    signed = draw.choice((False, True))
    leaves = {v: (draw.integer(-8, 24) / 4.0 if signed else float(draw.integer(0, 6))) for v in P_.leaves()}
    F: dict[Node, float] = {}
    for leaf, x in leaves.items():
        for k in range(len(leaf) + 1):
            F[leaf[:k]] = F.get(leaf[:k], 0.0) + x
    sparse = draw.choice((False, True))
    labelled = {node_label(v): F[v] for v in sorted(F, key=lambda u: (len(u), u)) if not (sparse and F[v] == 0.0)}
    edges = ("signed F" if signed else "counts", *(("zero vertices left out",) if sparse else ()))
    return Case(params, [labelled], (*_tree_edges(params), *edges))


# ----------------------------------------------------------------------------------------- statistical checks
# The witness search through the protocol (docs/conformance.md, "Statistical checks"): point streams of a few
# shapes, EVENT neighbours (one point inserted or removed at one time), the released tree and values per vertex.
STREAM_PLANS: dict[str, tuple[tuple[int, int | str], ...]] = {
    "clustered": ((6, 0), (3, 2), (2, 1)),
    "spread": ((6, 0), (3, 2), (2, 1)),
    "back-to-zero": ((5, 0), (2, 3), (0, "all")),
}
"""(inserted, removed) per step of each family (its last step repeated past its length; back-to-zero: inserts,
then removes every present point at the last step)."""


def _plan(name: str, T: int) -> list[tuple[int, int | str]]:
    plan = list(STREAM_PLANS[name])
    if name == "back-to-zero":
        return [plan[min(t, len(plan) - 2)] for t in range(T - 1)] + [plan[-1]]
    return [plan[min(t, len(plan) - 1)] for t in range(T)]


def _stream_families(p: P, T: int) -> dict[str, list[Any]]:
    return {name: events(derived_seed(4, "001-search", name), p["d"], _plan(name, T),
                         clustered=0.0 if name == "spread" else 0.6) for name in STREAM_PLANS}


def _batch_events(batch: Mapping[str, Any]) -> tuple[Event, ...]:
    return tuple((*point, int(move)) for point, move in zip(batch["points"], batch["moves"], strict=True))


def _events_batch(batch: Sequence[Event]) -> dict[str, list[Any]]:
    return {"points": [list(e[:-1]) for e in batch], "moves": [int(e[-1]) for e in batch]}


def _insertions(d: int) -> list[tuple[str, Event]]:
    """Points the EVENT neighbours insert: one inside the families' cluster, one far from it."""
    return [("in the cluster", tuple(_coordinate(0.2 + 0.1 * (j % 3)) for j in range(d))),
            ("far", tuple(0.9 for _ in range(d)))]


def _stream_neighbours(p: P, f: list[Any]) -> list[tuple[str, list[Any]]]:
    batches = [_batch_events(b) for b in f]
    return [(label, [_events_batch(b) for b in g]) for label, g in event_neighbours(batches, _insertions(p["d"]))]


def _stream_design(synthetic: bool) -> SearchDesign:
    return SearchDesign(_stream_families, _stream_neighbours,
                        lambda p, T: tree_features(partition(p), T, synthetic=synthetic),
                        lambda p, f: tuple(_batch_events(b) for b in f),
                        lambda p, T: contrasts(tree_features(partition(p), T, synthetic=synthetic).names,
                                               ("G(", "points in ")))


def _point_counts(P_: HypercubePartition, points: Sequence[Sequence[float]]) -> dict[str, float]:
    """F(v) = the number of points in the cell of v, for every vertex v of T, as ``{label: F(v)}``."""
    F = {v: 0.0 for v in P_.nodes()}
    for point in points:
        leaf = P_.leaf_of(point)
        for k in range(len(leaf) + 1):
            F[leaf[:k]] += 1.0
    return {node_label(v): x for v, x in F.items()}


def _privtree_families(p: P, T: int) -> dict[str, list[Any]]:
    P_ = partition(p)
    out: dict[str, list[Any]] = {}
    for name, share, n in (("clustered", 0.6, 8), ("spread", 0.0, 8), ("empty", 0.0, 0)):
        points = events(derived_seed(4, "001-alg5-search", name), p["d"], ((n, 0),), clustered=share)[0]["points"]
        out[name] = [_point_counts(P_, points)]
    return out


def _leaf_events(F: Mapping[str, float], leaves: Sequence[str]) -> tuple[Event, ...]:
    """F as one batch of events: leaf v inserted F(v) times (F a count of points: the EVENT view of 001-alg5)."""
    return tuple((v, 1) for v in leaves for _ in range(int(F.get(v, 0.0))))


def _privtree_neighbours(p: P, f: list[Any]) -> list[tuple[str, list[Any]]]:
    """F' = F plus or minus the indicator of one leaf's path (one point inserted or removed, the C(T) norm)."""
    P_ = partition(p)
    F = f[0]
    out: list[tuple[str, list[Any]]] = []
    present = [v for v in P_.leaves() if F.get(node_label(v), 0.0) >= 1.0]
    moves = [(+1, P_.leaf_of(x), f"insert a point {name} {list(x)}") for name, x in _insertions(p["d"])]
    moves += [(-1, v, f"remove a point of leaf {node_label(v)}") for v in dict.fromkeys(present[:1] + present[-1:])]
    for sign, leaf, text in moves:
        changed = dict(F)
        for k in range(len(leaf) + 1):
            changed[node_label(leaf[:k])] = changed.get(node_label(leaf[:k]), 0.0) + sign
        out.append((text, [changed]))
    return out


STREAM_COST = 10
"""Search budget divisor of the point-stream entries: a 3-step run through ``dpstream serve`` takes 0.4-0.8 ms
(PrivTree alone: 0.05-0.08 ms, cost 2), docs/conformance.md."""

PLANTED_COUNTS = "001-alg1 L6 |001-alg3 L7 "
"""The released counts of the stream boxes (leaf noise, or a vertex's counter): where the power calibration plants a
noiseless count or a shared draw."""


def _stream_spec(synthetic: bool, **extra: Any) -> StatisticalSpec:
    """The statistical checks of a point-stream box (001-alg1/2/3/6): EVENT neighbours over 3 steps, its sweep
    (:func:`_stream_sweep`; ``extra`` goes into every setting), the tree features (with the synthetic points of rule
    (5) if ``synthetic``), the leak sites of :data:`PLANTED_COUNTS`."""
    return StatisticalSpec(_stream_sweep(**extra), Neighbour.EVENT, alphabet=None, horizon=None, length=3,
                           design=_stream_design(synthetic), cost=STREAM_COST, planted=PLANTED_COUNTS)


PRIVTREE_DESIGN = SearchDesign(
    _privtree_families, _privtree_neighbours, lambda p, T: subtree_features(partition(p)),
    lambda p, f: tuple(_leaf_events(F, [node_label(v) for v in partition(p).leaves()]) for F in f),
    lambda p, T: contrasts(subtree_features(partition(p)).names, ("in S(",), total="in S("))

STATISTICAL_NOTE = ("statistical checks: EVENT neighbours (one point inserted or removed at one time: a point "
                    "added to or an insertion dropped from one batch, a present point removed or a removal dropped); "
                    "features: per step and vertex of T, released or not and G(v, t)"
                    " (docs/conformance.md, 'Statistical checks')")

SITES_PRIVTREE = "'001-alg5 L11 t=<t> v=<label>' (laplace, scale lambda) at every visited vertex, depth D included"
SITES_RULE5 = "rule (5): '001-eq5 t=<t> v=<leaf>' (uniform_box, count ceil(G)) per leaf with a positive count"
SITES_COUNTERS = ("counter C_v at its k-th activation scoped '001-alg3 L7 v=<label> / <counter site>' "
                  "(Simple: '001-alg8 L4 t=<k>', scale 2/epsilon)")

def _tree_ops(p: Mapping[str, Any]) -> int:
    """2 D + 4"""
    return 2 * int(p.get("D", 0)) + 4  # Ext_T's division by the fanout at every level, the counters' increments


def _cell_ops(p: Mapping[str, Any]) -> int:
    """3 (D + 1)"""
    return 3 * (int(p.get("D", 0)) + 1)  # lo + i w / fanout at every level


SPLIT_DECISION = ("PrivTree's splits b~(v) > theta (001-alg5 L12, 001-alg7 L16), b~ = max(F(v) - depth(v) delta, "
                  "theta - delta) + z, delta = lambda ln(fanout)")
RULE5_DECISION = "rule (5)'s counts ceil(G(v, t) - 1e-9) (001-eq5)"
PRIVTREE_ERRORS = ErrorModel("sums", numbers_mass, param_ops=6, decisions=(SPLIT_DECISION,))
TREE_ERRORS = ErrorModel("sums", moves_mass, extra_ops=_tree_ops, param_ops=6, decisions=(SPLIT_DECISION,))
SYNTHETIC_ERRORS = ErrorModel("sums", moves_mass, extra_ops=_tree_ops, param_ops=6, cell_ops=_cell_ops,
                              decisions=(SPLIT_DECISION, RULE5_DECISION))


ENTRIES: tuple[Entry, ...] = (
    Entry(
        "001-alg1", "PHDStreamTree", "phdstream", ALG1_SCHEMA, _alg1, TREE_CODEC,
        proof="proofs/proof_phdstream.py", doc=DOC, errata=("E-phdstream-1", "E-phdstream-2", "E-phdstream-3"),
        as_printed=lambda p, n: _alg1(p, n, printed=True),
        vectors=with_integers_as_floats(lambda: _stream_vectors("001-alg1", BASE), "delete-all-d2-D2"),
        must_reject=lambda: [*_param_rejects(BASE), *_step_rejects("001-alg1", BASE)],
        statistical=_stream_spec(False),
        cases=_stream_cases(counters=False),
        notes="the box's input F in C(T) arrives as point batches, turned into nabla F(., t) by (4) "
              "(TreeLevelOnPoints); RELEASE T(t) and G on T(t); as printed: PrivTree scale of 001-alg5 L3. "
              + STATISTICAL_NOTE,
        sites=f"{SITES_PRIVTREE}; leaf noise '001-alg1 L6 t=<t> v=<leaf>' (laplace, scale 2/epsilon)",
        error_model=TREE_ERRORS,
    ),
    Entry(
        "001-alg2", "PHDStream", "phdstream", ALG2_SCHEMA, _alg2, SYNTHETIC_CODEC,
        proof="proofs/proof_phdstream.py", doc=DOC, errata=("E-phdstream-3",),
        as_printed=lambda p, n: _alg2(p, n, printed=True),
        vectors=with_integers_as_floats(
            lambda: _stream_vectors(
                "001-alg2", OLD_ALG2_PARAMS,
                _old("alg2-alg1-d2-D3-eps2-T4", OLD_ALG2_PARAMS, 502, 4, 53,
                     "PHDStream (001-alg2) around PHDStreamTree (001-alg1) on [0,1]^2, D=3, with the synthetic points "
                     "of rule (5), seed=53"),
                extra=(("tree-alg3-simple", {"tree": "001-alg3", "counter": "simple"}, ((6, 0), (3, 2), (2, 1)),
                        ("tree=001-alg3",)),
                       ("tree-alg3-block-B2", {"tree": "001-alg3", "counter": "block", "B": 2},
                        ((5, 0), (3, 1), (2, 2), (1, 1)), ("tree=001-alg3", "counter=block")))), "tree-alg3-block-B2"),
        must_reject=lambda: [*_param_rejects(OLD_ALG2_PARAMS, [
            ("tree-unknown", {**OLD_ALG2_PARAMS, "tree": "001-alg6"}, "tree must be 001-alg1 or 001-alg3"),
            ("counter-with-alg1", {**OLD_ALG2_PARAMS, "counter": "simple"}, "a counter needs tree 001-alg3"),
            ("block-without-B", {**OLD_ALG2_PARAMS, "tree": "001-alg3", "counter": "block"},
             "counter 'block' needs B")]),
            *_step_rejects("001-alg2", OLD_ALG2_PARAMS)],
        statistical=_stream_spec(True, tree="001-alg1"),
        cases=_phdstream_cases,
        notes="rule (5) is post-processing (the claim is the tree algorithm's); as printed: PrivTree scale of "
              "001-alg5 L3, and 001-alg3 L7 as printed with tree 001-alg3. " + STATISTICAL_NOTE,
        sites=f"{SITES_PRIVTREE}; tree 001-alg1: '001-alg1 L6 t=<t> v=<leaf>'; tree 001-alg3: {SITES_COUNTERS}; "
              f"{SITES_RULE5}",
        error_model=SYNTHETIC_ERRORS,
    ),
    Entry(
        "001-alg3", "PHDStreamTree with counters", "phdstream", COUNTERS_SCHEMA, _alg3, TREE_CODEC,
        proof="proofs/proof_selective_counting.py", doc=DOC,
        errata=("E-phdstream-2", "E-phdstream-3", "E-phdstream-5"),
        as_printed=lambda p, n: _alg3(p, n, printed=True),
        vectors=with_integers_as_floats(
            lambda: _stream_vectors(
                "001-alg3", OLD_ALG3_PARAMS,
                _old("alg3-simple-d2-D3-eps2-T5", OLD_ALG3_PARAMS, 501, 5, 52,
                     "PHDStreamTree with Simple counters (001-alg3) on [0,1]^2, D=3, 5 steps of insertions and "
                     "deletions, seed=52"), extra=BLOCK_STREAMS),
            "block-B2-d2-D3"),
        must_reject=lambda: [*_param_rejects(OLD_ALG3_PARAMS, _counter_rejects(OLD_ALG3_PARAMS)),
                             *_step_rejects("001-alg3", OLD_ALG3_PARAMS)],
        statistical=_stream_spec(False, counter="simple"),
        cases=_stream_cases(counters=True),
        notes="an instance of online selective counting (001-alg4); input as for 001-alg1 (point batches, (4)); "
              "as printed: d(v, t) = C_v's output (E-phdstream-5) and PrivTree scale of 001-alg5 L3. "
              + STATISTICAL_NOTE,
        sites=f"{SITES_PRIVTREE}; {SITES_COUNTERS}",
        error_model=TREE_ERRORS,
    ),
    Entry(
        "001-alg4", "Online selective counting", "phdstream", ParamSchema(()), None, None,
        proof="proofs/proof_selective_counting.py", doc=DOC, errata=("E-phdstream-7",),
        realised_by=("001-alg3", "003-alg3"),
        notes="a meta-algorithm (counters and a counter-selecting M are its inputs), no standalone instance: "
              "dpstream.selective_counting.SelectiveCounting runs it for 001-alg3 (PrivTree selects the "
              "leaf counters) and for 003-alg3 (dpstream.tabular.selective; the exponential mechanism selects a "
              "query's counter); their vectors exercise it",
    ),
    Entry(
        "001-alg5", "PrivTree_T (Appendix A)", "phdstream", PRIVTREE_SCHEMA, _privtree, PRIVTREE_CODEC,
        proof="proofs/proof_privtree.py", doc=DOC, errata=("E-phdstream-1", "E-phdstream-3", "E-phdstream-4"),
        as_printed=lambda p, n: _privtree(p, n, printed=True),
        vectors=with_integers_as_floats(_alg5_vectors, "fanout3-D2"),
        must_reject=_privtree_rejects,
        statistical=StatisticalSpec(_sweep(), Neighbour.EVENT, alphabet=None, horizon=None, length=1,
                                    design=PRIVTREE_DESIGN, cost=2),
        cases=_privtree_cases,
        notes="one-shot, served as a stream of length 1: INPUT the tree function F, {label: F(v)} (absent vertices "
              "count 0; consistent (6) within 1e-9 (1 + |F(v)| + |sum over the children|)), RELEASE the subtree S as "
              "nodes and leaves, each sorted by (depth, path compared as numbers), the breadth-first visiting order; "
              "a second input is refused (T = 1). With e = epsilon: lambda = max(D, 1)/e (general; 1/e at D = 0), "
              "(2 beta - 1)/((beta - 1) e) (proof), (2 beta - 1)/(beta - 1) * 2/e (printed); delta = lambda ln beta; "
              "every visited v draws z, b(v) = max(F(v) - depth(v) delta, theta - delta), and v splits iff "
              "b(v) + z > theta and depth(v) < D; d is checked but enters neither the draws nor the release "
              "(docs/phdstream.md, 'PrivTree_T (001-alg5), exactly'); as printed: lambda of L3 as printed "
              "(E-phdstream-4). Statistical checks: F counts a point set; F' = F plus or minus one leaf's path "
              "(one point inserted or removed, the C(T) norm); features: every vertex of T in S or not",
        sites="'001-alg5 L11 v=<label>' (laplace, scale lambda) at every visited vertex (no t: one-shot)",
        error_model=PRIVTREE_ERRORS,
    ),
    Entry(
        "001-alg6", "Compute-efficient PHDStream (Appendix C)", "phdstream", COUNTERS_SCHEMA, _alg6, SYNTHETIC_CODEC,
        proof="proofs/proof_efficient_equivalence.py", doc=DOC, errata=("E-phdstream-3", "E-phdstream-6"),
        as_printed=lambda p, n: _alg6(p, n, printed=True),
        vectors=with_integers_as_floats(
            lambda: _stream_vectors(
                "001-alg6", OLD_ALG3_PARAMS,
                _old("alg6-simple-d2-D3-eps2-T5", OLD_ALG3_PARAMS, 501, 5, 52,
                     "compute-efficient PHDStream (001-alg6/alg7) with Simple counters on [0,1]^2, D=3; the same "
                     "releases as 001-alg2 around 001-alg3 on this tape (section C.1), seed=52"), extra=BLOCK_STREAMS),
            "block-B2-d2-D3"),
        must_reject=lambda: [*_param_rejects(OLD_ALG3_PARAMS, _counter_rejects(OLD_ALG3_PARAMS)),
                             *_step_rejects("001-alg6", OLD_ALG3_PARAMS)],
        statistical=_stream_spec(True, counter="simple"),
        cases=_stream_cases(counters=True),
        notes="releases what 001-alg2 around 001-alg3 (same counter) releases on the same tape (section C.1); as "
              "printed: L3's lambda with the full eps and counters at eps/4 (E-phdstream-6). " + STATISTICAL_NOTE,
        sites=f"Algorithm 7 L15 at the PrivTree site {SITES_PRIVTREE}; L20 {SITES_COUNTERS}; {SITES_RULE5}",
        error_model=SYNTHETIC_ERRORS,
    ),
    Entry(
        "001-alg7", "Modified PrivTree_T subroutine (Appendix C)", "phdstream", ParamSchema(()), None, None,
        proof="proofs/proof_efficient_equivalence.py", doc=DOC, errata=("E-phdstream-6",),
        realised_by=("001-alg6",),
        notes="a subroutine of 001-alg6 (EfficientPHDStream._algorithm7): it reads and updates 001-alg6's maps "
              "C_a, C_n, C_d, so it has no standalone instance; 001-alg6's vectors exercise it",
    ),
)
