"""Known-answer vectors of StreamingMWEM (003-alg2) and the main algorithm (003-alg3) with MW (003-mw).

Each vector (``tests/tabular/vectors/*.json``, made by ``generate_tabular.py`` there) is replayed through the
implementation, and its expected releases are recomputed from the tape alone by the printed boxes written
again here in numpy on the 2 x 3 domain (nothing of ``dpstream.tabular`` is called by the recomputation):

* 003-alg2 with the documented corrections: g_0 = 0 (E-tabular-6), h_{t,0} uniform of mass N_t, selection
  by the tape's index among J_{t,l} with budget eps/(2k) (E-tabular-1), m(t, j) = q_j(nabla f_t) + the L16 draw,
  one MW step (003-mw) per measurement, g_t = g_{t-1} + avg_l h_{t,l};
* 003-alg3: g_0 = 1 (L4), target q_i(nabla f_t + g_{t-1}), Simple counters with budget eps/(2k) whose output is
  C_j(t-1) + q_j(nabla f_t) + its draw (001-alg8), r(t, j) = r(t-1, j) (L16), m = C + r (L17), MW from
  h_{t,l-1} (L18), g_t = avg_l h_{t,l} (L19), C_i(t) = C_i(t-1) and r(t, i) = q_i(g_t) - C_i(t) for the
  others (L20-L21).

MW (003-mw): h_new(x) proportional to h(x) exp(q(x) (m - q(h)) / (2N)) with mass N, where h is first rescaled to
mass N (the convention of ``MultiplicativeWeights``, stated in its docstring). The recomputation also checks
the scores e_{t,l} that the tape records with every exponential-mechanism draw.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from dpstream.testing import load_script, replay_run
from dpstream.vectors import KnownAnswerVector

HERE = Path(__file__).resolve().parent / "vectors"
VECTORS = sorted(HERE.glob("*.json"))
Array = npt.NDArray[np.float64]


def _generator() -> Any:
    return load_script(HERE / "generate_tabular.py")


def masks(params: dict[str, Any]) -> list[Array]:
    """q_i as 0/1 arrays over X (003-def3.5 eq (5))."""
    shape = tuple(params["domain"]["sizes"])
    out = []
    for q in params["queries"]:
        m = np.ones(shape)
        for c, v in zip(q["columns"], q["values"], strict=True):
            keep = np.zeros(shape[c])
            keep[v] = 1.0
            m = m * keep.reshape([shape[c] if a == c else 1 for a in range(len(shape))])
        out.append(m)
    return out


def differential(params: dict[str, Any], x: dict[str, list[list[int]]]) -> Array:
    """nabla f_t as a signed count array: +1 per added record, -1 per removed record."""
    d = np.zeros(tuple(params["domain"]["sizes"]))
    for rec in x["added"]:
        d[tuple(rec)] += 1.0
    for rec in x["removed"]:
        d[tuple(rec)] -= 1.0
    return d


def mw(h: Array, q: Array, m: float, N: float) -> Array:
    p = h / h.sum() if h.sum() > 0 and (h >= 0).all() else np.full(h.shape, 1.0 / h.size)
    w = p * np.exp(q * (m - float((q * N * p).sum())) / (2.0 * N))
    return np.asarray(N * w / w.sum(), dtype=np.float64)


def selected(tape: dict[str, Any], name: str, J: list[int], scores: list[float], eps_sel: float) -> int:
    draw = tape[name]
    assert draw.params["scores"] == pytest.approx(scores, abs=1e-9)
    assert draw.params["epsilon"] == pytest.approx(eps_sel) and draw.params["sensitivity"] == 1.0
    return J[int(draw.value)]


def recompute_streaming_mwem(v: KnownAnswerVector) -> list[list[float]]:
    p, tape = v.params, {d.site: d for d in v.tape}
    Q, k, eps = masks(p), int(p["k"]), float(p["epsilon"])
    g = np.zeros(tuple(p["domain"]["sizes"]))                        # L3, corrected to 0 (E-tabular-6)
    out = []
    for t, x in enumerate(v.inputs, start=1):                         # L4
        diff, N = differential(p, x), float(p["sizes"][t - 1])
        h = np.full(g.shape, N / g.size)                              # h_{t,0}: uniform of mass N_t
        I: list[int] = []                                             # L5
        hs = []
        for l in range(1, k + 1):                                     # L6
            J = [i for i in range(len(Q)) if i not in I]              # L7
            e = [abs(float((Q[i] * diff).sum() - (Q[i] * h).sum())) for i in J]  # L8
            j = selected(tape, f"003-alg2 L11 t={t} l={l}", J, e, eps / (2 * k))  # L11-L12
            I.append(j)                                               # L13
            noise = tape[f"003-alg2 L16 t={t} l={l} cell=0"]          # L16
            assert noise.params["scale"] == pytest.approx(2 * k / eps)
            m = float((Q[j] * diff).sum()) + float(noise.value)      # L17
            h = mw(h, Q[j], m, N)                                     # L20
            hs.append(h)
        g = g + np.mean(hs, axis=0)                                   # L21
        out.append(g.reshape(-1).tolist())
    return out


def recompute_main_algorithm(v: KnownAnswerVector) -> list[list[float]]:
    p, tape = v.params, {d.site: d for d in v.tape}
    Q, k, eps = masks(p), int(p["k"]), float(p["epsilon"])
    g = np.ones(tuple(p["domain"]["sizes"]))                          # L4
    C = np.zeros(len(Q))                                              # counters' outputs C_i(0) = 0
    r = np.zeros(len(Q))                                              # L6
    activations = [0] * len(Q)
    N = 0.0
    out = []
    for t, x in enumerate(v.inputs, start=1):                         # L7
        diff = differential(p, x)
        N += float(p["sizes"][t - 1])                                 # public mass of f_t
        target = [float((q * (diff + g)).sum()) for q in Q]           # q_i(nabla f_t + g_{t-1})
        h, I, hs = g, [], []                                          # h_{t,0} = g_{t-1}; L8
        C_new, r_new = C.copy(), r.copy()
        for l in range(1, k + 1):                                     # L9
            J = [i for i in range(len(Q)) if i not in I]              # L10
            e = [abs(target[i] - float((Q[i] * h).sum())) for i in J]  # L11
            j = selected(tape, f"003-alg3 L12 t={t} l={l}", J, e, eps / (2 * k))  # L12-L13
            I.append(j)                                               # L14
            activations[j] += 1                                       # L15: C_j consumes q_j(nabla f_t)
            noise = tape[f"003-alg3 L3 i={j} / 001-alg8 L4 t={activations[j]}"]
            assert noise.params["scale"] == pytest.approx(2 * k / eps)  # Simple counter, budget eps/(2k)
            C_new[j] = C[j] + float((Q[j] * diff).sum()) + float(noise.value)
            r_new[j] = r[j]                                           # L16
            m = C_new[j] + r_new[j]                                   # L17
            h = mw(h, Q[j], m, N)                                     # L18 (MW, newest measurement)
            hs.append(h)
        g = np.mean(hs, axis=0)                                       # L19
        for i in range(len(Q)):
            if i not in I:
                C_new[i] = C[i]                                       # L20
                r_new[i] = float((Q[i] * g).sum()) - C_new[i]         # L21
        C, r = C_new, r_new
        out.append(g.reshape(-1).tolist())
    return out


RECOMPUTE = {"003-alg2": recompute_streaming_mwem, "003-alg3": recompute_main_algorithm}


def test_there_are_vectors_for_both_algorithms() -> None:
    assert {KnownAnswerVector.load(path).component for path in VECTORS} == {"003-alg2", "003-alg3"}


@pytest.mark.parametrize("path", VECTORS, ids=[p.stem for p in VECTORS])
def test_known_answer_vectors(path: Path) -> None:
    vector = KnownAnswerVector.load(path)
    gen = _generator()
    assert vector.params == gen.PARAMS and vector.inputs == gen.INPUTS
    steps = gen.steps(vector.params, vector.inputs)
    got = replay_run(lambda n: gen.build(vector.component, vector.params, n), steps, vector.tape)  # every site used
    assert np.allclose([gen.cells(g) for g in got], vector.expected, rtol=0.0, atol=1e-12)
    # independent recomputation from the tape by the printed box
    closed = RECOMPUTE[vector.component](vector)
    assert np.allclose(closed, vector.expected, rtol=1e-9, atol=1e-9)
    # the releases move: a vector of constant or zero releases would check little
    assert len({tuple(np.round(x, 6)) for x in vector.expected}) == len(vector.expected)
