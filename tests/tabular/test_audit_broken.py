"""The tabular audits catch deliberately broken variants (and pass the correct ones).

Every check here is exact (no sampling, no false alarm) except the black-box one, whose
false-alarm probability is its level 1e-3 (one-sided Clopper-Pearson, fixed seeds: the
outcome is deterministic). The margins (value - claim) are recorded in docs/tabular.md.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pytest

from dpstream.audit.blackbox import black_box
from dpstream.audit.scores import histogram_score
from dpstream.audit.tabular.cases import DOMAIN, EPS, Q1, _public, exact_sup_check, pairs, transcript_check
from dpstream.claims import Neighbour, PrivacyClaim
from dpstream.counters import SimpleCounter
from dpstream.counters.base import Counter
from dpstream.insecure import InsecureSeededNoise, InsecureZeroNoise
from dpstream.noise import NoiseSource
from dpstream.tabular.datasets import SyntheticDataset, answer
from dpstream.tabular.domain import Domain
from dpstream.tabular.main_algorithm import MainAlgorithm
from dpstream.tabular.queries import all_workloads
from dpstream.tabular.selection import SelectionLaw
from dpstream.tabular.stream import StreamStep
from dpstream.tabular.streaming_mwem import LaplaceMeasurer, StreamingMWEM
from dpstream.tabular.totals import TotalRule

CLAIM = PrivacyClaim.pure(EPS, Neighbour.EVENT, "003-thm6.1", "the paper's claim")
PAIRS = pairs()


class NoiselessCounter(Counter):
    """BROKEN: releases the exact running sum (the counter's noise draw is missing)."""

    anchor = "broken"
    loss_scales_with_l1 = True

    def __init__(self, epsilon: float, noise: NoiseSource | None = None) -> None:
        super().__init__(noise, None)
        self.epsilon = epsilon
        self.total = 0.0

    @property
    def claim(self) -> PrivacyClaim:
        return PrivacyClaim.pure(self.epsilon, Neighbour.STREAM_ENTRY, "broken")

    def _step(self, x: float, t: int) -> float:
        self.total += x
        return self.total

    def state_size(self) -> int:
        return 1


def main(factory: Callable[[float, NoiseSource], Counter] | None = None) -> Callable[[NoiseSource], MainAlgorithm]:
    return lambda noise: MainAlgorithm(DOMAIN, Q1, 1, EPS, noise=noise, total=_public(), counter_factory=factory)


def mwem(scale_factor: float = 1.0, law: SelectionLaw = SelectionLaw.DEF_3_8) -> Callable[[NoiseSource], StreamingMWEM]:
    def build(noise: NoiseSource) -> StreamingMWEM:
        alg = StreamingMWEM(DOMAIN, Q1, 1, EPS, noise=noise, total=_public(), selection_law=law)
        alg.measurer = LaplaceMeasurer(alg.lap_scale * scale_factor)   # BROKEN when scale_factor < 1
        return alg
    return build


def test_correct_variants_pass() -> None:
    for build in (main(), mwem()):
        result = exact_sup_check(build, CLAIM, PAIRS, seed=0)
        assert result.passed and result.value is not None and result.value <= EPS


def test_halved_counter_noise_is_caught() -> None:
    """Counters at eps/k instead of eps/(2k) (noise scale halved): the exact sup exceeds eps."""
    result = exact_sup_check(main(lambda e, n: SimpleCounter(2 * e, noise=n)), CLAIM, PAIRS, seed=0)
    assert result.passed is False and result.value is not None and result.value > EPS + 0.2


def test_missing_counter_noise_is_caught_exactly_and_black_box() -> None:
    broken = main(lambda e, n: NoiselessCounter(e, n))
    exact = exact_sup_check(broken, CLAIM, PAIRS, seed=0)
    assert exact.passed is False and exact.value == math.inf
    pair = next(p for p in PAIRS if p.label == "add (0, 0) at t=2")

    def releases(stream: tuple[object, ...], seed: int) -> list[list[SyntheticDataset]]:
        out = []
        for source in InsecureSeededNoise.independent(seed, 400):
            alg = broken(source)
            out.append([alg.step(x) for x in stream])
        return out

    # the whole release g_2 as an exact key (counted per value by the learned histogram score)
    feature = lambda tr: ",".join(f"{float(answer(q, tr[1])[0]):.9f}" for q in Q1)  # noqa: E731
    bb = black_box(releases(pair.f, 1), releases(pair.f_prime, 2), CLAIM, 1e-3, learn=histogram_score(feature))
    assert bb.passed is False and bb.value is not None and bb.value > EPS


def test_halved_measurement_noise_in_streaming_mwem_is_caught() -> None:
    result = exact_sup_check(mwem(0.5), CLAIM, PAIRS, seed=0)
    assert result.passed is False and result.value is not None and result.value > EPS + 0.2


def test_printed_l11_law_and_true_size_are_caught() -> None:
    printed = exact_sup_check(mwem(law=SelectionLaw.PRINTED_ALG2_L11), CLAIM, PAIRS, seed=0)
    assert printed.passed is False and printed.value is not None and printed.value > EPS
    leaky = transcript_check(lambda n: StreamingMWEM(DOMAIN, Q1, 1, EPS, noise=n, total=TotalRule.true_size()),
                             CLAIM, PAIRS[:1], [0])
    assert leaky.passed is False and leaky.value == math.inf


def test_printed_workload_sensitivity_on_binary_one_way_workloads() -> None:
    """E-tabular-8: 1/4 is not the score's sensitivity when |q_i| = 2; the exact loss exceeds eps with it."""
    dom = Domain(("A", "B"), (2, 2))
    W = all_workloads(dom, 1)

    base = (StreamStep.build(dom, [[0, 0]] * 6 + [[1, 1]] * 2 + [[0, 1]]),
            StreamStep.build(dom, [[1, 0]] * 3, [[0, 0]] * 4))

    def build(printed: bool) -> Callable[[NoiseSource], MainAlgorithm]:
        return lambda noise: MainAlgorithm(dom, W, 1, EPS, noise=noise, total=TotalRule.measured(),
                                           printed_workload_sensitivity=printed)
    good = exact_sup_check(build(False), CLAIM, pairs(base, dom), seed=0)
    bad = exact_sup_check(build(True), CLAIM, pairs(base, dom), seed=0)
    assert good.passed and bad.passed is False and bad.value is not None and bad.value > EPS
    assert np.isfinite(bad.value)
    # the printed variant's own .claim accounts for the true sensitivity 1/2: k selections at eps/k each plus the
    # counters' eps/2 = 1.5 eps, which covers the exact loss (the claim said eps before the review)
    printed_claim = build(True)(InsecureZeroNoise()).claim
    assert printed_claim.parameter == pytest.approx(1.5 * EPS) and "E-tabular-8" in printed_claim.note
    assert bad.value <= printed_claim.parameter
    assert build(False)(InsecureZeroNoise()).claim.parameter == pytest.approx(EPS)


def _margins() -> None:  # pragma: no cover
    """``python tests/tabular/test_audit_broken.py`` prints the margins table of docs/tabular.md."""
    dom = Domain(("A", "B"), (2, 2))
    base = (StreamStep.build(dom, [[0, 0]] * 6 + [[1, 1]] * 2 + [[0, 1]]),
            StreamStep.build(dom, [[1, 0]] * 3, [[0, 0]] * 4))
    W = all_workloads(dom, 1)
    checks = {
        "Algorithm 3, correct (k=1)": exact_sup_check(main(), CLAIM, PAIRS, 0),
        "Algorithm 3, counters at eps/k": exact_sup_check(main(lambda e, n: SimpleCounter(2 * e, noise=n)), CLAIM,
                                                          PAIRS, 0),
        "Algorithm 3, counter noise missing": exact_sup_check(main(lambda e, n: NoiselessCounter(e, n)), CLAIM,
                                                              PAIRS, 0),
        "StreamingMWEM, correct (k=1)": exact_sup_check(mwem(), CLAIM, PAIRS, 0),
        "StreamingMWEM, measurement scale halved": exact_sup_check(mwem(0.5), CLAIM, PAIRS, 0),
        "StreamingMWEM, L11 law as printed": exact_sup_check(mwem(law=SelectionLaw.PRINTED_ALG2_L11), CLAIM, PAIRS, 0),
        "StreamingMWEM, mass |∇f_t|": transcript_check(
            lambda n: StreamingMWEM(DOMAIN, Q1, 1, EPS, noise=n, total=TotalRule.true_size()), CLAIM, PAIRS[:1], [0]),
    }
    for printed in (False, True):
        checks[f"Algorithm 3, 1-way binary workloads, printed sensitivity={printed}"] = exact_sup_check(
            lambda n, p=printed: MainAlgorithm(dom, W, 1, EPS, noise=n, total=TotalRule.measured(),  # type: ignore[misc]
                                               printed_workload_sensitivity=p), CLAIM, pairs(base, dom), 0)
    for name, r in checks.items():
        value = r.value if r.value is not None else math.inf
        print(f"{name}: {value:.4f} (claim {EPS:g}, margin {value - EPS:+.4f}, passed={r.passed})")


if __name__ == "__main__":  # pragma: no cover
    _margins()
