"""Proof note — Unbounded block counter (003-alg4 = 000-alg4) is eps-DP; error growth t^{1/3}.

Claim
-----
``UnboundedBlockCounter(eps)`` is eps-DP (pure) under STREAM_ENTRY (003-thm8.1, 000-thm4.2),
as printed. No erratum; 003 and 000 print the same algorithm (line numbers differ).

Code (reference/dpstream/counters/unbounded_block.py, ``UnboundedBlockCounter._staging``)
------------------------------------------------------------------------------------------
``scale = 2.0 / self.epsilon``;
* ``[003-alg4 L11]`` ``delta = t - t_atPartition``; ``[003-alg4 L12]`` ``alpha_trueInBlock = s.alpha_trueInBlock + x``;
* ``[003-alg4 L13]`` ``if delta % B == 0``;
  ``[003-alg4 L14]`` ``alpha_lastBlock = alpha_lastBlock + alpha_trueInBlock + <draw at "003-alg4 L14 t=<t>", scale>``;
  ``[003-alg4 L15]`` both in-block sums reset; ``[003-alg4 L16]`` ``g = alpha_lastBlock``;
  ``[003-alg4 L17]``-``[003-alg4 L19]`` ``if delta == T``: ``t_atPartition = t``, ``B = B + 1``, ``T = B * B``;
* else ``[003-alg4 L21]`` ``alpha_synthInBlock = alpha_synthInBlock + x + <draw at "003-alg4 L21 t=<t>", scale>``;
  ``[003-alg4 L22]`` ``g = alpha_lastBlock + alpha_synthInBlock``.

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

Checks below: the schedule, the budget and the growth in sympy, then items 1-3 and Var(t_m) read from
``UnboundedBlockCounter`` (:func:`dpstream.testing.linear.measured_linear_model`).
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from dpstream.audit.counters.loss import stream_entry_epsilon
from dpstream.counters.unbounded_block import UnboundedBlockCounter
from dpstream.testing.linear import measured_linear_model


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


def test_unbounded_block_counter_is_the_mechanism_of_the_proof() -> None:
    """Read off UnboundedBlockCounter over T = 60: block-sum draws (L14) exactly at the printed schedule's block
    ends, in-block draws (L21) elsewhere, all Lap(2/eps); each statistic is a block sum or one input; an input in
    <= 2 statistics; releases an invertible (unit lower triangular) image; loss eps; Var(t_m) = 8 sum B / eps^2."""
    eps, T = sp.Rational(1, 2), 60
    ends = _schedule_ends(T)
    model = measured_linear_model(lambda n: UnboundedBlockCounter(float(eps), noise=n), T)
    assert model.sites == tuple(f"003-alg4 {'L14' if t in ends else 'L21'} t={t}" for t in range(1, T + 1))
    assert np.allclose([law.parameter for law in model.laws], float(2 / eps), rtol=1e-15, atol=0)
    S = np.rint(model.statistics).astype(int)
    assert np.allclose(model.statistics, S, atol=1e-9)
    starts = [0, *ends]
    for t in range(1, T + 1):  # item 1
        block = range(max(s for s in starts if s < t) + 1, t + 1) if t in ends else range(t, t + 1)
        assert list(np.flatnonzero(S[t - 1]) + 1) == list(block)
    assert S.sum(axis=0).max() == 2  # item 3
    W = model.combination
    assert np.allclose(W, np.tril(W), atol=1e-9) and np.allclose(np.diag(W), 1.0, atol=1e-9)  # item 2
    assert np.isclose(stream_entry_epsilon(model).value, float(eps), rtol=1e-12)
    m = sp.symbols("m", positive=True, integer=True)
    for mv in (1, 2, 3, 4):  # t_m = 4, 13, 29, 54 <= T
        t_m = int(sp.summation(sp.Symbol("b") ** 2, (sp.Symbol("b"), 2, m + 1)).subs(m, mv))
        blocks = (m + 1) * (m + 2) / 2 - 1
        assert np.isclose(model.error_variance()[t_m - 1], float(8 * blocks.subs(m, mv) / eps**2), rtol=1e-12)
