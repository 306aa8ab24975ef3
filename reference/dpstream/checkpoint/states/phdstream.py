"""Documented states of PHDStream (paper 001, docs/phdstream.md): Algorithms 1, 2, 3, 6 and the section 5.3
baselines. Vertices of T are written as their paths of child indices (the root is ``[]``)."""

from __future__ import annotations

from collections import Counter as Multiset
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from dpstream.checkpoint.kinds import (
    BOOL,
    COUNT,
    NODE,
    NUMBER,
    POSITIVE,
    REAL,
    Array,
    Component,
    ComponentPairs,
    EnumOf,
    Function,
    Int,
    Kind,
    ListOf,
    Nullable,
    Pairs,
    Real,
    Record,
    SetOf,
    TupleOf,
    Variant,
)
from dpstream.checkpoint.spec import Field, StateSpec, require
from dpstream.checkpoint.states.common import AS_PRINTED, EPSILON, T_STEPS, check_steps
from dpstream.phdstream.baselines import (
    InitPrivTreeThenCounters,
    OfflinePrivTreeOnDifferential,
    OfflinePrivTreeOnStream,
)
from dpstream.phdstream.counters_tree import PHDStreamTreeWithCounters
from dpstream.phdstream.efficient import EfficientPHDStream
from dpstream.phdstream.partition import BooleanCubePartition, HypercubePartition, Node, Partition
from dpstream.phdstream.phdstream import PHDStream
from dpstream.phdstream.phdstream_tree import PHDStreamTree
from dpstream.phdstream.privtree import LambdaRule, Subtree
from dpstream.phdstream.stream import SyntheticRelease, TreeRelease
from dpstream.phdstream.tree_function import tree_function
from dpstream.selective_counting import SelectiveRelease

__all__ = ["F_TRUE", "PARTITION", "SPECS", "SUBTREE", "check_counts", "check_points"]

FAMILY = "phdstream"

PARTITION = Variant((
    ("hypercube", Record(HypercubePartition, (("d", Int(1)), ("max_depth", COUNT), ("fanout", Int(2))),
                         read=lambda p: {"d": p.dimension, "max_depth": p.max_depth, "fanout": p.beta},
                         name="HypercubePartition")),
    ("boolean-cube", Record(BooleanCubePartition, (("d", Int(1)), ("max_depth", COUNT)),
                            read=lambda p: {"d": p.dimension, "max_depth": p.max_depth},
                            name="BooleanCubePartition")),
))


def _subtree(nodes: frozenset[Node], leaves: tuple[Node, ...]) -> Subtree:
    inner = {v[:-1] for v in nodes if v}
    computed = tuple(sorted((v for v in nodes if v not in inner), key=lambda u: (len(u), u)))
    if () not in nodes or any(v and v[:-1] not in nodes for v in nodes) or leaves != computed:
        raise ValueError("a subtree holds the root and every vertex's parent, and its leaves are the vertices "
                         "without a child in it, in (depth, path) order")
    return Subtree(nodes, leaves)


SUBTREE = Record(Subtree, (("nodes", SetOf(NODE)), ("leaves", TupleOf(NODE))), make=_subtree)
VALUES = Pairs(NODE, REAL)
TREE_RELEASE = Record(TreeRelease, (("t", Int(1)), ("tree", SUBTREE), ("values", VALUES)))
SYNTHETIC_RELEASE = Record(SyntheticRelease, (
    ("t", Int(1)), ("tree", SUBTREE), ("leaf_values", VALUES), ("counts", Pairs(NODE, COUNT)),
    ("points", Array("float64", 2)), ("node_values", VALUES)))
SELECTIVE_RELEASE = Record(SelectiveRelease, (("t", Int(1)), ("l", SUBTREE), ("output", TupleOf(NUMBER))))


class _Multiset(Kind):
    """The true multiset f(., t): [point, count] pairs (count >= 1) in its order."""

    doc = "[point, count] pairs (point: list of reals; count >= 1)"

    def encode(self, value: Any, w: Any, path: str) -> Any:
        return Pairs(TupleOf(REAL), Int(1)).encode(value, w, path)

    def decode(self, raw: Any, r: Any, path: str) -> Any:
        return Multiset(Pairs(TupleOf(REAL), Int(1)).decode(raw, r, path))


MULTISET = _Multiset()

PARAMS = (
    Field("partition", PARTITION, "the tree T: Omega = [0, 1]^d (fanout beta) or {0, 1}^d, depth D = max_depth"),
    EPSILON,
    Field("theta", Real(non_negative=True), "threshold count theta"),
)
LAMBDA_RULE = Field("lambda_rule", EnumOf(LambdaRule), "PrivTree's scale rule (001-alg5 L3, docs/errata E-phdstream-3)")
F_TRUE = Field("f", MULTISET, "the TRUE multiset f(., t) of the points present (validates removals)",
               attr="_true.present")
