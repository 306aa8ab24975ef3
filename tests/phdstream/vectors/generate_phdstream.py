"""Regenerate the PHDStream known-answer vectors: ``.venv/bin/python tests/phdstream/vectors/generate_phdstream.py``.

Four vectors, each one seeded run (inputs, noise tape, releases) on the tree T of the hierarchical partition of
Omega = [0, 1]^2 with fanout 2 (the vertex at depth k halves coordinate k mod 2: x, then y, then x, ...):

* ``privtree-d2-D4-eps2-theta1`` -- PrivTree_T (001-alg5) on one consistent function F (fractional and negative
  values included), D = 4, lambda = D/eps;
* ``alg3-simple-d2-D3-eps2-T5`` -- PHDStreamTree with Simple counters (001-alg3), 5 steps of point insertions and
  deletions, D = 3; released: T(t) and G(., t) on T(t);
* ``alg6-simple-d2-D3-eps2-T5`` -- the compute-efficient PHDStream (001-alg6/alg7) on the same stream; released:
  T(t), G(., t) on T(t) and the synthetic points of rule (5). Its tape is the 001-alg3 tape plus the rule (5)
  draws: the two vectors come from ONE recorded run of the naive ``PHDStream(T, eps, counter=Simple)``
  (001-alg2 around 001-alg3), which Algorithm 6/7 reproduces draw for draw (section C.1);
* ``alg2-alg1-d2-D3-eps2-T4`` -- PHDStream (001-alg2) around PHDStreamTree (001-alg1, Laplace leaf noise), 4
  steps, with the synthetic points of rule (5).

Encodings (also in docs/phdstream.md, "Known-answer vectors"): a vertex is named by its label (``node_label``):
``"root"`` or the dotted path of child indices from the root, ``"0.1.1"``; child i of a vertex cut along
coordinate j covers the i-th half [lo + i w/2, lo + (i+1) w/2) of its interval (the last half keeps 1). A step
of the input stream is ``{"points": [[x, y], ...], "moves": [+1 | -1, ...]}``: nabla f(., t), one event per
point (+1 inserts the point, -1 removes a point inserted earlier). A release is
``{"t", "nodes", "leaves", "values"}`` (+ ``"counts"``, ``"points"`` with rule (5)): ``nodes`` the vertices of
T(t) sorted by (depth, path), ``leaves`` its leaves in the same order, ``values`` G(v, t) for every v in
``nodes``, ``counts`` ceil(G(v, t)) (0 if G <= 0) per leaf, ``points`` the synthetic points: for each leaf with
a positive count, in the order of ``leaves``, the rows of its ``001-eq5 t=<t> v=<leaf>`` draw.

``tests/phdstream/test_vectors.py`` replays every vector through the implementation(s) AND recomputes its
releases from the tape alone with a from-scratch rendering of the printed boxes; a regenerated vector is
accepted only if both agree.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from dpstream.noise import InsecureSeededNoise, NoiseSource, data_rng
from dpstream.phdstream import (
    EfficientPHDStream,
    HypercubePartition,
    LambdaRule,
    PHDStream,
    PHDStreamTreeWithCounters,
    PointEvents,
    Subtree,
    SyntheticRelease,
    TreeRelease,
    node_label,
    privtree,
    privtree_scales,
    simple_counter_factory,
    tree_function,
)
from dpstream.phdstream.partition import Node
from dpstream.tape import Tape, TapeRecorder
from dpstream.vectors import KnownAnswerVector

HERE = Path(__file__).resolve().parent
RULE5 = "001-eq5"
MARGIN = 1e-6
"""Every recorded decision is at least this far from its threshold (PrivTree's b~ vs theta, rule (5)'s G vs an
integer), so that an implementation summing in another order takes the same decisions."""

# ---------------------------------------------------------------------------------------------- the parameters
PRIVTREE_PARAMS: dict[str, Any] = {"d": 2, "D": 4, "fanout": 2, "epsilon": 2.0, "theta": 1.0,
                                   "lambda_rule": "general"}
ALG3_PARAMS: dict[str, Any] = {"d": 2, "D": 3, "fanout": 2, "epsilon": 2.0, "theta": 1.0,
                               "lambda_rule": "general", "counter": "simple", "as_printed": False}
ALG2_PARAMS: dict[str, Any] = {"d": 2, "D": 3, "fanout": 2, "epsilon": 2.0, "theta": 1.0,
                               "lambda_rule": "general", "tree": "001-alg1"}
SEEDS = {"privtree": 51, "alg3-alg6": 52, "alg2": 53}
STREAM_SEEDS = {"alg3-alg6": 501, "alg2": 502}


def partition(params: Mapping[str, Any]) -> HypercubePartition:
    return HypercubePartition(int(params["d"]), int(params["D"]), int(params["fanout"]))


def lambda_rule(params: Mapping[str, Any]) -> LambdaRule:
    return LambdaRule(params["lambda_rule"])


def label_key(label: str) -> tuple[int, tuple[int, ...]]:
    """Sort key of a vertex label: (depth, path)."""
    path = () if label == "root" else tuple(int(i) for i in label.split("."))
    return len(path), path


def node_of(label: str) -> Node:
    return label_key(label)[1]


# ---------------------------------------------------------------------------------------------- the inputs
def privtree_input(params: Mapping[str, Any]) -> dict[str, float]:
    """A consistent F on V(T): leaves are multiples of 1/4 (so every sum is exact), a few negative, mass in a corner."""
    P = partition(params)
    rng = data_rng(SEEDS["privtree"])
    leaves: dict[Node, float] = {}
    for v in P.leaves():
        heavy = v[0] == 0 and v[1] == 0  # the quarter [0, 1/2) x [0, 1/2)
        value = float(rng.integers(0, 24 if heavy else 6)) / 4.0
        if rng.random() < 0.2:
            value = -value - 0.5
        leaves[v] = value
    F: dict[Node, float] = {}
    for leaf, x in leaves.items():
        for k in range(len(leaf) + 1):
            F[leaf[:k]] = F.get(leaf[:k], 0.0) + x
    return {node_label(v): F[v] for v in sorted(F, key=lambda u: (len(u), u))}


def _coordinate(value: float) -> float:
    """A coordinate with 3 decimals that is not on a cut of the tree (no multiple of 1/8)."""
    x = round(value, 3)
    return x + 0.001 if (x * 8.0).is_integer() else x


def point_stream(seed: int, steps: int) -> list[dict[str, list[Any]]]:
    """nabla f(., t) for t = 1..steps: insertions (clustered near (0.2, 0.3), repeats included) and deletions."""
    rng = data_rng(seed)
    present: list[list[float]] = []
    out: list[dict[str, list[Any]]] = []
    for t in range(1, steps + 1):
        n_new = [14, 6, 5, 0, 7][t - 1] if t <= 5 else 5
        new = []
        for _ in range(n_new):
            if rng.random() < 0.7:
                p = [_coordinate(0.2 + 0.15 * float(rng.standard_normal())), _coordinate(0.3 + 0.1 * float(
                    rng.standard_normal()))]
                p = [min(max(c, 0.001), 0.999) for c in p]
            else:
                p = [_coordinate(float(rng.random())), _coordinate(float(rng.random()))]
            new.append(p)
        if t == 2:
            new.append(list(new[0]))  # the same point twice: f(x, t) = 2
        n_gone = [0, 2, 3, 6, 2][t - 1] if t <= 5 else 2
        gone = [present.pop(int(rng.integers(0, len(present)))) for _ in range(min(n_gone, len(present)))]
        present += new
        out.append({"points": new + gone, "moves": [1] * len(new) + [-1] * len(gone)})
    return out


def events(step: Mapping[str, Any]) -> PointEvents:
    return PointEvents.of(step["points"], step["moves"])


def nabla_F(params: Mapping[str, Any], step: Mapping[str, Any]) -> dict[Node, float]:
    """nabla F(., t) by (4): what Algorithm 3 (a tree-level algorithm) consumes."""
    return tree_function(partition(params), step["points"], step["moves"])


# ---------------------------------------------------------------------------------------------- the releases
def encode_tree(t: int | None, tree: Subtree, values: Mapping[Node, float] | None) -> dict[str, Any]:
    nodes = sorted(tree.nodes, key=lambda u: (len(u), u))
    out: dict[str, Any] = {} if t is None else {"t": t}
    out["nodes"] = [node_label(v) for v in nodes]
    out["leaves"] = [node_label(v) for v in tree.leaves]
    if values is not None:
        out["values"] = {node_label(v): float(values[v]) for v in nodes}
    return out


def encode_tree_release(release: TreeRelease) -> dict[str, Any]:
    """A 001-alg3 release: T(t) and G(., t) on T(t) (the naive algorithm keeps G on all of V(T))."""
    return encode_tree(release.t, release.tree, release.values)


def encode_synthetic(release: SyntheticRelease) -> dict[str, Any]:
    """A 001-alg2 / 001-alg6 release: T(t), G on T(t), the rule (5) counts and the synthetic points."""
    out = encode_tree(release.t, release.tree, release.node_values)
    out["counts"] = {node_label(v): int(release.counts[v]) for v in release.tree.leaves}
    out["points"] = [[float(c) for c in row] for row in release.points.tolist()]
    return out


def build_alg3(params: Mapping[str, Any], noise: NoiseSource) -> PHDStreamTreeWithCounters:
    return PHDStreamTreeWithCounters(partition(params), params["epsilon"], params["theta"], noise,
                                     counter=simple_counter_factory, lambda_rule=lambda_rule(params),
                                     as_printed=params["as_printed"])


def build_naive_alg6(params: Mapping[str, Any], noise: NoiseSource) -> PHDStream:
    """001-alg2 around 001-alg3 with Simple counters: what Algorithm 6/7 computes (section C.1)."""
    return PHDStream(partition(params), params["epsilon"], params["theta"], noise, counter=simple_counter_factory,
                     lambda_rule=lambda_rule(params), as_printed=params["as_printed"])


def build_alg6(params: Mapping[str, Any], noise: NoiseSource) -> EfficientPHDStream:
    return EfficientPHDStream(partition(params), params["epsilon"], params["theta"], noise,
                              counter=simple_counter_factory, lambda_rule=lambda_rule(params),
                              as_printed=params["as_printed"])


def build_alg2(params: Mapping[str, Any], noise: NoiseSource) -> PHDStream:
    assert params["tree"] == "001-alg1"
    return PHDStream(partition(params), params["epsilon"], params["theta"], noise, counter=None,
                     lambda_rule=lambda_rule(params))


def stream_meta(params: Mapping[str, Any], seed: int) -> dict[str, Any]:
    lam, delta = privtree_scales(partition(params), params["epsilon"] / 2.0, lambda_rule(params))
    return {"seed": seed, "privtree_lambda": lam, "privtree_delta": delta, "count_scale": 2.0 / params["epsilon"]}


# ---------------------------------------------------------------------------------------------- checks
def check_margins(tape: Tape, expected: list[dict[str, Any]], theta: float,
                  F_per_step: Sequence[Mapping[Node, float]], delta: float) -> None:
    """Every PrivTree decision and every rule (5) ceiling is MARGIN away from its threshold.

    ``F_per_step[t-1]`` is PrivTree's input at t on all of V(T) (G(., t-1) + nabla F(., t) inside a stream).
    """
    draws = tape.by_site()
    for t, (release, F) in enumerate(zip(expected, F_per_step, strict=True), start=1):
        for label in release["nodes"]:
            site = f"001-alg5 L11 t={t} v={label}" if "t" in release else f"001-alg5 L11 v={label}"
            depth, v = label_key(label)
            b = max(F.get(v, 0.0) - depth * delta, theta - delta)
            assert abs(b + float(draws[site].value) - theta) > MARGIN, (site, b)
        for label in release.get("counts", {}):
            g = release["values"][label]
            assert abs(g - round(g)) > MARGIN, (t, label, g)


def run_naive(alg: PHDStream, inputs: list[dict[str, Any]]) -> tuple[list[SyntheticRelease], list[dict[Node, float]]]:
    """Step the naive PHDStream; also return PrivTree's input G(., t-1) + nabla F(., t) on V(T) at every t."""
    releases, privtree_inputs = [], []
    for x in inputs:
        dF = tree_function(alg.partition, x["points"], x["moves"])
        privtree_inputs.append({v: g + dF.get(v, 0.0) for v, g in alg.tree.G.items()})
        releases.append(alg.step(events(x)))
    return releases, privtree_inputs


