"""Proof note — the efficient 004-alg1: lazy counters release what the line-by-line counters release, and the
first-failure form of 004-alg2's tests has the printed law.

Claim A (lazy = line by line, one tape)
---------------------------------------
Fed the same points and a tape keyed by the same sites, ``EfficientOnlineSyntheticData`` releases at every
sampled t what ``OnlineSyntheticData`` releases at t, and after ``catch_up()`` both have requested the same
sites with the same parameters.

Proof. A region's 004-alg3 instance is a deterministic function of its input stream and of the values at its
sites; every site is named by (region, level, segment, time) only: ``004-alg1 u6 theta=<bits> / 004-alg3 u3
r=<r>``, ``... / 004-alg3 u2 r=<r> / 004-alg2 u2 j=<j>``, ``... / 004-alg2 u3 j=<j> t=<u>`` and the Binary
Mechanism's ``... / 004-alg2 u8 / 001-alg10 L8 t=<k>``. So the order in which the instances are stepped does
not matter for a site-keyed tape, only the input each one sees at each time. ``LazyInhomogeneousCounter``
holds the state of ``InhomogeneousSparseCounter`` (S~, r, t_{r+1}, the level sum, the level's 004-alg2
instance) and performs the same transitions: the level change (``[004-alg3 u3]`` S~ update per ended level,
``[004-alg3 u1]``, ``[004-alg3 u2]`` a new instance with eps_r / 2 and horizon t_{r+1} - t_r) at the first
step at or after t_{r+1}, and one 004-alg2 step per global time: for the printed tests the printed step
itself (``SparseCounter``'s staged step), for the first-failure form ``GeometricSparseCounter.skip_zeros``, which
performs the transitions of k of its own staged steps with input 0 (one by one: threshold draw at the
first step, the run's first-failure draw at its first test, a segment end at the failing test, the next
segment reading 0). The efficient 004-alg1 feeds input 1 exactly to the regions containing x_t
(``[004-alg1 u6]``: 1{x_t in Omega_theta}; ``_input`` as printed for ``as_printed``) and, before any read of
a counter at time t (a step with input 1 at t, a release at t, ``catch_up``), the zeros of the times since
the counter's last step. Regions are created at the same times with the same r0, budgets and first times
(``_first_time``); for r0 = 0 the history's ones are replayed. Hence at a release every counter is in the
line-by-line state at t, the noisy counts agree, and 004-alg4 and the Output step (shared code,
``OnlineParameters._output``) agree. After ``catch_up()`` every counter has made its draws up to t, as in
the line-by-line run.

Claim B (first failure = printed tests, in law)
-----------------------------------------------
Given the threshold T~_j and the counts, the printed tests are independent: the test of time u passes iff
N_u + lambda'_u <= T~_j, i.e. lambda'_u <= c_u = floor(T~_j) - N_u, with probability P(c_u) = P(Lap_Z(b) <= c_u).
Within a run of times where N does not change (inputs 0) the outcomes are i.i.d. Bernoulli(P); the releases
depend on the tests only through the first failure (it ends the segment; later tests of the run are not made).
The first failure F among the H remaining tests has P(F = i) = P^i (1 - P) (0 <= i < H) and P(no failure)
= P^H. ``first_failure`` draws "some failure" with probability 1 - P^H, then bisects [lo, hi) with
P(F < mid | lo <= F < hi) = (1 - P^(mid-lo)) / (1 - P^(hi-lo)) (memoryless); the product along the path to i
telescopes to P^i (1 - P) / (1 - P^H) (checked below in sympy). Each Bernoulli event is {Z != 0} for one
Z ~ Lap_Z(s): P(Z != 0) = 2p/(1+p), and p = q/(2 - q) gives q (sympy below). When an input 1 changes the
count before the drawn failure, the rest of the draw is dropped and a new run is drawn for the new count: the
tests after the change are independent of those before, so the joint law of all test outcomes is unchanged.
So the segment ends, hence A_sub's inputs and every release, have the printed law (up to floating-point
rounding of the Bernoulli probabilities), and the privacy claim of 004-alg2 (proofs/proof_sparse_counting.py,
004-lem3.2) carries over: it is a property of the law of the releases.

Checks below: the Bernoulli identity and the bisection telescoping in sympy; ``first_failure`` called on
an enumerating noise source reproduces the truncated geometric law; a lazy 004-alg3 replays a line-by-line
tape (every site used) and the reverse.
"""

