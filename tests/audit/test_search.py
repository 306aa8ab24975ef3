"""The witness search's parts: the counter space, the features, the detectable excess, the verdict logic."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from dpstream.audit.search import (
    Alphabet,
    SearchBudget,
    SearchSpace,
    Setting,
    counter_space,
    detectable_excess,
    release_feature_names,
    release_features,
    search,
    search_positions,
)
from dpstream.claims import Neighbour, PrivacyClaim
from dpstream.insecure.batch import BulkNoise

FloatArray = npt.NDArray[np.float64]
CLAIM = PrivacyClaim.pure(1.0, Neighbour.STREAM_ENTRY, "test")
SMALL = SearchBudget(fit=200, select=200, holdout=2000, carried=4)


class Leaky:
    """Releases the inputs' prefix sums exactly: not private at all."""

    def sample(self, inputs: Sequence[Any], runs: int, seed: int) -> FloatArray:
        return np.tile(np.cumsum(np.asarray(inputs, dtype=np.float64)), (runs, 1))


class Ignores:
    """Releases noise that does not depend on the input: 0-DP."""

    def sample(self, inputs: Sequence[Any], runs: int, seed: int) -> FloatArray:
        return BulkNoise(seed).laplace_array(1.0, (runs, len(inputs)))


def test_counter_neighbours_move_one_entry_by_one_inside_the_alphabet() -> None:
    for alphabet in (Alphabet(), Alphabet(0, 3)):
        space = counter_space(alphabet)
        for name, make in space.families.items():
            f = make(12)
            assert len(f) == 12 and all(alphabet.contains(x) for x in f), name
            pairs = space.neighbours(f)
            assert pairs
            for _, g in pairs:
                diff = np.asarray(g, dtype=float) - np.asarray(f, dtype=float)
                assert np.count_nonzero(diff) == 1 and np.abs(diff).sum() == 1.0
                assert all(alphabet.contains(x) for x in g)
    vec = counter_space(dimension=2).neighbours(counter_space(dimension=2).families["ones"](4))
    assert len(vec) == 8  # every (t, i) of a 4 x 2 stream of ones, moved down


def test_positions_every_t_for_small_horizons_and_named_ones_for_large() -> None:
    assert search_positions(16) == list(range(1, 17))
    large = search_positions(1000, seed=3)
    for t in (1, 2, 999, 1000, 511, 512, 513):
        assert t in large
    assert len(large) < 60 and large == search_positions(1000, seed=3)


def test_feature_names_match_features() -> None:
    for k in (1, 2, 16, 30):
        R = np.arange(3.0 * k).reshape(3, k)
        assert release_features(R).shape[1] == len(release_feature_names(k))
    R = np.array([[1.0, 3.0, 6.0]])
    names = release_feature_names(3)
    F = release_features(R)[0]
    assert F[names.index("d_3")] == 3.0 and F[names.index("d_3-d_2")] == 1.0


def test_detectable_excess_shrinks_with_runs() -> None:
    values = [detectable_excess(n, 0.1, 1e-5, 1.0) for n in (1000, 10_000, 100_000)]
    assert values[0] > values[1] > values[2] > 0.0
    assert detectable_excess(100, 1e-9, 1e-5, 1.0) == float("inf") or values[0] < 20


def test_search_convicts_an_exact_release_and_clears_an_input_free_one() -> None:
    space = counter_space(families=("ones",))
    leaky = search([Setting("T=8", Leaky(), CLAIM, 8)], space, SMALL, level=1e-4, seed=0, target_excess=1.0)
    assert leaky.verdict == "violation" and leaky.best is not None
    assert leaky.best.k1 == SMALL.holdout and leaky.best.k0 == 0
    clean = search([Setting("T=8", Ignores(), CLAIM, 8)], space, SMALL, level=1e-4, seed=0, target_excess=1.0)
    # An input-free mechanism is 0-DP: a violation here would be a false alarm (probability <= 1e-4).
    assert clean.verdict != "violation"
    assert clean.best is not None and clean.best.eps_lb < 1.0


class ReadsObjects:
    """Releases the exact running total of the inputs' ``"x"`` fields (inputs are JSON objects): not private."""

    def sample(self, inputs: Sequence[Any], runs: int, seed: int) -> FloatArray:
        assert all(isinstance(x, dict) for x in inputs)  # the search hands the stream back thawed
        return np.tile(np.cumsum([float(x["x"]) for x in inputs]), (runs, 1))


def test_a_setting_with_its_own_space_of_object_streams() -> None:
    """Streams of JSON objects (the synthesizers' inputs) are frozen deeply and thawed back; a setting's own space
    replaces the search's. The exact release is certified: a violation with probability 1 for this mechanism."""
    def neighbours(f: list[Any]) -> list[tuple[str, list[Any]]]:
        return [(f"t={t}", [{"x": v["x"] + (s == t)} for s, v in enumerate(f, start=1)]) for t in (1, len(f))]

    own = SearchSpace(families={"objects": lambda T: [{"x": 0} for _ in range(T)]}, neighbours=neighbours)
    setting = Setting("objects", ReadsObjects(), CLAIM, 4, space=own)
    result = search([setting], counter_space(families=("ones",)), SMALL, level=1e-4, seed=0, target_excess=1.0)
    assert result.verdict == "violation" and result.best is not None
    data = result.to_data()
    assert data["f"] == [{"x": 0}] * 4 and data["family"] == "objects"
    assert sum(x["x"] for x in data["f_prime"]) == 1
