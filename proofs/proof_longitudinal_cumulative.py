"""Proof note — cumulative time synthesizer (002-alg2): Theorem 4.1, Lemma 4.2, Corollary B.1.

Theorem 4.1 (privacy), per neighbour relation
---------------------------------------------
The release is a function of the T counters' outputs S~_b (b = 1..T) and of data-free record
choices. Counter b reads z_b^t = #{i : weight b-1 after t-1 rounds, x_i^t = 1}; an individual
enters z_b at most once (when its weight reaches b).

* One individual added or removed: each counter's stream changes in at most one entry by 1
  (a STREAM_ENTRY neighbour), counter b is rho_b-zCDP for that, and composition (002-thm2.1)
  gives sum_b rho_b = rho. But the algorithm outputs exactly n synthetic records: neighbours
  with n and n+1 individuals have disjoint output supports, so Algorithm 2 is **not**
  differentially private under add/remove at all (n is public only in the substitution model).
* One individual's sequence substituted (the paper's relation): counter b's stream loses 1 at
  the time the old sequence reaches b and gains 1 when the new one does: two entries, opposite
  signs. For a counter that adds independent N_Z noise to non-negative linear statistics S z
  (tree aggregation), with u = S e_tau, v = S e_tau' >= 0 entrywise,
  ||u - v||^2 = ||u||^2 + ||v||^2 - 2 u.v <= ||u||^2 + ||v||^2 <= 2 max(||u||^2, ||v||^2),
  so the substitution costs at most twice the single-change cost: 2 rho_b per counter and 2 rho
  in total for the printed budgets. dpstream's default hands counter b rho_b / 2 (a factor 4, zCDP
  group privacy for two changes, for counters without that structure). Erratum E-longitudinal-7;
  exact values on concrete pairs: tests/longitudinal/test_privacy.py and the audits.

Code (reference/dpstream/longitudinal/cumulative.py, ``CumulativeSynthesizer``)
------------------------------------------------------------------------------
* ``self.counter_rho = rho_b / self.substitution_factor`` (2 for the default tree counter; ``as_printed``: rho_b),
  rho_b = ``rho_b_allocation(T, rho)`` (Corollary B.1);
* ``[002-alg2 u4]`` ``z_b = int(reach[b - 1])``; ``[002-alg2 u5]`` M_b = ``TreeAggregationCounter(counter_rho[b-1],
  T - b + 1, scoped(noise, "002-alg2 u5 b=<b>"))`` stepped on z_b (its draws at ``"... / 002-alg3 u8 t=<t>"``);
* ``[002-alg2 u6]`` ``monotonize``; ``[002-alg2 u8]`` record choices (post-processing).

Lemma 4.2 (monotonization does not increase the l_inf error)
------------------------------------------------------------
Claim 4.3: A <= B and D <= C imply |B - C| <= max(|A - C|, |B - D|) (checked below by cases).
If S^_b^t = S~_b^t there is nothing to show. If S^_b^t = S^_b^{t-1} > S~_b^t: Claim 4.3 with
A = S~_b^t, B = S^_b^t, C = S_b^t, D = S_b^{t-1} (true counts are monotone). If
S^_b^t = S^_{b-1}^{t-1} < S~_b^t: Claim 4.3 on the negatives with D = S_{b-1}^{t-1} >= S_b^t
(a weight can grow by at most one per round). The printed b = 0 case (eq (11)) refers to
S^_{-1}; with S^_0^t = n = S_0^t and S^_b^{b-1} = 0 = S_b^{b-1} exact, induction gives
max_{b,t} |S^ - S| <= max_{b,t} |S~ - S| (property_tests check it for arbitrary S~).

Corollary B.1 (accuracy) and the rho_b allocation
-------------------------------------------------
With L_b = max(ceil(log2(T-b+1)), 1), rho_b = rho L_b^3 / sum_b' L_b'^3 sums to rho and equalises
L_b^3 / rho_b. Appendix B assumes node variance sigma_b^2 = L_b/(2 rho_b) and at most L_b nodes
in a sum, giving |S~ - S| <= sqrt(L_b^3 log(1/beta) / rho_b) = sqrt(sum L^3 log(1/beta) / rho) for
every b (checked below). Two gaps (E-longitudinal-10): the text announces a union bound over t but
keeps log(1/beta) (and the Gaussian tail is one-sided); and the foundation's tree counter (like
002-alg3 read correctly) needs floor(log2 T_b) + 1 > ceil(log2 T_b) levels when T_b is a power of
two, so its sigma_b^2 is larger than the corollary assumes. The per-pair failure probability is
exp(-L_b^2 log(1/beta) / P) <= beta (P <= L_b noise terms), so summing over the T(T+1)/2 pairs is
what a union bound gives; dpstream also states a corrected explicit bound
(``bounds.cumulative_union_bound``) with the counter's actual variance and a two-sided tail.

Checks below: the allocation, the composition per relation, Claim 4.3 and Lemma 4.2, Corollary B.1; and
a recorded run of ``CumulativeSynthesizer``: counter b's node variance on the tape gives a single-change
cost k_b/(2 sigma_b^2) = rho_b/2 (k_b = floor(log2 T_b) + 1 nodes per input), a substitution at most twice
that, and the sum over b is rho = the claim (2 rho as printed).
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import sympy as sp

from dpstream.insecure import InsecureSeededNoise, TapeRecorder
from dpstream.longitudinal.bounds import corollary_b1_alpha, levels, rho_b_allocation
from dpstream.longitudinal.cumulative import CumulativeSynthesizer
from dpstream.longitudinal.generators import random_matrix
from dpstream.noise import DrawKind


def _L(T: int, b: int) -> int:
    return max(math.ceil(math.log2(T - b + 1)), 1) if T - b + 1 > 1 else 1


def test_rho_b_allocation_sums_to_rho() -> None:
    """sum_b rho_b = rho exactly (rational arithmetic) and rho_b / L_b^3 is constant, for T = 1..64."""
    for T in range(1, 65):
        cubes = [Fraction(_L(T, b) ** 3) for b in range(1, T + 1)]
        rho = Fraction(1, 200)
        alloc = [rho * c / sum(cubes) for c in cubes]
        assert sum(alloc) == rho
        assert len({a / c for a, c in zip(alloc, cubes, strict=True)}) == 1
        assert math.isclose(sum(rho_b_allocation(T, 0.005)), 0.005, rel_tol=1e-12)
        assert [levels(T - b + 1) for b in range(1, T + 1)] == [_L(T, b) for b in range(1, T + 1)]
    # symbolically: sum_b rho * c_b / sum_b' c_b' = rho for any positive weights
    c = sp.symbols("c1:6", positive=True)
    rho_s = sp.symbols("rho", positive=True)
    assert sp.simplify(sum(rho_s * ci / sum(c) for ci in c) - rho_s) == 0


def test_theorem_4_1_composition_per_relation() -> None:
    """Add/remove: sum rho_b = rho. Substitution: <= 2 rho_b per counter for non-negative statistics."""
    rho_b = sp.symbols("rho1:5", positive=True)
    assert sp.simplify(sum(rho_b) - sum(rho_b)) == 0
    u = sp.symbols("u1:5", nonnegative=True)
    v = sp.symbols("v1:5", nonnegative=True)
    gap = sum(ui**2 for ui in u) + sum(vi**2 for vi in v) - sum((ui - vi) ** 2 for ui, vi in zip(u, v, strict=True))
    assert sp.expand(gap - 2 * sum(ui * vi for ui, vi in zip(u, v, strict=True))) == 0  # = 2 u.v >= 0
    # dpstream's default: counters get rho_b / 2, a substitution costs <= 2 * rho_b / 2 = rho_b
    half = [r / 2 for r in rho_b]
    assert sp.simplify(sum(2 * h for h in half) - sum(rho_b)) == 0


def test_claim_4_3_by_cases() -> None:
    """A <= B, D <= C  =>  |B - C| <= max(|A - C|, |B - D|): symbolic cases and an exhaustive integer grid."""
    A, B, C, D = sp.symbols("A B C D", real=True)
    # case B <= C: |B - C| = C - B <= C - A = |A - C| since A <= B
    assert sp.simplify((C - A) - (C - B) - (B - A)) == 0
    # case C <= B: |B - C| = B - C <= B - D = |B - D| since D <= C
    assert sp.simplify((B - D) - (B - C) - (C - D)) == 0
    for a, b, c, d in itertools.product(range(-3, 4), repeat=4):
        if a <= b and d <= c:
            assert abs(b - c) <= max(abs(a - c), abs(b - d))


def test_lemma_4_2_instantiations() -> None:
    """Both clamp cases of Lemma 4.2 reduce to Claim 4.3 (exhaustive over small integer configurations)."""
    rng = range(-2, 5)
    for S_tilde, hat_prev, hat_up, S_prev, S_now, S_up in itertools.product(rng, repeat=6):
        if not (S_prev <= S_now <= S_up and hat_prev <= hat_up):
            continue
        hat = min(max(S_tilde, hat_prev), hat_up)
        assert abs(hat - S_now) <= max(abs(S_tilde - S_now), abs(hat_prev - S_prev), abs(hat_up - S_up))


def test_corollary_b1_equalisation() -> None:
    """sigma_b^2 = L_b/(2 rho_b): max_t L_t sqrt(L_b log(1/beta)/rho_b) = sqrt(sum L^3 log(1/beta)/rho) for every b."""
    T, rho, beta, n = 12, 0.005, 0.01, 25000
    alloc = rho_b_allocation(T, rho)
    total = sum(_L(T, b) ** 3 for b in range(1, T + 1))
    for b in range(1, T + 1):
        per_counter = _L(T, b) * math.sqrt(_L(T, b) / alloc[b - 1] * math.log(1 / beta))
        assert math.isclose(per_counter, math.sqrt(total / rho * math.log(1 / beta)), rel_tol=1e-12)
    alpha, beta_star = corollary_b1_alpha(T, rho, beta, n)
    assert math.isclose(alpha * n, math.sqrt(total / rho * math.log(1 / beta)), rel_tol=1e-12)
    assert beta_star == T * beta


def test_tree_levels_exceed_appendix_b_when_power_of_two() -> None:
    """An entry of a tree over T_b steps enters floor(log2 T_b) + 1 nodes; Appendix B uses ceil(log2 T_b)."""
    for Tb in range(1, 65):
        nodes = Tb.bit_length()
        assert nodes >= levels(Tb)
        assert (nodes > levels(Tb)) == (Tb > 1 and Tb & (Tb - 1) == 0)


def test_recorded_run_spends_rho() -> None:
    """CumulativeSynthesizer(T = 8, rho = 1/10): counter b draws N_Z nodes of one variance sigma_b^2 at
    "002-alg2 u5 b=<b> / 002-alg3 u8"; k_b/(2 sigma_b^2) with k_b = floor(log2(T - b + 1)) + 1 is rho_b / 2 for the
    Corollary B.1 allocation; a substitution costs <= 2 k_b/(2 sigma_b^2); summed over b: rho (2 rho as printed)."""
    T, rho = 8, 0.1
    alloc = rho_b_allocation(T, rho)
    for as_printed, total in ((False, rho), (True, 2 * rho)):
        recorder = TapeRecorder(InsecureSeededNoise(3))
        synth = CumulativeSynthesizer(T, rho, noise=recorder, as_printed=as_printed)
        synth.run(random_matrix(30, T, seed=4))
        substitution = 0.0
        for b in range(1, T + 1):
            draws = [d for d in recorder.tape if d.site.startswith(f"002-alg2 u5 b={b} / 002-alg3 u8 ")]
            assert len(draws) == T - b + 1 and all(d.kind is DrawKind.DISCRETE_GAUSSIAN for d in draws)
            (sigma2,) = {d.params["sigma2"] for d in draws}
            single = (T - b + 1).bit_length() / (2 * sigma2)
            assert math.isclose(single, alloc[b - 1] * (1 if as_printed else 0.5), rel_tol=1e-12)
            substitution += 2 * single
        assert math.isclose(substitution, total, rel_tol=1e-12)
        assert math.isclose(synth.claim.parameter, total, rel_tol=1e-12)
