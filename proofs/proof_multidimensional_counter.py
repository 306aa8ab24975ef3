"""Proof note — Multi-dimensional counter (001-sec4.3) under the l1 norm sum_t ||f(t)||_1.

Claim
-----
``MultiDimensionalCounter([C_1, ..., C_d])`` with C_i eps_i-DP under STREAM_ENTRY is, under
neighbours with sum_t ||f(t) - f'(t)||_1 <= 1 (001-sec4.3):
* max_i eps_i - DP when every C_i's loss scales with the l1 change (loss <= D eps_i for a
  change of l1 size D <= 1; true for all dpstream counters, which add independent Laplace noise
  to linear statistics); likewise max_i rho_i for discrete-Gaussian zCDP counters
  (cost <= D^2 rho_i);
* only sum_i eps_i - DP for arbitrary eps_i-DP components. Parallel composition is not automatic.

Code (reference/dpstream/counters/multidim.py; 001-sec4.3 prints no box, so no line tags)
---------------------------------------------------------------------------------------
* ``MultiDimensionalCounter.build(factory, d, parameter, noise)``: d components
  ``factory(parameter, scoped(noise, "001-sec4.3 i=<i>"))``, stepped on f(t)_i (independent noise);
* ``claim``: ``max(cl.parameter ...)`` when every component has ``loss_scales_with_l1``, else
  ``sum(cl.parameter ...)`` (item 3);
* ``Counter.loss_scales_with_l1`` is True for the counters that add independent Laplace /
  discrete-Gaussian noise to linear statistics (item 1 and 2), False by default (e.g. ``SparseCounter``).

Proof
-----
Let D_i = sum_t |f(t)_i - f'(t)_i|, sum_i D_i <= 1. The coordinates use independent noise, so
the privacy loss is the sum of the coordinates' losses (basic composition).
1. Laplace-linear components: C_i's log-likelihood ratio is sum_j |(S_i d_i)_j|/b_j
   <= D_i * max_tau sum_j |S_i[j, tau]|/b_j <= D_i eps_i. Total <= sum_i D_i eps_i <= max_i eps_i
   (a linear function on the simplex is maximal at a vertex).
2. zCDP components: cost_i <= D_i^2 rho_i, total <= max_i rho_i sum_i D_i^2 <= max_i rho_i (sum_i D_i)^2.
3. Counterexample for arbitrary components: C_i releases randomized response of the bit
   [sum_t f(t)_i > 0] with flip probability 1/(1+e^eps) (then whatever counter output is needed).
   Every change of any size flips at most that bit: eps-DP under STREAM_ENTRY. The neighbour
   f(1) = 0 vs f'(1) = (1/d, ..., 1/d) (l1 distance 1) flips all d bits: the output
   (1, ..., 1) has likelihood ratio e^{d eps}. So the best general bound is sum_i eps_i.

Checks below: 1 on the simplex vertices, 2, and the counterexample's ratio; then item 1 on the
measured model of a ``MultiDimensionalCounter`` of Simple counters with budgets (3/10, 7/10, 1/2)
(:func:`dpstream.testing.linear.measured_linear_model`): its loss on split changes is sum_i D_i eps_i, at most
the max its claim states; and the claim falls back to the sum for components without the property.
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from dpstream.counters.multidim import MultiDimensionalCounter
from dpstream.counters.simple import SimpleCounter
from dpstream.counters.sparse import SparseCounter
from dpstream.insecure import InsecureZeroNoise
from dpstream.noise import NoiseSource, scoped
from dpstream.testing.linear import measured_linear_model


def test_linear_loss_on_the_simplex_is_at_most_the_max() -> None:
    e = sp.symbols("e1:4", positive=True)
    D = sp.symbols("D1:4", nonnegative=True)
    loss = sum(ei * di for ei, di in zip(e, D, strict=True))
    vertices = [{D[0]: 1, D[1]: 0, D[2]: 0}, {D[0]: 0, D[1]: 1, D[2]: 0}, {D[0]: 0, D[1]: 0, D[2]: 1}]
    assert [loss.subs(v) for v in vertices] == list(e)
    # on the interior, loss = sum D_i e_i <= max e (numerical instance)
    vals = {e[0]: sp.Rational(3, 10), e[1]: sp.Rational(7, 10), e[2]: sp.Rational(1, 2)}
    for d in ((sp.Rational(1, 3),) * 3, (sp.Rational(1, 2), sp.Rational(1, 2), 0), (0, sp.Rational(9, 10), 0)):
        assert loss.subs(vals).subs(dict(zip(D, d, strict=True))) <= sp.Rational(7, 10)


def test_zcdp_split_is_at_most_the_max() -> None:
    rho = sp.symbols("rho", positive=True)
    for d in ((sp.Rational(1, 3),) * 3, (sp.Rational(1, 2), sp.Rational(1, 2), 0), (1, 0, 0)):
        total = sum(rho * di**2 for di in d)
        assert sp.simplify(total - rho * sum(di**2 for di in d)) == 0
        assert sum(di**2 for di in d) <= sum(d) ** 2 <= 1


def test_randomized_response_counterexample_loses_d_eps() -> None:
    eps = sp.symbols("epsilon", positive=True)
    keep = sp.exp(eps) / (1 + sp.exp(eps))
    flip = 1 / (1 + sp.exp(eps))
    assert sp.simplify(sp.log(keep / flip) - eps) == 0  # one coordinate: eps-DP
    for d in (1, 2, 3, 5):
        ratio = (keep / flip) ** d  # all d bits flipped by a change of l1 size d * (1/d) = 1
        assert sp.simplify(sp.log(ratio) - d * eps) == 0


def test_implementation_loss_on_split_changes() -> None:
    """Item 1 on MultiDimensionalCounter([Simple(3/10), Simple(7/10), Simple(1/2)]) over T = 3: a change d split
    as D_i over the coordinates (at one time or several) costs sum_j |(S d)_j| / b_j = sum_i D_i eps_i exactly,
    <= max_i eps_i = the claim; with components lacking ``loss_scales_with_l1`` the claim is the sum (item 3)."""
    budgets = [sp.Rational(3, 10), sp.Rational(7, 10), sp.Rational(1, 2)]
    T, d = 3, len(budgets)

    def factory(noise: NoiseSource) -> MultiDimensionalCounter:
        return MultiDimensionalCounter([SimpleCounter(float(e), noise=scoped(noise, f"001-sec4.3 i={i}"))
                                        for i, e in enumerate(budgets)])

    model = measured_linear_model(factory, T, d=d)
    inv_b = np.array([1.0 / law.parameter for law in model.laws])
    assert np.isclose(factory(InsecureZeroNoise()).claim.parameter, float(max(budgets)), rtol=1e-15)
    for split in ((sp.Rational(1, 3),) * 3, (sp.Rational(1, 2), sp.Rational(1, 2), 0), (0, sp.Rational(9, 10), 0)):
        for times in ((0, 0, 0), (0, 1, 2), (2, 0, 1)):  # when each coordinate's share of the change happens
            change = np.zeros(T * d)
            for i, (share, t) in enumerate(zip(split, times, strict=True)):
                change[t * d + i] = float(share)
            loss = float(np.abs(model.statistics @ change) @ inv_b)
            assert np.isclose(loss, float(sum(D * e for D, e in zip(split, budgets, strict=True))), rtol=1e-12)
            assert loss <= float(max(budgets)) + 1e-12
    sparse = MultiDimensionalCounter.build(lambda e, n: SparseCounter(e, 8, noise=n), 3, 0.5, noise=InsecureZeroNoise())
    assert not SparseCounter.loss_scales_with_l1 and np.isclose(sparse.claim.parameter, 3 * 0.5, rtol=1e-15)
