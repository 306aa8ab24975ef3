"""Streaming wrappers and reference models for the one-shot mechanisms of ``dpstream.mechanisms``.

The Laplace, discrete Gaussian and exponential mechanisms are functions, not streams; the
audits run them through the streaming protocol with these wrappers (one release per step,
draws at ``<anchor> t=<step>``), and check them against models written from the definitions:

* Laplace mechanism (000-def3.1): release = q + Lap(Delta/eps) per coordinate, a linear release
  model with S = I, W = I (:func:`laplace_mechanism_model`);
* discrete Gaussian mechanism (002-def2.2): q + N_Z(0, sigma^2) per coordinate
  (:func:`discrete_gaussian_mechanism_model`);
* exponential mechanism (003-def3.8 with the sign of 003-thm3.10): P[i] proportional to
  exp(eps u_i / (2 Delta)) (:func:`exponential_mechanism_law`); ``as_printed`` uses the printed
  minus sign.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from dpstream.audit.linear_model import LinearReleaseModel, NoiseLaw
from dpstream.errors import require_int_at_least, require_positive_finite
from dpstream.mechanisms import DiscreteGaussianMechanism, ExponentialMechanism, LaplaceMechanism
from dpstream.noise import NoiseSource, site

__all__ = [
    "DiscreteGaussianMechanismStream",
    "ExponentialMechanismStream",
    "LaplaceMechanismStream",
    "discrete_gaussian_mechanism_model",
    "exponential_mechanism_law",
    "laplace_mechanism_model",
]

FloatArray = npt.NDArray[np.float64]


class LaplaceMechanismStream:
    """``step(values)`` releases ``mechanism.release_vector`` at site ``"000-def3.1 t=<t>"``."""

    def __init__(self, mechanism: LaplaceMechanism, noise: NoiseSource) -> None:
        self.mechanism, self.noise, self.t = mechanism, noise, 0

    def step(self, values: Sequence[float]) -> FloatArray:
        self.t += 1
        return self.mechanism.release_vector(self.noise, site("000-def3.1", t=self.t), values)


class DiscreteGaussianMechanismStream:
    """``step(values)`` releases ``mechanism.release_vector`` at site ``"002-def2.2 t=<t>"``."""

    def __init__(self, mechanism: DiscreteGaussianMechanism, noise: NoiseSource) -> None:
        self.mechanism, self.noise, self.t = mechanism, noise, 0

    def step(self, values: Sequence[int]) -> list[int]:
        self.t += 1
        return self.mechanism.release_vector(self.noise, site("002-def2.2", t=self.t), values)


class ExponentialMechanismStream:
    """``step(utilities)`` returns ``mechanism.select`` at site ``"003-def3.8 t=<t>"``."""

    def __init__(self, mechanism: ExponentialMechanism, noise: NoiseSource) -> None:
        self.mechanism, self.noise, self.t = mechanism, noise, 0

    def step(self, utilities: Sequence[float]) -> int:
        self.t += 1
        return self.mechanism.select(self.noise, site("003-def3.8", t=self.t), utilities)


def _identity_model(anchor: str, law: NoiseLaw, d: int, steps: int) -> LinearReleaseModel:
    terms = []
    for t in range(1, steps + 1):
        for i in range(d):
            terms.append((f"{site(anchor, t=t)} i={i}", law, {(t - 1) * d + i: 1.0}))
    releases = [{j: 1.0} for j in range(d * steps)]
    return LinearReleaseModel.build(terms, releases, d * steps)


def laplace_mechanism_model(epsilon: float, sensitivity: float, d: int, steps: int = 1) -> LinearReleaseModel:
    """000-def3.1: every coordinate of every step is q + Lap(Delta/eps) (S = W = identity)."""
    scale = require_positive_finite("sensitivity", sensitivity) / require_positive_finite("epsilon", epsilon)
    return _identity_model("000-def3.1", NoiseLaw.laplace(scale), require_int_at_least("d", d, 1),
                           require_int_at_least("steps", steps, 1))


def discrete_gaussian_mechanism_model(sigma2: float, d: int, steps: int = 1) -> LinearReleaseModel:
    """002-def2.2: every coordinate is q + N_Z(0, sigma^2)."""
    return _identity_model("002-def2.2", NoiseLaw.discrete_gaussian(require_positive_finite("sigma2", sigma2)),
                           require_int_at_least("d", d, 1), require_int_at_least("steps", steps, 1))


def exponential_mechanism_law(
    utilities: Sequence[float], epsilon: float, sensitivity: float, *, as_printed: bool = False
) -> dict[int, float]:
    """P[i] = exp(+-eps u_i / (2 Delta)) / sum_j exp(+-eps u_j / (2 Delta)) (minus sign if ``as_printed``)."""
    sign = -1.0 if as_printed else 1.0
    logits = sign * np.asarray(utilities, dtype=np.float64) * (
        require_positive_finite("epsilon", epsilon) / (2.0 * require_positive_finite("sensitivity", sensitivity)))
    w = np.exp(logits - logits.max())
    p = w / w.sum()
    return {i: float(v) for i, v in enumerate(p)}
