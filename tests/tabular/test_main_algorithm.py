"""Algorithm 3 of 003 (= 000-alg3): selection, counters, measurement, workloads, claims, bad input."""

from __future__ import annotations

import numpy as np
import pytest

from dpstream.claims import Measure
from dpstream.counters import BinaryTreeCounter, SimpleCounter, TreeAggregationCounter, UnboundedBlockCounter
from dpstream.errors import DPStreamInputError, HorizonExceededError
from dpstream.insecure import InsecureSeededNoise, InsecureZeroNoise, TapeRecorder, TapeReplay
from dpstream.noise import DrawKind, NoiseSource
from dpstream.tabular.datasets import answer
from dpstream.tabular.domain import Domain
from dpstream.tabular.main_algorithm import MainAlgorithm
from dpstream.tabular.queries import Workload, all_marginal_queries, all_workloads
from dpstream.tabular.selection import SelectionLaw, score_sensitivity
from dpstream.tabular.stream import DifferentialDataset, StreamStep, generate_stream
from dpstream.tabular.totals import TotalRule
from dpstream.tape import TapeMismatchError
from dpstream.testing import record_run

DOM = Domain(("a", "b", "c"), (2, 3, 2))
Q = all_marginal_queries(DOM, 2)
STREAM = generate_stream(DOM, 5, 30, seed=8, removal_rate=0.1)
EPS, K = 1.0, 3


def build(noise: NoiseSource, **kw: object) -> MainAlgorithm:
    kw.setdefault("total", TotalRule.public(30))
    return MainAlgorithm(DOM, Q, K, EPS, noise=noise, keep_trace=True, **kw)  # type: ignore[arg-type]


def test_sites_scales_and_counter_inputs() -> None:
    """L12 at eps/(2k) per selection; L3's counters are Simple(eps/2k), i.e. Lap(2k/eps), fed q_j(∇f_t) (L15)."""
    recorder = TapeRecorder(InsecureSeededNoise(1))
    alg = build(recorder)
    alg.run(STREAM)
    em = [d for d in recorder.tape if d.kind is DrawKind.EXPONENTIAL_MECHANISM]
    assert [d.site for d in em] == [f"003-alg3 L12 t={t} l={l}" for t in range(1, 6) for l in range(1, K + 1)]
    assert all(d.params["epsilon"] == EPS / (2 * K) and d.params["sensitivity"] == 1.0 for d in em)
    lap = [d for d in recorder.tape if d.kind is DrawKind.LAPLACE]
    assert len(lap) == 5 * K and all(d.params["scale"] == pytest.approx(2 * K / EPS) for d in lap)
    assert alg.trace is not None
    local = dict.fromkeys(range(len(Q)), 0)
    previous = [0.0] * len(Q)
    for step, tr in zip(STREAM, alg.trace, strict=True):
        diff = DifferentialDataset(DOM, step)
        for j in tr.selected:
            local[j] += 1
            z = recorder.tape.value(f"003-alg3 L3 i={j} / 001-alg8 L4 t={local[j]}")
            assert tr.C[j][0] - previous[j] == pytest.approx(answer(Q[j], diff)[0] + z)   # C_j consumed q_j(∇f_t)
            previous[j] = float(tr.C[j][0])
        # l = 1: h_{t,0} = g_{t-1}, so e_i = |q_i(∇f_t + g_{t-1}) - q_i(g_{t-1})| = |q_i(∇f_t)|
        assert tr.scores[0] == pytest.approx([abs(answer(q, diff)[0]) for q in Q])


def test_measurement_is_counter_plus_remainder() -> None:
    """L16-L17 and L20-L21: m(t, j) = C_j(t) + r(t-1, j) for selected j; r(t, i) = q_i(g_t) - C_i(t) otherwise."""
    alg = build(InsecureSeededNoise(2))
    alg.run(STREAM)
    assert alg.trace is not None
    r_prev = [np.zeros(1) for _ in Q]
    for tr in alg.trace:
        for i in range(len(Q)):
            if i in tr.selected:
                assert tr.r[i] == pytest.approx(r_prev[i])
                assert tr.m[i] == pytest.approx(tr.C[i] + r_prev[i])
            else:
                assert tr.r[i] == pytest.approx(tr.g_answers[i] - tr.C[i])
        r_prev = list(tr.r)


