"""Exact privacy loss: closed forms against independent computations, and the printed-scale findings."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from scipy import integrate

from dpstream.audit.counters.mechanisms import exponential_mechanism_law
from dpstream.audit.counters.models import binary_tree_counter_model, tree_aggregation_model
from dpstream.audit.exact import (
    ExactLoss,
    LossFigures,
    exact_loss_finite,
    exact_loss_linear,
    exact_loss_pointwise,
    finite_renyi,
    finite_sup_loss,
    integer_grid,
    renyi_shift,
    sup_loss_shift,
)
from dpstream.audit.linear_model import LinearReleaseModel, NoiseLaw
from dpstream.audit.neighbours import NeighbourPair, counter_positions, stream_entry_pairs
from dpstream.claims import Neighbour, PrivacyClaim
from dpstream.errors import DPStreamInputError

PURE = PrivacyClaim.pure(1.0, Neighbour.STREAM_ENTRY, "test")


@pytest.mark.parametrize(("b", "d", "alpha"), [(1.0, 1.0, 2.0), (2.0, 0.5, 1.5), (0.5, 1.0, 8.0)])
def test_laplace_renyi_closed_form_matches_numerical_integration(b: float, d: float, alpha: float) -> None:
    def integrand(x: float) -> float:
        p = math.exp(-abs(x) / b) / (2 * b)
        q = math.exp(-abs(x - d) / b) / (2 * b)
        return float(p**alpha * q ** (1 - alpha))

    total, _ = integrate.quad(integrand, -60 * b, 60 * b, points=[0.0, d], limit=200)
    assert renyi_shift(NoiseLaw.laplace(b), d, alpha) == pytest.approx(math.log(total) / (alpha - 1), rel=1e-7)


def test_discrete_gaussian_renyi_below_continuous_and_close_for_large_sigma() -> None:
    """D_alpha(N_Z(0,s2) || N_Z(d,s2)) = alpha d^2/(2 s2) + (log Z(alpha d) - log Z(0))/(alpha - 1).

    Z(c) = sum_y exp(-(y - c)^2 / (2 s2)) <= Z(0), so D_alpha <= alpha d^2/(2 s2)."""
    for s2, d, alpha in [(0.3, 1, 2.0), (1.0, 1, 3.0), (5.0, 2, 1.5), (25.0, 1, 16.0)]:
        value = renyi_shift(NoiseLaw.discrete_gaussian(s2), d, alpha)
        gauss = alpha * d * d / (2 * s2)
        # independent evaluation of the theta-function correction by direct summation
        y = np.arange(-400, 401, dtype=np.float64)
        shifted = np.log(np.exp(-((y - alpha * d) ** 2) / (2 * s2)).sum())
        plain = np.log(np.exp(-(y**2) / (2 * s2)).sum())
        assert value == pytest.approx(gauss + (shifted - plain) / (alpha - 1), rel=1e-9, abs=1e-12)
        assert value <= gauss + 1e-12
    assert renyi_shift(NoiseLaw.discrete_gaussian(25.0), 1, 4.0) == pytest.approx(4 / 50, rel=1e-6)


def test_sup_loss_of_single_terms() -> None:
    assert sup_loss_shift(NoiseLaw.laplace(2.0), 1.0) == 0.5
    assert sup_loss_shift(NoiseLaw.discrete_laplace(2.0), -3.0) == 1.5
    assert sup_loss_shift(NoiseLaw.discrete_laplace(2.0), 0.5) == math.inf  # disjoint supports
    assert sup_loss_shift(NoiseLaw.discrete_gaussian(2.0), 1.0) == math.inf
    assert sup_loss_shift(NoiseLaw.discrete_gaussian(2.0), 0.0) == 0.0


def test_printed_binary_tree_scale_exposed() -> None:
    """001-alg10 as printed: an input at t=1 enters floor(log2 T)+1 nodes of scale log2(T)/eps."""
    for T in (2, 5, 8, 12, 16):
        pairs = stream_entry_pairs([0] * T, counter_positions(T, every=True))
        printed = exact_loss_linear(binary_tree_counter_model(1.0, T, as_printed=True), pairs, PURE)
        expected = (math.floor(math.log2(T)) + 1) / math.log2(T)
        assert printed.value == pytest.approx(expected, rel=1e-12)
        assert printed.passed is False
        fixed = exact_loss_linear(binary_tree_counter_model(1.0, T), pairs, PURE)
        assert fixed.value == pytest.approx(1.0, rel=1e-12) and fixed.passed is True


def test_printed_tree_aggregation_variance_exposed() -> None:
    """002-alg3 as printed (sigma^2 = log2 T/(2 rho)): effective rho = rho (floor(log2 T)+1)/log2 T, minus
    the small discrete-Gaussian correction; the default meets rho."""
    rho, T = 0.5, 16
    claim = PrivacyClaim.zcdp(rho, Neighbour.STREAM_ENTRY, "test")
    pairs = stream_entry_pairs([0] * T, counter_positions(T, every=True))
    printed = exact_loss_linear(tree_aggregation_model(rho, T, as_printed=True), pairs, claim)
    assert printed.passed is False
    assert printed.value == pytest.approx(rho * 5 / 4, rel=1e-3)
    fixed = exact_loss_linear(tree_aggregation_model(rho, T), pairs, claim)
    assert fixed.passed is True and fixed.value == pytest.approx(rho, rel=1e-9)  # theta correction ~e^-100


def test_non_injective_model_is_inconclusive_above_claim() -> None:
    # two noisy statistics of the same input, only their sum released: W = [1, 1] is not injective
    law = NoiseLaw.laplace(0.5)
    model = LinearReleaseModel.build([("a", law, {0: 1.0}), ("b", law, {0: 1.0})], [{0: 1.0, 1: 1.0}], 1)
    pair = NeighbourPair((0.0,), (1.0,), "x", Neighbour.STREAM_ENTRY)
    result = exact_loss_linear(model, [pair], PURE)
    assert result.value == pytest.approx(4.0)
    assert result.passed is None


def test_finite_laws_exponential_mechanism() -> None:
    u = (0.0, 4.0, 8.0, 12.0)
    v = (1.0, 3.0, 7.0, 11.0)  # candidate 0 up by 1, others down by 1 (l_inf distance 1)
    p, q = exponential_mechanism_law(u, 1.0, 1.0), exponential_mechanism_law(v, 1.0, 1.0)
    z_u = sum(math.exp(x / 2) for x in u)
    z_v = sum(math.exp(x / 2) for x in v)
    by_hand = abs(math.log(math.exp(0.5) / z_v) - math.log(1.0 / z_u))
    assert finite_sup_loss(p, q) == pytest.approx(by_hand, rel=1e-12)
    assert by_hand <= 1.0
    result = exact_loss_finite([("u/v", p, q)], PURE)
    assert result.passed is True
    assert finite_renyi(p, q, 2.0) == pytest.approx(
        math.log(sum(p[i] ** 2 / q[i] for i in range(4))), rel=1e-12)
    assert finite_sup_loss({0: 1.0}, {1: 1.0}) == math.inf


def test_pointwise_hook_matches_linear_model_for_discrete_laplace() -> None:
    """(c) on a one-step discrete-Laplace release: the enumerated sup equals |d|/b; the truncated mass is stated."""
    b = 1.5
    law = NoiseLaw.discrete_laplace(b)

    def log_p(o: Any, inputs: Any) -> float:
        return float(law.log_pdf(float(o[0]) - float(inputs[0])))

    pair = NeighbourPair((0,), (1,), "t=1", Neighbour.STREAM_ENTRY)
    wide = exact_loss_pointwise(log_p, lambda pr: integer_grid([0], 80), [pair], PURE)
    assert wide.value == pytest.approx(1 / b, rel=1e-12)
    assert wide.passed is True  # 0.667 <= eps = 1, truncated mass below 1e-9
    assert wide.data["values"] == [pytest.approx(1 / b)]
    narrow = exact_loss_pointwise(log_p, lambda pr: integer_grid([0], 3), [pair], PURE)
    assert narrow.passed is None  # too much mass left out to certify a pass
    assert "truncated mass" in narrow.detail

    tight = NoiseLaw.discrete_laplace(0.5)  # loss 2 > 1: a failure is certain even on a small grid

    def log_p_tight(o: Any, inputs: Any) -> float:
        return float(tight.log_pdf(float(o[0]) - float(inputs[0])))

    failing = exact_loss_pointwise(log_p_tight, lambda pr: integer_grid([0], 3), [pair], PURE)
    assert failing.passed is False and failing.value == pytest.approx(2.0)


# --- the one result type: ExactLoss -----------------------------------------------------------------


def test_exact_loss_composes_and_keeps_its_parts() -> None:
    a = ExactLoss(0.5, 0.75, "region A", {"S_tilde": 0.25}, per_time=(0.5,))
    b = ExactLoss.exact(1.0, "region B", {"S_tilde": 0.5, "alg2": 0.5}, per_time=(0.0, 1.0))
    total = a + b
    assert (total.lower, total.upper, total.width) == (1.5, 1.75, 0.25)
    assert total.parts == {"S_tilde": 0.75, "alg2": 0.5}
    assert total.per_time == (0.5, 1.0) and total.where == "region A; region B"
    assert ExactLoss.zero().value == 0.0


def test_exact_loss_refuses_mixed_measures() -> None:
    with pytest.raises(DPStreamInputError, match="alpha"):
        ExactLoss.exact(1.0, alpha=2.0)  # an order belongs to a zCDP loss
    with pytest.raises(DPStreamInputError, match="measure"):
        ExactLoss.exact(1.0) + ExactLoss.renyi(1.0, 2.0)
    figures = LossFigures(PrivacyClaim.zcdp(0.5, Neighbour.STREAM_ENTRY, "test"), (2.0, 4.0))
    with pytest.raises(DPStreamInputError, match="add_curve"):
        figures.add("pair", ExactLoss.exact(0.1))
    with pytest.raises(DPStreamInputError, match="alpha"):
        figures.add_curve("pair", [ExactLoss.renyi(0.1, 2.0)])  # alpha = 4 is missing


def test_loss_figures_compare_the_upper_end_with_the_claim() -> None:
    claim = PrivacyClaim.pure(1.0, Neighbour.STREAM_ENTRY, "test")
    figures = LossFigures(claim, ())
    figures.add("inside", ExactLoss(0.5, 0.9))
    figures.add("bracket across the claim", ExactLoss(0.9, 1.2))
    result = figures.result("test")
    assert result.passed is False and result.value == 1.2 and "bracket across the claim" in result.detail
    zcdp = LossFigures(PrivacyClaim.zcdp(0.5, Neighbour.STREAM_ENTRY, "test"), (2.0, 4.0))
    zcdp.add_curve("pair", [ExactLoss.renyi(0.8, 2.0), ExactLoss.renyi(2.4, 4.0)])
    assert zcdp.result("test").value == pytest.approx(0.6)  # max(0.8 / 2, 2.4 / 4)