def main(out: Path = HERE) -> None:
    # (a) PrivTree_T, one-off (sites without t)
    p = PRIVTREE_PARAMS
    F_labels = privtree_input(p)
    F = {node_of(k): x for k, x in F_labels.items()}
    recorder = TapeRecorder(InsecureSeededNoise(SEEDS["privtree"]), meta={"seed": SEEDS["privtree"]})
    S = privtree(partition(p), F, p["epsilon"], p["theta"], recorder, lambda_rule=lambda_rule(p))
    lam, delta = privtree_scales(partition(p), p["epsilon"], lambda_rule(p))
    expected_a = [encode_tree(None, S, None)]
    check_margins(recorder.tape, expected_a, p["theta"], [F], delta)
    KnownAnswerVector("001-alg5", p, [F_labels], recorder.tape, expected_a,
                      description="PrivTree_T (001-alg5) on one consistent F over the tree of [0,1]^2, D=4, fanout 2, "
                                  f"lambda = D/eps, seed={SEEDS['privtree']}",
                      meta={"seed": SEEDS["privtree"], "lambda": lam, "delta": delta},
                      ).save(out / "privtree-d2-D4-eps2-theta1.json")

    # (b) + (d): ONE recorded run of the naive PHDStream with Simple counters (001-alg2 around 001-alg3)
    p = ALG3_PARAMS
    seed = SEEDS["alg3-alg6"]
    inputs = point_stream(STREAM_SEEDS["alg3-alg6"], 5)
    recorder = TapeRecorder(InsecureSeededNoise(seed), meta={"seed": seed})
    releases, privtree_inputs = run_naive(build_naive_alg6(p, recorder), inputs)
    tape = recorder.tape
    synthetic = [encode_synthetic(r) for r in releases]
    meta = stream_meta(p, seed)
    check_margins(tape, synthetic, p["theta"], privtree_inputs, meta["privtree_delta"])
    # (b): Algorithm 3 alone draws the same, minus rule (5): its tape is the run's tape without the 001-eq5 draws
    tree_tape = Tape(tuple(d for d in tape if not d.site.startswith(RULE5)), {"seed": seed})
    expected_b = [{k: r[k] for k in ("t", "nodes", "leaves", "values")} for r in synthetic]
    KnownAnswerVector("001-alg3", p, inputs, tree_tape, expected_b,
                      description="PHDStreamTree with Simple counters (001-alg3) on [0,1]^2, D=3: the run of "
                                  "alg6-simple-d2-D3-eps2-T5 without its rule (5) draws", meta=meta,
                      ).save(out / "alg3-simple-d2-D3-eps2-T5.json")
    KnownAnswerVector("001-alg6", p, inputs, tape, synthetic,
                      description="compute-efficient PHDStream (001-alg6/alg7) with Simple counters on [0,1]^2, D=3; "
                                  "the same releases as 001-alg2 around 001-alg3 on this tape (section C.1), "
                                  f"seed={seed}", meta=meta).save(out / "alg6-simple-d2-D3-eps2-T5.json")

    # (c) PHDStream (001-alg2) around PHDStreamTree (001-alg1)
    p = ALG2_PARAMS
    seed = SEEDS["alg2"]
    inputs = point_stream(STREAM_SEEDS["alg2"], 4)
    recorder = TapeRecorder(InsecureSeededNoise(seed), meta={"seed": seed})
    releases, privtree_inputs = run_naive(build_alg2(p, recorder), inputs)
    expected_c = [encode_synthetic(r) for r in releases]
    meta = stream_meta(p, seed)
    check_margins(recorder.tape, expected_c, p["theta"], privtree_inputs, meta["privtree_delta"])
    KnownAnswerVector("001-alg2", p, inputs, recorder.tape, expected_c,
                      description="PHDStream (001-alg2) around PHDStreamTree (001-alg1) on [0,1]^2, D=3, with the "
                                  f"synthetic points of rule (5), seed={seed}", meta=meta,
                      ).save(out / "alg2-alg1-d2-D3-eps2-T4.json")
    for path in sorted(out.glob("*.json")):
        print("wrote", path.name, path.stat().st_size, "bytes")


if __name__ == "__main__":
    main()
