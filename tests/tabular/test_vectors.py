"""Known-answer vectors of the tabular family in the shipped corpus: 003-alg1, 000-alg1, 003-alg2, 000-alg2, 003-alg3,
000-alg3, with multiplicative weights (003-mw) as A_Dataset and public sizes.

Each vector is replayed through the implementation, and its expected releases are recomputed from the tape alone
by the printed boxes written again here in numpy (nothing of ``dpstream.tabular`` is called by the recomputation):

* 003-alg1 (000-alg1): h_0 = 1, for i = 1..k the scores |q(f) - q(h_{i-1})| over all of Q, the tape's selection
  with budget eps/(2k) (E-tabular-4), m_i = q(f) + the L8 draws (Lap(2k/eps)), h_i = A_Dataset(M, h_{i-1})
  (000-alg1 L10: from h_0 every time) with the public mass |f|; g = h_k;
* 003-alg2 with the documented corrections: g_0 = 0 (E-tabular-6), h_{t,0} uniform of mass N_t, selection
  by the tape's index among J_{t,l} with budget eps/(2k) (E-tabular-1), m(t, j) = q_j(nabla f_t) + the L16 draw,
  A_Dataset from h_{t,l-1} on the measurements of time t, g_t = g_{t-1} + avg_l h_{t,l};
* 000-alg2 with A = 003-alg1 on nabla f_t (sites scoped ``000-alg2 L5 t=<t>``, mass the public size of nabla f_t):
  g_t = g_{t-1} + A(nabla f_t), g_0 = 0;
* 003-alg3 (= 000-alg3): g_0 = 1 (L4), target q_i(nabla f_t + g_{t-1}), Simple counters with budget eps/(2k) whose
  output is C_j(t-1) + q_j(nabla f_t) + its draw (001-alg8), r(t, j) = r(t-1, j) (L16), m = C + r (L17), A_Dataset
  from h_{t,l-1} on the measurements of the selected queries in selection order (L18), mass the running public
  total, g_t = avg_l h_{t,l} (L19), C_i(t) = C_i(t-1) and r(t, i) = q_i(g_t) - C_i(t) for the others (L20-L21).

Queries are marginal queries (003-def3.5: q(x) = prod 1{x_c = v_c}, one number) or workloads (003-def7.1: all the
marginal queries on their columns, the marginal table read in lexicographic order); for workloads (003-sec7.2) the
score is ||.||_1 / |q_i| minus a bias (|X_columns(q_i)| for 003-alg3, as printed; none for 003-alg2 and MWEM), the
selection is calibrated with the score sensitivity 1 / min_i |q_i|, a measurement draws one Laplace value per cell,
003-alg3's counter of a workload is one Simple counter per cell (001-sec4.3), and the ``measured`` total is the
mean of the measured workloads' sums (equal noise scales; 0 at least; the previous mass when nothing is measured).

MW (003-mw): h_new(x) proportional to h(x) exp(sum_q q(x) (m_q - q(h)) / (2N)) with mass N, where h is first rescaled
to mass N (uniform if it has no mass; the convention of ``MultiplicativeWeights``, stated in its docstring); mass 0
gives the empty dataset. A_Dataset ``mw`` applies the step of the newest measurement, ``mw-all`` one step per
measurement in order. The recomputation also checks the scores e_{t,l}, budgets and sensitivities that the tape
records with every exponential-mechanism draw, and that every tape site is read.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from dpstream.catalog import entry
from dpstream.tape import Draw, TapeError
from dpstream.testing import by_value, replay_run
from dpstream.vectors import KnownAnswerVector
from dpstream.vectors.corpus import known_answer

ANCHORS = ("003-alg1", "000-alg1", "003-alg2", "000-alg2", "003-alg3", "000-alg3")
VECTORS = [v for a in ANCHORS for v in known_answer(a)]
Array = npt.NDArray[np.float64]


class Query:
    """A marginal query ({"columns", "values"}) or a workload ({"columns"}) over X of shape ``shape``."""

    def __init__(self, q: Mapping[str, Any], shape: Sequence[int]) -> None:
        self.columns = [int(c) for c in q["columns"]]
        self.values = None if "values" not in q else [int(v) for v in q["values"]]
        self.shape = tuple(shape)
        self.cells = [self.shape[c] for c in self.columns]
        self.dim = 1 if self.values is not None else int(np.prod(self.cells))

    def _spread(self, table: Array) -> Array:
        """A table over the query's columns as an array over X."""
        return table.reshape([self.shape[a] if a in self.columns else 1 for a in range(len(self.shape))])

    def answer(self, h: Array) -> Array:
        table = h.sum(axis=tuple(a for a in range(len(self.shape)) if a not in self.columns))
        if self.values is None:
            return np.asarray(table, dtype=np.float64).reshape(-1)
        return np.array([float(table[tuple(self.values)])])

    def lift(self, residual: Array) -> Array:
        """sum over the queries q' of this query of q'(x) residual_{q'}, as an array over X."""
        table = np.zeros(self.cells)
        if self.values is None:
            table = np.asarray(residual, dtype=np.float64).reshape(self.cells)
        else:
            table[tuple(self.values)] = residual[0]
        return np.broadcast_to(self._spread(table), self.shape)

    def score(self, target: Array, current: Array, bias: float) -> float:
        diff = np.abs(target - current)
        return float(diff[0]) if self.values is not None else float(diff.sum()) / self.dim - bias


