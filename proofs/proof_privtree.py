"""Proof note — Theorem 3.1 (PrivTree_T, 001-alg5): what the Appendix A proof shows, and for which inputs.

Claim (001-thm3.1, as printed)
------------------------------
PrivTree_T(F, eps, theta) is eps-DP in the ||.||_C(T) norm for any theta >= 0 and every F in C(T).

Notation. b(v) = max(F(v) - depth(v) delta, theta - delta) (L9-L10), each visited v draws
Lap(lambda) and is split iff b(v) + Lap(lambda) > theta. The output S is a subtree; its
probability is the product over the vertices of S that have children in T of
P[b(v) + Lap > theta] (v split) or P[b(v) + Lap <= theta] (v a leaf of S): a product of
Laplace tail probabilities (dpstream.phdstream.exact_loss.privtree_log_probability).

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
"""

from __future__ import annotations

import math

import sympy as sp

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
