"""Every public algorithm runs end to end on the DEFAULT noise source (``SecureNoise``: OpenDP + ``secrets``).

The other tests drive the algorithms with ``InsecureSeededNoise`` or tapes; here each algorithm is
built WITHOUT a noise source, the test checks that the default it picked is a ``SecureNoise``, runs a
few steps on a tiny input and asserts only properties that hold whatever the noise draws are (shapes,
types, finiteness, rule (5), consistency identities, persistence, valid selections). Secure draws are
not reproducible, so nothing here compares values with expected ones.

Also here: the secure source is not reproducible (two fresh counters differ), and a regression test for
its integer draws (they were drawn in OpenDP's i32 type, which saturates at +-(2^31 - 1)).

The secure path (issue 16, part 1): every test here runs twice, on the real OpenDP measurements and on
deterministic stand-ins (``dpstream.testing.secure_path.recognisable``: value + 0.25, value + 1, arg-max), and after
each run every additive draw of every algorithm must have been exactly one OpenDP measurement applied to
exactly the statistic the algorithm handed in, its output released unchanged (``SecureDoorSpy``): no
noise is added to a sensitive value in Python. ``tests/foundation/test_secure_path.py`` has the rest.
"""

from __future__ import annotations

import importlib
import itertools
import json
import math
from collections.abc import Callable, Iterator, Mapping, Sequence

import numpy as np
import pytest

from dpstream.catalog import Entry, entries
from dpstream.counters import (
    BinaryTreeCounter,
    BlockCounter,
    Counter,
    HybridCounter,
    InhomogeneousSparseCounter,
    MultiDimensionalCounter,
    SimpleCounter,
    SparseCounter,
    TreeAggregationCounter,
    UnboundedBlockCounter,
)
from dpstream.hypercube.online import OnlineSyntheticData
from dpstream.hypercube.partition import BinaryPartition, depth_at
from dpstream.hypercube.streams import make_stream
from dpstream.longitudinal.categorical import CategoricalFixedWindowSynthesizer
from dpstream.longitudinal.cumulative import CumulativeSynthesizer
from dpstream.longitudinal.data import IntArray, window_histogram
from dpstream.longitudinal.fixed_window import FixedWindowSynthesizer
from dpstream.longitudinal.generators import random_matrix
from dpstream.mechanisms import DiscreteGaussianMechanism, ExponentialMechanism, LaplaceMechanism
from dpstream.noise import NoiseSource, ScopedNoise, SecureNoise, default_noise
from dpstream.phdstream import (
    BooleanCubePartition,
    EfficientPHDStream,
    HypercubePartition,
    PHDStream,
    PHDStreamTree,
    PHDStreamTreeWithCounters,
    PointEvents,
    PrivTree,
    SyntheticRelease,
    is_consistent,
    simple_counter_factory,
)
from dpstream.phdstream.baselines import (
    InitPrivTreeThenCounters,
    OfflinePrivTreeOnDifferential,
    OfflinePrivTreeOnStream,
)
from dpstream.phdstream.partition import Node, Partition
from dpstream.phdstream.privtree import Subtree
from dpstream.phdstream.stream import TrueStream
from dpstream.tabular.datasets import SyntheticDataset
from dpstream.tabular.domain import Domain
from dpstream.tabular.fitting import MultiplicativeWeights
from dpstream.tabular.main_algorithm import MainAlgorithm
from dpstream.tabular.offline import offline_claim, select_measure_fit
from dpstream.tabular.queries import all_marginal_queries, all_workloads
from dpstream.tabular.stream import DifferentialDataset, generate_stream
from dpstream.tabular.streaming_mwem import OfflineToStream, StreamingMWEM
from dpstream.tabular.totals import TotalRule
from dpstream.testing.secure_path import SecureDoorSpy, recognisable
from dpstream.vectors.corpus import known_answer
from dpstream.vectors.generate import run_inputs

