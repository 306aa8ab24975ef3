"""The contract every counter shares (dpstream.counters.base): bad input before any draw and any
state change, two-phase steps, and that the exact-error-law check catches deliberately broken counters."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pytest

from dpstream.audit.counters.loss import stream_entry_epsilon
from dpstream.audit.counters.models import binary_tree_counter_model, block_counter_model
from dpstream.audit.linear_model import LinearReleaseModel
from dpstream.claims import Neighbour, PrivacyClaim
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
from dpstream.counters.base import CounterStaging
from dpstream.errors import DPStreamInputError
from dpstream.insecure import InsecureSeededNoise, TapeRecorder
from dpstream.noise import NoiseSource
from dpstream.tape import TapeMismatchError
from dpstream.testing import record_run, replay_run

FACTORIES: dict[str, Callable[[NoiseSource], Counter]] = {
    "simple": lambda n: SimpleCounter(0.5, noise=n),
    "block": lambda n: BlockCounter(0.5, 3, noise=n),
    "binary-tree": lambda n: BinaryTreeCounter(0.5, 64, noise=n),
    "binary-tree-discrete": lambda n: BinaryTreeCounter(0.5, 64, noise=n, discrete=True),
    "tree-aggregation": lambda n: TreeAggregationCounter(0.5, 64, noise=n),
    "unbounded-block": lambda n: UnboundedBlockCounter(0.5, noise=n),
    "hybrid": lambda n: HybridCounter(0.5, noise=n),
}
# The sparse counters of 004 take Boolean streams (004-alg2, 004-alg3).
BOOLEAN_FACTORIES: dict[str, Callable[[NoiseSource], Counter]] = {
    "sparse": lambda n: SparseCounter(1.0, 32, noise=n),
    "inhomogeneous-sparse": lambda n: InhomogeneousSparseCounter(1.0, 0, lambda r: 0.5 / (r + 1) ** 2, noise=n),
}
ALL_FACTORIES = {**FACTORIES, **BOOLEAN_FACTORIES}


@pytest.mark.parametrize("name", ALL_FACTORIES)
@pytest.mark.parametrize("x", [math.nan, math.inf, -math.inf, "1", None, True, [1], 1 + 0j])
def test_bad_input_no_draw_no_state_change(name: str, x: object) -> None:
    recorder = TapeRecorder(InsecureSeededNoise(0))
    counter = ALL_FACTORIES[name](recorder)
    counter.run([1, 1, 1])
    drawn, state = len(recorder.tape), counter.state_size()
    with pytest.raises(DPStreamInputError) as info:
        counter.step(x)  # type: ignore[arg-type]
    assert info.value.field == "f(t)"
    assert counter.t == 3 and len(counter.releases) == 3 and len(recorder.tape) == drawn
    assert counter.state_size() == state
    counter.step(1)  # still usable
    assert counter.t == 4


@pytest.mark.parametrize("name", ALL_FACTORIES)
def test_two_phase_step_equals_step(name: str) -> None:
    f = [1, 0, 1, 1, 1, 0, 1] if name in BOOLEAN_FACTORIES else [1, 0, 2, 1, 1, 0, 3]
    direct, tape = record_run(ALL_FACTORIES[name], f, seed=3)
    counter = ALL_FACTORIES[name](InsecureSeededNoise(3))
    assert counter.supports_staging
    two_phase: list[float] = []
    for x in f:
        prepared = counter.stage(x)
        assert counter.t == len(two_phase)  # nothing committed yet
        two_phase.append(prepared.commit())
    assert two_phase == direct == counter.releases
    with pytest.raises(RuntimeError):
        prepared.commit()  # a prepared step commits once
    assert replay_run(ALL_FACTORIES[name], f, tape) == direct


# --- the checks catch deliberately broken counters ----------------------------------------


class _ForgetsL9(BinaryTreeCounter):
    """Broken 001-alg10: skips L9 (no reset of the lower nodes) AND drops the bit indicator of L10.

    (Either slip alone is harmless: with L9 the alpha_hat of the unset bits are already 0, and with
    the indicator the stale nodes are never read; together, stale nodes leak into g(t).)
    """

    def _staging(self, x: float, t: int) -> CounterStaging:
        yield from ()  # draws at once (a generator that requests nothing)
        n = t.bit_length() - 1
        j = (t & -t).bit_length() - 1
        alpha = self.alpha + [0.0] * (n + 1 - len(self.alpha))
        alpha_hat = self.alpha_hat + [0.0] * (n + 1 - len(self.alpha_hat))
        alpha[j] = sum(alpha[:j]) + x
        alpha_hat[j] = self.noise.add_laplace(f"001-alg10 L8 t={t}", alpha[j], self.scale)
        g = sum(alpha_hat)

        def commit() -> None:
            self.alpha, self.alpha_hat = alpha, alpha_hat

        return g, commit


def test_error_law_check_catches_a_broken_binary_tree() -> None:
    f = [1, 2, 3, 4, 5, 6, 7, 8]
    releases, tape = record_run(lambda n: _ForgetsL9(1.0, 8, noise=n), f, seed=0)
    model = binary_tree_counter_model(1.0, 8)
    noise = {d.site: d.value for d in tape}
    gap = np.abs(np.asarray(releases) - model.mean(f) - model.error(noise)).max()
    assert gap > 1.0  # the true sums diverge; the test of the real counter demands 1e-12


def _loss_with_scale(model: LinearReleaseModel, factor: float) -> float:
    from dpstream.audit.linear_model import NoiseLaw

    laws = tuple(NoiseLaw(law.kind, law.parameter * factor) for law in model.laws)
    return stream_entry_epsilon(LinearReleaseModel(model.sites, laws, model.statistics, model.combination)).value


@pytest.mark.parametrize("T", [8, 100])
def test_calibration_check_catches_broken_variants(T: int) -> None:
    """Wrong noise scale (halved), wrong sensitivity (statistics doubled) and missing noise are all
    caught by the exact loss; the margins are stated in the report."""
    eps = 1.0
    good = binary_tree_counter_model(eps, T)
    assert stream_entry_epsilon(good).value == pytest.approx(eps)
    assert _loss_with_scale(good, 0.5) == pytest.approx(2 * eps)  # wrong scale
    doubled = LinearReleaseModel(good.sites, good.laws, 2 * good.statistics, good.combination)
    assert stream_entry_epsilon(doubled).value == pytest.approx(2 * eps)  # wrong sensitivity
    assert _loss_with_scale(good, 1e-9) == pytest.approx(1e9 * eps)  # (almost) missing noise: scale -> 0
    block = block_counter_model(eps, 4, 20)
    assert _loss_with_scale(block, 0.5) == pytest.approx(2 * eps)  # e.g. Lap(1/eps) instead of Lap(2/eps)


def test_replay_catches_a_wrong_scale() -> None:
    f = [1, 1, 1, 1]
    _, tape = record_run(lambda n: BinaryTreeCounter(1.0, 4, noise=n), f, seed=0)
    with pytest.raises(TapeMismatchError):
        replay_run(lambda n: BinaryTreeCounter(1.0, 4, noise=n, as_printed=True), f, tape)


class _OnePhaseCounter(Counter):
    """A counter written against the minimal interface (``_step`` only, no two-phase steps)."""

    anchor = "test-one-phase"

    @property
    def claim(self) -> PrivacyClaim:
        return PrivacyClaim.not_private(Neighbour.STREAM_ENTRY, "test", "adds no noise")

    def state_size(self) -> int:
        return 1

    def _step(self, x: float, t: int) -> float:
        return float(sum(self.releases[-1:]) + x)


@pytest.mark.parametrize("name", list(FACTORIES))
def test_stage_holds_a_two_phase_step_until_commit(name: str) -> None:
    counter = FACTORIES[name](InsecureSeededNoise(3))
    staged = counter.stage(1.0)
    assert (counter.t, counter.releases) == (0, [])
    staged.commit()
    assert (counter.t, counter.releases) == (1, [staged.release])


def test_stage_steps_a_one_phase_counter_at_once() -> None:
    counter = _OnePhaseCounter(None, None)
    assert not counter.supports_staging
    staged = counter.stage(2.0)
    assert (counter.t, counter.releases, staged.release) == (1, [2.0], 2.0)
    staged.commit()  # a no-op: the step already happened
    assert (counter.t, counter.releases) == (1, [2.0])
