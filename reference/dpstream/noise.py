"""The one door to randomness (DESIGN.md, "Randomness: one door, three keys").

Every algorithm receives a :class:`NoiseSource` from its caller and draws all its
randomness through it. Every draw names its *site*: a stable string built from the
paper anchor of the printed line that draws and the indices that identify the draw,
for example ``"001-alg8 L4 t=5"`` (see :func:`site`). Sites make a noise tape
replayable by an implementation that draws in a different order.

Draw kinds (the papers need no others):

========================  =====================================  ==================
kind                      law                                    used by
========================  =====================================  ==================
``laplace``               Lap(scale), density e^{-|x|/b}/(2b)   001, 003 counters
``discrete_laplace``      Lap_Z(scale), pmf ~ e^{-|z|/scale}    004 (section 2.4)
``discrete_gaussian``     N_Z(0, sigma2), pmf ~ e^{-z^2/2sigma2} 002 (Def 2.2)
``exponential_mechanism`` P[i] ~ exp(eps*u_i/(2*Delta))         003 Alg 2/3
``coin``                  fair coin (post-processing)            002 rounding b_z
``choice``                uniform k-subset of range(n), sorted   002 record choice
``uniform_box``           ``count`` uniform points in a box      001 rule (5), 004
========================  =====================================  ==================

Sources:

* :class:`SecureNoise` (the default): every privacy-relevant draw is an OpenDP
  measurement; post-processing randomness comes from the operating system's CSPRNG.
* :class:`InsecureSeededNoise`: numpy ``Generator``; reproducible and fast; for tests
  and audits only.
* :class:`InsecureZeroNoise`: privacy-relevant draws are 0 (the exponential mechanism
  returns an arg-max); for tests of noiseless behaviour only.
* :class:`TapeRecorder` / :class:`TapeReplay`: record every draw of another source as a
  :class:`dpstream.tape.Tape`, or replay a tape site by site (format:
  ``docs/tape-format.md``).

:func:`scoped` prefixes the sites of a sub-algorithm (a counter inside a tree node,
say) so that sites stay unique when algorithms are nested.

Non-private randomness that is not part of any algorithm (synthetic input streams,
random evaluation queries) comes from :func:`data_rng`, which is also defined here so
that this module stays the only place that touches ``numpy.random``.
"""

from __future__ import annotations

import math
import secrets
import sys
import zlib
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from enum import StrEnum
from typing import Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from dpstream.errors import (
    DPStreamInputError,
    require_finite_real,
    require_int_at_least,
    require_positive_finite,
)

__all__ = [
    "MAX_INTEGER_NOISE_SCALE",
    "BaseNoiseSource",
    "DrawKind",
    "InsecureSeededNoise",
    "InsecureZeroNoise",
    "NoiseSource",
    "ScopedNoise",
    "SecureNoise",
    "data_rng",
    "default_noise",
    "derived_seed",
    "scoped",
    "site",
]

FloatArray = npt.NDArray[np.float64]
Params = dict[str, Any]
"""Exact parameters of a draw, JSON-compatible (floats, ints, lists of them)."""


class DrawKind(StrEnum):
    """The kinds of draw a :class:`NoiseSource` offers."""

    LAPLACE = "laplace"
    DISCRETE_LAPLACE = "discrete_laplace"
    DISCRETE_GAUSSIAN = "discrete_gaussian"
    EXPONENTIAL_MECHANISM = "exponential_mechanism"
    COIN = "coin"
    CHOICE = "choice"
    UNIFORM_BOX = "uniform_box"

    @property
    def privacy_relevant(self) -> bool:
        """True for draws that carry a privacy guarantee (OpenDP in the secure source)."""
        return self in _PRIVACY_RELEVANT


_PRIVACY_RELEVANT = frozenset(
    {DrawKind.LAPLACE, DrawKind.DISCRETE_LAPLACE, DrawKind.DISCRETE_GAUSSIAN, DrawKind.EXPONENTIAL_MECHANISM}
)


def site(anchor: str, **indices: object) -> str:
    """Build a draw site: ``site("001-alg8 L4", t=5) == "001-alg8 L4 t=5"``.

    ``anchor`` is the printed line that draws (``"<paper>-alg<k> L<n>"`` or ``u<n>``);
    ``indices`` identify the draw among all draws of that line, in a fixed order.
    Tuples and lists are joined with commas: ``site("x L1", v=(0, 1)) == "x L1 v=0,1"``.
    """
    parts = [anchor]
    for name, value in indices.items():
        if isinstance(value, tuple | list):
            text = ",".join(str(v) for v in value)
        else:
            text = str(value)
        parts.append(f"{name}={text}")
    return " ".join(parts)


