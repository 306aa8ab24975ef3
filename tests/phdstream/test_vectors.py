"""Known-answer vectors of PHDStream (seed 001) in the shipped corpus: 001-alg5, 001-alg1, 001-alg3, 001-alg6, 001-alg2.

The vectors are generated from the catalog (``dpstream.catalog.phdstream``; encodings in docs/phdstream.md,
"Known-answer vectors"). Each one is

* replayed through the implementations that must reproduce it other than the catalog's own (which
  ``dpstream vectors verify`` replays): 001-alg1 also through the naive tree algorithm on nabla F and through
  PHDStream around it; 001-alg3 through the naive Algorithm 3 on nabla F and the compute-efficient Algorithm 6/7;
  001-alg6 through Algorithm 6/7 and the naive 001-alg2 around 001-alg3; 001-alg2 around 001-alg3 through
  Algorithm 6/7 too -- every tape site used, compared with ``expected`` (exact for trees, labels and counts, 1e-9
  for floats: the efficient algorithm sums in another order);
* recomputed from the tape alone by the printed boxes written again here (nothing of ``dpstream.phdstream`` is
  called by the recomputation): PrivTree_T (001-alg5 L3-L13) with the three scales lambda (general D/eps, proof
  (2b-1)/((b-1) eps), printed (2b-1)/(b-1) 2/eps), delta = lambda ln beta; Algorithm 1 (L5-L7) / Algorithm 3 (L6-L8)
  with Ext_T written from the verbal rule of section 3.2 (a unit at u is 1 on u's ancestors and u, beta^-k on its
  descendants at distance k); the Simple counter (001-alg8 L4) and the Block counter (001-alg9 L5-L12) of every
  vertex, activated only when the vertex is a leaf of T(t), d(v, t) = the increment of its output; rule (5)
  (ceil(G(v)) uniform points in leaf v, the tape's rows);
* for the Simple counter also checked against the closed form of G: if v lies in T(s) for every s <= t, then
  G(v, t) = F(v, t) + the sum of the counter draws of the leaves of T(s) below v, s <= t.

Every PrivTree decision and every rule (5) ceiling of a vector is at least MARGIN from its threshold, so that an
implementation summing in another order takes the same decisions. A corrupted vector (one expected value, label or
count changed, or one tape value) is rejected by both checks.
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import pytest

from dpstream.catalog import entry
from dpstream.catalog.codecs.phdstream import encode_subtree, encode_synthetic, encode_tree_release, node_of
from dpstream.catalog.phdstream import counter_factory, lambda_rule, partition
from dpstream.insecure import InsecureSeededNoise, TapeReplay
from dpstream.noise import BaseNoiseSource, DrawKind, Params
from dpstream.phdstream import (
    EfficientPHDStream,
    PHDStream,
    PHDStreamTree,
    PHDStreamTreeWithCounters,
    PointEvents,
    privtree,
    tree_function,
)
from dpstream.tape import Draw, Tape, TapeError
from dpstream.testing import replay_run
from dpstream.vectors import KnownAnswerVector
from dpstream.vectors.corpus import known_answer

ATOL = 1e-9
MARGIN = 1e-6
ANCHORS = ("001-alg5", "001-alg1", "001-alg3", "001-alg6", "001-alg2")
VECTORS: list[KnownAnswerVector] = [v for a in ANCHORS for v in known_answer(a)]
IDS = [v.id for v in VECTORS]
RECREATED = ("001-alg5/privtree-d2-D4-eps2-theta1", "001-alg3/alg3-simple-d2-D3-eps2-T5",
             "001-alg6/alg6-simple-d2-D3-eps2-T5", "001-alg2/alg2-alg1-d2-D3-eps2-T4")
"""The four vectors of the former tests/phdstream/vectors (same parameters, inputs and seeds)."""

Vertex = tuple[int, ...]
Release = dict[str, Any]


def params(v: KnownAnswerVector) -> dict[str, Any]:
    return entry(v.algorithm).params.validate(v.params)


# ------------------------------------------------------------------------------------------ comparison
def compare(got: Sequence[Release], want: Sequence[Release]) -> None:
    """Trees, labels and counts exactly; node values and points to ATOL."""
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert set(g) == set(w), (sorted(g), sorted(w))
        for key, expected in w.items():
            if key == "values":
                assert list(g[key]) == list(expected)
                for label, x in expected.items():
                    assert abs(g[key][label] - x) <= ATOL, (w.get("t"), label, g[key][label], x)
            elif key == "points":
                assert len(g[key]) == len(expected)
                for row, row_w in zip(g[key], expected, strict=True):
                    assert len(row) == len(row_w) and all(abs(a - b) <= ATOL for a, b in zip(row, row_w, strict=True))
            else:
                assert g[key] == expected, (w.get("t"), key, g[key], expected)


# ------------------------------------------------------------------------------------------ the implementations
class RuleFiveAside(BaseNoiseSource):
    """The tape for every site but rule (5)'s: Algorithm 6 L8 samples g(., t) by (5), which Algorithm 1/3 have not,
    so the 001-eq5 draws (post-processing) come from a seeded source and are listed in ``aside``."""

    def __init__(self, replay: TapeReplay, aside: BaseNoiseSource) -> None:
        self.replay = replay
        self.other = aside
        self.aside: list[str] = []

    def _draw(self, site: str, kind: DrawKind, params: Params) -> Any:
        if site.startswith("001-eq5 "):
            self.aside.append(site)
            return self.other._draw(site, kind, params)
        return self.replay._draw(site, kind, params)


def _batches(v: KnownAnswerVector) -> list[PointEvents]:
    d = int(v.params["d"])
    return [PointEvents.of(x["points"], x["moves"]) if x["points"] else PointEvents.empty(d) for x in v.inputs]


def _tree_part(releases: Sequence[Any]) -> list[Release]:
    return [{k: encode_synthetic(r)[k] for k in ("t", "nodes", "leaves", "values")} for r in releases]


def _with_rule5_aside(v: KnownAnswerVector, make: Callable[[BaseNoiseSource], Any]) -> list[Any]:
    """Run ``make(source)`` on the vector's batches with every draw but rule (5)'s from the tape."""
    with TapeReplay(v.tape) as replay:
        source = RuleFiveAside(replay, InsecureSeededNoise(0))
        alg = make(source)
        out = [alg.step(b) for b in _batches(v)]
    # the only draws not on the tape are rule (5)'s, one per leaf with a positive count
    assert source.aside == [f"001-eq5 t={r.t} v={label}" for r in out for label, n in encode_synthetic(r)["counts"]
                            .items() if n > 0]
    return out


def implementation_releases(v: KnownAnswerVector) -> dict[str, list[Release]]:
    """The vector's releases as computed by the implementations that must reproduce it (every tape site used)."""
    p = params(v)
    P, rule = partition(p), lambda_rule(p, False)
    eps, theta = p["epsilon"], p["theta"]
    if v.algorithm == "001-alg5":
        F = {node_of(label): x for label, x in v.inputs[0].items()}
        with TapeReplay(v.tape) as replay:
            S = privtree(P, F, eps, theta, noise=replay, lambda_rule=rule)
        return {"privtree": [encode_subtree(S)]}
    nabla_F = [tree_function(P, x["points"], x["moves"]) for x in v.inputs]
    batches = _batches(v)
    if v.algorithm == "001-alg1":
        naive = replay_run(lambda n: PHDStreamTree(P, eps, theta, noise=n, lambda_rule=rule), nabla_F, v.tape)
        around = _with_rule5_aside(v, lambda n: PHDStream(P, eps, theta, noise=n, lambda_rule=rule))
        return {"001-alg1 on nabla F": [encode_tree_release(r) for r in naive],
                "001-alg2 around 001-alg1": _tree_part(around)}
    if v.algorithm == "001-alg3":
        cf = counter_factory(p)
        naive = replay_run(lambda n: PHDStreamTreeWithCounters(P, eps, theta, noise=n, counter=cf, lambda_rule=rule),
                           nabla_F, v.tape)
        efficient = _with_rule5_aside(v, lambda n: EfficientPHDStream(P, eps, theta, noise=n, counter=cf,
                                                                      lambda_rule=rule))
        return {"001-alg3 naive on nabla F": [encode_tree_release(r) for r in naive],
                "001-alg6/7 efficient": _tree_part(efficient)}
    if v.algorithm == "001-alg6" or p["tree"] == "001-alg3":
        cf = counter_factory(p)
        efficient = replay_run(lambda n: EfficientPHDStream(P, eps, theta, noise=n, counter=cf, lambda_rule=rule),
                               batches,
                               v.tape)
        naive = replay_run(lambda n: PHDStream(P, eps, theta, noise=n, counter=cf, lambda_rule=rule), batches, v.tape)
        return {"001-alg6/7 efficient": [encode_synthetic(r) for r in efficient],
                "001-alg2 around 001-alg3 naive": [encode_synthetic(r) for r in naive]}
    return {"001-alg2 around 001-alg1": [encode_synthetic(r) for r in replay_run(
        lambda n: PHDStream(P, eps, theta, noise=n, lambda_rule=rule), batches, v.tape)]}