REAL_OPENDP_ONLY = {"test_secure_releases_are_not_reproducible", "test_secure_integer_draws_are_not_clamped_to_32_bits"}
"""Tests of OpenDP's randomness itself: not run on the deterministic stand-ins."""


@pytest.fixture(autouse=True, params=["opendp", "recognisable"])
def secure_door(request: pytest.FixtureRequest) -> Iterator[SecureDoorSpy]:
    """Every additive draw of the test is exactly one measurement on the handed-in value, released unchanged."""
    if request.param == "recognisable" and request.function.__name__ in REAL_OPENDP_ONLY:
        pytest.skip("tests OpenDP's own randomness")
    with SecureDoorSpy(None if request.param == "opendp" else recognisable) as spy:
        yield spy
    assert spy.violations() == []


def is_secure(noise: NoiseSource) -> bool:
    """The source is the secure default, possibly seen through scopes (nested algorithms)."""
    while isinstance(noise, ScopedNoise):
        noise = noise.inner
    return isinstance(noise, SecureNoise)


def test_default_noise_is_secure() -> None:
    assert type(default_noise()) is SecureNoise


STREAMING = [e for e in entries() if e.streaming and e.build is not None]


@pytest.mark.parametrize("e", STREAMING, ids=[e.anchor for e in STREAMING])
def test_every_catalog_algorithm_runs_its_first_vector_on_the_secure_source(e: Entry) -> None:
    """The catalog's list, not a list written here: each streaming entry, built on ``default_noise()`` with the
    parameters of its first known-answer vector, releases one JSON value per input (the values are random)."""
    v = next(known_answer(e.anchor))
    releases = run_inputs(e, v.params, v.inputs, default_noise())
    assert len(releases) == len(v.inputs) == len(v.expected)
    assert json.loads(json.dumps(releases)) == releases  # plain JSON: what the protocol sends


# --- counters ----------------------------------------------------------------------------------------

BOOLEAN_STREAM = [1, 0, 1, 1, 0, 1, 0, 1]

def flat_budget(r: int) -> float:
    """eps_r = 1 at every level (004-alg3)."""
    return 1.0


def busy_budget(r: int) -> float:
    """eps_r = 50 at every level: segments end almost every step."""
    return 50.0


# (factory(noise), stream, integer-valued releases). The tests here pass noise=None (the default source);
# tests/foundation/test_checkpoint.py reuses this enumeration with seeded and taped sources.
COUNTERS: dict[str, tuple[Callable[[NoiseSource | None], Counter], list[int], bool]] = {
    "simple": (lambda n: SimpleCounter(1.0, noise=n), BOOLEAN_STREAM, False),
    "block": (lambda n: BlockCounter(1.0, 3, noise=n), BOOLEAN_STREAM, False),
    "block-horizon": (lambda n: BlockCounter(1.0, 2, 8, noise=n), BOOLEAN_STREAM, False),
    "binary-tree": (lambda n: BinaryTreeCounter(1.0, 8, noise=n), BOOLEAN_STREAM, False),
    "binary-tree-discrete": (lambda n: BinaryTreeCounter(1.0, 8, noise=n, discrete=True), [2, 0, -1, 3, 1, 0, 5, 1],
                             True),
    "tree-aggregation": (lambda n: TreeAggregationCounter(0.5, 8, noise=n), [2, 0, 1, 3, 1, 0, 5, 1], True),
    "unbounded-block": (lambda n: UnboundedBlockCounter(1.0, noise=n), BOOLEAN_STREAM + BOOLEAN_STREAM, False),
    "hybrid": (lambda n: HybridCounter(1.0, noise=n), BOOLEAN_STREAM + BOOLEAN_STREAM, False),
    "sparse": (lambda n: SparseCounter(1.0, 8, noise=n), BOOLEAN_STREAM, True),
    # eps = 50: T_0 = 9 log(16)/50 < 1 and Lap_Z(0.04) is almost surely 0, so segments end at almost
    # every step and A_sub (a discrete binary tree) is created and then copied (copy-on-write)
    "sparse-many-segments": (lambda n: SparseCounter(50.0, 16, noise=n), [1] * 16, True),
    "inhomogeneous-sparse": (lambda n: InhomogeneousSparseCounter(1.0, 0, flat_budget, noise=n), [1] * 20, True),
    "inhomogeneous-sparse-busy": (lambda n: InhomogeneousSparseCounter(1.0, 0, busy_budget, noise=n), [1] * 20, True),
}