def test_printed_sign_selects_the_smallest_error() -> None:
    """E-tabular-2: with the exponential mechanism replaced by its arg-max (zero noise), Def 3.8's printed
    minus sign picks the query with the smallest score, the default the largest."""
    for law, pick in ((SelectionLaw.DEF_3_8, np.argmax), (SelectionLaw.PRINTED_DEF_3_8, np.argmin)):
        alg = build(InsecureZeroNoise(), selection_law=law)
        alg.step(STREAM[0])
        assert alg.trace is not None
        scores = alg.trace[0].scores[0]
        assert alg.trace[0].selected[0] == int(pick(np.asarray(scores)))
    assert build(InsecureZeroNoise(), selection_law=SelectionLaw.PRINTED_DEF_3_8).claim.parameter == EPS


def test_workload_variant() -> None:
    """003-sec7.2: multi-dimensional counters of dimension |q_i|, l1 score with the bias, sensitivity 1/min|q_i|."""
    W = all_workloads(DOM, 2)                       # |q| = 6, 4, 6
    recorder = TapeRecorder(InsecureSeededNoise(3))
    alg = MainAlgorithm(DOM, W, 2, EPS, noise=recorder, total=TotalRule.measured(), keep_trace=True)
    alg.run(STREAM[:2])
    em = [d for d in recorder.tape if d.kind is DrawKind.EXPONENTIAL_MECHANISM]
    assert all(d.params["sensitivity"] == pytest.approx(1 / 4) for d in em)
    first = alg.trace[0] if alg.trace else None
    assert first is not None
    j = first.selected[0]
    cells = [d for d in recorder.tape
             if d.site.startswith(f"003-alg3 L3 i={j} / 001-sec4.3 i=") and d.site.endswith("001-alg8 L4 t=1")]
    assert len(cells) == W[j].dim                   # one Simple counter per cell
    diff = DifferentialDataset(DOM, STREAM[0])
    biases = [float(np.prod(DOM.shape_of(w.columns))) for w in W]   # |X_columns(q_i)|, as printed
    expected = [float(np.abs(answer(w, diff)).sum()) / w.dim - b for w, b in zip(W, biases, strict=True)]
    assert first.scores[0] == pytest.approx(expected)
    one_way = [Workload.build(DOM, (0,))]           # |q| = 2: the printed 1/4 is too small
    assert score_sensitivity(one_way) == 0.5 and score_sensitivity(one_way, True) == 0.25


def test_pluggable_counters() -> None:
    """Any foundation counter: the unbounded block counter of 003-sec8, a bounded binary tree."""
    _, tape = record_run(lambda n: build(n, counter_factory=lambda e, s: UnboundedBlockCounter(e, noise=s)), STREAM, 4)
    assert any("003-alg4 L" in d.site for d in tape)
    alg = build(InsecureSeededNoise(0), counter_factory=lambda e, s: BinaryTreeCounter(e, 2, noise=s))
    alg = MainAlgorithm(DOM, Q, len(Q), EPS, noise=InsecureSeededNoise(0), total=TotalRule.public(30),
                        counter_factory=lambda e, s: BinaryTreeCounter(e, 2, noise=s))
    alg.step(STREAM[0])
    alg.step(STREAM[1])
    recorder_len = alg.t
    with pytest.raises(HorizonExceededError):        # checked before any draw
        alg.step(STREAM[2])
    assert alg.t == recorder_len == 2
    with pytest.raises(DPStreamInputError):          # zCDP counters do not compose with the pure-eps claim
        build(InsecureSeededNoise(0), counter_factory=lambda e, s: TreeAggregationCounter(e, 8, noise=s))


def test_claims() -> None:
    alg = build(InsecureZeroNoise())
    assert alg.claim.measure is Measure.PURE_DP and alg.claim.parameter == pytest.approx(EPS)
    assert build(InsecureZeroNoise(), counter_factory=lambda e, s: SimpleCounter(2 * e, noise=s)).claim.parameter \
        == pytest.approx(1.5 * EPS)                  # counters at eps/k: the claim grows, as it must
    assert build(InsecureZeroNoise(), total=TotalRule.true_size()).claim.measure is Measure.NOT_PRIVATE


