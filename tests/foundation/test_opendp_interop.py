"""dpstream.interop.opendp: OpenDP measurements of the counters over a fixed T, PrivTree and offline MWEM.

Each measurement, invoked with a seeded source, returns exactly what the algorithm returns on the same source; its
privacy map at d_in = 1 is the algorithm's ``.claim`` parameter and at d_in = 2, 3 what group privacy (or the l1
scaling of the counter's loss) gives; a pipeline chains an OpenDP transformation (events -> counts per time step)
with a counter measurement and is invoked end to end.

Robustness (issue 23): every builder releases exactly on the domain it declares (hypothesis, inputs in and around
it: ``dpstream.testing.strategies``), refuses everything else before any draw with a one-line ``OpenDPInputError``,
refuses invalid distances in ``map``/``check``, composes with OpenDP's combinators, and lets an error raised inside
reach a direct caller as itself. Timing: the whole file takes 2 to 5 s of CPU beyond collecting it (3 to 5 s, mostly
importing OpenDP), measured on a shared machine.
"""

from __future__ import annotations

import itertools
import math
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dpstream.claims import Measure
from dpstream.convention import with_noise
from dpstream.counters import (
    BinaryTreeCounter,
    BlockCounter,
    Counter,
    HybridCounter,
    InhomogeneousSparseCounter,
    SimpleCounter,
    SparseCounter,
    TreeAggregationCounter,
    UnboundedBlockCounter,
)
from dpstream.errors import DPStreamInputError
from dpstream.insecure import InsecureSeededNoise, InsecureZeroNoise, ScriptedNoise, TapeRecorder, TapeReplay
from dpstream.noise import NoiseSource, data_rng
from dpstream.phdstream import HypercubePartition, LambdaRule, PrivTree
from dpstream.phdstream.partition import BooleanCubePartition
from dpstream.phdstream.privtree import Subtree
from dpstream.phdstream.tree_function import tree_function
from dpstream.tabular.datasets import explicit_counts
from dpstream.tabular.domain import Domain
from dpstream.tabular.fitting import MultiplicativeWeights
from dpstream.tabular.offline import select_measure_fit
from dpstream.tabular.queries import all_workloads
from dpstream.tabular.stream import DifferentialDataset, StreamStep
from dpstream.tabular.totals import TotalRule
from dpstream.tape import DuplicateSiteError, Tape, TapeSiteMissingError
from dpstream.testing.strategies import point_sets_around, records_around, vectors_around

dp = pytest.importorskip("opendp.prelude", reason="OpenDP is not installed")
if not hasattr(dp.m, "make_user_measurement") or not hasattr(dp, "user_domain"):
    pytest.skip("this OpenDP has no make_user_measurement / user_domain (contrib, honest-but-curious)",
                allow_module_level=True)

from dpstream.interop.opendp import (  # noqa: E402 - after the skip: the module needs OpenDP
    DPStreamMeasurement,
    OpenDPInputError,
    counter_measurement,
    mwem_measurement,
    privacy_map,
    privtree_measurement,
)

T = 8
F_STREAM = [1, 0, 1, 1, 0, 1, 0, 0]
COUNTERS: dict[str, tuple[Any, dict[str, Any]]] = {
    "simple": (with_noise(SimpleCounter, 0.7, T), {"bounds": (0.0, 1.0)}),
    "block": (with_noise(BlockCounter, 0.9, 3, T), {"bounds": (-2.0, 2.0)}),
    "binary-tree": (with_noise(BinaryTreeCounter, 1.0, T), {"bounds": (0.0, 1.0)}),
    "binary-mechanism": (with_noise(BinaryTreeCounter, 1.5, T, discrete=True), {}),
    "tree-aggregation": (with_noise(TreeAggregationCounter, 0.5, T), {}),
    "unbounded-block": (with_noise(UnboundedBlockCounter, 1.2), {"bounds": (0.0, 5.0)}),
    "sparse": (with_noise(SparseCounter, 4.0, T), {"bounds": (0, 1)}),
}


def _claim_of(make: Any) -> Any:
    counter: Counter = make(InsecureSeededNoise(0))
    return counter


