"""Proof note — Unbounded block counter (003-alg4 = 000-alg4) is eps-DP; error growth t^{1/3}.

Claim
-----
``UnboundedBlockCounter(eps)`` is eps-DP (pure) under STREAM_ENTRY (003-thm8.1, 000-thm4.2),
as printed. No erratum; 003 and 000 print the same algorithm (line numbers differ).

Proof in the paper's terms
--------------------------
The schedule (T, B, t_atPartition) evolves by L17-L19 as a function of t alone (never of f):
partitions of B^2 steps with B = 2, 3, ..., split into B blocks of B steps. Given the
schedule, the algorithm is the block counter of 001-alg9 with a time-varying block size:
1. At a block end (delta = kB, L13) the block sum alpha_trueInBlock (L12, reset at L15) gets
   one Lap(2/eps) and is added to alpha_lastBlock (L14); elsewhere f(t) + Lap(2/eps) is added
   to alpha_synthInBlock (L21). One statistic per time step.
2. g(t) = alpha_lastBlock (L16) or alpha_lastBlock + alpha_synthInBlock (L22): each release
   contains the statistic of its own time with coefficient 1 and earlier statistics otherwise,
   so the releases are an invertible image of the statistics.
3. f(tau) enters its block sum and, unless tau ends a block, its in-block statistic: at most
   two Lap(2/eps) statistics with coefficient 1, loss <= eps. The 003-thm8.1 argument ("the
   change in block size is independent of the input") is right: the schedule is public.

Error growth (a finding; the papers state no accuracy for it): alpha_lastBlock never resets,
so after m partitions (t_m = sum_{B=2}^{m+1} B^2) the error has sum_{B=2}^{m+1} B block
noises: Var(t_m) = 8 (sum B)/eps^2 ~ 4 (3 t_m)^{2/3}/eps^2, i.e. standard deviation
~ t^{1/3}, not the t^{1/4} of a bounded block counter tuned with B = sqrt(T).
"""

from __future__ import annotations

import sympy as sp


def _schedule_ends(T: int) -> list[int]:
    """Block ends from the printed L11-L19 loop, run on the schedule variables only."""
    Tp, B, t_at, ends = 4, 2, 0, []
    for t in range(1, T + 1):
        delta = t - t_at
        if delta % B == 0:
            ends.append(t)
            if delta == Tp:
                t_at, B = t, B + 1
                Tp = B * B
    return ends


def test_schedule_is_input_independent_and_partitions_into_squares() -> None:
    ends = _schedule_ends(200)
    partition_ends = [sum(b * b for b in range(2, m + 2)) for m in range(1, 8)]  # 4, 13, 29, 54, ...
    assert partition_ends[:4] == [4, 13, 29, 54]
    assert all(p in ends for p in partition_ends if p <= 200)
    gaps = [b - a for a, b in zip([0, *ends], ends, strict=False)]
    assert gaps[:9] == [2, 2, 3, 3, 3, 4, 4, 4, 4]


def test_two_statistics_per_input_cost_eps() -> None:
    eps = sp.symbols("epsilon", positive=True)
    assert sp.simplify(2 / (2 / eps) - eps) == 0


def test_error_grows_like_t_to_one_third() -> None:
    """sum_{B=2}^{m+1} B^2 and sum B in closed form; Var(t_m) / t_m^{2/3} -> 4 * 3^{2/3} / eps^2."""
    m, b = sp.symbols("m b", positive=True, integer=True)
    eps = sp.symbols("epsilon", positive=True)
    t_m = sp.summation(b**2, (b, 2, m + 1))
    blocks = sp.summation(b, (b, 2, m + 1))
    assert sp.simplify(t_m - ((m + 1) * (m + 2) * (2 * m + 3) / 6 - 1)) == 0
    assert sp.simplify(blocks - ((m + 1) * (m + 2) / 2 - 1)) == 0
    var = 8 * blocks / eps**2
    assert sp.limit(var / t_m ** sp.Rational(2, 3), m, sp.oo) == 8 / eps**2 * sp.Rational(1, 2) * 3 ** sp.Rational(2, 3)
    assert sp.limit(var / t_m ** sp.Rational(1, 2), m, sp.oo) == sp.oo  # grows faster than sqrt(t)
