"""The Laplace and exponential mechanisms as the papers state them.

* Laplace mechanism (000-def3.1, 003 section 4): q(f) + Lap(Delta_q / eps) in every
  coordinate, Delta_q the l1 sensitivity; eps-DP.
* Exponential mechanism (003-def3.8, 000-def3.2): selects r with probability
  proportional to exp(eps * u(f, r) / (2 Delta_u)); eps-DP (003-thm3.9).

  Note: 003-def3.8 and 000-def3.2 print the exponent with a *minus* sign (favouring
  low utility), while 003-thm3.10, 003-alg2 L11 and every use in the algorithms select
  high utility. The default here is the high-utility law exp(+eps u / (2 Delta)); the
  printed sign is available as ``ExponentialMechanism(..., as_printed=True)``
  (docs/errata.md). Both are eps-DP; only accuracy differs.

Both draw through the NoiseSource; the exponential mechanism uses the source's
``exponential_mechanism`` draw (OpenDP Gumbel noisy max in the secure source).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from dpstream.claims import Neighbour, PrivacyClaim
from dpstream.errors import DPStreamInputError, require_finite_real, require_positive_finite
from dpstream.noise import NoiseSource

__all__ = ["ExponentialMechanism", "LaplaceMechanism"]


@dataclass(frozen=True)
class LaplaceMechanism:
    """q(f) + Lap(sensitivity / epsilon) per coordinate (000-def3.1 eq (9))."""

    epsilon: float
    sensitivity: float = 1.0
    neighbour: Neighbour = Neighbour.EVENT

    def __post_init__(self) -> None:
        require_positive_finite("epsilon", self.epsilon)
        require_positive_finite("sensitivity", self.sensitivity)

    @property
    def scale(self) -> float:
        return self.sensitivity / self.epsilon

    @property
    def claim(self) -> PrivacyClaim:
        return PrivacyClaim.pure(self.epsilon, self.neighbour, "000-def3.1",
                                 note=f"l1 sensitivity {self.sensitivity:g}")

    def release(self, noise: NoiseSource, site: str, value: float) -> float:
        """Release one value; the draw is at ``site``."""
        x = require_finite_real("value", value)
        return x + noise.laplace(site, self.scale)

    def release_vector(self, noise: NoiseSource, site: str, values: Sequence[float]) -> npt.NDArray[np.float64]:
        """Release a vector; coordinate i draws at ``f"{site} i={i}"``."""
        xs = [require_finite_real("values", v) for v in values]
        return np.array([x + noise.laplace(f"{site} i={i}", self.scale) for i, x in enumerate(xs)])


@dataclass(frozen=True)
class ExponentialMechanism:
    """Select an index with P[i] ~ exp(epsilon * u_i / (2 sensitivity)) (003-def3.8, corrected sign)."""

    epsilon: float
    sensitivity: float = 1.0
    neighbour: Neighbour = Neighbour.EVENT
    as_printed: bool = False

    def __post_init__(self) -> None:
        require_positive_finite("epsilon", self.epsilon)
        require_positive_finite("sensitivity", self.sensitivity)

    @property
    def claim(self) -> PrivacyClaim:
        return PrivacyClaim.pure(self.epsilon, self.neighbour, "003-thm3.9",
                                 note=f"utility sensitivity {self.sensitivity:g}")

    def select(self, noise: NoiseSource, site: str, utilities: Sequence[float]) -> int:
        """Index of the selected candidate; ``as_printed`` negates the utilities (the printed minus sign)."""
        scores = [require_finite_real("utilities", u) for u in utilities]
        if not scores:
            raise DPStreamInputError("utilities", "must be non-empty", utilities)
        if self.as_printed:
            scores = [-u for u in scores]
        return noise.exponential_mechanism(site, scores, self.epsilon, self.sensitivity)
