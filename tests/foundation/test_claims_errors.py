"""Privacy claims as values (dpstream.claims) and the shared validators (dpstream.errors)."""

from __future__ import annotations

import json
import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from dpstream.claims import Measure, Neighbour, PrivacyClaim, zcdp_to_approx_dp
from dpstream.errors import (
    DPStreamInputError,
    HorizonExceededError,
    StreamRangeError,
    require_finite_real,
    require_int_at_least,
    require_integer_value,
    require_positive_finite,
    require_probability,
    require_stream_sum,
    require_stream_value,
)


def test_claim_values_and_text() -> None:
    pure = PrivacyClaim.pure(0.5, Neighbour.EVENT, "001-thm3.2", note="a note")
    assert (pure.measure, pure.parameter, pure.symbol) == (Measure.PURE_DP, 0.5, "eps")
    assert pure.describe() == ("eps=0.5 pure DP; neighbours: one event added or removed at one time "
                               "(||f - f'||_nabla = 1) [001-thm3.2]; a note")
    z = PrivacyClaim.zcdp(0.25, Neighbour.INDIVIDUAL_SUBSTITUTE, "002-thm3.1")
    assert z.describe().startswith("rho=0.25 zCDP; neighbours: one individual's whole sequence substituted")
    off = PrivacyClaim.not_private(Neighbour.EVENT, "001-sec5.3", "baseline 1")
    assert off.describe().startswith("NOT differentially private") and off.symbol == "-"
    for claim in (pure, z, off):
        doc = claim.to_dict()
        assert json.loads(json.dumps(doc, allow_nan=False)) == doc  # JSON-compatible (inf written as null)
    assert off.to_dict()["parameter"] is None
    assert {n.description for n in Neighbour} and len({n.description for n in Neighbour}) == len(Neighbour)


@pytest.mark.parametrize("bad", [0.0, -1.0, math.inf, math.nan])
def test_claim_parameter_validation(bad: float) -> None:
    with pytest.raises(DPStreamInputError) as info:
        PrivacyClaim.pure(bad, Neighbour.EVENT, "x")
    assert info.value.field == "parameter"
    with pytest.raises(DPStreamInputError):
        PrivacyClaim.zcdp(bad, Neighbour.EVENT, "x")
    with pytest.raises(DPStreamInputError):
        PrivacyClaim(Measure.NOT_PRIVATE, 1.0, Neighbour.EVENT, "x")  # not-private claims carry inf


def test_zcdp_to_approx_dp_formula() -> None:
    """Canonne-Kamath-Steinke 2020: below Bun-Steinke's rho + 2 sqrt(rho ln 1/delta); at rho = 1, delta = 1e-3 the
    value OpenDP's make_zCDP_to_approxDP gives (5.419919168, proofs/proof_zcdp_conversion.py)."""
    rho, delta = 0.5, 1e-3
    assert zcdp_to_approx_dp(rho, delta) < rho + 2 * math.sqrt(rho * math.log(1000)) - 0.5
    assert zcdp_to_approx_dp(1.0, 1e-3) == pytest.approx(5.419919168, abs=1e-8)
    for bad_delta in (0.0, 1.0, -0.1):
        with pytest.raises(DPStreamInputError) as info:
            zcdp_to_approx_dp(rho, bad_delta)
        assert info.value.field == "delta"


@pytest.mark.parametrize(("sigma", "delta"), [(0.5, 0.1), (1.0, 1e-3), (3.0, 1e-6)])
def test_zcdp_to_approx_dp_is_sound_for_the_gaussian_mechanism(sigma: float, delta: float) -> None:
    """The black-box zCDP check compares with the eps(delta) of zcdp_to_approx_dp. For the Gaussian
    mechanism of sensitivity 1 (rho = 1/(2 sigma^2)) the exact privacy profile is
    delta(eps) = Phi(1/(2 sigma) - eps sigma) - e^eps Phi(-1/(2 sigma) - eps sigma) (Balle-Wang 2018);
    it must not exceed delta at eps(delta)."""
    rho = 1 / (2 * sigma**2)
    eps = zcdp_to_approx_dp(rho, delta)
    half = 1 / (2 * sigma)
    exact = stats.norm.cdf(half - eps * sigma) - math.exp(eps) * stats.norm.cdf(-half - eps * sigma)
    assert 0.0 < exact <= delta


def test_validators() -> None:
    assert require_finite_real("x", 3) == 3.0 and require_finite_real("x", np.float32(0.5)) == 0.5
    assert require_finite_real("x", Fraction(1, 4)) == 0.25
    for bad in (True, math.nan, math.inf, "1", None, 1 + 0j):
        with pytest.raises(DPStreamInputError) as info:
            require_finite_real("x", bad)
        assert info.value.field == "x" and info.value.value is bad
    assert require_positive_finite("eps", 2) == 2.0
    with pytest.raises(DPStreamInputError, match="must be > 0"):
        require_positive_finite("eps", 0)
    assert require_int_at_least("T", np.int64(4), 1) == 4
    for bad_int in (0, 2.0, True, "3"):
        with pytest.raises(DPStreamInputError, match=">= 1"):
            require_int_at_least("T", bad_int, 1)
    assert require_integer_value("f(t)", 2.0) == 2 and require_integer_value("f(t)", -3) == -3
    for bad_val in (2.5, True, math.nan, "2"):
        with pytest.raises(DPStreamInputError):
            require_integer_value("f(t)", bad_val)
    assert require_probability("beta", 0.05) == 0.05
    for bad_p in (0.0, 1.0, 1.5):
        with pytest.raises(DPStreamInputError):
            require_probability("beta", bad_p)
    M = 2**53 - 1  # the range (docs/counters.md, "Range")
    for good, integer in ((M, False), (-M, True), (float(M), True), (np.int64(M), True), (Fraction(1, 4), False),
                          (np.float32(0.5), False), (0, True)):
        assert require_stream_value("f(t)", good, integer=integer) == float(good)
    for bad_range in (M + 1, -M - 1, 2**53 + 1, 10**400, -(10**5000), 2.0**53, 1e300, np.int64(2**62)):
        for integer in (False, True):
            with pytest.raises(StreamRangeError, match="MAX_STREAM_SUM") as range_info:
                require_stream_value("f(t)", bad_range, integer=integer)
            assert range_info.value.field == "f(t)" and len(str(range_info.value)) < 200
    for bad_kind, integer in ((True, False), (math.nan, False), (math.inf, False), ("1", False), (0.5, True)):
        with pytest.raises(DPStreamInputError) as kind_info:
            require_stream_value("f(t)", bad_kind, integer=integer)
        assert not isinstance(kind_info.value, StreamRangeError)
    require_stream_sum("f(t)", "a sum", float(-M), 1)
    with pytest.raises(StreamRangeError, match=r"^f\(t\): would take a sum to 9007199254740992, outside"):
        require_stream_sum("f(t)", "a sum", 2.0**53, 1)
    err = HorizonExceededError("t", "cannot step past the horizon T = 3", 4)
    assert isinstance(err, DPStreamInputError) and isinstance(err, ValueError)
    assert str(err) == "t: cannot step past the horizon T = 3 (got 4)"