@runtime_checkable
class NoiseSource(Protocol):
    """What every algorithm receives. Each method takes the draw's ``site`` first."""

    def laplace(self, site: str, scale: float) -> float:
        """Continuous Laplace with density exp(-|x|/scale) / (2 scale)."""
        ...

    def discrete_laplace(self, site: str, scale: float) -> int:
        """Integer Laplace with pmf proportional to exp(-|z|/scale) (004-sec2.4)."""
        ...

    def discrete_gaussian(self, site: str, sigma2: float) -> int:
        """Discrete Gaussian on Z with pmf proportional to exp(-z^2/(2 sigma2)) (002-def2.2)."""
        ...

    def exponential_mechanism(
        self, site: str, scores: Sequence[float], epsilon: float, sensitivity: float
    ) -> int:
        """Index i chosen with probability proportional to exp(epsilon * scores[i] / (2 sensitivity))."""
        ...

    def coin(self, site: str) -> bool:
        """A fair coin (post-processing)."""
        ...

    def choice(self, site: str, n: int, k: int) -> tuple[int, ...]:
        """A uniformly random k-subset of range(n), returned sorted (post-processing)."""
        ...

    def uniform_box(
        self, site: str, low: Sequence[float], high: Sequence[float], count: int = 1
    ) -> FloatArray:
        """``count`` independent uniform points of the box [low, high), shape (count, d)."""
        ...


MAX_INTEGER_NOISE_SCALE = 1e15
"""Largest scale (discrete Laplace) and standard deviation (discrete Gaussian) of an integer draw.

Integer draws are 64-bit (OpenDP ``i64``; numpy ``int64``): a larger scale would make the
saturation at +-(2^63 - 1) a visible part of the law (a saturated release x + noise reveals x).
At the limit, P(|noise| >= 2^63) <= 2 exp(-2^63 / 1e15) = 2 exp(-9223), and for the Gaussian
exp(-(2^63 / 1e15)^2 / 2); a scale of 1e15 means eps ~ 1e-15, far outside any use.
"""


def validated_params(kind: DrawKind, raw: Mapping[str, Any]) -> Params:
    """Check and canonicalise the parameters of a draw (exact, JSON-compatible)."""
    if kind is DrawKind.LAPLACE:
        return {"scale": require_positive_finite("scale", raw["scale"])}
    if kind is DrawKind.DISCRETE_LAPLACE:
        scale = require_positive_finite("scale", raw["scale"])
        if scale > MAX_INTEGER_NOISE_SCALE:
            raise DPStreamInputError("scale", f"integer noise needs scale <= {MAX_INTEGER_NOISE_SCALE:g} "
                                     "(64-bit draws would saturate)", scale)
        return {"scale": scale}
    if kind is DrawKind.DISCRETE_GAUSSIAN:
        sigma2 = require_positive_finite("sigma2", raw["sigma2"])
        if sigma2 > MAX_INTEGER_NOISE_SCALE**2:
            raise DPStreamInputError("sigma2", f"integer noise needs sigma2 <= {MAX_INTEGER_NOISE_SCALE**2:g} "
                                     "(64-bit draws would saturate)", sigma2)
        return {"sigma2": sigma2}
    if kind is DrawKind.EXPONENTIAL_MECHANISM:
        scores = [require_finite_real("scores", s) for s in raw["scores"]]
        if not scores:
            raise DPStreamInputError("scores", "must be non-empty", raw["scores"])
        return {
            "scores": scores,
            "epsilon": require_positive_finite("epsilon", raw["epsilon"]),
            "sensitivity": require_positive_finite("sensitivity", raw["sensitivity"]),
        }
    if kind is DrawKind.COIN:
        return {}
    if kind is DrawKind.CHOICE:
        n = require_int_at_least("n", raw["n"], 0)
        k = require_int_at_least("k", raw["k"], 0)
        if k > n:
            raise DPStreamInputError("k", f"must be <= n = {n}", k)
        return {"n": n, "k": k}
    if kind is DrawKind.UNIFORM_BOX:
        low = [require_finite_real("low", v) for v in raw["low"]]
        high = [require_finite_real("high", v) for v in raw["high"]]
        if not low or len(low) != len(high):
            raise DPStreamInputError("high", f"must have the same positive length as low ({len(low)})", high)
        if any(not lo < hi for lo, hi in zip(low, high, strict=True)):
            raise DPStreamInputError("high", "must exceed low in every coordinate", (low, high))
        return {"low": low, "high": high, "count": require_int_at_least("count", raw["count"], 0)}
    raise AssertionError(kind)  # pragma: no cover


