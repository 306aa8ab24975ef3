"""Known-answer vectors of PHDStream (seed 001): PrivTree_T, Algorithm 3, Algorithm 6/7, Algorithm 2.

Each vector (``tests/phdstream/vectors/*.json``, made by ``generate_phdstream.py`` there; encoding in
docs/phdstream.md, "Known-answer vectors") is

* replayed through the implementation -- 001-alg3 through BOTH the naive Algorithm 3 and the compute-efficient
  Algorithm 6/7, 001-alg6 through both Algorithm 6/7 and the naive 001-alg2 around 001-alg3 -- with every tape
  site used, and compared with ``expected`` (exact for trees, labels and counts, 1e-12 for floats);
* recomputed from the tape alone by the printed boxes written again here (nothing of ``dpstream.phdstream`` is
  called by the recomputation): PrivTree_T (001-alg5 L3-L13) with lambda = D/eps, delta = lambda ln beta;
  Algorithm 1 (L5-L7) / Algorithm 3 (L6-L8) with Ext_T written from the verbal rule of section 3.2 (a unit at u
  is 1 on u's ancestors and u, beta^-k on its descendants at distance k); the Simple counter (001-alg8 L4:
  the increment of C_v at its k-th activation is nabla F(v, t) + its draw at local time k); rule (5)
  (ceil(G(v)) uniform points in leaf v, the tape's rows);
* for the Simple counter also checked against the closed form of G: if v lies in T(s) for every s <= t, then
  G(v, t) = F(v, t) + the sum of the counter draws of the leaves of T(s) below v, s <= t (the true count plus
  the noise that fell below v);
* validated against docs/tape-schema.json (``tests/foundation/test_tape_schema.py`` only globs
  ``tests/vectors``).

A corrupted vector (one expected value, label or count changed, or one tape value) is rejected by both checks.
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from dpstream.noise import BaseNoiseSource, DrawKind, InsecureSeededNoise, Params
from dpstream.tape import Draw, Tape, TapeError, TapeReplay
from dpstream.testing import load_script, replay_run
from dpstream.vectors import KnownAnswerVector

HERE = Path(__file__).resolve().parent / "vectors"
VECTORS = sorted(HERE.glob("*.json"))
ROOT = Path(__file__).resolve().parents[2]
SCHEMA = jsonschema.Draft202012Validator(json.loads((ROOT / "docs" / "tape-schema.json").read_text(encoding="utf-8")))
ATOL = 1e-12
MARGIN = 1e-6
COMPONENTS = {"001-alg5", "001-alg3", "001-alg6", "001-alg2"}

Vertex = tuple[int, ...]
Release = dict[str, Any]


def _generator() -> Any:
    return load_script(HERE / "generate_phdstream.py")


GEN = _generator()


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


# ------------------------------------------------------------------------------------------ the implementation
class RuleFiveAside(BaseNoiseSource):
    """The tape for every site but rule (5)'s: Algorithm 6 L8 samples g(., t) by (5), which Algorithm 3 has not,
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


def implementation_releases(v: KnownAnswerVector) -> dict[str, list[Release]]:
    """The vector's releases as computed by each implementation that must reproduce it (every tape site used)."""
    p = v.params
    if v.component == "001-alg5":
        F = {GEN.node_of(label): x for label, x in v.inputs[0].items()}
        with TapeReplay(v.tape) as replay:
            S = GEN.privtree(GEN.partition(p), F, p["epsilon"], p["theta"], replay, lambda_rule=GEN.lambda_rule(p))
        return {"privtree": [GEN.encode_tree(None, S, None)]}
    batches = [GEN.events(x) for x in v.inputs]
    if v.component == "001-alg3":
        naive = replay_run(lambda n: GEN.build_alg3(p, n), [GEN.nabla_F(p, x) for x in v.inputs], v.tape)
        with TapeReplay(v.tape) as replay:
            source = RuleFiveAside(replay, InsecureSeededNoise(0))
            alg = GEN.build_alg6(p, source)
            efficient = [alg.step(b) for b in batches]
        # the only draws not on the tape are rule (5)'s, one per leaf with a positive count
        assert source.aside == [f"001-eq5 t={r.t} v={GEN.node_label(u)}" for r in efficient
                                for u in r.tree.leaves if r.counts[u] > 0]
        tree_part = [{k: GEN.encode_synthetic(r)[k] for k in ("t", "nodes", "leaves", "values")} for r in efficient]
        return {"001-alg3 naive": [GEN.encode_tree_release(r) for r in naive], "001-alg6/7 efficient": tree_part}
    if v.component == "001-alg6":
        efficient = replay_run(lambda n: GEN.build_alg6(p, n), batches, v.tape)
        naive = replay_run(lambda n: GEN.build_naive_alg6(p, n), batches, v.tape)
        return {"001-alg6/7 efficient": [GEN.encode_synthetic(r) for r in efficient],
                "001-alg2 around 001-alg3 naive": [GEN.encode_synthetic(r) for r in naive]}
    assert v.component == "001-alg2"
    return {"001-alg2 around 001-alg1": [GEN.encode_synthetic(r) for r in replay_run(
        lambda n: GEN.build_alg2(p, n), batches, v.tape)]}


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


