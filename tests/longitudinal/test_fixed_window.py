"""Fixed time window synthesizer (002-alg1): replay against the paper's equations, consistency,
persistence, padding failure, debiasing, claims and bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpstream.audit.longitudinal.closed_form import targets_from_tape
from dpstream.claims import Measure, Neighbour
from dpstream.errors import DPStreamInputError, HorizonExceededError, StateError
from dpstream.insecure import InsecureSeededNoise, InsecureZeroNoise, ScriptedNoise, TapeRecorder, TapeReplay
from dpstream.longitudinal.data import window_histogram
from dpstream.longitudinal.fixed_window import FixedWindowSynthesizer, PaddingExhaustedError
from dpstream.longitudinal.generators import all_ones, random_matrix
from dpstream.longitudinal.queries import WindowQuery, debiased_answer, histogram_queries, poverty_queries
from dpstream.tape import TapeMismatchError


@pytest.mark.parametrize(("T", "k", "rho", "seed"), [(8, 3, 2.0, 1), (6, 1, 0.5, 2), (7, 7, 3.0, 3), (9, 2, 50.0, 4)])
def test_replay_matches_paper_equations(T: int, k: int, rho: float, seed: int) -> None:
    X = random_matrix(40, T, seed=seed)
    recorder = TapeRecorder(InsecureSeededNoise(seed))
    synth = FixedWindowSynthesizer(T, k, rho, noise=recorder, n_pad=60)
    releases = synth.run(X)
    assert releases[: k - 1] == [None] * (k - 1)
    tape = {d.site: d.value for d in recorder.tape}
    expected = targets_from_tape(X, T, k, 60, tape)  # the paper's equations (6)-(7), exact rationals
    assert [r.p.tolist() for r in releases[k - 1:] if r is not None] == expected
    # the synthetic data realise p^t exactly, at every t >= k
    S = synth.synthetic
    assert S.shape == (sum(expected[0]), T)
    for t in range(k, T + 1):
        assert window_histogram(S, t, k).tolist() == expected[t - k]
    # replaying the tape reproduces every release (sites are unique and complete)
    with TapeReplay(recorder.tape) as replay:
        again = FixedWindowSynthesizer(T, k, rho, noise=replay, n_pad=60).run(X)
    for a, b in zip(releases, again, strict=True):
        assert (a is None and b is None) or (a is not None and b is not None and np.array_equal(a.columns, b.columns))


def test_sites_and_kinds() -> None:
    T, k = 6, 2
    recorder = TapeRecorder(InsecureSeededNoise(5))
    FixedWindowSynthesizer(T, k, 1.0, noise=recorder, n_pad=40).run(random_matrix(30, T, seed=5))
    sites = [d.site for d in recorder.tape]
    gauss = [s for s in sites if " u3 " in s]
    assert gauss == [f"002-alg1 u3 t={t} s={s}" for t in range(k, T + 1) for s in ("00", "01", "10", "11")]
    choices = [s for s in sites if " u16 " in s]
    assert choices == [f"002-alg1 u16 t={t} z={z}" for t in range(k + 1, T + 1) for z in ("0", "1")]
    assert all(s.startswith("002-alg1 u11 t=") for s in sites if s not in gauss and s not in choices)


def test_consistency_and_persistence() -> None:
    T, k = 10, 3
    synth = FixedWindowSynthesizer(T, k, 1.0, noise=InsecureSeededNoise(7), n_pad=80)
    X = random_matrix(60, T, seed=7)
    before: np.ndarray | None = None
    for t in range(1, T + 1):
        release = synth.step(X[:, t - 1])
        if t < k:
            assert release is None
            continue
        assert release is not None
        assert not release.columns.flags.writeable and not release.p.flags.writeable
        S = synth.synthetic
        if before is not None:
            assert np.array_equal(S[:, : t - 1], before)  # record t extends record t-1, never rewrites it
            prev, p = synth.p_history[-2], synth.p_history[-1]
            for z in range(4):  # p_{z0}^t + p_{z1}^t = p_{0z}^{t-1} + p_{1z}^{t-1}
                assert p[2 * z] + p[2 * z + 1] == prev[z] + prev[4 + z]
        before = S


def test_zero_noise_is_exact() -> None:
    """With no noise, C^ = C + n_pad, Delta_z = 0 (true counts are consistent) and p^t = C^t + n_pad."""
    T, k, n_pad = 8, 3, 5
    X = random_matrix(30, T, seed=11)
    synth = FixedWindowSynthesizer(T, k, 1.0, noise=InsecureZeroNoise(), n_pad=n_pad)
    synth.run(X)
    for t in range(k, T + 1):
        assert synth.p_history[t - k].tolist() == (window_histogram(X, t, k) + n_pad).tolist()
    assert synth.m == 30 + 8 * n_pad


def test_debiasing_and_queries() -> None:
    """Debiased answers on the synthetic data equal the debiased histogram formula (002-debias)."""
    T, k, n_pad = 9, 3, 70
    X = random_matrix(50, T, seed=12)
    synth = FixedWindowSynthesizer(T, k, 2.0, noise=InsecureSeededNoise(12), n_pad=n_pad)
    synth.run(X)
    S = synth.synthetic
    queries = [*poverty_queries(3).values(), *histogram_queries(2), *histogram_queries(1),
               WindowQuery(2, {"01": 2.0, "10": -1.0})]
    for t in range(k, T + 1):
        p = synth.p_history[t - k]
        for q in queries:
            via_hist = q.from_histogram(p, k) - n_pad * sum(q.lift(k).values())
            assert debiased_answer(q, S, t, k, n_pad) == pytest.approx(via_hist, abs=1e-9)
    # width-1 windows before t = k are answered from the first synthetic block
    q1 = WindowQuery.indicator("1")
    assert debiased_answer(q1, S, 1, k, n_pad) == q1.answer(S, 1) - 4 * n_pad


def test_all_ones_data() -> None:
    """Appendix C.1's data: only the bin 1^k is non-empty; the debiased all-ones count tracks n."""
    synth = FixedWindowSynthesizer(12, 3, 0.5, noise=InsecureZeroNoise(), n_pad=10)
    synth.run(all_ones(100, 12))
    assert synth.p_history[-1].tolist() == [10] * 7 + [110]


