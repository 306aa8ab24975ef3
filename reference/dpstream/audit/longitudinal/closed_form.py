"""The releases of 002-alg1 in closed form, from a noise tape (what the known-answer vectors are checked against).

:func:`targets_from_tape` recomputes the targets p^k, ..., p^T from the true histograms and the tape's values by
the paper's equations (6)-(7), with exact rational arithmetic, independently of
:class:`~dpstream.longitudinal.fixed_window.FixedWindowSynthesizer` (tests/longitudinal/test_vectors.py,
tests/longitudinal/test_fixed_window.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from dpstream.longitudinal.data import pattern_string, window_histogram

__all__ = ["targets_from_tape"]


def targets_from_tape(X: Any, T: int, k: int, n_pad: int, tape: Mapping[str, Any]) -> list[list[int]]:
    """p^k, ..., p^T of 002-alg1 recomputed from a noise tape by the paper's equations (6)-(7).

    Independent of :class:`~dpstream.longitudinal.fixed_window.FixedWindowSynthesizer`: written
    from the proof of Theorem 3.2 (p_{z0}^{r+1} = C^_{z0}/2 + (p_{0z}^r + p_{1z}^r - C^_{z1})/2 + b_z e_z),
    with exact rational arithmetic. ``tape`` maps sites to values.
    """
    out: list[list[int]] = []
    O = 2 ** (k - 1)
    for t in range(k, T + 1):
        C = window_histogram(X, t, k)
        C_hat = [int(C[s]) + n_pad + int(tape[f"002-alg1 u3 t={t} s={pattern_string(s, k)}"]) for s in range(2**k)]
        if t == k:
            out.append(C_hat)
            continue
        prev = out[-1]
        p = [0] * 2**k
        for z in range(O):
            label = pattern_string(z, k - 1) if k > 1 else "-"
            mass = prev[z] + prev[O + z]
            e = (mass - C_hat[2 * z] - C_hat[2 * z + 1]) % 2
            b = Fraction(0)
            if e:
                b = Fraction(1, 2) if tape[f"002-alg1 u11 t={t} z={label}"] else Fraction(-1, 2)
            p0 = Fraction(C_hat[2 * z], 2) + Fraction(mass - C_hat[2 * z + 1], 2) + b
            p1 = Fraction(C_hat[2 * z + 1], 2) + Fraction(mass - C_hat[2 * z], 2) - b
            if p0.denominator != 1 or p1.denominator != 1:
                raise AssertionError("equations (6)-(7) must give integers")
            p[2 * z], p[2 * z + 1] = int(p0), int(p1)
        out.append(p)
    return out
