"""Catalog entries of the tabular family (seeds 003 and 000: 003-alg1..3, 000-alg1..3; 003-alg4/000-alg4 are
counters).

Protocol parameters: the ``domain`` ``{"names", "sizes"}``, the ordered queries ``queries`` (marginal queries or
workloads, :mod:`dpstream.catalog.codecs.tabular`), ``k`` (selections per time step; iterations of the offline boxes),
``epsilon``, where the mass of a fitted dataset comes from (``total``: ``"public"`` with ``sizes`` = the public
|nabla f_t| for t = 1..T, which also fixes the horizon T = len(sizes); or ``"measured"`` from the noisy workload
measurements, workloads only: :mod:`dpstream.tabular.totals`) and A_Dataset (``"mw"``: multiplicative weights on
the newest measurement, 003-mw; ``"mw-all"``: one MW step per measurement). A_Select is the exponential
mechanism of Definition 3.8; A_Counter of 003-alg3 is the Simple counter (001-alg8), as in 003-sec7.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np

from dpstream.catalog.adapters import OneShot
from dpstream.catalog.cases import Case as FreshCase
from dpstream.catalog.cases import CaseDraw, optional
from dpstream.catalog.codecs import Codec, Features, is_json_number
from dpstream.catalog.codecs.tabular import (
    dataset_features,
    decode_dataset,
    decode_step,
    domain_of,
    encode_dataset,
    log_step_features,
    queries_of,
)
from dpstream.catalog.designs import Event, contrasts, event_neighbours
from dpstream.catalog.entry import Entry, RejectSpec, SearchDesign, StatisticalSpec, VectorSpec, with_integers_as_floats
from dpstream.catalog.error_model import ErrorModel
from dpstream.catalog.params import Param, ParamSchema, integer, positive, string
from dpstream.claims import Neighbour, PrivacyClaim
from dpstream.errors import DPStreamInputError, HorizonExceededError
from dpstream.noise import NoiseSource, data_rng, derived_seed
from dpstream.tabular.datasets import SyntheticDataset
from dpstream.tabular.domain import Domain, IntArray
from dpstream.tabular.fitting import MultiplicativeWeights
from dpstream.tabular.main_algorithm import MainAlgorithm
from dpstream.tabular.offline import offline_claim, select_measure_fit
from dpstream.tabular.queries import Query
from dpstream.tabular.selection import SelectionLaw, require_round_budget
from dpstream.tabular.stream import DifferentialDataset, StreamStep
from dpstream.tabular.streaming_mwem import OfflineToStream, StreamingMWEM, checked_queries, checked_round
from dpstream.tabular.totals import TotalKind, TotalRule

__all__ = ["ENTRIES"]

P = Mapping[str, Any]
DOC = "docs/tabular.md"

DOMAIN = Param("domain", "object", "X = X_1 x ... x X_p as {'names': [...], 'sizes': [...]}: distinct non-empty "
                                    "names, sizes >= 1, at most 65536 cells in all")
QUERIES = Param("queries", "array", "Q: marginal queries {'columns', 'values'} or workloads {'columns'}",
                items={"type": "object"})
K = integer("k", "k: selections per time step (iterations of the offline boxes), at most 1000", maximum=1000)
EPSILON = positive("epsilon", "privacy budget eps (pure DP, one record added or removed at one time)")
TOTAL = string("total", "the mass of the fitted datasets: public sizes, or measured from the noisy workloads",
               ("public", "measured"), default="public")
SIZES = Param("sizes", "array", "the public sizes |nabla f_t|, t = 1..T (total 'public'; T = their number)",
              required=False, default=None, items={"type": "number", "minimum": 0})
A_DATASET = string("A_Dataset", "mw: multiplicative weights, newest measurement (003-mw); mw-all: one MW step per "
                                "measurement", ("mw", "mw-all"), default="mw")
SCHEMA = ParamSchema((DOMAIN, QUERIES, K, EPSILON, TOTAL, SIZES, A_DATASET))
OFFLINE_SCHEMA = ParamSchema((DOMAIN, QUERIES, K, EPSILON, TOTAL,
                              Param("sizes", "array", "the public size |f| as a one-element array (total 'public')",
                                    required=False, default=None, items={"type": "number", "minimum": 0}),
                              A_DATASET))
OFFLINE_000_SCHEMA = ParamSchema((*OFFLINE_SCHEMA.params[:-1],
                                  string("A_Dataset", A_DATASET.doc, ("mw", "mw-all"), default="mw-all")))


# ----------------------------------------------------------------------------------------- parameters
def _size_at(sizes: Sequence[float], t: int) -> float:
    if t > len(sizes):
        raise HorizonExceededError("t", f"the public sizes cover T = {len(sizes)} steps", t)
    return float(sizes[t - 1])


def total_rule(p: P) -> TotalRule:
    """The :class:`TotalRule` of ``total`` and ``sizes`` (sizes checked: finite, >= 0)."""
    sizes = p.get("sizes")
    if p["total"] == "measured":
        if sizes is not None:
            raise DPStreamInputError("sizes", "is only used with total 'public'", sizes)
        return TotalRule.measured()
    if sizes is None:
        raise DPStreamInputError("sizes", "is required with total 'public' (the public sizes |nabla f_t|)", None)
    checked = []
    for n in sizes:
        if not is_json_number(n) or n < 0:
            raise DPStreamInputError("sizes", "must hold finite numbers >= 0", n)
        checked.append(float(n))
    return TotalRule.public(lambda t: _size_at(checked, t))


def _setup(p: P) -> tuple[Domain, list[Query], TotalRule, MultiplicativeWeights]:
    domain = domain_of(p["domain"])
    Q = queries_of(domain, p["queries"])
    return domain, Q, total_rule(p), MultiplicativeWeights("newest" if p["A_Dataset"] == "mw" else "all")


def _domain(params: P) -> Domain:
    return domain_of(params["domain"])


# ----------------------------------------------------------------------------------------- builders
def _offline(p: P, noise: NoiseSource, *, printed: bool = False, from_scratch: bool = False, anchor: str = "003-alg1"
             ) -> OneShot:
    domain, Q, total, fitter = _setup(p)
    checked_queries(Q, distinct=False)
    total.check_queries(Q)
    if p["sizes"] is not None and len(p["sizes"]) != 1:
        raise DPStreamInputError("sizes", "the offline box takes one public size, that of f", p["sizes"])
    eps, k = p["epsilon"], p["k"]
    require_round_budget(eps, k)  # refused now, not at the step

    def run(records: IntArray) -> SyntheticDataset:
        f = DifferentialDataset(domain, StreamStep(records, np.zeros((0, domain.p), dtype=np.int64)))
        return select_measure_fit(f, Q, eps, k, fitter, total=total, noise=noise, as_printed=printed,
                                  from_scratch=from_scratch).g

    return OneShot(run, offline_claim(eps, k, printed, total), PrivacyClaim.pure(eps, Neighbour.EVENT, anchor),
                   algorithm=select_measure_fit)


def _streaming_mwem(p: P, noise: NoiseSource, printed: bool = False) -> StreamingMWEM:
    domain, Q, total, fitter = _setup(p)
    if printed:  # L11's law (E-tabular-1), g_0 = 1 (E-tabular-6), mass |nabla f_t| read from the data (E-tabular-3)
        return StreamingMWEM(domain, Q, p["k"], p["epsilon"], noise=noise, total=TotalRule.true_size(), fitter=fitter,
                             selection_law=SelectionLaw.PRINTED_ALG2_L11, g0_ones=True)
    return StreamingMWEM(domain, Q, p["k"], p["epsilon"], noise=noise, total=total, fitter=fitter)


def _offline_to_stream(p: P, noise: NoiseSource) -> OfflineToStream:
    domain, Q, total, fitter = _setup(p)
    Q, k, eps, total = checked_round(Q, p["k"], p["epsilon"], total)
    built: list[OfflineToStream] = []

    def mwem(diff: DifferentialDataset, scoped_noise: NoiseSource) -> SyntheticDataset:
        t = built[0].t + 1
        # the public size of nabla f_t (checked before any draw), or the measured total
        rule = TotalRule.public(total.public_size(t)) if total.kind is TotalKind.PUBLIC else total
        return select_measure_fit(diff, Q, eps, k, fitter, total=rule, noise=scoped_noise).g

    built.append(OfflineToStream(domain, mwem, offline_claim(eps, k, False, total), noise=noise))
    return built[0]


def _main_algorithm(p: P, noise: NoiseSource, printed: bool = False) -> MainAlgorithm:
    domain, Q, total, fitter = _setup(p)
    if printed:  # Definition 3.8's printed sign (E-tabular-2) and the printed workload sensitivity (E-tabular-8)
        return MainAlgorithm(domain, Q, p["k"], p["epsilon"], noise=noise, total=total, fitter=fitter,
                             selection_law=SelectionLaw.PRINTED_DEF_3_8, printed_workload_sensitivity=True)
    return MainAlgorithm(domain, Q, p["k"], p["epsilon"], noise=noise, total=total, fitter=fitter)


# ----------------------------------------------------------------------------------------- codecs
_RECORDS = {"type": "array", "items": {"type": "array", "items": {"type": "integer", "minimum": 0}}}
_CELLS = {"type": "array", "items": {"type": "number"}}
STREAM_CODEC = Codec({"type": "object", "required": ["added", "removed"], "additionalProperties": False,
                      "properties": {"added": _RECORDS, "removed": _RECORDS}}, _CELLS,
                     lambda x, p: decode_step(x, _domain(p)), encode_dataset)
OFFLINE_CODEC = Codec(_RECORDS, _CELLS, lambda x, p: decode_dataset(x, _domain(p)), encode_dataset)


# ----------------------------------------------------------------------------------------- vector inputs
def one_way(sizes: Sequence[int]) -> list[dict[str, list[int]]]:
    """Every 1-way marginal query, attribute by attribute."""
    return [{"columns": [c], "values": [v]} for c, n in enumerate(sizes) for v in range(n)]


def two_way(sizes: Sequence[int]) -> list[dict[str, list[int]]]:
    """Every 2-way marginal query (003-def3.5), column pairs in order."""
    return [{"columns": [a, b], "values": [u, v]} for a in range(len(sizes)) for b in range(a + 1, len(sizes))
            for u in range(sizes[a]) for v in range(sizes[b])]


def _domain_json(sizes: Sequence[int]) -> dict[str, list[Any]]:
    return {"names": [chr(ord("a") + i) for i in range(len(sizes))], "sizes": list(sizes)}


def records_stream(sizes: Sequence[int], seed: int, plan: Sequence[tuple[int, int]]) -> list[dict[str, list[Any]]]:
    """nabla f_t as records: step t adds ``plan[t-1][0]`` records (skewed towards the first value of every
    attribute) and removes ``plan[t-1][1]`` present ones."""
    rng = data_rng(seed)
    present: list[list[int]] = []
    out: list[dict[str, list[Any]]] = []
    for n_add, n_remove in plan:
        added = [[int(v) if rng.random() < 0.6 else 0 for v in (rng.integers(0, n) for n in sizes)]
                 for _ in range(n_add)]
        removed = [present.pop(int(rng.integers(0, len(present)))) for _ in range(min(n_remove, len(present)))]
        present += added
        out.append({"added": added, "removed": removed})
    return out


def _sizes_of(inputs: Sequence[Mapping[str, Sequence[Any]]]) -> list[int]:
    return [len(x["added"]) - len(x["removed"]) for x in inputs]


OLD_INPUTS: list[dict[str, list[list[int]]]] = [
    {"added": [[0, 0], [0, 0], [1, 2], [0, 1], [1, 2], [1, 0]], "removed": []},
    {"added": [[1, 1], [1, 2], [0, 0], [1, 2]], "removed": []},
    {"added": [[0, 2], [0, 2], [1, 1]], "removed": [[0, 0], [1, 2]]},
    {"added": [[1, 0], [1, 0], [1, 0], [0, 1], [0, 0]], "removed": []},
    {"added": [[0, 1], [0, 2], [1, 1]], "removed": [[1, 0], [1, 1]]},
]
OLD_PARAMS: dict[str, Any] = {"domain": _domain_json((2, 3)), "queries": one_way((2, 3)), "k": 2, "epsilon": 1.0,
                              "total": "public", "sizes": _sizes_of(OLD_INPUTS), "A_Dataset": "mw"}

def workloads(sizes: Sequence[int], way: int) -> list[dict[str, list[int]]]:
    """Every ``way``-way workload (003-def7.1), columns in order."""
    return [{"columns": list(c)} for c in itertools.combinations(range(len(sizes)), way)]


def _queries(sizes: Sequence[int], kind: str) -> list[dict[str, list[int]]]:
    return {"one-way": one_way, "two-way": two_way}[kind](sizes) if not kind.startswith("workloads") else workloads(
        sizes, int(kind[-1]))


class Case(NamedTuple):
    """A stream vector: the domain's attribute sizes, the queries (``one-way``, ``two-way``, ``workloads-1``,
    ``workloads-2``), k, eps, the plan of (added, removed) records per step, how many public sizes past the stream
    (a partial stream), A_Dataset, the edges, and the total rule."""

    name: str
    sizes: tuple[int, ...]
    queries: str
    k: int
    eps: float
    plan: tuple[tuple[int, int], ...]
    extra: int
    fitter: str
    edges: tuple[str, ...]
    total: str = "public"


STREAM_CASES: tuple[Case, ...] = (
    Case("T1-2x3", (2, 3), "one-way", 2, 1.0, ((8, 0),), 0, "mw", ("T=1",)),
    Case("empty-step-2x3", (2, 3), "one-way", 2, 1.0, ((6, 0), (0, 0), (4, 1)), 0, "mw", ("a step adding nothing",)),
    Case("removals-2x2", (2, 2), "one-way", 1, 2.0, ((6, 0), (5, 3), (4, 2), (3, 1)), 0, "mw",
         ("steps removing records", "k=1")),
    Case("k-all-2x3", (2, 3), "one-way", 5, 1.0, ((7, 0), (4, 1), (3, 0)), 0, "mw", ("k=|Q|",)),
    Case("two-way-2x2x2", (2, 2, 2), "two-way", 3, 1.0, ((8, 0), (5, 2), (4, 1)), 0, "mw", ("2-way marginals",)),
    Case("p1-size4", (4,), "one-way", 2, 1.0, ((6, 0), (3, 2), (5, 0), (2, 1)), 0, "mw", ("p=1",)),
    Case("eps0.2-3x2", (3, 2), "one-way", 2, 0.2, ((9, 0), (4, 2), (6, 1)), 0, "mw", ("eps small",)),
    Case("eps8-2x3", (2, 3), "one-way", 2, 8.0, ((9, 0), (4, 2), (6, 1)), 0, "mw", ("eps large",)),
    Case("mw-all-2x3", (2, 3), "one-way", 3, 1.0, ((6, 0), (5, 2), (3, 0)), 0, "mw-all", ("A_Dataset=mw-all",)),
    Case("partial-2x2", (2, 2), "one-way", 2, 1.0, ((5, 0), (3, 1), (2, 0)), 2, "mw", ("partial stream",)),
    Case("workloads-public-2x3", (2, 3), "workloads-1", 1, 1.0, ((7, 0), (4, 1), (3, 0)), 0, "mw",
         ("workloads", "total=public")),
    Case("workloads-measured-2x2x2", (2, 2, 2), "workloads-2", 2, 2.0, ((9, 0), (2, 4), (6, 1)), 0, "mw",
         ("workloads", "total=measured", "a step removing more than it adds"), "measured"),
)


def _case_vectors(anchor: str, cases: Sequence[Case], old: VectorSpec | None = None) -> list[VectorSpec]:
    specs = [] if old is None else [old]
    for c in cases:
        inputs = records_stream(c.sizes, derived_seed(1, "tabular-stream", c.name), c.plan)
        params: dict[str, Any] = {"domain": _domain_json(c.sizes), "queries": _queries(c.sizes, c.queries), "k": c.k,
                                  "epsilon": c.eps, "total": c.total, "A_Dataset": c.fitter}
        if c.total == "public":
            params["sizes"] = _sizes_of(inputs) + [1] * c.extra
        specs.append(VectorSpec(c.name, params, inputs, derived_seed(2, anchor, c.name), c.edges))
    return specs


# (name, attribute sizes, queries, k, eps, n, A_Dataset, edges, total)
OFFLINE_CASES: tuple[tuple[str, tuple[int, ...], str, int, float, int, str, tuple[str, ...], str], ...] = (
    ("2x3-k2", (2, 3), "one-way", 2, 1.0, 12, "mw", (), "public"),
    ("2x3-k1", (2, 3), "one-way", 1, 1.0, 10, "mw", ("k=1",), "public"),
    ("2x3-k5", (2, 3), "one-way", 5, 2.0, 10, "mw", ("k=|Q|",), "public"),
    ("2x3-k8-repeats", (2, 3), "one-way", 8, 4.0, 14, "mw", ("k>|Q|: queries selected again",), "public"),
    ("2x2x2-two-way", (2, 2, 2), "two-way", 3, 1.0, 16, "mw", ("2-way marginals",), "public"),
    ("p1-size4", (4,), "one-way", 2, 1.0, 9, "mw", ("p=1",), "public"),
    ("empty-dataset", (2, 3), "one-way", 2, 1.0, 0, "mw", ("n=0",), "public"),
    ("eps0.2", (3, 2), "one-way", 2, 0.2, 11, "mw", ("eps small",), "public"),
    ("mw-all", (2, 3), "one-way", 3, 1.0, 12, "mw-all", ("A_Dataset=mw-all",), "public"),
    ("mw-newest", (2, 3), "one-way", 3, 1.0, 12, "mw", ("A_Dataset=mw",), "public"),
    ("workloads-measured-2x2x2", (2, 2, 2), "workloads-2", 2, 2.0, 15, "mw", ("workloads", "total=measured"),
     "measured"),
)


def _offline_vectors(anchor: str) -> Callable[[], list[VectorSpec]]:
    def make() -> list[VectorSpec]:
        specs = []
        for name, sizes, kind, k, eps, n, fitter, edges, total in OFFLINE_CASES:
            (records,) = [x["added"] for x in records_stream(sizes, derived_seed(1, "tabular-offline", name), [(n, 0)])]
            params: dict[str, Any] = {"domain": _domain_json(sizes), "queries": _queries(sizes, kind), "k": k,
                                      "epsilon": eps, "total": total, "A_Dataset": fitter}
            if total == "public":
                params["sizes"] = [n]
            specs.append(VectorSpec(name, params, [records], derived_seed(2, anchor, name), ("T=1", *edges)))
        return specs
    return make


# ----------------------------------------------------------------------------------------- must-reject
def _param_rejects(valid: P, *, offline: bool = False) -> list[RejectSpec]:
    dom = valid["domain"]
    q = valid["queries"]
    cases: list[tuple[str, dict[str, Any], str]] = [
        ("epsilon-zero", {**valid, "epsilon": 0.0}, "epsilon must be > 0"),
        ("epsilon-string", {**valid, "epsilon": "1"}, "epsilon must be a number"),
        ("epsilon-missing", {k: v for k, v in valid.items() if k != "epsilon"}, "epsilon is required"),
        ("k-zero", {**valid, "k": 0}, "k must be >= 1"),
        ("k-fraction", {**valid, "k": 1.5}, "k must be an integer"),
        ("domain-size-zero", {**valid, "domain": {"names": dom["names"], "sizes": [0, *dom["sizes"][1:]]}},
         "every attribute size is >= 1"),
        ("domain-lengths", {**valid, "domain": {"names": dom["names"][:1], "sizes": dom["sizes"]}},
         "one size per attribute name"),
        ("domain-not-object", {**valid, "domain": [2, 3]}, "the domain is {'names', 'sizes'}"),
        ("domain-missing", {k: v for k, v in valid.items() if k != "domain"}, "domain is required"),
        ("queries-empty", {**valid, "queries": []}, "Q is non-empty"),
        ("query-value-outside", {**valid, "queries": [*q[:-1], {"columns": [1], "values": [7]}]},
         "a query's value must lie in its attribute's domain (unknown attribute value)"),
        ("query-column-outside", {**valid, "queries": [*q[:-1], {"columns": [5], "values": [0]}]},
         "a query's columns lie in [0, p)"),
        ("query-columns-unordered", {**valid, "queries": [{"columns": [1, 0], "values": [0, 0]}, *q[1:]]},
         "a query's columns are strictly increasing"),
        ("queries-mixed", {**valid, "queries": [*q[:-1], {"columns": [0, 1]}]},
         "Q holds only marginal queries or only workloads"),
        ("measured-with-marginals", {**valid, "total": "measured", "sizes": None},
         "total 'measured' needs workloads"),
        ("measured-with-sizes", {**valid, "total": "measured", "queries": [{"columns": [0]}, {"columns": [1]}]},
         "sizes are only used with total 'public'"),
        ("sizes-missing", {k: v for k, v in valid.items() if k != "sizes"}, "total 'public' needs sizes"),
        ("sizes-negative", {**valid, "sizes": [-1.0] * len(valid["sizes"])}, "public sizes are >= 0"),
        ("A-Dataset-unknown", {**valid, "A_Dataset": "pgm"}, "A_Dataset is mw or mw-all"),
        ("total-unknown", {**valid, "total": "true-size"}, "total is public or measured"),
        ("unknown-key", {**valid, "T": 5}, "unknown parameters are refused"),
    ]
    if offline:
        cases.append(("sizes-two", {**valid, "sizes": [3, 4]}, "the offline box takes one public size"))
    else:
        cases += [("k-above-Q", {**valid, "k": len(q) + 1}, "k must not exceed |Q|"),
                  ("query-twice", {**valid, "queries": [q[0], *q]}, "Q must not hold the same query twice")]
    # drop the keys whose value is None (a parameter left out, as in 'measured' without sizes)
    return [RejectSpec(f"init-{name}", {k: v for k, v in params.items() if v is not None}, reason, at_init=True)
            for name, params, reason in cases]


def _step_rejects(anchor: str, valid: P) -> list[RejectSpec]:
    T = len(valid["sizes"])
    good = [{"added": [[0, 1], [1, 2], [0, 0]], "removed": []}, {"added": [[1, 1]], "removed": [[0, 0]]},
            {"added": [[0, 2], [1, 0]], "removed": []}]
    cases: list[tuple[str, Any, str]] = [
        ("value-outside", {"added": [[0, 3]], "removed": []}, "a record's value lies in its attribute's domain"),
        ("value-negative", {"added": [[-1, 0]], "removed": []}, "a record's value lies in its attribute's domain"),
        ("arity", {"added": [[0]], "removed": []}, "a record has p values"),
        ("fraction", {"added": [[0, 0.5]], "removed": []}, "values are integer codes"),
        ("string", {"added": [["0", "1"]], "removed": []}, "values are JSON numbers"),
        ("bool", {"added": [[True, False]], "removed": []}, "values are JSON numbers"),
        ("remove-absent", {"added": [], "removed": [[1, 2], [1, 2]]},
         "a removed record must be present (f_t(x) >= 0)"),
        ("removed-missing", {"added": [[0, 0]]}, "a step has 'added' and 'removed'"),
        ("not-object", [[0, 0]], "a step is a JSON object"),
    ]
    specs = [RejectSpec(f"step-{name}", valid, reason, before=good[:2], bad_input=bad, after=good[2:T],
                        seed=derived_seed(3, anchor, name)) for name, bad, reason in cases]
    specs.append(RejectSpec("step-past-sizes", valid, f"the public sizes cover T = {T} steps",
                            before=good[:T], bad_input=good[0], seed=derived_seed(3, anchor, "horizon")))
    return specs


def _offline_rejects(anchor: str, valid: P) -> list[RejectSpec]:
    good = [[0, 1], [1, 2], [0, 0]]
    cases: list[tuple[str, Any, str]] = [
        ("value-outside", [[0, 3]], "a record's value lies in its attribute's domain"),
        ("arity", [[0, 1, 1]], "a record has p values"),
        ("string", [["a", "b"]], "values are JSON numbers"),
        ("not-array", {"added": good}, "a dataset is a JSON array of records"),
    ]
    specs = [RejectSpec(f"step-{name}", valid, reason, bad_input=bad, after=[good], seed=derived_seed(3, anchor, name))
             for name, bad, reason in cases]
    specs.append(RejectSpec("step-second-input", valid, "the offline box is one-shot: a second input is past T = 1",
                            before=[good], bad_input=good, seed=derived_seed(3, anchor, "second")))
    return [*_param_rejects(valid, offline=True), *specs]


STREAM_VALID: dict[str, Any] = {"domain": _domain_json((2, 3)), "queries": one_way((2, 3)), "k": 2, "epsilon": 1.0,
                                "total": "public", "sizes": [3, 0, 2], "A_Dataset": "mw"}
OFFLINE_VALID: dict[str, Any] = {**STREAM_VALID, "sizes": [3]}


def first_values(sizes: Sequence[int]) -> list[dict[str, list[int]]]:
    """One 1-way marginal query per attribute, its first value: no query is another's complement."""
    return [{"columns": [c], "values": [0]} for c in range(len(sizes))]


