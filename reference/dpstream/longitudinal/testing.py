"""Test helpers for the longitudinal family (public: other implementations may reuse them)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dpstream.noise import BaseNoiseSource, DrawKind, InsecureSeededNoise, Params

__all__ = ["ScriptedNoise", "targets_from_tape"]


class ScriptedNoise(BaseNoiseSource):
    """INSECURE, tests only: the scripted value at a scripted site, otherwise a seeded draw.

    Used to force rare events deterministically (e.g. noise that exhausts the padding).
    ``sites`` lists every site requested, in order.
    """

    def __init__(self, script: Mapping[str, Any], seed: int = 0) -> None:
        self.script = dict(script)
        self.inner = InsecureSeededNoise(seed)
        self.sites: list[str] = []

    def _draw(self, site: str, kind: DrawKind, params: Params) -> Any:
        self.sites.append(site)
        if site in self.script:
            return self.script[site]
        return self.inner._draw(site, kind, params)


def targets_from_tape(X: Any, T: int, k: int, n_pad: int, tape: Mapping[str, Any]) -> list[list[int]]:
    """p^k, ..., p^T of 002-alg1 recomputed from a noise tape by the paper's equations (6)-(7).

    Independent of :class:`~dpstream.longitudinal.fixed_window.FixedWindowSynthesizer`: written
    from the proof of Theorem 3.2 (p_{z0}^{r+1} = C^_{z0}/2 + (p_{0z}^r + p_{1z}^r - C^_{z1})/2 + b_z e_z),
    with exact rational arithmetic. ``tape`` maps sites to values.
    """
    from fractions import Fraction

    from dpstream.longitudinal.data import pattern_string, window_histogram

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