class BaseNoiseSource(ABC):
    """Validates every draw, then hands it to :meth:`_draw`.

    Subclasses implement ``_draw(site, kind, params)`` and return the value in the
    canonical type of the kind (float, int, bool, tuple of ints, float array).
    Invalid parameters raise :class:`~dpstream.errors.DPStreamInputError` before any
    randomness is consumed.
    """

    @abstractmethod
    def _draw(self, site: str, kind: DrawKind, params: Params) -> Any:
        """Produce one draw with already validated parameters."""

    def draw(self, site: str, kind: DrawKind, **raw: Any) -> Any:
        """Generic entry point: validate ``raw`` parameters for ``kind`` and draw."""
        if not isinstance(site, str) or not site:
            raise DPStreamInputError("site", "must be a non-empty string", site)
        return self._draw(site, kind, validated_params(kind, raw))

    def _additive(self, site: str, kind: DrawKind, name: str, value: float, limit: float) -> Any:
        # Fast path for the most frequent draws (one per node and step in the tree algorithms):
        # the same rules as validated_params, checked without building the generic call.
        if type(site) is str and site and type(value) is float and 0.0 < value <= limit:
            return self._draw(site, kind, {name: value})
        return self.draw(site, kind, **{name: value})

    def laplace(self, site: str, scale: float) -> float:
        return float(self._additive(site, DrawKind.LAPLACE, "scale", scale, sys.float_info.max))

    def discrete_laplace(self, site: str, scale: float) -> int:
        return int(self._additive(site, DrawKind.DISCRETE_LAPLACE, "scale", scale, MAX_INTEGER_NOISE_SCALE))

    def discrete_gaussian(self, site: str, sigma2: float) -> int:
        return int(self._additive(site, DrawKind.DISCRETE_GAUSSIAN, "sigma2", sigma2, MAX_INTEGER_NOISE_SCALE**2))

    def exponential_mechanism(
        self, site: str, scores: Sequence[float], epsilon: float, sensitivity: float
    ) -> int:
        return int(
            self.draw(
                site, DrawKind.EXPONENTIAL_MECHANISM, scores=scores, epsilon=epsilon, sensitivity=sensitivity
            )
        )

    def coin(self, site: str) -> bool:
        return bool(self.draw(site, DrawKind.COIN))

    def choice(self, site: str, n: int, k: int) -> tuple[int, ...]:
        # every source returns a tuple of Python ints already (kept cheap: k can be ~1e5)
        return tuple(self.draw(site, DrawKind.CHOICE, n=n, k=k))

    def uniform_box(
        self, site: str, low: Sequence[float], high: Sequence[float], count: int = 1
    ) -> FloatArray:
        value = self.draw(site, DrawKind.UNIFORM_BOX, low=list(low), high=list(high), count=count)
        return np.asarray(value, dtype=np.float64).reshape(count, len(low))


def em_log_weights(params: Params) -> FloatArray:
    """log of the unnormalised selection weights eps*u_i/(2*Delta) of the exponential mechanism."""
    scores = np.asarray(params["scores"], dtype=np.float64)
    return np.asarray(scores * (float(params["epsilon"]) / (2.0 * float(params["sensitivity"]))))