from __future__ import annotations

import math
from typing import Any

import sympy as sp

from dpstream.counters.sparse import InhomogeneousSparseCounter
from dpstream.counters.sparse_geometric import GeometricSparseCounter, first_failure
from dpstream.counters.sparse_lazy import LazyInhomogeneousCounter
from dpstream.insecure import InsecureSeededNoise, TapeRecorder, TapeReplay
from dpstream.noise import BaseNoiseSource, DrawKind, Params


def test_bernoulli_identity() -> None:
    """P(Z != 0) = 2p/(1+p) for Z ~ Lap_Z(s), p = exp(-1/s) (004-sec2.4 pmf); p = q/(2-q) gives q."""
    p, q = sp.symbols("p q", positive=True)
    pmf0 = (1 - p) / (1 + p)  # (1-p)/(1+p) p^|0|
    assert sp.simplify(1 - pmf0 - 2 * p / (1 + p)) == 0
    assert sp.simplify((2 * p / (1 + p)).subs(p, q / (2 - q)) - q) == 0


def _bisection_law(H: int, P: sp.Expr) -> dict[int, sp.Expr]:
    """P(F = i | some failure among H) as the product of the bisection steps of ``first_failure``."""
    out: dict[int, sp.Expr] = {}

    def walk(lo: int, hi: int, prob: sp.Expr) -> None:
        if hi - lo == 1:
            out[lo] = prob
            return
        mid = (lo + hi) // 2
        left = (1 - P ** (mid - lo)) / (1 - P ** (hi - lo))
        walk(lo, mid, prob * left)
        walk(mid, hi, prob * (1 - left))

    walk(0, H, sp.Integer(1))
    return out


def test_bisection_telescopes_to_the_truncated_geometric() -> None:
    P = sp.symbols("P", positive=True)
    for H in range(1, 10):
        for i, prob in _bisection_law(H, P).items():
            assert sp.simplify(prob - P**i * (1 - P) / (1 - P**H)) == 0, (H, i)


class _Enumerate(BaseNoiseSource):
    """Z = 0 / 1 from a script; raises _Branch with the scale when the script runs out."""

    def __init__(self, script: list[int]) -> None:
        self.script, self.used = script, 0

    def _draw(self, site: str, kind: DrawKind, params: Params) -> Any:
        if self.used == len(self.script):
            raise _BranchError(params["scale"])
        self.used += 1
        return self.script[self.used - 1]


class _BranchError(Exception):
    def __init__(self, scale: float) -> None:
        super().__init__(scale)
        self.scale = scale


def test_first_failure_draws_the_truncated_geometric() -> None:
    pass_prob, H = 0.8, 6
    law: dict[int | None, float] = {}
    stack: list[tuple[list[int], float]] = [([], 1.0)]
    while stack:
        script, prob = stack.pop()
        try:
            value = first_failure(_Enumerate(script), 1, 0, H, math.log(pass_prob), math.log1p(-pass_prob))
            law[value] = law.get(value, 0.0) + prob
        except _BranchError as branch:
            p = math.exp(-1.0 / branch.scale)
            nonzero = 2.0 * p / (1.0 + p)
            stack += [([*script, 0], prob * (1.0 - nonzero)), ([*script, 1], prob * nonzero)]
    assert math.isclose(law[None], pass_prob**H, rel_tol=1e-12)
    for i in range(H):
        assert math.isclose(law[i], pass_prob**i * (1 - pass_prob), rel_tol=1e-12)


def test_lazy_counter_replays_the_line_by_line_tape() -> None:
    x = [1 if i % 7 in (0, 3) else 0 for i in range(80)]
    for sparse in (None, lambda eps, T, n: GeometricSparseCounter(eps, T, noise=n)):
        recorder = TapeRecorder(InsecureSeededNoise(3))
        line = InhomogeneousSparseCounter(1.0, 1, lambda r: 2.0, noise=recorder, sparse=sparse)
        releases = [line.step(v) for v in x]
        replay = TapeReplay(recorder.tape)
        lazy = LazyInhomogeneousCounter(1.0, 1, lambda r: 2.0, noise=replay, sparse=sparse)
        for t, v in enumerate(x, start=1):
            if v:
                lazy.advance(t - 1)
                lazy.step(1)
            if t % 10 == 0:
                lazy.advance(t)
                assert lazy.value == releases[t - 1]
        lazy.advance(len(x))
        replay.assert_exhausted()  # every site of the line-by-line run was requested
