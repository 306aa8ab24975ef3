"""Catalog entries of the longitudinal synthesizers (seed 002: 002-alg1, 002-alg2; 002-alg3 is a counter).

Protocol parameters (the papers' symbols): 002-alg1 takes the horizon ``T``, the window ``k`` (1 <= k <= T), the
zCDP budget ``rho`` and the padding ``n_pad`` per bin; 002-alg2 takes ``T``, ``rho`` and optionally the per-counter
budgets ``rho_b`` (b = 1..T, summing to rho; default Corollary B.1's allocation). INPUT and RELEASE:
:mod:`dpstream.catalog.codecs.longitudinal` (one column D^t per step).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from dpstream.audit.neighbours import individual_substitute_pairs
from dpstream.catalog.cases import Case, CaseDraw, horizon_labels, optional
from dpstream.catalog.codecs import Codec
from dpstream.catalog.codecs.longitudinal import (
    cumulative_features,
    decode_column,
    encode_cumulative,
    encode_window,
    window_features,
)
from dpstream.catalog.designs import contrasts
from dpstream.catalog.entry import Entry, RejectSpec, SearchDesign, StatisticalSpec, VectorSpec, with_integers_as_floats
from dpstream.catalog.error_model import ErrorModel
from dpstream.catalog.params import Param, ParamSchema, integer, positive
from dpstream.claims import Neighbour
from dpstream.longitudinal.cumulative import CumulativeSynthesizer
from dpstream.longitudinal.fixed_window import FixedWindowSynthesizer
from dpstream.longitudinal.generators import random_matrix
from dpstream.noise import NoiseSource, derived_seed

__all__ = ["ENTRIES"]

P = Mapping[str, Any]
DOC = "docs/longitudinal.md"

HORIZON = integer("T", "time horizon T: steps past T are refused")
CUMULATIVE_HORIZON = integer("T", "time horizon T <= 65536 (a budget and a counter per time): steps past T are refused",
                             maximum=2**16)
RHO = positive("rho", "privacy budget rho (zCDP, one individual's sequence substituted)")
WINDOW = integer("k", "time window length k, 1 <= k <= T")
N_PAD = integer("n_pad", "padding n_pad added to every bin of every window histogram", minimum=0)
RHO_B = Param("rho_b", "array", "per-counter budgets rho_1..rho_T summing to rho (default: Corollary B.1)",
              required=False, default=None, items={"type": "number", "exclusiveMinimum": 0})


def _fixed_window(p: P, noise: NoiseSource, printed: bool = False) -> FixedWindowSynthesizer:
    return FixedWindowSynthesizer(p["T"], p["k"], p["rho"], noise=noise, n_pad=p["n_pad"], as_printed=printed)


def _cumulative(p: P, noise: NoiseSource, printed: bool = False) -> CumulativeSynthesizer:
    return CumulativeSynthesizer(p["T"], p["rho"], noise=noise, rho_b=p["rho_b"], as_printed=printed)


_REPORTS = {"type": "array", "items": {"type": "integer", "minimum": 0, "maximum": 1}}
_INTS = {"type": "array", "items": {"type": "integer"}}
WINDOW_CODEC = Codec(_REPORTS, {"oneOf": [{"type": "null"}, {
    "type": "object", "required": ["p", "columns"], "additionalProperties": False,
    "properties": {"p": _INTS, "columns": {"type": "array", "items": _REPORTS}}}]}, decode_column, encode_window)
CUMULATIVE_CODEC = Codec(_REPORTS, {
    "type": "object", "required": ["column", "S_hat"], "additionalProperties": False,
    "properties": {"column": _REPORTS, "S_hat": _INTS}}, decode_column, encode_cumulative)


def _columns(n: int, T: int, seed: int, p1: float = 0.4, length: int | None = None) -> list[list[int]]:
    """The first ``length`` (default T) columns of an n x T report matrix with P[x = 1] = p1."""
    X = random_matrix(n, T, seed=seed, p1=p1)
    return [X[:, j].tolist() for j in range(T if length is None else length)]


def _edges(T: int) -> tuple[str, ...]:
    if T == 1:
        return ("T=1",)
    if T & (T - 1) == 0:
        return ("T=2^k",)
    if (T - 1) & (T - 2) == 0 or (T + 1) & T == 0:
        return ("T=2^k+-1",)
    return ()


def _fixed_window_vectors() -> list[VectorSpec]:
    specs = []
    for T, k, rho, n, n_pad, seed in ((6, 2, 1.0, 10, 12, 11), (5, 3, 4.0, 8, 10, 12)):
        specs.append(VectorSpec(f"fixed-window-T{T}-k{k}-rho{rho:g}", {"T": T, "k": k, "rho": rho, "n_pad": n_pad},
                                _columns(n, T, seed), seed, ("k < T",),
                                "FixedWindowSynthesizer (default variance (T-k+1)/rho). Each step's input is the "
                                "column D^t; expected is null for t < k, else p^t and the new synthetic columns "
                                "(as rows of the transposed block)."))
    # (name, T, k, rho, n, n_pad, length, p1, edges)
    cases: tuple[tuple[str, int, int, float, int, int, int, float, tuple[str, ...]], ...] = (
        ("T1-k1", 1, 1, 1.0, 6, 8, 1, 0.4, ("k=T", "k=1")),
        ("T8-k1", 8, 1, 2.0, 7, 8, 8, 0.4, ("k=1",)),
        ("T4-k4", 4, 4, 1.0, 9, 10, 4, 0.5, ("k=T",)),
        ("T9-k3", 9, 3, 4.0, 6, 8, 9, 0.3, ()),
        ("T7-k2-n1", 7, 2, 8.0, 1, 6, 7, 0.5, ("n=1",)),
        ("T3-k2-n0", 3, 2, 8.0, 0, 6, 3, 0.5, ("n=0",)),
        ("T8-k3-partial", 8, 3, 2.0, 5, 8, 5, 0.4, ("partial stream",)),
        ("T5-k2-all-ones", 5, 2, 2.0, 6, 8, 5, 1.0, ("all reports 1",)),
        ("T2-k1-rho0.1", 2, 1, 0.1, 5, 12, 2, 0.4, ("rho small",)),
    )
    for name, T, k, rho, n, n_pad, length, p1, edges in cases:
        specs.append(VectorSpec(name, {"T": T, "k": k, "rho": rho, "n_pad": n_pad},
                                _columns(n, T, derived_seed(1, "002-alg1", name), p1, length),
                                derived_seed(2, "002-alg1", name), (*_edges(T), *edges)))
    # padding near exhaustion: n_pad = 1 and three targets p_s^t = 0 (one unit of noise more would exhaust it);
    # the seed is the first of derived_seed(2, "002-alg1", "T6-k2-npad", i), i = 0, 1, ..., with a zero target
    specs.append(VectorSpec("T6-k2-npad1", {"T": 6, "k": 2, "rho": 5.0, "n_pad": 1},
                            _columns(4, 6, derived_seed(1, "002-alg1", "T6-k2-npad"), 0.5),
                            derived_seed(2, "002-alg1", "T6-k2-npad", 0), ("padding near exhaustion", "p_s^t = 0")))
    return specs


def _cumulative_vectors() -> list[VectorSpec]:
    # (name, T, rho, rho_b, n, length, p1, edges)
    cases: tuple[tuple[str, int, float, list[float] | None, int, int, float, tuple[str, ...]], ...] = (
        ("T1-n5", 1, 1.0, None, 5, 1, 0.5, ()),
        ("T2-n6", 2, 1.0, None, 6, 2, 0.5, ()),
        ("T4-n8", 4, 2.0, None, 8, 4, 0.4, ()),
        ("T7-n6", 7, 4.0, None, 6, 7, 0.4, ()),
        ("T8-n5", 8, 1.0, None, 5, 8, 0.3, ()),
        ("T9-n4-rho8", 9, 8.0, None, 4, 9, 0.5, ()),
        ("T5-n1", 5, 2.0, None, 1, 5, 0.6, ("n=1",)),
        ("T4-all-ones", 4, 2.0, None, 5, 4, 1.0, ("all reports 1",)),
        ("T4-all-zeros", 4, 2.0, None, 5, 4, 0.0, ("all reports 0",)),
        ("T3-rho-b-given", 3, 1.5, [0.25, 0.5, 0.75], 6, 3, 0.5, ("rho_b given",)),
        ("T8-partial", 8, 2.0, None, 6, 5, 0.4, ("partial stream",)),
        ("T6-rho0.05", 6, 0.05, None, 5, 6, 0.4, ("rho small",)),
    )
    specs = []
    for name, T, rho, rho_b, n, length, p1, edges in cases:
        params: dict[str, Any] = {"T": T, "rho": rho} if rho_b is None else {"T": T, "rho": rho, "rho_b": rho_b}
        specs.append(VectorSpec(name, params, _columns(n, T, derived_seed(1, "002-alg2", name), p1, length),
                                derived_seed(2, "002-alg2", name), (*_edges(T), *edges)))
    return specs


def _param_rejects(valid: P, extra: tuple[tuple[str, dict[str, Any], str], ...] = ()) -> list[RejectSpec]:
    cases = [
        ("rho-zero", {**valid, "rho": 0.0}, "rho must be > 0"),
        ("rho-negative", {**valid, "rho": -1.0}, "rho must be > 0"),
        ("rho-string", {**valid, "rho": "1"}, "rho must be a number"),
        ("rho-missing", {k: v for k, v in valid.items() if k != "rho"}, "rho is required"),
        ("T-zero", {**valid, "T": 0}, "T must be an integer >= 1"),
        ("T-fraction", {**valid, "T": 2.5}, "T must be an integer"),
        ("unknown-key", {**valid, "epsilon": 1.0}, "unknown parameters are refused"),
        *extra,
    ]
    return [RejectSpec(f"init-{name}", params, reason, at_init=True) for name, params, reason in cases]


def _step_rejects(anchor: str, valid: P) -> list[RejectSpec]:
    T = int(valid["T"])
    good = [[0, 1, 1, 0], [1, 1, 0, 0], [0, 0, 1, 1], [1, 0, 1, 0]]
    cases: list[tuple[str, Any, str]] = [
        ("column-too-long", [0, 1, 1, 0, 1], "a column has n entries (n fixed by the first column)"),
        ("column-too-short", [0, 1], "a column has n entries"),
        ("entry-two", [0, 2, 1, 0], "reports must be 0 or 1"),
        ("entry-negative", [0, -1, 1, 0], "reports must be 0 or 1"),
        ("entry-fraction", [0, 0.5, 1, 0], "reports must be 0 or 1"),
        ("entry-bool", [False, True, True, False], "reports are JSON numbers"),
        ("entry-string", ["0", "1", "1", "0"], "reports are JSON numbers"),
        ("nested", [[0, 1], [1, 0]], "a column is a flat array"),
        ("object", {"D": [0, 1, 1, 0]}, "a column is a JSON array"),
    ]
    specs = [RejectSpec(f"step-{name}", valid, reason, before=good[:2], bad_input=bad, after=good[2:T],
                        seed=derived_seed(3, anchor, name)) for name, bad, reason in cases]
    specs.append(RejectSpec("step-past-horizon", valid, f"a step past the horizon T = {T} is refused",
                            before=good[:T], bad_input=good[0], seed=derived_seed(3, anchor, "horizon")))
    return specs


# ----------------------------------------------------------------------------------------- differential cases
# Fresh cases (dpstream.catalog.cases): T up to 9 (k up to 6: 2^k draws per step), n in 0..10 individuals, streams
# within T. 002-alg1's padding can run out (E-longitudinal-3): the reference then refuses the run and the case is
# dropped, so n_pad is mostly large enough.
MAX_T = 9
T_EDGES = (1, 2, 3, 4, 5, 8, 9, 16, 17, 32, 33, 63, 64)
"""Horizons drawn often: the vectors' (up to 9), then 2^k and 2^k + 1 as the fuzzer's cases grow."""


def _reports(draw: CaseDraw, T: int) -> tuple[list[list[int]], tuple[str, ...]]:
    length = draw.integer(1, T, (1, T))
    rows = draw.report_matrix(draw.size(10, 80), length)
    columns = [[row[t] for row in rows] for t in range(length)]
    return columns, (*horizon_labels(T, length), f"n={len(rows)}")


def _fixed_window_cases(draw: CaseDraw) -> Case:
    T = draw.integer(1, draw.size(MAX_T, 64), T_EDGES)
    widest = min(T, draw.size(6, 10))
    params = {"T": T, "k": draw.integer(1, widest, (1, widest)),
              "rho": draw.number(0.01, 100.0, (1.0, 0.1, 8.0, 0.01, 100.0)), "n_pad": draw.integer(0, 60, (40, 0, 1))}
    columns, edges = _reports(draw, T)
    return Case(params, columns, (*edges, *(("k=T",) if params["k"] == T else ())))


def _cumulative_cases(draw: CaseDraw) -> Case:
    T = draw.integer(1, draw.size(MAX_T, 64), T_EDGES)
    params: dict[str, Any] = optional(draw, {"T": T}, "rho_b", lambda: [draw.integer(1, 8) / 4.0 for _ in range(T)])
    # rho: drawn, or the sum of the given rho_b (quarters: the sum is exact)
    rho = sum(params["rho_b"]) if "rho_b" in params else draw.number(0.01, 100.0, (1.0, 0.1, 8.0, 0.01, 100.0))
    params = {"T": T, "rho": rho, **({"rho_b": params["rho_b"]} if "rho_b" in params else {})}
    columns, edges = _reports(draw, T)
    return Case(params, columns, (*edges, "rho_b given" if "rho_b" in params else "rho_b left out"))


# ----------------------------------------------------------------------------------------- statistical checks
# The witness search through the protocol (docs/conformance.md, "Statistical checks"): n = 6 individuals' reports,
# INDIVIDUAL_SUBSTITUTE neighbours (one individual's whole sequence replaced), the released counts. 002-alg2 adds a
# crowd (its first input) whose counts stay far from the monotonization clamps (u6), so that a substitution moves
# the counters' draws linearly and its composed loss shows (docs/conformance.md, "Why the crowd").
SEARCH_N = 6
CROWD_N = 400
"""Individuals of 002-alg2's crowd: with P[x = 1] = 0.6 its smallest count S_T^T is about 0.6^T n = 31 at T = 5,
many standard deviations of the counters' noise above the clamp at 0 on the settings searched."""
CROWD_P1 = 0.6