class SecureNoise(BaseNoiseSource):
    """The default source: OpenDP measurements for every privacy-relevant draw.

    * Laplace: ``make_laplace`` on floats; discrete Laplace: ``make_laplace`` on
      integers; discrete Gaussian: ``make_gaussian`` on integers with scale sqrt(sigma2).
    * Exponential mechanism: ``make_noisy_max`` with the zero-concentrated output
      measure, which adds Gumbel noise of scale 2*Delta/eps; Gumbel noisy max selects
      index i with probability proportional to exp(eps*u_i/(2*Delta)), exactly the
      papers' law. (Under ``max_divergence`` OpenDP adds exponential noise: a
      different selection law, not used here.)
    * Post-processing (coin, choice, uniform_box): :class:`secrets.SystemRandom`.

    Built measurements are cached by parameter, since building one is slow.
    """

    def __init__(self) -> None:
        import opendp.prelude as dp  # local import: OpenDP loads a native library

        dp.enable_features("contrib")
        self._dp = dp
        self._cache: dict[tuple[DrawKind, float], Any] = {}
        self._system = secrets.SystemRandom()

    def _measurement(self, kind: DrawKind, parameter: float) -> Any:
        key = (kind, parameter)
        meas = self._cache.get(key)
        if meas is None:
            dp = self._dp
            if kind is DrawKind.LAPLACE:
                space = (dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float))
                meas = dp.m.make_laplace(*space, scale=parameter)
            elif kind is DrawKind.DISCRETE_LAPLACE:
                # i64, not T=int: OpenDP maps int to i32 and saturates the noise at +-(2^31 - 1),
                # a visible clamp of the law for scales ~1e8 and above (i64 clamps only at ~1e17)
                space = (dp.atom_domain(T="i64"), dp.absolute_distance(T="i64"))
                meas = dp.m.make_laplace(*space, scale=parameter)
            elif kind is DrawKind.DISCRETE_GAUSSIAN:
                space = (dp.atom_domain(T="i64"), dp.absolute_distance(T="i64"))
                meas = dp.m.make_gaussian(*space, scale=math.sqrt(parameter))
            elif kind is DrawKind.EXPONENTIAL_MECHANISM:
                space = (dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.linf_distance(T=float))
                meas = dp.m.make_noisy_max(*space, dp.zero_concentrated_divergence(), scale=parameter)
            else:  # pragma: no cover
                raise AssertionError(kind)
            self._cache[key] = meas
        return meas

    def _draw(self, site: str, kind: DrawKind, params: Params) -> Any:
        if kind is DrawKind.LAPLACE:
            return float(self._measurement(kind, params["scale"])(0.0))
        if kind is DrawKind.DISCRETE_LAPLACE:
            return int(self._measurement(kind, params["scale"])(0))
        if kind is DrawKind.DISCRETE_GAUSSIAN:
            return int(self._measurement(kind, params["sigma2"])(0))
        if kind is DrawKind.EXPONENTIAL_MECHANISM:
            gumbel_scale = 2.0 * params["sensitivity"] / params["epsilon"]
            return int(self._measurement(kind, gumbel_scale)([float(s) for s in params["scores"]]))
        if kind is DrawKind.COIN:
            return bool(self._system.getrandbits(1))
        if kind is DrawKind.CHOICE:
            return tuple(sorted(self._system.sample(range(params["n"]), params["k"])))
        if kind is DrawKind.UNIFORM_BOX:
            low, high = params["low"], params["high"]
            return np.array(
                [[lo + (hi - lo) * self._system.random() for lo, hi in zip(low, high, strict=True)]
                 for _ in range(params["count"])],
                dtype=np.float64,
            ).reshape(params["count"], len(low))
        raise AssertionError(kind)  # pragma: no cover


class InsecureSeededNoise(BaseNoiseSource):
    """INSECURE: numpy-based, reproducible noise for tests and audits only.

    Floating-point samplers leak through their low-order bits and the generator is
    predictable from its seed; never release data produced with this source.
    """

    def __init__(self, seed: int | np.random.SeedSequence) -> None:
        if not isinstance(seed, np.random.SeedSequence):
            seed = require_int_at_least("seed", seed, 0)
        self._rng = np.random.default_rng(seed)

    @classmethod
    def independent(cls, seed: int, count: int) -> list[InsecureSeededNoise]:
        """``count`` statistically independent sources derived from one seed (for repeated runs)."""
        seed = require_int_at_least("seed", seed, 0)
        count = require_int_at_least("count", count, 0)
        return [cls(child) for child in np.random.SeedSequence(seed).spawn(count)]

    def _discrete_laplace(self, scale: float) -> int:
        # Difference of two i.i.d. geometric variables has pmf ~ p^|z|, p = exp(-1/scale).
        success = -math.expm1(-1.0 / scale)
        return int(self._rng.geometric(success)) - int(self._rng.geometric(success))

    def _discrete_gaussian(self, sigma2: float) -> int:
        # Canonne, Kamath, Steinke (2020), Algorithm 3: rejection from a discrete Laplace.
        t = math.floor(math.sqrt(sigma2)) + 1
        while True:
            y = self._discrete_laplace(float(t))
            if self._rng.random() < math.exp(-((abs(y) - sigma2 / t) ** 2) / (2.0 * sigma2)):
                return y

    def _draw(self, site: str, kind: DrawKind, params: Params) -> Any:
        rng = self._rng
        if kind is DrawKind.LAPLACE:
            return float(rng.laplace(0.0, params["scale"]))
        if kind is DrawKind.DISCRETE_LAPLACE:
            return self._discrete_laplace(params["scale"])
        if kind is DrawKind.DISCRETE_GAUSSIAN:
            return self._discrete_gaussian(params["sigma2"])
        if kind is DrawKind.EXPONENTIAL_MECHANISM:
            logits = em_log_weights(params)
            return int(np.argmax(logits + rng.gumbel(size=logits.shape)))
        if kind is DrawKind.COIN:
            return bool(rng.integers(0, 2))
        if kind is DrawKind.CHOICE:
            picked = rng.choice(int(params["n"]), size=int(params["k"]), replace=False)
            return tuple(np.sort(np.asarray(picked)).tolist())
        if kind is DrawKind.UNIFORM_BOX:
            low = np.asarray(params["low"], dtype=np.float64)
            high = np.asarray(params["high"], dtype=np.float64)
            return rng.uniform(low, high, size=(params["count"], low.size))
        raise AssertionError(kind)  # pragma: no cover


