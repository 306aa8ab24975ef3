"""The counters' range (docs/counters.md, "Range"): every input and every sum of inputs a counter forms lies within
+-MAX_STREAM_SUM = 2^53 - 1, or the step is refused (StreamRangeError) before any draw and any state change.

The finding behind it: ``BinaryTreeCounter(1.0, 2, discrete=True)`` released 2^53 and 2^53 + 2 for the inputs
2^53 + 1 and 2^53 + 2 (l1 distance 1): twice the sensitivity its claim is proved for. Every expected number here is
written from the rule (Python integers), not taken from the counters.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import pytest

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
from dpstream.errors import MAX_STREAM_SUM, DPStreamInputError, StreamRangeError
from dpstream.insecure import InsecureSeededNoise, InsecureZeroNoise, TapeRecorder
from dpstream.noise import NoiseSource

M = 2**53 - 1
"""The bound, written out (not read from the package)."""

Step = Any
Factory = Callable[[NoiseSource], Any]

COUNTERS: dict[str, Factory] = {
    "simple": lambda n: SimpleCounter(1.0, noise=n),
    "block": lambda n: BlockCounter(1.0, 2, noise=n),
    "binary-tree": lambda n: BinaryTreeCounter(1.0, 16, noise=n),
    "binary-tree-discrete": lambda n: BinaryTreeCounter(1.0, 16, noise=n, discrete=True),
    "binary-tree-printed": lambda n: BinaryTreeCounter(1.0, 16, noise=n, as_printed=True),
    "tree-aggregation": lambda n: TreeAggregationCounter(0.5, 16, noise=n),
    "tree-aggregation-printed": lambda n: TreeAggregationCounter(0.5, 16, noise=n, as_printed=True),
    "unbounded-block": lambda n: UnboundedBlockCounter(1.0, noise=n),
    "hybrid": lambda n: HybridCounter(1.0, noise=n),
    "multidim-tree": lambda n: MultiDimensionalCounter.build(lambda e, s: BinaryTreeCounter(e, 16, noise=s), 2, 1.0,
                                                             noise=n),
}


def _wrap(name: str, x: Any) -> Any:
    """The input of counter ``name``: a vector (x, 0) for the multi-dimensional counter."""
    return [x, 0] if name.startswith("multidim") else x


def test_the_constant_is_2_to_the_53_minus_1() -> None:
    assert MAX_STREAM_SUM == M == 9007199254740991
    assert float(M) == M and float(M + 1) == M + 1 and float(M + 2) == M + 1  # 2^53 + 1 reads as 2^53


def test_the_review_pair_is_refused_and_the_pairs_inside_differ_by_exactly_one() -> None:
    """The finding: 2^53 + 1 and 2^53 + 2 are refused (before, they gave sums 2 apart); inside the range the
    zero-noise releases of inputs at distance 1 are exactly 1 apart, also at the bound."""
    for x in (2**53 + 1, 2**53 + 2):
        counter = BinaryTreeCounter(1.0, 2, noise=InsecureZeroNoise(), discrete=True)
        with pytest.raises(StreamRangeError, match=r"^f\(t\): must lie within \+-\(2\^53 - 1\) \(MAX_STREAM_SUM"):
            counter.step(x)
        assert counter.t == 0 and counter.releases == [] and counter.state_size() == 0
    for a in (M - 1, -M, 0, 2**52):
        pair = [BinaryTreeCounter(1.0, 2, noise=InsecureZeroNoise(), discrete=True).run([x])[0] for x in (a, a + 1)]
        assert pair == [a, a + 1] and pair[1] - pair[0] == 1
    # the same for a p-sum at the bound: f = (M - 1, 1) and (M - 1, 0) give alpha_1 = M and M - 1
    ends = [BinaryTreeCounter(1.0, 2, noise=InsecureZeroNoise(), discrete=True).run([M - 1, y])[1] for y in (0, 1)]
    assert ends == [M - 1, M]


@pytest.mark.parametrize("name", COUNTERS)
def test_inputs_at_the_bound_are_accepted(name: str) -> None:
    for x in (M, -M):
        counter = COUNTERS[name](InsecureZeroNoise())
        counter.step(_wrap(name, x))
        counter.step(_wrap(name, -x))  # every sum back to 0
        assert counter.t == 2


OUTSIDE = [M + 1, -(M + 1), 2**53 + 1, 2**63, -(2**64), 10**400, float(2**53), -float(2**53),
           math.nextafter(float(M), math.inf), 1e300, -1e300, 1.7976931348623157e308]
"""Inputs just and far outside +-(2^53 - 1): integers (one too large for a float), and floats."""


def _run(make: Callable[[NoiseSource], Any], seed: int, stream: Sequence[Any], bad: Any | None, at: int
         ) -> tuple[list[Any], list[str], Any]:
    """Run ``stream`` on a recorded seeded source, sending ``bad`` (which must be refused, before any draw and
    without a state change) before item ``at``; returns the releases, the sites drawn and the refusal."""
    recorder = TapeRecorder(InsecureSeededNoise(seed))
    counter = make(recorder)
    releases: list[Any] = []
    refusal = None
    for i, x in enumerate(stream):
        if i == at and bad is not None:
            t, drawn, size = counter.t, len(recorder.tape), counter.state_size()
            with pytest.raises(StreamRangeError) as info:
                counter.step(bad)
            refusal = info.value
            assert (counter.t, len(recorder.tape), counter.state_size()) == (t, drawn, size)
        g = counter.step(x)
        releases.append(g.tolist() if hasattr(g, "tolist") else g)
    return releases, [d.site for d in recorder.tape.draws], refusal


@pytest.mark.parametrize("name", COUNTERS)
@pytest.mark.parametrize("bad", OUTSIDE, ids=lambda x: f"{x:.4g}" if isinstance(x, float) else f"int{x.bit_length()}")
def test_inputs_outside_are_refused_before_any_draw_and_change_nothing(name: str, bad: Any) -> None:
    make = COUNTERS[name]
    stream = [_wrap(name, x) for x in (1, 0, 2, 1, 3)]
    expected, sites, _ = _run(make, 7, stream, None, 0)
    got, got_sites, refusal = _run(make, 7, stream, _wrap(name, bad), 2)
    assert got == expected and got_sites == sites  # the run goes on as if the bad input never came
    assert isinstance(refusal, DPStreamInputError) and refusal.field == "f(t)"
    assert "MAX_STREAM_SUM" in str(refusal) and "\n" not in str(refusal) and len(str(refusal)) < 200


SUMS: dict[str, tuple[str, list[Any], Any, list[Any], str]] = {
    # case: (counter, valid inputs before, the input that takes a sum to 2^53, valid inputs after, the sum named)
    "block": ("block", [M], 1, [0, 5], "block sum beta"),
    "binary-tree": ("binary-tree", [M], 1, [0, 5], "p-sum alpha_j"),
    "binary-tree-discrete": ("binary-tree-discrete", [M], 1, [0, 5], "p-sum alpha_j"),
    "binary-tree-printed": ("binary-tree-printed", [M], 1, [0, 5], "p-sum alpha_j"),
    "tree-aggregation": ("tree-aggregation", [M], 1, [0, 5], "p-sum alpha_i"),
    "tree-aggregation-printed": ("tree-aggregation-printed", [M], 1, [0, 5], "p-sum alpha_i"),
    "unbounded-block": ("unbounded-block", [M], 1, [0, 5], "block sum alpha_trueInBlock"),
    # L's statistic at t = 4 is f(3) + f(4)
    "hybrid-L": ("hybrid", [0, 0, M], 1, [0, 5], "L's sum since the last power of two"),
    # B_3 runs at t = 9..15 (local tau = 1..7): its node (4, 6] is f(13) + f(14) = M + 1, while L's pending sum
    # f(9) + ... + f(14) = M - 4 stays inside
    "hybrid-B_k": ("hybrid", [0] * 8 + [-5, 0, 0, 0, M], 1, [0, 5], "p-sum alpha_j"),
    "multidim-tree": ("multidim-tree", [[M, 0]], [1, 0], [[0, 0], [5, 5]], "p-sum alpha_j"),
}


@pytest.mark.parametrize("sign", [1, -1])
@pytest.mark.parametrize("case", SUMS)
def test_a_sum_leaving_the_range_is_refused_at_that_step(case: str, sign: int) -> None:
    """One more unit than the bound in the sum each counter forms: refused at exactly that step, before any draw,
    nothing changed; the releases after it are those of a run without it."""
    name, before, bad, after, what = SUMS[case]

    def signed(x: Any) -> Any:
        return [sign * v for v in x] if isinstance(x, list) else sign * x

    stream = [signed(x) for x in [*before, *after]]
    expected, sites, _ = _run(COUNTERS[name], 3, stream, None, 0)
    got, got_sites, refusal = _run(COUNTERS[name], 3, stream, signed(bad), len(before))
    assert got == expected and got_sites == sites
    assert isinstance(refusal, StreamRangeError) and what in refusal.rule and f"to {sign * 2**53}," in refusal.rule


def test_p_sums_are_exact_even_when_a_partial_sum_leaves_the_range() -> None:
    """f = (a, 0, M, -M): at t = 4 the p-sum is a + 0 + M - M = a. Left to right the partial sum M + a is rounded
    (M + 2 = 2^53 + 1 -> 2^53), so a = 2 and a = 3 (l1 distance 1) gave p-sums 1 and 3. Now: exactly a."""
    for make in (lambda n: BinaryTreeCounter(1.0, 4, noise=n), lambda n: BinaryTreeCounter(1.0, 4, noise=n,
                 discrete=True), lambda n: TreeAggregationCounter(1.0, 4, noise=n)):
        ends = [make(InsecureZeroNoise()).run([a, 0, M, -M])[3] for a in (2, 3)]
        assert ends == [2, 3]


def test_a_real_counter_refuses_huge_inputs_that_would_round_its_sums() -> None:
    """Real inputs: a block sum of 2^100 has a last place of 2^48, so f = (2^100, 2^47 - 1/2) and (2^100, 2^47 + 1/2)
    (distance 1) gave block sums 2^48 apart. 2^100 is outside the range now."""
    counter = BlockCounter(1.0, 2, noise=InsecureZeroNoise())
    with pytest.raises(StreamRangeError):
        counter.step(2.0**100)
    assert counter.run([2.0**47 - 0.5, 2.0**47 + 0.5]) == [2.0**47 - 0.5, 2.0**48]  # inside: exact


@pytest.mark.parametrize("make", [lambda n: SparseCounter(2.0, 8, noise=n),
                                  lambda n: InhomogeneousSparseCounter(1.0, 0, lambda r: 1.0, noise=n)])
def test_the_sparse_counters_refuse_out_of_range_values_as_not_boolean(make: Factory) -> None:
    counter: Counter = make(InsecureZeroNoise())
    for x in (M + 1, 10**400, 1e300):
        with pytest.raises(DPStreamInputError, match=r"^f\(t\): must"):
            counter.step(x)
    assert counter.t == 0
