"""Input generators for tests, audits and experiments (non-private randomness via ``data_rng``)."""

from __future__ import annotations

import numpy as np

from dpstream.errors import require_int_at_least
from dpstream.longitudinal.data import IntArray
from dpstream.noise import data_rng

__all__ = ["all_ones", "random_matrix"]


def random_matrix(n: int, T: int, seed: int, p1: float = 0.4, alphabet: int = 2) -> IntArray:
    """An n x T report matrix with i.i.d. entries (P[x = 1] = p1 if binary, uniform symbols otherwise)."""
    n = require_int_at_least("n", n, 0)
    T = require_int_at_least("T", T, 1)
    rng = data_rng(seed)
    if alphabet == 2:
        return np.asarray(rng.random((n, T)) < p1, dtype=np.int64)
    return np.asarray(rng.integers(0, alphabet, size=(n, T)), dtype=np.int64)


def all_ones(n: int, T: int) -> IntArray:
    """Appendix C.1's extreme simulated data: every update equals 1."""
    return np.ones((require_int_at_least("n", n, 0), require_int_at_least("T", T, 1)), dtype=np.int64)
