"""StreamingMWEM (003-alg2) and the offline-to-stream baseline (000-alg2)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpstream.claims import Measure
from dpstream.errors import DPStreamInputError
from dpstream.insecure import InsecureSeededNoise, InsecureZeroNoise, TapeRecorder, TapeReplay
from dpstream.noise import DrawKind, NoiseSource
from dpstream.tabular.datasets import answer
from dpstream.tabular.domain import Domain
from dpstream.tabular.fitting import MultiplicativeWeights
from dpstream.tabular.offline import offline_claim, select_measure_fit
from dpstream.tabular.queries import all_marginal_queries, all_workloads
from dpstream.tabular.selection import SelectionLaw
from dpstream.tabular.stream import DifferentialDataset, StreamStep, generate_stream
from dpstream.tabular.streaming_mwem import OfflineToStream, StreamingMWEM
from dpstream.tabular.totals import TotalRule
from dpstream.tape import TapeMismatchError
from dpstream.testing import record_run, replay_run

DOM = Domain(("a", "b", "c"), (2, 3, 2))
Q = all_marginal_queries(DOM, 1)
STREAM = generate_stream(DOM, 4, 40, seed=5)
EPS, K = 1.0, 2


def build(noise: NoiseSource, **kw: object) -> StreamingMWEM:
    return StreamingMWEM(DOM, Q, K, EPS, noise=noise, total=TotalRule.public(40), keep_trace=True, **kw)  # type: ignore[arg-type]


def test_sites_and_scales_follow_the_box() -> None:
    """L11: one selection per (t, l) at eps/(2k) (Def 3.8); L16: Lap(2k/eps) per measured cell."""
    _, tape = record_run(build, STREAM, seed=1)
    em = [d for d in tape if d.kind is DrawKind.EXPONENTIAL_MECHANISM]
    lap = [d for d in tape if d.kind is DrawKind.LAPLACE]
    assert [d.site for d in em] == [f"003-alg2 L11 t={t} l={l}" for t in range(1, 5) for l in (1, 2)]
    assert all(d.params["epsilon"] == EPS / (2 * K) and d.params["sensitivity"] == 1.0 for d in em)
    assert len(lap) == 4 * K and all(d.params["scale"] == 2 * K / EPS for d in lap)
    _, printed = record_run(lambda n: build(n, selection_law=SelectionLaw.PRINTED_ALG2_L11), STREAM, seed=1)
    # printed L11: P ∝ exp((eps/2k) e) is the foundation's law exp(eps' e / 2) with eps' = eps/k
    assert all(d.params["epsilon"] == EPS / K for d in printed if d.kind is DrawKind.EXPONENTIAL_MECHANISM)


def test_measurements_and_first_scores_from_the_tape() -> None:
    """m(t, j) = q_j(∇f_t) + delta_{t,l} (L17) and, at l = 1, e_i = |q_i(∇f_t) - q_i(h_{t,0})| with h_{t,0}
    uniform of mass N (recomputed here by hand)."""
    recorder = TapeRecorder(InsecureSeededNoise(2))
    alg = build(recorder)
    alg.run(STREAM)
    assert alg.trace is not None
    for step, tr in zip(STREAM, alg.trace, strict=True):
        diff = DifferentialDataset(DOM, step)
        for l, (j, m) in enumerate(zip(tr.selected, tr.measurements, strict=True), start=1):
            z = recorder.tape.value(f"003-alg2 L16 t={tr.t} l={l} cell=0")
            assert m[0] == pytest.approx(answer(Q[j], diff)[0] + z)
            assert j == [i for i in range(len(Q)) if i not in tr.selected[:l - 1]][
                recorder.tape.value(f"003-alg2 L11 t={tr.t} l={l}")]
        by_hand = [abs(answer(q, diff)[0] - 40.0 / DOM.sizes[q.columns[0]]) for q in Q]
        assert tr.scores[0] == pytest.approx(by_hand)


def test_g0_ones_adds_the_all_ones_dataset() -> None:
    """E-tabular-6: under the same tape, L3's g(0, x) = 1 shifts every release by exactly q(1)."""
    releases, tape = record_run(build, STREAM, seed=3)
    printed = replay_run(lambda n: build(n, g0_ones=True), STREAM, tape)
    for a, b in zip(releases, printed, strict=True):
        for q in Q:
            shift = DOM.size / DOM.sizes[q.columns[0]]
            assert answer(q, b)[0] - answer(q, a)[0] == pytest.approx(shift)


