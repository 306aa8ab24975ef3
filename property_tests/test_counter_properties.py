"""Hypothesis properties shared by every continual counter: causality, linearity, state size."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

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
from dpstream.noise import InsecureSeededNoise, NoiseSource
from dpstream.testing import record_run, replay_run

# name -> (factory(noise), state-size bound as a function of t)
# Horizon-bounded counters get T = 8192 so that the 5000-step state test fits.
COUNTERS: dict[str, tuple[Callable[[NoiseSource], Counter], Callable[[int], float]]] = {
    "simple": (lambda n: SimpleCounter(0.8, n), lambda t: 1),
    "block-8": (lambda n: BlockCounter(0.8, 8, n), lambda t: 3),  # O(1)
    "block-1": (lambda n: BlockCounter(0.8, 1, n), lambda t: 3),
    "binary-tree": (lambda n: BinaryTreeCounter(0.8, 8192, n), lambda t: 2 * (math.floor(math.log2(t)) + 1)),
    "binary-tree-discrete": (lambda n: BinaryTreeCounter(0.8, 8192, n, discrete=True),
                             lambda t: 2 * (math.floor(math.log2(t)) + 1)),  # O(log t)
    "tree-aggregation": (lambda n: TreeAggregationCounter(0.8, 8192, n),
                         lambda t: 2 * (math.floor(math.log2(t)) + 1)),  # O(log t)
    "unbounded-block": (lambda n: UnboundedBlockCounter(0.8, n), lambda t: 6),  # O(1)
    "hybrid": (lambda n: HybridCounter(0.8, n), lambda t: 3 + 2 * (math.floor(math.log2(t)) + 1)),  # O(log t)
}

streams = st.lists(st.integers(min_value=-3, max_value=3), min_size=1, max_size=40)


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
    return MultiDimensionalCounter.build(lambda e, n: BlockCounter(e, 3, n), 2, 0.8, noise)


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
