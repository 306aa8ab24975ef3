"""Worked example (docs/audits.md): audit a counter written outside the dpstream package.

``MyCounter`` is a from-scratch implementation of the Simple counter (001-alg8,
g(t) = g(t-1) + f(t) + Lap(1/eps)). It subclasses nothing from dpstream: it only follows
the streaming protocol (``step(x) -> release``) and draws its noise from the NoiseSource it
is given, at the reference sites ``"001-alg8 L4 t=<t>"``. We audit it against the paper's
model (``simple_counter_model``) with the default checks, then audit a deliberately broken
copy whose noise scale is halved: the black-box lower bound and the calibration catch it.

Run: ``python examples/third_party_counter.py`` (exit status 0 when the correct counter
passes and the broken one is caught).
"""

from __future__ import annotations

import sys

import numpy as np
import numpy.typing as npt

from dpstream.audit import Effort, Profile, linear_case, run_case
from dpstream.audit.bounds import laplace_sum_bound
from dpstream.audit.counters.models import simple_counter_model
from dpstream.audit.neighbours import counter_positions, stream_entry_pairs
from dpstream.audit.registry import ComponentReport
from dpstream.claims import Neighbour, PrivacyClaim
from dpstream.noise import NoiseSource


class MyCounter:
    """A third party's Simple counter; ``scale_factor=0.5`` is the deliberately broken copy."""

    def __init__(self, epsilon: float, noise: NoiseSource, scale_factor: float = 1.0) -> None:
        self.noise = noise
        self.scale = scale_factor / epsilon
        self.total = 0.0
        self.t = 0

    def step(self, x: float) -> float:
        self.t += 1
        self.total += self.noise.add_laplace(f"001-alg8 L4 t={self.t}", x, self.scale)  # f(t) + Lap(scale)
        return self.total


def audit(scale_factor: float, runs: int = 1000, seed: int = 0) -> ComponentReport:
    """Audit ``MyCounter(eps=1, scale_factor)`` over T = 16 steps with the default checks."""
    T, eps = 16, 1.0
    model = simple_counter_model(eps, T)  # the paper's description of the noise (001-alg8)
    pairs = stream_entry_pairs([0, 1] * (T // 2), counter_positions(T, every=True))
    claim = PrivacyClaim.pure(eps, Neighbour.STREAM_ENTRY, "001-alg8")

    def truth(f: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        return np.asarray(np.cumsum(f), dtype=np.float64)

    case = linear_case(
        f"MyCounter(scale x{scale_factor:g})", "001-alg8", claim,
        lambda noise: MyCounter(eps, noise, scale_factor), model, pairs,
        false_alarm=1e-4, truth=truth, accuracy=[laplace_sum_bound(model, beta=0.05)],
        effort=Effort(quick=runs, full=10 * runs),
    )
    return run_case(case, Profile.QUICK, seed=seed)


def main() -> int:
    outcomes = []
    for factor in (1.0, 0.5):
        report = audit(factor)
        failed = [c.kind.value for c in report.checks if c.passed is False]
        print(f"== {report.case.component}: {'caught by ' + ', '.join(failed) if failed else 'all checks pass'} "
              f"({report.seconds:.1f}s)")
        for check in report.checks:
            print(f"   {check.kind.value:12s} passed={check.passed}  {check.detail}")
        outcomes.append(not failed)
    correct_passes, broken_caught = outcomes[0], not outcomes[1]
    return 0 if correct_passes and broken_caught else 1


if __name__ == "__main__":
    sys.exit(main())
