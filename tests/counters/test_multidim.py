"""Multi-dimensional counter (001-sec4.3): error law, l1 claim, atomic steps, vectors, bad input."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pytest

from dpstream.audit.counters.loss import stream_entry_epsilon
from dpstream.audit.counters.models import (
    binary_tree_counter_model,
    block_counter_model,
    multidimensional_model,
    simple_counter_model,
)
from dpstream.audit.linear_model import LinearReleaseModel
from dpstream.claims import Measure
from dpstream.counters import (
    BinaryTreeCounter,
    BlockCounter,
    Counter,
    MultiDimensionalCounter,
    SimpleCounter,
    TreeAggregationCounter,
)
from dpstream.errors import DPStreamInputError
from dpstream.insecure import InsecureSeededNoise, TapeRecorder, TapeReplay
from dpstream.noise import NoiseSource, scoped
from dpstream.tape import TapeSiteMissingError
from dpstream.testing import by_value, record_run, replay_vector
from dpstream.vectors import KnownAnswerVector
from dpstream.vectors.corpus import known_answer

VECTORS = list(known_answer("001-sec4.3"))


def blocks(noise: NoiseSource, d: int = 3, eps: float = 0.8, B: int = 2) -> MultiDimensionalCounter:
    return MultiDimensionalCounter.build(lambda e, n: BlockCounter(e, B, noise=n), d, eps, noise=noise)


def test_exact_error_law() -> None:
    f = [[1, 0, 2], [0, 1, 1], [2, 2, 0], [1, -1, 0.5], [0, 0, 3]]
    releases, tape = record_run(blocks, f, seed=2)
    noise = {d.site: d.value for d in tape}
    truth = np.cumsum(np.asarray(f, dtype=float), axis=0)
    for i in range(3):  # coordinate i: its own block counter's draws, in scope "001-sec4.3 i=<i>"
        for t in range(1, len(f) + 1):
            k = t // 2
            err = (sum(noise[f"001-sec4.3 i={i} / 001-alg9 L7 t={2 * j}"] for j in range(1, k + 1))
                   + sum(noise[f"001-sec4.3 i={i} / 001-alg9 L10 t={j}"] for j in range(2 * k + 1, t + 1)))
            assert releases[t - 1][i] - truth[t - 1, i] == pytest.approx(err, abs=1e-12)
    model = multidimensional_model([block_counter_model(0.8, 2, len(f))] * 3)
    flat = np.asarray(f, dtype=float).ravel()
    assert np.allclose(model.mean(flat), truth.ravel())
    assert np.allclose(np.asarray(releases).ravel() - truth.ravel(), model.error(noise), atol=1e-12)
    assert model.injective


def test_l1_claim_is_max_for_linear_laplace_counters() -> None:
    """Changes split across coordinates: exact loss = max_i eps_i (each counter's loss scales with l1)."""
    models = [simple_counter_model(0.3, 6), block_counter_model(0.7, 2, 6), simple_counter_model(0.5, 6)]
    assert stream_entry_epsilon(multidimensional_model(models)).value == pytest.approx(0.7, rel=1e-12)
    counter = MultiDimensionalCounter([SimpleCounter(0.3, noise=InsecureSeededNoise(0)),
                                       BlockCounter(0.7, 2, noise=InsecureSeededNoise(1)),
                                       SimpleCounter(0.5, noise=InsecureSeededNoise(2))])
    assert counter.claim.parameter == pytest.approx(0.7) and counter.claim.measure is Measure.PURE_DP


class _OpaqueCounter(SimpleCounter):
    """A counter that does not declare that its loss scales with the l1 change."""

    loss_scales_with_l1 = False


def test_l1_claim_falls_back_to_sum() -> None:
    counter = MultiDimensionalCounter([_OpaqueCounter(0.25, noise=InsecureSeededNoise(0)),
                                       SimpleCounter(0.5, noise=InsecureSeededNoise(1))])
    assert counter.claim.parameter == pytest.approx(0.75)
    assert "SUM" in counter.claim.note


def test_zcdp_components_and_mixed_measures() -> None:
    counter = MultiDimensionalCounter.build(lambda r, n: TreeAggregationCounter(r, 8, noise=n), 2, 0.1,
                                            noise=InsecureSeededNoise(0))
    assert counter.claim.measure is Measure.ZCDP and counter.claim.parameter == pytest.approx(0.1)
    with pytest.raises(DPStreamInputError) as info:
        MultiDimensionalCounter([SimpleCounter(1.0, noise=InsecureSeededNoise(0)),
                                 TreeAggregationCounter(1.0, 8, noise=InsecureSeededNoise(0))])
    assert info.value.field == "counters"


def test_step_is_atomic_across_coordinates() -> None:
    recorder = TapeRecorder(InsecureSeededNoise(0))
    MultiDimensionalCounter([SimpleCounter(1.0, noise=scoped(recorder, "a")),
                             SimpleCounter(1.0, noise=scoped(recorder, "b"))]).step([1, 1])
    replay = TapeReplay(recorder.tape)
    components: list[Counter] = [SimpleCounter(1.0, noise=scoped(replay, "a")),
                                 SimpleCounter(1.0, noise=scoped(replay, "c"))]
    counter = MultiDimensionalCounter(components)
    with pytest.raises(TapeSiteMissingError):  # coordinate 1 draws at a site the tape lacks
        counter.step([1, 1])
    assert counter.t == 0 and all(c.t == 0 and c.releases == [] for c in components)
    assert isinstance(components[0], SimpleCounter) and components[0].g == 0.0


@pytest.mark.parametrize("x", [[1, 2], [1, 2, 3, 4], [1, math.nan, 2], "abc", 5, [[1, 2, 3]], [1, True, 0]])
def test_bad_input_no_draw_no_state_change(x: object) -> None:
    recorder = TapeRecorder(InsecureSeededNoise(0))
    counter = blocks(recorder)
    counter.step([1, 1, 1])
    drawn = len(recorder.tape)
    with pytest.raises(DPStreamInputError) as info:
        counter.step(x)  # type: ignore[arg-type]
    assert info.value.field == "f(t)"
    assert len(recorder.tape) == drawn and counter.t == 1 and all(c.t == 1 for c in counter.counters)


def test_bad_construction() -> None:
    with pytest.raises(DPStreamInputError):
        MultiDimensionalCounter([])
    c = SimpleCounter(1.0, noise=InsecureSeededNoise(0))
    with pytest.raises(DPStreamInputError):
        MultiDimensionalCounter([c, c])
    with pytest.raises(DPStreamInputError) as info:
        MultiDimensionalCounter.build(lambda e, n: SimpleCounter(e, noise=n), 0, 1.0, noise=InsecureSeededNoise(0))
    assert info.value.field == "d"


def test_components_sharing_one_site_namespace_are_refused() -> None:
    """Two coordinates on one unscoped source would both draw at '001-alg8 L4 t=1': sites must be unique."""
    shared = InsecureSeededNoise(0)
    with pytest.raises(DPStreamInputError) as info:
        MultiDimensionalCounter([SimpleCounter(1.0, noise=shared), SimpleCounter(1.0, noise=shared)])
    assert info.value.field == "counters"
    recorder = TapeRecorder(InsecureSeededNoise(0))
    with pytest.raises(DPStreamInputError):
        MultiDimensionalCounter([SimpleCounter(1.0, noise=scoped(recorder, "a")),
                                 SimpleCounter(1.0, noise=scoped(recorder, "a"))])
    ok = MultiDimensionalCounter([SimpleCounter(1.0, noise=scoped(recorder, "a")),
                                  SimpleCounter(1.0, noise=scoped(recorder, "b"))])
    ok.step([1, 1])
    assert sorted(d.site for d in recorder.tape) == ["a / 001-alg8 L4 t=1", "b / 001-alg8 L4 t=1"]


@pytest.mark.parametrize("vector", VECTORS, ids=[v.id for v in VECTORS])
def test_known_answer_vectors(vector: KnownAnswerVector) -> None:
    p = by_value(vector.params)
    T = len(vector.inputs)
    B, horizon = p.get("B") or 1, p.get("T") or 1
    component: dict[str, tuple[Callable[[float, NoiseSource], Counter], LinearReleaseModel]] = {
        "001-alg8": (lambda e, n: SimpleCounter(e, noise=n), simple_counter_model(p["epsilon"], T)),
        "001-alg9": (lambda e, n: BlockCounter(e, B, noise=n), block_counter_model(p["epsilon"], B, T)),
        "001-alg10": (lambda e, n: BinaryTreeCounter(e, horizon, noise=n),
                      binary_tree_counter_model(p["epsilon"], horizon, releases=T)),
    }
    factory, single = component[p["component"]]
    got = replay_vector(lambda n: MultiDimensionalCounter.build(factory, p["d"], p["epsilon"], noise=n), vector)
    assert np.allclose(np.asarray(got), np.asarray(vector.expected), atol=1e-12)
    noise = {d.site: d.value for d in vector.tape}
    model = multidimensional_model([single] * p["d"])
    flat = np.asarray(vector.inputs, dtype=float).ravel()
    closed = (model.mean(flat) + model.error(noise)).reshape(T, p["d"])
    assert np.allclose(closed, np.asarray(vector.expected), atol=1e-9)
