"""The witness search, black-box and model-free, catches leaky counters and never convicts correct ones.

Leaky counters (dpstream.audit.broken and dpstream.audit.variants, written like outside implementations) are
run line by line through FactorySampler and audited by ``audit_counter`` alone (no model, no calibration):
they must get ``violation``. The gross leaks fit the quick profile (default tests); the subtle ones (a tree
one level short: 1.25 eps; a wrong block boundary: 1.5 eps) need the thorough profile (``slow`` tests, a few
minutes each on 2 cores). ``pytest -s`` prints each margin (held-out eps lower bound minus the claim).

Correct-but-different counters (clamped, rounded, projected, own RNG through the seed hook) must never get
``violation``. False-alarm probability: every search runs at level 1e-4, so each assertion ``verdict !=
violation`` fails on a correct counter with probability <= 1e-4 (<= 1.2e-3 for the 12 default ones together);
seeds are fixed, so the outcome is reproducible.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from dpstream.audit import broken, variants
from dpstream.audit.counters.models import binary_tree_counter_model, simple_counter_model
from dpstream.audit.profiles import PROFILES, audit_counter
from dpstream.audit.registry import Profile
from dpstream.audit.sampler import FactorySampler, Sampler, SeededFactorySampler, trial_executor
from dpstream.audit.search import SearchResult
from dpstream.audit.vectorised import LinearModelSampler
from dpstream.noise import NoiseSource

LEVEL = 1e-4
DEFAULT = ((1.0, 16),)
FloatArray = npt.NDArray[np.float64]
Make = Callable[[float, int], Sampler]


def _line_by_line(build: Callable[[float, int, NoiseSource], Any]) -> Make:
    return lambda e, T: FactorySampler(lambda n: build(e, T, n))


LEAKY_QUICK: dict[str, Make] = {
    "exact prefix sum at positive multiples of 10": _line_by_line(
        lambda e, T, n: variants.ExactAtRoundNumbersCounter(e, n)),
    "noise reused across steps": _line_by_line(lambda e, T, n: variants.ReusedNoiseSimpleCounter(e, n)),
}

LEAKY_THOROUGH: dict[str, Make] = {
    **LEAKY_QUICK,
    "wrong scale (halved)": _line_by_line(lambda e, T, n: broken.HalvedScaleSimpleCounter(e, n)),
    "block counter scaled for sensitivity 1": _line_by_line(lambda e, T, n: broken.SensitivityOffByOneBlock(e, 4, n)),
    "a step without noise": _line_by_line(lambda e, T, n: broken.UnnoisedReleaseCounter(e, n)),
    "tree node 2 reuses node 1's noise": _line_by_line(
        lambda e, T, n: broken.DyadicTreeCounter(e, T, n, reuse=(1, 2))),
    "tree one level short (off by one)": _line_by_line(
        lambda e, T, n: broken.DyadicTreeCounter(e, T, n, levels_short=1)),
    "wrong block boundary": _line_by_line(lambda e, T, n: variants.WrongBoundaryBlockCounter(e, 4, n)),
}


def _report(name: str, result: SearchResult) -> None:
    print(f"MARGIN {name}: {result.verdict}, eps LB - claim = {result.margin:+.3f}, "
          f"detectable excess {result.detectable_excess:.3g}, {result.trials} runs")


@pytest.mark.slow  # about 20 s each (line-by-line samplers)
@pytest.mark.parametrize("name", sorted(LEAKY_QUICK))
def test_gross_leaks_get_violation_on_the_quick_profile(name: str) -> None:
    result = audit_counter(LEAKY_QUICK[name], profile="quick", level=LEVEL, seed=0, sweep=DEFAULT)
    _report(name, result)
    assert result.verdict == "violation"
    assert result.best is not None and result.best.eps_lb > result.best.claimed
    assert result.best.witness.f != result.best.witness.f_prime


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(LEAKY_THOROUGH))
def test_every_class_of_mistake_gets_violation_on_the_thorough_profile(name: str) -> None:
    with trial_executor(workers=2) as pool:
        result = audit_counter(LEAKY_THOROUGH[name], profile="thorough", level=LEVEL, seed=0, sweep=DEFAULT,
                               executor=pool)
    _report(name, result)
    assert result.verdict == "violation"


class PostProcessed:
    """A vectorised Simple counter with a post-processing applied to each run's releases."""

    chunk = 50_000

    def __init__(self, inner: Sampler, post: Callable[[FloatArray], FloatArray]) -> None:
        self.inner, self.post = inner, post

    def sample(self, inputs: Sequence[Any], runs: int, seed: int) -> FloatArray:
        return self.post(self.inner.sample(inputs, runs, seed))