F_TREE = Field("F", Pairs(NODE, REAL), "the TRUE F(., t) by (4) on the vertices holding points", attr="_true.F")


# --- checks ---------------------------------------------------------------------------------------------------

def _vertices(partition: Partition, nodes: Iterable[Node], what: str) -> None:
    bad = next((v for v in nodes if not partition.is_node(v)), None)
    require(bad is None, f"{what}: {list(bad or ())} is not a vertex of T")


def check_points(partition: Partition, present: Mapping[tuple[float, ...], int]) -> None:
    if present:
        try:
            partition.validate_points(np.asarray(list(present), dtype=np.float64))
        except ValueError as exc:
            require(False, f"f: {exc}")


def check_counts(partition: Partition, present: Mapping[tuple[float, ...], int], F: Mapping[Node, float]) -> None:
    """F(., t) must be (4) of the multiset f(., t)."""
    _vertices(partition, F, "F")
    if present:
        pts = np.asarray(list(present), dtype=np.float64)
        expected = {v: x for v, x in tree_function(partition, pts, list(present.values())).items() if x}
    else:
        expected = {}
    require(dict(F) == expected, "F(., t) is not the count (4) of the multiset f(., t)")


def _check_releases(partition: Partition, items: list[Any], t: int) -> None:
    check_steps(t, None, items)
    for i, release in enumerate(items, start=1):
        require(release.t == i, f"release {i} is stamped t = {release.t}")
        require(release.tree.is_valid(partition), f"the tree of release {i} is not a subtree of T")


def _check_tree_level(o: PHDStreamTree | PHDStreamTreeWithCounters) -> None:
    """G holds one value per vertex of T in breadth-first order; F has vertices of T and F(leaf) >= 0 (no negative
    counts); one release per step, stamped 1..t, each tree a subtree of T; the last release's G is G."""
    require(list(o.G) == list(o.partition.nodes()), "G holds one value per vertex of T, in breadth-first order")
    _vertices(o.partition, o._true.F, "F")
    D = o.partition.max_depth
    require(all(x >= -1e-9 for v, x in o._true.F.items() if len(v) == D), "F(leaf, t) >= 0: no negative counts")
    _check_releases(o.partition, o.releases, o.t)
    if o.releases:
        require(dict(o.releases[-1].values) == o.G, "the last release's G(., t) is G")


def _check_with_counters(o: PHDStreamTreeWithCounters) -> None:
    """those of PHDStreamTree; Algorithm 4 has made t selections, which are the trees T(t); J_l lists the times l
    was selected; C_v and last_output are on vertices of T."""
    _check_tree_level(o)
    s = o.selective
    require(s.t == o.t and len(s.releases) == o.t, "Algorithm 4 has made t selections")
    require([r.l for r in s.releases] == [r.tree for r in o.releases], "the selections l_t are the trees T(t)")
    times = {l: [r.t for r in s.releases if r.l == l] for l in dict.fromkeys(r.l for r in s.releases)}
    require(times == s.J, "J_l holds the times counter l was selected")
    _vertices(o.partition, o.pool.counters, "C_v")
    _vertices(o.partition, o.last_output, "last_output")


def _check_phdstream(o: PHDStream) -> None:
    """the points of f lie in Omega; the tree algorithm has made t steps and its trees are the releases'; one
    release per step, stamped 1..t, each tree a subtree of T."""
    check_points(o.partition, o._true.present)
    require(o.tree.t == o.t, "the tree algorithm has made t steps")
    _check_releases(o.partition, o.releases, o.t)
    if o.releases:
        require([r.tree for r in o.releases] == [r.tree for r in o.tree.releases], "the trees T(t) are the tree "
                                                                                    "algorithm's")


def _check_efficient(o: EfficientPHDStream) -> None:
    """the points of f lie in Omega; one release and one visited count (= |T(t)|) per step; C_a, C_n, C_d and C_v
    are on vertices of T; C_n(v) is the last output of v's counter."""
    check_points(o.partition, o._true.present)
    _check_releases(o.partition, o.releases, o.t)
    require(len(o.visited_per_step) == o.t, "one visited count per step")
    require(all(n == len(r.tree) for n, r in zip(o.visited_per_step, o.releases, strict=True)),
            "the vertices visited at t are those of T(t)")
    for name in ("C_a", "C_n", "C_d"):
        _vertices(o.partition, getattr(o, name), name)
    _vertices(o.partition, o.counters.counters, "C_v")
    require(all(o.C_n.get(v) == c.releases[-1] for v, c in o.counters.counters.items() if c.releases),
            "C_n(v) is the last output of v's counter (L20)")