def queries(params: Mapping[str, Any]) -> list[Query]:
    return [Query(q, params["domain"]["sizes"]) for q in params["queries"]]


def sensitivity(Q: Sequence[Query]) -> float:
    """Delta_u of the selection score: 1 for marginal queries, 1 / min_i |q_i| for workloads."""
    return 1.0 if Q[0].values is not None else 1.0 / min(q.dim for q in Q)


def differential(params: Mapping[str, Any], x: Mapping[str, list[list[int]]]) -> Array:
    """nabla f_t as a signed count array: +1 per added record, -1 per removed record."""
    d = np.zeros(tuple(params["domain"]["sizes"]))
    for rec in x["added"]:
        d[tuple(rec)] += 1.0
    for rec in x["removed"]:
        d[tuple(rec)] -= 1.0
    return d


Measurements = list[tuple[Query, Array]]


def mw(h: Array, measurements: Measurements, N: float, newest_only: bool) -> Array:
    """A_Dataset: MW steps from h (rescaled to a distribution) for the newest measurement or all, mass N."""
    if N == 0.0:
        return np.zeros(h.shape)
    p = h / h.sum() if h.sum() > 0 and (h >= 0).all() else np.full(h.shape, 1.0 / h.size)
    for q, m in measurements[-1:] if newest_only else measurements:
        w = p * np.exp(q.lift(m - N * q.answer(p)) / (2.0 * N))
        p = w / w.sum()
    return np.asarray(N * p, dtype=np.float64)


def measured_total(measurements: Measurements, fallback: float) -> float:
    """The workloads' measured sums averaged with weights 1/|q| (equal noise scales), at least 0."""
    sums = [(float(m.sum()), q.dim) for q, m in measurements if q.values is None]
    if not sums:
        return fallback
    return max(0.0, sum(s / n for s, n in sums) / sum(1.0 / n for _, n in sums))


class Tape:
    """The vector's draws by site; every read is remembered (all must be read)."""

    def __init__(self, v: KnownAnswerVector) -> None:
        self.draws: dict[str, Draw] = {d.site: d for d in v.tape}
        self.read: set[str] = set()

    def __getitem__(self, site: str) -> Draw:
        assert site not in self.read, site
        self.read.add(site)
        return self.draws[site]

    def all_read(self) -> bool:
        return self.read == set(self.draws)


def laplace(tape: Tape, site: str, scale: float) -> float:
    draw = tape[site]
    assert draw.params["scale"] == pytest.approx(scale)
    return float(draw.value)


