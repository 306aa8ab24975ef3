"""Proof note — Theorem 3.1 (PrivTree_T, 001-alg5): what the Appendix A proof shows, and for which inputs.

Claim (001-thm3.1, as printed)
------------------------------
PrivTree_T(F, eps, theta) is eps-DP in the ||.||_C(T) norm for any theta >= 0 and every F in C(T).

Notation. b(v) = max(F(v) - depth(v) delta, theta - delta) (L9-L10), each visited v draws
Lap(lambda) and is split iff b(v) + Lap(lambda) > theta. The output S is a subtree; its
probability is the product over the vertices of S that have children in T of
P[b(v) + Lap > theta] (v split) or P[b(v) + Lap <= theta] (v a leaf of S): a product of
Laplace tail probabilities (dpstream.audit.phdstream.loss.privtree_log_probability).

Code (reference/dpstream/phdstream/privtree.py, ``privtree``)
------------------------------------------------------------
* ``[001-alg5 L3]`` ``lam, delta = privtree_scales(partition, epsilon, lambda_rule)``: lam = ``(2 * beta - 1) /
  (beta - 1) * (2.0 / epsilon)`` (``PRINTED``), ``(2 * beta - 1) / ((beta - 1) * epsilon)`` (``PROOF``),
  ``max(partition.max_depth, 1) / epsilon`` (``GENERAL``, the default); ``delta = lam * math.log(beta)``;
* ``[001-alg5 L5]``-``[001-alg5 L7]`` breadth first from the root; ``[001-alg5 L9]`` ``b = F.get(v, 0.0) -
  partition.depth(v) * delta``; ``[001-alg5 L10]`` ``b = max(b, theta - delta)``;
* ``[001-alg5 L11]`` ``b_tilde = b + <draw at privtree_site(v, t), scale lam>``;
* ``[001-alg5 L12]``-``[001-alg5 L13]`` ``if b_tilde > theta: U.extend(partition.children(v))``.

Neighbours. One point added: F' = F + 1 on the path v_1 (root), ..., v_k of the point's
leaf, F' = F elsewhere (this is ||F - F'||_C(T) = 1 for integer changes: the C(T) norm counts
leaves, and consistency (6) carries the change up the path). b' - b lies in [0, 1] on the path.

Step 1 (per vertex). rho(x) = ln P[x + Lap > theta] / P[x - 1 + Lap > theta] (7) satisfies
rho(x) = 1/lambda for x <= theta, rho(x) <= 1/lambda always, and rho(x) <= rho^T(x) =
(1/lambda) e^{(theta + 1 - x)/lambda} for x >= theta + 1 (8). [checked below]
The leaf term P[x + Lap <= theta] / P[x + 1 + Lap <= theta] is <= e^{1/lambda} likewise.

Step 2 (along the path, App. A). Case 1 (F has the extra point): the leaf term is <= 0 and
the split terms are rho(b(v_i)). If F(v_i) <= F(v_{i-1}) -- F *path-monotone*, e.g. counts
of points, f >= 0 -- then b decreases by at least delta per level while unclamped, so all
split vertices but the last unclamped one have b >= theta + 1 + j delta and

    sum_i rho(b(v_i)) <= 1/lambda + (1/lambda) sum_{j>=0} e^{-j delta/lambda}
                      = (1/lambda) (2 e^{delta/lambda} - 1) / (e^{delta/lambda} - 1)
                      = (2 beta - 1) / ((beta - 1) lambda)          (delta = lambda ln beta).

[The printed chain writes the summand as e^{-delta/lambda} without the index; the geometric
series needs e^{-(i-1) delta/lambda}. Checked below.] Case 2: only the leaf term, <= 1/lambda.

Consequences (checked below, and by the exact-loss tests and audits):

* With the *printed* L3, lambda = (2b-1)/(b-1) * 2/eps, the bound is eps/2, not eps: the
  printed lambda is twice what the proof needs (E-phdstream-4). lambda = (2b-1)/((b-1) eps)
  (``LambdaRule.PROOF``) gives exactly eps.
* Step 2 needs F path-monotone. A consistent F may have F(child) > F(parent) (negative
  values elsewhere): then every split vertex of the path can sit in the regime b in
  [theta - delta + 1, theta - 1], where rho = 1/lambda exactly, and the loss of the output
  "the whole path split" is D/lambda (D = max depth): tests/phdstream/test_exact_loss.py
  constructs such F and the exact dynamic programme returns D/lambda. For beta = 2 this
  exceeds (2b-1)/((b-1) lambda) = 3/lambda as soon as D >= 4. So Theorem 3.1 as stated (all of
  C(T)) is false for the App. A scale; it holds (a) on path-monotone F with lambda from App. A,
  and (b) on all of C(T) with lambda = D/eps (``LambdaRule.GENERAL``, the default), since the
  <= D split terms on the path are each <= 1/lambda (Step 1) and Case 2 gives <= 1/lambda.
  For real-valued differences spread over several leaves (||F - F'||_C(T) = 1 but not one
  point) the per-depth sums of |F - F'| are <= 1 by the triangle inequality, so (b) still
  gives D/lambda.

This is what matters for PHDStream: its PrivTree input G(., t-1) + nabla F(., t) is not
path-monotone (noise in G; removals in nabla F); see proofs/proof_phdstream.py.

Checks below: Steps 1-2 and the consequences in sympy; then the code: lambda and delta of
``privtree_scales`` for every rule and fanout put into the proof's bounds; a recorded run of
``privtree`` is exactly the decision rule of the Notation paragraph (one draw of scale lambda per
visited vertex, v split iff b(v) + z_v > theta); the exact loss on counts with the code's PROOF scale
stays within (2b-1)/((b-1) lambda) (:func:`dpstream.audit.phdstream.loss.privtree_sup_loss`).
"""

