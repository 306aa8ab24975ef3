"""Worked example (docs/audits.md, "Your own counter"): audit a counter that has no model in dpstream.

``FreshNoiseCounter`` releases the true prefix sum plus *fresh* Laplace noise at every step:
g(t) = S(t) + Lap(b). An input f(tau) enters every release g(tau), ..., g(T), so over a horizon T
the scale must be b = T/eps for eps-DP (basic composition over T releases). The classic mistake is
b = 1/eps ("each release is one Laplace mechanism"), whose true guarantee is T * eps.

Steps, as a newcomer would follow them:

1. write the counter's model from its pseudocode (:class:`dpstream.audit.linear_model.LinearReleaseModel`:
   noisy statistic j = S(j) + z_j with z_j ~ Lap(T/eps); release t = statistic t);
2. audit the counter against that model with :func:`dpstream.audit.linear_case` (exact loss of the
   model, black-box bound, calibration of the implementation's noise);
3. audit the mistaken copy against the same model: calibration and the black-box bound catch it;
4. without any model: :func:`dpstream.audit.black_box_audit` with the model-free
   :func:`dpstream.audit.histogram_score` of a feature (here the sum of the releases) also catches it.

Run: ``python examples/own_model_counter.py`` (exit status 0 when the counter passes and the mistaken
copy is caught by both routes).
"""

from __future__ import annotations

import sys

import numpy as np
import numpy.typing as npt

from dpstream.audit import Effort, Profile, black_box_audit, histogram_score, linear_case, run_case
from dpstream.audit.linear_model import LinearReleaseModel, NoiseLaw
from dpstream.audit.neighbours import counter_positions, stream_entry_pairs
from dpstream.audit.registry import CheckResult, ComponentReport
from dpstream.claims import Neighbour, PrivacyClaim
from dpstream.noise import NoiseSource, site

T, EPS = 8, 1.0
CLAIM = PrivacyClaim.pure(EPS, Neighbour.STREAM_ENTRY, "example: basic composition over T releases")


class FreshNoiseCounter:
    """g(t) = S(t) + Lap(scale) with a fresh draw at site ``"fresh L1 t=<t>"``; scale T/eps is correct."""

    def __init__(self, noise: NoiseSource, scale: float = T / EPS) -> None:
        self.noise, self.scale, self.total, self.t = noise, scale, 0.0, 0

    def step(self, x: float) -> float:
        self.t += 1
        self.total += x
        return self.noise.add_laplace(site("fresh L1", t=self.t), self.total, self.scale)  # S(t) + Lap(scale)


def fresh_noise_model(scale: float = T / EPS) -> LinearReleaseModel:
    """Step 1, written from the pseudocode: statistic j = f(1) + ... + f(j) + z_j; release t = statistic t."""
    law = NoiseLaw.laplace(scale)
    terms = [(site("fresh L1", t=j), law, {i: 1.0 for i in range(j)}) for j in range(1, T + 1)]
    return LinearReleaseModel.build(terms, [{t: 1.0} for t in range(T)], T)


def audit(scale: float, seed: int = 0) -> ComponentReport:
    """Step 2/3: the four checks against the honest model (scale T/eps), for an implementation with ``scale``."""
    model = fresh_noise_model()
    pairs = stream_entry_pairs([0, 1] * (T // 2), counter_positions(T, every=True))

    def truth(f: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        return np.asarray(np.cumsum(f), dtype=np.float64)

    case = linear_case(f"FreshNoiseCounter(scale={scale:g})", "example", CLAIM,
                       lambda noise: FreshNoiseCounter(noise, scale), model, pairs,
                       false_alarm=1e-4, truth=truth, effort=Effort(quick=1000))
    return run_case(case, Profile.QUICK, seed=seed)


def model_free(scale: float, seed: int = 0) -> CheckResult:
    """Step 4: no model at all; the score is learned from a histogram of a feature of the transcript.

    A change of f(1) moves all T releases, so the feature is their sum (one release alone carries only
    the loss of one Laplace mechanism)."""
    pair = stream_entry_pairs([0, 1] * (T // 2), {1: "first"})[0]
    return black_box_audit(lambda noise: FreshNoiseCounter(noise, scale), pair, CLAIM, runs=1000, seed=seed,
                           level=1e-4, learn=histogram_score(lambda transcript: float(np.sum(transcript))))


def main() -> int:
    outcomes = []
    for scale in (T / EPS, 1 / EPS):
        report = audit(scale)
        failed = [c.kind.value for c in report.checks if c.passed is False]
        print(f"== {report.case.component}: {'caught by ' + ', '.join(failed) if failed else 'all checks pass'}")
        for check in report.checks:
            print(f"   {check.kind.value:12s} passed={check.passed}  {check.detail}")
        free = model_free(scale)
        print(f"   model-free   passed={free.passed}  {free.detail}")
        outcomes.append((not failed, bool(free.passed)))
    (good, good_free), (bad, bad_free) = outcomes
    return 0 if good and good_free and not bad and not bad_free else 1


if __name__ == "__main__":
    sys.exit(main())