def _sweep(offline: bool = False) -> tuple[dict[str, Any], ...]:
    """The statistical settings: one measurement per step (k = 1) on :func:`first_values`, two on every 1-way
    query. With a public total a query and its complement score alike and their multiplicative-weights updates
    coincide (measuring q at m releases what measuring 1 - q at n - m does), so a complement-closed workload hides
    which of the two was measured, and with it about half of each measurement's loss: on ``one_way((2, 2))`` a
    measurement at half its scale shows log((e^(2/b) + 1) / 2) < 2/b in the releases (docs/conformance.md,
    "Transcript mode"). The k = 1 settings use queries whose updates the releases tell apart."""
    return tuple({"domain": _domain_json((2, 2)), "queries": first_values((2, 2)) if k == 1 else one_way((2, 2)),
                  "k": k, "epsilon": eps, "total": "public", "sizes": [n] if offline else [n] * 3, "A_Dataset": "mw"}
                 for eps in (0.5, 2.0) for k in (1, 2) for n in (SELECTION_SIZE if k == 1 else 2,))


SELECTION_SIZE = 20
"""Records per step of the k = 1 settings: on the ``balanced`` input the selection then picks the query on the first
attribute (its error 0 on f, 1 on f') at about 0.22 (0.08 with its epsilon doubled) against the one on the last
(error n/2): where a selection spends most of its share, so that a selection that spends too much shows."""