from __future__ import annotations

import math

import numpy as np
import sympy as sp

from dpstream.audit.phdstream.loss import privtree_sup_loss
from dpstream.insecure import InsecureSeededNoise, TapeRecorder
from dpstream.noise import data_rng
from dpstream.phdstream.partition import HypercubePartition, Node
from dpstream.phdstream.privtree import LambdaRule, privtree, privtree_scales, privtree_site
from dpstream.phdstream.tree_function import tree_function

lam, eps, delta = sp.symbols("lambda epsilon delta", positive=True)
beta = sp.symbols("beta", positive=True)
x, theta = sp.symbols("x theta", real=True)


def _sf(a: sp.Expr) -> sp.Expr:
    """P[Lap(lambda) > a] for a >= 0 (a symbolic tail in the right regime)."""
    return sp.exp(-a / lam) / 2


def test_rho_is_one_over_lambda_below_theta() -> None:
    """x <= theta: both tails are in the left regime, ratio e^{1/lambda}, rho = 1/lambda."""
    d = sp.symbols("d", nonnegative=True)  # theta - x >= 0
    ratio = _sf(d) / _sf(d + 1)  # P[x + L > theta] = P[L > theta - x]
    assert sp.simplify(sp.log(ratio) - 1 / lam) == 0


def test_rho_bounded_by_rho_top_above_theta_plus_one() -> None:
    """x >= theta + 1: rho(x) <= (1/lambda) e^{(theta + 1 - x)/lambda}, on a dense grid (exact evaluation)."""
    for lam_v in (0.5, 1.0, 3.0, 12.0):
        for s in [i / 10 for i in range(0, 200)]:  # s = x - theta - 1 >= 0
            u = math.exp(-s / lam_v)  # P[x - 1 + L <= theta] * 2 = e^{-(x-1-theta)/lambda}
            rho = math.log1p(-0.5 * u * math.exp(-1 / lam_v)) - math.log1p(-0.5 * u)
            top = math.exp(-s / lam_v) / lam_v
            assert rho <= top + 1e-15
            assert rho <= 1 / lam_v + 1e-15


