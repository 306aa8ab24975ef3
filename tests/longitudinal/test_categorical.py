"""Categorical extension of 002-alg1: A = 2 replays Algorithm 1; consistency and realisation for A = 3;
accuracy against our bound (dpstream.longitudinal.propagation) and a broken variant it catches."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from dpstream.audit.longitudinal.checks import theorem_3_2_accuracy
from dpstream.audit.protocol import derive_seed, sample_transcripts
from dpstream.claims import Neighbour
from dpstream.errors import DPStreamInputError
from dpstream.insecure import InsecureSeededNoise, InsecureZeroNoise, ScriptedNoise, TapeRecorder
from dpstream.longitudinal.bounds import fixed_window_sigma2, theorem_3_2_lambda
from dpstream.longitudinal.categorical import CategoricalFixedWindowSynthesizer
from dpstream.longitudinal.data import window_histogram
from dpstream.longitudinal.fixed_window import FixedWindowSynthesizer
from dpstream.longitudinal.generators import random_matrix
from dpstream.longitudinal.propagation import window_error_bound
from dpstream.noise import NoiseSource


def test_binary_alphabet_reproduces_algorithm_1() -> None:
    """Translate a binary run's tape (coin b_z = +1/2 <-> symbol 0 rounds up) and replay it."""
    T, k = 9, 3
    X = random_matrix(40, T, seed=21)
    recorder = TapeRecorder(InsecureSeededNoise(21))
    binary = FixedWindowSynthesizer(T, k, 3.0, noise=recorder, n_pad=50)
    binary.run(X)
    script: dict[str, object] = {}
    for d in recorder.tape:
        if " u11 " in d.site:
            script[d.site] = (0,) if d.value else (1,)
        elif " u16 " in d.site:
            script[f"{d.site} c=1"] = d.value
        else:
            script[d.site] = d.value
    noise = ScriptedNoise(script, seed=999)
    cat = CategoricalFixedWindowSynthesizer(T, k, 3.0, 2, noise=noise, n_pad=50)
    cat.run(X)
    assert set(noise.sites) == set(script)  # every draw was scripted: no other site
    assert [p.tolist() for p in cat.p_history] == [p.tolist() for p in binary.p_history]
    assert np.array_equal(cat.synthetic, binary.synthetic)


@pytest.mark.parametrize(("A", "k"), [(3, 2), (4, 1), (3, 3)])
def test_consistency_realisation_persistence(A: int, k: int) -> None:
    T = 7
    X = random_matrix(50, T, seed=A * 10 + k, alphabet=A)
    synth = CategoricalFixedWindowSynthesizer(T, k, 2.0, A, noise=InsecureSeededNoise(A + k), n_pad=60)
    O = A ** (k - 1)
    previous = None
    for t in range(1, T + 1):
        synth.step(X[:, t - 1])
        if t < k:
            continue
        S = synth.synthetic
        assert window_histogram(S, t, k, A).tolist() == synth.p_history[-1].tolist()
        if previous is not None:
            assert np.array_equal(S[:, : t - 1], previous)
            prev, p = synth.p_history[-2], synth.p_history[-1]
            for z in range(O):
                assert sum(p[z * A + c] for c in range(A)) == sum(prev[a * O + z] for a in range(A))
        previous = S


def test_zero_noise_exact_and_claims() -> None:
    A, k, T, n_pad = 3, 2, 6, 4
    X = random_matrix(30, T, seed=5, alphabet=A)
    synth = CategoricalFixedWindowSynthesizer(T, k, 1.0, A, noise=InsecureZeroNoise(), n_pad=n_pad)
    synth.run(X)
    for t in range(k, T + 1):
        assert synth.p_history[t - k].tolist() == (window_histogram(X, t, k, A) + n_pad).tolist()
    assert synth.claim.neighbour is Neighbour.INDIVIDUAL_SUBSTITUTE


def test_bad_input() -> None:
    with pytest.raises(DPStreamInputError) as info:
        CategoricalFixedWindowSynthesizer(5, 2, 1.0, 1, noise=InsecureZeroNoise())
    assert info.value.field == "alphabet"
    synth = CategoricalFixedWindowSynthesizer(5, 2, 1.0, 3, noise=InsecureZeroNoise(), n_pad=3)
    with pytest.raises(DPStreamInputError):
        synth.step([0, 1, 3])
    assert synth.t == 0


# --- accuracy of the categorical extension (our bound: dpstream.longitudinal.propagation) -------------

A3, T3, K3, RHO3, BETA3, N_PAD3 = 3, 6, 2, 1.0, 0.05, 40
X3 = random_matrix(30, T3, seed=33, alphabet=A3)
RUNS3 = 400
LEVEL3 = 1e-4  # false-alarm probability of each accuracy assertion on a correct implementation (fixed seeds)


class _QuadrupledNoise(CategoricalFixedWindowSynthesizer):
    """BROKEN: draws N_Z(0, 4 sigma^2) (noise scale doubled) while the bound is computed for sigma^2."""

    def noise_variance(self) -> float:
        return 4.0 * self.sigma2


def _accuracy(factory: Any, lam: float, name: str) -> Any:
    runs = sample_transcripts(factory, [tuple(int(v) for v in X3[:, j]) for j in range(T3)], RUNS3,
                              derive_seed(3, "categorical-accuracy"))
    return theorem_3_2_accuracy(runs, X3, T3, K3, N_PAD3, lam, BETA3, LEVEL3, name=name, alphabet=A3)


def test_categorical_accuracy_bound() -> None:
    """P[max_{s,t} |p - (C + n_pad)| > bound] <= beta for A = 3 (our rigorous bound and the printed form over A^k bins).

    n_pad = 40 is far above both bounds (about 10), so no run can stop with PaddingExhaustedError.
    A correct implementation fails an assertion below with probability <= LEVEL3 each.
    """
    sigma2 = fixed_window_sigma2(T3, K3, RHO3)
    ours = window_error_bound(sigma2, T3, K3, BETA3, A3)
    printed_form = theorem_3_2_lambda(sigma2, T3, K3, BETA3, A3)

    def factory(n: NoiseSource) -> CategoricalFixedWindowSynthesizer:
        return CategoricalFixedWindowSynthesizer(T3, K3, RHO3, A3, noise=n, n_pad=N_PAD3)

    for lam, name in ((ours, "propagation.window_error_bound (A = 3)"),
                      (printed_form, "eq (5) with A^k R bins (A = 3)")):
        result = _accuracy(factory, lam, name)
        print(f"\n{result.detail}")
        assert result.passed is True, result.detail
        assert result.data["runs"] == RUNS3


def test_categorical_accuracy_catches_doubled_noise_scale() -> None:
    """The same check with the same level fails when the noise scale is doubled (broken variant)."""
    sigma2 = fixed_window_sigma2(T3, K3, RHO3)
    lam = window_error_bound(sigma2, T3, K3, BETA3, A3)
    result = _accuracy(lambda n: _QuadrupledNoise(T3, K3, RHO3, A3, noise=n, n_pad=N_PAD3), lam, "broken: 4 sigma^2")
    print(f"\nbroken (noise scale doubled): {result.detail}")
    assert result.passed is False