POST: dict[str, Callable[[FloatArray], FloatArray]] = {
    "clamped at 0": lambda R: np.maximum(R, 0.0),
    "rounded to integers": np.round,
    "projected onto non-decreasing sequences": lambda R: np.maximum.accumulate(R, axis=1),
}


@pytest.mark.parametrize(("name", "seed"), [
    pytest.param(name, seed, marks=pytest.mark.slow)  # 10-14 s each
    for name in sorted(POST) for seed in (0, 1)])
def test_post_processing_of_a_correct_counter_never_gets_violation(name: str, seed: int) -> None:
    def make(e: float, T: int) -> Sampler:
        return PostProcessed(LinearModelSampler(simple_counter_model(e, T)), POST[name])

    result = audit_counter(make, profile="quick", level=LEVEL, seed=seed, sweep=DEFAULT,
                           budget=PROFILES[Profile.QUICK].registered)
    _report(f"{name} (seed {seed})", result)
    assert result.verdict != "violation"


CORRECT_LINE_BY_LINE: dict[str, Make] = {
    "clamped at 0": _line_by_line(lambda e, T, n: variants.ClampedSimpleCounter(e, n)),
    "rounded to integers": _line_by_line(lambda e, T, n: variants.RoundedSimpleCounter(e, n)),
    "projected onto non-decreasing sequences": _line_by_line(lambda e, T, n: variants.MonotoneSimpleCounter(e, n)),
    "own RNG through the seed hook": lambda e, T: SeededFactorySampler(lambda s: variants.OwnRngSimpleCounter(e, s)),
}


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("name", sorted(CORRECT_LINE_BY_LINE))
def test_correct_but_different_outside_counters_never_get_violation(name: str, seed: int) -> None:
    result = audit_counter(CORRECT_LINE_BY_LINE[name], profile="quick", level=LEVEL, seed=seed)
    _report(f"{name} (seed {seed})", result)
    assert result.verdict != "violation"


def test_own_rng_counter_through_the_seed_hook_is_replayable() -> None:
    def make(e: float, T: int) -> Sampler:
        return SeededFactorySampler(lambda s: variants.OwnRngSimpleCounter(e, s))

    a = make(1.0, 16).sample([1] * 16, 50, seed=4)
    np.testing.assert_array_equal(a, make(1.0, 16).sample([1] * 16, 50, seed=4))
    assert np.unique(a[:, 0]).size == 50


@pytest.mark.slow
def test_binary_tree_as_printed_is_certified_by_the_search_alone_on_thorough() -> None:
    # 001-alg10 as printed, T = 16: true loss 1.25 eps. Level 3e-6 is below the share the registered case's
    # search gets (3e-4 / 16 cases / 5 checks = 3.75e-6), so this is at least as strict as `dpstream audit`.
    def make(e: float, T: int) -> Sampler:
        return LinearModelSampler(binary_tree_counter_model(e, T, as_printed=True))

    with trial_executor(workers=2) as pool:
        result = audit_counter(make, profile="thorough", level=3e-6, seed=0, vectorised=True, sweep=DEFAULT,
                               executor=pool)
    _report("001-alg10 as printed", result)
    assert result.verdict == "violation"