def _report_families(p: P, T: int) -> dict[str, list[list[int]]]:
    return {"random": _columns(SEARCH_N, T, derived_seed(4, "002-search"), 0.4),
            "zeros": [[0] * SEARCH_N for _ in range(T)], "ones": [[1] * SEARCH_N for _ in range(T)]}


def _crowd_families(p: P, T: int) -> dict[str, list[list[int]]]:
    """The crowd first (individual 0 reports 1 at every step, the others 1 with probability 0.6), then the
    search's small families."""
    crowd = _columns(CROWD_N, T, derived_seed(4, "002-crowd"), CROWD_P1)
    return {"crowd": [[1, *column[1:]] for column in crowd], **_report_families(p, T)}


Kinds = dict[str, Callable[[tuple[int, ...]], tuple[int, ...]]]
SUBSTITUTIONS: Kinds = {
    "the complement": lambda r: tuple(1 - x for x in r), "all ones": lambda r: (1,) * len(r),
    "all zeros": lambda r: (0,) * len(r), "the last report flipped": lambda r: (*r[:-1], 1 - r[-1])}
LATE_ONES: Kinds = {
    "its first half zeroed": lambda r: (0,) * (len(r) // 2) + r[len(r) // 2:],
    "all but its last report zeroed": lambda r: (0,) * (len(r) - 1) + r[-1:]}
"""Substitutions that move an individual's ones later: each counter b then sees -1 where the old sequence reaches
weight b and +1 where the new one does, at times that the counter's tree (002-alg3) keeps in different nodes below
its root. On the crowd's individual 0 (all ones) the first half zeroed composes 11/18 = 0.611 of rho at T = 4, all
but the last 0.6 at T = 5 (all zeros: 0.5, each counter moved once at its budget rho_b / 2, E-longitudinal-7)."""


def _substitutions(p: P, f: list[Any], kinds: Kinds = SUBSTITUTIONS) -> list[tuple[str, list[Any]]]:
    """Individual i (the first and a middle one) gets each of ``kinds`` in turn (default: the complement of its
    sequence, all ones, all zeros, its last report flipped); substitutions that change nothing are left out."""
    rows = [tuple(int(column[i]) for column in f) for i in range(len(f[0]))]
    out: list[tuple[str, list[Any]]] = []
    seen: set[tuple[int, tuple[int, ...]]] = set()
    for kind, change in kinds.items():
        for i in dict.fromkeys((0, len(rows) // 2)):
            new = change(rows[i])
            if new != rows[i] and (i, new) not in seen:
                seen.add((i, new))
                pair = individual_substitute_pairs(rows, [(i, new)])[0]
                out.append((f"individual {i} gets {kind} {list(new)}", [list(c) for c in pair.f_prime]))
    return out


def _design(features: Any, quantity: str,
            families: Callable[[P, int], dict[str, list[list[int]]]] = _report_families,
            neighbours: Callable[[P, list[Any]], list[tuple[str, list[Any]]]] = _substitutions) -> SearchDesign:
    return SearchDesign(families, neighbours, features, lambda p, f: tuple(tuple(c) for c in f),
                        lambda p, T: contrasts(features(p, T).names, (quantity,), total="ones in synthetic column"))


WINDOW_DESIGN = _design(lambda p, T: window_features(T, p["k"]), "p_")
CUMULATIVE_DESIGN = _design(lambda p, T: cumulative_features(T), "S^_", _crowd_families,
                            lambda p, f: _substitutions(p, f, {**LATE_ONES, **SUBSTITUTIONS}))
SEARCH_COST = 10
"""Search budget divisor: a run of 3-5 steps through ``dpstream serve`` takes 0.2-0.5 ms (docs/conformance.md)."""

FIXED = {"T": 4, "k": 2, "rho": 2.0, "n_pad": 10}
CUMULATIVE = {"T": 4, "rho": 2.0}

LONGITUDINAL_ERRORS = ErrorModel("sums", param_ops=6)
"""Integer counts, integer noise and half-integer corrections: every release is exact; the variances are a few
operations on rho (and rho_b)."""


ENTRIES: tuple[Entry, ...] = (
    Entry(
        "002-alg1", "Private synthetic data preserving fixed time window queries", "longitudinal",
        ParamSchema((HORIZON, WINDOW, RHO, N_PAD)), _fixed_window, WINDOW_CODEC,
        proof="proofs/proof_longitudinal_fixed_window.py", doc=DOC,
        errata=("E-longitudinal-1", "E-longitudinal-2", "E-longitudinal-3", "E-longitudinal-6"),
        as_printed=lambda p, n: _fixed_window(p, n, printed=True),
        vectors=with_integers_as_floats(_fixed_window_vectors, "fixed-window-T6-k2-rho1"),
        must_reject=lambda: [
            *_param_rejects(FIXED, (
                ("k-zero", {**FIXED, "k": 0}, "k must be >= 1"),
                ("k-above-T", {**FIXED, "k": 5}, "k must be <= T"),
                ("n-pad-negative", {**FIXED, "n_pad": -1}, "n_pad must be >= 0"),
                ("n-pad-fraction", {**FIXED, "n_pad": 2.5}, "n_pad must be an integer"),
                ("n-pad-missing", {"T": 4, "k": 2, "rho": 2.0}, "n_pad is required"))),
            *_step_rejects("002-alg1", FIXED)],
        statistical=StatisticalSpec(({"T": 4, "k": 2, "rho": 0.5, "n_pad": 40},
                                     {"T": 5, "k": 1, "rho": 2.0, "n_pad": 40},
                                     {"T": 3, "k": 3, "rho": 1.0, "n_pad": 40}),
                                    Neighbour.INDIVIDUAL_SUBSTITUTE, alphabet=(0, 1), integer_inputs=True, length=4,
                                    design=WINDOW_DESIGN, cost=SEARCH_COST, planted="002-alg1 u3 "),
        cases=_fixed_window_cases,
        notes="RELEASE null before t = k; the noise can exhaust the padding (E-longitudinal-3): the step then raises "
              "PaddingExhaustedError (a StateError, not an input error; on the wire an error answer, and every later "
              "step is answered with an error) and the run is over -- the vectors use "
              "draws that do not, and the statistical sweep uses n_pad = 40 (exhaustion needs a discrete Gaussian "
              "below -40 with variance <= 12). Statistical checks: one individual's whole sequence substituted (the "
              "paper's model; n fixed); features: p^t and the ones of every synthetic column. "
              "As printed: variance (T-k+1)/(2 rho) (E-longitudinal-1)",
        sites="'002-alg1 u3 t=<t> s=<k bits>' (discrete_gaussian, sigma2 (T-k+1)/rho); "
              "'002-alg1 u11 t=<t> z=<k-1 bits>' (coin, only when Delta_z is not an integer); "
              "'002-alg1 u16 t=<t> z=<k-1 bits>' (choice, for every z, also of 0 or of all records); "
              "the empty z (k = 1) is '-'; record order and the release layout: docs/longitudinal.md, 'On the wire'",
        error_model=LONGITUDINAL_ERRORS,
    ),
    Entry(
        "002-alg2", "Private synthetic data preserving cumulative queries", "longitudinal",
        ParamSchema((CUMULATIVE_HORIZON, RHO, RHO_B)), _cumulative, CUMULATIVE_CODEC,
        proof="proofs/proof_longitudinal_cumulative.py", doc=DOC,
        errata=("E-longitudinal-7", "E-longitudinal-8", "E-longitudinal-9", "E-longitudinal-10"),
        as_printed=lambda p, n: _cumulative(p, n, printed=True),
        vectors=with_integers_as_floats(_cumulative_vectors, "T4-n8"),
        must_reject=lambda: [
            *_param_rejects(CUMULATIVE, (
                ("rho-b-short", {**CUMULATIVE, "rho_b": [1.0, 1.0]}, "rho_b holds T budgets"),
                ("rho-b-sum", {**CUMULATIVE, "rho_b": [0.5, 0.5, 0.5, 0.1]}, "rho_b sums to rho"),
                ("rho-b-negative", {**CUMULATIVE, "rho_b": [1.0, 1.0, 1.0, -1.0]}, "every rho_b > 0"),
                ("rho-b-not-array", {**CUMULATIVE, "rho_b": 0.5}, "rho_b is a JSON array"),
                ("rho-b-null", {**CUMULATIVE, "rho_b": None},
                 "rho_b is a JSON array: a parameter is given or absent, null is no value"))),
            *_step_rejects("002-alg2", CUMULATIVE)],
        statistical=StatisticalSpec(({"T": 4, "rho": 0.5}, {"T": 5, "rho": 2.0}), Neighbour.INDIVIDUAL_SUBSTITUTE,
                                    alphabet=(0, 1), integer_inputs=True, length=4, design=CUMULATIVE_DESIGN,
                                    cost=SEARCH_COST, planted="002-alg2 u5 "),
        cases=_cumulative_cases,
        notes="counters: tree-based aggregation (002-alg3) with budget rho_b / 2 (E-longitudinal-7); not DP under "
              "add/remove (n records are output). Statistical checks: one individual's sequence substituted; "
              "features: S^^t and the ones of every synthetic column. As "
              "printed: counter b gets the printed rho_b",
        sites="counter M_b scoped '002-alg2 u5 b=<b> / 002-alg3 u8 t=<local t>' (discrete_gaussian); "
              "'002-alg2 u8 t=<t> b=<b>' (choice of I_b, for every b, also of 0 or of all records); "
              "docs/longitudinal.md, 'On the wire'",
        error_model=LONGITUDINAL_ERRORS,
    ),
)
