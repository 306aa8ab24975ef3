"""Linear release models: the paper's description of *which noise enters which release*.

Most counters (and the count-release parts of larger algorithms) are linear
mechanisms: they compute m noisy statistics

    s_j = (S f)_j + z_j,      z_j independent, z_j ~ law_j, drawn at site_j,

and release linear combinations r = W s of them. A :class:`LinearReleaseModel`
holds (sites, laws, S, W). It is written from the pseudocode, independently of the
streaming implementation, and then serves three purposes:

* **exact error law** (unit tests): replaying a tape through the implementation,
  ``release - mean`` must equal ``W z`` where z is read off the tape by site;
* **exact variance**: Var(r_t) = sum_j W[t,j]^2 Var(z_j);
* **exact privacy loss** (audits): r is an injective image of s when W has full
  column rank, so the privacy loss of the releases equals that of the statistics,
  e.g. sup loss = sum_j |(S (f - f'))_j| / b_j for Laplace noise.

Only the laws used by the papers for additive noise are supported: Laplace,
discrete Laplace and discrete Gaussian.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
import numpy.typing as npt

from dpstream.errors import DPStreamInputError, require_positive_finite
from dpstream.noise import DrawKind

__all__ = ["ADDITIVE_KINDS", "LinearReleaseModel", "NoiseLaw", "discrete_gaussian_log_normaliser"]

FloatArray = npt.NDArray[np.float64]

ADDITIVE_KINDS = (DrawKind.LAPLACE, DrawKind.DISCRETE_LAPLACE, DrawKind.DISCRETE_GAUSSIAN)
"""The draw kinds a :class:`NoiseLaw` describes (noise added to a value)."""


def discrete_gaussian_log_normaliser(sigma2: float) -> float:
    """log sum_{y in Z} exp(-y^2 / (2 sigma2)), summed until the terms underflow."""
    sigma2 = require_positive_finite("sigma2", sigma2)
    # Terms beyond |y| > 40 sigma are below exp(-800): negligible in double precision.
    bound = math.ceil(40.0 * math.sqrt(sigma2)) + 1
    y = np.arange(-bound, bound + 1, dtype=np.float64)
    terms = -(y * y) / (2.0 * sigma2)
    top = float(terms.max())
    return top + math.log(float(np.exp(terms - top).sum()))


@dataclass(frozen=True)
class NoiseLaw:
    """An additive noise law: Laplace(scale), discrete Laplace(scale), discrete Gaussian(sigma2)."""

    kind: DrawKind
    parameter: float

    def __post_init__(self) -> None:
        if self.kind not in ADDITIVE_KINDS:
            raise DPStreamInputError("kind", "must be laplace, discrete_laplace or discrete_gaussian", self.kind)
        require_positive_finite("parameter", self.parameter)

    @classmethod
    def laplace(cls, scale: float) -> NoiseLaw:
        return cls(DrawKind.LAPLACE, scale)

    @classmethod
    def discrete_laplace(cls, scale: float) -> NoiseLaw:
        return cls(DrawKind.DISCRETE_LAPLACE, scale)

    @classmethod
    def discrete_gaussian(cls, sigma2: float) -> NoiseLaw:
        return cls(DrawKind.DISCRETE_GAUSSIAN, sigma2)

    @classmethod
    def of_draw(cls, kind: DrawKind, params: Mapping[str, Any]) -> NoiseLaw:
        """The law of a recorded additive draw (a tape's kind and params: ``scale``, or ``sigma2``)."""
        return cls(kind, float(params["sigma2" if kind is DrawKind.DISCRETE_GAUSSIAN else "scale"]))

    @property
    def is_integer(self) -> bool:
        return self.kind is not DrawKind.LAPLACE

    def scaled(self, factor: float) -> NoiseLaw:
        """The law with its scale (the standard deviation of a discrete Gaussian) multiplied by ``factor``."""
        if self.kind is DrawKind.DISCRETE_GAUSSIAN:
            return NoiseLaw(self.kind, self.parameter * factor**2)
        return NoiseLaw(self.kind, self.parameter * factor)

    def variance(self) -> float:
        """Exact variance of the law."""
        if self.kind is DrawKind.LAPLACE:
            return 2.0 * self.parameter**2
        if self.kind is DrawKind.DISCRETE_LAPLACE:
            p = math.exp(-1.0 / self.parameter)
            return 2.0 * p / (1.0 - p) ** 2
        sigma2 = self.parameter
        bound = math.ceil(40.0 * math.sqrt(sigma2)) + 1
        y = np.arange(-bound, bound + 1, dtype=np.float64)
        log_w = -(y * y) / (2.0 * sigma2) - discrete_gaussian_log_normaliser(sigma2)
        return float((y * y * np.exp(log_w)).sum())

    def log_pdf(self, x: npt.ArrayLike) -> FloatArray:
        """Log density (Laplace) or log pmf (integer laws; -inf off the integers)."""
        arr = np.asarray(x, dtype=np.float64)
        if self.kind is DrawKind.LAPLACE:
            b = self.parameter
            return np.asarray(-np.abs(arr) / b - math.log(2.0 * b), dtype=np.float64)
        on_grid = np.isclose(arr, np.round(arr), rtol=0.0, atol=1e-9)
        if self.kind is DrawKind.DISCRETE_LAPLACE:
            b = self.parameter
            p = math.exp(-1.0 / b)
            vals = -np.abs(np.round(arr)) / b + math.log((1.0 - p) / (1.0 + p))
        else:
            r = np.round(arr)
            vals = -(r * r) / (2.0 * self.parameter) - discrete_gaussian_log_normaliser(self.parameter)
        return np.asarray(np.where(on_grid, vals, -np.inf), dtype=np.float64)

    def describe(self) -> str:
        name = {DrawKind.LAPLACE: "Lap", DrawKind.DISCRETE_LAPLACE: "Lap_Z", DrawKind.DISCRETE_GAUSSIAN: "N_Z"}
        arg = f"0, {self.parameter:g}" if self.kind is DrawKind.DISCRETE_GAUSSIAN else f"{self.parameter:g}"
        return f"{name[self.kind]}({arg})"


@dataclass(frozen=True)
class LinearReleaseModel:
    """r = W (S f + z): ``sites``/``laws`` of the m noise terms, S (m x T), W (n x m).

    ``f`` is the input stream (length T, one entry per time step for a counter; any
    flattened input vector in general) and r the n releases in order.
    """

    sites: tuple[str, ...]
    laws: tuple[NoiseLaw, ...]
    statistics: FloatArray
    combination: FloatArray

    def __post_init__(self) -> None:
        m = len(self.sites)
        if len(self.laws) != m or len(set(self.sites)) != m:
            raise DPStreamInputError("sites", "must be unique and match laws one to one", self.sites)
        if self.statistics.ndim != 2 or self.statistics.shape[0] != m:
            raise DPStreamInputError("statistics", f"must be a matrix with {m} rows", self.statistics.shape)
        if self.combination.ndim != 2 or self.combination.shape[1] != m:
            raise DPStreamInputError("combination", f"must be a matrix with {m} columns", self.combination.shape)

    @classmethod
    def build(
        cls,
        terms: Sequence[tuple[str, NoiseLaw, Mapping[int, float]]],
        releases: Sequence[Mapping[int, float]],
        input_length: int,
    ) -> LinearReleaseModel:
        """Build from sparse rows.

        ``terms[j] = (site, law, {input index: weight})`` describes statistic j;
        ``releases[t] = {term index: weight}`` describes release t.
        """
        m = len(terms)
        S = np.zeros((m, input_length), dtype=np.float64)
        for j, (_, _, weights) in enumerate(terms):
            for i, w in weights.items():
                S[j, i] += w
        W = np.zeros((len(releases), m), dtype=np.float64)
        for t, weights in enumerate(releases):
            for j, w in weights.items():
                W[t, j] += w
        return cls(tuple(s for s, _, _ in terms), tuple(law for _, law, _ in terms), S, W)

    @property
    def input_length(self) -> int:
        return int(self.statistics.shape[1])

    @property
    def n_releases(self) -> int:
        return int(self.combination.shape[0])

    def mean(self, f: npt.ArrayLike) -> FloatArray:
        """E[r | f] = W S f."""
        return np.asarray(self.combination @ (self.statistics @ np.asarray(f, dtype=np.float64)))

    def error(self, noise: Mapping[str, float]) -> FloatArray:
        """r - E[r] = W z, with z read by site from ``noise`` (e.g. ``{d.site: d.value for d in tape}``)."""
        z = np.array([float(noise[s]) for s in self.sites], dtype=np.float64)
        return np.asarray(self.combination @ z)

    def error_variance(self) -> FloatArray:
        """Var(r_t) = sum_j W[t, j]^2 Var(z_j) for every release t."""
        var = np.array([law.variance() for law in self.laws], dtype=np.float64)
        return np.asarray((self.combination**2) @ var)

    @cached_property
    def injective(self) -> bool:
        """Whether W has full column rank, i.e. the statistics can be recovered from the releases."""
        m = self.combination.shape[1]
        return bool(m == 0 or np.linalg.matrix_rank(self.combination) == m)

    def noise_from_releases(self, releases: npt.ArrayLike, f: npt.ArrayLike) -> FloatArray:
        """The unique z with r = W (S f + z); needs :attr:`injective`."""
        if not self.injective:
            raise DPStreamInputError("combination", "must have full column rank to recover the noise", None)
        r = np.asarray(releases, dtype=np.float64)
        s, *_ = np.linalg.lstsq(self.combination, r, rcond=None)
        return np.asarray(s - self.statistics @ np.asarray(f, dtype=np.float64))

    def log_likelihood(self, releases: npt.ArrayLike, f: npt.ArrayLike) -> float:
        """log p(r | f) of the statistics recovered from r (the Jacobian of W cancels in ratios)."""
        z = self.noise_from_releases(releases, f)
        return float(sum(float(law.log_pdf(zj)) for law, zj in zip(self.laws, z, strict=True)))

    def statistic_shift(self, f: npt.ArrayLike, f_prime: npt.ArrayLike) -> FloatArray:
        """S (f - f'): how far each noisy statistic's mean moves between neighbours."""
        diff = np.asarray(f, dtype=np.float64) - np.asarray(f_prime, dtype=np.float64)
        return np.asarray(self.statistics @ diff)