# ----------------------------------------------------------------------------------------- differential cases
# Fresh cases (dpstream.catalog.cases): domains of 1 to 3 attributes of 1 to 3 values, every 1-way or 2-way marginal
# query or workload, k up to |Q| (the offline boxes: up to 2 |Q|, queries selected again) and at most 6, total public
# (sizes = the net sizes of the steps, sometimes with sizes past the stream) or measured (workloads), A_Dataset left
# out or drawn; up to 4 steps of up to 6 added records, removing present ones (never more than they add with public
# sizes, which are >= 0).
MAX_K = 6


def _tabular_params(draw: CaseDraw, offline: bool) -> tuple[dict[str, Any], tuple[str, ...]]:
    widest, cells = draw.size(3, 6), draw.size(27, 1024)
    sizes: list[int] = []
    for _ in range(draw.integer(1, draw.size(3, 5), (1, 2, 3))):
        size = draw.integer(1, widest, (2, 1, 3))
        if math.prod(sizes) * size <= cells:
            sizes.append(size)
    kinds = ("one-way", *(("workloads-1",) if draw.feature("workloads") else ()),
             *(("two-way", *(("workloads-2",) if draw.feature("workloads") else ())) if len(sizes) > 1 else ()))
    kind = draw.choice(kinds)
    Q = _queries(sizes, kind)
    top = min(draw.size(MAX_K, 16), 2 * len(Q) if offline else len(Q))
    params: dict[str, Any] = {"domain": _domain_json(sizes), "queries": Q, "k": draw.integer(1, top, (1, 2, top)),
                              "epsilon": draw.number(0.01, 100.0, (1.0, 0.2, 8.0, 0.01, 100.0))}
    total = draw.choice(("public", "measured")) if kind.startswith("workloads") and draw.feature("measured totals") \
        else "public"
    params = optional(draw, params, "total", lambda: total) if total == "public" else {**params, "total": total}
    params = optional(draw, params, "A_Dataset", lambda: draw.choice(("mw", "mw-all")))
    edges = (f"p={len(sizes)}", kind, f"total={total}", *(("k=|Q|",) if params["k"] == len(Q) else ()),
             *(("A_Dataset left out",) if "A_Dataset" not in params else ()))
    return params, edges