def measure(tape: Tape, prefix: str, q: Query, scale: float) -> Array:
    """One Laplace draw per cell of q: sites ``<prefix> cell=<c>``."""
    return np.array([laplace(tape, f"{prefix} cell={c}", scale) for c in range(q.dim)])


def selected(tape: Tape, name: str, J: list[int], scores: list[float], eps_sel: float, delta: float) -> int:
    draw = tape[name]
    assert draw.params["scores"] == pytest.approx(scores, abs=1e-9)
    assert draw.params["epsilon"] == pytest.approx(eps_sel) and draw.params["sensitivity"] == pytest.approx(delta)
    return J[int(draw.value)]


def mwem(f: Array, Q: Sequence[Query], k: int, eps: float, N: float | None, newest_only: bool, from_scratch: bool,
         tape: Tape, prefix: str = "") -> Array:
    """003-alg1 (000-alg1 with ``from_scratch``) on the (signed) dataset f with the public mass N (None: the mass is
    measured from the workloads)."""
    h0 = np.ones(f.shape)                                             # L3: h_0 = 1
    h, M = h0, []                                                     # L4
    truth = [q.answer(f) for q in Q]
    for i in range(1, k + 1):                                         # L5
        e = [q.score(truth[j], q.answer(h), 0.0) for j, q in enumerate(Q)]  # L6
        j = selected(tape, f"{prefix}003-alg1 L7 i={i}", list(range(len(Q))), e, eps / (2 * k), sensitivity(Q))  # L7
        M.append((Q[j], truth[j] + measure(tape, f"{prefix}003-alg1 L8 i={i}", Q[j], 2 * k / eps)))  # L8-L9
        mass = measured_total(M, float(h.sum()) if i > 1 else 1.0) if N is None else N
        h = mw(h0 if from_scratch else h, M, mass, newest_only)      # L10
    return h


def public(params: Mapping[str, Any], t: int) -> float | None:
    """The public size of step t (None when the total is measured)."""
    return float(params["sizes"][t - 1]) if params["total"] == "public" else None


def recompute_offline(v: KnownAnswerVector) -> list[list[float]]:
    p, tape = v.params, Tape(v)
    f = differential(p, {"added": v.inputs[0], "removed": []})
    g = mwem(f, queries(p), int(p["k"]), float(p["epsilon"]), public(p, 1), p["A_Dataset"] == "mw",
             v.algorithm == "000-alg1", tape)
    assert tape.all_read()
    return [g.reshape(-1).tolist()]


def recompute_offline_to_stream(v: KnownAnswerVector) -> list[list[float]]:
    p, tape = v.params, Tape(v)
    Q, k, eps = queries(p), int(p["k"]), float(p["epsilon"])
    g = np.zeros(tuple(p["domain"]["sizes"]))                        # 000-alg2 L3
    out = []
    for t, x in enumerate(v.inputs, start=1):                         # L4
        h = mwem(differential(p, x), Q, k, eps, public(p, t), p["A_Dataset"] == "mw", False, tape,
                 f"000-alg2 L5 t={t} / ")                             # L5
        g = g + h                                                     # L6
        out.append(g.reshape(-1).tolist())                            # L7
    assert tape.all_read()
    return out


