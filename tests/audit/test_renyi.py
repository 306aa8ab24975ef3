"""The Renyi divergence test (dpstream.audit.renyi): sound bounds, power on a Gaussian pair above a zCDP claim, and no
certificate for a pair within it."""

from __future__ import annotations

import math

import numpy as np
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from dpstream.audit.renyi import RenyiPartition, gaussian_eps, renyi_lower_bound, renyi_point, renyi_test
from dpstream.claims import zcdp_to_approx_dp
from dpstream.noise import data_rng


def gaussian_pair(rho: float, n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The log-likelihood ratio of a Gaussian pair of zCDP parameter rho (mu^2 = 2 rho) on n runs of each input."""
    rng = data_rng(seed)
    mu2 = 2.0 * rho
    return rng.normal(-mu2 / 2, math.sqrt(mu2), n), rng.normal(mu2 / 2, math.sqrt(mu2), n)


def test_each_cell_of_the_bound_moves_the_way_the_proof_needs() -> None:
    """p^a q^(1-a) increases in p and decreases in q for a > 1 (the module docstring's 'monotone in each cell')."""
    p, q, a = sp.symbols("p q a", positive=True)
    term = p ** a * q ** (1 - a)
    assert sp.simplify(sp.diff(term, p) - a * term / p) == 0
    assert sp.simplify(sp.diff(term, q) - (1 - a) * term / q) == 0
    # a > 1: a/p > 0 and (1 - a)/q < 0, so the signs are those of a and 1 - a
    assert sp.ask(sp.Q.positive(a * term / p), sp.Q.positive(a - 1))
    assert sp.ask(sp.Q.negative((1 - a) * term / q), sp.Q.positive(a - 1))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 300), min_size=2, max_size=8), st.sampled_from([1.5, 2.0, 4.0]),
       st.sampled_from([0.05, 0.001]))
def test_equal_counts_never_bound_a_divergence_above_zero(counts: list[int], order: float, level: float) -> None:
    """Identical samples: every p_lo <= k/n <= q_hi, so the sum is at most 1 and the bound at most 0."""
    n = max(1, sum(counts))
    k = np.asarray(counts)
    assert renyi_lower_bound(k, n, k, n, order, level) <= 1e-12


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 200), st.integers(0, 200)), min_size=2, max_size=8),
       st.sampled_from([1.5, 2.0, 3.0, 8.0]))
def test_the_bound_trails_the_plug_in_estimate(cells: list[tuple[int, int]], order: float) -> None:
    k_p, k_q = np.asarray([c[0] for c in cells]), np.asarray([c[1] for c in cells])
    n_p, n_q = max(1, int(k_p.sum())), max(1, int(k_q.sum()))
    if k_p.sum() == 0:
        assert renyi_lower_bound(k_p, n_p, k_q, n_q, order, 0.05) == -math.inf
        return
    assert renyi_lower_bound(k_p, n_p, k_q, n_q, order, 0.05) <= renyi_point(k_p, n_p, k_q, n_q, order) + 1e-9


def test_a_partition_counts_in_its_own_direction() -> None:
    first, second = np.array([-2.0, -1.0, 0.5, 3.0]), np.array([1.0, 2.0, 2.5, -3.0])
    up = RenyiPartition(2.0, (0.0, 2.0), favours_first=False, upper=True)
    assert [list(x) for x in up.counts(first, second)] == [[1, 1, 2], [2, 1, 1]]
    down = RenyiPartition(2.0, (0.0,), favours_first=True, upper=False)
    assert [list(x) for x in down.counts(first, second)] == [[2, 2], [3, 1]]


def test_a_gaussian_pair_of_twice_the_claimed_rho_is_certified() -> None:
    """rho = 1 against a claim of 0.5, 20000 runs per input (30 % select), level 0.05, seed 0: certified, with
    rho >= 0.84 (the (eps, delta) events of the same pair certify eps only where delta <= 0.2)."""
    f, g = gaussian_pair(1.0, 20_000, 0)
    test = renyi_test("p", "L", f, g, 6000, 0.5, 0.05)
    assert test is not None and test.verdict == "violation"
    assert 0.5 < test.rho_lower_bound < 1.0  # a lower bound: never the pair's true rho of 1
    assert test.bound()["claimed_rho"] == 0.5 and test.to_data()["verdict"] == "violation"


def test_a_leak_no_delta_certifies_at_these_runs_shows_as_a_divergence() -> None:
    """1.375 times the claim (002-alg2's best pair under a variance / 2.25): the Gaussian meets the claim's eps(delta)
    at delta = 0.05 and above, and the Renyi test certifies it on 100000 runs per input at level 0.01 (seed 1)."""
    mu = math.sqrt(2 * 0.6875)
    assert gaussian_eps(mu, 0.05) < zcdp_to_approx_dp(0.5, 0.05) and gaussian_eps(mu, 0.2) < zcdp_to_approx_dp(0.5, 0.2)
    f, g = gaussian_pair(0.6875, 100_000, 1)
    test = renyi_test("p", "L", f, g, 30_000, 0.5, 0.01)
    assert test is not None
    assert test.verdict == "violation", test.detail()


def test_pairs_within_the_claim_are_not_certified() -> None:
    """8 pairs exactly at the claimed rho (the worst a correct program may be), 5000 runs per input, level 0.01:
    each is certified with probability at most 0.01, so 2 or more of 8 has probability below 0.0027 for a sound
    test; none is expected (the bound is conservative: their bounds were rho >= 0.21-0.27 against 0.5 at level 0.05
    on ten such pairs)."""
    certified = 0
    for seed in range(8):
        f, g = gaussian_pair(0.5, 5000, 100 + seed)
        test = renyi_test("p", "L", f, g, 1500, 0.5, 0.01)
        assert test is not None
        certified += test.verdict == "violation"
    assert certified <= 1