def test_rho_top_chain_symbolically() -> None:
    """x >= theta + 1, u = e^{-(x - 1 - theta)/lambda} in (0, 1]: the chain behind rho <= rho^T.

    rho = ln(1 - a) - ln(1 - b) with a = u e^{-1/lambda}/2 < b = u/2, and
    ln((1 - a)/(1 - b)) = ln(1 + (b - a)/(1 - b)) <= (b - a)/(1 - b) = (u/2)(1 - e^{-1/lambda})/(1 - u/2)
    <= u (1 - e^{-1/lambda}) <= u / lambda = rho^T(x).
    """
    u, y, z = sp.symbols("u y z", positive=True)
    a = u * sp.exp(-1 / lam) / 2
    b = u / 2
    assert sp.simplify((1 - a) / (1 - b) - (1 + (b - a) / (1 - b))) == 0
    assert sp.simplify((b - a) / (1 - b) - (u / 2) * (1 - sp.exp(-1 / lam)) / (1 - u / 2)) == 0
    # ln(1 + y) <= y and 1 - e^{-z} <= z for y, z >= 0: equal at 0, derivatives of the gap are >= 0
    assert (y - sp.log(1 + y)).subs(y, 0) == 0 and sp.simplify(sp.diff(y - sp.log(1 + y), y) - y / (1 + y)) == 0
    assert (z - (1 - sp.exp(-z))).subs(z, 0) == 0 and sp.simplify(sp.diff(z - (1 - sp.exp(-z)), z)
                                                                  - (1 - sp.exp(-z))) == 0
    # 1/(1 - u/2) <= 2 for u in (0, 1]
    assert sp.simplify(1 / (1 - sp.Rational(1, 2)) - 2) == 0


def test_rho_at_most_one_over_lambda_between() -> None:
    """theta < x < theta + 1: rho = ln(2 - e^{-s/lambda}) + (1 - s)/lambda... <= 1/lambda (grid)."""
    for lam_v in (0.5, 1.0, 3.0, 12.0):
        for s in [i / 50 for i in range(1, 50)]:  # x = theta + s
            num = 1 - 0.5 * math.exp(-s / lam_v)
            den = 0.5 * math.exp(-(1 - s) / lam_v)
            assert math.log(num / den) <= 1 / lam_v + 1e-15


def test_geometric_series_step() -> None:
    """1/lambda + (1/lambda) sum_{j>=0} e^{-j delta/lambda} = (1/lambda)(2e^{d/l} - 1)/(e^{d/l} - 1)."""
    j = sp.symbols("j", integer=True, nonnegative=True)
    q = sp.symbols("q", positive=True)
    series = sp.summation(q**j, (j, 0, sp.oo))  # Piecewise((1/(1 - q), |q| < 1), ...)
    assert isinstance(series, sp.Piecewise)
    first = series.args[0][0]
    assert sp.simplify(first - 1 / (1 - q)) == 0
    total = 1 / lam + first.subs(q, sp.exp(-delta / lam)) / lam
    closed = (2 * sp.exp(delta / lam) - 1) / (lam * (sp.exp(delta / lam) - 1))
    assert sp.simplify(total - closed) == 0
    with_delta = sp.simplify(closed.subs(delta, lam * sp.log(beta)))
    assert sp.simplify(with_delta - (2 * beta - 1) / ((beta - 1) * lam)) == 0


def test_printed_lambda_gives_half_the_budget() -> None:
    """L3 as printed: (2b-1)/((b-1) lambda) with lambda = (2b-1)/(b-1) * 2/eps equals eps/2."""
    bound = (2 * beta - 1) / ((beta - 1) * lam)
    printed = (2 * beta - 1) / (beta - 1) * 2 / eps
    assert sp.simplify(bound.subs(lam, printed) - eps / 2) == 0
    proof = (2 * beta - 1) / ((beta - 1) * eps)
    assert sp.simplify(bound.subs(lam, proof) - eps) == 0


def test_general_scale_covers_non_monotone_inputs() -> None:
    """D split terms of at most 1/lambda each: lambda = D/eps gives eps; the App. A scale fails for D >= 4 (b=2)."""
    D = sp.symbols("D", positive=True, integer=True)
    assert sp.simplify((D / lam).subs(lam, D / eps) - eps) == 0
    proof_loss = (D / lam).subs(lam, (2 * beta - 1) / ((beta - 1) * eps))
    # D (b-1)/(2b-1) eps > eps  <=>  D > (2b-1)/(b-1); for b = 2: D > 3
    assert sp.simplify(proof_loss.subs(beta, 2) - D * eps / 3) == 0
    assert [d for d in range(1, 10) if d / 3 > 1] == [4, 5, 6, 7, 8, 9]
    printed_loss = (D / lam).subs(lam, (2 * beta - 1) / (beta - 1) * 2 / eps)
    assert sp.simplify(printed_loss.subs(beta, 2) - D * eps / 6) == 0


