"""Hypothesis properties of the foundation (family "counters").

* every continual counter: causality, linearity under a fixed tape, state size, the exact error law
  against its paper model over random parameters and streams, the finite horizon;
* the Laplace, discrete Gaussian and exponential mechanisms (dpstream.mechanisms);
* the noise sources and tapes (validation before any draw, reproducibility, scoping, round trip,
  replay in any order and its failures);
* the audit engine's Clopper-Pearson bounds and neighbour generators.

No property is statistical: every assertion is exact (up to floating-point slack) for every example.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from dpstream.audit.bounds import subgaussian_bound, tree_aggregation_printed_bound
from dpstream.audit.counters.loss import stream_entry_epsilon, stream_entry_rho
from dpstream.audit.counters.mechanisms import exponential_mechanism_law
from dpstream.audit.counters.models import (
    binary_tree_counter_model,
    block_counter_model,
    hybrid_counter_model,
    multidimensional_model,
    simple_counter_model,
    tree_aggregation_model,
    unbounded_block_model,
)
from dpstream.audit.exact import finite_sup_loss
from dpstream.audit.linear_model import LinearReleaseModel, NoiseLaw
from dpstream.audit.neighbours import counter_positions, is_neighbour, stream_entry_pairs
from dpstream.audit.stats import clopper_pearson_lower, clopper_pearson_upper, eps_lower_bound
from dpstream.counters import (
    BinaryTreeCounter,
    BlockCounter,
    Counter,
    HybridCounter,
    MultiDimensionalCounter,
    SimpleCounter,
    TreeAggregationCounter,
    UnboundedBlockCounter,
)
from dpstream.errors import DPStreamInputError, HorizonExceededError, StreamRangeError
from dpstream.insecure import InsecureSeededNoise, InsecureZeroNoise, TapeRecorder, TapeReplay
from dpstream.mechanisms import DiscreteGaussianMechanism, ExponentialMechanism, LaplaceMechanism
from dpstream.noise import ADDITIVE_KINDS, BaseNoiseSource, DrawKind, NoiseSource, scoped
from dpstream.tape import Tape, TapeMismatchError, TapeUnusedSitesError
from dpstream.testing import pins, record_run, replay_run
from dpstream.testing.strategies import block_sizes, counter_streams, epsilons, horizons, rhos

# name -> (factory(noise), state-size bound as a function of t)
# Horizon-bounded counters get T = 8192 so that the 5000-step state test fits.
COUNTERS: dict[str, tuple[Callable[[NoiseSource], Counter], Callable[[int], float]]] = {
    "simple": (lambda n: SimpleCounter(0.8, noise=n), lambda t: 1),
    "block-8": (lambda n: BlockCounter(0.8, 8, noise=n), lambda t: 3),  # O(1)
    "block-1": (lambda n: BlockCounter(0.8, 1, noise=n), lambda t: 3),
    "binary-tree": (lambda n: BinaryTreeCounter(0.8, 8192, noise=n), lambda t: 2 * (math.floor(math.log2(t)) + 1)),
    "binary-tree-discrete": (lambda n: BinaryTreeCounter(0.8, 8192, noise=n, discrete=True),
                             lambda t: 2 * (math.floor(math.log2(t)) + 1)),  # O(log t)
    "tree-aggregation": (lambda n: TreeAggregationCounter(0.8, 8192, noise=n),
                         lambda t: 2 * (math.floor(math.log2(t)) + 1)),  # O(log t)
    "unbounded-block": (lambda n: UnboundedBlockCounter(0.8, noise=n), lambda t: 6),  # O(1)
    "hybrid": (lambda n: HybridCounter(0.8, noise=n), lambda t: 3 + 2 * (math.floor(math.log2(t)) + 1)),  # O(log t)
}

streams = counter_streams("integer")


@settings(max_examples=30, deadline=None)
@given(f=streams, g=streams, seed=st.integers(0, 2**32 - 1))
def test_causality(f: list[int], g: list[int], seed: int) -> None:
    """The release at t is a function of f(1..t) and the noise only."""
    for factory, _ in COUNTERS.values():
        k = min(len(f), len(g))
        changed = f[:k] + g[k:]  # same prefix, different future
        a, tape = record_run(factory, f, seed=seed)
        assert replay_run(factory, f, tape) == a
        b, _ = record_run(factory, changed, seed=seed)
        assert a[:k] == b[:k]


@settings(max_examples=30, deadline=None)
@given(f=streams, seed=st.integers(0, 2**32 - 1), shift=st.integers(-5, 5))
def test_linearity_under_fixed_tape(f: list[int], seed: int, shift: int) -> None:
    """With the tape fixed, release(f + h) - release(f) = prefix sums of h (unbiased linear counters)."""
    h = [shift if i % 2 == 0 else 0 for i in range(len(f))]
    for factory, _ in COUNTERS.values():
        base, tape = record_run(factory, f, seed=seed)
        moved = replay_run(factory, [a + b for a, b in zip(f, h, strict=True)], tape)
        running = 0
        for t, (x, y) in enumerate(zip(base, moved, strict=True)):
            running += h[t]
            assert abs((y - x) - running) <= 1e-9 * (1 + abs(x) + abs(y))


def test_state_size_bounded_over_long_stream() -> None:
    for name, (factory, bound) in COUNTERS.items():
        counter = factory(InsecureSeededNoise(0))
        for t in range(1, 5001):
            counter.step(t % 3)
            assert counter.state_size() <= bound(t), name


def _multidim(noise: NoiseSource) -> MultiDimensionalCounter:
    return MultiDimensionalCounter.build(lambda e, n: BlockCounter(e, 3, noise=n), 2, 0.8, noise=noise)


@settings(max_examples=20, deadline=None)
@given(f=streams, g=streams, seed=st.integers(0, 2**32 - 1), shift=st.integers(-5, 5))
def test_multidimensional_causality_and_linearity(f: list[int], g: list[int], seed: int, shift: int) -> None:
    """001-sec4.3: coordinate i of the release depends on coordinate i of the inputs up to t only."""
    vec_f = [[a, -a] for a in f]
    k = min(len(f), len(g))
    changed = vec_f[:k] + [[b, 2 * b] for b in g[k:]]
    a, tape = record_run(_multidim, vec_f, seed=seed)
    b, _ = record_run(_multidim, changed, seed=seed)
    assert all(np.array_equal(x, y) for x, y in zip(a[:k], b[:k], strict=True))
    moved = replay_run(_multidim, [[x + shift, y] for x, y in vec_f], tape)
    for t, (x, y) in enumerate(zip(a, moved, strict=True), start=1):
        assert abs((y[0] - x[0]) - shift * t) <= 1e-9 * (1 + abs(x[0]) + abs(y[0]))
        assert y[1] == x[1]


# --- every counter against its paper model, over random parameters -------------------------------


KINDS = ["simple", "block", "binary-tree", "binary-tree-printed", "binary-tree-discrete", "tree-aggregation",
         "tree-aggregation-printed", "unbounded-block", "hybrid"]


@st.composite
def counter_runs(
    draw: st.DrawFn, kind: str
) -> tuple[str, Callable[[NoiseSource], Counter], LinearReleaseModel, list[float]]:
    """A counter of ``kind`` with random parameters, its independent model (``*_model``) and a stream of
    length <= T. Real-valued inputs for the Laplace counters, integers where the noise is integer
    (E-counters-4)."""
    eps = draw(epsilons())
    T = draw(horizons(max_value=70))
    if kind in ("binary-tree-printed", "tree-aggregation-printed"):
        T = max(T, 2)  # the printed scale is 0 at T = 1 (refused)
    length = draw(st.integers(min_value=(T + 1) // 2, max_value=T))  # long enough to reach later partitions
    integer = kind in ("binary-tree-discrete", "tree-aggregation")
    f = [float(v) for v in draw(counter_streams("integer" if integer else "real", length, length, bound=5))]
    B = draw(st.integers(min_value=1, max_value=6))
    factory: Callable[[NoiseSource], Counter]
    if kind == "simple":
        factory, model = (lambda n: SimpleCounter(eps, T, noise=n)), simple_counter_model(eps, T)
    elif kind == "block":
        factory, model = (lambda n: BlockCounter(eps, B, T, noise=n)), block_counter_model(eps, B, T)
    elif kind.startswith("binary-tree"):
        printed, discrete = kind.endswith("printed"), kind.endswith("discrete")
        factory = lambda n: BinaryTreeCounter(eps, T, noise=n, discrete=discrete, as_printed=printed)  # noqa: E731
        model = binary_tree_counter_model(eps, T, discrete=discrete, as_printed=printed)
    elif kind.startswith("tree-aggregation"):
        printed = kind.endswith("printed")
        factory = lambda n: TreeAggregationCounter(eps, T, noise=n, as_printed=printed)  # noqa: E731
        model = tree_aggregation_model(eps, T, as_printed=printed)
    elif kind == "unbounded-block":
        factory, model = (lambda n: UnboundedBlockCounter(eps, noise=n)), unbounded_block_model(eps, T)
    else:
        factory, model = (lambda n: HybridCounter(eps, noise=n)), hybrid_counter_model(eps, T)
    return kind, factory, model, f


@pytest.mark.parametrize("kind", KINDS)
@settings(max_examples=15, deadline=None)
@given(data=st.data(), seed=st.integers(0, 2**32 - 1))
def test_release_minus_prefix_sum_is_the_models_noise(kind: str, data: st.DataObject, seed: int) -> None:
    """Exact error law for random parameters and streams: g(t) - S(t) = (W z)_t with z read off the tape
    by site (the model is written from the pseudocode, not from the streaming code); the tape holds
    exactly the model's sites for the first len(f) releases, with the model's laws."""
    _, factory, model, f = data.draw(counter_runs(kind))
    releases, tape = record_run(factory, f, seed=seed)
    n = len(f)
    prefix = np.cumsum(f)
    assert np.allclose(model.mean(f + [0.0] * (model.input_length - n))[:n], prefix, rtol=0, atol=1e-9)
    noise = {d.site: float(d.value) for d in tape}
    full = {s: noise.get(s, 0.0) for s in model.sites}  # sites not drawn yet enter no release <= n
    err = np.asarray(releases) - prefix
    assert np.allclose(err, model.error(full)[:n], rtol=0, atol=1e-9 * (1 + float(np.abs(prefix).max()))), kind
    used = [j for j in range(len(model.sites)) if np.any(model.combination[:n, j] != 0)]
    assert {d.site for d in tape} == {model.sites[j] for j in used}, kind
    for d in tape:
        law = model.laws[model.sites.index(d.site)]
        assert d.kind is law.kind and next(iter(d.params.values())) == law.parameter, kind


@pins("E-counters-2")
@settings(max_examples=30, deadline=None)
@given(T=st.integers(min_value=1, max_value=20), eps=st.floats(min_value=0.1, max_value=4.0),
       kind=st.sampled_from(["simple", "block", "binary-tree", "tree-aggregation"]))
@example(T=8, eps=1.0, kind="binary-tree")
def test_finite_horizon_refused_before_any_draw(T: int, eps: float, kind: str) -> None:
    """Stepping to T + 1 raises HorizonExceededError (field t), draws nothing and changes nothing."""
    recorder = TapeRecorder(InsecureSeededNoise(0))
    makers: dict[str, Callable[[], Counter]] = {
        "simple": lambda: SimpleCounter(eps, T, noise=recorder),
        "block": lambda: BlockCounter(eps, 3, T, noise=recorder),
        "binary-tree": lambda: BinaryTreeCounter(eps, T, noise=recorder),
        "tree-aggregation": lambda: TreeAggregationCounter(eps, T, noise=recorder),
    }
    counter = makers[kind]()
    counter.run([1] * T)
    drawn, releases = len(recorder.tape), list(counter.releases)
    with pytest.raises(HorizonExceededError) as info:
        counter.step(1)
    assert info.value.field == "t" and counter.t == T
    assert len(recorder.tape) == drawn and counter.releases == releases


# --- the basic mechanisms ---------------------------------------------------------------------------

finite = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False)


@settings(max_examples=40, deadline=None)
@given(q=st.lists(finite, min_size=1, max_size=5), c=finite, eps=st.floats(min_value=0.01, max_value=10.0),
       delta=st.floats(min_value=0.01, max_value=10.0), seed=st.integers(0, 2**32 - 1))
def test_laplace_mechanism_adds_exactly_its_draws(q: list[float], c: float, eps: float, delta: float,
                                                   seed: int) -> None:
    """000-def3.1: release = q + Lap(Delta/eps) per coordinate; under one tape, shifting q shifts the release."""
    mech = LaplaceMechanism(eps, delta)
    recorder = TapeRecorder(InsecureSeededNoise(seed))
    out = mech.release_vector(recorder, "m", q)
    draws = recorder.tape.draws
    assert [d.site for d in draws] == [f"m i={i}" for i in range(len(q))]
    assert all(d.params == {"scale": delta / eps} for d in draws)
    assert np.array_equal(out, np.array(q) + np.array([d.value for d in draws]))
    moved = mech.release_vector(TapeReplay(recorder.tape), "m", [x + c for x in q])
    assert np.allclose(moved - out, c, rtol=0, atol=1e-9 * (1 + abs(c) + float(np.abs(out).max())))


@pins("E-counters-5")
@settings(max_examples=40, deadline=None)
@given(q=st.lists(st.integers(-10**6, 10**6), min_size=1, max_size=5),
       rho=st.floats(min_value=0.01, max_value=10.0), delta=st.integers(1, 5), seed=st.integers(0, 2**32 - 1))
@example(q=[0], rho=0.5, delta=3, seed=0)
def test_discrete_gaussian_mechanism_integer_release_and_calibration(q: list[int], rho: float, delta: int,
                                                                      seed: int) -> None:
    """002-def2.2: q + N_Z(0, Delta^2/(2 rho)) (integers); the printed Delta/(2 rho) costs rho * Delta."""
    mech = DiscreteGaussianMechanism(rho, delta)
    recorder = TapeRecorder(InsecureSeededNoise(seed))
    out = mech.release_vector(recorder, "m", q)
    assert all(isinstance(v, int) for v in out)
    assert out == [x + int(d.value) for x, d in zip(q, recorder.tape.draws, strict=True)]
    assert {d.params["sigma2"] for d in recorder.tape} == {delta**2 / (2 * rho)}
    assert mech.true_rho == pytest.approx(rho, rel=1e-12)
    printed = DiscreteGaussianMechanism(rho, delta, as_printed=True)
    assert printed.true_rho == pytest.approx(rho * delta, rel=1e-12)


@st.composite
def em_neighbours(draw: st.DrawFn) -> tuple[list[float], list[float], float, float]:
    """Utility vectors u, u' with ||u - u'||_inf <= Delta (003-def3.8's sensitivity)."""
    k = draw(st.integers(1, 6))
    delta = draw(st.floats(min_value=0.1, max_value=5.0))
    u = draw(st.lists(st.floats(min_value=-50.0, max_value=50.0), min_size=k, max_size=k))
    moves = draw(st.lists(st.floats(min_value=-1.0, max_value=1.0), min_size=k, max_size=k))
    eps = draw(st.floats(min_value=0.05, max_value=5.0))
    return u, [x + delta * m for x, m in zip(u, moves, strict=True)], delta, eps


@settings(max_examples=80, deadline=None)
@given(case=em_neighbours())
def test_exponential_mechanism_law_is_eps_dp_for_either_sign(case: tuple[list[float], list[float], float, float]
                                                             ) -> None:
    """003-thm3.9 numerically: the selection law exp(+-eps u/(2 Delta)) moves by at most e^eps between
    utilities at l_inf distance Delta (both signs: E-audit-1 concerns accuracy, not privacy)."""
    u, v, delta, eps = case
    for printed in (False, True):
        p = exponential_mechanism_law(u, eps, delta, as_printed=printed)
        q = exponential_mechanism_law(v, eps, delta, as_printed=printed)
        assert finite_sup_loss(p, q) <= eps * (1 + 1e-9)


@pins("E-audit-1", "E-tabular-2")
@settings(max_examples=40, deadline=None)
@given(u=st.lists(st.floats(min_value=-1e3, max_value=1e3), min_size=1, max_size=6),
       eps=st.floats(min_value=0.05, max_value=5.0), seed=st.integers(0, 2**32 - 1))
@example(u=[0.0, 4.0, 8.0, 12.0], eps=1.0, seed=0)
def test_exponential_mechanism_draw_and_sign(u: list[float], eps: float, seed: int) -> None:
    """select() hands the source exactly the utilities (negated as printed); noiseless it picks arg max
    (arg min as printed); the selected index is in range."""
    for printed in (False, True):
        mech = ExponentialMechanism(eps, 2.0, as_printed=printed)
        recorder = TapeRecorder(InsecureSeededNoise(seed))
        i = mech.select(recorder, "s", u)
        (d,) = recorder.tape.draws
        assert d.params == {"scores": [-x if printed else x for x in u], "epsilon": eps, "sensitivity": 2.0}
        assert 0 <= i < len(u) and d.value == i
        best = mech.select(InsecureZeroNoise(), "s", u)
        assert u[best] == (min(u) if printed else max(u))


# --- the noise sources and tapes ---------------------------------------------------------------------

bad_positive = st.one_of(st.floats(max_value=0.0), st.just(math.inf), st.just(-math.inf), st.just(math.nan))
SOURCES: list[Callable[[], NoiseSource]] = [lambda: InsecureSeededNoise(0), InsecureZeroNoise]


@settings(max_examples=40, deadline=None)
@given(bad=bad_positive, which=st.integers(0, len(SOURCES) - 1),
       call=st.sampled_from(["laplace", "discrete_laplace", "discrete_gaussian", "em_eps", "em_delta"]))
def test_invalid_parameters_raise_before_any_draw(bad: float, which: int, call: str) -> None:
    """Every source refuses non-positive or non-finite scales, variances, eps and Delta with the field name,
    before drawing (the recorder around it records nothing)."""
    recorder = TapeRecorder(SOURCES[which]())
    draw: dict[str, tuple[Callable[[], object], str]] = {
        "laplace": (lambda: recorder.add_laplace("s", 0.0, bad), "scale"),
        "discrete_laplace": (lambda: recorder.add_discrete_laplace("s", 0, bad), "scale"),
        "discrete_gaussian": (lambda: recorder.add_discrete_gaussian("s", 0, bad), "sigma2"),
        "em_eps": (lambda: recorder.exponential_mechanism("s", [0.0, 1.0], bad, 1.0), "epsilon"),
        "em_delta": (lambda: recorder.exponential_mechanism("s", [0.0, 1.0], 1.0, bad), "sensitivity"),
    }
    fn, field = draw[call]
    with pytest.raises(DPStreamInputError) as info:
        fn()
    assert info.value.field == field and len(recorder.tape) == 0


@st.composite
def draw_programs(draw: st.DrawFn) -> list[tuple[str, dict[str, Any]]]:
    """A random sequence of draws (kind, parameters) of every kind."""
    out: list[tuple[str, dict[str, Any]]] = []
    for _ in range(draw(st.integers(1, 12))):
        kind = draw(st.sampled_from([k.value for k in DrawKind]))
        pos = st.floats(min_value=1e-3, max_value=1e3)
        if kind in ("laplace", "discrete_laplace"):
            params: dict[str, Any] = {"scale": draw(pos)}
        elif kind == "discrete_gaussian":
            params = {"sigma2": draw(pos)}
        elif kind == "exponential_mechanism":
            params = {"scores": draw(st.lists(st.floats(-100, 100), min_size=1, max_size=5)),
                      "epsilon": draw(pos), "sensitivity": draw(pos)}
        elif kind == "coin":
            params = {}
        elif kind == "choice":
            n = draw(st.integers(0, 12))
            params = {"n": n, "k": draw(st.integers(0, n))}
        else:
            d = draw(st.integers(1, 3))
            low = draw(st.lists(st.floats(-10, 10), min_size=d, max_size=d))
            width = draw(st.lists(st.floats(0.5, 10), min_size=d, max_size=d))
            params = {"low": low, "high": [a + w for a, w in zip(low, width, strict=True)],
                      "count": draw(st.integers(0, 3))}
        out.append((kind, params))
    return out


def _as_json(value: object) -> object:
    return value.tolist() if isinstance(value, np.ndarray) else list(value) if isinstance(value, tuple) else value


@settings(max_examples=40, deadline=None)
@given(program=draw_programs(), seed=st.integers(0, 2**32 - 1), order=st.randoms(use_true_random=False))
def test_tape_round_trip_and_replay_in_any_order(program: list[tuple[str, dict[str, Any]]], seed: int,
                                                 order: Any) -> None:
    """Record any draw sequence, serialise, parse, replay in a shuffled order: the same values; values
    lie in their kind's support; a missing draw is reported as unused, a changed parameter as a mismatch."""
    recorder = TapeRecorder(InsecureSeededNoise(seed))
    values = {}
    for i, (kind, params) in enumerate(program):
        values[f"s{i}"] = draw_any(recorder, f"s{i}", DrawKind(kind), params)
    tape = Tape.loads(recorder.tape.dumps())
    assert tape.dumps() == recorder.tape.dumps()
    for d in tape:
        if d.kind is DrawKind.EXPONENTIAL_MECHANISM:
            assert 0 <= d.value < len(d.params["scores"])
        elif d.kind is DrawKind.CHOICE:
            assert list(d.value) == sorted(set(d.value)) and all(0 <= j < d.params["n"] for j in d.value)
        elif d.kind is DrawKind.UNIFORM_BOX:
            arr = np.asarray(d.value)
            assert arr.shape == (d.params["count"], len(d.params["low"]))
            assert np.all((arr >= d.params["low"]) & (arr <= d.params["high"]))
    indices = list(range(len(program)))
    order.shuffle(indices)
    with TapeReplay(tape) as replay:
        for i in indices:
            kind, params = program[i]
            assert _as_json(draw_any(replay, f"s{i}", DrawKind(kind), params)) == _as_json(values[f"s{i}"])
    if len(program) > 1:
        partial = TapeReplay(tape)
        kind, params = program[0]
        draw_any(partial, "s0", DrawKind(kind), params)
        with pytest.raises(TapeUnusedSitesError):
            partial.assert_exhausted()
    kind, params = program[0]
    if kind in ("laplace", "discrete_laplace"):
        with pytest.raises(TapeMismatchError):
            draw_any(TapeReplay(tape), "s0", DrawKind(kind), {"scale": params["scale"] * 2})


@settings(max_examples=30, deadline=None)
@given(program=draw_programs(), seed=st.integers(0, 2**32 - 1), prefix=st.text(min_size=1, max_size=8))
def test_seeded_source_reproducible_and_scopes_prefix_sites(program: list[tuple[str, dict[str, Any]]], seed: int,
                                                            prefix: str) -> None:
    """The seeded source gives the same values for the same seed and draw sequence; ``scoped`` only renames
    the sites (prefix + ' / ' + site) and changes no value."""
    a, b = TapeRecorder(InsecureSeededNoise(seed)), TapeRecorder(InsecureSeededNoise(seed))
    inner = scoped(b, prefix)
    for i, (kind, params) in enumerate(program):
        x = draw_any(a, f"s{i}", DrawKind(kind), params)
        y = scoped_draw(inner, f"s{i}", DrawKind(kind), params)
        assert _as_json(x) == _as_json(y)
    assert [f"{prefix} / {d.site}" for d in a.tape] == [d.site for d in b.tape]


def scoped_draw(source: NoiseSource, name: str, kind: DrawKind, params: dict[str, Any]) -> object:
    assert isinstance(source, BaseNoiseSource)
    return draw_any(source, name, kind, params)


def draw_any(source: BaseNoiseSource, name: str, kind: DrawKind, params: dict[str, Any]) -> object:
    """One draw of any kind; an additive draw on the value 0 (its release is the noise sample: insecure sources)."""
    if kind in ADDITIVE_KINDS:
        return source.add(name, kind, 0.0 if kind is DrawKind.LAPLACE else 0, **params)
    return source.draw(name, kind, **params)


# --- audit statistics and neighbours -----------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 3000), frac=st.floats(0.0, 1.0), a=st.floats(min_value=1e-9, max_value=0.5))
def test_clopper_pearson_brackets_the_frequency(n: int, frac: float, a: float) -> None:
    """0 <= CP_lower(k) <= k/n <= CP_upper(k) <= 1, monotone in k; eps_lb(k, k) < 0 (equal counts show nothing)."""
    k = round(frac * n)
    lo, hi = clopper_pearson_lower(k, n, a), clopper_pearson_upper(k, n, a)
    assert 0.0 <= lo <= k / n <= hi <= 1.0
    if k < n:
        assert clopper_pearson_lower(k + 1, n, a) >= lo and clopper_pearson_upper(k + 1, n, a) >= hi
    assert eps_lower_bound(k, n, k, n, a) < 0.0


@settings(max_examples=40, deadline=None)
@given(base=st.lists(st.integers(-3, 3), min_size=1, max_size=30), data=st.data())
def test_generated_counter_pairs_are_legal_neighbours(base: list[int], data: st.DataObject) -> None:
    """Every pair from counter_positions/stream_entry_pairs is a STREAM_ENTRY neighbour at the named time."""
    T = len(base)
    block = data.draw(st.one_of(st.none(), st.integers(1, T)))
    delta = data.draw(st.sampled_from([1.0, -1.0, 0.5]))
    pairs = stream_entry_pairs(base, counter_positions(T, block=block, every=data.draw(st.booleans())), delta)
    assert pairs and all(is_neighbour(p) for p in pairs)
    for p in pairs:
        t = int(p.label.split()[0][2:].rstrip(","))
        diff = [i + 1 for i, (x, y) in enumerate(zip(p.f, p.f_prime, strict=True)) if x != y]
        assert diff == [t]


# --- errata pinned: the property the default meets for every input, with the erratum's case as @example ----


@pins("E-counters-1")
@settings(max_examples=15, deadline=None)
@given(T=horizons(max_value=300), eps=epsilons())
@example(T=16, eps=1.0)
def test_binary_tree_scale_meets_eps_and_the_printed_scale_loses_more(T: int, eps: float) -> None:
    """The default's exact loss is eps for every T; the printed log2(T)/eps loses eps (floor(log2 T)+1)/log2 T,
    more than eps for every T >= 2 (1.25 eps at T = 16: an input enters 5 nodes of scale 4/eps)."""
    assert stream_entry_epsilon(binary_tree_counter_model(eps, T)).value == pytest.approx(eps, rel=1e-9)
    if T >= 2:
        printed = stream_entry_epsilon(binary_tree_counter_model(eps, T, as_printed=True)).value
        assert printed == pytest.approx(eps * (math.floor(math.log2(T)) + 1) / math.log2(T), rel=1e-9)
        assert printed > eps


@pins("E-counters-3")
@settings(max_examples=15, deadline=None)
@given(T=horizons(max_value=300), rho=rhos())
@example(T=16, rho=0.5)
def test_tree_aggregation_variance_meets_rho_and_the_printed_one_costs_more(T: int, rho: float) -> None:
    """sigma^2 = (floor(log2 T)+1)/(2 rho) costs exactly rho; the printed log2(T)/(2 rho) costs
    rho (floor(log2 T)+1)/log2 T (0.625 at rho = 0.5, T = 16)."""
    assert stream_entry_rho(tree_aggregation_model(rho, T)).value == pytest.approx(rho, rel=1e-9)
    if T >= 2:
        printed = stream_entry_rho(tree_aggregation_model(rho, T, as_printed=True)).value
        assert printed == pytest.approx(rho * (math.floor(math.log2(T)) + 1) / math.log2(T), rel=1e-9)


@pins("E-counters-4")
@settings(max_examples=20, deadline=None)
@given(z=st.floats(-10.0, 10.0).filter(lambda x: not x.is_integer()), T=horizons(min_value=2, max_value=20),
       rho=rhos())
@example(z=0.5, T=16, rho=0.5)
def test_tree_aggregation_refuses_non_integer_inputs_before_any_draw(z: float, T: int, rho: float) -> None:
    """Integer noise on a non-integer input tells neighbours apart with certainty: the default refuses it (field
    f(t)) before any draw; the printed variant accepts it and releases z + an integer."""
    recorder = TapeRecorder(InsecureSeededNoise(0))
    counter = TreeAggregationCounter(rho, T, noise=recorder)
    with pytest.raises(DPStreamInputError) as info:
        counter.step(z)
    assert info.value.field == "f(t)" and counter.t == 0 and len(recorder.tape) == 0
    noise = TreeAggregationCounter(rho, T, noise=InsecureSeededNoise(0), as_printed=True).step(z) - z
    assert abs(noise - round(noise)) <= 1e-9 * (1 + abs(z))


@pins("E-counters-6")
@settings(max_examples=20, deadline=None)
@given(eps=st.lists(epsilons(0.1, 2.0), min_size=1, max_size=4), T=horizons(max_value=12), B=block_sizes(4))
@example(eps=[0.3, 0.7, 0.5], T=6, B=2)
def test_multidimensional_counter_claims_the_max_when_losses_scale_with_l1(eps: list[float], T: int, B: int) -> None:
    """001-sec4.3 states no parameter: for Laplace-linear components the exact loss under sum_t ||f(t)-f'(t)||_1 <= 1
    is at most max_i eps_i (not the sum), and that is the claim."""
    models = [(simple_counter_model(e, T) if i % 2 == 0 else block_counter_model(e, B, T)) for i, e in enumerate(eps)]
    exact = stream_entry_epsilon(multidimensional_model(models)).value
    assert exact <= max(eps) * (1 + 1e-9)
    if eps == [0.3, 0.7, 0.5] and (T, B) == (6, 2):
        assert exact == pytest.approx(0.7, rel=1e-12)  # the max, not the sum 1.5
    counter = MultiDimensionalCounter([SimpleCounter(e, noise=InsecureSeededNoise(i)) if i % 2 == 0
                                       else BlockCounter(e, B, noise=InsecureSeededNoise(i))
                                       for i, e in enumerate(eps)])
    assert counter.claim.parameter == pytest.approx(max(eps))


def _tail(sigma2: float, nodes: int, alpha: float) -> float:
    """P(|sum of ``nodes`` independent N_Z(0, sigma2)| >= alpha), by exact convolution of the pmfs."""
    r = int(40 * math.sqrt(sigma2)) + 2
    z = np.arange(-r, r + 1)
    p = np.exp(NoiseLaw.discrete_gaussian(sigma2).log_pdf(z.astype(float)))
    q = p
    for _ in range(nodes - 1):
        q = np.convolve(q, p)
    support = np.arange(len(q)) - len(q) // 2
    return float(q[np.abs(support) >= alpha - 1e-9].sum())


@pins("E-audit-2")
@settings(max_examples=15, deadline=None)
@given(rho=rhos(0.2, 5.0), T=horizons(max_value=16), beta=st.floats(0.01, 0.5))
@example(rho=1.0, T=2, beta=math.exp(-1.0))
def test_tree_aggregation_two_sided_subgaussian_bound_holds_exactly(rho: float, T: int, beta: float) -> None:
    """The audits' two-sided sub-Gaussian bound holds at every t for the exact error law of the tree counter; 002 App.
    B's one-sided bound fails for a single node of variance 1/2 (rho = 1, T = 2 with the printed variance:
    P(|N_Z(0, 1/2)| >= 1) = 0.436 > e^-1)."""
    model = tree_aggregation_model(rho, T)
    bound = subgaussian_bound(model, beta)
    sigma2 = model.laws[0].parameter
    for t in range(1, T + 1):
        nodes = int(np.count_nonzero(model.combination[t - 1]))
        assert _tail(sigma2, nodes, bound.values[t - 1]) <= beta
    if (rho, T) == (1.0, 2) and beta == math.exp(-1.0):
        printed_sigma2 = tree_aggregation_model(rho, T, as_printed=True).laws[0].parameter
        assert printed_sigma2 == 0.5
        alpha = tree_aggregation_printed_bound(printed_sigma2, T, beta).values[0]
        tail = _tail(printed_sigma2, 1, alpha)
        assert tail == pytest.approx(0.43587, abs=5e-6)
        assert tail > beta


# --- the range: inputs and sums within +-(2^53 - 1) (docs/counters.md, "Range") -----------------------------------

RANGE = 2**53 - 1
"""MAX_STREAM_SUM, written out."""


class _StatisticSpy(InsecureZeroNoise):
    """Zero noise that keeps the statistic handed to every additive draw (site -> value), i.e. what the door noises."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: dict[str, Any] = {}

    def _add(self, site: str, kind: DrawKind, params: dict[str, Any], value: Any) -> tuple[Any, Any]:
        self.seen[site] = value
        return super()._add(site, kind, params, value)


def _lsb(t: int) -> int:
    return t & -t


def _exact_statistics(name: str, f: list[int]) -> tuple[dict[str, int], int | None]:
    """An oracle in Python integers, written from the printed boxes: the statistic every site noises for the steps
    before the first one the range rule refuses, and the index of that step (None: every step accepted)."""
    seen: dict[str, int] = {}
    block = pending = 0
    B, T, start = 2, 4, 0  # 003-alg4's first partition
    local: list[int] = []  # the hybrid's B_k inputs
    for i, x in enumerate(f):
        t = i + 1
        sums: list[int] = [x]
        found: dict[str, int] = {}
        if name == "simple":
            found[f"001-alg8 L4 t={t}"] = x
        elif name == "block":  # B = 3
            sums.append(block + x)
            if t % 3 == 0:
                found[f"001-alg9 L7 t={t}"] = block + x
            else:
                found[f"001-alg9 L10 t={t}"] = x
        elif name in ("binary-tree", "binary-tree-discrete", "tree-aggregation"):
            node = sum(f[t - _lsb(t):t])  # (t - lsb(t), t]
            sums.append(node)
            found[f"{'002-alg3 u8' if name == 'tree-aggregation' else '001-alg10 L8'} t={t}"] = node
        elif name == "unbounded-block":
            sums.append(block + x)
            if (t - start) % B == 0:
                found[f"003-alg4 L14 t={t}"] = block + x
            else:
                found[f"003-alg4 L21 t={t}"] = x
        elif name == "hybrid":
            sums.append(pending + x)
            if t & (t - 1) == 0:
                found[f"CSS11-hybrid L t={t}"] = pending + x
            else:
                k = t.bit_length() - 1
                tau = t - 2**k
                node = sum([*local, x][tau - _lsb(tau):tau])
                sums.append(node)
                found[f"CSS11-hybrid B k={k} / 001-alg10 L8 t={tau}"] = node
        if any(abs(s) > RANGE for s in sums):
            return seen, i
        seen.update(found)
        if name == "block":
            block = 0 if t % 3 == 0 else block + x
        elif name == "unbounded-block":
            block = 0 if (t - start) % B == 0 else block + x
            if t - start == T:
                start, B = t, B + 1
                T = B * B
        elif name == "hybrid":
            pending, local = (0, []) if t & (t - 1) == 0 else (pending + x, [*local, x])
    return seen, None


RANGE_COUNTERS: dict[str, Callable[[NoiseSource], Counter]] = {
    "simple": lambda n: SimpleCounter(1.0, noise=n),
    "block": lambda n: BlockCounter(1.0, 3, noise=n),
    "binary-tree": lambda n: BinaryTreeCounter(1.0, 64, noise=n),
    "binary-tree-discrete": lambda n: BinaryTreeCounter(1.0, 64, noise=n, discrete=True),
    "tree-aggregation": lambda n: TreeAggregationCounter(1.0, 64, noise=n),
    "unbounded-block": lambda n: UnboundedBlockCounter(1.0, noise=n),
    "hybrid": lambda n: HybridCounter(1.0, noise=n),
}


def _range_problems(name: str, f: list[int]) -> list[str]:
    """What the counter does differently from the oracle: a step refused or accepted against the rule, or a
    statistic handed to the noise door that is not the exact integer sum (empty: none)."""
    spy = _StatisticSpy()
    counter = RANGE_COUNTERS[name](spy)
    expected, refused_at = _exact_statistics(name, f)
    problems = []
    for i, x in enumerate(f):
        try:
            counter.step(x)
        except StreamRangeError:
            if i != refused_at:
                problems.append(f"step {i + 1} refused, the rule refuses step {refused_at}")
            break
        if i == refused_at:
            problems.append(f"step {i + 1} accepted: an input or a sum leaves +-(2^53 - 1)")
            break
    problems += [f"{s}: {spy.seen.get(s)!r} noised, exact {v}" for s, v in expected.items() if spy.seen.get(s) != v]
    return problems


@pytest.mark.parametrize("name", RANGE_COUNTERS)
@settings(max_examples=60, deadline=None)
@given(f=counter_streams("edge", max_size=20))
@example(f=[2**53 + 1])
@example(f=[2**53 - 2, 1])
@example(f=[2, 0, 2**53 - 1, -(2**53 - 1)])
def test_every_noised_statistic_is_exact_or_the_step_is_refused(name: str, f: list[int]) -> None:
    """Streams at and around +-(2^53 - 1): every statistic handed to the noise door equals the exact (Python integer)
    sum the printed box defines, and a step is refused exactly when its input or a sum it forms leaves the range. So
    inputs at l1 distance 1 always give statistics exactly 1 apart (the review's 2^53 + 1 and 2^53 + 2 gave 2)."""
    assert _range_problems(name, f) == []


def test_the_range_property_catches_the_counters_without_the_rule(monkeypatch: pytest.MonkeyPatch) -> None:
    """The property fails on the counters as they were: no range check (the review's pair is accepted and noised as
    2^53), and p-sums summed left to right (f = (2, 0, M, -M) noised 1 at t = 4, not 2)."""
    from dpstream.counters import base, binary_tree, tree_aggregation
    from dpstream.errors import require_finite_real

    def unchecked(self: Counter, x: object) -> float:
        return float(int(x)) if self.integer_input else require_finite_real("f(t)", x)  # type: ignore[call-overload]

    def left_to_right(alpha: list[float], j: int, x: float) -> float:
        return sum(alpha[i] for i in range(j)) + x

    assert _range_problems("binary-tree-discrete", [2**53 + 1]) == []
    with monkeypatch.context() as patch:
        patch.setattr(base.Counter, "validate_input", unchecked)
        assert _range_problems("binary-tree-discrete", [2**53 + 1]) == [
            "step 1 accepted: an input or a sum leaves +-(2^53 - 1)"]
    with monkeypatch.context() as patch:
        for module in (binary_tree, tree_aggregation):
            patch.setattr(module, "p_sum", left_to_right)
        for name in ("binary-tree", "binary-tree-discrete", "tree-aggregation"):
            problems = _range_problems(name, [2, 0, RANGE, -RANGE])
            assert len(problems) == 1 and problems[0].endswith(("t=4: 1 noised, exact 2", "t=4: 1.0 noised, exact 2"))