def test_mass_reveals_the_true_size_as_printed() -> None:
    """E-tabular-3: with |∇f_t| as the mass, |g_t| - |g_{t-1}| = |∇f_t| exactly; with public sizes it is n_t."""
    stream = generate_stream(DOM, 3, 30, seed=9, removal_rate=0.2)
    leaky = StreamingMWEM(DOM, Q, K, EPS, noise=InsecureSeededNoise(0), total=TotalRule.true_size())
    public = StreamingMWEM(DOM, Q, K, EPS, noise=InsecureSeededNoise(0), total=TotalRule.public(30))
    prev_l = prev_p = 0.0
    for step in stream:
        gl, gp = leaky.step(step), public.step(step)
        assert gl.total - prev_l == pytest.approx(step.size)
        assert gp.total - prev_p == pytest.approx(30.0)
        prev_l, prev_p = gl.total, gp.total
    assert leaky.claim.measure is Measure.NOT_PRIVATE


def test_claims() -> None:
    assert build(InsecureZeroNoise()).claim.parameter == pytest.approx(EPS)
    printed = build(InsecureZeroNoise(), selection_law=SelectionLaw.PRINTED_ALG2_L11)
    assert printed.claim.parameter == pytest.approx(1.5 * EPS)       # k (eps/k) + k (eps/2k)
    assert printed.paper_claim.parameter == EPS


def test_failed_draw_changes_nothing() -> None:
    _, tape = record_run(build, STREAM[:2], seed=4)
    alg = StreamingMWEM(DOM, Q, K, 2 * EPS, noise=TapeReplay(tape), total=TotalRule.public(40))  # other eps: mismatch
    with pytest.raises(TapeMismatchError):
        alg.step(STREAM[0])
    assert alg.t == 0 and alg.releases == [] and alg.g.total == 0.0


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"epsilon": 0.0}, "epsilon"),
        ({"epsilon": -1.0}, "epsilon"),
        ({"k": 0}, "k"),
        ({"k": 99}, "k"),
        ({"queries": []}, "Q"),
        ({"queries": [*Q[:1], *all_workloads(DOM, 1)[:1]]}, "Q"),
        ({"total": TotalRule.measured()}, "total"),
    ],
)
def test_bad_parameters(kwargs: dict[str, object], field: str) -> None:
    args: dict[str, object] = {"domain": DOM, "queries": Q, "k": K, "epsilon": EPS, "total": TotalRule.public(1)}
    args.update(kwargs)
    with pytest.raises(DPStreamInputError) as info:
        StreamingMWEM(**args)  # type: ignore[arg-type]
    assert info.value.field == field


@pytest.mark.parametrize("x", [[[0, 0]], [[0, 3, 0]], "records", None,
                               StreamStep(np.zeros((0, 3), dtype=np.int64), np.array([[1, 1, 1]]))])
def test_bad_input_no_draw_no_state_change(x: object) -> None:
    recorder = TapeRecorder(InsecureSeededNoise(0))
    alg = StreamingMWEM(DOM, Q, K, EPS, noise=recorder, total=TotalRule.public(40))
    with pytest.raises(DPStreamInputError):
        alg.step(x)
    assert alg.t == 0 and len(recorder.tape) == 0


def test_offline_to_stream_000_alg2() -> None:
    """000-alg2: g_t = g_{t-1} + A(∇f_t, eps) with A = MWEM (003-alg1) and fresh sites per time."""
    def offline(diff: DifferentialDataset, noise: NoiseSource) -> object:
        return select_measure_fit(diff, Q, EPS, K, MultiplicativeWeights(), total=TotalRule.public(40), noise=noise).g

    recorder = TapeRecorder(InsecureSeededNoise(0))
    base = OfflineToStream(DOM, offline, offline_claim(EPS, K, False, TotalRule.public(40)), noise=recorder)  # type: ignore[arg-type]
    for step in STREAM:
        base.step(step)
    assert base.g.total == pytest.approx(4 * 40.0)
    assert base.claim.parameter == EPS
    sites = [d.site for d in recorder.tape]
    assert sites[0].startswith("000-alg2 L5 t=1 / 003-alg1 L7 i=1") and len(set(sites)) == len(sites)
    assert math.isclose(sum(1 for s in sites if "L7" in s), 4 * K)
