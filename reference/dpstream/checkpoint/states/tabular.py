"""Documented states of the tabular stream algorithms (papers 003 and 000, docs/tabular.md): StreamingMWEM
(003-alg2), the main algorithm (003-alg3 = 000-alg3) and the offline-to-stream baseline (000-alg2).

A synthetic dataset is written as ``{"type": "uniform", domain, per_cell}``, ``{"type": "explicit", domain,
counts, cached}`` (the count array over X, and the cliques whose marginals it has computed) or ``{"type":
"tables", domain, tables, total}`` (marginal tables on cliques). The true dataset f_t is a multiset of records,
each written as its flat index in X (its tuple when |X| >= 2^62) with its count."""

from __future__ import annotations

from typing import Any

import numpy as np

from dpstream.checkpoint.kinds import (
    BOOL,
    COUNT,
    POSITIVE,
    REAL,
    STR,
    Array,
    ComponentList,
    EnumOf,
    Function,
    Int,
    Kind,
    ListOf,
    Nullable,
    Pairs,
    Real,
    Record,
    Str,
    TupleOf,
    Variant,
    fail,
)
from dpstream.checkpoint.names import CheckpointError
from dpstream.checkpoint.spec import Field, StateSpec, require
from dpstream.checkpoint.states.common import EPSILON, T_STEPS, check_steps
from dpstream.claims import Measure, Neighbour, PrivacyClaim
from dpstream.counters import MultiDimensionalCounter
from dpstream.tabular.datasets import ExplicitDataset, TableDataset, UniformDataset
from dpstream.tabular.domain import Domain
from dpstream.tabular.fitting import InformationProjection, MultiplicativeWeights
from dpstream.tabular.main_algorithm import MainAlgorithm, MainAlgorithmStep
from dpstream.tabular.pgm import PrivatePGM
from dpstream.tabular.queries import MarginalQuery, Workload
from dpstream.tabular.selection import BiasRule, SelectionLaw
from dpstream.tabular.streaming_mwem import OfflineToStream, StreamingMWEM, StreamingMWEMStep
from dpstream.tabular.totals import ConstantSize, TotalKind, TotalRule

__all__ = ["SPECS"]

FAMILY = "tabular"

CLIQUE = TupleOf(COUNT)
DOMAIN = Record(Domain, (("names", TupleOf(STR)), ("sizes", TupleOf(Int(1)))))
QUERY = Variant((
    ("marginal", Record(MarginalQuery, (("columns", CLIQUE), ("values", TupleOf(COUNT))))),
    ("workload", Record(Workload, (("columns", CLIQUE), ("shape", TupleOf(Int(1)))))),
))
FITTER = Variant((
    ("mw", Record(MultiplicativeWeights, (("updates", Str(("newest", "all"))),))),
    ("information-projection", Record(InformationProjection, (("max_sweeps", Int(1)), ("tol", POSITIVE)))),
    ("pgm", Record(PrivatePGM, (("iters", Int(1)), ("init_weight", POSITIVE), ("warm_start", BOOL)))),
))


def _explicit(domain: Domain, counts: Any, cached: list[tuple[int, ...]]) -> ExplicitDataset:
    dataset = ExplicitDataset(domain, counts)
    for columns in cached:  # the marginals it had computed, computed again in the same order (a cache, not state)
        domain.validate_columns(columns)
        dataset.marginal(columns)
    return dataset


def _tables(domain: Domain, tables: dict[tuple[int, ...], Any], total: float) -> TableDataset:
    return TableDataset(domain, tables, total)


def _read_tables(d: TableDataset) -> dict[str, Any]:
    if d.warm_start is not None:
        raise CheckpointError("a synthetic dataset holding a PGM model (its warm start) is not data a checkpoint can "
                              "write", type(d.warm_start).__name__)
    return {"domain": d.domain, "tables": dict(d.tables), "total": d.total}


TABLES_RECORD = Record(TableDataset, (("domain", DOMAIN), ("tables", Pairs(CLIQUE, Array("float64"))), ("total", REAL)),
                       make=_tables, read=_read_tables)
