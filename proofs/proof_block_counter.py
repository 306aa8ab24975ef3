"""Proof note — Block counter (001-alg9) is eps-DP; its error law.

Claim
-----
``BlockCounter(eps, B)`` is eps-DP (pure) under STREAM_ENTRY (001-def4.1), for every block
size B >= 1, with Lap(2/eps) at both levels as printed (L7, L10). No erratum.

Code (reference/dpstream/counters/block.py, ``BlockCounter._staging``; ``scale = 2.0 / self.epsilon``)
----------------------------------------------------------------------------------------------------
* ``[001-alg9 L5]`` ``beta = beta + x``;
* ``[001-alg9 L6]`` ``if t % self.B == 0``;
* ``[001-alg9 L7]`` ``alpha, beta = 0.0, beta + <draw at "001-alg9 L7 t=<t>", scale>``;
* ``[001-alg9 L8]`` ``beta_lastblock = beta``;
* ``[001-alg9 L10]`` ``alpha = alpha + x + <draw at "001-alg9 L10 t=<t>", scale>``;
* ``[001-alg9 L12]`` ``g = beta_lastblock + alpha``.

Proof in the paper's terms
--------------------------
1. Statistics. L5 accumulates the true sum in beta; at t = kB, L7 adds one Lap(2/eps) to beta,
   so beta_lastblock(kB) = sum_{t <= kB} f(t) + sum_{k' <= k} z^blk_{k'}: the new statistic
   at kB is the block sum s^blk_k = sum_{((k-1)B, kB]} f + z^blk_k. At every other t, L10 adds
   s^in_t = f(t) + z^in_t to alpha. One statistic per time step. (The implementation keeps the
   block's true sum in beta and hands exactly it to the noise door, value-in; beta_lastblock adds
   up the noisy block sums, i.e. the printed beta's running total: docs/errata/noise.md.)
2. Releases. L12: g(t) = beta_lastblock + alpha = sum_{k' <= floor(t/B)} s^blk_{k'} +
   sum_{floor(t/B) B < j <= t} s^in_j. Each g(t) contains the statistic of time t with
   coefficient 1 and otherwise statistics of earlier times: unit lower triangular, invertible.
3. Sensitivity. f(tau) enters s^blk_{ceil(tau/B)} and, if tau is not a multiple of B, s^in_tau:
   at most 2 statistics, each with coefficient 1. Loss <= 2 * 1/(2/eps) = eps. (For tau = kB,
   and for all tau when B = 1, only 1 statistic: eps/2.)
4. t = kB. g(kB) = beta_lastblock(kB): the in-block statistics of that block are dropped from
   then on (they were released at their own times and paid for in item 3); nothing is drawn at
   L10 for t = kB. No discrepancy with the claim.

Error law: g(t) - S(t) = floor(t/B) block noises + (t mod B) in-block noises,
Var = 8 (floor(t/B) + t mod B)/eps^2. Over a horizon T the worst variance is about
8 (T/B + B)/eps^2, minimised at B = sqrt(T) (001 App. D): error O(T^{1/4}).

Checks below: items 2-3 and the variance in sympy, then items 1-4 read from ``BlockCounter``
(:func:`dpstream.testing.linear.measured_linear_model`: its draws, the statistic each draw is added to,
the statistics each release sums).
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from dpstream.audit.counters.loss import stream_entry_epsilon
from dpstream.convention import with_noise
from dpstream.counters.block import BlockCounter
from dpstream.testing.linear import measured_linear_model


def _statistics(B: int, T: int) -> sp.Matrix:
    """Item 1: the statistic of time t is the block sum over ((k-1)B, kB] at t = kB, else f(t)."""
    S = sp.zeros(T, T)
    for t in range(1, T + 1):
        for j in (range(t - B + 1, t + 1) if t % B == 0 else [t]):
            S[t - 1, j - 1] = 1
    return S


def _releases(B: int, T: int) -> sp.Matrix:
    """Item 2: g(t) = the block statistics up to floor(t/B) B + the in-block statistics after it."""
    W = sp.zeros(T, T)
    for t in range(1, T + 1):
        for k in range(1, t // B + 1):
            W[t - 1, k * B - 1] = 1
        for j in range((t // B) * B + 1, t + 1):
            W[t - 1, j - 1] = 1
    return W


def test_release_is_a_bijection_of_the_statistics() -> None:
    """Item 2: for B = 3, T = 10, W (unit lower triangular) times S gives the prefix sums."""
    B, T = 3, 10
    S, W = _statistics(B, T), _releases(B, T)
    assert W.is_lower and W.det() == 1
    assert sp.Matrix(T, T, lambda i, j: 1 if j <= i else 0) == W * S


def test_two_statistics_per_input_cost_eps() -> None:
    """Item 3: each input in <= 2 statistics of scale 2/eps -> eps; column sums of |S| <= 2."""
    eps = sp.symbols("epsilon", positive=True)
    assert sp.simplify(2 * 1 / (2 / eps) - eps) == 0
    assert sp.simplify(1 * 1 / (2 / eps) - eps / 2) == 0  # tau = kB, or B = 1
    for B in (1, 2, 3, 8):
        T = 4 * B + 1
        counts = [0] * (T + 1)
        for t in range(1, T + 1):
            members = range(t - B + 1, t + 1) if t % B == 0 else [t]
            for j in members:
                counts[j] += 1
        assert max(counts[1:]) == (1 if B == 1 else 2)


def test_variance_and_optimal_block_size() -> None:
    """Var(t) = floor(t/B) * 2 (2/eps)^2 + (t mod B) * 2 (2/eps)^2; d/dB (T/B + B) = 0 at B = sqrt(T)."""
    eps = sp.symbols("epsilon", positive=True)
    lap_var = 2 * (2 / eps) ** 2
    for B in (2, 5):
        for t in (1, B, B + 1, 3 * B - 1):
            assert sp.simplify((t // B) * lap_var + (t % B) * lap_var - 8 * (t // B + t % B) / eps**2) == 0
    Tsym, Bsym = sp.symbols("T B", positive=True)
    assert sp.solve(sp.diff(Tsym / Bsym + Bsym, Bsym), Bsym) == [sp.sqrt(Tsym)]


def test_block_counter_is_the_mechanism_of_the_proof() -> None:
    """Read off BlockCounter: draws at L7 (t = kB) and L10 (otherwise), all of scale 2/eps; the statistics and
    releases of items 1-2; an input in <= 2 statistics (1 if B = 1); loss eps (eps/2 if B = 1); the variance."""
    eps = sp.Rational(4, 5)
    for B in (1, 2, 3, 5):
        T = 3 * B + 2
        model = measured_linear_model(with_noise(BlockCounter, float(eps), B), T)
        assert model.sites == tuple(f"001-alg9 {'L7' if t % B == 0 else 'L10'} t={t}" for t in range(1, T + 1))
        assert np.allclose([law.parameter for law in model.laws], float(2 / eps), rtol=1e-15, atol=0)
        assert np.allclose(model.statistics, np.array(_statistics(B, T), dtype=float), atol=1e-9)
        assert np.allclose(model.combination, np.array(_releases(B, T), dtype=float), atol=1e-9)
        most = int(np.rint(np.abs(model.statistics).sum(axis=0).max()))
        assert most == (1 if B == 1 else 2)
        assert np.isclose(stream_entry_epsilon(model).value, float(most / (2 / eps)), rtol=1e-12)
        variance = [8 * (t // B + t % B) / eps**2 for t in range(1, T + 1)]
        assert np.allclose(model.error_variance(), [float(v) for v in variance], rtol=1e-12)