@pytest.mark.parametrize("name", list(COUNTERS))
def test_counter_runs_on_the_default_source(name: str) -> None:
    factory, stream, integer = COUNTERS[name]
    counter = factory(None)
    assert isinstance(counter.noise, SecureNoise)
    out = [counter.step(x) for x in stream]
    assert len(out) == len(stream) and counter.t == len(stream) and counter.releases == out
    for g in out:  # one finite number per step
        assert isinstance(g, int | float) and not isinstance(g, bool) and math.isfinite(g)
        if integer:  # integer noise on integer inputs: integer-valued releases
            assert float(g).is_integer()
    assert counter.state_size() >= 0


def test_sparse_counter_copies_its_subroutine_on_the_secure_source() -> None:
    """The copy-on-write of A_sub (``copy.deepcopy`` with the noise memoised) must not copy the
    SecureNoise (it holds the OpenDP module, which cannot be copied). With eps = 50 a segment ends at a
    step unless one of two Lap_Z(0.04) draws is non-zero (probability < 3e-11 per draw), so fewer than
    two segment ends in 16 steps has probability < 1e-9."""
    counter = SparseCounter(50.0, 16)
    counter.run([1] * 16)
    assert counter.segments_ended >= 2 and counter.sub is not None
    assert is_secure(counter.sub.noise) and counter.sub.t == counter.segments_ended


def test_multidimensional_counter_runs_on_the_default_source() -> None:
    counter = MultiDimensionalCounter.build(lambda eps, n: BlockCounter(eps, 2, noise=n), 3, 1.0)
    inner = {id(c.noise.inner) for c in counter.counters if isinstance(c.noise, ScopedNoise)}
    assert len(inner) == 1 and all(is_secure(c.noise) for c in counter.counters)  # one source, d scopes
    inputs: list[list[float]] = [[1, 0, 2], [0, 0, 1], [1, 1, 1], [0.5, -1, 0]]
    for t, x in enumerate(inputs, start=1):
        g = counter.step(x)
        assert g.shape == (3,) and g.dtype == np.float64 and np.isfinite(g).all()
        assert counter.t == t
    discrete = MultiDimensionalCounter.build(lambda eps, n: TreeAggregationCounter(eps, 4, noise=n), 2, 0.5)
    for y in ([1, 2], [0, 1], [3, 0]):
        g = discrete.step(y)
        assert g.shape == (2,) and all(float(v).is_integer() for v in g)


# --- mechanisms (they take the source per call: the caller passes default_noise()) ----------------------

def test_mechanisms_on_the_default_source() -> None:
    noise = default_noise()
    assert isinstance(noise, SecureNoise)
    lap = LaplaceMechanism(0.5, sensitivity=2.0)
    x = lap.release(noise, "lap", 3.0)
    assert isinstance(x, float) and math.isfinite(x)
    v = lap.release_vector(noise, "lapv", [1.0, 2.0, -4.0])
    assert v.shape == (3,) and np.isfinite(v).all()
    for mech in (DiscreteGaussianMechanism(0.5), DiscreteGaussianMechanism(0.5, sensitivity=3.0, as_printed=True)):
        y = mech.release(noise, "dg", 7)
        assert type(y) is int
        w = mech.release_vector(noise, "dgv", [3, 0, 7])
        assert len(w) == 3 and all(type(z) is int for z in w)
    for em in (ExponentialMechanism(1.0), ExponentialMechanism(2.0, sensitivity=0.5, as_printed=True)):
        for utilities in ([0.0], [0.0, 1.0, 3.0], [5.0] * 7, [-1e6, 2.5, 1e6, 0.0]):
            picked = em.select(noise, "em", utilities)
            assert type(picked) is int and 0 <= picked < len(utilities)


