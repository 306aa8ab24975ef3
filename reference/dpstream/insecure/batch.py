"""INSECURE seeded bulk draws: noise matrices for vectorised audit runs.

:class:`BulkNoise` (one ``numpy.random.Generator`` seeded from an int) draws arrays of any
shape from the three additive laws of the noise door (:class:`dpstream.noise.DrawKind`):

* ``laplace_array(scale, shape)``: density exp(-|x|/scale) / (2 scale);
* ``discrete_laplace_array(scale, shape)``: pmf proportional to exp(-|z|/scale) on Z, as the
  difference of two i.i.d. geometric variables (the law :class:`~dpstream.insecure.InsecureSeededNoise`
  draws one value at a time);
* ``discrete_gaussian_array(sigma2, shape)``: pmf proportional to exp(-z^2/(2 sigma2)) on Z, by
  Canonne, Kamath & Steinke (2020), Algorithm 3 (rejection from a discrete Laplace with scale
  floor(sigma) + 1), every rejected entry redrawn until all are accepted;
* ``draw(kind, parameter, shape)`` dispatches on the law's kind (scale or sigma2 as ``parameter``).

Reproducible (the same seed gives the same matrix) and fast, and therefore predictable: for
tests, audits and benchmarks only. Never release data made with it.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from dpstream.errors import DPStreamInputError, require_int_at_least, require_positive_finite
from dpstream.noise import DrawKind

__all__ = ["BulkNoise"]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
Shape = int | tuple[int, ...]


class BulkNoise:
    """INSECURE: seeded bulk draws (one generator per instance; see the module docstring)."""

    def __init__(self, seed: int) -> None:
        self._rng = np.random.default_rng(require_int_at_least("seed", seed, 0))

    def laplace_array(self, scale: float, shape: Shape) -> FloatArray:
        return np.asarray(self._rng.laplace(0.0, require_positive_finite("scale", scale), size=shape))

    def discrete_laplace_array(self, scale: float, shape: Shape) -> IntArray:
        success = -math.expm1(-1.0 / require_positive_finite("scale", scale))
        a = self._rng.geometric(success, size=shape)
        b = self._rng.geometric(success, size=shape)
        return np.asarray(a - b, dtype=np.int64)

    def discrete_gaussian_array(self, sigma2: float, shape: Shape) -> IntArray:
        sigma2 = require_positive_finite("sigma2", sigma2)
        t = float(math.floor(math.sqrt(sigma2)) + 1)
        out = np.empty(shape, dtype=np.int64)
        flat = out.reshape(-1)
        todo = np.arange(flat.size)
        while todo.size:
            y = self.discrete_laplace_array(t, todo.size)
            accept = self._rng.random(todo.size) < np.exp(-((np.abs(y) - sigma2 / t) ** 2) / (2.0 * sigma2))
            flat[todo[accept]] = y[accept]
            todo = todo[~accept]
        return out

    def uniform(self, shape: Shape) -> FloatArray:
        """Uniform on [0, 1) (post-processing randomness of vectorised outside counters)."""
        return np.asarray(self._rng.random(size=shape))

    def draw(self, kind: DrawKind, parameter: float, shape: Shape) -> FloatArray:
        """A matrix of the additive law ``kind`` (scale, or sigma2 for the discrete Gaussian) as floats
        (integer laws give integer-valued floats)."""
        if kind is DrawKind.LAPLACE:
            return self.laplace_array(parameter, shape)
        if kind is DrawKind.DISCRETE_LAPLACE:
            return self.discrete_laplace_array(parameter, shape).astype(np.float64)
        if kind is DrawKind.DISCRETE_GAUSSIAN:
            return self.discrete_gaussian_array(parameter, shape).astype(np.float64)
        raise DPStreamInputError("kind", "must be laplace, discrete_laplace or discrete_gaussian", kind)
