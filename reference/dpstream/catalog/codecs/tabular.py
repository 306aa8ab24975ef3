"""JSON forms of the tabular family's parameters, inputs and releases (the protocol's view of 003-* and 000-*).

* the domain X = X_1 x ... x X_p: ``{"names": ["a", "b"], "sizes": [2, 3]}`` (a record is a list of p integer
  codes, attribute i taking the values 0..sizes[i]-1);
* the queries Q: ``[{"columns": [0], "values": [1]}, ...]`` for k-way marginal queries (003-def3.5: increasing
  columns and one value per column) or ``[{"columns": [0, 1]}, ...]`` for workloads (003-def7.1), never mixed;
* a step of a stream: ``{"added": [[...], ...], "removed": [[...], ...]}`` (nabla f_t as records; a removed record
  must be present); a dataset (the one-shot offline boxes): a JSON array of records;
* a release: the synthetic dataset g_t as its cell counts, a flat JSON array of |X| numbers in row-major order
  over X (the last attribute varies fastest).

Features for the statistical checks: :func:`dataset_features` (every cell count of every release) and
:func:`log_step_features` (each step's synthetic counts on the log scale, where multiplicative weights are linear).

Decoding checks the JSON shapes and raises :class:`~dpstream.errors.DPStreamInputError`; the values (codes
inside the domain, removals of present records, valid queries) are checked by the constructors and the boxes.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np

from dpstream.catalog.codecs import Features, integer_list
from dpstream.errors import DPStreamInputError
from dpstream.tabular.datasets import SyntheticDataset, explicit_counts
from dpstream.tabular.domain import Domain, IntArray, validate_records
from dpstream.tabular.queries import MarginalQuery, Query, Workload
from dpstream.tabular.stream import StreamStep

__all__ = [
    "RELEASE_LIMIT",
    "dataset_features",
    "decode_dataset",
    "decode_step",
    "domain_of",
    "encode_dataset",
    "log_step_features",
    "queries_of",
]

RELEASE_LIMIT = 1 << 16
"""The largest |X| served over the protocol: a release lists every cell."""


def domain_of(value: Any) -> Domain:
    """The domain ``{"names": [...], "sizes": [...]}`` (at most :data:`RELEASE_LIMIT` cells)."""
    if not isinstance(value, dict) or set(value) != {"names", "sizes"}:
        raise DPStreamInputError("domain", "must be a JSON object with exactly the keys 'names' and 'sizes'", value)
    names, sizes = value["names"], value["sizes"]
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise DPStreamInputError("names", "must be a JSON array of attribute names (strings)", names)
    domain = Domain(tuple(names), tuple(integer_list(sizes, "sizes", "must be a JSON array of integer sizes")))
    if domain.size > RELEASE_LIMIT:
        raise DPStreamInputError("domain", f"|X| must be <= {RELEASE_LIMIT} (a release lists every cell)", domain.size)
    return domain


def queries_of(domain: Domain, value: Any) -> list[Query]:
    """Q: marginal queries ``{"columns", "values"}`` or workloads ``{"columns"}`` (the algorithms refuse a mix)."""
    if not isinstance(value, list):
        raise DPStreamInputError("queries", "must be a JSON array of queries", value)
    out: list[Query] = []
    for q in value:
        if not isinstance(q, dict) or set(q) not in ({"columns"}, {"columns", "values"}):
            raise DPStreamInputError("queries", "a query is {'columns': [...], 'values': [...]} (marginal) or "
                                                "{'columns': [...]} (workload)", q)
        columns = integer_list(q["columns"], "columns", "must be a JSON array of integer column indices")
        if "values" in q:
            values = integer_list(q["values"], "values", "must be a JSON array of integer attribute values")
            out.append(MarginalQuery.build(domain, columns, values))
        else:
            out.append(Workload.build(domain, columns))
    return out


def _records(value: Any, field: str, domain: Domain) -> IntArray:
    if not isinstance(value, list) or not all(
            isinstance(r, list) and all(isinstance(v, int | float) and not isinstance(v, bool) for v in r)
            for r in value):
        raise DPStreamInputError(field, "must be a JSON array of records, each a JSON array of integer codes", value)
    return validate_records(domain, value, field)


def decode_step(value: Any, domain: Domain) -> StreamStep:
    """nabla f_t: ``{"added": [...], "removed": [...]}``."""
    if not isinstance(value, dict) or set(value) != {"added", "removed"}:
        raise DPStreamInputError("input", "must be a JSON object with exactly the keys 'added' and 'removed'", value)
    return StreamStep(_records(value["added"], "added", domain), _records(value["removed"], "removed", domain))


def decode_dataset(value: Any, domain: Domain) -> IntArray:
    """A dataset f: a JSON array of records."""
    return _records(value, "records", domain)


def encode_dataset(g: SyntheticDataset) -> list[float]:
    """g's cell counts, row-major over X."""
    return [float(v) for v in explicit_counts(g).reshape(-1)]


def dataset_features(domain: Domain, T: int) -> Features:
    """Features of a run of T steps: the cell counts of every release g_t, row-major over X (|X| T numbers)."""
    cells = [",".join(str(v) for v in x) for x in itertools.product(*(range(n) for n in domain.sizes))]
    names = tuple(f"t={t} g({x})" for t in range(1, T + 1) for x in cells)

    def of(releases: Sequence[Any]) -> list[float]:
        out: list[float] = []
        for release in releases:
            if not isinstance(release, list) or len(release) != len(cells):
                raise ValueError(f"a release lists the {len(cells)} cell counts of X")
            out += [float(v) for v in release]
        return out

    return Features(names, of)


LOG_FLOOR = 1e-300
"""|h| below this is read as this (the log of a cell multiplicative weights never empties stays finite)."""


def log_step_features(domain: Domain, T: int, *, released: bool = False) -> Features:
    """Features of a run of T steps on the log scale: for every step t, log |h_t(x)| minus its mean over X, where
    h_t = g_t - g_{t-1} (g_0 = 0) is what step t adds to the release (|X| T numbers). Multiplicative weights fits
    h(x) proportional to h_0(x) exp(sum_i eta q_i(x) (m_i - q_i(h_{i-1}))): after one measurement these features are
    exactly linear in the measured value m, which the cell counts (a normalised exponential of it) are not; a fixed
    function of the releases either way (any function will do for privacy). ``released``: log g_t itself (names
    ``log g(``), for 003-alg3, whose g_t is multiplicative weights from g_{t-1} (h_{t,0} = g_{t-1}): with one
    selection per step, log g_t - log g_{t-1} is linear in the step's noisy counter increment."""
    cells = dataset_features(domain, T)
    width = domain.size
    names = tuple(n.replace(" g(", " log g(" if released else " log h(") for n in cells.names)

    def of(releases: Sequence[Any]) -> list[float]:
        g = np.asarray(cells.of(releases), dtype=np.float64).reshape(len(releases), width)
        h = g if released else np.diff(g, axis=0, prepend=np.zeros((1, width)))
        logs = np.log(np.maximum(np.abs(h), LOG_FLOOR))
        return [float(x) for x in (logs - logs.mean(axis=1, keepdims=True)).ravel()]

    return Features(names, of)