# ------------------------------------------------------------------------------------------ from scratch
def label(v: Vertex) -> str:
    return "root" if not v else ".".join(map(str, v))


def vertex(name: str) -> Vertex:
    return () if name == "root" else tuple(int(i) for i in name.split("."))


def bfs_key(v: Vertex) -> tuple[int, Vertex]:
    return len(v), v


def children(v: Vertex, beta: int, D: int) -> list[Vertex]:
    return [(*v, i) for i in range(beta)] if len(v) < D else []


def vertices(beta: int, D: int) -> list[Vertex]:
    return [v for k in range(D + 1) for v in itertools.product(range(beta), repeat=k)]


def locate(x: Sequence[float], d: int, D: int, beta: int) -> Vertex:
    """The leaf of T holding x: the vertex at depth k cuts coordinate k mod d into beta equal parts."""
    low, width, path = [0.0] * d, [1.0] * d, []
    for k in range(D):
        j = k % d
        width[j] /= beta
        i = min(int((x[j] - low[j]) // width[j]), beta - 1)
        low[j] += i * width[j]
        path.append(i)
    return tuple(path)


def cell(v: Vertex, d: int, beta: int) -> tuple[list[float], list[float]]:
    low, width = [0.0] * d, [1.0] * d
    for k, i in enumerate(v):
        j = k % d
        width[j] /= beta
        low[j] += i * width[j]
    return low, [a + w for a, w in zip(low, width, strict=True)]


class TapeReader:
    """Looks draws up by site, checks their kind and parameters, and records which sites were read."""

    def __init__(self, tape: Tape) -> None:
        self.draws: dict[str, Draw] = tape.by_site()
        self.used: set[str] = set()

    def get(self, site: str, kind: str, **params: Any) -> Any:
        assert site not in self.used, site
        draw = self.draws[site]
        assert draw.kind.value == kind and set(draw.params) == set(params), (site, draw.kind, draw.params)
        for name, value in params.items():
            assert draw.params[name] == pytest.approx(value, rel=1e-12, abs=0.0), (site, name)
        self.used.add(site)
        return draw.value

    def all_used(self) -> bool:
        return self.used == set(self.draws)


def scale(p: Mapping[str, Any], eps: float) -> float:
    """lambda of 001-alg5 L3 for budget eps under the vector's rule (E-phdstream-3, -4)."""
    beta, D = int(p["fanout"]), int(p["D"])
    rule = p["lambda_rule"]
    if rule == "general":
        return max(D, 1) / eps
    if rule == "proof":
        return (2 * beta - 1) / ((beta - 1) * eps)
    assert rule == "printed"
    return (2 * beta - 1) / (beta - 1) * 2.0 / eps


def privtree_scratch(F: Mapping[Vertex, float], beta: int, D: int, lam: float, theta: float, reader: TapeReader,
                     t: int | None, stats: dict[str, int]) -> list[Vertex]:
    """001-alg5 as printed (L3 with lambda given): breadth first, b = max(F(v) - depth delta, theta - delta) + Lap,
    split iff b > theta (a vertex at depth D draws too, and has no children)."""
    delta = lam * math.log(beta)  # L3
    S: list[Vertex] = []  # L4
    U: list[Vertex] = [()]  # L5
    while U:  # L6
        v = U.pop(0)  # L8
        S.append(v)  # L7
        raw = F.get(v, 0.0) - len(v) * delta  # L9
        b = max(raw, theta - delta)  # L10
        where = f"001-alg5 L11 v={label(v)}" if t is None else f"001-alg5 L11 t={t} v={label(v)}"
        b_tilde = b + float(reader.get(where, "laplace", scale=lam))  # L11
        assert abs(b_tilde - theta) > MARGIN, f"{where}: the decision is too close to theta to be robust"
        stats["clamped"] += raw < theta - delta
        if b_tilde > theta:  # L12
            U.extend(children(v, beta, D))  # L13
            stats["split"] += len(v) < D
        else:
            stats["stopped"] += len(v) < D
        stats["at_depth_D"] += len(v) == D
    return S


def leaves_of(S: Sequence[Vertex], beta: int, D: int) -> list[Vertex]:
    inside = set(S)
    return sorted((v for v in S if not any(c in inside for c in children(v, beta, D))), key=bfs_key)


def ext_weight(u: Vertex, w: Vertex, beta: int) -> float:
    """Weight of a unit at u in Ext_T(.)(w): 1 on u's ancestors and u, beta^-k on descendants at distance k."""
    if w[: len(u)] == u:
        return float(beta) ** -(len(w) - len(u))
    return 1.0 if u[: len(w)] == w else 0.0


def recompute_privtree(v: KnownAnswerVector, stats: dict[str, int]) -> list[Release]:
    p = v.params
    beta, D = int(p["fanout"]), int(p["D"])
    given = {vertex(name): float(x) for name, x in v.inputs[0].items()}
    assert set(given) <= set(vertices(beta, D))
    F = {u: given.get(u, 0.0) for u in vertices(beta, D)}  # absent vertices count 0 (docs/phdstream.md)
    for u in F:  # the input is consistent (6), within the documented 1e-9 (1 + |F(u)| + |sum|)
        if len(u) < D:
            total = sum(F[c] for c in children(u, beta, D))
            assert abs(F[u] - total) <= 1e-9 * (1.0 + abs(F[u]) + abs(total))
    reader = TapeReader(v.tape)
    S = privtree_scratch(F, beta, D, scale(p, p["epsilon"]), p["theta"], reader, None, stats)
    assert reader.all_used()
    return [{"nodes": [label(u) for u in sorted(S, key=bfs_key)], "leaves": [label(u) for u in leaves_of(S, beta, D)]}]


class VertexCounter:
    """C_v of 001-alg3 L4 with budget eps/2, stepped at its activations k = 1, 2, ... (its own local time)."""

    def __init__(self, v: Vertex, kind: str, B: int | None, eps: float, reader: TapeReader) -> None:
        self.v, self.kind, self.B, self.reader = v, kind, B, reader
        self.e = eps / 2.0
        self.k = 0
        self.output = 0.0
        self.alpha = self.beta = self.beta_last = 0.0  # 001-alg9 L3

    def step(self, x: float) -> float:
        """The increment d(v, t) of the counter's output (001-alg3 L7, default reading)."""
        self.k += 1
        prefix = f"001-alg3 L7 v={label(self.v)} / "
        if self.kind == "simple":  # 001-alg8 L4: g(k) = g(k-1) + (x + Lap(1/e))
            z = float(self.reader.get(f"{prefix}001-alg8 L4 t={self.k}", "laplace", scale=1 / self.e))
            out = self.output + x + z
        else:  # 001-alg9 with block size B, Lap(2/e) at both levels
            assert self.B is not None
            self.beta += x  # L5
            if self.k % self.B == 0:  # L6
                self.alpha = 0.0  # L7
                self.beta += float(self.reader.get(f"{prefix}001-alg9 L7 t={self.k}", "laplace", scale=2 / self.e))
                self.beta_last = self.beta  # L8
            else:  # L10
                z = float(self.reader.get(f"{prefix}001-alg9 L10 t={self.k}", "laplace", scale=2 / self.e))
                self.alpha += x + z
            out = self.beta_last + self.alpha  # L12
        increment = out - self.output
        self.output = out
        return increment


def recompute_stream(v: KnownAnswerVector, stats: dict[str, int]) -> list[Release]:
    """Algorithm 1 or 3 on V(T), then rule (5) for 001-alg2 / 001-alg6."""
    p = v.params
    d, D, beta, eps, theta = int(p["d"]), int(p["D"]), int(p["fanout"]), float(p["epsilon"]), float(p["theta"])
    with_counters = v.algorithm in ("001-alg3", "001-alg6") or p.get("tree") == "001-alg3"
    kind, B = p.get("counter") or "simple", p.get("B")
    V = vertices(beta, D)
    lam = scale(p, eps / 2.0)  # PrivTree at eps/2 (001-alg1 L5, 001-alg3 L4/L6)
    reader = TapeReader(v.tape)
    G = dict.fromkeys(V, 0.0)  # L3: G(v, 0) = 0
    counters: dict[Vertex, VertexCounter] = {}
    out: list[Release] = []
    for t, step in enumerate(v.inputs, start=1):
        dF = dict.fromkeys(V, 0.0)  # (4) of the batch: nabla F(v, t) = sum of the moves of its points in v
        for x, move in zip(step["points"], step["moves"], strict=True):
            assert move in (1, -1)
            leaf = locate(x, d, D, beta)
            for k in range(D + 1):
                dF[leaf[:k]] += move
        S = privtree_scratch({u: G[u] + dF[u] for u in V}, beta, D, lam, theta, reader, t, stats)
        L = leaves_of(S, beta, D)
        incr: dict[Vertex, float] = {}
        for u in L:
            if with_counters:  # 001-alg3 L7: the increment of C_u at its next activation
                counter = counters.setdefault(u, VertexCounter(u, kind, B, eps, reader))
                incr[u] = counter.step(dF[u])
            else:  # 001-alg1 L6: nabla F(u, t) + Lap(2/eps)
                incr[u] = dF[u] + float(reader.get(f"001-alg1 L6 t={t} v={label(u)}", "laplace", scale=2.0 / eps))
        G = {w: G[w] + sum(x * ext_weight(u, w, beta) for u, x in incr.items()) for w in V}  # L7 / L8
        release: Release = {"t": t, "nodes": [label(u) for u in sorted(S, key=bfs_key)],
                            "leaves": [label(u) for u in L], "values": {label(u): G[u] for u in sorted(S, key=bfs_key)}}
        if v.algorithm in ("001-alg2", "001-alg6"):  # rule (5): ceil(G(u)) uniform points of every leaf u
            counts, points = {}, []
            for u in L:
                n = max(0, math.ceil(G[u]))
                assert abs(G[u] - round(G[u])) > MARGIN, "rule (5)'s ceiling is too close to an integer to be robust"
                counts[label(u)] = n
                stats["empty_leaves"] += n == 0
                if n:
                    low, high = cell(u, d, beta)
                    rows = reader.get(f"001-eq5 t={t} v={label(u)}", "uniform_box", low=low, high=high, count=n)
                    assert all(lo <= c < hi for row in rows for c, lo, hi in zip(row, low, high, strict=True))
                    points += [[float(c) for c in row] for row in rows]
            release["counts"], release["points"] = counts, points
        out.append(release)
    assert reader.all_used()
    return out


def closed_form_values(v: KnownAnswerVector) -> Iterator[tuple[int, str, float]]:
    """(t, v, G(v, t)) for the vertices v in T(s) for all s <= t, by G(v, t) = F(v, t) + the counter draws that fell
    below v: the Simple counter's increments sum to the true count plus its draws (001-alg8 L4)."""
    p = v.params
    d, D, beta = int(p["d"]), int(p["D"]), int(p.get("fanout", 2))
    draws = v.tape.by_site()
    F: dict[Vertex, float] = {}
    noise: dict[Vertex, float] = {}
    always: set[Vertex] | None = None
    activations: dict[Vertex, int] = {}
    for t, (step, release) in enumerate(zip(v.inputs, v.expected, strict=True), start=1):
        for x, move in zip(step["points"], step["moves"], strict=True):
            leaf = locate(x, d, D, beta)
            for k in range(D + 1):
                F[leaf[:k]] = F.get(leaf[:k], 0.0) + move
        for name in release["leaves"]:
            u = vertex(name)
            activations[u] = activations.get(u, 0) + 1
            z = float(draws[f"001-alg3 L7 v={name} / 001-alg8 L4 t={activations[u]}"].value)
            for k in range(len(u) + 1):
                noise[u[:k]] = noise.get(u[:k], 0.0) + z
        nodes = {vertex(name) for name in release["nodes"]}
        always = nodes if always is None else always & nodes
        for u in sorted(always, key=bfs_key):
            yield t, label(u), F.get(u, 0.0) + noise.get(u, 0.0)


STATS = ("clamped", "split", "stopped", "at_depth_D", "empty_leaves")


def independent(v: KnownAnswerVector, stats: dict[str, int] | None = None) -> list[Release]:
    stats = dict.fromkeys(STATS, 0) if stats is None else stats
    return recompute_privtree(v, stats) if v.algorithm == "001-alg5" else recompute_stream(v, stats)


def _simple(v: KnownAnswerVector) -> bool:
    return ((v.algorithm in ("001-alg3", "001-alg6") or v.params.get("tree") == "001-alg3")
            and (v.params.get("counter") or "simple") == "simple")


# ------------------------------------------------------------------------------------------ the tests
def test_corpus_has_vectors_for_every_algorithm() -> None:
    found = {a: sum(v.algorithm == a for v in VECTORS) for a in ANCHORS}
    assert all(n >= 8 for n in found.values()), found
    assert set(RECREATED) <= set(IDS)


@pytest.mark.parametrize("v", VECTORS, ids=IDS)
def test_vector_is_small(v: KnownAnswerVector) -> None:
    """(The whole corpus validates against dpstream/vectors/schema.json: tests/foundation/test_tape_schema.py.)"""
    assert len(json.dumps(v.to_json(), indent=1)) < 60_000


@pytest.mark.parametrize("v", VECTORS, ids=IDS)
def test_known_answer_vector(v: KnownAnswerVector) -> None:
    for name, got in implementation_releases(v).items():
        try:
            compare(got, v.expected)
        except AssertionError as exc:  # pragma: no cover - the message names the implementation
            raise AssertionError(f"{name}: {exc}") from exc
    compare(independent(v), v.expected)


@pytest.mark.parametrize("anchor", ANCHORS)
def test_vectors_exercise_the_boxes(anchor: str) -> None:
    """Over the algorithm's vectors: clamps (L10), splits and stops above depth D, draws at depth D; deletions, a
    changing T(t), noisy values; leaves with G <= 0 (no point) under rule (5)."""
    stats = dict.fromkeys(STATS, 0)
    mine = [v for v in VECTORS if v.algorithm == anchor]
    for v in mine:
        independent(v, stats)
    assert stats["clamped"] > 0 and stats["split"] > 0 and stats["stopped"] > 0 and stats["at_depth_D"] > 0, stats
    if anchor == "001-alg5":
        return
    assert all(any(m == -1 for x in v.inputs for m in x["moves"]) for v in mine if len(v.inputs) > 1)
    assert any(len({tuple(r["nodes"]) for r in v.expected}) >= 2 for v in mine)  # T(t) changes
    assert all(r["values"]["root"] != pytest.approx(sum(m for x in v.inputs[: r["t"]] for m in x["moves"]))
               for v in mine for r in v.expected)  # the values are noisy
    if anchor in ("001-alg2", "001-alg6"):
        assert stats["empty_leaves"] > 0  # a leaf with G <= 0 gets no point
        assert all(sum(r["counts"].values()) == len(r["points"]) for v in mine for r in v.expected)


@pytest.mark.parametrize("v", [v for v in VECTORS if _simple(v)], ids=lambda v: v.id)
def test_simple_counter_closed_form(v: KnownAnswerVector) -> None:
    checked = 0
    for t, name, value in closed_form_values(v):
        assert abs(v.expected[t - 1]["values"][name] - value) <= ATOL, (t, name)
        checked += 1
    assert checked >= len(v.expected)  # at least the root at every step


Corruption = Callable[[dict[str, Any]], None]


def _last(doc: dict[str, Any]) -> Release:
    release: Release = doc["expected"][-1]
    return release


def _bump_value(doc: dict[str, Any]) -> None:
    values = _last(doc)["values"]
    name = next(iter(values))
    values[name] += 1e-6


def _drop_leaf(doc: dict[str, Any]) -> None:
    _last(doc)["leaves"].pop()


def _bump_count(doc: dict[str, Any]) -> None:
    counts = _last(doc)["counts"]
    counts[next(iter(counts))] += 1


def _bump_point(doc: dict[str, Any]) -> None:
    _last(doc)["points"][0][1] += 1e-6


def _flip_root(doc: dict[str, Any]) -> None:
    """The root's PrivTree draw at the first step, lowered so that the root no longer splits."""
    root = next(d for d in doc["tape"]["draws"] if d["site"] in ("001-alg5 L11 v=root", "001-alg5 L11 t=1 v=root"))
    root["value"] -= 100.0


def _bump_noise(doc: dict[str, Any]) -> None:
    """The last leaf-count draw (a Simple counter's or 001-alg1 L6's)."""
    counts = [d for d in doc["tape"]["draws"] if d["kind"] == "laplace" and not d["site"].startswith("001-alg5")]
    counts[-1]["value"] += 0.25


CORRUPTIONS: dict[str, Corruption] = {"value": _bump_value, "leaf": _drop_leaf, "count": _bump_count,
                                      "point": _bump_point, "tape-decision": _flip_root, "tape-noise": _bump_noise}


def _applies(corruption: str, v: KnownAnswerVector) -> bool:
    """Whether the vector has the field the corruption changes (PrivTree releases no values, Algorithm 3 no points)."""
    if corruption in ("value", "tape-noise"):
        return v.algorithm != "001-alg5"
    if corruption in ("count", "point"):
        return v.algorithm in ("001-alg2", "001-alg6")
    return True


CASES = [(v, corruption) for v in VECTORS if v.id in RECREATED for corruption in sorted(CORRUPTIONS)
         if _applies(corruption, v)]


@pytest.mark.parametrize(("v", "corruption"), CASES, ids=[f"{v.id}-{c}" for v, c in CASES])
def test_corrupted_vector_is_detected(v: KnownAnswerVector, corruption: str) -> None:
    bad = json.loads(json.dumps(v.to_json()))
    CORRUPTIONS[corruption](bad)
    w = KnownAnswerVector.from_json(bad)
    for got in implementation_releases_or_error(w).values():
        with pytest.raises(AssertionError):
            compare(got, w.expected)
    with pytest.raises((AssertionError, KeyError)):
        compare(independent(w), w.expected)


def implementation_releases_or_error(v: KnownAnswerVector) -> dict[str, list[Release]]:
    """The implementations' releases, or a marker that makes ``compare`` fail when the tape no longer replays
    (a corrupted draw may change T(t) and so the set of sites requested: a TapeError)."""
    try:
        return implementation_releases(v)
    except TapeError:
        return {"tape rejected": [{"tape rejected": True}] * len(v.expected)}
