"""Fixed time window synthesizer — 002-alg1 (Bun, Gaboardi, Neunhoeffer, Zhang 2024, section 3).

Round t reveals the column D^t of the n x T report matrix. From t = k on, the synthesizer
forms the true histogram C^t of k-bit suffixes (u2), privatizes it with padding and discrete
Gaussian noise (u3), and either outputs a first synthetic dataset with that histogram (t = k,
u4-u6) or extends each of its m = n* persistent synthetic records by one bit (t > k, u8-u19):
the targets p^t are corrected by Delta_z (u9) so that p_{z0}^t + p_{z1}^t = p_{0z}^{t-1} +
p_{1z}^{t-1} (a fair coin b_z rounds half-integers, u10-u12), then p_{z1}^t of the records
ending in z get the bit 1 (u16-u17). Released records are never rewritten.

Sites (for tapes): ``"002-alg1 u3 t=<t> s=<k bits>"`` (discrete Gaussian),
``"002-alg1 u11 t=<t> z=<k-1 bits>"`` (coin: True means b_z = +1/2),
``"002-alg1 u16 t=<t> z=<k-1 bits>"`` (choice of I_{z1} among the positions of I_z, which
lists the records ending in z in increasing index order). For k = 1 the empty z is written ``-``.

Deviations from the printed box (docs/errata/longitudinal.md):

* E-longitudinal-1 (privacy, default changed): the printed variance (T-k+1)/(2 rho) gives
  rho-zCDP when one individual is added or removed, but the paper's neighbours substitute one
  individual's sequence (n fixed), which moves two bins per step: 2 rho. The default uses
  (T-k+1)/rho, which meets Theorem 3.1 under substitution; ``as_printed=True`` keeps the
  printed variance (claim: rho-zCDP under add/remove). ``claims`` states both relations.
* E-longitudinal-2 (u16/u17): I_z is printed over the true records x_i and u17 sets "1 for
  i in I_z". The index set must be the synthetic records ending in z (section 3.1 text; the
  true set has the wrong size and would copy true membership into the release); u17 is
  executed literally (1 on I_z, then 0 on I_z minus I_{z1}), which equals "1 on I_{z1}".
* E-longitudinal-3 (padding exhausted): when noise drives a target count below zero no
  synthetic dataset exists (Theorem 3.2: "as long as n_pad is at least ... the algorithm will
  succeed"). The step raises :class:`PaddingExhaustedError` before releasing anything of
  round t and the synthesizer stays failed (no silent clamping, no re-drawing of noise).
* n_pad defaults to Corollary 3.3's lambda rounded up to an integer (counts are integers).

Proof: proofs/proof_longitudinal_fixed_window.py (Theorem 3.1 per neighbour relation, Theorem 3.2,
Corollary 3.3, padding).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from dpstream.claims import Neighbour, PrivacyClaim
from dpstream.convention import convention
from dpstream.errors import (
    DPStreamInputError,
    HorizonExceededError,
    StateError,
    require_int_at_least,
    require_positive_finite,
    require_probability,
)
from dpstream.longitudinal.bounds import fixed_window_sigma2, n_pad_corollary_3_3, validate_horizon_window
from dpstream.longitudinal.data import IntArray, frozen, pattern_string, validate_column
from dpstream.noise import DrawKind, NoiseSource, default_noise, require_drawable, site

__all__ = ["FixedWindowSynthesizer", "PaddingExhaustedError", "WindowRelease", "z_label"]

ANCHOR = "002-alg1"


class PaddingExhaustedError(StateError):
    """Noise drove a target count below zero: the padding is exhausted (002-thm3.2's failure event).

    ``t`` is the round, ``pattern`` the k-bit string s whose count p_s^t (or C^_s^k) is negative,
    ``value`` that count. Nothing of round t has been released; the synthesizer is failed for good.
    """

    def __init__(self, t: int, pattern: str, value: int, n_pad: int) -> None:
        self.t = t
        self.pattern = pattern
        self.value = value
        self.n_pad = n_pad
        super().__init__(
            f"padding exhausted at t={t}: target count for s={pattern} is {value} < 0 (n_pad={n_pad}); "
            "no synthetic dataset exists, nothing of round t was released and the synthesizer stops")


@dataclass(frozen=True)
class WindowRelease:
    """What round t releases: the new synthetic columns (m x k at t = k, m x 1 later) and p^t.

    ``p[s]`` is p_s^t, the number of synthetic records whose last k bits equal s (s coded as in
    :mod:`dpstream.longitudinal.data`); it is a function of the synthetic data, i.e. post-processing.
    """

    t: int
    columns: IntArray
    p: IntArray

    @property
    def m(self) -> int:
        return int(self.columns.shape[0])


def z_label(z: int, width: int, alphabet: int = 2) -> str:
    """Site label of an overlap z of ``width`` symbols; the empty overlap (k = 1) is ``-``."""
    return pattern_string(z, width, alphabet) if width > 0 else "-"


MAX_PADDED = 2 ** 22
"""The most bins times padding records (A^k max(n_pad, 1), alphabet A = 2 for 002-alg1) an instance takes: k = 18
with n_pad = 10 (2.6 million records) took 12 s and 1.2 GB to its first release through ``dpstream serve``
(2026-11-29), four times that at k = 20; ``{"T": 40, "k": 30}`` was accepted and never answered again (found by the
outside C 002-alg1's author). Refused at construction, naming ``k``, before anything is drawn."""


@convention(("T", "k", "rho", "noise"))
class FixedWindowSynthesizer:
    """002-alg1. Stream the columns D^1, ..., D^T through :meth:`step`.

    Parameters: horizon ``T``, window length ``k`` (1 <= k <= T), zCDP budget ``rho``, the noise
    source (secure by default), ``n_pad`` (default: Corollary 3.3 at failure probability
    ``beta``), ``n`` (optional; otherwise fixed by the first column), ``as_printed`` (printed
    noise variance, see the module doc).
    """

    anchor = ANCHOR
    alphabet = 2

    def __init__(
        self,
        T: int,
        k: int,
        rho: float,
        *,
        noise: NoiseSource | None = None,
        n_pad: int | None = None,
        beta: float = 0.05,
        n: int | None = None,
        as_printed: bool = False,
    ) -> None:
        # Input: known time horizon T, time window length k, privacy parameter rho, n_pad per bin
        self.T, self.k = validate_horizon_window(T, k)
        self.rho = require_positive_finite("rho", rho)
        if not isinstance(as_printed, bool):
            raise DPStreamInputError("as_printed", "must be a bool", as_printed)
        self.as_printed = as_printed
        self.beta = require_probability("beta", beta)
        self.sigma2 = fixed_window_sigma2(self.T, self.k, self.rho, as_printed=as_printed)
        require_drawable("rho", rho, DrawKind.DISCRETE_GAUSSIAN, sigma2=self.sigma2)
        self.n_pad = (n_pad_corollary_3_3(self.sigma2, self.T, self.k, self.beta) if n_pad is None
                      else require_int_at_least("n_pad", n_pad, 0))
        self.n = None if n is None else require_int_at_least("n", n, 0)
        self.noise: NoiseSource = default_noise() if noise is None else noise
        self.t = 0
        self.failure: PaddingExhaustedError | None = None
        self._set_alphabet(self.alphabet)
        self._true_suffix: IntArray | None = None  # code of (x_i^{t-k+2}, ..., x_i^t): the last k-1 true bits
        self._syn_suffix: IntArray | None = None  # code of the last k-1 synthetic bits of each record
        self._columns: list[IntArray] = []  # released synthetic columns (read-only arrays)
        self.p_history: list[IntArray] = []  # p^k, p^{k+1}, ... (released: histograms of the synthetic data)

    def _set_alphabet(self, alphabet: int) -> None:
        """Bins A^k, overlaps A^(k-1) and their site labels (the categorical extension sets A > 2)."""
        if alphabet**self.k * max(self.n_pad, 1) > MAX_PADDED:
            raise DPStreamInputError("k", f"{alphabet}^k bins x n_pad padding records must be at most {MAX_PADDED} "
                                     f"(k = {self.k}, n_pad = {self.n_pad}: the synthetic data would not fit in "
                                     "memory)", self.k)
        self.alphabet = alphabet
        self._bins = alphabet**self.k
        self._overlaps = alphabet ** (self.k - 1)
        self._s_labels = [pattern_string(s, self.k, alphabet) for s in range(self._bins)]
        self._z_labels = [z_label(z, self.k - 1, alphabet) for z in range(self._overlaps)]

    # -- claims ------------------------------------------------------------------------------
    def noise_variance(self) -> float:
        """The variance parameter used for the u3 draws (a broken variant may override this)."""
        return self.sigma2

    @property
    def claims(self) -> dict[Neighbour, PrivacyClaim]:
        """The zCDP guarantee under each individual-level neighbour relation.

        The R = T-k+1 noisy histograms are a discrete Gaussian mechanism of squared l2 sensitivity R
        (one individual added or removed: one bin per step) or 2R (substituted: two bins per step),
        so D_alpha <= alpha * sens / (2 sigma^2); the synthetic data are post-processing
        (proofs/proof_longitudinal_fixed_window.py).
        """
        R = self.T - self.k + 1
        rho_ar = R / (2.0 * self.sigma2)
        rho_sub = 2.0 * R / (2.0 * self.sigma2)
        note_var = f"N_Z(0, {self.sigma2:g}) per bin and step, R = {R} steps"
        if self.as_printed:
            sub_note = (f"AS PRINTED: Theorem 3.1 claims {self.rho:g} under the paper's substitution relation; "
                        f"the noisy histograms cost {rho_sub:g} (two bins move per step); {note_var} "
                        "(docs/errata/longitudinal.md E-longitudinal-1)")
            ar_note = f"printed variance (T-k+1)/(2 rho); {note_var}"
        else:
            sub_note = f"variance doubled for substitution (E-longitudinal-1); {note_var}"
            ar_note = f"{note_var}"
        return {
            Neighbour.INDIVIDUAL_SUBSTITUTE: PrivacyClaim.zcdp(rho_sub, Neighbour.INDIVIDUAL_SUBSTITUTE,
                                                               "002-thm3.1", note=sub_note),
            Neighbour.INDIVIDUAL_ADD_REMOVE: PrivacyClaim.zcdp(rho_ar, Neighbour.INDIVIDUAL_ADD_REMOVE,
                                                               "002-thm3.1", note=ar_note),
        }

    @property
    def claim(self) -> PrivacyClaim:
        """Default: rho under substitution (the paper's model); as printed: rho under add/remove."""
        relation = Neighbour.INDIVIDUAL_ADD_REMOVE if self.as_printed else Neighbour.INDIVIDUAL_SUBSTITUTE
        return self.claims[relation]

    @property
    def paper_claim(self) -> PrivacyClaim:
        """Theorem 3.1 as stated: rho-zCDP in the paper's model (one individual's record substituted)."""
        return PrivacyClaim.zcdp(self.rho, Neighbour.INDIVIDUAL_SUBSTITUTE, "002-thm3.1",
                                 note="the paper's statement (Theorem 3.1)")

    # -- state views ---------------------------------------------------------------------------
    @property
    def m(self) -> int | None:
        """n*, the number of synthetic records (known from t = k on)."""
        return None if self._syn_suffix is None else int(self._syn_suffix.shape[0])

    @property
    def synthetic(self) -> IntArray:
        """The m x t synthetic matrix released so far (a copy; empty before t = k)."""
        if not self._columns:
            return np.zeros((0, 0), dtype=np.int64)
        return np.column_stack(self._columns).astype(np.int64)

    @property
    def p(self) -> IntArray | None:
        """p^t of the last round (None before t = k)."""
        return self.p_history[-1] if self.p_history else None

    # -- one round -----------------------------------------------------------------------------
    def validate(self, column: Any) -> IntArray:
        """Check D^t without changing state (failed state, horizon, 0/1 entries, length n)."""
        if self.failure is not None:
            raise StateError(f"the synthesizer failed at t={self.failure.t} (padding exhausted); it cannot continue")
        if self.t >= self.T:
            raise HorizonExceededError("t", f"cannot step past the horizon T = {self.T}", self.t + 1)
        return validate_column(column, self.n, self.alphabet)

    def step(self, column: Any) -> WindowRelease | None:
        """Consume D^t; return the round's release (None for t < k, where nothing is released)."""
        x = self.validate(column)
        t = self.t + 1
        codes, new_suffix = self._window_codes(x)
        if t < self.k:  # [002-alg1 u1] for t <- k to T: rounds before k only fill the first window
            self._commit_input(x, t, new_suffix)
            return None
        C_hat = self._noisy_histogram(codes, t)  # u2-u3
        if t == self.k:  # [002-alg1 u4] if t = k then
            return self._first_window(x, t, new_suffix, C_hat)  # u5-u6
        # (u7: else — rounds t > k)
        prev = self.p_history[-1]
        p = [0] * self._bins
        for z in range(self._overlaps):  # [002-alg1 u8] for every z in {0,1}^{k-1}
            z0, z1, zero_z, one_z = 2 * z, 2 * z + 1, z, self._overlaps + z
            Delta = 0.5 * (prev[zero_z] + prev[one_z] - (C_hat[z0] + C_hat[z1]))  # [002-alg1 u9]
            if Delta != int(Delta):  # [002-alg1 u10] if Delta_z is not an integer
                # [002-alg1 u11] b_z in {-1/2, 1/2} uniformly (coin True: b_z = +1/2)
                b = 0.5 if self.noise.coin(site("002-alg1 u11", t=t, z=self._z_labels[z])) else -0.5
                p[z0] = int(C_hat[z0] + Delta + b)  # [002-alg1 u12] p_{z0}^t = C^_{z0}^t + Delta_z + b_z
                p[z1] = int(C_hat[z1] + Delta - b)  # [002-alg1 u12] p_{z1}^t = C^_{z1}^t + Delta_z - b_z
            else:  # (u13: else)
                p[z0] = int(C_hat[z0] + Delta)  # [002-alg1 u14] p_{z0}^t = C^_{z0}^t + Delta_z
                p[z1] = int(C_hat[z1] + Delta)  # [002-alg1 u14] p_{z1}^t = C^_{z1}^t + Delta_z
        self._check_padding(t, p)  # E-longitudinal-3: a negative target has no synthetic dataset
        assert self._syn_suffix is not None
        column_t = np.zeros(self._syn_suffix.shape[0], dtype=np.int64)
        for z in range(self._overlaps):
            # [002-alg1 u16] select p_{z1}^t indices I_{z1} from I_z = {i | (x^_i^{t-k+1..t-1}) = z}
            # (synthetic records, E-longitudinal-2; as printed "x_i" would index the true records)
            I_z = np.flatnonzero(self._syn_suffix == z)
            picked = self.noise.choice(site("002-alg1 u16", t=t, z=self._z_labels[z]), int(I_z.size), p[2 * z + 1])
            in_I_z1 = np.zeros(I_z.size, dtype=bool)
            in_I_z1[list(picked)] = True  # I_{z1} = I_z[picked]
            # [002-alg1 u17] x^_i^t <- 1 for i in I_z and x^_i^t <- 0 if i in I_z \ I_{z1} (in this order)
            column_t[I_z] = 1
            column_t[I_z[~in_I_z1]] = 0
        return self._extend(x, t, new_suffix, column_t, p)  # [002-alg1 u19] (u20-u21: one round per step)

    def run(self, matrix: Any) -> list[WindowRelease | None]:
        """Step through all columns of an n x t matrix (t <= T)."""
        arr = np.asarray(matrix)
        if arr.ndim != 2:
            raise DPStreamInputError("D", "must be an n x T matrix", getattr(arr, "shape", matrix))
        return [self.step(arr[:, j]) for j in range(arr.shape[1])]

    # -- helpers (shared with the categorical extension) ------------------------------------
    def _window_codes(self, x: IntArray) -> tuple[IntArray, IntArray]:
        """Codes of (x_i^{t-k+1}, ..., x_i^t) (complete once t >= k) and of their last k-1 symbols."""
        suffix = np.zeros(x.shape[0], dtype=np.int64) if self._true_suffix is None else self._true_suffix
        codes = suffix * self.alphabet + x
        return codes, codes % self._overlaps

    def _noisy_histogram(self, codes: IntArray, t: int) -> list[int]:
        """C^_s^t for every pattern s (all draws of round t's histogram, in pattern order)."""
        C = np.bincount(codes, minlength=self._bins)  # [002-alg1 u2] C_s^t, the true suffix counts
        sigma2 = self.noise_variance()
        # [002-alg1 u3] C^_s^t = C_s^t + n_pad + N(0, (T-k+1)/(2 rho))  (default variance: see E-longitudinal-1)
        # The door noises the counts C_s^t (value-in, one batch call); adding the public n_pad is post-processing.
        sites = [site("002-alg1 u3", t=t, s=self._s_labels[s]) for s in range(self._bins)]
        noisy = self.noise.add_discrete_gaussian_many(sites, [int(c) for c in C], sigma2)
        return [c + self.n_pad for c in noisy]

    def _first_window(self, x: IntArray, t: int, new_suffix: IntArray, C_hat: list[int]) -> WindowRelease:
        """Round t = k: the first synthetic dataset, with C^_s^k records of each pattern s."""
        k, A = self.k, self.alphabet
        p = list(C_hat)  # [002-alg1 u5] p_s^t = C^_s^t for every s
        self._check_padding(t, p)
        # [002-alg1 u6] output any dataset D^k whose number of records with string s is C^_s^k:
        # records are laid out by s in increasing code order (a fixed, data-free choice).
        block_codes = np.repeat(np.arange(self._bins, dtype=np.int64), p)
        block = np.column_stack([(block_codes // A ** (k - 1 - j)) % A for j in range(k)]).astype(np.int64)
        release = WindowRelease(t, frozen(block), frozen(np.asarray(p)))
        self._commit_input(x, t, new_suffix)
        self._syn_suffix = frozen(block_codes % self._overlaps)
        self._columns = [frozen(block[:, j]) for j in range(k)]
        self.p_history.append(release.p)
        return release

    def _extend(self, x: IntArray, t: int, new_suffix: IntArray, column_t: IntArray, p: list[int]) -> WindowRelease:
        """Round t > k: commit the new synthetic column (records extended, never rewritten) and p^t."""
        assert self._syn_suffix is not None
        release = WindowRelease(t, frozen(column_t.reshape(-1, 1)), frozen(np.asarray(p)))
        self._commit_input(x, t, new_suffix)
        self._syn_suffix = frozen((self._syn_suffix * self.alphabet + column_t) % self._overlaps)
        self._columns.append(frozen(column_t))
        self.p_history.append(release.p)
        return release

    # -- helpers -------------------------------------------------------------------------------
    def _check_padding(self, t: int, p: list[int]) -> None:
        for s, value in enumerate(p):
            if value < 0:
                self.failure = PaddingExhaustedError(t, pattern_string(s, self.k, self.alphabet), value, self.n_pad)
                raise self.failure

    def _commit_input(self, x: IntArray, t: int, new_suffix: IntArray) -> None:
        if self.n is None:
            self.n = int(x.shape[0])
        self._true_suffix = new_suffix
        self.t = t