def _fresh_offline(draw: CaseDraw) -> FreshCase:
    """003-alg1, 000-alg1: one dataset of up to 12 records (n = 0 included)."""
    params, edges = _tabular_params(draw, offline=True)
    records = draw.records(params["domain"]["sizes"], draw.size(12, 200))
    if params.get("total", "public") == "public":
        params["sizes"] = [len(records)]
    return FreshCase(params, [records], (*edges, f"n={len(records)}"))


def _fresh_stream(draw: CaseDraw) -> FreshCase:
    """003-alg2/3, 000-alg2/3: 1 to 4 steps; every present record may be removed (at most as many as the step adds
    with public sizes)."""
    params, edges = _tabular_params(draw, offline=False)
    public = params.get("total", "public") == "public"
    present: list[list[int]] = []
    steps: list[dict[str, list[Any]]] = []
    removals = draw.feature("removals")
    for _ in range(draw.integer(1, draw.size(4, 40), (1, 2, 3))):
        added = draw.records(params["domain"]["sizes"], draw.size(6, 30))
        removed: list[list[int]] = []
        for record in list(present) if removals else []:
            if (not public or len(removed) < len(added)) and draw.choice((False, True)):
                removed.append(record)
                present.remove(record)
        present += added
        steps.append({"added": added, "removed": removed})
    if public:
        extra = [draw.integer(0, 4) for _ in range(draw.integer(0, 2, (0,)))]
        params["sizes"] = [len(x["added"]) - len(x["removed"]) for x in steps] + extra
        edges += ("partial stream",) if extra else ()
    if any(not x["added"] and not x["removed"] for x in steps):
        edges += ("a step adding nothing",)
    return FreshCase(params, steps, (*edges, f"T={len(steps)}"))

