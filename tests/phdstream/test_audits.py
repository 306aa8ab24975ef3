"""The PHDStream audits catch deliberately broken variants (wrong noise scale, missing noise, wrong scale of PrivTree).

Each broken variant is built like a third-party implementation would be, from the library's
pieces with one thing wrong, and audited with the suite's own check functions at the suite's
level (false-alarm share of the registered case). A correct implementation passes the same
checks (tests/audit/test_registered_audits.py runs the registered cases). The margins are
printed in the assertion messages.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from dpstream.audit.blackbox import black_box
from dpstream.audit.phdstream.cases import (
    EPS,
    P3,
    PAIRS,
    STATISTICAL_SHARE,
    THETA,
    Event,
    NaiveTreeAdapter,
    PHDStreamModel,
    TreeItem,
    phdstream_calibration,
    phdstream_exact_loss,
    phdstream_llr,
)
from dpstream.audit.protocol import MechanismFactory, derive_seed, sample_transcripts
from dpstream.claims import Neighbour, PrivacyClaim
from dpstream.counters import SimpleCounter
from dpstream.insecure import InsecureZeroNoise
from dpstream.noise import NoiseSource
from dpstream.phdstream import HypercubePartition, LambdaRule
from dpstream.phdstream.counters_tree import PHDStreamTreeWithCounters
from dpstream.phdstream.stream import TrueStream

CLAIM = PrivacyClaim.pure(EPS, Neighbour.EVENT, "001-thm3.2")
LEVEL = STATISTICAL_SHARE / 2
PAIR = PAIRS[0]
RUNS_BLACK_BOX = 150  # per split: perfect separation gives an eps lower bound of about 2.4


class BrokenAdapter(NaiveTreeAdapter):
    """Algorithm 3 built with a wrong counter factory or a wrong PrivTree budget."""

    def __init__(self, noise: NoiseSource, *, count_eps: float = EPS / 2, tree_eps: float = EPS / 2,
                 zero_counts: bool = False) -> None:
        def factory(e: float, n: NoiseSource) -> SimpleCounter:
            return SimpleCounter(count_eps, noise=InsecureZeroNoise() if zero_counts else n)

        self.alg = PHDStreamTreeWithCounters(P3, 2 * tree_eps, THETA, noise=noise, counter=factory)
        self.stream = TrueStream(P3)

    def step(self, events: Sequence[Event]) -> TreeItem:
        return super().step(events)


def _on_f(factory: MechanismFactory, seed: int, runs: int) -> list[list[TreeItem]]:
    return sample_transcripts(factory, PAIR.f, runs, derive_seed(seed, "f"))


def test_halved_count_noise_is_caught_by_calibration() -> None:
    """Counters built with budget eps instead of eps/2: Lap(1/eps) instead of Lap(2/eps)."""
    model = PHDStreamModel.default()
    on_f = _on_f(lambda n: BrokenAdapter(n, count_eps=EPS), 2, 200)
    noise_check = phdstream_calibration(model, on_f, PAIR, LEVEL)[0]
    assert noise_check.passed is False, noise_check.detail
    assert noise_check.value is not None and noise_check.value < LEVEL / 2 * 1e-10, noise_check.detail


def test_missing_count_noise_is_caught_by_black_box() -> None:
    """Counters whose draws are all 0 (the noise is forgotten): the leaf counts are exact."""
    model = PHDStreamModel.default()
    factory: MechanismFactory = lambda n: BrokenAdapter(n, zero_counts=True)  # noqa: E731
    on_f = _on_f(factory, 3, 2 * RUNS_BLACK_BOX)
    on_fp = sample_transcripts(factory, PAIR.f_prime, 2 * RUNS_BLACK_BOX, derive_seed(3, "f'"))
    bb = black_box(on_f, on_fp, CLAIM, LEVEL, score=phdstream_llr(model, PAIR))
    assert bb.passed is False and bb.value is not None and bb.value > EPS + 1.0, bb.detail
    noise_check = phdstream_calibration(model, on_f, PAIR, LEVEL)[0]
    assert noise_check.passed is False, noise_check.detail


def test_privtree_scale_halved_is_caught_by_calibration() -> None:
    """PrivTree run with budget eps instead of eps/2 (lambda halved): the law of T(1) is off."""
    model = PHDStreamModel.default()
    on_f = _on_f(lambda n: BrokenAdapter(n, tree_eps=EPS), 4, 400)
    tree_check = phdstream_calibration(model, on_f, PAIR, LEVEL)[1]
    assert tree_check.passed is False, tree_check.detail


@pytest.mark.parametrize(("rule", "depth", "excess"), [
    (LambdaRule.PROOF, 5, 5 / 6 + 0.5 - 1.0),     # App. A scale for eps/2: lambda = 6/eps
    (LambdaRule.PRINTED, 8, 8 / 12 + 0.5 - 1.0),  # Algorithm 1 as printed: lambda = 12/eps
])
def test_exact_loss_catches_the_wrong_privtree_scale(rule: LambdaRule, depth: int, excess: float) -> None:
    """The exact check fails with the predicted margin: D/lambda + eps/2 - eps."""
    P = HypercubePartition(2, depth)
    result = phdstream_exact_loss(PHDStreamModel.default(P, rule), PAIRS[:1], CLAIM, None, 0)
    assert result.passed is False
    assert result.value is not None and result.value - EPS == pytest.approx(excess, rel=1e-9), result.detail
    good = phdstream_exact_loss(PHDStreamModel.default(P, LambdaRule.GENERAL), PAIRS[:1], CLAIM, None, 0)
    assert good.passed is True and good.value == pytest.approx(EPS, rel=1e-9)
