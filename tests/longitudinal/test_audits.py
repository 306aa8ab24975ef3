"""The longitudinal audits catch deliberately broken variants (and pass the correct implementations).

Each broken variant is audited with the same check, sample size and level as its registered
case (``dpstream.audit.longitudinal.cases``); the margin by which it is caught is asserted and
printed (run with ``-s`` to see it). False-alarm probability of the "correct passes" assertions:
at most the level of each check (about 2e-5 and 1.5e-5), fixed seeds.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from dpstream.audit.calibration import calibration_linear
from dpstream.audit.longitudinal import cases as suite
from dpstream.audit.longitudinal.checks import fixed_window_calibration, fixed_window_exact_output
from dpstream.audit.longitudinal.loss import cumulative_model, z_vector
from dpstream.audit.protocol import derive_seed, sample_transcripts
from dpstream.counters.tree_aggregation import TreeAggregationCounter
from dpstream.longitudinal.bounds import fixed_window_sigma2, n_pad_corollary_3_3
from dpstream.longitudinal.cumulative import CumulativeSynthesizer
from dpstream.longitudinal.fixed_window import FixedWindowSynthesizer
from dpstream.longitudinal.generators import random_matrix
from dpstream.noise import BaseNoiseSource, DrawKind, NoiseSource, Params

T, K, RHO, N = suite.T1, suite.K1, suite.RHO1, suite.N1
SIGMA2 = fixed_window_sigma2(T, K, RHO)
N_PAD = n_pad_corollary_3_3(SIGMA2, T, K, suite.BETA1)
LEVEL1 = suite.SAMPLED_SHARE / 3
RUNS1 = 2 * suite.EFFORT1.quick
X = random_matrix(N, T, seed=suite.DATA_SEED)


class HalvedNoise(FixedWindowSynthesizer):
    """BROKEN: 002-alg1 drawing N_Z(0, sigma^2 / 2) (noise scale divided by sqrt 2)."""

    def noise_variance(self) -> float:
        return self.sigma2 / 2


class _DropLater(BaseNoiseSource):
    """Forwards every draw except the u3 draws of rounds t > k, which return 0 (a missing noise draw)."""

    def __init__(self, inner: NoiseSource, k: int) -> None:
        self.inner, self.k = inner, k

    def _draw(self, site: str, kind: DrawKind, params: Params) -> Any:
        if site.startswith("002-alg1 u3 ") and int(site.split("t=")[1].split()[0]) > self.k:
            return 0
        return self.inner._draw(site, kind, params)  # type: ignore[attr-defined]


class _AlwaysUp(BaseNoiseSource):
    """Forwards every draw except the rounding coins, which always say b_z = +1/2 (biased rounding)."""

    def __init__(self, inner: NoiseSource) -> None:
        self.inner = inner

    def _draw(self, site: str, kind: DrawKind, params: Params) -> Any:
        if kind is DrawKind.COIN:
            return True
        return self.inner._draw(site, kind, params)  # type: ignore[attr-defined]


def _calibrate(factory: Any) -> Any:
    runs = sample_transcripts(factory, [tuple(X[:, j]) for j in range(T)], RUNS1, derive_seed(7, "broken"))
    return fixed_window_calibration(runs, X, T, K, N_PAD, SIGMA2, LEVEL1)


def test_correct_fixed_window_passes_calibration() -> None:
    result = _calibrate(lambda n: FixedWindowSynthesizer(T, K, RHO, noise=n, n_pad=N_PAD))
    assert result.passed is True, result.detail


@pytest.mark.parametrize(
    ("name", "factory"),
    [
        ("noise variance halved", lambda n: HalvedNoise(T, K, RHO, noise=n, n_pad=N_PAD)),
        ("noise missing for t > k", lambda n: FixedWindowSynthesizer(T, K, RHO, noise=_DropLater(n, K), n_pad=N_PAD)),
        ("rounding always up", lambda n: FixedWindowSynthesizer(T, K, RHO, noise=_AlwaysUp(n), n_pad=N_PAD)),
        ("printed variance (sensitivity 1 under substitution)",
         lambda n: FixedWindowSynthesizer(T, K, RHO, noise=n, n_pad=N_PAD, as_printed=True)),
    ],
)
def test_broken_fixed_window_caught_by_calibration(name: str, factory: Any) -> None:
    result = _calibrate(factory)
    smallest = min(result.data["p_values"])
    print(f"\n{name}: {result.detail}; margin: smallest p {smallest:.3g} vs level/#tests "
          f"{LEVEL1 / len(result.data['p_values']):.3g}")
    assert result.passed is False


def test_printed_variance_caught_by_exact_loss() -> None:
    """Wrong sensitivity (1 instead of sqrt 2 under substitution): the exact output-level loss exceeds rho."""
    printed = fixed_window_sigma2(T, K, RHO, as_printed=True)
    claim = FixedWindowSynthesizer(T, K, RHO, n_pad=1, noise=_Zero()).claim
    result = fixed_window_exact_output(T, K, printed, claim)
    print(f"\n{result.detail}")
    assert result.passed is False and result.value is not None and result.value > 1.7 * RHO
    assert fixed_window_exact_output(T, K, SIGMA2, claim).passed is True


class _Zero(BaseNoiseSource):
    def _draw(self, site: str, kind: DrawKind, params: Params) -> Any:
        return {DrawKind.DISCRETE_GAUSSIAN: 0, DrawKind.COIN: True}.get(kind, ())


# --- 002-alg2 ---------------------------------------------------------------------------------------

T2, RHO2, N2 = suite.T2, suite.RHO2, suite.N2
LEVEL2 = suite.SAMPLED_SHARE / 4
X2 = random_matrix(N2, T2, seed=suite.DATA_SEED)


def _cumulative_calibration(factory: Any) -> Any:
    default = CumulativeSynthesizer(T2, RHO2, noise=_Zero())
    model = cumulative_model(T2, default.counter_rho)
    runs = sample_transcripts(factory, [tuple(X2[:, j]) for j in range(T2)], 2 * suite.EFFORT2.quick,
                              derive_seed(7, "broken-2"))
    return calibration_linear(model, runs, z_vector(X2, T2), LEVEL2, encode=suite._s_tilde)


def test_correct_cumulative_passes_calibration() -> None:
    assert _cumulative_calibration(lambda n: CumulativeSynthesizer(T2, RHO2, noise=n)).passed is True


@pytest.mark.parametrize(
    ("name", "factory"),
    [
        ("counter budgets x4 (noise scale halved)", lambda n: CumulativeSynthesizer(
            T2, RHO2, noise=n, counter_factory=lambda r, h, s: TreeAggregationCounter(4 * r, h, noise=s),
            substitution_factor=2.0)),
        ("as printed (budgets not halved for substitution)", lambda n: CumulativeSynthesizer(T2, RHO2, noise=n,
                                                                                             as_printed=True)),
        ("counter 1 without noise", lambda n: CumulativeSynthesizer(
            T2, RHO2, noise=n,
            counter_factory=lambda r, h, s: TreeAggregationCounter(r * (1e9 if h == T2 else 0.5), h, noise=s),
            substitution_factor=1.0)),
    ],
)
def test_broken_cumulative_caught_by_calibration(name: str, factory: Any) -> None:
    result = _cumulative_calibration(factory)
    print(f"\n{name}: {result.detail}")
    assert result.passed is False


def test_exact_loss_margins_of_registered_expect_failure_cases() -> None:
    """The registered as-printed cases fail their exact checks by a stated margin (value / claim)."""
    from dpstream.audit.registry import Profile
    from dpstream.audit.runner import run_case

    for case in suite.cases():
        if not case.expect_failure:
            continue
        report = run_case(case, Profile.QUICK, seed=0)
        values = [c.value for c in report.checks if c.passed is False and c.value is not None]
        print(f"\n{case.component}: exact loss {values} vs claim {case.claim.parameter}")
        assert values and min(values) > 1.15 * case.claim.parameter
        assert np.isfinite(values).all()
