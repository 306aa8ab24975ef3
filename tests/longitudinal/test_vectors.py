"""Known-answer vectors of 002-alg1 and 002-alg2 in the shipped corpus: replayed, and recomputed from the tape.

* 002-alg1: replayed through :class:`FixedWindowSynthesizer`; the targets p^t recomputed from the tape by the
  paper's equations (6)-(7) (``targets_from_tape``, exact rational arithmetic), and realised by the expected records
  (the window histograms of the released synthetic matrix are the targets).
* 002-alg2: replayed through :class:`CumulativeSynthesizer`; recomputed here from the printed boxes with the
  default readings of docs/errata/longitudinal.md (nothing of ``dpstream.longitudinal`` or ``dpstream.counters`` is
  called): b = 1..t (E-longitudinal-8), counter M_b = tree-based aggregation (002-alg3) over its own local time
  t - b + 1 with horizon T - b + 1 and budget rho_b / 2 (E-longitudinal-7; rho_b of Corollary B.1 unless given),
  sigma^2 = (floor(log2 H) + 1) / (2 rho_b / 2) (E-counters-3), released value = the prefix sum of z_b plus the
  noise of the dyadic nodes covering [1, t - b + 1] (u4-u9 of 002-alg3); the clamp of u6 with S^_0 = n and
  S^_t^{t-1} = 0; u7-u9 over the synthetic records of weight b-1 (E-longitudinal-9) with the tape's choice.
  Every tape site must be read exactly once.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from dpstream.audit.longitudinal.closed_form import targets_from_tape
from dpstream.longitudinal.cumulative import CumulativeSynthesizer
from dpstream.longitudinal.data import window_histogram
from dpstream.longitudinal.fixed_window import FixedWindowSynthesizer
from dpstream.tape import Tape
from dpstream.testing import replay_vector
from dpstream.vectors import KnownAnswerVector
from dpstream.vectors.corpus import known_answer

FIXED = list(known_answer("002-alg1"))
CUMULATIVE = list(known_answer("002-alg2"))


def matrix(vector: KnownAnswerVector) -> np.ndarray[Any, np.dtype[np.int64]]:
    """The n x t report matrix of the vector's columns (n may be 0)."""
    return np.asarray(vector.inputs, dtype=np.int64).reshape(len(vector.inputs), len(vector.inputs[0])).T


@pytest.mark.parametrize("vector", FIXED, ids=[v.id for v in FIXED])
def test_fixed_window_vector(vector: KnownAnswerVector) -> None:
    P = vector.params
    T, k = int(P["T"]), int(P["k"])
    got = replay_vector(lambda n: FixedWindowSynthesizer(T, k, float(P["rho"]), noise=n, n_pad=int(P["n_pad"])), vector)
    for release, expected in zip(got, vector.expected, strict=True):
        if expected is None:
            assert release is None
            continue
        assert release is not None
        assert release.p.tolist() == expected["p"]
        assert np.asarray(release.columns).T.tolist() == expected["columns"]
    # independent recomputation of the targets from the tape, and realisation by the expected records
    X = matrix(vector)
    tape = {d.site: d.value for d in vector.tape}
    t_end = len(vector.inputs)
    targets = targets_from_tape(X, t_end, k, int(P["n_pad"]), tape) if t_end >= k else []
    assert [e["p"] for e in vector.expected if e is not None] == targets
    assert all(e is None for e in vector.expected[: k - 1])
    if targets:
        blocks = [np.asarray(e["columns"], dtype=np.int64).T for e in vector.expected if e is not None]
        S = np.hstack(blocks)
        for t in range(k, t_end + 1):
            assert window_histogram(S, t, k).tolist() == targets[t - k]


def test_fixed_window_vectors_cover_the_edges() -> None:
    edges = {e for v in FIXED for e in v.edges}
    assert {"T=1", "k=1", "k=T", "n=1", "padding near exhaustion", "partial stream"} <= edges
    assert any(min(e["p"]) == 0 for v in FIXED for e in v.expected if e is not None)  # a target at the padding's edge


# --- 002-alg2 from the boxes ---------------------------------------------------------------------------------------
def allocation(T: int, rho: float) -> list[float]:
    """Corollary B.1: rho_b proportional to L_b^3, L_b = max(ceil(log2(T - b + 1)), 1)."""
    L = [max(math.ceil(math.log2(T - b + 1)), 1) if T - b + 1 > 1 else 1 for b in range(1, T + 1)]
    return [rho * x**3 / sum(y**3 for y in L) for x in L]


class Reader:
    def __init__(self, tape: Tape) -> None:
        self.draws = {d.site: d for d in tape}
        self.read: set[str] = set()

    def take(self, site: str, kind: str, **params: Any) -> Any:
        assert site not in self.read, site
        draw = self.draws[site]
        assert draw.kind.value == kind, site
        for name, value in params.items():
            assert draw.params[name] == pytest.approx(value, rel=1e-12), (site, name)
        self.read.add(site)
        return draw.value


def tree_aggregation(z: list[int], H: int, rho: float, reader: Reader, prefix: str, nodes: dict[str, int]) -> int:
    """002-alg3 at local time tau = len(z) <= H: sum of z plus the noise of the dyadic nodes covering [1, tau]; the
    node with lowest set bit j of tau was formed (and its noise drawn, once: ``nodes``) at time (tau >> j) << j."""
    tau = len(z)
    assert 1 <= tau <= H
    sigma2 = H.bit_length() / (2.0 * rho)
    noise = 0
    for j in range(tau.bit_length()):
        if (tau >> j) & 1:
            site = f"{prefix}002-alg3 u8 t={(tau >> j) << j}"
            if site not in nodes:
                nodes[site] = int(reader.take(site, "discrete_gaussian", sigma2=sigma2))
            noise += nodes[site]
    return sum(z) + noise


