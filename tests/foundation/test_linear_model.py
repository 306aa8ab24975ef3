"""Linear release models (dpstream.audit.linear_model): the noise laws, the model algebra, its validation.

Every expected value is computed independently of the module (closed forms, direct sums,
numerical integration), never read back from the code under test.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate

from dpstream.audit.linear_model import LinearReleaseModel, NoiseLaw, discrete_gaussian_log_normaliser
from dpstream.errors import DPStreamInputError
from dpstream.noise import DrawKind


@pytest.mark.parametrize("b", [0.3, 1.0, 7.5])
def test_laplace_law(b: float) -> None:
    law = NoiseLaw.laplace(b)
    assert law.variance() == pytest.approx(2 * b * b, rel=1e-12)
    total, _ = integrate.quad(lambda x: math.exp(float(law.log_pdf(x))), -80 * b, 80 * b, points=[0.0], limit=200)
    assert total == pytest.approx(1.0, rel=1e-9)
    assert float(law.log_pdf(b)) == pytest.approx(-1.0 - math.log(2 * b), rel=1e-12)
    assert not law.is_integer and law.describe() == f"Lap({b:g})"


@pytest.mark.parametrize("b", [0.4, 1.5, 6.0])
def test_discrete_laplace_law(b: float) -> None:
    """pmf (1-p)/(1+p) p^|z|, p = e^{-1/b} (004-sec2.4): sums to 1, variance 2p/(1-p)^2."""
    law = NoiseLaw.discrete_laplace(b)
    p = math.exp(-1 / b)
    z = np.arange(-4000, 4001)
    pmf = np.exp(law.log_pdf(z.astype(np.float64)))
    assert float(pmf.sum()) == pytest.approx(1.0, rel=1e-12)
    assert float(pmf[4000 + 3]) == pytest.approx((1 - p) / (1 + p) * p**3, rel=1e-12)
    assert law.variance() == pytest.approx(float((z * z * pmf).sum()), rel=1e-9)
    assert law.variance() == pytest.approx(2 * p / (1 - p) ** 2, rel=1e-12)
    assert float(law.log_pdf(0.5)) == -math.inf  # off the integers


@pytest.mark.parametrize("s2", [0.05, 0.5, 3.0, 40.0])
def test_discrete_gaussian_law(s2: float) -> None:
    """pmf e^{-z^2/(2 s2)} / Z (002-def2.2), Z summed directly here; variance below s2 (strictly for small s2)."""
    law = NoiseLaw.discrete_gaussian(s2)
    y = np.arange(-2000, 2001, dtype=np.float64)
    w = np.exp(-(y * y) / (2 * s2))
    assert discrete_gaussian_log_normaliser(s2) == pytest.approx(math.log(float(w.sum())), rel=1e-12)
    assert law.variance() == pytest.approx(float((y * y * w).sum() / w.sum()), rel=1e-9)
    assert law.variance() <= s2 * (1 + 1e-12)
    assert float(np.exp(law.log_pdf(y)).sum()) == pytest.approx(1.0, rel=1e-12)
    assert float(law.log_pdf(1.25)) == -math.inf


def test_law_validation() -> None:
    with pytest.raises(DPStreamInputError) as info:
        NoiseLaw(DrawKind.COIN, 1.0)
    assert info.value.field == "kind"
    for bad in (0.0, -1.0, math.inf, math.nan):
        with pytest.raises(DPStreamInputError):
            NoiseLaw.laplace(bad)


def _two_step_model() -> LinearReleaseModel:
    """s_1 = f(1) + z_a, s_2 = f(1) + f(2) + z_b; releases r_1 = s_1, r_2 = s_1 + s_2."""
    law = NoiseLaw.laplace(2.0)
    return LinearReleaseModel.build([("a", law, {0: 1.0}), ("b", law, {0: 1.0, 1: 1.0})],
                                    [{0: 1.0}, {0: 1.0, 1: 1.0}], 2)


def test_model_algebra_by_hand() -> None:
    model = _two_step_model()
    f = [3.0, -1.0]
    assert list(model.mean(f)) == [3.0, 3.0 + 2.0]  # r_1 = f1, r_2 = f1 + (f1 + f2)
    assert list(model.error({"a": 0.5, "b": -2.0})) == [0.5, 0.5 - 2.0]
    assert list(model.error_variance()) == [8.0, 16.0]  # 2 b^2 = 8 per term
    assert list(model.statistic_shift(f, [2.0, -1.0])) == [1.0, 1.0]
    assert model.injective and model.input_length == 2 and model.n_releases == 2
    r = [3.5, 3.5 + (2.0 - 2.0)]
    assert model.noise_from_releases(r, f) == pytest.approx([0.5, -2.0], abs=1e-12)
    expected_ll = 2 * (-math.log(4.0)) - 0.5 / 2.0 - 2.0 / 2.0
    assert model.log_likelihood(r, f) == pytest.approx(expected_ll, rel=1e-12)


def test_model_validation_and_non_injective_models() -> None:
    law = NoiseLaw.laplace(1.0)
    with pytest.raises(DPStreamInputError) as info:
        LinearReleaseModel.build([("a", law, {0: 1.0}), ("a", law, {0: 1.0})], [{0: 1.0}], 1)
    assert info.value.field == "sites"  # sites must be unique
    with pytest.raises(DPStreamInputError):
        LinearReleaseModel(("a",), (law,), np.zeros((2, 1)), np.zeros((1, 1)))
    with pytest.raises(DPStreamInputError):
        LinearReleaseModel(("a",), (law,), np.zeros((1, 1)), np.zeros((1, 2)))
    summed = LinearReleaseModel.build([("a", law, {0: 1.0}), ("b", law, {0: 1.0})], [{0: 1.0, 1: 1.0}], 1)
    assert not summed.injective
    with pytest.raises(DPStreamInputError):
        summed.noise_from_releases([1.0], [0.0])
