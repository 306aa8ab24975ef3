"""Catalog entries of online synthetic data in [0, 1]^d (seed 004: 004-alg1, 004-alg4; 004-alg2/3 are counters).

Protocol parameters: 004-alg1 takes ``epsilon`` and the dimension ``d`` (schedule (4.1) for d >= 2, (5.1) for
d = 1); 004-alg4 takes the splitting ``rule`` (``"equal-shift"``, the default, or ``"proportional"``: the two
deterministic readings of "transform ... into any vector", docs/hypercube.md). INPUT and RELEASE:
:mod:`dpstream.catalog.codecs.hypercube`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from dpstream.audit.neighbours import point_replace_pairs
from dpstream.catalog.adapters import Stateless
from dpstream.catalog.cases import Case, CaseDraw, optional
from dpstream.catalog.codecs import Codec
from dpstream.catalog.codecs.hypercube import (
    decode_counts,
    decode_point,
    encode_counts,
    encode_release,
    online_features,
)
from dpstream.catalog.designs import contrasts
from dpstream.catalog.entry import Entry, RejectSpec, SearchDesign, StatisticalSpec, VectorSpec, with_integers_as_floats
from dpstream.catalog.error_model import ErrorModel, numbers_mass, steps_mass
from dpstream.catalog.params import ParamSchema, integer, positive, string
from dpstream.claims import Neighbour, PrivacyClaim
from dpstream.hypercube.consistency import ConsistencyRule, consistency
from dpstream.hypercube.online import OnlineSyntheticData
from dpstream.noise import NoiseSource, data_rng, derived_seed

__all__ = ["ENTRIES"]

P = Mapping[str, Any]
DOC = "docs/hypercube.md"


def _online(p: P, noise: NoiseSource, printed: bool = False) -> OnlineSyntheticData:
    return OnlineSyntheticData(p["epsilon"], p["d"], noise=noise, as_printed=printed)


def _consistency(p: P, noise: NoiseSource) -> Stateless:
    rule = ConsistencyRule(p["rule"])
    claim = PrivacyClaim.not_private(
        Neighbour.POINT_REPLACE, "004-alg4",
        "deterministic post-processing: private only on noisy counts, as inside 004-alg1")
    return Stateless(lambda noisy: consistency(noisy, rule=rule), claim, algorithm=consistency)


_COORDS = {"type": "array", "items": {"type": "number", "minimum": 0, "maximum": 1}}
_LEVELS = {"type": "array", "items": {"type": "array", "items": {"type": "integer"}}}
ONLINE_CODEC = Codec(_COORDS, {
    "type": "object", "required": ["t", "depth", "noisy", "consistent", "points"], "additionalProperties": False,
    "properties": {"t": {"type": "integer"}, "depth": {"type": "integer"}, "noisy": _LEVELS, "consistent": _LEVELS,
                   "points": {"type": "array", "items": _COORDS}}},
    lambda x, p: decode_point(x, p["d"]), encode_release)
CONSISTENCY_CODEC = Codec({"type": "array", "items": {"type": "array", "items": {"type": "number"}}}, _LEVELS,
                          lambda x, p: decode_counts(x), encode_counts)


def _uniform(n: int, d: int, seed: int) -> list[list[float]]:
    return [[round(float(v), 6) for v in row] for row in data_rng(seed).random((n, d))]


def _clustered(n: int, d: int, seed: int) -> list[list[float]]:
    """Points near (0.3, 0.7, 0.3, ...) with spread 0.05 (most in one deep region), clipped to [0, 1]."""
    rng = data_rng(seed)
    return [[round(min(max((0.3 if j % 2 == 0 else 0.7) + 0.05 * float(rng.standard_normal()), 0.0), 1.0), 6)
             for j in range(d)] for _ in range(n)]


def _online_vectors() -> list[VectorSpec]:
    specs = [VectorSpec("online-d2-eps2-t10", {"epsilon": 2.0, "d": 2}, _uniform(10, 2, 405), 44, ("d=2",),
                        "004-alg1 {'epsilon': 2.0, 'd': 2} seed=44")]
    # (name, eps, d, n, kind, edges)
    cases: tuple[tuple[str, float, int, int, str, tuple[str, ...]], ...] = (
        ("T1-d2-eps2", 2.0, 2, 1, "uniform", ("T=1",)),
        ("d1-eps1-t8", 1.0, 1, 8, "uniform", ("d=1", "schedule (5.1)")),
        ("d1-eps2-t6", 2.0, 1, 6, "clustered", ("d=1", "schedule (5.1)")),
        ("d3-eps2-t6", 2.0, 3, 6, "uniform", ("d=3",)),
        ("d3-eps4-t6", 4.0, 3, 6, "clustered", ("d=3",)),
        ("before-first-level-eps0.5", 0.5, 2, 9, "uniform", ("steps before the first level (t_1 = 4)",)),
        ("before-first-level-eps0.25", 0.25, 2, 9, "clustered", ("steps before the first level (t_1 = 8)",)),
        ("d2-eps1-t8", 1.0, 2, 8, "uniform", ("t = 2^k: level 3 starts",)),
        ("d2-eps1-t9", 1.0, 2, 9, "clustered", ("t = 2^k + 1",)),
        ("d2-eps8-t4", 8.0, 2, 4, "uniform", ("deep tree early",)),
    )
    for name, eps, d, n, kind, edges in cases:
        seed = derived_seed(1, "004-alg1", name)
        points = _uniform(n, d, seed) if kind == "uniform" else _clustered(n, d, seed)
        specs.append(VectorSpec(name, {"epsilon": eps, "d": d}, points, derived_seed(2, "004-alg1", name), edges))
    # points on the cuts: 0, 1/2, 1 (lower halves half-open, the last cell closed at 1)
    specs.append(VectorSpec("d2-eps2-boundaries", {"epsilon": 2.0, "d": 2},
                            [[0.0, 0.0], [1.0, 1.0], [0.5, 0.5], [0.25, 0.75], [1.0, 0.0], [0.5, 1.0], [0.75, 0.25]],
                            derived_seed(2, "004-alg1", "boundaries"), ("points on cuts", "x = 0 and x = 1")))
    return specs


def _consistency_vectors() -> list[VectorSpec]:
    rng = data_rng(derived_seed(1, "004-alg4"))

    def noisy(r: int, low: int, high: int) -> list[list[int]]:
        return [[int(v) for v in rng.integers(low, high, size=2**j)] for j in range(r + 1)]

    cases: tuple[tuple[str, str, list[Any], tuple[str, ...]], ...] = (
        ("root-only", "equal-shift", [[[5]], [[0]], [[-3]]], ("r=0", "negative root")),
        ("depth1", "equal-shift", [[[4], [3, -1]], [[4], [0, 0]], [[7], [2, 2]], [[3], [5, 5]]],
         ("odd Delta", "Delta < 0", "clamped children")),
        ("depth3-random", "equal-shift", [noisy(3, -3, 9), noisy(3, -3, 9), noisy(3, 0, 4)], ("r=3",)),
        ("depth5-random", "equal-shift", [noisy(5, -2, 6)], ("r=5",)),
        ("children-clipped", "equal-shift", [[[2], [9, -4]], [[1], [0, 7]], [[0], [3, 3]]],
         ("clipping at 0 and m",)),
        ("proportional-depth1", "proportional", [[[4], [3, -1]], [[5], [0, 0]], [[7], [2, 2]], [[3], [5, 5]]],
         ("rule=proportional", "a + b = 0")),
        ("proportional-depth4", "proportional", [noisy(4, -2, 8), noisy(4, 0, 5)], ("rule=proportional", "r=4")),
        ("float-integers", "equal-shift", [[[6.0], [2.0, 5.0]]], ("integer counts written as floats",)),
        ("zero-root", "proportional", [[[-2], [4, 1], [1, 1, 0, 3]]], ("m_root = 0",)),
    )
    return [VectorSpec(name, {"rule": rule}, inputs, 0, edges) for name, rule, inputs, edges in cases]


# ----------------------------------------------------------------------------------------- differential cases
def _online_cases(draw: CaseDraw) -> Case:
    """004-alg1: eps (small: steps before the first level; large: a deep tree early), d in 1..4, up to 10 points of
    [0, 1]^d (boundaries included: the cuts at 0, 1/2, 1 are dyadic, exact in every float arithmetic). eps <= 8: a
    larger eps grows the tree so fast that a case makes thousands of draws."""
    params: dict[str, Any] = {"epsilon": draw.number(0.05, 8.0, (2.0, 1.0, 0.5, 0.25, 8.0)),
                              "d": draw.integer(1, draw.size(4, 8), (1, 2, 3))}
    length = draw.integer(1, draw.size(10, 120), (1, 2, 4, 8, 9, 16, 17, 32, 33, 64, 65))
    return Case(params, draw.points(params["d"], length), (f"d={params['d']}", f"{length} steps"))


def _consistency_cases(draw: CaseDraw) -> Case:
    """004-alg4: the rule left out (equal-shift) or drawn; 1 to 4 independent steps of noisy counts of depth r in
    0..5 (2^j integers at level j, negative ones included), sometimes written as floats."""
    params = optional(draw, {}, "rule", lambda: draw.choice(("equal-shift", "proportional")))
    as_floats = draw.choice((False, True))
    inputs: list[Any] = []
    for _ in range(draw.integer(1, draw.size(4, 16), (1,))):
        r = draw.integer(0, draw.size(5, 11), (0, 1, 3))
        levels = [[draw.integer(-3, 9, (0,)) for _ in range(2**j)] for j in range(r + 1)]
        inputs.append([[float(v) for v in level] for level in levels] if as_floats else levels)
    return Case(params, inputs, ("integer counts written as floats",) if as_floats else ())


# ----------------------------------------------------------------------------------------- statistical checks
# The witness search through the protocol (docs/conformance.md, "Statistical checks"): point streams of three
# shapes, POINT_REPLACE neighbours (one point x_tau replaced), the noisy counts and the synthetic points per region.
def _point_families(p: P, T: int) -> dict[str, list[list[float]]]:
    d = p["d"]
    return {"uniform": _uniform(T, d, derived_seed(4, "004-search", "uniform")),
            "clustered": _clustered(T, d, derived_seed(4, "004-search", "clustered")),
            "repeated": [[0.3] * d for _ in range(T)]}


def _replacements(p: P, f: list[Any]) -> list[tuple[str, list[Any]]]:
    """x_tau (tau = 1, the middle step, T) replaced by its mirror image 1 - x_tau, or by the point (0.95, ...); time
    by time, so that the quick profile's evenly spaced three (the first, the middle, the last) change x_1, the middle
    step and x_T: at eps = 0.5 the middle step of T = 6 lies in level 0 ([2, 4)), whose region counts the power table
    plants its leaks on (tests/catalog/test_designs_reach_planted.py)."""
    T, d = len(f), p["d"]
    kinds: dict[str, Callable[[list[float]], list[float]]] = {
        "its mirror image": lambda x: [round(1.0 - c, 6) for c in x], "a far corner": lambda x: [0.95] * d}
    out: list[tuple[str, list[Any]]] = []
    for tau in dict.fromkeys((1, (T + 1) // 2, T)):
        for kind, change in kinds.items():
            new = change(f[tau - 1])
            if new != f[tau - 1]:
                pair = point_replace_pairs(f, [(tau, new)])[0]
                out.append((f"x_{tau} replaced by {kind} {new}", [list(x) for x in pair.f_prime]))
    return out


ONLINE_DESIGN = SearchDesign(_point_families, _replacements, lambda p, T: online_features(p["epsilon"], p["d"], T),
                             lambda p, f: tuple(tuple(x) for x in f),
                             lambda p, T: contrasts(online_features(p["epsilon"], p["d"], T).names,
                                                    ("n'(", "points in ")),
                             linear=" n'(")
"""The composition reads the noisy counts only (``linear``): they are the region counters' releases, unclamped, so
S~'s level-end draws move them linearly; the synthetic points follow the counts after consistency's clamp at 0,
which bends them, and with them in the influence no draw of a 6-point stream was linear (004-alg1 under a planted
scale/12: no pair composed in transcript mode; with the noisy counts alone 'x_3 replaced by its mirror image'
composes 3.51 against the claim 2 over 4 draws, 0.29 with the reference's scales)."""


def _online_rejects() -> list[RejectSpec]:
    valid = {"epsilon": 2.0, "d": 2}
    params: list[tuple[str, dict[str, Any], str]] = [
        ("epsilon-zero", {**valid, "epsilon": 0.0}, "epsilon must be > 0"),
        ("epsilon-negative", {**valid, "epsilon": -2.0}, "epsilon must be > 0"),
        ("epsilon-string", {**valid, "epsilon": "2"}, "epsilon must be a number"),
        ("epsilon-missing", {"d": 2}, "epsilon is required"),
        ("d-zero", {**valid, "d": 0}, "d must be an integer >= 1"),
        ("d-fraction", {**valid, "d": 1.5}, "d must be an integer"),
        ("d-missing", {"epsilon": 2.0}, "d is required"),
        ("unknown-key", {**valid, "T": 10}, "unknown parameters are refused"),
    ]
    specs = [RejectSpec(f"init-{name}", p, reason, at_init=True) for name, p, reason in params]
    before, after = [[0.2, 0.3], [0.9, 0.6]], [[0.4, 0.1], [0.6, 0.8]]
    inputs: list[tuple[str, Any, str]] = [
        ("above-one", [0.2, 1.5], "a point lies in [0, 1]^d"),
        ("negative", [-0.01, 0.5], "a point lies in [0, 1]^d"),
        ("wrong-dimension", [0.1, 0.2, 0.3], "a point has d coordinates"),
        ("short", [0.1], "a point has d coordinates"),
        ("string", ["0.1", "0.2"], "coordinates are JSON numbers"),
        ("bool", [True, False], "coordinates are JSON numbers"),
        ("null", None, "a point is a JSON array"),
        ("object", {"x": 0.1, "y": 0.2}, "a point is a JSON array"),
        ("nested", [[0.1, 0.2]], "a point is a flat array of d numbers"),
    ]
    specs += [RejectSpec(f"step-{name}", valid, reason, before=before, bad_input=bad, after=after,
                         seed=derived_seed(3, "004-alg1", name)) for name, bad, reason in inputs]
    return specs


def _consistency_rejects() -> list[RejectSpec]:
    valid = {"rule": "equal-shift"}
    specs = [RejectSpec("init-rule-unknown", {"rule": "least-squares"}, "rule must be equal-shift or proportional",
                        at_init=True),
             RejectSpec("init-rule-number", {"rule": 1}, "rule must be a string", at_init=True),
             RejectSpec("init-unknown-key", {"rule": "equal-shift", "epsilon": 1.0}, "unknown parameters are refused",
                        at_init=True)]
    before, after = [[[5], [2, 2]]], [[[3], [1, 4], [0, 1, 2, 2]]]
    inputs: list[tuple[str, Any, str]] = [
        ("level-too-long", [[5], [1, 2, 3]], "level j holds 2^j counts"),
        ("root-level-two", [[5, 1]], "the root level holds one count"),
        ("fraction", [[5], [2.5, 2.5]], "counts are integers"),
        ("string", [[5], ["2", "3"]], "counts are JSON numbers"),
        ("bool", [[True]], "counts are JSON numbers"),
        ("empty", [], "at least the root level"),
        ("not-nested", [5, 2, 3], "levels are JSON arrays"),
        ("object", {"root": 5}, "the counts are a JSON array of levels"),
    ]
    specs += [RejectSpec(f"step-{name}", valid, reason, before=before, bad_input=bad, after=after)
              for name, bad, reason in inputs]
    return specs


ONLINE_ERRORS = ErrorModel("sums", steps_mass, param_ops=16, param_functions=3, decisions=(
    "the level times t_j = ceil(2^j / eps), on the exact value of the double eps (band 2 gamma(1) 2^j / eps)",
    "floor(T_0), T_0 = 9 ln T / eps_r of every region's 004-alg2 counter (band 2 gamma(6) T_0)"))
"""Integer counts and points copied from the tape; the budgets eps_{j,r} = C1 eps 2^((j - r)(1 - 1/d)/2) are a pow
and a few operations away from eps (C1 another pow); the regions' bounds are dyadic, exact."""
CONSISTENCY_ERRORS = ErrorModel("sums", numbers_mass)
"""Integers in, integers out (exact integer arithmetic, docs/hypercube.md)."""


ENTRIES: tuple[Entry, ...] = (
    Entry(
        "004-alg1", "Online synthetic data", "hypercube",
        ParamSchema((positive("epsilon", "privacy budget eps (pure DP, one point replaced)"),
                     integer("d", "dimension d of [0, 1]^d"))),
        _online, ONLINE_CODEC,
        proof="proofs/proof_hypercube_privacy.py", doc=DOC,
        errata=("E-hypercube-1", "E-hypercube-2", "E-hypercube-7", "E-hypercube-8", "E-hypercube-9",
                "E-hypercube-13"),
        as_printed=lambda p, n: _online(p, n, printed=True),
        vectors=with_integers_as_floats(_online_vectors, "d2-eps1-t8"),
        must_reject=_online_rejects,
        # two settings (eps below and above 1, d = 1 and 2): the thorough search on four took 348 s on 2 cores, over
        # the 5 minutes a synthesizer entry may take; the quick profile searched these two already
        statistical=StatisticalSpec(({"epsilon": 0.5, "d": 1}, {"epsilon": 2.0, "d": 2}),
                                    Neighbour.POINT_REPLACE, alphabet=None, horizon=None, length=6,
                                    design=ONLINE_DESIGN, cost=20,
                                    planted="004-alg3 u3 r=0",  # the level-0 sums of the depth-1 regions (counts)
                                    # its best pair reaches 15 % of the claim (S~'s updates: 0.29 of eps = 2)
                                    pair_reach=0.1),
        cases=_online_cases,
        notes="one point per step, no horizon (t is public); the region counters are 004-alg3 with 004-alg2 inside "
              "(the counters' entries). As printed: the u2 depth (one level more, E-hypercube-1) and the u6 input "
              "streams from 2^|theta| (E-hypercube-2); the counters stay corrected (their own entries have printed "
              "variants). Statistical checks: one point x_tau replaced; features: the noisy counts of every level "
              "and the synthetic points per deepest region, at every t (a run of 6 steps through serve: 0.6-2.3 "
              "ms, cost 20)",
        sites="region counters scoped '004-alg1 u6 theta=<bits> / 004-alg3 ...' (docs/hypercube.md); output "
              "'004-alg1 u8 t=<t> theta=<bits>' (uniform_box, count m_theta) per deepest region with m_theta > 0",
        error_model=ONLINE_ERRORS,
    ),
    Entry(
        "004-alg4", "Consistency", "hypercube",
        ParamSchema((string("rule", "how a parent's total is split: equal-shift (integer least squares) or "
                                    "proportional", tuple(r.value for r in ConsistencyRule),
                            default=ConsistencyRule.EQUAL_SHIFT.value),)),
        _consistency, CONSISTENCY_CODEC,
        proof="proofs/proof_hypercube_privacy.py", doc=DOC, errata=("E-hypercube-8", "E-hypercube-9"),
        vectors=_consistency_vectors,
        must_reject=_consistency_rejects,
        cases=_consistency_cases,
        notes="deterministic (no draws): served as a stateless stream, every step applies 004-alg4 to its INPUT "
              "(the noisy counts) and releases the consistent counts. No as-printed variant on the wire: the printed "
              "condition reads the true counts (E-hypercube-9), which the INPUT does not carry "
              "(consistency(..., constraint_counts=...)). No statistical checks: it is post-processing (claim "
              "not_private on its own)",
        sites="none (deterministic)",
        error_model=CONSISTENCY_ERRORS,
    ),
)