def test_failed_draw_changes_nothing() -> None:
    _, tape = record_run(build, STREAM[:1], seed=5)
    alg = MainAlgorithm(DOM, Q, K, EPS, noise=TapeReplay(tape), total=TotalRule.public(30), keep_trace=True)
    alg.step(STREAM[0])
    state = (alg.t, [c.t for c in alg.counters], [x.copy() for x in alg.r])
    with pytest.raises(Exception):  # noqa: B017 - the tape holds no draw for t = 2
        alg.step(STREAM[1])
    assert (alg.t, [c.t for c in alg.counters]) == state[:2]
    assert all(np.array_equal(a, b) for a, b in zip(alg.r, state[2], strict=True))
    mismatch = MainAlgorithm(DOM, Q, K, 2 * EPS, noise=TapeReplay(tape), total=TotalRule.public(30))
    with pytest.raises(TapeMismatchError):
        mismatch.step(STREAM[0])
    assert mismatch.t == 0 and all(c.t == 0 for c in mismatch.counters)


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"epsilon": 0.0}, "epsilon"),
        ({"epsilon": float("nan")}, "epsilon"),
        ({"k": 0}, "k"),
        ({"k": len(Q) + 1}, "k"),
        ({"queries": []}, "Q"),
        ({"selection_law": SelectionLaw.PRINTED_ALG2_L11}, "selection_law"),
        ({"aggregate": "median"}, "aggregate"),
    ],
)
def test_bad_parameters(kwargs: dict[str, object], field: str) -> None:
    args: dict[str, object] = {"domain": DOM, "queries": Q, "k": K, "epsilon": EPS, "total": TotalRule.public(1)}
    args.update(kwargs)
    with pytest.raises(DPStreamInputError) as info:
        MainAlgorithm(**args)  # type: ignore[arg-type]
    assert info.value.field == field


def test_bad_input_no_draw_no_state_change() -> None:
    recorder = TapeRecorder(InsecureSeededNoise(0))
    alg = MainAlgorithm(DOM, Q, K, EPS, noise=recorder, total=TotalRule.public(30))
    alg.step(STREAM[0])
    n = len(recorder.tape)
    for x in ([[0, 0, 2]], [[1, 1]], StreamStep.build(DOM, [], [[1, 2, 1]] * 999)):
        with pytest.raises(DPStreamInputError):
            alg.step(x)
    assert alg.t == 1 and len(recorder.tape) == n


def test_average_of_l19_does_not_track_even_without_noise() -> None:
    """With zero noise, exact fitting and k = |Q| the last fitted dataset matches f_t (property test),
    but the average of L19 does not: each h_{t,l} matches only the queries measured so far at t."""
    from dpstream.tabular.fitting import InformationProjection
    from dpstream.tabular.metrics import CumulativeMarginals
    from dpstream.tabular.queries import Workload

    W = [*all_workloads(DOM, 2), Workload.build(DOM, (0, 1, 2))]
    gaps: dict[str, float] = {}
    for aggregate in ("average", "last"):
        alg = MainAlgorithm(DOM, W, len(W), EPS, noise=InsecureZeroNoise(), total=TotalRule.true_size(),
                            fitter=InformationProjection(), aggregate=aggregate)
        truth = CumulativeMarginals(DOM, [w.columns for w in W])
        gap = 0.0
        for step in STREAM:
            g = alg.step(step)
            truth.update(step)
            gap = max(gap, max(float(np.abs(answer(w, g) - w.from_table(truth.tables[w.columns])).max()) for w in W))
        gaps[aggregate] = gap
    assert gaps["last"] < 1e-6 and gaps["average"] > 0.5


def test_secure_default_noise_runs() -> None:
    """noise=None means SecureNoise (OpenDP Laplace and Gumbel noisy max), for both streaming algorithms."""
    from dpstream.tabular.streaming_mwem import StreamingMWEM

    for alg in (MainAlgorithm(DOM, all_workloads(DOM, 2), 2, EPS, total=TotalRule.measured()),
                StreamingMWEM(DOM, Q, 2, EPS, total=TotalRule.public(30))):
        g = alg.step(STREAM[0])
        assert np.isfinite(g.total) and alg.t == 1