def _check_baseline(o: Any) -> None:
    """the points of f lie in Omega; F is (4) of f; one release per step, stamped 1..t, each tree a subtree of T."""
    check_points(o.partition, o._true.present)
    check_counts(o.partition, o._true.present, o._true.F)
    _check_releases(o.partition, o.releases, o.t)


def _check_init_then_counters(o: InitPrivTreeThenCounters) -> None:
    """those of the baselines; S exists from the first step on, is a subtree of T, and has one counter and one
    initial count per leaf, each counter having read t - 1 inputs."""
    _check_baseline(o)
    require((o.S is None) == (o.t == 0), "S is chosen at the first step")
    if o.S is not None:
        require(o.S.is_valid(o.partition), "S is a subtree of T")
        require(list(o.counters) == list(o.S.leaves) and list(o.initial) == list(o.S.leaves),
                "one counter and one initial count per leaf of S")
        require(all(c.t == o.t - 1 for c in o.counters.values()), "the leaf counters count from t0 + 1 on")


# --- specs -------------------------------------------------------------------------------------------------------

PHDSTREAM_TREE = StateSpec(
    PHDStreamTree, FAMILY, "001-alg1",
    "PHDStreamTree (naive): T(t) by PrivTree on G(., t-1) + nabla F(., t), leaf noise, G on all of V(T).",
    params=(*PARAMS, LAMBDA_RULE),
    variables=(
        T_STEPS,
        Field("G", Pairs(NODE, REAL), "G(v, t) on every vertex of T (L7)"),
        F_TREE,
        Field("releases", ListOf(TREE_RELEASE), "the releases (t, T(t), G(., t)) so far"),
    ),
    check=_check_tree_level,
)


def _put_selections(o: PHDStreamTreeWithCounters, releases: list[SelectiveRelease[Subtree]]) -> None:
    o.selective.releases = releases
    o.selective.t = len(releases)


def _put_J(o: PHDStreamTreeWithCounters, J: dict[Subtree, list[int]]) -> None:
    o.selective.J = J
    for l in J:  # the views L(S) of the selected subtrees, made by Algorithm 4 as at their first selection
        o.selective.counter(l)


PHDSTREAM_TREE_WITH_COUNTERS = StateSpec(
    PHDStreamTreeWithCounters, FAMILY, "001-alg3 (as 001-alg4)",
    "PHDStreamTree with counters (naive): a counter C_v (eps/2) per vertex, the leaves of T(t) stepped.",
    params=(*PARAMS, Field("counter", Function(), "the counter factory of C_v (eps, noise) -> counter",
                           attr="pool.factory"), LAMBDA_RULE, AS_PRINTED),
    variables=(
        T_STEPS,
        Field("G", Pairs(NODE, REAL), "G(v, t) on every vertex of T (L8)"),
        F_TREE,
        Field("C_v", ComponentPairs(NODE, lambda o, v: o.pool.get(v), "[vertex, counter state] pairs"),
              "the counters C_v made so far (budget eps/2, scope \"001-alg3 L7 v=<v>\")", attr="pool.counters"),
        Field("last_output", Pairs(NODE, NUMBER), "C_v's previous output (d(v, t) is the increment, L7)"),
        Field("selections", ListOf(SELECTIVE_RELEASE), "Algorithm 4's releases (t, l_t = T(t), C_l's outputs)",
              get=lambda o: o.selective.releases, put=_put_selections),
        Field("J", Pairs(SUBTREE, ListOf(Int(1))), "J_l: the times each subtree l was selected (001-alg4 L6)",
              get=lambda o: o.selective.J, put=_put_J),
        Field("releases", ListOf(TREE_RELEASE), "the releases (t, T(t), G(., t)) so far"),
    ),
    check=_check_with_counters,
)


def _counter_of(o: PHDStream) -> Any:
    return o.tree.pool.factory if isinstance(o.tree, PHDStreamTreeWithCounters) else None


def _as_printed_of(o: PHDStream) -> bool:
    return o.tree.as_printed if isinstance(o.tree, PHDStreamTreeWithCounters) else False


PHDSTREAM = StateSpec(
    PHDStream, FAMILY, "001-alg2",
    "PHDStream: point batches -> F by (4) -> Algorithm 1 (or 3 with a counter) -> synthetic points by rule (5).",
    params=(*PARAMS,
            Field("counter", Function(nullable=True), "the counter factory (null: Algorithm 1; else Algorithm 3)",
                  get=_counter_of),
            Field("lambda_rule", EnumOf(LambdaRule), LAMBDA_RULE.doc, attr="tree.lambda_rule"),
            Field("as_printed", BOOL, "Algorithm 3's printed d(v, t) (E-phdstream-5)", get=_as_printed_of)),
    variables=(
        T_STEPS,
        F_TRUE,
        Field("tree", Component(doc="PHDStreamTree or PHDStreamTreeWithCounters state"),
              "the tree algorithm (Algorithm 1 or 3) that PHDStream runs"),
        Field("releases", ListOf(SYNTHETIC_RELEASE), "the releases (t, T(t), G on its leaves, counts, points g(., t))"),
    ),
    check=_check_phdstream,
)

