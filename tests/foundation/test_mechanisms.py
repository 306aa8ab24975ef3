"""Laplace, exponential and discrete Gaussian mechanisms (dpstream.mechanisms)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dpstream.claims import Measure, Neighbour
from dpstream.errors import DPStreamInputError
from dpstream.insecure import InsecureSeededNoise, TapeRecorder
from dpstream.mechanisms import DiscreteGaussianMechanism, ExponentialMechanism, LaplaceMechanism
from dpstream.noise import DrawKind


def test_laplace_mechanism_scale_sites_and_values() -> None:
    mech = LaplaceMechanism(0.5, sensitivity=2.0)
    assert mech.scale == 4.0
    assert (mech.claim.measure, mech.claim.parameter) == (Measure.PURE_DP, 0.5)
    recorder = TapeRecorder(InsecureSeededNoise(0))
    out = mech.release_vector(recorder, "q", [1.0, 2.0])
    draws = recorder.tape.draws
    assert [d.site for d in draws] == ["q i=0", "q i=1"] and {d.params["scale"] for d in draws} == {4.0}
    assert list(out) == pytest.approx([1.0 + draws[0].value, 2.0 + draws[1].value])
    with pytest.raises(DPStreamInputError):
        mech.release(recorder, "r", math.nan)
    assert len(recorder.tape) == 2  # rejected before the draw


@pytest.mark.parametrize(("eps", "sensitivity", "field"), [(0.0, 1.0, "epsilon"), (math.inf, 1.0, "epsilon"),
                                                           (1.0, -1.0, "sensitivity")])
def test_bad_parameters(eps: float, sensitivity: float, field: str) -> None:
    with pytest.raises(DPStreamInputError) as info:
        LaplaceMechanism(eps, sensitivity)
    assert info.value.field == field
    with pytest.raises(DPStreamInputError) as info:
        ExponentialMechanism(eps, sensitivity)
    assert info.value.field == field


def test_exponential_mechanism_law_and_printed_sign() -> None:
    """Selection frequencies follow exp(eps u/(2 Delta)) (default) and exp(-eps u/(2 Delta)) (as printed).
    Fixed seed; chi-square at level 1e-6 each (false alarm for a correct sampler <= 2e-6, fixed outcome)."""
    u = [0.0, 1.0, 3.0]
    n = 4000
    for as_printed, sign in ((False, 1.0), (True, -1.0)):
        mech = ExponentialMechanism(2.0, as_printed=as_printed)
        src = InsecureSeededNoise(99)
        picks = [mech.select(src, f"s{i}", u) for i in range(n)]
        w = np.exp(sign * 2.0 * np.array(u) / 2.0)
        assert stats.chisquare(np.bincount(picks, minlength=3), w / w.sum() * n).pvalue > 1e-6


def test_discrete_gaussian_mechanism_calibration() -> None:
    """sigma^2 = Delta^2/(2 rho) (default) vs the printed Delta/(2 rho) of 002-def2.2 (E-counters-5)."""
    good = DiscreteGaussianMechanism(0.5, sensitivity=3.0)
    assert good.sigma2 == 9.0 and good.true_rho == pytest.approx(0.5)
    printed = DiscreteGaussianMechanism(0.5, sensitivity=3.0, as_printed=True)
    assert printed.sigma2 == 3.0 and printed.true_rho == pytest.approx(1.5)  # rho * Delta
    assert printed.claim.parameter == pytest.approx(1.5) and printed.paper_claim.parameter == 0.5
    assert "AS PRINTED" in printed.claim.note and "PRINTED" not in good.claim.note
    assert good.claim == good.paper_claim
    unit = DiscreteGaussianMechanism(0.5, as_printed=True)
    assert unit.sigma2 == DiscreteGaussianMechanism(0.5).sigma2 == 1.0  # Delta = 1: the two agree
    assert good.claim.measure is Measure.ZCDP and good.claim.neighbour is Neighbour.STREAM_ENTRY


def test_discrete_gaussian_mechanism_release() -> None:
    recorder = TapeRecorder(InsecureSeededNoise(4))
    mech = DiscreteGaussianMechanism(0.25)
    out = mech.release_vector(recorder, "c", [3, 0, 7])
    draws = recorder.tape.draws
    assert all(d.kind is DrawKind.DISCRETE_GAUSSIAN and d.params["sigma2"] == 2.0 for d in draws)
    assert out == [3 + draws[0].value, 0 + draws[1].value, 7 + draws[2].value]
    for bad in (0.5, math.nan, "3"):
        with pytest.raises(DPStreamInputError):
            mech.release(recorder, "x", bad)  # type: ignore[arg-type]
    assert len(recorder.tape) == 3
    with pytest.raises(DPStreamInputError) as info:
        DiscreteGaussianMechanism(0.0)
    assert info.value.field == "rho"
