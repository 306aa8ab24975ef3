"""Proof note — Theorem 3.2 (PHDStream, 001-alg1/alg2/alg3) under the EVENT relation.

Claim (001-thm3.2)
------------------
PHDStream is eps-DP for ||f - f'||_nabla = 1: one point added at one time tau (and never removed)
or one removal left out.

Argument (Appendix B, made precise)
-----------------------------------
1. Post-processing. g is obtained from G by rule (5) with randomness independent of the data,
   and G(., t-1) is a function of the earlier releases. So the transcript density factorises
   over time: p(o_1..o_T | f) = prod_t p(o_t | o_<t, nabla F(., t)).
2. Only step tau differs. For t != tau, nabla F(., t) = nabla F'(., t), and the factor of step t
   depends on the data only through nabla F(., t) (Algorithm 1: memoryless Laplace noise;
   Algorithm 3: see proofs/proof_selective_counting.py for counters with memory).
3. Step tau. PrivTree runs on I = G(., tau-1) + nabla F(., tau) vs I' = I + 1 on the point's
   root-to-leaf path; then the leaf of T(tau) that holds the point gets a count differing by 1
   under Lap(2/eps): loss <= eps/2.
4. The PrivTree part needs Theorem 3.1 for the input I. I is consistent but **not**
   path-monotone: G(., tau-1) carries Laplace noise (negative leaves, children larger than
   their parent) and nabla F(., tau) carries removals. proofs/proof_privtree.py: on such inputs
   the exact loss of PrivTree reaches D/lambda (D = max depth of T).

Code (reference/dpstream/phdstream/phdstream_tree.py, ``PHDStreamTree.stage``)
-------------------------------------------------------------------------------
* ``[001-alg1 L5]`` ``T_t = privtree(self.partition, inputs, eps / 2.0, self.theta, self.noise, t=t, lambda_rule=...)``
  with ``inputs = G(., t-1) + nabla F(., t)``: PrivTree at eps/2, lambda from ``privtree_scales(P, eps/2, rule)``;
* ``[001-alg1 L6]`` ``d = {v: dF.get(v, 0.0) + <draw at "001-alg1 L6 t=<t> v=<v>", scale 2.0 / eps> for v in
  T_t.leaves}``;
* ``[001-alg1 L7]`` ``G_new = G + consistent_extension(d)``: a function of the draws and of G(., t-1);
* the claim: ``phdstream_claim`` (``guarantees.py``), ``step_worst_case_loss`` = ``D / lambda + 1 / count_scale``.

So the step-tau loss is at most D/lambda + eps/2, and this is attained (a past transcript o_<tau
with such a G has positive density, and the output "path fully split" too;
tests/phdstream/test_exact_loss.py and the phdstream audits compute it exactly). Hence:

* default (``LambdaRule.GENERAL``): lambda = D/(eps/2) = 2D/eps, loss <= eps/2 + eps/2 = eps: the
  claim holds for every stream (E-phdstream-3);
* App. A scale for eps/2 (Algorithm 6 L3, the authors' code): lambda = (2b-1)/(b-1) * 2/eps,
  worst case eps/2 + D (b-1) eps / (2 (2b-1)) > eps iff D > (2b-1)/(b-1) (D >= 4 for b = 2);
* Algorithm 1 as printed (Algorithm 5 L3 at eps/2): lambda = (2b-1)/(b-1) * 4/eps, worst case
  eps/2 + D (b-1) eps / (4 (2b-1)) > eps iff D > 2 (2b-1)/(b-1) (D >= 7 for b = 2). The authors'
  experiments use D = 20.

Neighbour relation: the claim is for EVENT. A point that is added at t1 and removed at t2 is
two events (||f - f'||_nabla = 2), so it costs 2 eps (group privacy, 001 section 2.2); the paper's
Figure 1 runs "eps = 1 with sensitivity 2", i.e. eps = 0.5 per event (docs/phdstream.md).

Checks below: the worst cases in sympy; then the code: a recorded step of ``PHDStreamTree`` for every
rule and depths D = 1..7 (PrivTree draws of scale lambda, leaf draws of scale 2/eps, nothing else) gives,
through the proof's formula D/lambda + 1/count_scale with the *recorded* scales, the instance's claim and
the depth thresholds 4 (App. A scale) and 7 (as printed).
"""

from __future__ import annotations

import math

import sympy as sp

from dpstream.insecure import InsecureSeededNoise, TapeRecorder
from dpstream.phdstream.partition import HypercubePartition
from dpstream.phdstream.phdstream import PHDStream
from dpstream.phdstream.phdstream_tree import PHDStreamTree
from dpstream.phdstream.privtree import LambdaRule
from dpstream.phdstream.stream import PointEvents
from dpstream.phdstream.tree_function import tree_function

eps = sp.symbols("epsilon", positive=True)
beta = sp.symbols("beta", positive=True)
D = sp.symbols("D", positive=True, integer=True)


def worst_case(lam: sp.Expr, count_scale: sp.Expr) -> sp.Expr:
    """Exact sup of the step-tau loss over all inputs: D/lambda (PrivTree) + 1/count_scale (counts)."""
    return D / lam + 1 / count_scale