# --- PHDStream family (001) -------------------------------------------------------------------------

HYPERCUBE = HypercubePartition(2, 3)
BOOLEAN = BooleanCubePartition(3)
BATCHES: dict[str, tuple[Partition, list[PointEvents]]] = {
    "hypercube": (HYPERCUBE, [
        PointEvents.of([[0.1, 0.2], [0.7, 0.8], [0.3, 0.3], [0.9, 0.1], [0.12, 0.22]]),
        PointEvents.of([[0.1, 0.2], [0.5, 0.5]], [-1, 1]),
        PointEvents.of([[0.2, 0.9]] * 3),
    ]),
    "boolean-cube": (BOOLEAN, [
        PointEvents.of([[0, 0, 1], [1, 1, 0], [1, 1, 0], [0, 1, 1]]),
        PointEvents.of([[1, 1, 0], [1, 0, 1]], [-1, 1]),
        PointEvents.empty(3),
    ]),
}

RULE5_GUARD = 1e-9
"""Rule (5) samples ceil(G(v)) points, computed as ceil(G - 1e-9) so that float rounding of an integer
count (3.0000000000000004) does not add a point (docs/phdstream.md)."""


def ordered(nodes: Mapping[Node, object]) -> list[Node]:
    return sorted(nodes, key=lambda u: (len(u), u))


def check_points_in_leaves(partition: Partition, release: SyntheticRelease) -> None:
    """g(., t) lies in Omega, counts[v] points in every leaf v (in leaf order), sum(counts) in all."""
    assert release.tree.is_valid(partition)
    assert set(release.counts) == set(release.leaf_values) == set(release.tree.leaves)
    assert all(math.isfinite(x) for x in release.leaf_values.values())
    assert all(type(k) is int and k >= 0 for k in release.counts.values())
    n = sum(release.counts.values())
    assert release.points.shape == (n, partition.dimension) and release.size == n
    partition.validate_points(release.points)  # inside Omega (raises otherwise)
    paths = partition.locate(release.points)
    start = 0
    for v in ordered(release.counts):
        block = paths[start:start + release.counts[v], : len(v)]
        assert all(tuple(int(i) for i in row) == v for row in block), v
        start += release.counts[v]


def check_rule5(partition: Partition, release: SyntheticRelease) -> None:
    """Exactly max(0, ceil(G(v))) points in every leaf v of T(t), G(v) the released leaf value."""
    check_points_in_leaves(partition, release)
    expected = {v: max(0, math.ceil(g - RULE5_GUARD)) for v, g in release.leaf_values.items()}
    assert dict(release.counts) == expected
    assert release.size == sum(expected.values())


def check_consistent_on_tree(partition: Partition, tree: Subtree, values: Mapping[Node, float]) -> None:
    """(6) on T(t): G(v) = sum of G over the children of every internal vertex of T(t)."""
    assert set(tree.nodes) <= set(values)
    for v in tree.internal():
        children = partition.children(v)
        total = sum(values[c] for c in children)
        assert abs(values[v] - total) <= 1e-9 * (1.0 + abs(values[v]) + abs(total)), v