def recompute_streaming_mwem(v: KnownAnswerVector) -> list[list[float]]:
    p, tape = v.params, Tape(v)
    Q, k, eps, newest = queries(p), int(p["k"]), float(p["epsilon"]), p["A_Dataset"] == "mw"
    g = np.zeros(tuple(p["domain"]["sizes"]))                        # L3, corrected to 0 (E-tabular-6)
    last = 0.0                                                        # the mass of the previous step
    out = []
    for t, x in enumerate(v.inputs, start=1):                         # L4
        diff = differential(p, x)
        M: Measurements = []
        size = public(p, t)
        N = measured_total(M, last) if size is None else size
        h = np.full(g.shape, N / g.size)                              # h_{t,0}: uniform of mass N_t
        I: list[int] = []                                             # L5
        hs = []
        for l in range(1, k + 1):                                     # L6
            J = [i for i in range(len(Q)) if i not in I]              # L7
            e = [Q[i].score(Q[i].answer(diff), Q[i].answer(h), 0.0) for i in J]  # L8
            j = selected(tape, f"003-alg2 L11 t={t} l={l}", J, e, eps / (2 * k), sensitivity(Q))  # L11-L12
            I.append(j)                                               # L13
            m = Q[j].answer(diff) + measure(tape, f"003-alg2 L16 t={t} l={l}", Q[j], 2 * k / eps)  # L16-L17
            M.append((Q[j], m))
            N = measured_total(M, last) if size is None else size
            h = mw(h, M, N, newest)                                   # L20
            hs.append(h)
        g = g + np.mean(hs, axis=0)                                   # L21
        last = N
        out.append(g.reshape(-1).tolist())
    assert tape.all_read()
    return out


def recompute_main_algorithm(v: KnownAnswerVector) -> list[list[float]]:
    p, tape = v.params, Tape(v)
    Q, k, eps, newest = queries(p), int(p["k"]), float(p["epsilon"]), p["A_Dataset"] == "mw"
    bias = [0.0 if q.values is not None else float(np.prod(q.cells)) for q in Q]  # 003-sec7.2 change 3, as printed
    g = np.ones(tuple(p["domain"]["sizes"]))                          # L4
    C = [np.zeros(q.dim) for q in Q]                                  # counters' outputs C_i(0) = 0
    r = [np.zeros(q.dim) for q in Q]                                  # L6
    activations = [0] * len(Q)
    N = 0.0
    out = []
    for t, x in enumerate(v.inputs, start=1):                         # L7
        diff = differential(p, x)
        size = public(p, t)
        N = N + size if size is not None else N                       # public mass of f_t
        target = [q.answer(diff + g) for q in Q]                      # q_i(nabla f_t + g_{t-1})
        h, I, hs = g, [], []                                          # h_{t,0} = g_{t-1}; L8
        C_new, r_new = list(C), list(r)
        for l in range(1, k + 1):                                     # L9
            J = [i for i in range(len(Q)) if i not in I]              # L10
            e = [Q[i].score(target[i], Q[i].answer(h), bias[i]) for i in J]  # L11
            j = selected(tape, f"003-alg3 L12 t={t} l={l}", J, e, eps / (2 * k), sensitivity(Q))  # L12-L13
            I.append(j)                                               # L14
            activations[j] += 1                                       # L15: C_j consumes q_j(nabla f_t)
            # Simple counters with budget eps/(2k), Lap(2k/eps); one per cell of a workload (001-sec4.3)
            cells = [""] if Q[j].values is not None else [f"001-sec4.3 i={c} / " for c in range(Q[j].dim)]
            sites = [f"003-alg3 L3 i={j} / {cell}001-alg8 L4 t={activations[j]}" for cell in cells]
            z = np.array([laplace(tape, s, 2 * k / eps) for s in sites])
            C_new[j] = C[j] + Q[j].answer(diff) + z
            r_new[j] = r[j]                                           # L16
            M = [(Q[i], C_new[i] + r_new[i]) for i in I]              # L17
            mass = measured_total(M, float(h.sum())) if size is None else N
            h = mw(h, M, mass, newest)                                # L18
            hs.append(h)
        g = np.mean(hs, axis=0)                                       # L19
        for i in range(len(Q)):
            if i not in I:
                C_new[i] = C[i]                                       # L20
                r_new[i] = Q[i].answer(g) - C_new[i]                  # L21
        C, r = C_new, r_new
        out.append(g.reshape(-1).tolist())
    assert tape.all_read()
    return out