def recompute_cumulative(vector: KnownAnswerVector, clamped: list[int] | None = None) -> list[dict[str, Any]]:
    """The releases of a 002-alg2 vector; ``clamped`` collects one entry per u6 clamp that changes S~."""
    P = vector.params
    T, rho = int(P["T"]), float(P["rho"])
    rho_b = P.get("rho_b") or allocation(T, rho)
    reader = Reader(vector.tape)
    X = matrix(vector)
    n = X.shape[0]
    weights = np.zeros(n, dtype=np.int64)
    syn = np.zeros(n, dtype=np.int64)
    z_streams: dict[int, list[int]] = {}
    nodes: dict[str, int] = {}
    S_prev = [n]
    out = []
    for t in range(1, len(vector.inputs) + 1):
        x = X[:, t - 1]
        prev = [*S_prev, 0]  # S^_t^{t-1} = 0
        S = [n]  # S^_0^t = n
        column = np.zeros(n, dtype=np.int64)
        for b in range(1, t + 1):
            z_streams.setdefault(b, []).append(int(np.sum((weights == b - 1) & (x == 1))))  # u4
            # the half budget (E-longitudinal-7)
            S_tilde = tree_aggregation(z_streams[b], T - b + 1, rho_b[b - 1] / 2.0, reader, f"002-alg2 u5 b={b} / ",
                                       nodes)
            S_b = min(max(S_tilde, prev[b]), prev[b - 1])  # u6
            if clamped is not None and S_b != S_tilde:
                clamped.append(t)
            z_hat = S_b - prev[b]  # u7
            I = [i for i in range(n) if syn[i] == b - 1]  # u8, synthetic records (E-longitudinal-9)
            picked = reader.take(f"002-alg2 u8 t={t} b={b}", "choice", n=len(I), k=z_hat)
            for pos in picked:  # u9
                column[I[pos]] = 1
            S.append(S_b)
        weights = weights + x
        syn = syn + column
        assert [int(np.sum(syn >= b)) for b in range(t + 1)] == S  # the synthetic counts equal S^ exactly
        S_prev = S
        out.append({"column": column.tolist(), "S_hat": S})
    assert reader.read == set(reader.draws), sorted(set(reader.draws) - reader.read)
    return out


@pytest.mark.parametrize("vector", CUMULATIVE, ids=[v.id for v in CUMULATIVE])
def test_cumulative_vector(vector: KnownAnswerVector) -> None:
    P = vector.params
    got = replay_vector(lambda n: CumulativeSynthesizer(int(P["T"]), float(P["rho"]), noise=n, rho_b=P.get("rho_b")),
                        vector)
    assert [{"column": r.column.tolist(), "S_hat": r.S_hat.tolist()} for r in got] == vector.expected
    assert recompute_cumulative(vector) == vector.expected


def test_cumulative_vectors_cover_the_edges() -> None:
    assert {int(v.params["T"]) for v in CUMULATIVE} >= {1, 2, 4, 7, 8, 9}
    assert any("rho_b" in v.params for v in CUMULATIVE)
    assert any(len(v.inputs) < int(v.params["T"]) for v in CUMULATIVE)
    clamped: list[int] = []
    for v in CUMULATIVE:
        recompute_cumulative(v, clamped)
    assert len(clamped) > 5  # the clamp of u6 binds: a counter's noisy value differs from the released S^


def disagrees(recompute: Callable[[], object], expected: object) -> bool:
    """Whether the recomputation fails (a tape site or parameter does not fit) or gives other releases."""
    try:
        return recompute() != expected
    except (AssertionError, KeyError):
        return True


def test_corrupted_cumulative_vector_is_detected() -> None:
    vector = next(v for v in CUMULATIVE if len(v.inputs) >= 4)
    assert not disagrees(lambda: recompute_cumulative(vector), vector.expected)
    doc = vector.to_json()
    draw = next(d for d in doc["tape"]["draws"] if d["kind"] == "discrete_gaussian")
    draw["value"] += 40
    bad = KnownAnswerVector.from_json(doc)
    assert disagrees(lambda: recompute_cumulative(bad), bad.expected)
    doc = vector.to_json()
    doc["expected"][-1]["S_hat"][-1] += 1
    bad = KnownAnswerVector.from_json(doc)
    assert disagrees(lambda: recompute_cumulative(bad), bad.expected)


def test_corrupted_fixed_window_vector_is_detected() -> None:
    vector = next(v for v in FIXED if v.id.endswith("fixed-window-T6-k2-rho1"))

    def targets(v: KnownAnswerVector) -> list[list[int]]:
        P = v.params
        tape = {d.site: d.value for d in v.tape}
        return targets_from_tape(matrix(v), int(P["T"]), int(P["k"]), int(P["n_pad"]), tape)

    expected = [e["p"] for e in vector.expected if e is not None]
    assert not disagrees(lambda: targets(vector), expected)
    doc = vector.to_json()
    next(d for d in doc["tape"]["draws"] if d["kind"] == "discrete_gaussian")["value"] += 1
    assert disagrees(lambda: targets(KnownAnswerVector.from_json(doc)), expected)