def test_default_padding_is_corollary_3_3() -> None:
    T, k, rho, beta = 12, 3, 0.005, 0.05
    for as_printed, delta2 in ((True, 1.0), (False, 2.0)):
        synth = FixedWindowSynthesizer(T, k, rho, noise=InsecureZeroNoise(), beta=beta, as_printed=as_printed)
        R = T - k + 1
        rho_unit = rho / delta2  # the printed formula holds with rho replaced by rho / Delta^2
        lam = (math.sqrt(R / rho_unit) + 1 / math.sqrt(2)) * math.sqrt(math.log(2**k * R / beta))
        assert synth.n_pad == math.ceil(lam)
        assert synth.sigma2 == pytest.approx(delta2 * R / (2 * rho))


def test_claims() -> None:
    rho = 0.3
    default = FixedWindowSynthesizer(5, 2, rho, noise=InsecureZeroNoise())
    printed = FixedWindowSynthesizer(5, 2, rho, noise=InsecureZeroNoise(), as_printed=True)
    assert default.claim.measure is Measure.ZCDP
    assert default.claim.neighbour is Neighbour.INDIVIDUAL_SUBSTITUTE and default.claim.parameter == pytest.approx(rho)
    assert default.claims[Neighbour.INDIVIDUAL_ADD_REMOVE].parameter == pytest.approx(rho / 2)
    assert printed.claim.neighbour is Neighbour.INDIVIDUAL_ADD_REMOVE and printed.claim.parameter == pytest.approx(rho)
    assert printed.claims[Neighbour.INDIVIDUAL_SUBSTITUTE].parameter == pytest.approx(2 * rho)
    assert "AS PRINTED" in printed.claims[Neighbour.INDIVIDUAL_SUBSTITUTE].note
    for synth in (default, printed):  # Theorem 3.1 as stated, whatever the variant
        assert synth.paper_claim.neighbour is Neighbour.INDIVIDUAL_SUBSTITUTE
        assert synth.paper_claim.parameter == rho and synth.paper_claim.source == "002-thm3.1"


# --- failure when the padding is exhausted (E-longitudinal-3) -----------------------------------


def test_padding_exhausted_at_first_window() -> None:
    T, k = 5, 2
    noise = ScriptedNoise({"002-alg1 u3 t=2 s=01": -7})
    synth = FixedWindowSynthesizer(T, k, 1.0, noise=noise, n_pad=3)
    X = np.zeros((4, T), dtype=np.int64)
    assert synth.step(X[:, 0]) is None
    with pytest.raises(PaddingExhaustedError) as info:
        synth.step(X[:, 1])
    assert (info.value.t, info.value.pattern, info.value.value) == (2, "01", -4)
    assert synth.t == 1 and synth.p_history == [] and synth.synthetic.size == 0  # nothing of round 2 released
    with pytest.raises(StateError):
        synth.step(X[:, 1])  # failed for good: no re-drawing of noise