EFFICIENT = StateSpec(
    EfficientPHDStream, FAMILY, "001-alg6 / 001-alg7",
    "Compute-efficient PHDStream: C_a, C_n, C_d on the vertices visited so far, a counter per vertex.",
    params=(*PARAMS, Field("counter", Function(), "the counter factory of C_v", attr="counters.factory"),
            LAMBDA_RULE, AS_PRINTED),
    derived=(Field("lam", POSITIVE, "lambda, PrivTree's scale (L3)"), Field("delta", REAL, "delta = lambda ln beta"),
             Field("epsilon_prime", POSITIVE, "eps' = eps/2 of Algorithm 7")),
    variables=(
        T_STEPS,
        F_TRUE,
        Field("C_a", Pairs(NODE, REAL), "C_a(v): what v received from its ancestors (10)"),
        Field("C_n", Pairs(NODE, REAL), "C_n(v): the output of v's counter (L20)"),
        Field("C_d", Pairs(NODE, REAL), "C_d(v): what v received from its descendants (11)"),
        Field("C_v", ComponentPairs(NODE, lambda o, v: o.counters.get(v), "[vertex, counter state] pairs"),
              "the counters C_v made so far (scope \"001-alg3 L7 v=<v>\")", attr="counters.counters"),
        Field("visited_per_step", ListOf(Int(1)), "|T(t)| per step (the work log)"),
        Field("releases", ListOf(SYNTHETIC_RELEASE), "the releases so far"),
    ),
    check=_check_efficient,
)

BASELINE_VARIABLES = (
    T_STEPS, F_TRUE,
    Field("F", Pairs(NODE, REAL), "the TRUE F(., t) by (4) of f(., t) (nonzero vertices)", attr="_true.F"),
)
BASELINE_RELEASES = Field("releases", ListOf(SYNTHETIC_RELEASE), "the releases so far")
BASELINE_LAMBDA = Field("lambda_rule", EnumOf(LambdaRule), "PrivTree's scale rule (default: the App. A scale)")

OFFLINE_ON_STREAM = StateSpec(
    OfflinePrivTreeOnStream, FAMILY, "001-sec5.3 baseline 1",
    "Baseline 1: an independent PrivTree + Counting on f(., t) at every t (not eps-DP over time).",
    params=(*PARAMS, BASELINE_LAMBDA),
    variables=(*BASELINE_VARIABLES, BASELINE_RELEASES),
    check=_check_baseline,
)

OFFLINE_ON_DIFFERENTIAL = StateSpec(
    OfflinePrivTreeOnDifferential, FAMILY, "001-sec5.3 baseline 2",
    "Baseline 2: PrivTree + Counting on the insertions of each batch, scaled to a private estimate of |f(., t)|.",
    params=(*PARAMS, BASELINE_LAMBDA, AS_PRINTED),
    variables=(*BASELINE_VARIABLES, Field("N_hat", REAL, "N(t), the private estimate of |f(., t)|"),
               BASELINE_RELEASES),
    check=_check_baseline,
)

INIT_THEN_COUNTERS = StateSpec(
    InitPrivTreeThenCounters, FAMILY, "001-sec5.3 baseline 3",
    "Baseline 3: PrivTree + Counting at the first step gives S, then a counter (eps) per leaf of S.",
    params=(*PARAMS, Field("counter", Function(), "the counter factory of the leaf counters", attr="factory"),
            BASELINE_LAMBDA),
    variables=(
        *BASELINE_VARIABLES,
        Field("S", Nullable(SUBTREE), "the subtree chosen at the first step (null before it)"),
        Field("initial", Pairs(NODE, REAL), "the noisy leaf counts of the first step"),
        Field("counters", ComponentPairs(NODE, lambda o, v: o.leaf_counter(v), "[leaf, counter state] pairs"),
              "the leaf counters (budget eps, scope \"001-sec5.3 counter v=<v>\")"),
        BASELINE_RELEASES,
    ),
    check=_check_init_then_counters,
)

SPECS = (PHDSTREAM_TREE, PHDSTREAM_TREE_WITH_COUNTERS, PHDSTREAM, EFFICIENT, OFFLINE_ON_STREAM,
         OFFLINE_ON_DIFFERENTIAL, INIT_THEN_COUNTERS)