class InsecureZeroNoise(BaseNoiseSource):
    """INSECURE, tests only: every privacy-relevant draw is 0; no privacy at all.

    The exponential mechanism returns the first index of maximal score. Post-processing
    draws (coin, choice, uniform_box) come from a seeded generator, so noiseless runs are
    still reproducible.
    """

    def __init__(self, post_processing_seed: int = 0) -> None:
        self._post = InsecureSeededNoise(post_processing_seed)

    def _draw(self, site: str, kind: DrawKind, params: Params) -> Any:
        if kind in (DrawKind.LAPLACE,):
            return 0.0
        if kind in (DrawKind.DISCRETE_LAPLACE, DrawKind.DISCRETE_GAUSSIAN):
            return 0
        if kind is DrawKind.EXPONENTIAL_MECHANISM:
            return int(np.argmax(np.asarray(params["scores"], dtype=np.float64)))
        return self._post._draw(site, kind, params)


class ScopedNoise(BaseNoiseSource):
    """Prefixes every site with ``prefix + " / "`` and forwards to ``inner``."""

    SEPARATOR = " / "

    def __init__(self, inner: NoiseSource, prefix: str) -> None:
        if not isinstance(prefix, str) or not prefix:
            raise DPStreamInputError("prefix", "must be a non-empty string", prefix)
        self.inner = inner
        self.prefix = prefix

    def _draw(self, site: str, kind: DrawKind, params: Params) -> Any:
        full = f"{self.prefix}{self.SEPARATOR}{site}"
        inner = self.inner
        if isinstance(inner, BaseNoiseSource):
            return inner._draw(full, kind, params)
        return dispatch(inner, full, kind, params)


def dispatch(source: NoiseSource, site_name: str, kind: DrawKind, params: Params) -> Any:
    """Call the public method of ``source`` that corresponds to ``kind``."""
    if kind is DrawKind.LAPLACE:
        return source.laplace(site_name, params["scale"])
    if kind is DrawKind.DISCRETE_LAPLACE:
        return source.discrete_laplace(site_name, params["scale"])
    if kind is DrawKind.DISCRETE_GAUSSIAN:
        return source.discrete_gaussian(site_name, params["sigma2"])
    if kind is DrawKind.EXPONENTIAL_MECHANISM:
        return source.exponential_mechanism(
            site_name, params["scores"], params["epsilon"], params["sensitivity"]
        )
    if kind is DrawKind.COIN:
        return source.coin(site_name)
    if kind is DrawKind.CHOICE:
        return source.choice(site_name, params["n"], params["k"])
    if kind is DrawKind.UNIFORM_BOX:
        return source.uniform_box(site_name, params["low"], params["high"], params["count"])
    raise AssertionError(kind)  # pragma: no cover


def scoped(noise: NoiseSource, prefix: str) -> NoiseSource:
    """A view of ``noise`` whose sites are ``f"{prefix} / {site}"`` (for nested algorithms)."""
    return ScopedNoise(noise, prefix)


def default_noise() -> NoiseSource:
    """The source algorithms use when the caller passes none: :class:`SecureNoise`."""
    return SecureNoise()


def data_rng(seed: int) -> np.random.Generator:
    """A seeded generator for *non-private* randomness outside the algorithms.

    Use it for synthetic input streams (e.g. concentric circles), random evaluation
    queries and data shuffling in experiments. It never feeds a privacy mechanism.
    """
    return np.random.default_rng(require_int_at_least("seed", seed, 0))


def derived_seed(seed: int, *labels: int | str) -> int:
    """A child seed of ``seed`` for the purpose named by ``labels`` (stable across runs and platforms).

    Deterministic (numpy's ``SeedSequence`` hashing of the seed and the CRC-32 of each label); no
    randomness is drawn. It lives here so that this module stays the only one touching ``numpy.random``
    (the audits derive every case's and every check's seed with it).
    """
    seed = require_int_at_least("seed", seed, 0)
    words = [seed] + [zlib.crc32(str(label).encode()) for label in labels]
    return int(np.random.SeedSequence(words).generate_state(1, dtype=np.uint32)[0])