RECOMPUTE: dict[str, Callable[[KnownAnswerVector], list[list[float]]]] = {
    "003-alg1": recompute_offline, "000-alg1": recompute_offline, "000-alg2": recompute_offline_to_stream,
    "003-alg2": recompute_streaming_mwem, "003-alg3": recompute_main_algorithm, "000-alg3": recompute_main_algorithm}


def test_there_are_vectors_for_every_algorithm() -> None:
    assert {v.algorithm for v in VECTORS} == set(ANCHORS)
    assert {"003-alg2/streaming-mwem-mw-eps1-k2-T5", "003-alg3/main-algorithm-mw-simple-eps1-k2-T5"} <= {
        v.id for v in VECTORS}


def replay(v: KnownAnswerVector) -> list[list[float]]:
    """The vector's releases by the implementation, its codec and every tape site."""
    e = entry(v.algorithm)
    assert e.codec is not None
    codec = e.codec
    got = replay_run(lambda n: e.make(v.params, n), [codec.decode_input(x, v.params) for x in v.inputs], v.tape,
                     v.draw_tolerance.relative, v.draw_tolerance.absolute)
    return [codec.encode_release(g) for g in got]


def read_by_value(v: KnownAnswerVector) -> KnownAnswerVector:
    """The vector with every number whose value is an integer read as an int (JSON numbers are read by value,
    docs/conformance.md): the recomputation below indexes arrays with sizes, columns and record codes."""
    return dataclasses.replace(v, params=by_value(dict(v.params)), inputs=by_value(list(v.inputs)))


@pytest.mark.parametrize("vector", VECTORS, ids=[v.id for v in VECTORS])
def test_known_answer_vectors(vector: KnownAnswerVector) -> None:
    assert np.allclose(replay(vector), vector.expected, rtol=0.0, atol=1e-12)
    # independent recomputation from the tape by the printed box
    closed = RECOMPUTE[vector.algorithm](read_by_value(vector))
    assert np.allclose(closed, vector.expected, rtol=1e-9, atol=1e-9)


def test_the_releases_move() -> None:
    """A vector of constant or zero releases would check little: every release after a step that adds records has
    mass, and within a vector the releases differ from step to step (except after a step that adds nothing to
    StreamingMWEM's or 000-alg2's g_t = g_{t-1} + (public mass 0))."""
    for v in VECTORS:
        steps = v.inputs if v.algorithm not in ("003-alg1", "000-alg1") else [{"added": v.inputs[0], "removed": []}]
        assert all(sum(x) > 0 for x, step in zip(v.expected, steps, strict=True) if step["added"]), v.id
        still = v.algorithm in ("003-alg2", "000-alg2")
        sizes = v.params.get("sizes") or [None] * len(v.expected)  # measured: the mass may come out 0
        moving = [x for x, n in zip(v.expected, sizes, strict=False) if not (still and n in (0, None))]
        assert len({tuple(np.round(x, 6)) for x in moving}) == len(moving), v.id
        assert len(v.expected) == 1 or len({tuple(np.round(x, 6)) for x in v.expected}) > 1, v.id


def disagrees(compute: Callable[[], list[list[float]]], expected: list[Any]) -> bool:
    """Whether a computation fails on the tape (a score, scale or site does not fit) or gives other releases."""
    try:
        return not np.allclose(compute(), expected, rtol=1e-9, atol=1e-9)
    except (AssertionError, KeyError, TapeError):
        return True


@pytest.mark.parametrize("anchor", ANCHORS)
def test_a_corrupted_tape_value_is_detected(anchor: str) -> None:
    v = next(w for w in VECTORS if w.algorithm == anchor)
    doc = v.to_json()
    draw = next(d for d in doc["tape"]["draws"] if d["kind"] == "laplace")
    draw["value"] += 0.5
    bad = KnownAnswerVector.from_json(doc)
    assert not disagrees(lambda: RECOMPUTE[anchor](v), v.expected)
    assert disagrees(lambda: RECOMPUTE[anchor](bad), v.expected)
    assert disagrees(lambda: replay(bad), v.expected)