# ----------------------------------------------------------------------------------------- statistical checks
# The witness search through the protocol (docs/conformance.md, "Statistical checks"): record streams whose net
# sizes are the public sizes, EVENT neighbours (one record added or removed at one time, the public sizes
# unchanged: they are parameters), the released cell counts.
def _net_sizes(p: P, T: int) -> list[int]:
    sizes = p.get("sizes")
    return [2] * T if sizes is None else [int(n) for n in sizes[:T]]


def _record_families(p: P, T: int) -> dict[str, list[dict[str, list[Any]]]]:
    """Every record's last attribute at its last value, so that a record of the first cell (0, ..., 0) lowers the
    error of the queries on the last attribute's first value (under-counted against a uniform start) and raises or
    keeps that of the queries on the first attribute's: balanced: the first attribute alternating 0 and 1 (its
    queries' error about 0: the selection picks them rarely, and then spends most of its share); crossed: every
    record at (0, ..., 0, last) (the queries on the first attribute over-counted: the selection moves both ways at
    even odds). churn: skewed records, one present record removed at every step after the first (each step's net
    size is the public size)."""
    attrs, net = list(p["domain"]["sizes"]), _net_sizes(p, T)
    last = attrs[-1] - 1

    def record(first: int) -> list[int]:
        return [first] + [0] * (len(attrs) - 2) + [last] if len(attrs) > 1 else [first]

    balanced = [{"added": [record(i % 2) for i in range(n)], "removed": []} for n in net]
    crossed = [{"added": [record(0)] * n, "removed": []} for n in net]
    churn = records_stream(attrs, derived_seed(4, "tabular-search"), [(n + (t > 0), int(t > 0))
                                                                      for t, n in enumerate(net)])
    return {"balanced": balanced, "crossed": crossed, "churn": churn}


