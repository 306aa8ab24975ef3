"""Categorical extension of 002-alg1: A = 2 replays Algorithm 1; consistency and realisation for A = 3."""

from __future__ import annotations

import numpy as np
import pytest

from dpstream.claims import Neighbour
from dpstream.errors import DPStreamInputError
from dpstream.longitudinal.categorical import CategoricalFixedWindowSynthesizer
from dpstream.longitudinal.data import window_histogram
from dpstream.longitudinal.fixed_window import FixedWindowSynthesizer
from dpstream.longitudinal.generators import random_matrix
from dpstream.longitudinal.testing import ScriptedNoise
from dpstream.noise import InsecureSeededNoise, InsecureZeroNoise
from dpstream.tape import TapeRecorder


def test_binary_alphabet_reproduces_algorithm_1() -> None:
    """Translate a binary run's tape (coin b_z = +1/2 <-> symbol 0 rounds up) and replay it."""
    T, k = 9, 3
    X = random_matrix(40, T, seed=21)
    recorder = TapeRecorder(InsecureSeededNoise(21))
    binary = FixedWindowSynthesizer(T, k, 3.0, recorder, n_pad=50)
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
    cat = CategoricalFixedWindowSynthesizer(T, k, 3.0, 2, noise, n_pad=50)
    cat.run(X)
    assert set(noise.sites) == set(script)  # every draw was scripted: no other site
    assert [p.tolist() for p in cat.p_history] == [p.tolist() for p in binary.p_history]
    assert np.array_equal(cat.synthetic, binary.synthetic)


@pytest.mark.parametrize(("A", "k"), [(3, 2), (4, 1), (3, 3)])
def test_consistency_realisation_persistence(A: int, k: int) -> None:
    T = 7
    X = random_matrix(50, T, seed=A * 10 + k, alphabet=A)
    synth = CategoricalFixedWindowSynthesizer(T, k, 2.0, A, InsecureSeededNoise(A + k), n_pad=60)
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
    synth = CategoricalFixedWindowSynthesizer(T, k, 1.0, A, InsecureZeroNoise(), n_pad=n_pad)
    synth.run(X)
    for t in range(k, T + 1):
        assert synth.p_history[t - k].tolist() == (window_histogram(X, t, k, A) + n_pad).tolist()
    assert synth.claim.neighbour is Neighbour.INDIVIDUAL_SUBSTITUTE


def test_bad_input() -> None:
    with pytest.raises(DPStreamInputError) as info:
        CategoricalFixedWindowSynthesizer(5, 2, 1.0, 1, InsecureZeroNoise())
    assert info.value.field == "alphabet"
    synth = CategoricalFixedWindowSynthesizer(5, 2, 1.0, 3, InsecureZeroNoise(), n_pad=3)
    with pytest.raises(DPStreamInputError):
        synth.step([0, 1, 3])
    assert synth.t == 0