def test_regime_where_rho_equals_one_over_lambda_exists() -> None:
    """b in [theta - delta + 1, theta - 1] is non-empty when delta = lambda ln beta >= 2 (e.g. b=2, lambda >= 2.9)."""
    for lam_v, beta_v in ((3.0, 2), (6.0, 2), (2.0, 4)):
        d = lam_v * math.log(beta_v)
        assert d >= 2.0


def test_code_scales_in_the_proofs_bounds() -> None:
    """privtree_scales: delta = lambda ln beta; the App. A bound (2b-1)/((b-1) lambda) is eps/2 for PRINTED and
    eps for PROOF; D/lambda is eps for GENERAL, and above eps for PROOF iff D > (2b-1)/(b-1)."""
    eps = sp.Rational(7, 10)
    for fanout in (2, 3, 4):
        for depth in (1, 3, 4, 6):
            P = HypercubePartition(1, depth, fanout=fanout)
            b = sp.Integer(P.beta)
            for rule in LambdaRule:
                lam_v, delta_v = privtree_scales(P, float(eps), rule)
                assert math.isclose(delta_v, lam_v * math.log(P.beta), rel_tol=1e-15)
                app_a = float((2 * b - 1) / (b - 1)) / lam_v  # (2b-1)/((b-1) lambda)
                worst = depth / lam_v                                               # D/lambda (Step 1, any F)
                if rule is LambdaRule.PRINTED:
                    assert math.isclose(app_a, float(eps / 2), rel_tol=1e-14)
                elif rule is LambdaRule.PROOF:
                    assert math.isclose(app_a, float(eps), rel_tol=1e-14)
                    assert (worst > float(eps) * (1 + 1e-12)) == (depth > (2 * b - 1) / (b - 1))
                else:
                    assert math.isclose(worst, float(eps), rel_tol=1e-14)


def test_code_run_is_the_decision_rule() -> None:
    """A recorded run of privtree: one L11 draw per visited vertex (breadth first), scale lambda; v is split iff
    b(v) + z_v > theta with b(v) = max(F(v) - depth(v) delta, theta - delta); the output holds exactly the root
    and the children of split vertices."""
    P = HypercubePartition(2, 5)
    rng = data_rng(11)
    points = rng.random((60, 2)) ** 3
    F = tree_function(P, points)
    label = {privtree_site(v): v for v in P.nodes()}
    sizes = []
    for rule in LambdaRule:
        for theta, seed in ((0.0, 1), (3.0, 2)):
            lam, delta = privtree_scales(P, 1.0, rule)
            recorder = TapeRecorder(InsecureSeededNoise(seed))
            S = privtree(P, F, 1.0, theta, noise=recorder, lambda_rule=rule)
            visited: dict[Node, bool] = {(): True}
            for draw in recorder.tape:
                v = label[draw.site]
                assert visited.pop(v) and np.isclose(draw.params["scale"], lam, rtol=1e-15)
                b = max(F.get(v, 0.0) - P.depth(v) * delta, theta - delta)
                if b + draw.value > theta:
                    visited.update(dict.fromkeys(P.children(v), True))
            assert not visited  # every vertex the rule visits was drawn for
            drawn = {label[d.site] for d in recorder.tape}
            assert S.nodes == frozenset(drawn)
            sizes.append(len(S))
    assert max(sizes) > 1 + P.beta  # some runs split below the root's children


def test_exact_loss_on_counts_within_the_app_a_bound() -> None:
    """Path-monotone F (counts of clustered points) and F + one point: the exact sup loss with the code's PROOF
    scale is at most (2b-1)/((b-1) lambda) = eps, for fanouts 2 and 3."""
    eps = 1.0
    rng = data_rng(5)
    for fanout in (2, 3):
        P = HypercubePartition(2, 6, fanout=fanout)
        lam, delta = privtree_scales(P, eps, LambdaRule.PROOF)
        bound = (2 * P.beta - 1) / ((P.beta - 1) * lam)
        worst = 0.0
        for _ in range(20):
            pts = rng.random((int(rng.integers(1, 200)), 2)) ** float(rng.uniform(1, 6))
            F, F2 = tree_function(P, pts), tree_function(P, [*pts.tolist(), pts[0].tolist()])
            for theta in (0.0, 2.0):
                worst = max(worst, privtree_sup_loss(P, F2, F, lam, delta, theta),
                            privtree_sup_loss(P, F, F2, lam, delta, theta))
        assert math.isclose(bound, eps, rel_tol=1e-14) and worst <= bound * (1 + 1e-12)