def _opposed(p: P, T: int) -> list[dict[str, list[Any]]]:
    """Steps whose increments count the first attribute's first value up and the last attribute's down. Odd steps
    add n/4 records (1, ..., 0) and 3n/4 records (0, ..., last) (scores 15 and 5 at n = 20: a is taken with
    probability 0.78); even steps add 3n/4 records (0, ..., last) and n/2
    records (1, ..., last) and remove n/4 of the records (1, ..., 0) (net size n, the public size). On an even step
    q_a(nabla f_t) = 3n/4 and q_b(nabla f_t) = -n/4 for a = the first attribute's first value, b = the last
    attribute's: a record of the first cell (0, ..., 0) inserted there raises |q_a| and lowers |q_b|, the two-way
    move in which 003-alg3's selection (scored by |q_i(nabla f_t)| at its first round, h_{t,0} = g_{t-1}) spends
    most of its share along the rare choice of b: at eps/(2k) = 0.25 and n = 20 (scores 15 and 5) b is taken with
    probability 0.25 and the pair's log-ratio there is 0.19 of 0.25 (with the epsilon doubled: 0.095 and 0.46 of
    0.5), rare enough to show the ratio and common enough to be counted. The last step, when odd, adds n records (0,
    ..., last): its scores (n, 0) take a, so that the path with b at t = 2 measures b once (a query measured at two
    consecutive steps is refitted from the fit of its own noisy value, not linear in its noise)."""
    attrs, net = list(p["domain"]["sizes"]), _net_sizes(p, T)
    last = attrs[-1] - 1

    def record(first: int, end: int) -> list[int]:
        return [first] + [0] * (len(attrs) - 2) + [end] if len(attrs) > 1 else [first]

    out: list[dict[str, list[Any]]] = []
    for t, n in enumerate(net):
        half, quarter = n // 2, n // 4
        if t % 2 == 1 and len(attrs) > 1:
            out.append({"added": [record(0, last)] * (n - half + quarter) + [record(1, last)] * half,
                        "removed": [record(1, 0)] * quarter})
        elif t == len(net) - 1 and t > 0:
            out.append({"added": [record(0, last)] * n, "removed": []})
        else:
            out.append({"added": [record(1, 0)] * quarter + [record(0, last)] * (n - quarter), "removed": []})
    return out


def _main_families(p: P, T: int) -> dict[str, list[dict[str, list[Any]]]]:
    """003-alg3's inputs: :func:`_opposed` first (the composed tests' input), then ``crossed`` and ``churn`` of
    :func:`_record_families`. ``balanced`` is left out: its insertion moves both first-round scores |q_i(nabla f_t)|
    up, so its selections show nothing, and its paths vary, while on ``crossed`` (scores (n, 0)) the selection takes
    the same query almost always, so a count released without noise shows in a fixed event."""
    families = _record_families(p, T)
    return {"opposed": _opposed(p, T), "crossed": families["crossed"], "churn": families["churn"]}


def _step_events(step: Mapping[str, Any]) -> tuple[Event, ...]:
    return (*((*r, 1) for r in step["added"]), *((*r, -1) for r in step["removed"]))


def _events_step(batch: Sequence[Event]) -> dict[str, list[Any]]:
    return {"added": [list(e[:-1]) for e in batch if e[-1] == 1],
            "removed": [list(e[:-1]) for e in batch if e[-1] == -1]}


def _record_insertions(p: P) -> list[tuple[str, Event]]:
    attrs = list(p["domain"]["sizes"])
    return [("a record of the first cell", tuple([0] * len(attrs))),
            ("a record of the last cell", tuple(n - 1 for n in attrs))]


def _record_neighbours(p: P, f: list[Any]) -> list[tuple[str, list[Any]]]:
    batches = [_step_events(x) for x in f]
    return [(label, [_events_step(b) for b in g]) for label, g in event_neighbours(batches, _record_insertions(p))]


def _dataset_families(p: P, T: int) -> dict[str, list[Any]]:
    return {name: [[r for step in stream for r in step["added"]]]
            for name, stream in _record_families({**p, "sizes": _net_sizes(p, 1)}, 1).items()}


def _dataset_neighbours(p: P, f: list[Any]) -> list[tuple[str, list[Any]]]:
    batches = [tuple((*r, 1) for r in f[0])]
    return [(label.removeprefix("t=1: "), [[list(e[:-1]) for e in g[0]]])
            for label, g in event_neighbours(batches, _record_insertions(p))]