def test_privtree_runs_on_the_default_source(monkeypatch: pytest.MonkeyPatch) -> None:
    """PrivTree has no noise attribute (the source is an argument of ``run``): spy on its default."""
    # the package exports the function privtree under the submodule's name: import the module itself
    privtree_module = importlib.import_module("dpstream.phdstream.privtree")
    made: list[NoiseSource] = []
    real: Callable[[], NoiseSource] = privtree_module.default_noise

    def spy() -> NoiseSource:
        made.append(real())
        return made[-1]

    monkeypatch.setattr(privtree_module, "default_noise", spy)
    truth = TrueStream(HYPERCUBE)
    F = dict(truth.stage(BATCHES["hypercube"][1][0]).release.dF.items())
    for theta in (0.0, 2.0):
        S = PrivTree(HYPERCUBE, 1.0, theta).run(F)
        assert S.is_valid(HYPERCUBE) and () in S.nodes and set(S.leaves) <= set(S.nodes)
        assert all(len(v) <= HYPERCUBE.max_depth for v in S.nodes)
    assert len(made) == 2 and all(isinstance(n, SecureNoise) for n in made)


@pytest.mark.parametrize("cls", [PHDStreamTree, PHDStreamTreeWithCounters])
@pytest.mark.parametrize("data", list(BATCHES))
def test_tree_level_phdstream_runs_on_the_default_source(cls: type[PHDStreamTree | PHDStreamTreeWithCounters],
                                                         data: str) -> None:
    """001-alg1 / 001-alg3: G(., t) on all of V(T), in C(T) (consistent), for a valid subtree T(t)."""
    partition, batches = BATCHES[data]
    alg = cls(partition, 1.0)
    assert isinstance(alg.noise, SecureNoise)
    truth = TrueStream(partition)
    for t, batch in enumerate(batches, start=1):
        prepared = truth.stage(batch)
        release = alg.step(prepared.release.dF)
        prepared.commit()
        assert release.t == alg.t == t
        assert release.tree.is_valid(partition)
        assert set(release.values) == set(partition.nodes())
        assert all(math.isfinite(x) for x in release.values.values())
        assert is_consistent(partition, release.values)
        assert set(release.leaf_values) == set(release.tree.leaves)


def block_counter_b2(epsilon: float, noise: NoiseSource) -> Counter:
    """The vertex counters of 001-alg3 as Block counters with B = 2."""
    return BlockCounter(epsilon, 2, noise=noise)


PHDSTREAMS: dict[str, Callable[[Partition, NoiseSource | None], PHDStream | EfficientPHDStream]] = {
    "phdstream-alg1": lambda p, n: PHDStream(p, 1.0, noise=n),
    "phdstream-alg3": lambda p, n: PHDStream(p, 1.0, 0.5, counter=simple_counter_factory, noise=n),
    "phdstream-alg3-block": lambda p, n: PHDStream(p, 2.0, counter=block_counter_b2, noise=n),
    "efficient": lambda p, n: EfficientPHDStream(p, 1.0, noise=n),
    "efficient-as-printed": lambda p, n: EfficientPHDStream(p, 1.0, as_printed=True, noise=n),
}


@pytest.mark.parametrize("name", list(PHDSTREAMS))
@pytest.mark.parametrize("data", list(BATCHES))
def test_phdstream_synthetic_points_follow_rule5(name: str, data: str) -> None:
    partition, batches = BATCHES[data]
    alg = PHDSTREAMS[name](partition, None)
    assert isinstance(alg.noise, SecureNoise)
    if isinstance(alg, PHDStream):
        assert alg.tree.noise is alg.noise
    for t, batch in enumerate(batches, start=1):
        release = alg.step(batch)
        assert release.t == alg.t == t
        check_rule5(partition, release)
        check_consistent_on_tree(partition, release.tree, release.node_values)
        assert all(release.node_values[v] == pytest.approx(g) for v, g in release.leaf_values.items())