@pytest.mark.parametrize("name", sorted(COUNTERS))
def test_counter_measurement_releases_what_the_counter_releases(name: str) -> None:
    make, options = COUNTERS[name]
    meas = counter_measurement(make, T, noise=InsecureSeededNoise(11), **options)
    got = meas(F_STREAM)
    want = make(InsecureSeededNoise(11)).run(F_STREAM)
    assert isinstance(got, list) and len(got) == T and all(isinstance(g, float) for g in got)
    assert got == [float(w) for w in want]
    secure = counter_measurement(make, T, **options)(F_STREAM)  # the default: SecureNoise, OpenDP's draws
    assert len(secure) == T and all(isinstance(g, float) and math.isfinite(g) for g in secure)


@pytest.mark.parametrize("name", sorted(COUNTERS))
def test_counter_privacy_map_matches_the_claim(name: str) -> None:
    make, options = COUNTERS[name]
    counter = _claim_of(make)
    claim = counter.claim
    meas = counter_measurement(make, T, **options)
    integer = counter.integer_input
    one, two, three = (1, 2, 3) if integer else (1.0, 2.0, 3.0)
    assert meas.map(one) == pytest.approx(claim.parameter, rel=1e-15)
    if claim.measure is Measure.PURE_DP:
        assert str(meas.output_measure) == "MaxDivergence"
        assert (meas.map(two), meas.map(three)) == pytest.approx((2 * claim.parameter, 3 * claim.parameter))
    else:
        assert str(meas.output_measure) == "ZeroConcentratedDivergence"
        assert (meas.map(two), meas.map(three)) == pytest.approx((4 * claim.parameter, 9 * claim.parameter))
    if not integer:  # an l1 change of 1/2: half the loss for l1-linear counters
        assert counter.loss_scales_with_l1
        assert meas.map(0.5) == pytest.approx(claim.parameter / 2)


def test_group_privacy_rounds_up_for_counters_without_l1_scaling() -> None:
    claim = SparseCounter(4.0, T, noise=InsecureSeededNoise(0)).claim
    loss = privacy_map(claim, scales_with_distance=False)
    assert (loss(0.5), loss(1.0), loss(1.5)) == (claim.parameter, claim.parameter, 2 * claim.parameter)
    with pytest.raises(DPStreamInputError):
        loss(-1.0)


def test_events_to_counts_pipeline_composes_with_a_counter() -> None:
    """Records are event times in 1..T (one record per event, symmetric distance); a user transformation counts
    them per time step, capped at the counter's upper bound (stability d -> d into the l1 distance, into the
    counter's input domain); the tree-aggregation counter releases the prefix sums under rho-zCDP. The chain's map
    is the composition: d_in records -> d_in^2 rho."""
    rho, cap = 0.25, 1000
    counter = counter_measurement(with_noise(TreeAggregationCounter, rho, T), T, bounds=(0, cap),
                                  noise=InsecureSeededNoise(5))
    counts = dp.t.make_user_transformation(
        dp.vector_domain(dp.atom_domain(T="i64")), dp.symmetric_distance(),
        counter.input_domain, counter.input_metric,
        lambda events: [min(sum(1 for e in events if e == t), cap) for t in range(1, T + 1)],
        lambda d_in: d_in)  # one record added or removed changes one count by at most 1
    pipeline = counts >> counter
    events = [1, 1, 2, 4, 4, 4, 7, 8]
    got = pipeline(events)
    per_step = [sum(1 for e in events if e == t) for t in range(1, T + 1)]
    assert got == [float(g) for g in TreeAggregationCounter(rho, T, noise=InsecureSeededNoise(5)).run(per_step)]
    assert (pipeline.map(1), pipeline.map(2), pipeline.map(3)) == pytest.approx((rho, 4 * rho, 9 * rho))
    assert str(pipeline.input_metric) == "SymmetricDistance()"


def test_the_docs_example_runs() -> None:
    """The Python block of docs/opendp.md runs as printed and its pipeline states rho per record."""
    text = (Path(__file__).resolve().parents[2] / "docs" / "opendp.md").read_text(encoding="utf-8")
    block = text.split("```python\n", 1)[1].split("```", 1)[0]
    namespace: dict[str, Any] = {}
    exec(compile(block, "docs/opendp.md", "exec"), namespace)
    assert namespace["pipeline"].map(1) == pytest.approx(0.25)
    assert len(namespace["releases"]) == namespace["T"]