def _features(p: P, T: int, released: bool = False) -> Features:
    """Every cell count of every release, then each step's synthetic counts on the log scale (linear in a
    multiplicative-weights measurement: the features the composition reads, ``SearchDesign.linear``); ``released``:
    the releases' own log counts (``log g(``) in place of the steps' (003-alg3 refits g_t from g_{t-1}: its log
    counts, not its steps', are linear in a measurement)."""
    cells, logs = dataset_features(_domain(p), T), log_step_features(_domain(p), T, released=released)
    return Features(cells.names + logs.names, lambda r: [*cells.of(r), *logs.of(r)])


STREAM_DESIGN = SearchDesign(_record_families, _record_neighbours, _features,
                             lambda p, f: tuple(_step_events(x) for x in f),
                             lambda p, T: contrasts(dataset_features(_domain(p), T).names, ("g(",)), linear=" log h(")


def _main_neighbours(p: P, f: list[Any]) -> list[tuple[str, list[Any]]]:
    """:func:`_record_neighbours` with the insertion of the first cell at t = 2 (:func:`_opposed`'s two-way move)
    first and the one at t = 1 last, so that the quick profile's evenly spaced few (the first and the last included)
    hold both: the composed tests' pair, and the pair that shows a count of t = 1 released without noise (the power
    table's planted leak)."""
    pairs = _record_neighbours(p, f)
    first = [x for x in pairs if x[0].startswith("t=2: insert a record of the first cell")]
    last = [x for x in pairs if x[0].startswith("t=1: insert a record of the first cell")]
    return first + [x for x in pairs if x not in first and x not in last] + last


MAIN_DESIGN = dataclasses.replace(STREAM_DESIGN, families=_main_families, neighbours=_main_neighbours,
                                  features=lambda p, T: _features(p, T, released=True), linear=" log g(")
OFFLINE_DESIGN = SearchDesign(_dataset_families, _dataset_neighbours, _features,
                              lambda p, f: tuple(tuple((*r, 1) for r in x) for x in f),
                              lambda p, T: contrasts(dataset_features(_domain(p), T).names, ("g(",)), linear=" log h(")
STREAM_COST = 10
"""Search budget divisor of the streams: a 3-step run through ``dpstream serve`` takes 0.6-0.9 ms (the one-shot
boxes 0.15-0.2 ms, cost 3), docs/conformance.md."""

STREAM_SPEC = StatisticalSpec(tuple(s for s in _sweep() if (s["epsilon"], s["k"]) in ((0.5, 1), (2.0, 2))),
                              Neighbour.EVENT, alphabet=None, horizon=None, length=3, design=STREAM_DESIGN,
                              cost=STREAM_COST, planted="L16 |L8 i=|L3 i=")
"""The stream boxes search the quick profile's two settings at every profile: on the four of ``_sweep()`` the
thorough search of 003-alg2 took 299 s on 2 cores, at the 5 minutes a synthesizer entry may take."""
MAIN_SPEC = dataclasses.replace(STREAM_SPEC, design=MAIN_DESIGN)
"""003-alg3 / 000-alg3: STREAM_SPEC on :func:`_main_families`."""
OFFLINE_SPEC = StatisticalSpec(_sweep(offline=True), Neighbour.EVENT, alphabet=None, horizon=None, length=1,
                               design=OFFLINE_DESIGN, cost=3, planted="L8 i=")

STAT_NOTE = ("statistical checks: EVENT neighbours (one record added or removed at one time, 003-def3.3) with the "
             "public sizes unchanged; features: the released cell counts")
SITES_ALG3 = ("'003-alg3 L12 t=<t> l=<l>' (exponential_mechanism over J_{t,l}, budget eps/(2k)); counter C_i "
              "scoped '003-alg3 L3 i=<i> / 001-alg8 L4 t=<k>' (laplace, scale 2k/eps; workloads: one per cell, "
              "'... / 001-sec4.3 i=<c> / ...')")

MW_ERRORS = ErrorModel("mw")
"""Multiplicative weights (003-mw) on |X| cells; eps/(2k), 2k/eps and 1/min|q_i| are two operations each."""
MW_ONES_ERRORS = ErrorModel("mw", g0_ones=True)
"""003-alg3 / 000-alg3: as MW_ERRORS, from g_0 = 1 (L4)."""


