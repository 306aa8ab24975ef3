"""Categorical extension of 002-alg1 to an alphabet {0, ..., A-1} (section 1: "naturally extend").

The paper states the extension without writing it; this is ours, derived line by line from
Algorithm 1 (A = 2 gives Algorithm 1 exactly: tests/longitudinal/test_categorical.py replays a
binary tape through it):

* u2-u3: histograms over the A^k window patterns, C^_s^t = C_s^t + n_pad + N_Z(0, sigma^2);
* u9: for every overlap z in A^{k-1} the consistency constraint is
  sum_c p_{zc}^t = sum_a p_{az}^{t-1} =: M_z; the correction spreads the deficit
  D_z = M_z - sum_c C^_{zc}^t evenly: Delta_z = D_z / A;
* u10-u12 (rounding): write D_z = q A + r with 0 <= r < A; every symbol gets q and r symbols,
  chosen uniformly at random (``choice``; for A = 2 a fair coin), get one more. Each p_{zc}
  gets Delta_z plus a mean-zero rounding term, as b_z does for A = 2;
* u16-u17: the records ending in z are split at random into groups of sizes p_{zc}
  (symbol A-1 first, then A-2, ..., symbol 0 takes the rest).

Privacy is unchanged (one individual sits in one bin per step; substituted, two bins), so the
claims equal those of :class:`~dpstream.longitudinal.fixed_window.FixedWindowSynthesizer`.
The Gaussian part of the error keeps variance sigma^2 (Var = sigma^2 (1 - 1/A) + sigma^2 / A,
proofs/proof_longitudinal_fixed_window.py); Theorem 3.2's union bound runs over A^k R bins.

Sites: ``"002-alg1 u3 t= s="``, ``"002-alg1 u11 t= z="`` (choice of the r symbols that round up,
drawn only when r > 0), ``"002-alg1 u16 t= z= c="`` (choice of the records that get symbol c
among those of I_z not yet assigned, c = A-1, ..., 1).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dpstream.convention import convention
from dpstream.errors import DPStreamInputError, require_int_at_least
from dpstream.longitudinal.bounds import n_pad_corollary_3_3
from dpstream.longitudinal.fixed_window import FixedWindowSynthesizer, WindowRelease
from dpstream.noise import NoiseSource, site

__all__ = ["CategoricalFixedWindowSynthesizer"]


@convention(("T", "k", "rho", "alphabet", "noise"))
class CategoricalFixedWindowSynthesizer(FixedWindowSynthesizer):
    """002-alg1 over the alphabet {0, ..., A-1}; ``alphabet=2`` reproduces Algorithm 1."""

    def __init__(
        self,
        T: int,
        k: int,
        rho: float,
        alphabet: int,
        *,
        noise: NoiseSource | None = None,
        n_pad: int | None = None,
        beta: float = 0.05,
        n: int | None = None,
        as_printed: bool = False,
    ) -> None:
        A = require_int_at_least("alphabet", alphabet, 2)
        if A > 10:
            raise DPStreamInputError("alphabet", "at most 10 symbols (patterns are written as digit strings)", A)
        super().__init__(T, k, rho, noise=noise, n_pad=0 if n_pad is None else n_pad, beta=beta, n=n,
                         as_printed=as_printed)
        self._set_alphabet(A)
        if n_pad is None:
            self.n_pad = n_pad_corollary_3_3(self.sigma2, self.T, self.k, self.beta, A)

    def step(self, column: Any) -> WindowRelease | None:
        x = self.validate(column)
        t = self.t + 1
        k, A, O = self.k, self.alphabet, self._overlaps
        codes, new_suffix = self._window_codes(x)
        if t < k:  # [002-alg1 u1] rounds before k only fill the first window
            self._commit_input(x, t, new_suffix)
            return None
        C_hat = self._noisy_histogram(codes, t)  # [002-alg1 u2] [002-alg1 u3] over the A^k patterns
        if t == k:  # [002-alg1 u4]
            return self._first_window(x, t, new_suffix, C_hat)  # [002-alg1 u5] [002-alg1 u6] records laid out by s
        prev = self.p_history[-1]
        p = [0] * self._bins
        for z in range(O):  # [002-alg1 u8] for every z in A^{k-1}
            M_z = sum(int(prev[a * O + z]) for a in range(A))  # sum_a p_{az}^{t-1}
            D_z = M_z - sum(C_hat[z * A + c] for c in range(A))  # [002-alg1 u9] Delta_z = D_z / A
            q, r = divmod(D_z, A)
            up: tuple[int, ...] = ()
            if r != 0:  # [002-alg1 u10] Delta_z is not an integer
                up = self.noise.choice(site("002-alg1 u11", t=t, z=self._z_labels[z]), A, r)  # [002-alg1 u11]
            for c in range(A):  # [002-alg1 u12] [002-alg1 u14] p_{zc}^t = C^_{zc}^t + Delta_z + rounding
                p[z * A + c] = C_hat[z * A + c] + q + (1 if c in up else 0)
        self._check_padding(t, p)
        assert self._syn_suffix is not None
        column_t = np.zeros(self._syn_suffix.shape[0], dtype=np.int64)
        for z in range(O):
            remaining = np.flatnonzero(self._syn_suffix == z)  # [002-alg1 u16] I_z over the synthetic records
            for c in range(A - 1, 0, -1):
                picked = self.noise.choice(site("002-alg1 u16", t=t, z=self._z_labels[z], c=c),
                                           int(remaining.size), p[z * A + c])
                chosen = np.zeros(remaining.size, dtype=bool)
                chosen[list(picked)] = True
                column_t[remaining[chosen]] = c  # [002-alg1 u17] x^_i^t <- c for the chosen records
                remaining = remaining[~chosen]
            column_t[remaining] = 0  # [002-alg1 u17] the rest of I_z gets symbol 0
        return self._extend(x, t, new_suffix, column_t, p)  # [002-alg1 u19]