DATASET = Variant((
    ("uniform", Record(UniformDataset, (("domain", DOMAIN), ("per_cell", REAL)))),
    ("explicit", Record(ExplicitDataset, (("domain", DOMAIN), ("counts", Array("float64")),
                                          ("cached", ListOf(CLIQUE))), make=_explicit,
                        read=lambda d: {"domain": d.domain, "counts": d.counts, "cached": list(d._cache)})),
    ("tables", TABLES_RECORD),
))


class _Total(Kind):
    """The TotalRule: ``{"kind": "public", "n": n}`` (constant size), ``{"kind": "public", "sizes": function}``,
    ``{"kind": "measured"}`` or ``{"kind": "true-size"}``."""

    doc = "`public` {n} or {sizes: function}, `measured` or `true-size`"

    def encode(self, value: Any, w: Any, path: str) -> Any:
        if not isinstance(value, TotalRule):
            raise fail(path, "expected a TotalRule", type(value).__name__)
        if value.kind is not TotalKind.PUBLIC:
            return {"kind": value.kind.value}
        if isinstance(value.sizes, ConstantSize):
            return {"kind": "public", "n": REAL.encode(value.sizes.n, w, f"{path}.n")}
        return {"kind": "public", "sizes": w.function(value.sizes, f"{path}.sizes")}

    def decode(self, raw: Any, r: Any, path: str) -> Any:
        if raw in ({"kind": "measured"}, {"kind": "true-size"}):
            return TotalRule.measured() if raw["kind"] == "measured" else TotalRule.true_size()
        if isinstance(raw, dict) and list(raw) == ["kind", "n"] and raw["kind"] == "public":
            return r.call(TotalRule.public, {"sizes": Real(non_negative=True).decode(raw["n"], r, f"{path}.n")}, path)
        if isinstance(raw, dict) and list(raw) == ["kind", "sizes"] and raw["kind"] == "public":
            return r.call(TotalRule.public, {"sizes": r.function(raw["sizes"], f"{path}.sizes")}, path)
        raise fail(path, f"must be {self.doc}", raw)


class _RecordKey(Kind):
    doc = "flat index of a record in X (its tuple when |X| >= 2^62)"

    def encode(self, value: Any, w: Any, path: str) -> Any:
        return COUNT.encode(value, w, path) if not isinstance(value, tuple) else TupleOf(COUNT).encode(value, w, path)

    def decode(self, raw: Any, r: Any, path: str) -> Any:
        return COUNT.decode(raw, r, path) if not isinstance(raw, list) else TupleOf(COUNT).decode(raw, r, path)


COMMON_PARAMS = (
    Field("domain", DOMAIN, "the data universe X = X_1 x ... x X_p (names, sizes)"),
    Field("queries", ListOf(QUERY), "Q: the marginal queries or the workloads", attr="Q"),
    Field("k", Int(1), "k: selections per time step"),
    EPSILON,
    Field("total", _Total(), "where the mass of a fitted dataset comes from (docs/errata E-tabular-3)",
          attr="total_rule"),
    Field("fitter", FITTER, "A_Dataset"),
)
TRUE_DATA = (
    Field("f", Pairs(_RecordKey(), Int(1)), "the TRUE dataset f_t: each present record with its count",
          attr="_true._counts"),
    Field("size", COUNT, "|f_t|", attr="_true.size"),
)
CLIQUES = Field("cliques", ListOf(CLIQUE), "the cliques whose marginals a release keeps")
RELEASES_DOC = "the synthetic datasets g_1, ..., g_t"


def _check_common(o: Any) -> None:
    check_steps(o.t, None, o.releases)
    domain = o.domain
    for q in getattr(o, "Q", ()):
        try:
            columns = domain.validate_columns(q.columns)
        except ValueError as exc:
            require(False, f"a query's columns: {exc}")
        if isinstance(q, MarginalQuery):
            require(len(q.values) == len(columns) and all(0 <= v < domain.sizes[c] for c, v in zip(columns, q.values,
                                                                                                   strict=True)),
                    "a marginal query's values lie in its attributes' ranges")
        else:
            require(q.shape == domain.shape_of(columns), "a workload's shape is its attributes' sizes")
    counts = o._true._counts
    require(all(c >= 1 for c in counts.values()), "f_t counts every present record at least once (no negative "
                                                  "counts)")
    require(o._true.size == sum(counts.values()), "|f_t| is the sum of the counts")
    require(all(isinstance(k, tuple) or 0 <= k < domain.size for k in counts), "every record lies in X")
    require(all(d.domain == domain for d in o.releases) and o.g.domain == domain, "every release is a dataset on X")
    require(not o.releases or o.releases[-1] is o.g, "g_t is the last release")