def test_counter_measurement_refuses_what_it_cannot_state() -> None:
    with pytest.raises(DPStreamInputError, match="bounds"):  # f64 atoms hold +-inf, which a counter refuses
        counter_measurement(with_noise(SimpleCounter, 1.0), T)
    with pytest.raises(DPStreamInputError, match="bounds"):  # Boolean inputs only
        counter_measurement(with_noise(SparseCounter, 2.0, T), T)
    with pytest.raises(DPStreamInputError, match="horizon"):
        counter_measurement(with_noise(BinaryTreeCounter, 1.0, 4), T, bounds=(0.0, 1.0))
    with pytest.raises(DPStreamInputError, match="SparseCounter accepts"):  # a bound the counter refuses
        counter_measurement(with_noise(SparseCounter, 2.0, T), T, bounds=(0, 2))


LIMIT = (2**53 - 1) // T  # the documented default bound of an integer counter: T * |bound| <= 2^53 - 1


@pytest.mark.parametrize(("make", "bounds", "rule"), [
    (with_noise(SimpleCounter, 1.0), (0.0, math.inf), "finite"),
    (with_noise(SimpleCounter, 1.0), (math.nan, 1.0), "finite"),
    (with_noise(SimpleCounter, 1.0), (1.0, 0.0), "lower <= upper"),
    (with_noise(SimpleCounter, 1.0), (0.0,), "pair"),
    (with_noise(SimpleCounter, 1.0), "01", "pair"),
    (with_noise(SimpleCounter, 1.0), (True, 1.0), "real number"),
    (with_noise(SimpleCounter, 1.0), (0.0, LIMIT + 1.0), "2\\^53"),
    (with_noise(SimpleCounter, 1.0), (-1e300, 0.0), "2\\^53"),
    (with_noise(BinaryTreeCounter, 1.0, T, discrete=True), (0, LIMIT + 1), "2\\^53"),
    (with_noise(BinaryTreeCounter, 1.0, T, discrete=True), (-(2**62), 0), "2\\^53"),
    (with_noise(BinaryTreeCounter, 1.0, T, discrete=True), (0.5, 1), "integer"),
    (with_noise(TreeAggregationCounter, 1.0, T), (0, 2**63), "2\\^53"),
])
def test_counter_bounds_are_refused_when_the_counter_could_not_release_on_them(make: Any, bounds: Any,
                                                                                rule: str) -> None:
    """Bounds are checked when the measurement is built: a pair of finite numbers (integers for an integer
    counter), lower <= upper, and T * max|bound| <= 2^53 - 1 (the counters' range, MAX_STREAM_SUM)."""
    with pytest.raises(DPStreamInputError, match=f"^bounds: .*{rule}"):
        counter_measurement(make, T, bounds=bounds)