def general_lambda(p: Mapping[str, Any], eps: float) -> float:
    assert p["lambda_rule"] == "general" and p["fanout"] >= 2
    return max(int(p["D"]), 1) / eps  # LambdaRule.GENERAL (E-phdstream-3)


def recompute_privtree(v: KnownAnswerVector, stats: dict[str, int]) -> list[Release]:
    p = v.params
    F = {vertex(name): float(x) for name, x in v.inputs[0].items()}
    beta, D = int(p["fanout"]), int(p["D"])
    assert set(F) == set(vertices(beta, D))
    for u in F:  # the input is consistent (6)
        if len(u) < D:
            assert F[u] == sum(F[c] for c in children(u, beta, D))
    reader = TapeReader(v.tape)
    S = privtree_scratch(F, beta, D, general_lambda(p, p["epsilon"]), p["theta"], reader, None, stats)
    assert reader.all_used()
    return [{"nodes": [label(u) for u in sorted(S, key=bfs_key)],
             "leaves": [label(u) for u in leaves_of(S, beta, D)]}]


def recompute_stream(v: KnownAnswerVector, stats: dict[str, int]) -> list[Release]:
    """Algorithm 1 or 3 (Simple counters) on V(T), then rule (5) for 001-alg2 / 001-alg6."""
    p = v.params
    d, D, beta, eps, theta = int(p["d"]), int(p["D"]), int(p["fanout"]), float(p["epsilon"]), float(p["theta"])
    V = vertices(beta, D)
    lam = general_lambda(p, eps / 2.0)  # PrivTree at eps/2 (001-alg1 L5, 001-alg3 L4/L6)
    reader = TapeReader(v.tape)
    G = dict.fromkeys(V, 0.0)  # L3: G(v, 0) = 0
    activations = dict.fromkeys(V, 0)
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
            if v.component == "001-alg2":  # 001-alg1 L6: nabla F(u, t) + Lap(2/eps)
                z = reader.get(f"001-alg1 L6 t={t} v={label(u)}", "laplace", scale=2.0 / eps)
            else:  # 001-alg3 L7: the increment of C_u (Simple, budget eps/2) at its next activation
                activations[u] += 1
                z = reader.get(f"001-alg3 L7 v={label(u)} / 001-alg8 L4 t={activations[u]}", "laplace",
                               scale=2.0 / eps)
            incr[u] = dF[u] + float(z)
        G = {w: G[w] + sum(x * ext_weight(u, w, beta) for u, x in incr.items()) for w in V}  # L7 / L8
        release: Release = {"t": t, "nodes": [label(u) for u in sorted(S, key=bfs_key)],
                            "leaves": [label(u) for u in L], "values": {label(u): G[u] for u in sorted(S, key=bfs_key)}}
        if v.component in ("001-alg2", "001-alg6"):  # rule (5): ceil(G(u)) uniform points of every leaf u
            counts, points = {}, []
            for u in L:
                k = max(0, math.ceil(G[u]))
                assert abs(G[u] - round(G[u])) > MARGIN, "rule (5)'s ceiling is too close to an integer to be robust"
                counts[label(u)] = k
                stats["empty_leaves"] += k == 0
                if k:
                    low, high = cell(u, d, beta)
                    rows = reader.get(f"001-eq5 t={t} v={label(u)}", "uniform_box", low=low, high=high, count=k)
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
    d, D, beta = int(p["d"]), int(p["D"]), int(p["fanout"])
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


# ------------------------------------------------------------------------------------------ the tests
def load(path: Path) -> KnownAnswerVector:
    return KnownAnswerVector.load(path)


def independent(v: KnownAnswerVector, stats: dict[str, int] | None = None) -> list[Release]:
    stats = {k: 0 for k in ("clamped", "split", "stopped", "at_depth_D", "empty_leaves")} if stats is None else stats
    return recompute_privtree(v, stats) if v.component == "001-alg5" else recompute_stream(v, stats)


def test_there_are_vectors_for_every_component() -> None:
    assert {load(path).component for path in VECTORS} == COMPONENTS
    assert len(VECTORS) == len(COMPONENTS)


@pytest.mark.parametrize("path", VECTORS, ids=[p.stem for p in VECTORS])
def test_vector_is_small_and_valid(path: Path) -> None:
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert path.stat().st_size < 60_000
    SCHEMA.validate(doc)
    SCHEMA.validate(doc["tape"])
    v = KnownAnswerVector.from_json(doc)
    assert json.loads(json.dumps(v.to_json())) == doc  # the reader keeps everything


