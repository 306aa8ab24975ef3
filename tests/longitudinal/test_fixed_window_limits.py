"""002-alg1 refuses, at construction and naming ``k``, a window whose padded synthetic data would not fit in memory
(``fixed_window.MAX_PADDED``): ``{"T": 40, "k": 30}`` was accepted and never answered again. Deterministic."""

from __future__ import annotations

import pytest

from dpstream.errors import DPStreamInputError
from dpstream.insecure import InsecureSeededNoise
from dpstream.longitudinal import fixed_window
from dpstream.longitudinal.categorical import CategoricalFixedWindowSynthesizer
from dpstream.longitudinal.fixed_window import MAX_PADDED, FixedWindowSynthesizer


def test_a_window_too_wide_for_memory_is_refused_naming_k(monkeypatch: pytest.MonkeyPatch) -> None:
    assert MAX_PADDED == 2 ** 22
    with pytest.raises(DPStreamInputError, match="k: 2\\^k bins x n_pad"):
        FixedWindowSynthesizer(40, 30, 1.0, noise=InsecureSeededNoise(0), n_pad=10)
    with pytest.raises(DPStreamInputError, match="k: 2\\^k bins"):
        FixedWindowSynthesizer(40, 23, 1.0, noise=InsecureSeededNoise(0), n_pad=0)  # bins alone: 2^23 > 2^22
    monkeypatch.setattr(fixed_window, "MAX_PADDED", 2 ** 6 * 16)  # the edge, at a size quick to build
    FixedWindowSynthesizer(6, 6, 1.0, noise=InsecureSeededNoise(0), n_pad=16)
    with pytest.raises(DPStreamInputError, match="k: 2\\^k bins"):
        FixedWindowSynthesizer(6, 6, 1.0, noise=InsecureSeededNoise(0), n_pad=17)


def test_the_categorical_extension_counts_its_alphabet(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fixed_window, "MAX_PADDED", 3 ** 4 * 2)
    with pytest.raises(DPStreamInputError, match="k: 3\\^k bins"):
        CategoricalFixedWindowSynthesizer(8, 5, 1.0, alphabet=3, noise=InsecureSeededNoise(0), n_pad=1)
    CategoricalFixedWindowSynthesizer(8, 4, 1.0, alphabet=3, noise=InsecureSeededNoise(0), n_pad=2)


def test_a_rho_near_the_largest_double_is_no_overflow() -> None:
    """sigma2 = (T - k + 1) / rho is 3e-308 at rho = 1e308 (a normal double): the reference had formed 2 rho first,
    overflowed, and refused it as "a noise sigma2 of 0.0" (the outside C 002-alg1's author, 2026-11-29)."""
    w = FixedWindowSynthesizer(4, 2, 1e308, noise=InsecureSeededNoise(0), n_pad=1)
    assert w.sigma2 == 3.0 / 1e308