def test_padding_exhausted_later_nothing_half_released() -> None:
    """A negative target after the correction raises before any record of round t is extended."""
    T, k, n_pad = 6, 2, 2
    X = np.zeros((5, T), dtype=np.int64)
    # at t = 2 all counts are C + n_pad (+0); at t = 3 a large noise on bin 00 forces p_01 < 0:
    # Delta_0 = (p_00 + p_10 - C^_00 - C^_01) / 2 with C^_00 = 5 + 2 + 30
    script = {f"002-alg1 u3 t=2 s={s}": 0 for s in ("00", "01", "10", "11")}
    script.update({"002-alg1 u3 t=3 s=00": 30, "002-alg1 u3 t=3 s=01": 0})
    synth = FixedWindowSynthesizer(T, k, 1.0, noise=ScriptedNoise(script, seed=1), n_pad=n_pad)
    synth.run(X[:, :2])
    before = synth.synthetic.copy()
    history = [p.copy() for p in synth.p_history]
    with pytest.raises(PaddingExhaustedError) as info:
        synth.step(X[:, 2])
    assert info.value.t == 3 and info.value.value < 0
    assert np.array_equal(synth.synthetic, before) and synth.t == 2
    assert [p.tolist() for p in synth.p_history] == [p.tolist() for p in history]
    with pytest.raises(StateError):
        synth.step(X[:, 2])


def test_tiny_padding_fails_sometimes_and_never_clamps() -> None:
    """n_pad = 0 with real noise: every run either succeeds with non-negative counts or raises.

    Fixed seeds; the assertion on the number of failures only needs one failure among 40 runs
    (probability of no failure with n_pad = 0 is astronomically small: each run has 4 bins whose
    noise is negative with probability about 1/2).
    """
    X = random_matrix(20, 6, seed=3)
    failures = 0
    for noise in InsecureSeededNoise.independent(8, 40):
        synth = FixedWindowSynthesizer(6, 2, 1.0, noise=noise, n_pad=0)
        try:
            synth.run(X)
        except PaddingExhaustedError:
            failures += 1
            assert len(synth.p_history) == synth.t - 1 if synth.t >= 2 else synth.p_history == []
        for p in synth.p_history:
            assert p.min() >= 0
    assert failures >= 1


# --- bad input ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"T": 5, "k": 6, "rho": 1.0}, "k"),
        ({"T": 5, "k": 0, "rho": 1.0}, "k"),
        ({"T": 0, "k": 1, "rho": 1.0}, "T"),
        ({"T": 5, "k": 2, "rho": 0.0}, "rho"),
        ({"T": 5, "k": 2, "rho": -1.0}, "rho"),
        ({"T": 5, "k": 2, "rho": math.inf}, "rho"),
        ({"T": 5, "k": 2, "rho": 1.0, "n_pad": -1}, "n_pad"),
        ({"T": 5, "k": 2, "rho": 1.0, "n_pad": 2.5}, "n_pad"),
        ({"T": 5, "k": 2, "rho": 1.0, "beta": 0.0}, "beta"),
        ({"T": 5, "k": 2.0, "rho": 1.0}, "k"),
    ],
)
def test_bad_parameters(kwargs: dict[str, object], field: str) -> None:
    with pytest.raises(DPStreamInputError) as info:
        FixedWindowSynthesizer(noise=InsecureZeroNoise(), **kwargs)  # type: ignore[arg-type]
    assert info.value.field == field


@pytest.mark.parametrize(
    "column",
    [[0, 1, 2, 0], [0, 1, -1, 0], [0, 1, 0.5, 0], [0, 1, math.nan, 0], ["0", "1", "0", "1"], [0, 1, 0],
     [[0, 1], [1, 0]], [0, 1, 0, 1, 1]],
)
def test_bad_column_no_draw_no_state_change(column: object) -> None:
    recorder = TapeRecorder(InsecureSeededNoise(0))
    synth = FixedWindowSynthesizer(4, 2, 1.0, noise=recorder, n_pad=20)
    synth.step([0, 1, 1, 0])
    synth.step([1, 1, 0, 0])
    draws, t, history = len(recorder.tape), synth.t, len(synth.p_history)
    with pytest.raises(DPStreamInputError):
        synth.step(column)
    assert (len(recorder.tape), synth.t, len(synth.p_history)) == (draws, t, history)


def test_horizon() -> None:
    synth = FixedWindowSynthesizer(3, 2, 1.0, noise=InsecureSeededNoise(0), n_pad=30)
    synth.run(np.zeros((3, 3), dtype=np.int64))
    with pytest.raises(HorizonExceededError):
        synth.step([0, 0, 0])


def test_failed_draw_leaves_state_unchanged() -> None:
    recorder = TapeRecorder(InsecureSeededNoise(0))
    X = random_matrix(10, 4, seed=1)
    FixedWindowSynthesizer(4, 2, 1.0, noise=recorder, n_pad=30).run(X)
    synth = FixedWindowSynthesizer(4, 2, 2.0, noise=TapeReplay(recorder.tape), n_pad=30)  # other rho: variance mismatch
    synth.step(X[:, 0])
    with pytest.raises(TapeMismatchError):
        synth.step(X[:, 1])
    assert synth.t == 1 and synth.p_history == [] and synth.failure is None