@pytest.mark.parametrize("cls", [OfflinePrivTreeOnStream, OfflinePrivTreeOnDifferential, InitPrivTreeThenCounters])
@pytest.mark.parametrize("data", list(BATCHES))
def test_phdstream_baselines_run_on_the_default_source(
        cls: type[OfflinePrivTreeOnStream | OfflinePrivTreeOnDifferential | InitPrivTreeThenCounters],
        data: str) -> None:
    """Section 5.3 baselines: rule (5) (baselines 1, 3) or round(max(N(t), 0)) apportioned points (baseline 2)."""
    partition, batches = BATCHES[data]
    alg = cls(partition, 1.0)
    assert isinstance(alg.noise, SecureNoise)
    for t, batch in enumerate(batches, start=1):
        release = alg.step(batch)
        assert release.t == alg.t == t
        if isinstance(alg, OfflinePrivTreeOnDifferential):
            check_points_in_leaves(partition, release)
            assert math.isfinite(alg.N_hat) and release.size == round(max(alg.N_hat, 0.0))
        else:
            check_rule5(partition, release)
    if isinstance(alg, InitPrivTreeThenCounters):
        assert alg.S is not None and all(is_secure(c.noise) for c in alg.counters.values())


# --- longitudinal family (002) --------------------------------------------------------------------------

T_LONG, N_LONG = 6, 15
# n_pad by Corollary 3.3 at beta = 1e-12: the padding runs out (PaddingExhaustedError) with
# probability at most 1e-12 (002-thm3.2), so the run below fails only with that probability.
BETA = 1e-12


@pytest.mark.parametrize(("k", "alphabet"), [(1, 2), (2, 2), (3, 2), (2, 3)])
def test_fixed_window_synthesizer_on_the_default_source(k: int, alphabet: int) -> None:
    """002-alg1 (and its categorical extension): records persist and gain one symbol per round; the
    histogram of their last k symbols is p^t; sum_c p_{zc}^t = sum_a p_{az}^{t-1} (u9's identity)."""
    X = random_matrix(N_LONG, T_LONG, seed=k, alphabet=alphabet)
    synth = (FixedWindowSynthesizer(T_LONG, k, 1.0, beta=BETA) if alphabet == 2 else
             CategoricalFixedWindowSynthesizer(T_LONG, k, 1.0, alphabet, beta=BETA))
    assert isinstance(synth.noise, SecureNoise)
    A, overlaps = alphabet, alphabet ** (k - 1)
    before: IntArray | None = None
    for t in range(1, T_LONG + 1):
        release = synth.step(X[:, t - 1])
        if t < k:
            assert release is None and synth.synthetic.shape == (0, 0)
            continue
        assert release is not None and release.t == t
        p = release.p
        assert p.shape == (A**k,) and (p >= 0).all()
        m = synth.m
        assert m is not None and m == int(p.sum())
        S = synth.synthetic
        assert S.shape == (m, t) and set(np.unique(S).tolist()) <= set(range(A))
        assert release.columns.shape == ((m, k) if t == k else (m, 1))
        assert np.array_equal(S[:, t - release.columns.shape[1]:], release.columns)
        assert window_histogram(S, t, k, A).tolist() == p.tolist()
        if before is not None:
            assert np.array_equal(S[:, : t - 1], before)  # persistent: extended, never rewritten
            prev = synth.p_history[-2]
            for z in range(overlaps):
                assert sum(int(p[z * A + c]) for c in range(A)) == sum(int(prev[a * overlaps + z]) for a in range(A))
        before = S
    assert synth.t == T_LONG and len(synth.p_history) == T_LONG - k + 1


def test_cumulative_synthesizer_on_the_default_source() -> None:
    """002-alg2: n records, persistent, and #{synthetic records of weight >= b} = S^_b^t (monotone in b)."""
    X = random_matrix(N_LONG, T_LONG, seed=3)
    synth = CumulativeSynthesizer(T_LONG, 1.0)
    assert isinstance(synth.noise, SecureNoise)
    before: IntArray | None = None
    for t in range(1, T_LONG + 1):
        release = synth.step(X[:, t - 1])
        assert release.t == t and release.column.shape == (N_LONG,)
        assert set(release.column.tolist()) <= {0, 1}
        S = synth.synthetic
        assert S.shape == (N_LONG, t)
        if before is not None:
            assert np.array_equal(S[:, : t - 1], before)
        before = S
        S_hat = release.S_hat.tolist()
        assert len(S_hat) == t + 1 and S_hat[0] == N_LONG
        assert all(a >= b >= 0 for a, b in itertools.pairwise(S_hat))
        weights = S.sum(axis=1)
        assert [int((weights >= b).sum()) for b in range(t + 1)] == S_hat
        assert len(release.S_tilde) == t and all(math.isfinite(s) for s in release.S_tilde)
    assert len(synth.counters) == T_LONG and all(is_secure(c.noise) for c in synth.counters)


