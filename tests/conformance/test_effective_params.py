"""A transcript whose values are less spread than its stated parameters says so (implied.effective_draws).

A sampler that divides its scale inside, or takes a variance for a standard deviation, reports the intended
parameters with values of another law: the law tests fail, and transcript mode takes the parameters the values
show as the program's (docs/conformance.md, "Transcript mode", step 4). Expected values: the maximum-likelihood
estimators of the three laws (Laplace: mean |z|; discrete Laplace: E|z| = 2q / (1 - q^2), q = e^(-1/t); discrete
Gaussian: E z^2 = sigma^2 + 1/12 when rounded), on 4000 values drawn here from the true laws with fixed seeds
(dpstream.noise.data_rng): deterministic. Over seeds, the tolerances (8 % for the Laplace laws, 5 standard errors
of 1/sqrt(4000); 10 % for the variance, 4.5 standard errors of sqrt(2/4000)) would be exceeded with probability
below 1e-5 each."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpstream.conformance.implied import effective_draws
from dpstream.noise import DrawKind, data_rng
from dpstream.tape import Draw

N = 4000


def _runs(kind: DrawKind, params: dict[str, float], values: np.ndarray) -> list[list[Draw]]:
    """One draw per run at one site, as the law runs report them."""
    v = [float(x) if kind is DrawKind.LAPLACE else int(x) for x in values]
    return [[Draw("s t=1", kind, dict(params), x)] for x in v]


def test_laplace_values_at_two_thirds_of_the_stated_scale() -> None:
    z = data_rng(1).laplace(0.0, 2.0, N)
    runs, found = effective_draws(_runs(DrawKind.LAPLACE, {"scale": 3.0}, z), {"s t=1"})
    assert len(found) == 1 and found[0].stated == {"scale": 3.0} and found[0].draws == N
    assert found[0].estimated["scale"] == pytest.approx(2.0, rel=0.08)
    estimate = found[0].estimated["scale"]
    assert all(r[0].params["scale"] == estimate and r[0].value == x for r, x in zip(runs, z, strict=True))
    assert f"{found[0].estimated['scale']:.4g}" in found[0].describe()


def test_discrete_laplace_scale_from_its_mean_absolute_value() -> None:
    t = 2.0
    q = math.exp(-1 / t)
    gen = data_rng(2)
    z = gen.geometric(1 - q, N) - gen.geometric(1 - q, N)  # P(z) proportional to q^|z|
    _, found = effective_draws(_runs(DrawKind.DISCRETE_LAPLACE, {"scale": 4.0}, z), {"s t=1"})
    assert found and found[0].estimated["scale"] == pytest.approx(t, rel=0.08)


def test_discrete_gaussian_variance_a_third_of_the_stated() -> None:
    z = np.rint(data_rng(3).normal(0.0, math.sqrt(20.0), N))
    _, found = effective_draws(_runs(DrawKind.DISCRETE_GAUSSIAN, {"sigma2": 60.0}, z), {"s t=1"})
    assert found and found[0].estimated["sigma2"] == pytest.approx(20.0 + 1 / 12, rel=0.1)


def test_values_as_spread_as_stated_or_more_are_left_alone() -> None:
    gen = data_rng(4)
    for scale in (2.0, 3.0):
        runs = _runs(DrawKind.LAPLACE, {"scale": 2.0}, gen.laplace(0.0, scale, N))
        out, found = effective_draws(runs, {"s t=1"})
        assert not found and out == runs


def test_a_group_no_law_test_flagged_is_left_alone() -> None:
    runs = _runs(DrawKind.LAPLACE, {"scale": 3.0}, data_rng(5).laplace(0.0, 1.0, N))
    out, found = effective_draws(runs, {"another site"})
    assert not found and out == runs
