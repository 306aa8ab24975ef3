"""Proof note — fixed time window synthesizer (002-alg1): Theorems 3.1 and 3.2, Corollary 3.3, padding.

Theorem 3.1 (privacy), per neighbour relation
---------------------------------------------
Every release of Algorithm 1 is a function of the noisy histograms C^^t = C^t + n_pad + Y^t,
t = k..T (R = T-k+1 steps, Y^t_s i.i.d. N_Z(0, sigma^2)), and of post-processing coins and
record choices that are independent of the data. The histograms are one discrete Gaussian
mechanism on the stacked vector (C^k, ..., C^T). For the discrete Gaussian with integer shift mu,
completing the square gives

    alpha x^2 + (1-alpha)(x-mu)^2 = (x - (1-alpha) mu)^2 + alpha (1-alpha) mu^2,

and sum_x exp(-(x-c)^2/(2 sigma^2)) <= sum_x exp(-x^2/(2 sigma^2)) for every real c, hence
D_alpha(N_Z(0, s2) || N_Z(mu, s2)) <= alpha mu^2 / (2 s2) (Canonne, Kamath, Steinke 2020), additive
over independent bins. So D_alpha <= alpha ||C(D) - C(D')||_2^2 / (2 sigma^2):

* one individual added or removed: one bin per step moves by 1, ||.||^2 = R: rho_AR = R / (2 sigma^2);
* one individual's sequence substituted (the paper's relation, n fixed): its window leaves one bin
  and enters another at every step, ||.||^2 <= 2R (equality when the windows differ at every step):
  rho_SUB = R / sigma^2.

With the printed sigma^2 = R/(2 rho): rho_AR = rho but rho_SUB = 2 rho. The paper's argument
("the sensitivity of the count C_s^t is 1") is the add/remove sensitivity. Default of dpstream:
sigma^2 = R/rho (rho_SUB = rho); ``as_printed=True`` keeps the printed variance and claims rho under
add/remove (erratum E-longitudinal-1). Exact values on concrete neighbours, also for the released
synthetic data (which discards part of the histograms and leaks less, between the two):
``dpstream.audit.longitudinal.loss`` and tests/longitudinal/test_privacy.py.

Code (reference/dpstream/longitudinal/fixed_window.py, ``FixedWindowSynthesizer``)
--------------------------------------------------------------------------------
* ``self.sigma2 = fixed_window_sigma2(T, k, rho, as_printed=...)``: ``(T - k + 1) / rho``, printed ``/ (2 rho)``;
* ``[002-alg1 u3]`` C^^t = C^t + n_pad + Y^t, one N_Z(0, sigma2) draw per bin s at ``"002-alg1 u3 t=<t> s=<s>"``;
* ``claims``: ``rho_ar = R / (2.0 * self.sigma2)``, ``rho_sub = 2.0 * R / (2.0 * self.sigma2)``;
* ``[002-alg1 u11]`` fair coins and ``[002-alg1 u16]`` record choices: data-independent post-processing draws.

Theorem 3.2 (accuracy)
----------------------
Write p_s^t - (C_s^t + n_pad) = G + B: G the part that is linear in the discrete Gaussians, B the part
linear in the rounding terms b_z e_z. By the update rule (eq (8)), the coefficients of G satisfy
Var(G) = sigma^2 * (sum of squared coefficients) = sigma^2 at every step: the paper's series
identity, checked symbolically below, and checked exactly on the full error-propagation map for
k <= 3 (the ancestries of p_{0z} and p_{1z} overlap from k steps back, so the independence stated
for eq (9) does not hold literally, but the covariance cancels and the identity does).
The paper states -1/2 <= B <= 1/2. That is false for k >= 2: a coin drawn j < k steps back
reaches a bin with weight 2^{-j} through one path, 2^j such coins exist, so |B| <= k/2 (attained;
1.5 observed for k = 3 with the implementation), while coins from k or more steps back cancel.
B is a martingale with increments bounded by w_j / 2, so it is subgaussian with variance proxy
sum_j (w_j/2)^2 = (1 - 2^{-k})/2 (Azuma-Hoeffding). G + B is then (sigma + sqrt((1 - 2^-k)/2))^2-
subgaussian, and a two-sided tail with a union bound over 2^k R bins gives the corrected

    lambda' = (sqrt(2 sigma^2) + sqrt(1 - 2^-k)) sqrt(log(2^{k+1} R / beta)),

slightly above the printed lambda = (sqrt(2 sigma^2) + 1/sqrt 2) sqrt(log(2^k R / beta)) (the paper
also applies a one-sided tail to |.|). Erratum E-longitudinal-4. The audits find the printed
lambda holding with a wide margin in every setting tried (docs/longitudinal.md).

Categorical extension (alphabet A, dpstream.longitudinal.categorical; not in the paper)
------------------------------------------------------------------------------------
The deficit D_z = sum_a p_{az}^{t-1} - sum_c C^_{zc}^t is spread as D_z / A plus a rounding term
rho_{zc} = 1[c rounds up] - m/A (m = D_z mod A), so the error obeys
e_{zc}^t = G_{zc} - (1/A) sum_c' G_{zc'} + (1/A) sum_a e_{az}^{t-1} + rho_{zc} (A = 2: eq (8)).
Exact coefficients (dpstream.longitudinal.propagation, checked below against the binary derivation
of this note): the squared Gaussian coefficients sum to 1 for every A (Var G = sigma^2, as for
A = 2), and the rounding part is at most min(r, k) (A-1)/A after r update steps (k/2 for A = 2).
Hence, with probability >= 1 - beta, for every bin and step,
|p - (C + n_pad)| <= k (A-1)/A + sqrt(2 sigma^2 log(2 A^k R / beta))
(two-sided subgaussian tail, union bound over A^k R bins): ``propagation.window_error_bound``,
audited by tests/longitudinal/test_categorical.py::test_categorical_accuracy_bound.

Padding (002-npad, Corollary 3.3)
---------------------------------
Solving 2^k R exp(-lambda^2 / (2 (sigma + 1/2)^2)) = beta for lambda gives the printed eq (5) with
sqrt(2) sigma = sqrt(R/rho). Section 3.1 prints the tail with an exponent linear in n_pad,
2^k R exp(-n_pad rho / R); solving that gives n_pad = (R/rho) log(2^k R/beta), not the printed
sqrt(R/rho log(2^k R/beta)), which solves the quadratic exponent exp(-n_pad^2 rho / R) (E-longitudinal-5).
Corollary 3.3: on the event of Theorem 3.2 with n_pad >= lambda, n <= n* <= n + 2^k (n_pad + lambda)
and the triangle inequality gives |p/n* - C/n| <= (lambda + n_pad)/n + 2^k (n_pad + lambda) C / n^2
(= 2 lambda/n + 2^{k+1} lambda C/n^2 at n_pad = lambda).

Checks below (sympy and exact rationals), and a recorded run of ``FixedWindowSynthesizer``: its
privacy-relevant draws are exactly the 2^k R discrete Gaussians of u3, of variance sigma^2 = R/rho
(printed R/(2 rho)), and the per-relation costs of Theorem 3.1 computed from the recorded sigma^2 are
the instance's claims.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import sympy as sp

from dpstream.claims import Neighbour
from dpstream.insecure import InsecureSeededNoise, TapeRecorder
from dpstream.longitudinal.bounds import fixed_window_sigma2, n_pad_section_3_1, theorem_3_2_lambda
from dpstream.longitudinal.fixed_window import FixedWindowSynthesizer
from dpstream.longitudinal.generators import random_matrix
from dpstream.longitudinal.propagation import error_propagation, rounding_sup, window_error_bound
from dpstream.noise import DrawKind


def test_discrete_gaussian_square_completion() -> None:
    """alpha x^2 + (1-alpha)(x-mu)^2 = (x - (1-alpha) mu)^2 + alpha (1-alpha) mu^2, and the theta bound."""
    x, mu, a = sp.symbols("x mu alpha", real=True)
    lhs = a * x**2 + (1 - a) * (x - mu) ** 2
    rhs = (x - (1 - a) * mu) ** 2 + a * (1 - a) * mu**2
    assert sp.expand(lhs - rhs) == 0
    # exponent of the Renyi sum: -alpha(1-alpha) mu^2/(2 s2) / (alpha - 1) = alpha mu^2 / (2 s2)
    s2 = sp.symbols("sigma2", positive=True)
    assert sp.simplify((-a * (1 - a) * mu**2 / (2 * s2)) / (a - 1) - a * mu**2 / (2 * s2)) == 0
    for sigma2 in (0.3, 1.0, 7.5):  # shifted theta sums never exceed the centred one
        y = np.arange(-200, 201, dtype=np.float64)
        centred = np.exp(-(y**2) / (2 * sigma2)).sum()
        for c in np.linspace(0.0, 1.0, 11):
            assert np.exp(-((y - c) ** 2) / (2 * sigma2)).sum() <= centred * (1 + 1e-12)


def test_sensitivity_per_relation() -> None:
    """||C(D) - C(D')||^2 per step: 1 (add/remove), 2 (substitution); composition over R steps."""
    bins = 8
    e = [sp.Matrix([1 if i == j else 0 for i in range(bins)]) for j in range(bins)]
    add_remove = e[3]
    substitute = e[3] - e[6]
    assert add_remove.dot(add_remove) == 1
    assert substitute.dot(substitute) == 2
    R, rho, alpha = sp.symbols("R rho alpha", positive=True)
    printed = R / (2 * rho)  # 002-alg1 u3
    assert sp.simplify(alpha * R * 1 / (2 * printed) - alpha * rho) == 0  # add/remove: rho
    assert sp.simplify(alpha * R * 2 / (2 * printed) - 2 * alpha * rho) == 0  # substitution: 2 rho
    corrected = R / rho  # dpstream default
    assert sp.simplify(alpha * R * 2 / (2 * corrected) - alpha * rho) == 0
    assert fixed_window_sigma2(12, 3, 0.005, as_printed=True) == 10 / (2 * 0.005)
    assert fixed_window_sigma2(12, 3, 0.005) == 10 / 0.005


def test_definition_2_2_calibration() -> None:
    """rho-zCDP needs sigma^2 = Delta^2/(2 rho); the printed Delta/(2 rho) agrees only at Delta = 1."""
    D, rho = sp.symbols("Delta rho", positive=True)
    zcdp_sigma2 = D**2 / (2 * rho)
    printed = D / (2 * rho)
    assert sp.solve(sp.Eq(zcdp_sigma2, printed), D) == [1]
    assert sp.simplify(zcdp_sigma2.subs(D, sp.sqrt(2)) - 1 / rho) == 0  # substitution sensitivity sqrt(2)


def test_variance_series_identity() -> None:
    """Proof of Theorem 3.2: sum_{i<r} 2^i 2^{-2i} + 2^{r+1} 2^{-2r} = 2^{-r} + sum_{i<=r} 2^{-i} = 1."""
    r, i = sp.symbols("r i", integer=True, positive=True)
    first = sp.summation(2**i * 2 ** (-2 * i), (i, 1, r - 1)) + 2 ** (r + 1) * 2 ** (-2 * r)
    second = 2 ** (-r) + sp.summation(2 ** (-i), (i, 1, r))
    assert sp.simplify(first - 1) == 0
    assert sp.simplify(second - 1) == 0


def _propagation(k: int, R: int) -> tuple[list[dict[tuple[int, int], Fraction]], list[dict[tuple[int, int], Fraction]]]:
    """Exact coefficients of the error of every bin at the last step on the Gaussian draws (t, s) and coins (t, z).

    Update (eq (8)): err_{z0}^t = (Y_{z0} - Y_{z1})/2 + (err_{0z}^{t-1} + err_{1z}^{t-1})/2 + b_z,
    err_{z1}^t = (Y_{z1} - Y_{z0})/2 + (same)/2 - b_z; err^k = Y^k.
    """
    B, O = 2**k, 2 ** (k - 1)
    gauss: list[dict[tuple[int, int], Fraction]] = [{(0, s): Fraction(1)} for s in range(B)]
    coins: list[dict[tuple[int, int], Fraction]] = [{} for _ in range(B)]
    for r in range(1, R):
        ng: list[dict[tuple[int, int], Fraction]] = []
        nc: list[dict[tuple[int, int], Fraction]] = []
        for s in range(B):
            z, c = divmod(s, 2)
            sign = 1 if c == 0 else -1
            g: dict[tuple[int, int], Fraction] = {}
            for key, w in itertools.chain(gauss[z].items(), gauss[O + z].items()):
                g[key] = g.get(key, Fraction(0)) + w / 2
            g[(r, 2 * z)] = g.get((r, 2 * z), Fraction(0)) + Fraction(sign, 2)
            g[(r, 2 * z + 1)] = g.get((r, 2 * z + 1), Fraction(0)) - Fraction(sign, 2)
            b: dict[tuple[int, int], Fraction] = {}
            for key, w in itertools.chain(coins[z].items(), coins[O + z].items()):
                b[key] = b.get(key, Fraction(0)) + w / 2
            b[(r, z)] = b.get((r, z), Fraction(0)) + sign  # b_z = +-1/2 enters with weight +-1
            ng.append(g)
            nc.append(b)
        gauss, coins = ng, nc
    return gauss, coins


def test_error_propagation_has_variance_sigma2() -> None:
    """Sum of squared Gaussian coefficients = 1 for every bin and step (Var G = sigma^2), k <= 3, R <= 6."""
    for k in (1, 2, 3):
        for R in range(1, 7):
            gauss, _ = _propagation(k, R)
            for g in gauss:
                assert sum(w * w for w in g.values()) == 1


def test_rounding_term_exceeds_one_half() -> None:
    """sup |B| = sum |coin weights| / 2 = k/2, proxy (1 - 2^-k)/2: the printed |B| <= 1/2 fails for k >= 2."""
    for k in (1, 2, 3, 4):
        _, coins = _propagation(k, k + 3)
        worst = max(sum(abs(w) for w in c.values()) / 2 for c in coins)
        proxy = max(sum((w / 2) ** 2 for w in c.values()) for c in coins)
        assert worst == Fraction(k, 2)
        assert proxy == (1 - Fraction(1, 2**k)) / 2
    # the corrected lambda is above the printed one
    assert theorem_3_2_lambda(1000.0, 12, 3, 0.05) < (math.sqrt(2000.0) + math.sqrt(1 - 2**-3)) * math.sqrt(
        math.log(2 ** (3 + 1) * 10 / 0.05))


def test_general_propagation_matches_the_binary_derivation() -> None:
    """propagation.error_propagation(k, R, 2) has the Gaussian coefficients and rounding sup of eq (8) above."""
    for k in (1, 2, 3):
        for R in range(1, 6):
            gauss, coins = _propagation(k, R)
            last = error_propagation(k, R, 2)[-1]
            for s in range(2**k):
                assert last[s].gauss == {key: w for key, w in gauss[s].items() if w != 0}
                # b_z enters p_{z0} as +b and p_{z1} as -b: rho_{z0} = b, rho_{z1} = -b
                assert rounding_sup(last[s], 2) == sum(abs(w) for w in coins[s].values()) / 2


def test_categorical_variance_identity_and_rounding() -> None:
    """Every alphabet: sum of squared Gaussian coefficients = 1; rounding part <= min(r, k) (A-1)/A, attained."""
    for A, k in ((3, 1), (3, 2), (3, 3), (4, 1), (4, 2), (5, 2)):
        for r, row in enumerate(error_propagation(k, 5, A)):
            assert all(e.gauss_square_sum() == 1 for e in row)
            assert max(rounding_sup(e, A) for e in row) == Fraction(min(r, k) * (A - 1), A)
    # the bound: k (A-1)/A + sqrt(2 sigma^2 log(2 A^k R / beta)), e.g. A = 3, k = 2, T = 6, sigma^2 = 5
    want = Fraction(4, 3) + math.sqrt(2 * 5.0 * math.log(2 * 9 * 5 / 0.05))
    assert math.isclose(window_error_bound(5.0, 6, 2, 0.05, 3), float(want), rel_tol=1e-12)


def test_lambda_solves_the_union_bound() -> None:
    """2^k R exp(-lambda^2/(2 (sigma + 1/2)^2)) = beta <=> lambda = (sqrt2 sigma + 1/sqrt2) sqrt(log(2^k R/beta))."""
    lam, sigma, K, beta, R, rho = sp.symbols("lambda sigma K beta R rho", positive=True)  # K = 2^k R bins
    sol = sp.solve(sp.Eq(K * sp.exp(-(lam**2) / (2 * (sigma + sp.Rational(1, 2)) ** 2)), beta), lam)
    target = (sp.sqrt(2) * sigma + 1 / sp.sqrt(2)) * sp.sqrt(sp.log(K / beta))
    assert any(sp.simplify(s - target) == 0 for s in sol)
    # with sigma^2 = R/(2 rho): sqrt(2) sigma = sqrt(R/rho), the printed eq (5)
    assert sp.simplify((sp.sqrt(2) * sp.sqrt(R / (2 * rho))) - sp.sqrt(R / rho)) == 0
    T, k, rho_v, beta_v = 12, 3, 0.005, 0.05
    printed = (math.sqrt((T - k + 1) / rho_v) + 1 / math.sqrt(2)) * math.sqrt(math.log(2**k * (T - k + 1) / beta_v))
    assert math.isclose(theorem_3_2_lambda(fixed_window_sigma2(T, k, rho_v, as_printed=True), T, k, beta_v), printed)


def test_section_3_1_padding_formula() -> None:
    """Section 3.1's linear exponent solves to (R/rho) log(K/beta); the printed sqrt formula needs a quadratic one."""
    n, K, beta, R, rho = sp.symbols("n K beta R rho", positive=True)
    linear = sp.solve(sp.Eq(K * sp.exp(-n * rho / R), beta), n)
    assert len(linear) == 1 and sp.simplify(linear[0] - R / rho * sp.log(K / beta)) == 0
    quadratic = sp.solve(sp.Eq(K * sp.exp(-(n**2) * rho / R), beta), n)
    assert any(sp.simplify(s - sp.sqrt(R / rho * sp.log(K / beta))) == 0 for s in quadratic)
    assert n_pad_section_3_1(12, 3, 0.005, 0.05) == math.ceil(math.sqrt(10 / 0.005 * math.log(80 / 0.05)))


def test_corollary_3_3_algebra() -> None:
    """With n <= n* <= n + 2^k (n_pad + lambda) and n_pad = lambda the bound is 2 lambda/n + 2^{k+1} lambda C/n^2."""
    lam, n, C, K = sp.symbols("lambda n C K", positive=True)  # K = 2^k
    n_pad = lam
    general = (lam + n_pad) / n + K * (n_pad + lam) * C / n**2
    assert sp.simplify(general - (2 * lam / n + 2 * K * lam * C / n**2)) == 0


def test_recorded_run_gives_theorem_3_1_per_relation() -> None:
    """FixedWindowSynthesizer(T = 6, k = 2, rho = 1/2): 2^k R discrete Gaussian draws (u3) of variance R/rho
    (printed R/(2 rho)), nothing else privacy-relevant; the zCDP costs R/(2 sigma^2) (add/remove) and
    2R/(2 sigma^2) (substitution) from the recorded sigma^2 equal the claims: rho and 2 rho as printed."""
    T, k, rho = 6, 2, sp.Rational(1, 2)
    R = T - k + 1
    for as_printed, sub_cost in ((False, rho), (True, 2 * rho)):
        recorder = TapeRecorder(InsecureSeededNoise(1))
        synth = FixedWindowSynthesizer(T, k, float(rho), noise=recorder, n_pad=60, as_printed=as_printed)
        synth.run(random_matrix(40, T, seed=2))
        private = [d for d in recorder.tape if d.kind.privacy_relevant]
        assert all(d.kind is DrawKind.DISCRETE_GAUSSIAN and d.site.startswith("002-alg1 u3 ") for d in private)
        assert len(private) == 2**k * R
        (sigma2,) = {d.params["sigma2"] for d in private}
        assert math.isclose(sigma2, float(R / rho / (2 if as_printed else 1)), rel_tol=1e-15)
        claims = synth.claims
        assert math.isclose(claims[Neighbour.INDIVIDUAL_ADD_REMOVE].parameter, R * 1 / (2 * sigma2), rel_tol=1e-15)
        assert math.isclose(claims[Neighbour.INDIVIDUAL_SUBSTITUTE].parameter, R * 2 / (2 * sigma2), rel_tol=1e-15)
        assert math.isclose(R * 2 / (2 * sigma2), float(sub_cost), rel_tol=1e-14)