def _same_dataset(a: Any, b: Any) -> bool:
    if type(a) is not type(b) or a.domain != b.domain:
        return False
    if isinstance(a, ExplicitDataset):
        return bool(np.array_equal(a.counts, b.counts))
    if isinstance(a, UniformDataset):
        return bool(a.per_cell == b.per_cell)
    return bool(a.total == b.total and list(a.tables) == list(b.tables)
                and all(np.array_equal(a.tables[c], b.tables[c]) for c in a.tables))


STREAMING_MWEM_STEP = Record(StreamingMWEMStep, (
    ("t", Int(1)), ("selected", TupleOf(COUNT)), ("scores", TupleOf(TupleOf(REAL))),
    ("measurements", TupleOf(Array("float64", 1))), ("total", REAL)))


def _check_streaming_mwem(o: StreamingMWEM) -> None:
    """one release per step; the queries fit X; f_t counts every present record >= 1 times and |f_t| is their sum;
    the releases are datasets on X and g_t is the last one; one trace entry per step."""
    _check_common(o)
    require(o.trace is None or [s.t for s in o.trace] == list(range(1, o.t + 1)), "one trace entry per step")


def _put_releases(o: Any, value: list[Any]) -> None:
    if value:
        require(_same_dataset(value[-1], o.g), "g_t must be the last release")
        o.g = value[-1]  # one object, as the algorithm keeps it
    o.releases = value


STREAMING_MWEM = StateSpec(
    StreamingMWEM, FAMILY, "003-alg2",
    "StreamingMWEM: MWEM on every differential dataset; g_t = g_(t-1) + the average of the k fitted datasets.",
    params=(*COMMON_PARAMS,
            Field("selection_law", EnumOf(SelectionLaw), "the exponential mechanism's law (E-tabular-1)",
                  attr="selector.law"),
            Field("g0_ones", BOOL, "g_0 = 1 as printed in L3 (E-tabular-6; default g_0 = 0)"),
            Field("bias", EnumOf(BiasRule), "the workload score's bias rule"),
            CLIQUES,
            Field("keep_trace", BOOL, "keep a trace of every step", get=lambda o: o.trace is not None)),
    derived=(Field("lap_scale", POSITIVE, "the Laplace scale 2k/eps of the measurements (L16)"),),
    variables=(
        T_STEPS,
        Field("g", DATASET, "g_t, the synthetic dataset (g_0: uniform)"),
        *TRUE_DATA,
        Field("last_total", REAL, "the mass N of the previous step's fitted datasets", attr="_last_total"),
        Field("trace", Nullable(ListOf(STREAMING_MWEM_STEP)), "the trace (null unless keep_trace)"),
        Field("releases", ListOf(DATASET), RELEASES_DOC, put=_put_releases),
    ),
    check=_check_streaming_mwem,
)

ARRAYS = ListOf(Array("float64", 1))
MAIN_STEP = Record(MainAlgorithmStep, (
    ("t", Int(1)), ("selected", TupleOf(COUNT)), ("scores", TupleOf(TupleOf(REAL))),
    *((name, TupleOf(Array("float64", 1))) for name in ("counter_inputs", "C", "r", "m", "g_answers")),
    ("totals", TupleOf(REAL))))


