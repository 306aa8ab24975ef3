"""The hypercube audits catch deliberately broken variants (and pass the faithful implementations).

Broken implementations are written here, outside the algorithm classes, as noise-source wrappers
or schedules handed to the unchanged classes:

* ``_ZeroTests``: 004-alg2 draws the test noise lambda'_t but compares N_j + 0 <= T~_j (missing noise
  in the comparison; the tape still shows correct draws) — caught by the segment-end calibration.
* ``_HalvedTestScale``: 004-alg2 draws lambda'_t ~ Lap_Z(1/eps) (wrong noise scale) — caught by
  the scale check of the calibration.
* ``_NoThresholdNoise``: thresholds and tests without noise (A_sub intact) — caught by the
  black-box check.
* ``_FullBudgetEverywhere``: 004-alg1 giving every region's counter the whole eps (wrong
  sensitivity accounting along the path) — caught by the exact check and by the calibration.
* counters on ``InsecureZeroNoise``: 004-alg1 whose counters add no noise — caught by the
  black-box check.

False alarms: each "faithful implementation passes" assertion uses the case's share of the
family budget (4e-5 per sampled case, split over its checks), fixed seeds. Margins are printed
(``pytest -s``): eps lower bound minus claim, p-value against the level, loss minus claim.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from dpstream.audit.hypercube.cases import (
    SAMPLED_SHARE,
    _flip_pair,
    _tiny_streams,
    online_black_box_check,
    online_calibration_check,
    online_exact_check,
    sparse_black_box_check,
    sparse_calibration_check,
)
from dpstream.audit.neighbours import point_replace_pairs
from dpstream.audit.protocol import MechanismFactory
from dpstream.counters.sparse import InhomogeneousSparseCounter, SparseCounter
from dpstream.hypercube.online import OnlineSyntheticData
from dpstream.hypercube.schedule import PrivacySchedule
from dpstream.insecure import InsecureZeroNoise
from dpstream.noise import BaseNoiseSource, DrawKind, NoiseSource, Params, dispatch

EPS, T = 2.0, 16
ONES = (1,) * T
LEVEL = SAMPLED_SHARE / 2


class _Rewrite(BaseNoiseSource):
    """Forwards every draw to ``inner`` and lets a subclass change the parameters or the value it returns."""

    def __init__(self, inner: NoiseSource) -> None:
        self.inner = inner

    def params(self, site: str, params: Params) -> Params:
        return params

    def value(self, site: str, value: Any) -> Any:
        return value

    def _draw(self, site: str, kind: DrawKind, params: Params) -> Any:
        params = self.params(site, params)
        return self.value(site, dispatch(self.inner, site, kind, params))


class _ZeroTests(_Rewrite):
    def value(self, site: str, value: Any) -> Any:
        return 0 if "004-alg2 u3" in site else value


class _HalvedTestScale(_Rewrite):
    def params(self, site: str, params: Params) -> Params:
        return {"scale": params["scale"] / 2} if "004-alg2 u3" in site else params


class _NoThresholdNoise(_Rewrite):
    def value(self, site: str, value: Any) -> Any:
        return 0 if ("004-alg2 u3" in site or "004-alg2 u2" in site) else value


def _sparse(wrapper: type[_Rewrite] | None) -> MechanismFactory:
    if wrapper is None:
        return lambda n: SparseCounter(EPS, T, noise=n)
    return lambda n: SparseCounter(EPS, T, noise=wrapper(n))


def test_sparse_calibration_catches_missing_test_noise() -> None:
    good = sparse_calibration_check(_sparse(None), EPS, T, ONES, runs=1000, seed=11, level=LEVEL)
    bad = sparse_calibration_check(_sparse(_ZeroTests), EPS, T, ONES, runs=1000, seed=11, level=LEVEL)
    print(f"\nmissing test noise: p = {bad.value:.3g} vs level {LEVEL:.2g} (faithful: p = {good.value:.3g})")
    assert good.passed is True
    assert bad.passed is False


def test_sparse_calibration_catches_halved_scale() -> None:
    bad = sparse_calibration_check(_sparse(_HalvedTestScale), EPS, T, ONES, runs=200, seed=12, level=LEVEL)
    print(f"\nhalved test scale: {bad.detail}")
    assert bad.passed is False and "scale" in bad.detail


def test_sparse_black_box_catches_noiseless_segments() -> None:
    claim = SparseCounter(EPS, T, noise=InsecureZeroNoise()).claim
    pair = _flip_pair(ONES, 1)
    good, _ = sparse_black_box_check(_sparse(None), claim, pair, runs=1000, seed=13, level=LEVEL)
    bad, _ = sparse_black_box_check(_sparse(_NoThresholdNoise), claim, pair, runs=1000, seed=13, level=LEVEL)
    assert good.passed is True and good.value is not None
    assert bad.passed is False and bad.value is not None and bad.value > EPS
    print(f"\nnoiseless segments: eps lower bound {bad.value:.3f} vs claim {EPS} (margin {bad.value - EPS:.3f}); "
          f"faithful: {good.value:.3f}")


@dataclasses.dataclass(frozen=True)
class _FullBudgetEverywhere(PrivacySchedule):
    """BROKEN on purpose: every region's counter gets the whole eps (no split along the path)."""

    def __call__(self, j: int, r: int) -> float:
        return self.epsilon


def test_online_exact_and_calibration_catch_a_broken_schedule() -> None:
    d, eps = 2, 1.0
    claim = OnlineSyntheticData(eps, d, noise=InsecureZeroNoise()).claim
    broken = _FullBudgetEverywhere(eps, d)
    exact = online_exact_check(lambda rc: OnlineSyntheticData(eps, d, noise=InsecureZeroNoise(), schedule=broken,
                                                              region_counter=rc), claim, _tiny_streams(d, 4))
    points = [np.full(d, 0.1), np.full(d, 0.9)] * 4
    calibration = online_calibration_check(lambda n: OnlineSyntheticData(eps, d, noise=n, schedule=broken), eps, d,
                                           points, seeds=(1,))
    print(f"\nfull budget per region: exact loss {exact.value:.3f} vs claim {eps} "
          f"(margin {exact.value - eps if exact.value else 0:.3f}); calibration: {calibration.detail[:90]}")
    assert exact.passed is False and exact.value is not None and exact.value > eps
    assert calibration.passed is False


def test_online_black_box_catches_noiseless_counters() -> None:
    d, eps = 2, 1.0
    claim = OnlineSyntheticData(eps, d, noise=InsecureZeroNoise()).claim
    pair = point_replace_pairs([np.full(d, 0.1)] * 6, [(2, np.full(d, 0.9))])[0]

    def noiseless(n: NoiseSource) -> OnlineSyntheticData:
        return OnlineSyntheticData(
            eps, d, noise=n, sample_times={6}, region_counter=lambda region, r0, levels, first, _:
            InhomogeneousSparseCounter(eps, r0, levels, noise=InsecureZeroNoise(), first_time=first))

    good = online_black_box_check(lambda n: OnlineSyntheticData(eps, d, noise=n, sample_times={6}), claim, pair,
                                  runs=200, seed=14, level=SAMPLED_SHARE)
    bad = online_black_box_check(noiseless, claim, pair, runs=200, seed=14, level=SAMPLED_SHARE)
    assert good.passed is True and good.value is not None
    assert bad.passed is False and bad.value is not None and bad.value > eps
    print(f"\nnoiseless counters: eps lower bound {bad.value:.3f} vs claim {eps} (margin {bad.value - eps:.3f}); "
          f"faithful: {good.value:.3f}")