# --- hypercube (004) -----------------------------------------------------------------------------------

@pytest.mark.parametrize(("d", "eps"), [(1, 2.0), (2, 2.0), (3, 1.0)])
def test_hypercube_online_on_the_default_source(d: int, eps: float) -> None:
    """004-alg1: at time t exactly t points in [0,1]^d, m_theta of them in every region of depth r."""
    X = make_stream("uniform", 14, d, seed=d)
    alg = OnlineSyntheticData(eps, d)
    assert isinstance(alg.noise, SecureNoise)
    partition = BinaryPartition(d)
    for t, x in enumerate(X, start=1):
        release = alg.step(x)
        assert release.t == t and release.depth == depth_at(t, eps)
        assert release.points is not None and release.points.shape == (t, d)
        assert np.all((release.points >= 0.0) & (release.points <= 1.0))
        assert release.noisy[0].tolist() == [t] and len(release.noisy) == len(release.consistent) == release.depth + 1
        for j, level in enumerate(release.consistent):
            assert level.shape == (2**j,) and (level >= 0).all() and int(level.sum()) == t
        cells = np.bincount(partition.cell_indices(release.points, release.depth), minlength=2**release.depth)
        assert cells.tolist() == release.consistent[release.depth].tolist()
    assert all(is_secure(c.noise) for level in alg.counters for c in level)


# --- tabular (003, 000) ---------------------------------------------------------------------------------

DOM = Domain(("a", "b", "c"), (2, 3, 2))
BATCH = 20
TAB_STREAM = generate_stream(DOM, 3, BATCH, seed=5, removal_rate=0.1)
K = 2


def check_dataset(g: SyntheticDataset, t: int) -> None:
    """A synthetic dataset on DOM of mass BATCH * t (public sizes) with finite, non-negative marginals."""
    assert g.domain == DOM
    assert g.total == pytest.approx(BATCH * t)
    for columns in ((0,), (1,), (2,), (0, 1), (1, 2), (0, 1, 2)):
        table = np.asarray(g.marginal(columns))
        assert table.shape == DOM.shape_of(columns)
        assert np.isfinite(table).all() and (table >= -1e-9).all()
        assert table.sum() == pytest.approx(BATCH * t)


def check_selections(selected: Sequence[int], scores: Sequence[Sequence[float]], n_queries: int) -> None:
    """k distinct valid query indices; the l-th selection chose among the |Q| - (l - 1) remaining queries."""
    assert len(selected) == K and len(set(selected)) == K and all(0 <= j < n_queries for j in selected)
    assert [len(e) for e in scores] == [n_queries - l for l in range(K)]
    assert all(math.isfinite(x) for e in scores for x in e)


def test_streaming_mwem_on_the_default_source() -> None:
    Q = all_marginal_queries(DOM, 1)
    alg = StreamingMWEM(DOM, Q, K, 1.0, total=TotalRule.public(BATCH), keep_trace=True)
    assert isinstance(alg.noise, SecureNoise)
    for t, step in enumerate(TAB_STREAM, start=1):
        check_dataset(alg.step(step), t)
        assert alg.t == t
    assert alg.trace is not None and len(alg.trace) == len(TAB_STREAM)
    for tr in alg.trace:
        check_selections(tr.selected, tr.scores, len(Q))
        assert [m.shape for m in tr.measurements] == [(Q[j].dim,) for j in tr.selected]