def _check_main(o: MainAlgorithm) -> None:
    """those of StreamingMWEM; m, r and C hold one vector of |q_i| values per query; a workload's counter has |W|
    coordinates; C_i(t) is counter i's last release."""
    _check_common(o)
    require(all(len(x) == len(o.Q) and all(a.shape == (q.dim,) for a, q in zip(x, o.Q, strict=True))
                for x in (o.m, o.r, o.C)), "m, r and C hold one vector of |q_i| values per query")
    for c, i in zip(o.counters, range(len(o.Q)), strict=True):
        if isinstance(c, MultiDimensionalCounter):
            require(c.d == o.Q[i].dim, "a workload's counter has one coordinate per query of the workload")
        last = c.releases[-1] if c.releases else None
        if last is not None:
            require(bool(np.array_equal(np.atleast_1d(np.asarray(last, dtype=np.float64)), o.C[i])),
                    "C_i(t) is counter i's last release")
    require(o.trace is None or [s.t for s in o.trace] == list(range(1, o.t + 1)), "one trace entry per step")


MAIN = StateSpec(
    MainAlgorithm, FAMILY, "003-alg3 = 000-alg3",
    "The main algorithm: k selections per step, a counter C_i per query, remainders r, A_Dataset on the measurements.",
    params=(*COMMON_PARAMS,
            Field("counter_factory", Function(), "A_Counter: the counter factory (eps/(2k), noise) -> counter"),
            Field("selection_law", EnumOf(SelectionLaw), "Definition 3.8's law (E-tabular-2)", attr="selector.law"),
            Field("bias", EnumOf(BiasRule), "the workload score's bias rule"),
            Field("printed_workload_sensitivity", BOOL, "calibrate the selection with the printed sensitivity "
                                                        "(E-tabular-8)",
                  get=lambda o: o.selector.assumed_sensitivity is not None),
            CLIQUES,
            Field("keep_trace", BOOL, "keep a trace of every step", get=lambda o: o.trace is not None),
            Field("aggregate", Str(("average", "last")), "g_t: the average of L19 (or the last fit: not the paper's)")),
    variables=(
        T_STEPS,
        Field("counters", ComponentList(doc="list of counter states (001-sec4.3 for workloads)"),
              "C_i for every query i (budget eps/(2k), scope \"003-alg3 L3 i=<i>\")"),
        Field("g", DATASET, "g_t, the synthetic dataset (g_0 = 1, L4)"),
        Field("m", ARRAYS, "m(t, i): the measurements (L17)"),
        Field("r", ARRAYS, "r(t, i): the remainders (L16, L21)"),
        Field("C", ARRAYS, "C_i(t): the counters' last outputs"),
        *TRUE_DATA,
        Field("public_total", REAL, "the public sizes so far (total 'public')", attr="_public_total"),
        Field("trace", Nullable(ListOf(MAIN_STEP)), "the trace (null unless keep_trace)"),
        Field("releases", ListOf(DATASET), RELEASES_DOC, put=_put_releases),
    ),
    check=_check_main,
)

CLAIM = Record(PrivacyClaim, (("measure", EnumOf(Measure)), ("parameter", Real(non_negative=True, infinite=True)),
                              ("neighbour", EnumOf(Neighbour)), ("source", STR), ("note", STR)))


def _check_offline_to_stream(o: OfflineToStream) -> None:
    """one release per step; f_t counts every present record >= 1 times and |f_t| is their sum; the releases are
    datasets on X and g_t is the last one."""
    _check_common(o)


OFFLINE_TO_STREAM = StateSpec(
    OfflineToStream, FAMILY, "000-alg2",
    "Offline to stream: an offline eps-DP algorithm A on every differential dataset, g_t = g_(t-1) + h_t.",
    params=(Field("domain", DOMAIN, "the data universe X"),
            Field("offline", Function(), "the offline algorithm A (differential dataset, noise) -> dataset"),
            Field("claim", CLAIM, "A's privacy claim (the algorithm's)", attr="_claim"),
            CLIQUES),
    variables=(
        T_STEPS,
        Field("g", DATASET, "g_t (g_0 = 0, L3)"),
        *TRUE_DATA,
        Field("releases", ListOf(DATASET), RELEASES_DOC, put=_put_releases),
    ),
    check=_check_offline_to_stream,
)

SPECS = (STREAMING_MWEM, MAIN, OFFLINE_TO_STREAM)