def test_default_meets_eps_exactly() -> None:
    assert sp.simplify(worst_case(2 * D / eps, 2 / eps) - eps) == 0


def test_app_a_scale_fails_beyond_depth_3() -> None:
    loss = worst_case((2 * beta - 1) / (beta - 1) * 2 / eps, 2 / eps)
    excess = sp.simplify(loss / eps - 1)
    assert sp.simplify(excess - (D * (beta - 1) / (2 * (2 * beta - 1)) - sp.Rational(1, 2))) == 0
    threshold = sp.solve(sp.Eq(excess.subs(beta, 2), 0), D)
    assert threshold == [3]
    assert next(d for d in range(1, 21) if excess.subs({beta: 2, D: d}) > 0) == 4
    assert sp.simplify(loss.subs({beta: 2, D: 20}) - eps * sp.Rational(23, 6)) == 0  # D = 20: 3.83 eps


def test_algorithm_1_as_printed_fails_beyond_depth_6() -> None:
    loss = worst_case((2 * beta - 1) / (beta - 1) * 4 / eps, 2 / eps)
    excess = sp.simplify(loss.subs(beta, 2) / eps - 1)
    assert next(d for d in range(1, 21) if excess.subs(D, d) > 0) == 7
    assert sp.simplify(loss.subs({beta: 2, D: 20}) - eps * sp.Rational(13, 6)) == 0  # D = 20: 2.17 eps


def test_composition_of_the_two_halves() -> None:
    """eps/2 (PrivTree) + eps/2 (Laplace with scale 2/eps and sensitivity 1) = eps."""
    tree, counts = eps / 2, 1 / (2 / eps)
    assert sp.simplify(tree + counts - eps) == 0


def test_group_privacy_of_an_insert_and_a_removal() -> None:
    """Two events: the density ratio is bounded by e^{eps} twice (section 2.2)."""
    assert sp.simplify(sp.exp(eps) * sp.exp(eps) - sp.exp(2 * eps)) == 0


def test_code_step_scales_give_the_claim_and_the_thresholds() -> None:
    """One recorded step of PHDStreamTree(HypercubePartition(1, D), eps = 1): PrivTree draws (001-alg5 L11) share
    one scale lambda, leaf draws (001-alg1 L6) scale 2/eps; worst_case(lambda, 2/eps) from these recorded scales
    equals the claim's parameter (max(eps, worst case)) and exceeds eps exactly from D = 4 (PROOF) / D = 7
    (PRINTED: Algorithm 1 as printed), never for GENERAL."""
    eps_v = 1.0
    first_failure: dict[LambdaRule, int] = {}
    for depth in range(1, 8):
        P = HypercubePartition(1, depth)
        nabla_F = tree_function(P, [[0.1], [0.12], [0.7]])
        for rule in LambdaRule:
            recorder = TapeRecorder(InsecureSeededNoise(depth))
            alg = PHDStreamTree(P, eps_v, 0.0, noise=recorder, lambda_rule=rule)
            alg.step(nabla_F)
            tree_scales = {d.params["scale"] for d in recorder.tape if d.site.startswith("001-alg5 L11 t=1 ")}
            count_scales = {d.params["scale"] for d in recorder.tape if d.site.startswith("001-alg1 L6 t=1 ")}
            assert len(tree_scales) == 1 and count_scales == {2.0 / eps_v}
            assert len(recorder.tape) == len(alg.releases[0].tree) + len(alg.releases[0].tree.leaves)
            loss = float(worst_case(sp.Float(tree_scales.pop()), sp.Float(count_scales.pop())).subs(D, depth))
            assert math.isclose(alg.claim.parameter, max(eps_v, loss), rel_tol=1e-12)
            if loss > eps_v * (1 + 1e-12):
                first_failure.setdefault(rule, depth)
    assert first_failure == {LambdaRule.PROOF: 4, LambdaRule.PRINTED: 7}


def test_algorithm_2_adds_only_post_processing_draws() -> None:
    """001-alg2 (PHDStream) around Algorithm 1: its own draws are rule (5)'s uniform_box points (post-processing,
    site 001-eq5), every privacy draw is Algorithm 1's (001-alg5 L11 and 001-alg1 L6), and its claim is
    Algorithm 1's: the guarantee of the tree passes to the synthetic points unchanged (post-processing)."""
    P = HypercubePartition(2, 3)
    recorder = TapeRecorder(InsecureSeededNoise(7))
    alg = PHDStream(P, 1.0, 0.0, noise=recorder)
    alg.step(PointEvents.of([[0.1, 0.2], [0.7, 0.8], [0.12, 0.22], [0.9, 0.1]]))
    kinds = {d.site.split(" t=")[0]: d.kind.value for d in recorder.tape}
    assert set(kinds) <= {"001-alg5 L11", "001-alg1 L6", "001-eq5"}
    assert kinds.get("001-eq5", "uniform_box") == "uniform_box"
    assert {k for k, v in kinds.items() if v == "laplace"} == {"001-alg5 L11", "001-alg1 L6"}
    tree = PHDStreamTree(P, 1.0, 0.0, noise=InsecureSeededNoise(7))
    assert alg.claim == tree.claim and alg.claim.parameter == 1.0