@pytest.mark.parametrize("workloads", [False, True])
def test_main_algorithm_on_the_default_source(workloads: bool) -> None:
    """003-alg3 with the MW fitter and Simple counters (MultiDimensionalCounter per workload)."""
    Q = all_workloads(DOM, 2) if workloads else all_marginal_queries(DOM, 2)
    alg = MainAlgorithm(DOM, Q, K, 1.0, total=TotalRule.public(BATCH), keep_trace=True)
    assert isinstance(alg.noise, SecureNoise) and isinstance(alg.fitter, MultiplicativeWeights)
    for c in alg.counters:
        parts = c.counters if isinstance(c, MultiDimensionalCounter) else [c]
        assert all(is_secure(p.noise) for p in parts)
    for t, step in enumerate(TAB_STREAM, start=1):
        check_dataset(alg.step(step), t)
        assert alg.t == t
    assert alg.trace is not None and len(alg.trace) == len(TAB_STREAM)
    for tr in alg.trace:
        check_selections(tr.selected, tr.scores, len(Q))


def test_offline_to_stream_on_the_default_source() -> None:
    """000-alg2 around MWEM (003-alg1); the offline algorithm draws through the scoped default source."""
    Q = all_marginal_queries(DOM, 1)

    def offline(diff: DifferentialDataset, noise: NoiseSource) -> SyntheticDataset:
        assert is_secure(noise)
        return select_measure_fit(diff, Q, 1.0, K, MultiplicativeWeights(), total=TotalRule.public(BATCH),
                                  noise=noise).g

    alg = OfflineToStream(DOM, offline, offline_claim(1.0, K, False, TotalRule.public(BATCH)))
    assert isinstance(alg.noise, SecureNoise)
    for t, step in enumerate(TAB_STREAM, start=1):
        check_dataset(alg.step(step), t)


# --- properties of the secure source itself --------------------------------------------------------------

def test_secure_releases_are_not_reproducible() -> None:
    """Two fresh SimpleCounters (each with its own default SecureNoise) on the same input differ.

    False alarm: the releases coincide only if all 5 continuous Laplace draws coincide. OpenDP returns
    Lap(1) rounded to a float, and the mass of one float x is at most ulp(x) * e^{-|x|} / 2 <= 2^-53 / e,
    so two independent draws agree with probability < 5e-17 and five pairs with probability < 1e-80."""
    stream = [1, 0, 1, 1, 0]
    a, b = SimpleCounter(1.0), SimpleCounter(1.0)
    assert isinstance(a.noise, SecureNoise) and isinstance(b.noise, SecureNoise) and a.noise is not b.noise
    assert a.run(stream) != b.run(stream)


def test_secure_integer_draws_are_not_clamped_to_32_bits() -> None:
    """Regression: OpenDP maps ``T=int`` to i32, whose noise saturates at -2^31 and 2^31 - 1; the draws
    of Lap_Z and N_Z must follow their law on Z. At scale 1e10, P(|Lap_Z| <= 2^31) ~ 1 - e^{-0.2147} <
    0.20 and P(|N_Z(0, 1e20)| <= 2^31) ~ P(|N(0,1)| <= 0.2147) < 0.18, so a false alarm (40 draws all of
    magnitude <= 2^31) has probability < 0.2^40 < 1e-27 per kind."""
    noise = SecureNoise()
    draws: list[Callable[[int], int]] = [lambda i: noise.add_discrete_laplace(f"dl i={i}", 0, 1e10),
                                         lambda i: noise.add_discrete_gaussian(f"dg i={i}", 0, 1e20)]
    for draw in draws:
        values = [draw(i) for i in range(40)]
        assert all(type(v) is int for v in values)
        assert any(abs(v) > 2**31 for v in values)  # impossible in i32 (its values lie in [-2^31, 2^31 - 1])
