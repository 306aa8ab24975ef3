"""Deliberately broken implementations: the audits must catch every one of them.

INSECURE BY DESIGN. These classes exist to show the audits' power (tests/audit/
test_broken_variants.py): each follows the streaming protocol, draws through the
NoiseSource with the reference sites, and gets one thing wrong:

=================================  ==========================================  =====================
class                              what is wrong                               true guarantee
=================================  ==========================================  =====================
:class:`HalvedScaleSimpleCounter`  001-alg8 with Lap(1/(2 eps)): scale halved  2 eps
:class:`SensitivityOffByOneBlock`  001-alg9 with Lap(1/eps): sensitivity 1     2 eps
                                   taken for the 2 statistics an input enters
:class:`UnnoisedReleaseCounter`    001-alg8 releasing g(t0) without noise      not private
:class:`DyadicTreeCounter`         001-alg10; ``reuse`` makes node t2 reuse     (levels + 1)/levels
  (``reuse=(t1, t2)``)             node t1's draw                              eps for tau in both
:class:`DyadicTreeCounter`         001-alg10 with scale (levels - 1)/eps:       levels/(levels - 1)
  (``levels_short=1``)             one level too few                           eps
:class:`FloatSoftmaxExponential`   exponential mechanism as a float softmax of  2 eps
                                   eps u / Delta (temperature off by 2),
                                   sampled by inversion of a uniform draw
=================================  ==========================================  =====================

They are written outside the counter classes on purpose (like a third-party
implementation): nothing here subclasses the library's algorithms.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from dpstream.noise import NoiseSource, site

__all__ = [
    "DyadicTreeCounter",
    "FloatSoftmaxExponential",
    "HalvedScaleSimpleCounter",
    "SensitivityOffByOneBlock",
    "UnnoisedReleaseCounter",
]


class HalvedScaleSimpleCounter:
    """001-alg8 with the noise scale halved: g(t) = g(t-1) + f(t) + Lap(1/(2 eps))."""

    def __init__(self, epsilon: float, noise: NoiseSource) -> None:
        self.scale = 0.5 / epsilon
        self.noise = noise
        self.g = 0.0
        self.t = 0

    def step(self, x: float) -> float:
        self.t += 1
        self.g += self.noise.add_laplace(site("001-alg8 L4", t=self.t), x, self.scale)
        return self.g


class UnnoisedReleaseCounter:
    """001-alg8 that forgets the noise at time ``t0`` (its statistic there is f(t0) exactly)."""

    def __init__(self, epsilon: float, noise: NoiseSource, t0: int = 1) -> None:
        self.scale = 1.0 / epsilon
        self.noise = noise
        self.t0 = t0
        self.g = 0.0
        self.t = 0

    def step(self, x: float) -> float:
        self.t += 1
        # the defect: at t0 the statistic f(t0) is released as is, without the noise door
        self.g += x if self.t == self.t0 else self.noise.add_laplace(site("001-alg8 L4", t=self.t), x, self.scale)
        return self.g


class SensitivityOffByOneBlock:
    """001-alg9 calibrated for sensitivity 1 instead of 2: Lap(1/eps) at L7 and L10."""

    def __init__(self, epsilon: float, B: int, noise: NoiseSource) -> None:
        self.scale = 1.0 / epsilon
        self.B = B
        self.noise = noise
        self.alpha = self.beta = self.beta_lastblock = 0.0
        self.t = 0

    def step(self, x: float) -> float:
        self.t += 1
        self.beta += x  # the true block sum (as in dpstream.counters.block)
        if self.t % self.B == 0:
            self.alpha = 0.0
            self.beta_lastblock += self.noise.add_laplace(site("001-alg9 L7", t=self.t), self.beta, self.scale)
            self.beta = 0.0
        else:
            self.alpha += self.noise.add_laplace(site("001-alg9 L10", t=self.t), x, self.scale)
        return self.beta_lastblock + self.alpha


class DyadicTreeCounter:
    """A from-scratch binary tree counter (001-alg10 shape) with two optional defects.

    Node t (one per step) is the noisy sum of f over (t - lsb(t), t] drawn at site
    ``001-alg10 L8 t=<t>`` with scale ``(T.bit_length() - levels_short) / eps``; g(t) sums the
    nodes of the dyadic cover of [1, t]. ``reuse=(t1, t2)``: node t2 gets node t1's noise value
    instead of a fresh draw (t1 < t2). ``levels_short=1``: one level too few in the scale.
    """

    def __init__(self, epsilon: float, T: int, noise: NoiseSource, *, levels_short: int = 0,
                 reuse: tuple[int, int] | None = None) -> None:
        self.scale = (T.bit_length() - levels_short) / epsilon
        self.noise = noise
        self.reuse = reuse
        self.f: list[float] = []
        self.nodes: dict[int, float] = {}
        self.draws: dict[int, float] = {}

    def step(self, x: float) -> float:
        self.f.append(float(x))
        t = len(self.f)
        low = t & -t
        alpha = sum(self.f[t - low:t])
        if self.reuse is not None and t == self.reuse[1]:
            # the defect: node t2 repeats node t1's noise (release minus statistic) instead of a fresh draw
            self.nodes[t] = alpha + self.draws[self.reuse[0]]
        else:
            self.nodes[t] = self.noise.add_laplace(site("001-alg10 L8", t=t), alpha, self.scale)
        self.draws[t] = self.nodes[t] - alpha
        g, u = 0.0, t
        while u > 0:
            g += self.nodes[u]
            u -= u & -u
        return g


class FloatSoftmaxExponential:
    """Exponential mechanism computed as a float softmax of eps * u / Delta (the factor 1/2 dropped).

    ``step(utilities)`` returns the selected index, sampled by inverting the softmax's CDF at a
    uniform draw (``uniform_box`` at site ``"broken-em u"`` + step number).
    """

    def __init__(self, epsilon: float, sensitivity: float, noise: NoiseSource) -> None:
        self.temperature = epsilon / sensitivity  # correct: epsilon / (2 * sensitivity)
        self.noise = noise
        self.t = 0

    def step(self, utilities: Sequence[float]) -> int:
        self.t += 1
        logits = self.temperature * np.asarray(utilities, dtype=np.float64)
        w = np.exp(logits - logits.max())
        cdf = np.cumsum(w / w.sum())
        u = float(self.noise.uniform_box(site("broken-em u", t=self.t), [0.0], [1.0])[0, 0])
        return min(int(np.searchsorted(cdf, u, side="right")), len(cdf) - 1)

