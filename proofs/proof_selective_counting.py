"""Proof note — Theorem 4.2 (online selective counting, 001-alg4) and Algorithm 3 as an instance.

Claim (001-thm4.2)
------------------
If every counter C_l is eps_C-DP (for its own input stream f|J_l) and the selector M is eps_M-DP,
Algorithm 4 is (eps_M + eps_C)-DP.

What M may see. The proof's first step ("the inputs agree before tau, so the laws agree") and its
last step ("for t > tau the inputs are identical") need M at time t to depend on the input only
through f(t) -- with the whole prefix f|[t] (as the Appendix E proof writes M(f|[tau], g|[tau-1]))
the change at tau would be visible to M at every t >= tau. It may depend on the whole output
history g|[t-1] (the text allows it; Algorithm 3 needs it, since G(., t-1) sums all past
releases), while L5 prints only g(t-1) (E-phdstream-7). dpstream's default: M(f(t), g|[t-1]).

Code (reference/dpstream/selective_counting.py, ``SelectiveCounting.stage_run``)
------------------------------------------------------------------------------------------
* ``[001-alg4 L5]`` ``l_t = self.selector.select(t, x, tuple(history))``, history = every earlier release
  (as printed: the last one only);
* ``[001-alg4 L7]`` only ``self.counter(l_t)`` is stepped, on ``x`` (or ``counter_input(x, l_t)``);
* ``[001-alg4 L6]`` ``self.J.setdefault(release.l, []).append(release.t)``;
* ``claim``: ``compose_selective_claim`` = selector parameter + counter parameter.

The density argument (replacing the step-by-step one of Appendix E)
-------------------------------------------------------------------
Fix an output transcript o = ((l_1, m_1), ..., (l_T, m_T)). Its density under f factorises:

    p(o | f) = prod_t p_M(l_t | f(t), o_<t)  *  prod_l p_{C_l}(m|J_l  | f|J_l),

because C_l is stepped exactly at the times J_l = {t : l_t = l} fixed by o, and a streaming counter's
outputs at its activation times have the joint density of its own run on f|J_l. A neighbour f' differs
at one time tau. The M-factors differ only at t = tau: ratio <= e^{eps_M}. The counter factors
differ only for l = l_tau (no other counter sees f(tau)), and there the *whole* output sequence of
C_{l_tau} is compared, so counters with memory (the Block counter re-releases f(tau) at the end of
its block) are covered: ratio <= e^{eps_C}. Hence p(o | f) <= e^{eps_M + eps_C} p(o | f').
(Appendix E's final step "at t > tau the inputs are identical" skips the counter's later outputs,
which still depend on f(tau); the factorisation above covers them.)

Algorithm 3 as an instance (section 4.5, dpstream.phdstream.counters_tree)
--------------------------------------------------------------------------
l_t = T(t) from PrivTree on G(., t-1) + nabla F(., t) (eps_M = eps/2, only f(t) = nabla F(., t) and the
history are read). The counter of index S is the multi-dimensional counter of the leaf counters
{C_v : v in L(S)}; the views for different S share the per-vertex counters C_v. The factorisation
holds per vertex counter instead of per view: C_v is stepped at N_v = {t : v in L(T(t))}, and a neighbour
changes nabla F(v, tau) by 1 for exactly one leaf v of T(tau). So the product over the vertex counters
changes by at most e^{eps/2}, and Algorithm 3 is eps-DP -- given that M is eps/2-DP on its inputs,
which needs the PrivTree scale of E-phdstream-3 (proofs/proof_phdstream.py).

The checks below verify the factorisation numerically on a two-counter example with Laplace
selector and Simple counters (exact densities, a grid of outputs), and the selector's own bound; then
that ``SelectiveCounting`` is the algorithm the factorisation describes: M sees f(t) and the history only,
each input is fed to exactly the selected counter (its draws on the tape), J_l are the activation times,
and the claim is eps_M + eps_C.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from functools import partial
from typing import Any

import sympy as sp

from dpstream.claims import Neighbour, PrivacyClaim
from dpstream.counters.simple import SimpleCounter
from dpstream.insecure import InsecureSeededNoise, TapeRecorder
from dpstream.noise import NoiseSource, scoped
from dpstream.phdstream import HypercubePartition
from dpstream.phdstream.privtree import Subtree
from dpstream.selective_counting import SelectiveCounting, SelectiveRelease


def _laplace_logpdf(z: float, b: float) -> float:
    return -abs(z) / b - math.log(2 * b)


def _log_density(f: list[float], outputs: list[tuple[int, float]], eps_m: float, eps_c: float) -> float:
    """Exact log density of a transcript of Algorithm 4 with k = 2 counters.

    M: l_t = 1 iff f(t) + Lap(1/eps_M) > 0.5 (a threshold test, eps_M-DP for |f - f'| <= 1 at one t);
    C_l: Simple counters, output m_t = m_{prev} + f(t) + Lap(1/eps_C) (running sums per counter).
    """
    total = 0.0
    last = {0: 0.0, 1: 0.0}
    b_m = 1.0 / eps_m
    for ft, (l, m) in zip(f, outputs, strict=True):
        p_one = 0.5 * math.exp(-(0.5 - ft) / b_m) if ft <= 0.5 else 1 - 0.5 * math.exp(-(ft - 0.5) / b_m)
        total += math.log(p_one if l == 1 else 1 - p_one)
        total += _laplace_logpdf(m - last[l] - ft, 1.0 / eps_c)
        last[l] = m
    return total


def test_factorised_density_respects_eps_m_plus_eps_c() -> None:
    eps_m, eps_c = 0.4, 0.7
    f = [1.0, 0.0, 2.0, 1.0]
    worst = 0.0
    grid = [-2.0, -0.5, 0.0, 0.7, 1.5, 3.0]
    for tau in range(len(f)):
        f2 = list(f)
        f2[tau] += 1.0
        for ls in itertools.product((0, 1), repeat=len(f)):
            for ms in itertools.product(grid, repeat=2):
                outputs = []
                running = {0: 0.0, 1: 0.0}
                for t, l in enumerate(ls):
                    running[l] += f[t] + (ms[t % 2] if t in (tau, tau + 1) else 0.3)
                    outputs.append((l, running[l]))
                d = _log_density(f, outputs, eps_m, eps_c) - _log_density(f2, outputs, eps_m, eps_c)
                worst = max(worst, abs(d))
    assert worst <= eps_m + eps_c + 1e-12
    assert worst > eps_c  # the bound is not vacuous: both parts contribute


def test_threshold_selector_is_eps_m_dp() -> None:
    """The selector of the check above (and each PrivTree split decision): l = 1 iff x + Lap(b) > c.

    In the upper tail (x + 1 <= c) moving x by 1 multiplies P[l = 1] by exactly e^{1/b} (sympy); everywhere
    the log-ratio of P[l = 1] and of P[l = 0] stays within 1/b (exact tails on a grid across both branches).
    This is the per-decision loss that E-phdstream-3 adds up along a path.
    """
    x, c = sp.symbols("x c", real=True)
    b = sp.symbols("b", positive=True)
    upper = sp.Rational(1, 2) * sp.exp(-(c - x) / b)       # P[x + Lap(b) > c] for x <= c
    assert sp.simplify(sp.log(upper.subs(x, x + 1) / upper) - 1 / b) == 0

    def log_tail(a: float, scale: float) -> float:  # log P[Lap(scale) > a], without cancellation
        return -a / scale - math.log(2.0) if a >= 0 else math.log1p(-0.5 * math.exp(a / scale))

    for scale in (0.5, 1.0, 2.5):
        worst = 0.0
        for i in range(-400, 401):
            v = i / 40.0  # P[l = 1] = P[Lap > 0.5 - v], P[l = 0] = P[Lap > v - 0.5]
            worst = max(worst, abs(log_tail(0.5 - v - 1.0, scale) - log_tail(0.5 - v, scale)),
                        abs(log_tail(v + 1.0 - 0.5, scale) - log_tail(v - 0.5, scale)))
        assert worst <= 1.0 / scale + 1e-12
        assert abs(worst - 1.0 / scale) < 1e-9  # attained in the tails


def test_leaf_counters_one_vertex_changes() -> None:
    """In Algorithm 3, one point lies in exactly one leaf of T(tau): the l1 change of the leaf inputs is 1."""
    P = HypercubePartition(2, 3)
    S = Subtree.from_nodes(P, [(), (0,), (1,), (0, 0), (0, 1)])
    x = P.leaf_of([0.1, 0.7])  # leaf path of the point in T
    holding = [v for v in S.leaves if x[:len(v)] == v]
    assert holding == [(0, 1)]


class _ThresholdSelector:
    """M of the first check without its noise (l_t = 1 iff f(t) > 0.5); records what it is shown."""

    def __init__(self) -> None:
        self.seen: list[tuple[int, float, tuple[SelectiveRelease[Any], ...]]] = []

    @property
    def claim(self) -> PrivacyClaim:
        return PrivacyClaim.pure(0.4, Neighbour.STREAM_ENTRY, "threshold selector")

    def select(self, t: int, x: float, history: Sequence[SelectiveRelease[Any]]) -> int:
        self.seen.append((t, x, tuple(history)))
        return 1 if x > 0.5 else 0


def _scoped_simple(noise: NoiseSource, l: int) -> SimpleCounter:
    return SimpleCounter(0.7, noise=scoped(noise, f"C{l}"))


def test_selective_counting_is_the_factorised_algorithm() -> None:
    f = [1.0, 0.0, 2.0, 1.0, 0.0, 0.3]
    for as_printed in (False, True):
        recorder = TapeRecorder(InsecureSeededNoise(3))
        M = _ThresholdSelector()
        alg: SelectiveCounting[float, int] = SelectiveCounting(
            M, partial(_scoped_simple, recorder), PrivacyClaim.pure(0.7, Neighbour.STREAM_ENTRY, "simple"),
            as_printed=as_printed)
        releases = [alg.step(x) for x in f]
        for t, (seen_t, seen_x, history) in enumerate(M.seen, start=1):  # M(f(t), g|[t-1]) (printed: g(t-1))
            assert (seen_t, seen_x) == (t, f[t - 1])
            assert history == (tuple(releases[t - 2:t - 1]) if as_printed else tuple(releases[:t - 1]))
        assert alg.J == {1: [1, 3, 4], 0: [2, 5, 6]}
        for l, times in alg.J.items():  # C_l is stepped exactly at J_l, on f|J_l, one draw per step
            draws = [d for d in recorder.tape if d.site.startswith(f"C{l} / ")]
            assert [d.site for d in draws] == [f"C{l} / 001-alg8 L4 t={i}" for i in range(1, len(times) + 1)]
            running = 0.0
            for t, d in zip(times, draws, strict=True):
                running += f[t - 1] + d.value
                assert releases[t - 1].l == l and math.isclose(releases[t - 1].output, running, abs_tol=1e-12)
        assert math.isclose(alg.claim.parameter, 0.4 + 0.7, rel_tol=1e-15)
