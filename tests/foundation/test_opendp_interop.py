"""dpstream.interop.opendp: OpenDP measurements of the counters over a fixed T, PrivTree and offline MWEM.

Each measurement, invoked with a seeded source, returns exactly what the algorithm returns on the same source; its
privacy map at d_in = 1 is the algorithm's ``.claim`` parameter and at d_in = 2, 3 what group privacy (or the l1
scaling of the counter's loss) gives; a pipeline chains an OpenDP transformation (events -> counts per time step)
with a counter measurement and is invoked end to end.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from dpstream.claims import Measure
from dpstream.convention import with_noise
from dpstream.counters import (
    BinaryTreeCounter,
    BlockCounter,
    Counter,
    SimpleCounter,
    SparseCounter,
    TreeAggregationCounter,
    UnboundedBlockCounter,
)
from dpstream.errors import DPStreamInputError
from dpstream.insecure import InsecureSeededNoise
from dpstream.noise import NoiseSource, data_rng
from dpstream.phdstream import HypercubePartition, LambdaRule, PrivTree
from dpstream.phdstream.tree_function import tree_function
from dpstream.tabular.datasets import explicit_counts
from dpstream.tabular.domain import Domain
from dpstream.tabular.fitting import MultiplicativeWeights
from dpstream.tabular.offline import select_measure_fit
from dpstream.tabular.queries import all_workloads
from dpstream.tabular.stream import DifferentialDataset, StreamStep
from dpstream.tabular.totals import TotalRule

dp = pytest.importorskip("opendp.prelude", reason="OpenDP is not installed")
if not hasattr(dp.m, "make_user_measurement") or not hasattr(dp, "user_domain"):
    pytest.skip("this OpenDP has no make_user_measurement / user_domain (contrib, honest-but-curious)",
                allow_module_level=True)

from dpstream.interop.opendp import (  # noqa: E402 - after the skip: the module needs OpenDP
    FEATURES,
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
    them per time step (stability d -> d into the l1 distance); the tree-aggregation counter releases the prefix
    sums under rho-zCDP. The chain's map is the composition: d_in records -> d_in^2 rho."""
    rho = 0.25
    dp.enable_features(*FEATURES)  # the user transformation needs them before any dpstream measurement is built
    counts = dp.t.make_user_transformation(
        dp.vector_domain(dp.atom_domain(T="i64")), dp.symmetric_distance(),
        dp.vector_domain(dp.atom_domain(T="i64"), size=T), dp.l1_distance(T="i64"),
        lambda events: [sum(1 for e in events if e == t) for t in range(1, T + 1)],
        lambda d_in: d_in)  # one record added or removed changes one count by 1
    counter = counter_measurement(with_noise(TreeAggregationCounter, rho, T), T, noise=InsecureSeededNoise(5))
    pipeline = counts >> counter
    events = [1, 1, 2, 4, 4, 4, 7, 8]
    got = pipeline(events)
    per_step = [sum(1 for e in events if e == t) for t in range(1, T + 1)]
    assert got == [float(g) for g in TreeAggregationCounter(rho, T, noise=InsecureSeededNoise(5)).run(per_step)]
    assert (pipeline.map(1), pipeline.map(2), pipeline.map(3)) == pytest.approx((rho, 4 * rho, 9 * rho))
    assert str(pipeline.input_metric) == "SymmetricDistance()"


def test_counter_measurement_refuses_what_it_cannot_state() -> None:
    with pytest.raises(DPStreamInputError, match="bounds"):  # f64 atoms hold +-inf, which a counter refuses
        counter_measurement(with_noise(SimpleCounter, 1.0), T)
    with pytest.raises(DPStreamInputError, match="bounds"):  # Boolean inputs only
        counter_measurement(with_noise(SparseCounter, 2.0, T), T)
    with pytest.raises(DPStreamInputError, match="horizon"):
        counter_measurement(with_noise(BinaryTreeCounter, 1.0, 4), T, bounds=(0.0, 1.0))
    with pytest.raises(DPStreamInputError):  # a bound the counter refuses
        counter_measurement(with_noise(SparseCounter, 2.0, T), T, bounds=(0, 2))


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


def test_privtree_domain_refuses_points_outside_omega() -> None:
    meas = privtree_measurement(P, 1.0)
    with pytest.raises(Exception, match=r"(?i)domain|member"):
        meas([[0.5, 1.5]])


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
