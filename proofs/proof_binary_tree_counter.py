"""Proof note — Binary Tree counter (001-alg10) is eps-DP with scale (floor(log2 T)+1)/eps.

Claim
-----
``BinaryTreeCounter(eps, T)`` is eps-DP (pure) under STREAM_ENTRY (001-def4.1:
sum_t |f(t) - f'(t)| <= 1), for every horizon T >= 1, with Laplace noise of scale
b = (floor(log2 T) + 1)/eps per node; with ``discrete=True`` (integer inputs, Lap_Z(b),
004-sec2.4) the same holds. The printed scale log2(T)/eps (L8) does NOT give eps.

Code (reference/dpstream/counters/binary_tree.py)
-------------------------------------------------
* ``[001-alg10 L6]`` ``j = min(i for i in range(n + 1) if b[i] != 0)``: the lowest set bit of t;
* ``[001-alg10 L7]`` ``alpha[j] = sum(alpha[i] for i in range(j)) + x``;
* ``[001-alg10 L8]`` ``alpha_hat[j] = alpha[j] + self._draw(t)``: one draw per t at site
  ``"001-alg10 L8 t=<t>"`` with ``self.scale = binary_tree_scale(eps, T)``, i.e.
  ``binary_tree_nodes_per_input(T) / epsilon`` = ``T.bit_length() / eps`` (printed: ``math.log2(T) / epsilon``);
* ``[001-alg10 L9]`` ``alpha[i] = 0.0; alpha_hat[i] = 0.0`` for i < j;
* ``[001-alg10 L10]`` ``g = sum(alpha_hat[i] for i in range(n + 1) if b[i] == 1)``.

Proof in the paper's terms
--------------------------
1. Nodes. At time t, L6 takes j = the lowest set bit of t and L7 sets
   alpha_j = sum_{i<j} alpha_i + f(t). By induction on t, alpha_i (for every set bit i of t
   after step t) is the p-sum of the dyadic interval (u_i - 2^i, u_i], u_i = t with its bits
   below i cleared; in particular the new node of time t is N_t = (t - lsb(t), t]. L8
   releases it once: s_t = sum_{tau in N_t} f(tau) + z_t. So there are exactly T noisy
   statistics over horizon T, one per time step.
2. Releases. L10 sums the alpha_hat of the set bits of t: the nodes u_i above, which are
   the greedy dyadic cover t, t - lsb(t), ... of [1, t]. Each release t contains s_t with
   coefficient 1 and otherwise only s_u with u < t: W is unit lower triangular, hence
   invertible, and the privacy loss of (g(1..T)) equals that of (s_1..s_T).
3. Sensitivity per input. tau lies in N_u iff u - lsb(u) < tau <= u, i.e. u is on the
   path tau, tau + lsb(tau), (tau + lsb(tau)) + lsb(...), ... Each step strictly raises the
   lowest set bit, so the path has at most floor(log2 T) + 1 elements <= T, with equality
   for tau = 1 (1, 2, 4, ..., 2^floor(log2 T)).
4. Loss. For Laplace, log p(s | f) - log p(s | f') <= sum_u |(S d)_u| / b
   <= sum_tau |d_tau| * #{u : tau in N_u} / b <= (floor(log2 T) + 1) / b = eps.
   The discrete Laplace pmf has the same log-ratio bound |d|/b for integer d.
5. The printed scale b' = log2(T)/eps gives (floor(log2 T)+1)/b' = eps (floor(log2 T)+1)/log2 T,
   which exceeds eps for every T >= 2 (e.g. T = 8: 4/3 eps; T = 1024: 1.1 eps), and b' = 0 at
   T = 1 (erratum E-counters-1).

Error law: g(t) - S(t) = sum of the popcount(t) node noises of the cover of [1, t];
Var = popcount(t) 2 b^2 (Laplace), popcount(t) 2p/(1-p)^2 with p = e^{-1/b} (Lap_Z).

Checks below: items 1-5 and both variances in sympy, then the same items read from
``BinaryTreeCounter`` (its tape's scales for T = 1..400; its nodes, covers and loss measured by
:func:`dpstream.testing.linear.measured_linear_model`).
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from dpstream.audit.counters.loss import stream_entry_epsilon
from dpstream.convention import with_noise
from dpstream.counters.binary_tree import BinaryTreeCounter
from dpstream.noise import DrawKind
from dpstream.testing import record_run
from dpstream.testing.linear import measured_linear_model


def _path(tau: int, T: int) -> list[int]:
    out = []
    u = tau
    while u <= T:
        out.append(u)
        u += u & -u
    return out


def test_nodes_per_input_is_floor_log2_T_plus_one() -> None:
    """Item 3: max_tau |path(tau)| = floor(log2 T) + 1 for every T <= 400, attained at tau = 1;
    the path is exactly the set of nodes containing tau (checked for every tau, T <= 64)."""
    for T in range(1, 401):
        longest = max(len(_path(tau, T)) for tau in range(1, T + 1))
        assert longest == sp.integer_log(T, 2)[0] + 1 == len(_path(1, T))
    for T in range(1, 65):
        for tau in range(1, T + 1):
            containing = [u for u in range(1, T + 1) if u - (u & -u) < tau <= u]
            assert containing == _path(tau, T)


def _nodes(T: int) -> sp.Matrix:
    """Item 1: row u is the node (u - lsb(u), u]."""
    S = sp.zeros(T, T)
    for u in range(1, T + 1):
        for tau in range(u - (u & -u) + 1, u + 1):
            S[u - 1, tau - 1] = 1
    return S


def _covers(T: int) -> sp.Matrix:
    """Item 2: row t holds the nodes t, t - lsb(t), ... of the greedy dyadic cover of [1, t]."""
    W = sp.zeros(T, T)
    for t in range(1, T + 1):
        u = t
        while u > 0:
            W[t - 1, u - 1] = 1
            u -= u & -u
    return W


def test_releases_are_a_bijection_of_the_nodes() -> None:
    """Item 2: W (release t <- nodes of the greedy cover) is unit lower triangular; W S = prefix sums."""
    T = 20
    W, S = _covers(T), _nodes(T)
    assert W.is_lower and all(W[i, i] == 1 for i in range(T)) and W.det() == 1
    assert sp.Matrix(T, T, lambda i, j: 1 if j <= i else 0) == W * S


def test_budget_with_corrected_and_printed_scale() -> None:
    """Items 4-5: k nodes of scale k/eps cost eps; of scale log2(T)/eps cost eps k / log2 T > eps."""
    eps = sp.symbols("epsilon", positive=True)
    k = sp.symbols("k", positive=True, integer=True)
    assert sp.simplify(k * 1 / (k / eps) - eps) == 0
    for m in range(1, 12):  # T = 2^m: k = m + 1, log2 T = m
        T = 2**m
        printed = (m + 1) / (sp.log(T, 2) / eps)
        assert sp.simplify(printed - eps * sp.Rational(m + 1, m)) == 0
        assert sp.Rational(m + 1, m) > 1
    assert sp.log(1, 2) / eps == 0  # T = 1: printed scale 0


def test_laplace_and_discrete_laplace_log_ratio() -> None:
    """|log p(x) - log p(x - d)| <= |d| / b (Laplace, all sign cases); = 1/b for Lap_Z and d = 1."""
    x, d = sp.symbols("x d", real=True)
    b = sp.symbols("b", positive=True)
    log_ratio = -sp.Abs(x) / b + sp.Abs(x - d) / b
    for xv in (-3, -1, 0, sp.Rational(1, 2), 2):
        for dv in (-2, -1, 0, 1, sp.Rational(3, 2)):
            assert sp.simplify(sp.Abs(log_ratio.subs({x: xv, d: dv})) - sp.Abs(dv) / b) <= 0
    z = sp.symbols("z", integer=True)
    p = sp.exp(-1 / b)
    pmf = (1 - p) / (1 + p) * sp.exp(-sp.Abs(z) / b)
    for zv in (-3, -1, 0, 1, 4):
        r = sp.log(pmf.subs(z, zv)) - sp.log(pmf.subs(z, zv - 1))
        assert sp.simplify(sp.Abs(r) - 1 / b) == 0


def test_error_variance() -> None:
    """Var(Lap(b)) = 2 b^2; Var(Lap_Z(b)) = 2p/(1-p)^2, p = e^{-1/b}; error = popcount(t) i.i.d. terms."""
    x = sp.symbols("x", real=True)
    b = sp.symbols("b", positive=True)
    assert sp.simplify(sp.integrate(x**2 * sp.exp(-sp.Abs(x) / b) / (2 * b), (x, -sp.oo, sp.oo)) - 2 * b**2) == 0
    z = sp.symbols("z", integer=True, positive=True)
    for q in (sp.Rational(1, 3), sp.Rational(1, 2), sp.exp(-1)):  # q = p = e^{-1/b} in (0, 1)
        half = sp.summation(z**2 * q**z, (z, 1, sp.oo))
        var = (1 - q) / (1 + q) * 2 * half
        assert sp.simplify(var - 2 * q / (1 - q) ** 2) == 0
    for t in range(1, 65):  # the cover of [1, t] has popcount(t) nodes
        u, n = t, 0
        while u > 0:
            u -= u & -u
            n += 1
        assert n == bin(t).count("1")


def test_implementation_scale_for_every_horizon() -> None:
    """The scale on BinaryTreeCounter's tape is (floor(log2 T) + 1)/eps for T = 1..400 (Laplace and Lap_Z), and
    the printed log2(T)/eps with as_printed (T >= 2)."""
    eps = sp.Rational(7, 10)
    for T in range(1, 401):
        corrected = float((sp.integer_log(T, 2)[0] + 1) / eps)  # floor(log2 T) exactly
        for discrete in (False, True):
            _, tape = record_run(with_noise(BinaryTreeCounter, float(eps), T, discrete=discrete), [1], 0)
            (draw,) = tape.draws
            assert draw.kind is (DrawKind.DISCRETE_LAPLACE if discrete else DrawKind.LAPLACE)
            assert np.isclose(draw.params["scale"], corrected, rtol=1e-15, atol=0)
        if T >= 2:
            _, tape = record_run(with_noise(BinaryTreeCounter, float(eps), T, as_printed=True), [1], 0)
            assert np.isclose(tape.draws[0].params["scale"], float(sp.log(T, 2) / eps), rtol=1e-14, atol=0)


def test_implementation_nodes_covers_and_loss() -> None:
    """Items 1-5 on the measured model of BinaryTreeCounter: one node per t (site L8 t=u) equal to (u - lsb(u), u];
    release t = the greedy cover; input tau in exactly |path(tau)| nodes, floor(log2 T) + 1 at tau = 1; loss eps,
    as printed eps (floor(log2 T) + 1)/log2 T; variance popcount(t) 2 b^2."""
    eps = sp.Rational(1, 2)
    for T in (1, 2, 3, 8, 13, 16):
        model = measured_linear_model(with_noise(BinaryTreeCounter, float(eps), T), T)
        assert model.sites == tuple(f"001-alg10 L8 t={u}" for u in range(1, T + 1))
        assert np.allclose(model.statistics, np.array(_nodes(T), dtype=float), atol=1e-9)
        assert np.allclose(model.combination, np.array(_covers(T), dtype=float), atol=1e-9)
        in_nodes = np.rint(np.abs(model.statistics).sum(axis=0)).astype(int)
        assert list(in_nodes) == [len(_path(tau, T)) for tau in range(1, T + 1)]
        assert in_nodes.max() == in_nodes[0] == sp.floor(sp.log(T, 2)) + 1
        assert np.isclose(stream_entry_epsilon(model).value, float(eps), rtol=1e-12)
        b = float((sp.floor(sp.log(T, 2)) + 1) / eps)
        assert np.allclose(model.error_variance(), [bin(t).count("1") * 2 * b**2 for t in range(1, T + 1)], rtol=1e-12)
        if T >= 2:
            printed = measured_linear_model(with_noise(BinaryTreeCounter, float(eps), T, as_printed=True), T)
            ratio = (sp.floor(sp.log(T, 2)) + 1) / sp.log(T, 2)  # the erratum's loss ratio, > 1
            assert ratio > 1
            assert np.isclose(stream_entry_epsilon(printed).value, float(eps * ratio), rtol=1e-12)
