"""Proof note — Block counter (001-alg9) is eps-DP; its error law.

Claim
-----
``BlockCounter(eps, B)`` is eps-DP (pure) under STREAM_ENTRY (001-def4.1), for every block
size B >= 1, with Lap(2/eps) at both levels as printed (L7, L10). No erratum.

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
"""

from __future__ import annotations

import sympy as sp


def test_release_is_a_bijection_of_the_statistics() -> None:
    """Item 2: for B = 3, T = 10, W (unit lower triangular) times S gives the prefix sums."""
    B, T = 3, 10
    S = sp.zeros(T, T)
    for t in range(1, T + 1):
        if t % B == 0:
            for j in range(t - B + 1, t + 1):
                S[t - 1, j - 1] = 1
        else:
            S[t - 1, t - 1] = 1
    W = sp.zeros(T, T)
    for t in range(1, T + 1):
        for k in range(1, t // B + 1):
            W[t - 1, k * B - 1] = 1
        for j in range((t // B) * B + 1, t + 1):
            W[t - 1, j - 1] = 1
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
