"""The arithmetic the docs write down is the arithmetic the reference does.

Every computation that decides a branch, and the multiplicative weights every tabular entry runs, is stated in the
docs as a code block whose first line is ``# doc-check: NAME`` (plain Python and numpy, no dpstream import: what an
implementer reads). This test runs each block and compares what it defines with the reference on a grid and on
seeded random draws (deterministic: no false-alarm probability). A block without a check here, or a check whose
block left the docs, fails too, so a statement cannot drift from the code silently.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from dpstream.arithmetic import FUNCTION_ULPS, gamma
from dpstream.counters.sparse import floor_T0, sparse_threshold
from dpstream.hypercube import depth_at, level_time
from dpstream.hypercube.consistency import ConsistencyRule, split_children
from dpstream.hypercube.schedule import PrivacySchedule
from dpstream.noise import data_rng
from dpstream.phdstream.partition import HypercubePartition
from dpstream.phdstream.privtree import LambdaRule, privtree_scales, splits
from dpstream.phdstream.stream import synthetic_count
from dpstream.tabular.datasets import ExplicitDataset
from dpstream.tabular.domain import Domain
from dpstream.tabular.fitting import Measurement, MultiplicativeWeights
from dpstream.tabular.queries import MarginalQuery, Workload
from dpstream.tabular.selection import query_scores
from dpstream.tabular.totals import TotalRule

DOCS = Path(__file__).resolve().parents[2] / "docs"
BLOCK = re.compile(r"```python\n# doc-check: (?P<name>[^\n]+)\n(?P<code>.*?)```", re.S)
Namespace = dict[str, Any]


def statements() -> dict[str, tuple[str, str]]:
    """name -> (page, code) of every doc-check block of docs/*.md."""
    found: dict[str, tuple[str, str]] = {}
    for page in sorted(DOCS.glob("*.md")):
        for m in BLOCK.finditer(page.read_text(encoding="utf-8")):
            assert m["name"] not in found, f"two doc-check blocks named {m['name']!r}"
            found[m["name"]] = (page.name, m["code"])
    return found


def run(name: str) -> Namespace:
    page, code = statements()[name]
    namespace: Namespace = {"__name__": f"doc_check_{page}"}
    exec(compile(code, f"{page}: {name}", "exec"), namespace)  # the docs' own statement
    return namespace


EPSILONS = [1.0, 2.0, 0.5, 0.25, 8.0, 1 / 3, 0.1, 0.001, 7.999999999999999, 0.05000000000000001, 3.0, 1000.0,
            *[float(x) for x in data_rng(1).uniform(0.01, 20.0, size=20)]]


def check_level_times(ns: Namespace) -> None:
    for eps in EPSILONS:
        for j in range(0, 22):
            assert ns["level_time"](j, eps) == level_time(j, eps), (j, eps)
        for t in [*range(1, 70), 1000, 4097, 65536]:
            assert ns["depth"](t, eps) == depth_at(t, eps), (t, eps)
    # the example of the page: j = 1, eps the double nearest 1/3
    assert ns["level_time"](1, 1 / 3) == 7 and math.ceil(2.0 / (1 / 3)) == 6


def check_schedule(ns: Namespace) -> None:
    tolerance = 2.0 * gamma(16 + FUNCTION_ULPS * 3)  # the entry's relative draw tolerance (004-alg1)
    for d in (1, 2, 3, 4, 7):
        for eps in (0.5, 1.0, 2.0, 8.0):
            schedule = PrivacySchedule(eps, d)
            if d >= 2:
                assert math.isclose(ns["C1"](d), schedule.C1, rel_tol=tolerance, abs_tol=0.0)
            for j in range(1, 12):
                for r in range(schedule.r0(j), 14):
                    assert math.isclose(ns["budget"](eps, d, j, r), schedule(j, r), rel_tol=tolerance), (d, eps, j, r)
    assert math.isclose(ns["C1"](2), 0.0796, abs_tol=5e-5)


def check_segment_ends(ns: Namespace) -> None:
    rng = data_rng(2)
    for eps in EPSILONS:
        for T in (1, 2, 3, 8, 9, 16, 33, 100, 1000):
            T0 = sparse_threshold(eps, T)
            assert ns["T0"](eps, T) == T0
            base = floor_T0(T0)
            for _ in range(20):
                count, test, threshold = (int(v) for v in rng.integers(-30, 60, size=3))
                T_tilde = (base + threshold) + (T0 - base)  # the reference's T~_j (004-alg2 u2)
                assert ns["segment_ends"](count, test, threshold, eps, T) == (count + test > T_tilde)


def check_consistency_rules(ns: Namespace) -> None:
    for m in range(0, 25):
        for a in range(0, 25):
            for b in range(0, 25):
                arrays = np.array([m]), np.array([a]), np.array([b])
                (shift, _) = split_children(*arrays, ConsistencyRule.EQUAL_SHIFT)
                (share, _) = split_children(*arrays, ConsistencyRule.PROPORTIONAL)
                assert ns["equal_shift"](m, a, b) == int(shift[0]), (m, a, b)
                assert ns["proportional"](m, a, b) == int(share[0]), (m, a, b)
    assert ns["proportional"](3, 1, 5) == 1  # 3 * 1/6 = 0.5 exactly: round half up, in integers


def check_privtree(ns: Namespace) -> None:
    rules = {"general": LambdaRule.GENERAL, "proof": LambdaRule.PROOF, "printed": LambdaRule.PRINTED}
    for beta in (2, 3, 5, 16):
        for D in (0, 1, 3, 6):
            partition = HypercubePartition(1, D, fanout=beta)
            for e in (0.01, 0.5, 1.0, 2.0, 1000.0):
                for name, rule in rules.items():
                    lam, delta = privtree_scales(partition, e, rule)
                    doc_lam, doc_delta = ns["privtree_scale"](name, D, beta, e)
                    assert math.isclose(doc_lam, lam, rel_tol=2 * gamma(6))
                    assert math.isclose(doc_delta, delta, rel_tol=2 * gamma(6 + FUNCTION_ULPS))
    rng = data_rng(3)
    for _ in range(500):
        F_v, theta, delta, z = (float(x) for x in rng.normal(0.0, 3.0, size=4))
        theta, delta = abs(theta), abs(delta)
        D = int(rng.integers(0, 5))
        depth = int(rng.integers(0, D + 1))
        b = max(F_v - depth * delta, theta - delta)
        reference = splits(b + z, b, theta, delta, depth, decides=depth < D) and depth < D
        assert ns["splits"](F_v, depth, theta, delta, z, D) == reference


def check_rule5(ns: Namespace) -> None:
    values = [0.0, -1.0, 1e-10, 1.0, 1.0 + 1e-10, 1.0 + 2e-9, 2.5, 3.0000000001, 7.999999999, 1e6 + 0.5]
    values += [float(v) for v in data_rng(4).normal(3.0, 5.0, size=200)]
    for G in values:
        assert ns["rule5_count"](G) == synthetic_count(G), G


def _tabular_case(rng: np.random.Generator, workloads: bool) -> tuple[Domain, list[Any]]:
    domain = Domain(("a", "b", "c"), (2, 3, 2))
    if workloads:
        return domain, [Workload.build(domain, (0,)), Workload.build(domain, (1, 2)), Workload.build(domain, (0, 2))]
    return domain, [MarginalQuery.build(domain, (0,), (1,)), MarginalQuery.build(domain, (1, 2), (2, 0)),
                    MarginalQuery.build(domain, (2,), (0,))]


def _cells(domain: Domain, q: Any) -> list[np.ndarray[Any, np.dtype[np.bool_]]]:
    grid = np.indices(domain.sizes)
    if isinstance(q, MarginalQuery):
        mask = np.ones(domain.sizes, dtype=bool)
        for c, v in zip(q.columns, q.values, strict=True):
            mask &= grid[c] == v
        return [mask]
    out = []
    for flat in range(q.dim):
        index = np.unravel_index(flat, domain.shape_of(q.columns))
        mask = np.ones(domain.sizes, dtype=bool)
        for column, value in zip(q.columns, index, strict=True):
            mask &= grid[column] == int(value)
        out.append(mask)
    return out


def check_mw(ns: Namespace) -> None:
    rng = data_rng(5)
    for case in range(40):
        domain, Q = _tabular_case(rng, workloads=case % 2 == 1)
        init = rng.uniform(0.0, 3.0, size=domain.sizes) if case % 4 else np.ones(domain.sizes)
        N = [0.0, 1.0, 7.0, 250.0][case % 4]
        chosen = [Q[int(i)] for i in rng.integers(0, len(Q), size=3)]
        M = [Measurement(q, rng.normal(N / 3, 4.0, size=q.dim), 2.0) for q in chosen]
        for updates in ("newest", "all"):
            fitted = MultiplicativeWeights(updates).fit(M, ExplicitDataset(domain, init), N)
            assert isinstance(fitted, ExplicitDataset)
            steps = [(_cells(domain, m.query), m.value) for m in (M[-1:] if updates == "newest" else M)]
            doc = ns["mw_fit"](init, steps, N)
            assert np.allclose(doc, fitted.counts, rtol=1e-12, atol=1e-12 * max(N, 1.0)), (case, updates)


def check_scores_and_total(ns: Namespace) -> None:
    rng = data_rng(6)
    domain, Q = _tabular_case(rng, workloads=True)
    target = [rng.normal(0, 5, size=q.dim) for q in Q]
    current = [rng.normal(0, 5, size=q.dim) for q in Q]
    biases = [float(np.prod(domain.shape_of(q.columns))) for q in Q]
    reference = query_scores(Q, range(len(Q)), target, current, biases)
    for i, q in enumerate(Q):
        assert math.isclose(ns["score"](target[i], current[i], q.dim, biases[i]), reference[i], rel_tol=1e-14)
    _, marginals = _tabular_case(rng, workloads=False)
    a, b = [np.array([2.5])] * 3, [np.array([0.25])] * 3
    assert query_scores(marginals, [0], a, b, [0.0] * 3) == [ns["score"](a[0], b[0])]
    for fallback in (0.0, 3.5):
        measured = [Measurement(q, rng.normal(10, 3, size=q.dim), 2.0) for q in Q[:2]]
        assert math.isclose(ns["measured_total"]([m.value for m in measured], 2.0, fallback),
                            TotalRule.estimate(measured, fallback), rel_tol=1e-14)
        assert ns["measured_total"]([], 2.0, fallback) == TotalRule.estimate([], fallback) == fallback
    negative = [Measurement(Q[0], np.array([-5.0, -4.0]), 2.0)]
    assert ns["measured_total"]([negative[0].value], 2.0, 1.0) == TotalRule.estimate(negative, 1.0) == 0.0


CHECKS: dict[str, Callable[[Namespace], None]] = {
    "level times": check_level_times,
    "privacy schedule": check_schedule,
    "segment ends": check_segment_ends,
    "consistency rules": check_consistency_rules,
    "PrivTree scale and split": check_privtree,
    "rule (5) counts": check_rule5,
    "multiplicative weights": check_mw,
    "tabular scores and measured total": check_scores_and_total,
}


def test_every_statement_has_a_check_and_every_check_a_statement() -> None:
    assert sorted(statements()) == sorted(CHECKS)


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_the_docs_statement_is_the_references_arithmetic(name: str) -> None:
    CHECKS[name](run(name))


def test_a_wrong_statement_fails_its_check() -> None:
    """The checks can fail: the float quotient for the level times, the wrong rounding for the proportional rule."""
    with pytest.raises(AssertionError):
        check_level_times({"level_time": lambda j, eps: math.ceil(2**j / eps),
                           "depth": lambda t, eps: depth_at(t, eps)})
    with pytest.raises(AssertionError):
        check_consistency_rules({"equal_shift": lambda m, a, b: min(max(a + (m - a - b) // 2, 0), m),
                                 "proportional": lambda m, a, b: round(m * a / (a + b)) if a + b else (m + 1) // 2})
    wrong_mw: Callable[..., Any] = lambda init, steps, N: N * init / init.sum()  # noqa: E731 (no step at all)
    with pytest.raises(AssertionError):
        check_mw({"mw_fit": wrong_mw})
    assert Fraction(2) / Fraction(1 / 3) > 6  # the exact quotient the page quotes