ENTRIES: tuple[Entry, ...] = (
    Entry(
        "000-alg1", "Meta algorithm: select, measure, fit (000 draft; R_Dataset from scratch)", "tabular",
        OFFLINE_000_SCHEMA, lambda p, n: _offline(p, n, from_scratch=True, anchor="000-alg1"), OFFLINE_CODEC,
        proof="proofs/proof_tabular_main_privacy.py", doc=DOC, errata=("E-tabular-4",),
        as_printed=lambda p, n: _offline(p, n, printed=True, from_scratch=True, anchor="000-alg1"),
        vectors=with_integers_as_floats(_offline_vectors("000-alg1"), "2x3-k2"),
        must_reject=lambda: _offline_rejects("000-alg1", {**OFFLINE_VALID, "A_Dataset": "mw-all"}),
        statistical=OFFLINE_SPEC,
        cases=_fresh_offline,
        notes="003-alg1 with L10 h_i <- R_Dataset(M) fitted from h_0 every iteration (from_scratch); A_Dataset "
              "defaults to mw-all, which then reproduces the 003 chain. One-shot, served as a stream of length 1: "
              "INPUT the dataset f (records), RELEASE g = h_k; a second input is refused. As printed: eps/2 + eps/2 "
              "per iteration (E-tabular-4). " + STAT_NOTE,
        sites="'003-alg1 L7 i=<i>' (exponential_mechanism, eps/(2k)); '003-alg1 L8 i=<i> cell=<c>' (laplace, 2k/eps)",
        error_model=MW_ERRORS,
    ),
    Entry(
        "000-alg2", "Baseline: from a DP dataset algorithm to a stream (A = MWEM, 003-alg1)", "tabular",
        SCHEMA, _offline_to_stream, STREAM_CODEC,
        proof="proofs/proof_tabular_main_privacy.py", doc=DOC,
        vectors=with_integers_as_floats(lambda: _case_vectors("000-alg2", STREAM_CASES), "removals-2x2"),
        must_reject=lambda: [*_param_rejects(STREAM_VALID), *_step_rejects("000-alg2", STREAM_VALID)],
        statistical=STREAM_SPEC,
        cases=_fresh_stream,
        notes="A is MWEM (003-alg1 with the entry's A_Dataset, k iterations, eps) run on every differential "
              "dataset nabla f_t with the public size of nabla f_t; g_0 = 0 (000-alg2 L3); the claim is A's. "
              "No printed variant (nothing of this box is corrected). " + STAT_NOTE,
        sites="'000-alg2 L5 t=<t> / 003-alg1 L7 i=<i>' and '000-alg2 L5 t=<t> / 003-alg1 L8 i=<i> cell=<c>'",
        error_model=MW_ERRORS,
    ),
    Entry(
        "000-alg3", "Main algorithm: DP-STabS (000 draft; printed as 003-alg3)", "tabular",
        SCHEMA, _main_algorithm, STREAM_CODEC,
        proof="proofs/proof_tabular_main_privacy.py", doc=DOC, errata=("E-tabular-2", "E-tabular-7"),
        as_printed=lambda p, n: _main_algorithm(p, n, printed=True),
        vectors=with_integers_as_floats(lambda: _case_vectors("000-alg3", STREAM_CASES[:4]), "removals-2x2"),
        must_reject=lambda: _step_rejects("000-alg3", STREAM_VALID)[:4],
        statistical=MAIN_SPEC,
        cases=_fresh_stream,
        notes="the same box as 003-alg3 (same code, sites '003-alg3 ...'); its parameter rejections are those of "
              "003-alg3; its statistical checks are 003-alg3's, run under its own name",
        sites=SITES_ALG3,
        error_model=MW_ONES_ERRORS,
    ),
    Entry(
        "003-alg1", "Meta algorithm: select, measure, fit (MWEM with MW)", "tabular",
        OFFLINE_SCHEMA, _offline, OFFLINE_CODEC,
        proof="proofs/proof_tabular_main_privacy.py", doc=DOC, errata=("E-tabular-4",),
        as_printed=lambda p, n: _offline(p, n, printed=True),
        vectors=with_integers_as_floats(_offline_vectors("003-alg1"), "2x3-k2"),
        must_reject=lambda: _offline_rejects("003-alg1", OFFLINE_VALID),
        statistical=OFFLINE_SPEC,
        cases=_fresh_offline,
        notes="one-shot, served as a stream of length 1: INPUT the dataset f (records), RELEASE g = h_k (cell counts); "
              "a second input is refused. With total 'public' the one size is |f|. As printed: eps/2 + eps/2 per "
              "iteration (E-tabular-4). " + STAT_NOTE,
        sites="'003-alg1 L7 i=<i>' (exponential_mechanism, eps/(2k)); '003-alg1 L8 i=<i> cell=<c>' (laplace, 2k/eps)",
        error_model=MW_ERRORS,
    ),
    Entry(
        "003-alg2", "StreamingMWEM", "tabular", SCHEMA, _streaming_mwem, STREAM_CODEC,
        proof="proofs/proof_tabular_main_privacy.py", doc=DOC, errata=("E-tabular-1", "E-tabular-3", "E-tabular-6"),
        as_printed=lambda p, n: _streaming_mwem(p, n, printed=True),
        vectors=with_integers_as_floats(
            lambda: _case_vectors(
                "003-alg2", STREAM_CASES,
                VectorSpec("streaming-mwem-mw-eps1-k2-T5", OLD_PARAMS, OLD_INPUTS, 71, ("steps removing records",),
                           "003-alg2 with MW, 1-way marginal queries on {0,1}x{0,1,2}, seed=71")), "removals-2x2"),
        must_reject=lambda: [*_param_rejects(STREAM_VALID), *_step_rejects("003-alg2", STREAM_VALID)],
        statistical=STREAM_SPEC,
        cases=_fresh_stream,
        notes="h_{t,0} is the uniform dataset of mass N_t; g_0 = 0 (E-tabular-6). As printed: L11's law (eps/k per "
              "selection, E-tabular-1), g_0 = 1, and the mass |nabla f_t| read from the data (E-tabular-3: not "
              "private; the sizes parameter is then unused). " + STAT_NOTE,
        sites="'003-alg2 L11 t=<t> l=<l>' (exponential_mechanism over J_{t,l}, eps/(2k)); "
              "'003-alg2 L16 t=<t> l=<l> cell=<c>' (laplace, 2k/eps)",
        error_model=MW_ERRORS,
    ),
    Entry(
        "003-alg3", "Main algorithm: streaming DP synthetic tabular stream", "tabular",
        SCHEMA, _main_algorithm, STREAM_CODEC,
        proof="proofs/proof_tabular_main_privacy.py", doc=DOC, errata=("E-tabular-2", "E-tabular-7", "E-tabular-8"),
        as_printed=lambda p, n: _main_algorithm(p, n, printed=True),
        vectors=with_integers_as_floats(
            lambda: _case_vectors(
                "003-alg3", STREAM_CASES,
                VectorSpec("main-algorithm-mw-simple-eps1-k2-T5", OLD_PARAMS, OLD_INPUTS, 72,
                           ("steps removing records",),
                           "003-alg3 with MW, 1-way marginal queries on {0,1}x{0,1,2}, seed=72")), "removals-2x2"),
        must_reject=lambda: [*_param_rejects(STREAM_VALID), *_step_rejects("003-alg3", STREAM_VALID)],
        statistical=MAIN_SPEC,
        cases=_fresh_stream,
        notes="an instance of online selective counting (001-alg4, dpstream.tabular.selective); A_Counter Simple "
              "with budget eps/(2k); g_0 = 1 (L4), h_{t,0} = g_{t-1}. As printed: Definition 3.8's printed sign "
              "(E-tabular-2) and the printed workload sensitivity 1/4 (E-tabular-8). " + STAT_NOTE,
        sites=SITES_ALG3,
        error_model=MW_ONES_ERRORS,
    ),
)