@pytest.mark.parametrize("path", VECTORS, ids=[p.stem for p in VECTORS])
def test_known_answer_vector(path: Path) -> None:
    v = load(path)
    # the generator's parameters (the vector is in sync with the code that wrote it)
    expected_params = {"001-alg5": GEN.PRIVTREE_PARAMS, "001-alg3": GEN.ALG3_PARAMS, "001-alg6": GEN.ALG3_PARAMS,
                       "001-alg2": GEN.ALG2_PARAMS}[v.component]
    assert v.params == expected_params
    for name, got in implementation_releases(v).items():
        try:
            compare(got, v.expected)
        except AssertionError as exc:  # pragma: no cover - the message names the implementation
            raise AssertionError(f"{name}: {exc}") from exc
    stats = {k: 0 for k in ("clamped", "split", "stopped", "at_depth_D", "empty_leaves")}
    compare(independent(v, stats), v.expected)
    # what the vector exercises: clamps (L10), splits and stops above depth D, draws at depth D
    assert stats["clamped"] > 0 and stats["split"] > 0 and stats["stopped"] > 0 and stats["at_depth_D"] > 0
    if v.component != "001-alg5":
        assert any(m == -1 for x in v.inputs for m in x["moves"])  # deletions
        trees = [tuple(r["nodes"]) for r in v.expected]
        assert len(set(trees)) >= 2  # T(t) changes
        assert any(r["values"]["root"] != pytest.approx(sum(m for x in v.inputs[: r["t"]] for m in x["moves"]))
                   for r in v.expected)  # the values are noisy
    if v.component in ("001-alg2", "001-alg6"):
        assert stats["empty_leaves"] > 0  # a leaf with G <= 0 gets no point
        assert all(sum(r["counts"].values()) == len(r["points"]) for r in v.expected)


@pytest.mark.parametrize("path", [p for p in VECTORS if load(p).component in ("001-alg3", "001-alg6")],
                         ids=lambda p: p.stem)
def test_simple_counter_closed_form(path: Path) -> None:
    v = load(path)
    checked = 0
    for t, name, value in closed_form_values(v):
        assert abs(v.expected[t - 1]["values"][name] - value) <= ATOL, (t, name)
        checked += 1
    assert checked >= 2 * len(v.expected)  # the root and at least one more vertex per step on average


def test_alg3_tape_is_the_alg6_tape_without_rule_5() -> None:
    """One recorded run: Algorithm 6/7 draws what Algorithm 3 draws (same sites) plus rule (5) at 001-eq5."""
    alg3 = next(load(p) for p in VECTORS if load(p).component == "001-alg3")
    alg6 = next(load(p) for p in VECTORS if load(p).component == "001-alg6")
    assert alg3.inputs == alg6.inputs and alg3.params == alg6.params
    assert alg3.tape.draws == tuple(d for d in alg6.tape.draws if not d.site.startswith("001-eq5 "))
    assert alg3.expected == [{k: r[k] for k in ("t", "nodes", "leaves", "values")} for r in alg6.expected]


def test_generator_reproduces_the_shipped_vectors(tmp_path: Path) -> None:
    GEN.main(tmp_path)
    for path in VECTORS:
        assert (tmp_path / path.name).read_bytes() == path.read_bytes(), path.name


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
    _last(doc)["points"][0][1] += 1e-9


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


def _applies(corruption: str, path: Path) -> bool:
    """Whether the vector has the field the corruption changes (PrivTree releases no values, Algorithm 3 no points)."""
    component = load(path).component
    if corruption in ("value", "tape-noise"):
        return component != "001-alg5"
    if corruption in ("count", "point"):
        return component in ("001-alg2", "001-alg6")
    return True


CASES = [(path, corruption) for path in VECTORS for corruption in sorted(CORRUPTIONS) if _applies(corruption, path)]


@pytest.mark.parametrize(("path", "corruption"), CASES, ids=[f"{p.stem}-{c}" for p, c in CASES])
def test_corrupted_vector_is_detected(path: Path, corruption: str) -> None:
    bad = json.loads(path.read_text(encoding="utf-8"))
    CORRUPTIONS[corruption](bad)
    v = KnownAnswerVector.from_json(bad)
    for got in implementation_releases_or_error(v).values():
        with pytest.raises(AssertionError):
            compare(got, v.expected)
    with pytest.raises((AssertionError, KeyError)):
        compare(independent(v), v.expected)


def implementation_releases_or_error(v: KnownAnswerVector) -> dict[str, list[Release]]:
    """The implementations' releases, or a marker that makes ``compare`` fail when the tape no longer replays
    (a corrupted draw may change T(t) and so the set of sites requested: a TapeError)."""
    try:
        return implementation_releases(v)
    except TapeError:
        return {"tape rejected": [{"tape rejected": True}] * len(v.expected)}
