"""Clopper-Pearson bounds and the eps lower bound, checked against binomial tails computed directly."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dpstream.audit.stats import (
    clopper_pearson_lower,
    clopper_pearson_upper,
    eps_lower_bound,
    eps_lower_bounds,
    split_level,
)
from dpstream.errors import DPStreamInputError


@pytest.mark.parametrize(("k", "n", "a"), [(1, 10, 0.05), (7, 20, 0.01), (500, 1000, 1e-6), (999, 1000, 1e-3)])
def test_cp_bounds_are_the_exact_binomial_quantiles(k: int, n: int, a: float) -> None:
    """Definition: P_{p_lo}[X >= k] = a and P_{p_hi}[X <= k] = a (binomial tails, not the beta function)."""
    lo = clopper_pearson_lower(k, n, a)
    hi = clopper_pearson_upper(k, n, a)
    assert stats.binom.sf(k - 1, n, lo) == pytest.approx(a, rel=1e-6)
    assert stats.binom.cdf(k, n, hi) == pytest.approx(a, rel=1e-6)
    assert lo < k / n < hi


def test_cp_edge_cases() -> None:
    assert clopper_pearson_lower(0, 50, 0.01) == 0.0
    assert clopper_pearson_upper(50, 50, 0.01) == 1.0
    # closed form at k = 0: 1 - a^(1/n)
    assert clopper_pearson_upper(0, 50, 0.01) == pytest.approx(1 - 0.01 ** (1 / 50), rel=1e-9)
    with pytest.raises(DPStreamInputError):
        clopper_pearson_lower(5, 4, 0.1)
    with pytest.raises(DPStreamInputError):
        clopper_pearson_upper(1, 4, 1.5)


def test_eps_lower_bound_formula_and_vectorised_version() -> None:
    k1, n1, k0, n0, a = 600, 1000, 100, 1000, 1e-4
    expected = math.log(clopper_pearson_lower(k1, n1, a / 2) / clopper_pearson_upper(k0, n0, a / 2))
    assert eps_lower_bound(k1, n1, k0, n0, a) == pytest.approx(expected, rel=1e-12)
    vec = eps_lower_bounds(np.array([k1, 0, 5]), n1, np.array([k0, 10, 1000]), n0, a)
    assert vec[0] == pytest.approx(expected, rel=1e-9)
    assert vec[1] == -math.inf  # no event under f: nothing to bound
    assert vec[2] == pytest.approx(eps_lower_bound(5, n1, 1000, n0, a), rel=1e-9)
    # delta reduces the bound: log((p_lo - delta) / p_hi)
    with_delta = eps_lower_bound(k1, n1, k0, n0, a, delta=0.1)
    assert with_delta == pytest.approx(
        math.log((clopper_pearson_lower(k1, n1, a / 2) - 0.1) / clopper_pearson_upper(k0, n0, a / 2)), rel=1e-12)


def test_eps_lower_bound_is_below_the_truth_at_the_stated_rate() -> None:
    """Frequentist check of the bound on exact binomial counts: P[eps_lb > true log ratio] <= a.

    p1 = 0.3, p0 = 0.1 (true log ratio ln 3); the probability that eps_lb exceeds ln 3 is summed
    exactly over all (k1, k0) with the binomial pmf (no sampling, so no false alarm).
    """
    n, a, p1, p0 = 60, 0.2, 0.3, 0.1
    truth = math.log(p1 / p0)
    k = np.arange(n + 1)
    k1, k0 = np.meshgrid(k, k, indexing="ij")
    lb = eps_lower_bounds(k1.ravel(), n, k0.ravel(), n, a).reshape(k1.shape)
    assert lb[40, 5] == pytest.approx(eps_lower_bound(40, n, 5, n, a), rel=1e-9)
    prob = np.outer(stats.binom.pmf(k, n, p1), stats.binom.pmf(k, n, p0))
    assert float(prob[lb > truth].sum()) <= a


def test_split_level() -> None:
    assert split_level(1e-4, 4) == pytest.approx(2.5e-5)
    with pytest.raises(DPStreamInputError):
        split_level(1e-4, 0)
