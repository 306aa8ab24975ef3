"""The Laplace and exponential mechanisms as the papers state them.

* Laplace mechanism (000-def3.1, 003 section 4): q(f) + Lap(Delta_q / eps) in every
  coordinate, Delta_q the l1 sensitivity; eps-DP.
* Exponential mechanism (003-def3.8, 000-def3.2): selects r with probability
  proportional to exp(eps * u(f, r) / (2 Delta_u)); eps-DP (003-thm3.9).

  Note: 003-def3.8 and 000-def3.2 print the exponent with a *minus* sign (favouring
  low utility), while 003-thm3.10, 003-alg2 L11 and every use in the algorithms select
  high utility. The default here is the high-utility law exp(+eps u / (2 Delta)); the
  printed sign is available as ``ExponentialMechanism(..., as_printed=True)``
  (docs/errata.md, E-audit-1). Both are eps-DP; only accuracy differs (003-thm3.10 fails).

* Discrete Gaussian mechanism (002-def2.2): q(D) + N_Z(0, sigma^2) for integer-valued
  q of l2 sensitivity Delta; rho-zCDP with sigma^2 = Delta^2 / (2 rho) (Canonne, Kamath,
  Steinke 2020, Thm 4). 002-def2.2 prints ``sigma^2 = Delta q / (2 rho)`` (Delta
  unsquared): the same for Delta = 1 (all uses in 002), but for Delta > 1 it costs
  rho * Delta instead of rho. The default squares Delta; the printed formula is
  ``DiscreteGaussianMechanism(..., as_printed=True)`` (docs/errata/counters.md E-counters-5).

All draw through the NoiseSource: the additive mechanisms hand it the query value (value-in, so the
secure source adds the noise inside OpenDP); the exponential mechanism uses the source's
``exponential_mechanism`` draw (OpenDP Gumbel noisy max in the secure source).

Proofs: exponential mechanism proofs/proof_tabular_exponential_mechanism.py (003-thm3.9, 3.10); the
Laplace log-ratio bound proofs/proof_simple_counter.py; the discrete Gaussian's zCDP bound and the
unsquared Delta of 002-def2.2 proofs/proof_tree_aggregation_counter.py.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import KW_ONLY, dataclass

import numpy as np
import numpy.typing as npt

from dpstream.claims import Neighbour, PrivacyClaim
from dpstream.convention import convention
from dpstream.errors import (
    DPStreamInputError,
    require_finite_real,
    require_integer_value,
    require_positive_finite,
)
from dpstream.noise import NoiseSource

__all__ = ["DiscreteGaussianMechanism", "ExponentialMechanism", "LaplaceMechanism"]


@convention(("epsilon", "sensitivity", "neighbour"))
@dataclass(frozen=True)
class LaplaceMechanism:
    """q(f) + Lap(sensitivity / epsilon) per coordinate (000-def3.1 eq (9))."""

    epsilon: float
    sensitivity: float = 1.0
    _: KW_ONLY
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
        return noise.add_laplace(site, x, self.scale)

    def release_vector(self, noise: NoiseSource, site: str, values: Sequence[float]) -> npt.NDArray[np.float64]:
        """Release a vector; coordinate i draws at ``f"{site} i={i}"``."""
        xs = [require_finite_real("values", v) for v in values]
        return noise.add_laplace_many([f"{site} i={i}" for i in range(len(xs))], xs, self.scale)


@convention(("epsilon", "sensitivity", "neighbour"), ("epsilon", "sensitivity", "neighbour", "as_printed"))
@dataclass(frozen=True)
class ExponentialMechanism:
    """Select an index with P[i] ~ exp(epsilon * u_i / (2 sensitivity)) (003-def3.8, corrected sign)."""

    epsilon: float
    sensitivity: float = 1.0
    _: KW_ONLY
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


@convention(("rho", "sensitivity", "neighbour"), ("rho", "sensitivity", "neighbour", "as_printed"))
@dataclass(frozen=True)
class DiscreteGaussianMechanism:
    """q(D) + N_Z(0, sigma^2) per coordinate, sigma^2 = sensitivity^2 / (2 rho) (002-def2.2, corrected).

    ``sensitivity`` is the l2 sensitivity of the integer-valued query. ``as_printed=True``
    uses the printed sigma^2 = sensitivity / (2 rho), which is rho-zCDP only when
    sensitivity <= 1.
    """

    rho: float
    sensitivity: float = 1.0
    _: KW_ONLY
    neighbour: Neighbour = Neighbour.STREAM_ENTRY
    as_printed: bool = False

    def __post_init__(self) -> None:
        require_positive_finite("rho", self.rho)
        require_positive_finite("sensitivity", self.sensitivity)

    @property
    def sigma2(self) -> float:
        if self.as_printed:
            return self.sensitivity / (2.0 * self.rho)
        return self.sensitivity**2 / (2.0 * self.rho)

    @property
    def true_rho(self) -> float:
        """The zCDP cost this instance actually has: sensitivity^2 / (2 sigma^2)."""
        return self.sensitivity**2 / (2.0 * self.sigma2)

    @property
    def claim(self) -> PrivacyClaim:
        """rho by default; as printed, the true cost sensitivity^2 / (2 sigma^2) when it exceeds rho."""
        note = f"l2 sensitivity {self.sensitivity:g}"
        if self.as_printed and self.true_rho > self.rho:
            note += (f"; AS PRINTED sigma^2 = Delta/(2 rho): the paper's rho={self.rho:g} does not hold, only "
                     f"rho={self.true_rho:.6g} (docs/errata/counters.md E-counters-5)")
            return PrivacyClaim.zcdp(self.true_rho, self.neighbour, "002-def2.2", note=note)
        return PrivacyClaim.zcdp(self.rho, self.neighbour, "002-def2.2", note=note)

    @property
    def paper_claim(self) -> PrivacyClaim:
        """002-def2.2 as stated: rho-zCDP."""
        return PrivacyClaim.zcdp(self.rho, self.neighbour, "002-def2.2", note=f"l2 sensitivity {self.sensitivity:g}")

    def release(self, noise: NoiseSource, site: str, value: int) -> int:
        """Release one integer value; the draw is at ``site``."""
        x = require_integer_value("value", value)
        return noise.add_discrete_gaussian(site, x, self.sigma2)

    def release_vector(self, noise: NoiseSource, site: str, values: Sequence[int]) -> list[int]:
        """Release an integer vector; coordinate i draws at ``f"{site} i={i}"``."""
        xs = [require_integer_value("values", v) for v in values]
        return noise.add_discrete_gaussian_many([f"{site} i={i}" for i in range(len(xs))], xs, self.sigma2)