def test_the_largest_bounds_are_accepted_and_released_on() -> None:
    """At the largest bound, floor((2^53 - 1) / T): built, and the extreme streams are released."""
    real = counter_measurement(with_noise(SimpleCounter, 1.0), T, bounds=(-float(LIMIT), float(LIMIT)),
                               noise=InsecureSeededNoise(1))
    integer = counter_measurement(with_noise(BinaryTreeCounter, 1.0, T, discrete=True), T,
                                  bounds=(-LIMIT, LIMIT), noise=InsecureSeededNoise(1))
    for meas, top in ((real, float(LIMIT)), (integer, LIMIT)):
        for x in ([top] * T, [-top] * T, [top, -top] * (T // 2)):
            assert len(meas(x)) == T


def test_printed_counter_is_built_from_its_claim_and_says_so() -> None:
    """The printed binary tree counter (E-counters-1): the map states what holds, eps (floor(log2 T)+1)/log2 T."""
    make = with_noise(BinaryTreeCounter, 1.0, T, as_printed=True)
    with pytest.warns(UserWarning, match="printed variant"):
        meas = counter_measurement(make, T, bounds=(0.0, 1.0))
    assert meas.map(1.0) == pytest.approx((math.floor(math.log2(T)) + 1) / math.log2(T))
    assert meas.map(1.0) == pytest.approx(make(InsecureSeededNoise(0)).claim.parameter)


P = HypercubePartition(2, 5, 2)


def _points(n: int, seed: int) -> list[list[float]]:
    return [[float(v) for v in row] for row in data_rng(seed).random((n, 2))]


def test_privtree_measurement_returns_privtree_and_states_its_claim() -> None:
    points = _points(40, 3)
    meas = privtree_measurement(P, 1.0, 2.0, noise=InsecureSeededNoise(7))
    got = meas(points)
    want = PrivTree(P, 1.0, 2.0).run(tree_function(P, points), noise=InsecureSeededNoise(7))
    assert got == want and got.is_valid(P)
    assert type(privtree_measurement(P, 1.0)(points)).__name__ == "Subtree"  # secure default
    claim = PrivTree(P, 1.0, 2.0).claim
    assert str(meas.input_metric) == "SymmetricDistance()" and str(meas.output_measure) == "MaxDivergence"
    assert (meas.map(1), meas.map(2), meas.map(3)) == pytest.approx((1.0, 2.0, 3.0))
    assert meas.map(1) == pytest.approx(claim.parameter)


def test_privtree_with_the_proof_scale_states_the_worst_case_claim() -> None:
    """LambdaRule.PROOF: the claim (general F in C(T)) is D/lambda > eps; the map follows .claim, with a warning."""
    with pytest.warns(UserWarning, match="printed variant"):
        meas = privtree_measurement(P, 1.0, lambda_rule=LambdaRule.PROOF)
    claim = PrivTree(P, 1.0, lambda_rule=LambdaRule.PROOF).claim
    assert claim.parameter > 1.0
    assert (meas.map(1), meas.map(2)) == pytest.approx((claim.parameter, 2 * claim.parameter))


DOMAIN = Domain(("a", "b", "c"), (2, 3, 2))
Q = all_workloads(DOMAIN, 2)


def _records(n: int, seed: int) -> Any:
    rng = data_rng(seed)
    return np.stack([rng.integers(0, s, size=n) for s in DOMAIN.sizes], axis=1)


def test_mwem_measurement_returns_select_measure_fit() -> None:
    records = _records(60, 4)
    meas = mwem_measurement(DOMAIN, Q, 1.0, 3, noise=InsecureSeededNoise(9))
    got = meas(records.tolist())
    f = DifferentialDataset(DOMAIN, StreamStep(records, np.zeros((0, 3), dtype=np.int64)))
    want = select_measure_fit(f, Q, 1.0, 3, MultiplicativeWeights(), total=TotalRule.measured(),
                              noise=InsecureSeededNoise(9)).g
    assert np.array_equal(explicit_counts(got), explicit_counts(want))
    assert explicit_counts(mwem_measurement(DOMAIN, Q, 1.0, 3)(records)).shape == DOMAIN.sizes  # secure default
    assert (meas.map(1), meas.map(2), meas.map(3)) == pytest.approx((1.0, 2.0, 3.0))


def test_mwem_refuses_the_true_size_and_states_the_printed_budget() -> None:
    with pytest.raises(DPStreamInputError, match="not private"):
        mwem_measurement(DOMAIN, Q, 1.0, 3, total=TotalRule.true_size())
    with pytest.warns(UserWarning, match="printed variant"):
        printed = mwem_measurement(DOMAIN, Q, 1.0, 3, as_printed=True)
    assert printed.map(1) == pytest.approx(3.0)  # k eps (E-tabular-4)


def test_noise_is_checked_first() -> None:
    bad: Any = "secure"
    with pytest.raises(TypeError, match="noise must be a NoiseSource"):
        privtree_measurement(P, 1.0, noise=bad)
    source: NoiseSource = InsecureSeededNoise(0)
    assert privtree_measurement(P, 1.0, noise=source).map(1) == pytest.approx(1.0)


# ---- robustness: the declared domain is exactly what a measurement releases on (issue 23) ----------------------
#
# Every builder, every kind of counter: an input inside the declared domain is released (the right shape; for the
# linear counters with zero noise, the exact prefix sums), an input outside is refused before anything is drawn
# (ScriptedNoise records every site requested) with a one-line OpenDPInputError; OpenDP's own membership test of the
# declared domain agrees. The oracles below restate the documented domains; they do not call the code under test.

BOUNDED: dict[str, tuple[Any, tuple[float, float], bool]] = {  # every counter: its domain's bounds, i64 or not
    "simple": (with_noise(SimpleCounter, 0.7, T), (0.0, 1.0), False),
    "block": (with_noise(BlockCounter, 0.9, 3, T), (-2.0, 2.0), False),
    "binary-tree": (with_noise(BinaryTreeCounter, 1.0, T), (-5.0, 5.0), False),
    "binary-tree-printed": (with_noise(BinaryTreeCounter, 1.0, T, as_printed=True), (0.0, 1.0), False),
    "binary-mechanism": (with_noise(BinaryTreeCounter, 1.5, T, discrete=True), (-LIMIT, LIMIT), True),  # default
    "binary-mechanism-bounded": (with_noise(BinaryTreeCounter, 1.5, T, discrete=True), (-3, 7), True),
    "tree-aggregation": (with_noise(TreeAggregationCounter, 0.5, T), (-LIMIT, LIMIT), True),  # default bounds
    # the printed counter takes reals, but adds integer noise: private on integers only (E-counters-4)
    "tree-aggregation-printed": (with_noise(TreeAggregationCounter, 0.5, T, as_printed=True), (-3, 3), True),
    "unbounded-block": (with_noise(UnboundedBlockCounter, 1.2), (0.0, 5.0), False),
    "hybrid": (with_noise(HybridCounter, 1.2), (-1.0, 1.0), False),
    "sparse": (with_noise(SparseCounter, 4.0, T), (0, 1), True),
    "inhomogeneous-sparse": (with_noise(InhomogeneousSparseCounter, 4.0, 1, lambda r: 4.0), (0, 1), True),
}
DEFAULT_BOUNDS = {"binary-mechanism", "tree-aggregation"}


def _build_counter(name: str, noise: NoiseSource) -> Any:
    make, bounds, _ = BOUNDED[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # the printed variants say they are printed variants
        return counter_measurement(make, T, bounds=None if name in DEFAULT_BOUNDS else bounds, noise=noise)


def _in_stream_domain(x: Any, lower: float, upper: float, integer: bool) -> bool:
    """vector_domain(atom_domain([lower, upper], T=i64 or f64 without NaN), size=T), for the Python values the
    strategies draw: exactly T ints (i64) or ints and floats (f64, which OpenDP converts), not bools, in bounds."""
    if not isinstance(x, list) or len(x) != T:
        return False
    allowed = (int,) if integer else (int, float)
    return all(type(v) in allowed and lower <= v <= upper for v in x)


def _assert_refused(call: Any, source: ScriptedNoise, field: str) -> OpenDPInputError:
    """``call()`` raises a one-line OpenDPInputError naming ``field`` (a prefix), before anything is drawn."""
    with pytest.raises(OpenDPInputError) as info:
        call()
    error: OpenDPInputError = info.value
    assert isinstance(info.value, DPStreamInputError) and isinstance(info.value, dp.OpenDPException)
    assert error.variant == "FailedFunction" and error.field.startswith(field)
    message = str(error)
    assert "\n" not in message and "Traceback" not in message and message.startswith(f"{error.field}: ")
    assert source.sites == []  # nothing drawn
    return error


def _member(meas: Any, x: Any) -> bool:
    """OpenDP's membership test of the declared domain (False, with a warning, when OpenDP cannot convert x)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return bool(meas.input_domain.member(x))


@pytest.mark.parametrize("name", sorted(BOUNDED))
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_counter_measurement_releases_exactly_on_its_declared_domain(name: str, data: st.DataObject) -> None:
    _, (lower, upper), integer = BOUNDED[name]
    source = ScriptedNoise({}, seed=3)
    meas = _build_counter(name, source)
    x = data.draw(vectors_around(T, lower, upper, integer), label="x")
    if _in_stream_domain(x, lower, upper, integer):
        got = meas(x)
        assert isinstance(got, list) and len(got) == T and all(isinstance(g, float) for g in got)
        assert _member(meas, x) is True
        zero = _build_counter(name, InsecureZeroNoise())
        if BOUNDED[name][0](InsecureZeroNoise()).loss_scales_with_l1:  # the linear counters: exact prefix sums
            prefix = list(itertools.accumulate(x))  # exact for ints; floats round (the counters' sums too)
            if integer:
                assert zero(x) == [float(s) for s in prefix]  # exact: every sum within 2^53 - 1
            else:
                assert zero(x) == pytest.approx(prefix, rel=1e-12, abs=1e-12 * T * max(-lower, upper))
    else:
        _assert_refused(lambda: meas(x), source, "f")
        assert _member(meas, x) is False


@pytest.mark.parametrize(("x", "field"), [
    ([11.0] * T, "f(1)"),                 # the issue: bounds (0, 10), every value above them
    ([1.0] * (T - 1), "f"),               # shorter than the declared size
    ([1.0] * (T + 1), "f"),
    ([], "f"),
    ([0.5] * (T - 1) + [math.nan], f"f({T})"),
    ([0.5] * (T - 1) + [math.inf], f"f({T})"),
    ([0.5] * (T - 1) + [-1e-300], f"f({T})"),
    ([0.5] * (T - 1) + ["0.5"], f"f({T})"),
    ([0.5] * (T - 1) + [True], f"f({T})"),
    ([0.5] * (T - 1) + [None], f"f({T})"),
    (np.full((2, T), 0.5), "f"),
    ("0.5" * T, "f"),
    (None, "f"),
])
def test_the_issue_counter_refuses_what_its_domain_excludes(x: Any, field: str) -> None:
    source = ScriptedNoise({}, seed=0)
    meas = counter_measurement(with_noise(SimpleCounter, 1.0, T), T, bounds=(0, 10), noise=source)
    assert str(meas.input_domain) == "VectorDomain(AtomDomain(bounds=[0.0, 10.0], T=f64), size=8)"
    error = _assert_refused(lambda: meas(x), source, field)
    if isinstance(x, list) and x == [11.0] * T:
        assert str(error) == "f(1): must lie in the input domain's bounds [0.0, 10.0] (got 11.0)"
    assert len(meas([10.0] * T)) == T and len(meas(np.zeros(T))) == T and len(meas(tuple(range(T)))) == T


def test_an_integer_counter_declares_the_domain_it_supports() -> None:
    """The issue: an in-domain i64 value of 2^62 raised "integer noise needs |value| <= 2^62" inside. The default
    domain is now +-floor((2^53 - 1) / T): its edges are released (sums exact), 2^62 is refused before any draw."""
    source = ScriptedNoise({}, seed=0)
    meas = counter_measurement(with_noise(BinaryTreeCounter, 1.0, T, discrete=True), T, noise=source)
    assert str(meas.input_domain) == f"VectorDomain(AtomDomain(bounds=[{-LIMIT}, {LIMIT}], T=i64), size={T})"
    for x in ([2**62] * T, [LIMIT + 1] + [0] * (T - 1), [1.0] * T, [1.5] * T, [2**63] * T):
        _assert_refused(lambda x=x: meas(x), source, "f")
    zero = counter_measurement(with_noise(BinaryTreeCounter, 1.0, T, discrete=True), T, noise=InsecureZeroNoise())
    for x in ([LIMIT] * T, [-LIMIT] * T, [LIMIT - 1, 1] * (T // 2)):
        assert zero(x) == [float(s) for s in itertools.accumulate(x)]
        assert len(meas(x)) == T


def test_a_counter_adding_integer_noise_takes_integers_even_when_it_accepts_reals() -> None:
    """The printed tree-aggregation counter (E-counters-4) accepts reals but adds discrete Gaussian noise: z = 0 and
    z = 1/2 are told apart by one release, so its claim holds on integers only, and its domain is i64."""
    make = with_noise(TreeAggregationCounter, 0.5, T, as_printed=True)
    assert not make(InsecureZeroNoise()).integer_input
    source = ScriptedNoise({}, seed=0)
    with pytest.warns(UserWarning, match="printed variant"):
        meas = counter_measurement(make, T, bounds=(0, 5), noise=source)
    assert str(meas.input_domain) == f"VectorDomain(AtomDomain(bounds=[0, 5], T=i64), size={T})"
    _assert_refused(lambda: meas([0.5] + [0] * (T - 1)), source, "f(1)")
    with pytest.raises(DPStreamInputError, match=r"^bounds: must be an integer"), warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        counter_measurement(make, T, bounds=(0.0, 0.5))
    assert len(meas([0, 5] * (T // 2))) == T


P_BOOL = BooleanCubePartition(3, 3)


def _in_point_domain(points: Any, d: int, coordinates: tuple[float, ...] | None = None) -> bool:
    """Point sets of [0,1]^d ({0,1}^d for ``coordinates=(0, 1)``): a list of n >= 0 lists of d numbers."""
    if not isinstance(points, list):
        return False
    for point in points:
        if not isinstance(point, list) or len(point) != d:
            return False
        for c in point:
            if type(c) not in (int, float) or not (c in coordinates if coordinates else 0.0 <= c <= 1.0):
                return False
    return True


@settings(max_examples=40, deadline=None)
@given(points=point_sets_around(2))
def test_privtree_measurement_releases_exactly_on_point_sets_of_omega(points: Any) -> None:
    source = ScriptedNoise({}, seed=2)
    meas = privtree_measurement(P, 1.0, 2.0, noise=source)
    if _in_point_domain(points, 2):
        got = meas(points)
        assert isinstance(got, Subtree) and got.is_valid(P)
        assert meas.input_domain.member(points) is True
    else:
        _assert_refused(lambda: meas(points), source, "points")
        assert _member(meas, points) is False


@pytest.mark.parametrize("points", [[[0.0, 1.0, 1.0]], [[0.5, 0.0, 1.0]], [[1, 1, 2]], [[0, 1]], [0, 1, 1]])
def test_privtree_on_the_boolean_cube_refuses_points_outside_it(points: Any) -> None:
    source = ScriptedNoise({}, seed=2)
    meas = privtree_measurement(P_BOOL, 1.0, noise=source)
    if _in_point_domain(points, 3, (0, 1)):
        assert meas(points).is_valid(P_BOOL)
    else:
        _assert_refused(lambda: meas(points), source, "points")


def _in_record_domain(records: Any, domain: Domain) -> bool:
    """Datasets of ``domain``: a list of n >= 0 records, each a list of p integer codes, code i in 0..|X_i| - 1."""
    return isinstance(records, list) and all(
        isinstance(r, list) and len(r) == domain.p
        and all(type(c) is int and 0 <= c < size for c, size in zip(r, domain.sizes, strict=True)) for r in records)


@settings(max_examples=30, deadline=None)
@given(records=records_around(DOMAIN))
def test_mwem_measurement_releases_exactly_on_datasets_of_the_domain(records: Any) -> None:
    source = ScriptedNoise({}, seed=4)
    meas = mwem_measurement(DOMAIN, Q, 1.0, 2, noise=source)
    if _in_record_domain(records, DOMAIN):
        assert explicit_counts(meas(records)).shape == DOMAIN.sizes
        assert meas.input_domain.member(records) is True
    else:
        _assert_refused(lambda: meas(records), source, "records")
        assert _member(meas, records) is False


# ---- distances: map and check refuse what the input metric does not hold ---------------------------------------

def _counter_for_map(integer: bool) -> Any:
    if integer:
        return counter_measurement(with_noise(BinaryTreeCounter, 0.5, T, discrete=True), T)
    return counter_measurement(with_noise(SimpleCounter, 0.5, T), T, bounds=(0.0, 1.0))


BAD_DISTANCES = [-1, -0.5, math.nan, math.inf, -math.inf, True, "1", None, 1j]


@pytest.mark.parametrize("kind", ["f64", "i64", "privtree", "mwem"])
def test_map_and_check_refuse_invalid_distances_with_one_line(kind: str) -> None:
    builders = {"f64": lambda: _counter_for_map(False), "i64": lambda: _counter_for_map(True),
                "privtree": lambda: privtree_measurement(P, 0.5), "mwem": lambda: mwem_measurement(DOMAIN, Q, 0.5, 1)}
    meas = builders[kind]()
    integer_metric = kind != "f64"
    bad = BAD_DISTANCES + ([0.5, 1.0, 2**64] if integer_metric else [])
    bad += [2**32] if kind in ("privtree", "mwem") else []  # the symmetric distance is a u32
    for d_in in bad:
        with pytest.raises(OpenDPInputError) as mapped:
            meas.map(d_in)
        with pytest.raises(OpenDPInputError) as checked:
            meas.check(d_in, 10.0)
        for error in (mapped.value, checked.value):
            assert error.variant == "FailedMap" and error.field == "d_in" and isinstance(error, dp.OpenDPException)
            assert "\n" not in str(error) and str(error).startswith("d_in: must be")
    good = [0, 1, 3] if integer_metric else [0, 0.0, 0.25, 1, 3.0]
    for d_in in good:  # the claim's loss: eps' = d_in * 0.5 (group privacy, pure DP: the same here)
        assert meas.map(d_in) == pytest.approx(0.5 * d_in) and meas.map(d_in) >= 0
        assert meas.check(d_in, 0.5 * d_in + 1e-9) and not meas.check(d_in, 0.5 * d_in - 1e-3)


# ---- messages: inside OpenDP's compositions, and errors that are not about the input --------------------------

def test_measurements_compose_with_opendp_combinators() -> None:
    meas = counter_measurement(with_noise(SimpleCounter, 1.0, T), T, bounds=(0, 10), noise=InsecureSeededNoise(1))
    assert isinstance(meas, DPStreamMeasurement) and isinstance(meas, dp.Measurement)
    x = [1.0] * T
    composed = dp.c.make_composition([meas, meas])
    assert len(composed(x)) == 2 and composed.map(1.0) == pytest.approx(2.0)
    odometer = dp.c.make_fully_adaptive_composition(meas.input_domain, meas.input_metric, dp.max_divergence())(x)
    assert len(odometer(meas)) == T and odometer.privacy_loss(1.0) == pytest.approx(1.0)
    adaptive = dp.c.make_adaptive_composition(meas.input_domain, meas.input_metric, dp.max_divergence(),
                                              d_in=1.0, d_mids=[1.0, 1.0])(x)
    assert len(adaptive(meas)) == T
    zcdp = dp.c.make_pureDP_to_zCDP(meas)
    assert len(zcdp(x)) == T and zcdp.map(1.0) == pytest.approx(0.5)
    assert (meas >> dp.new_function(sum, TO=float))(x) == pytest.approx(sum(meas(x)), abs=100)


def test_inside_a_composition_the_input_is_refused_before_any_draw() -> None:
    """OpenDP hands a composition's input straight to the function: it checks the domain first, draws nothing, and
    OpenDP's FFI error ends with the same one-line reason."""
    source = ScriptedNoise({}, seed=0)
    meas = counter_measurement(with_noise(SimpleCounter, 1.0, T), T, bounds=(0, 10), noise=source)
    composed = dp.c.make_composition([meas])
    with pytest.raises(dp.OpenDPException) as info:
        composed([11.0] * T)
    assert source.sites == []
    assert str(info.value).rstrip().rstrip('")').splitlines()[-1].endswith(
        "f(1): must lie in the input domain's bounds [0.0, 10.0] (got 11.0)")
    assert len(composed([10.0] * T)[0]) == T and len(source.sites) == T


def test_an_error_inside_the_function_reaches_the_caller_as_itself() -> None:
    """Not an input error: a noise source that cannot serve a draw. A direct call raises the source's own exception
    with its one-line message, not an FFI error carrying a traceback."""
    meas = counter_measurement(with_noise(SimpleCounter, 1.0, T), T, bounds=(0, 1), noise=TapeReplay(Tape(())))
    with pytest.raises(TapeSiteMissingError) as info:
        meas([0, 1] * (T // 2))
    assert not isinstance(info.value, dp.OpenDPException)
    assert str(info.value) == "site '001-alg8 L4 t=1' (laplace, {'scale': 1.0}) is not on the tape"
    recorder = TapeRecorder(InsecureSeededNoise(0))
    twice = privtree_measurement(P, 1.0, noise=recorder)
    twice([[0.5, 0.5]])
    with pytest.raises(DuplicateSiteError):  # the same recorder cannot serve a second run
        twice([[0.5, 0.5]])


@pytest.mark.parametrize(("records", "shown"), [
    ([[0, 0, 0], [1, 2**63, 1]], "9223372036854775808"),
    ([[0, 0, 0], [1, 1e19, 1]], "10000000000000000000"),
    (np.array([[0, 0, 0], [1, 2**64 - 1, 1]], dtype=np.uint64), "18446744073709551615"),
    ([[0, 0, 0], [1, -1, 1]], "-1"),
])
def test_a_record_code_beyond_int64_is_refused_as_itself(records: Any, shown: str) -> None:
    """The range check runs before the cast to int64: a code beyond it is refused with its value, no wrap-around
    (it used to reach the check as -2^63, with numpy's RuntimeWarning about the cast)."""
    source = ScriptedNoise({}, seed=0)
    meas = mwem_measurement(DOMAIN, Q, 1.0, 1, noise=source)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        error = _assert_refused(lambda: meas(records), source, "records")
    assert str(error).endswith(f"must lie in 0..2 (unknown attribute value or record outside the domain) (got {shown})")
