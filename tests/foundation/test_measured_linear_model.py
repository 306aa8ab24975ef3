"""dpstream.testing.linear.measured_linear_model: the model measured from runs equals the hand-written one,
and mechanisms that are not linear (or draw at data-dependent sites) are refused."""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest

from dpstream.audit.counters.models import binary_tree_counter_model, block_counter_model, simple_counter_model
from dpstream.audit.linear_model import LinearReleaseModel
from dpstream.convention import with_noise
from dpstream.counters import BinaryTreeCounter, BlockCounter, SimpleCounter
from dpstream.counters.sparse import SparseCounter
from dpstream.errors import DPStreamInputError
from dpstream.noise import NoiseSource
from dpstream.testing.linear import measured_linear_model


@pytest.mark.parametrize(("measured", "written"), [
    (measured_linear_model(with_noise(SimpleCounter, 0.7), 6), simple_counter_model(0.7, 6)),
    (measured_linear_model(with_noise(BlockCounter, 0.5, 3), 8), block_counter_model(0.5, 3, 8)),
    (measured_linear_model(with_noise(BinaryTreeCounter, 1.5, 11, discrete=True), 11),
     binary_tree_counter_model(1.5, 11, discrete=True)),
])
def test_measured_equals_the_written_model(measured: LinearReleaseModel, written: LinearReleaseModel) -> None:
    assert measured.sites == written.sites and measured.laws == written.laws
    assert np.allclose(measured.statistics, written.statistics, atol=1e-9)
    assert np.allclose(measured.combination, written.combination, atol=1e-9)


def test_non_linear_mechanisms_are_refused() -> None:
    with pytest.raises(DPStreamInputError, match="same sites"):
        measured_linear_model(with_noise(SparseCounter, 40.0, 6), 6)  # segment ends depend on the data


class _Warped:
    """A Simple counter whose release is squared (not linear) or shifted by 1 (affine)."""

    def __init__(self, noise: NoiseSource, shift: bool) -> None:
        self.counter, self.shift = SimpleCounter(1.0, noise=noise), shift

    def step(self, x: float) -> float:
        g = self.counter.step(x)
        return g + 1.0 if self.shift else g * g


@pytest.mark.parametrize("shift", [False, True])
def test_affine_or_nonlinear_releases_are_refused(shift: bool) -> None:
    with pytest.raises(DPStreamInputError, match="linear"):
        measured_linear_model(partial(_Warped, shift=shift), 4)
