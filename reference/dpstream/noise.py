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

The three *additive* kinds are value-in: an algorithm hands the door the statistic whose
sensitivity its proof bounds and gets the noisy statistic back
(``add_laplace(site, value, scale)``, ``add_discrete_laplace``, ``add_discrete_gaussian``
and the batch forms ``add_*_many(sites, values, ...)``). There is no method that returns a
bare noise sample, so no algorithm can add a float sample to a sensitive value in Python:
in the secure source the noise is added *inside* OpenDP's measurement, whose proof covers
exactly that (floating-point argument: ``proofs/proof_noise_door.py``). A tape records the
noise of an additive draw as ``release - value`` (for the insecure sources: exactly the
sample drawn), so tapes keep their format and meaning.

Sources:

* :class:`SecureNoise` (the default, :func:`default_noise`): every privacy-relevant draw is an
  OpenDP measurement; post-processing randomness comes from the operating system's CSPRNG.
* Everything insecure sits behind its own, explicit door, :mod:`dpstream.insecure`:
  ``InsecureSeededNoise`` (numpy ``Generator``; reproducible and fast; for tests and audits only),
  ``InsecureZeroNoise`` (privacy-relevant draws are 0), ``TapeRecorder`` / ``TapeReplay`` (record every
  draw of another source as a :class:`dpstream.tape.Tape`, or replay a tape site by site; format:
  ``docs/tape-format.md``), ``ScriptedNoise`` and the bulk sampler ``BulkNoise``. They build on
  :class:`BaseNoiseSource` and forward draws with :func:`dispatch`, :func:`dispatch_add`,
  :func:`dispatch_add_many`.

:func:`scoped` prefixes the sites of a sub-algorithm (a counter inside a tree node,
say) so that sites stay unique when algorithms are nested.

Non-private randomness that is not part of any algorithm (synthetic input streams,
random evaluation queries) comes from :func:`data_rng`, and child seeds from :func:`derived_seed`;
both are defined here (not behind the insecure door: they never feed a mechanism), so that this module
and :mod:`dpstream.insecure` stay the only places that touch ``numpy.random``.
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
    require_integer_value,
    require_positive_finite,
)

__all__ = [
    "ADDITIVE_KINDS",
    "MAX_INTEGER_NOISE_SCALE",
    "MAX_INTEGER_VALUE",
    "MAX_LAPLACE_SCALE",
    "BaseNoiseSource",
    "DrawKind",
    "NoiseSource",
    "ScopedNoise",
    "SecureNoise",
    "data_rng",
    "default_noise",
    "derived_seed",
    "require_drawable",
    "scoped",
    "site",
    "unscoped",
]

FloatArray = npt.NDArray[np.float64]
FloatValues = Sequence[float] | npt.NDArray[np.floating[Any]]
"""The statistics of a batch of Laplace draws (a sequence or a float array)."""
IntValues = Sequence[int] | npt.NDArray[np.integer[Any]]
"""The statistics of a batch of integer draws (a sequence or an integer array)."""
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
    """What every algorithm receives. Each method takes the draw's ``site`` first.

    Additive noise is value-in: the caller passes the statistic and receives the noisy
    statistic (the noise is added inside the source: inside OpenDP in the secure source).
    The batch forms take one site per element; they draw exactly what the element-wise
    calls would draw (the secure source makes one OpenDP vector measurement call).
    """

    def add_laplace(self, site: str, value: float, scale: float) -> float:
        """value + Lap(scale), Lap with density exp(-|x|/scale) / (2 scale)."""
        ...

    def add_discrete_laplace(self, site: str, value: int, scale: float) -> int:
        """value + Lap_Z(scale), pmf proportional to exp(-|z|/scale) (004-sec2.4)."""
        ...

    def add_discrete_gaussian(self, site: str, value: int, sigma2: float) -> int:
        """value + N_Z(0, sigma2), pmf proportional to exp(-z^2/(2 sigma2)) (002-def2.2)."""
        ...

    def add_laplace_many(self, sites: Sequence[str], values: FloatValues, scale: float) -> FloatArray:
        """values[i] + Lap(scale) drawn at sites[i], as a float array."""
        ...

    def add_discrete_laplace_many(self, sites: Sequence[str], values: IntValues, scale: float) -> list[int]:
        """values[i] + Lap_Z(scale) drawn at sites[i]."""
        ...

    def add_discrete_gaussian_many(self, sites: Sequence[str], values: IntValues, sigma2: float) -> list[int]:
        """values[i] + N_Z(0, sigma2) drawn at sites[i]."""
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

MAX_INTEGER_VALUE = 2**62
"""Largest |value| an integer additive draw accepts (the statistic handed to the door).

With |value| <= 2^62 and |noise| < 2^62 (probability >= 1 - 2 exp(-2^62 / 1e15) = 1 - 2 exp(-4611) at the
largest scale) the release value + noise stays inside i64, so OpenDP's integer measurement never
saturates (a saturated release would reveal the value)."""

MAX_LAPLACE_SCALE = sys.float_info.max / 1000.0
"""Largest scale of a (float) Laplace draw, about 1.8e305.

A larger scale would make an infinite draw (a release that is no longer a number, nor JSON) a visible part of
the law: at the limit P(|noise| > float max) = exp(-1000). A scale of 1e305 means eps ~ 1e-305."""

ADDITIVE_KINDS = frozenset({DrawKind.LAPLACE, DrawKind.DISCRETE_LAPLACE, DrawKind.DISCRETE_GAUSSIAN})
"""The value-in kinds: drawn only through ``add_*`` (``BaseNoiseSource._add``)."""


def validated_params(kind: DrawKind, raw: Mapping[str, Any]) -> Params:
    """Check and canonicalise the parameters of a draw (exact, JSON-compatible)."""
    if kind is DrawKind.LAPLACE:
        scale = require_positive_finite("scale", raw["scale"])
        if scale > MAX_LAPLACE_SCALE:
            raise DPStreamInputError("scale", f"Laplace noise needs scale <= {MAX_LAPLACE_SCALE:.3g} "
                                     "(larger draws may overflow to infinity)", scale)
        return {"scale": scale}
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


def require_drawable(field: str, value: object, kind: DrawKind, *, statistic: Any = None, **params: Any) -> None:
    """Refuse now the parameter ``field`` (given as ``value``) of an algorithm when the draw parameters derived
    from it (``params``, and the ``statistic`` handed to an additive draw when it is fixed, e.g. a public
    threshold) are ones every source would refuse at every step: a scale 1/eps that is infinite for eps = 1e-320,
    a variance that underflows to 0 for a huge rho, an integer scale beyond :data:`MAX_INTEGER_NOISE_SCALE`.

    Algorithms call it at construction, so that parameters they cannot run with are refused before any step
    (:class:`~dpstream.errors.DPStreamInputError` naming ``field``), not at every step.
    """
    try:
        validated_params(kind, params)
        if statistic is not None:
            validated_value(kind, statistic)
    except DPStreamInputError as exc:
        derived = params.get(exc.field, exc.value)
        what = "noise statistic" if exc.field == "value" else f"noise {exc.field}"
        raise DPStreamInputError(field, f"gives a {what} of {derived!r}, but the {what} {exc.rule}", value) from None


def validated_value(kind: DrawKind, value: Any) -> Any:
    """Check the statistic handed to an additive draw: a finite float (Laplace) or an integer with
    |value| <= :data:`MAX_INTEGER_VALUE` (discrete Laplace and Gaussian), returned as float / int."""
    if kind is DrawKind.LAPLACE:
        return require_finite_real("value", value)
    if kind in (DrawKind.DISCRETE_LAPLACE, DrawKind.DISCRETE_GAUSSIAN):
        number = require_integer_value("value", value)
        if abs(number) > MAX_INTEGER_VALUE:
            raise DPStreamInputError("value", "integer noise needs |value| <= 2^62 (64-bit releases)", value)
        return number
    raise DPStreamInputError("kind", "additive draws are laplace, discrete_laplace or discrete_gaussian", kind)


_MAX_SIGMA2 = MAX_INTEGER_NOISE_SCALE**2


class BaseNoiseSource(ABC):
    """Validates every draw, then hands it to :meth:`_draw` (or, for additive kinds, :meth:`_add`).

    Subclasses implement ``_draw(site, kind, params)`` and return the value in the
    canonical type of the kind (float, int, bool, tuple of ints, float array); for the
    additive kinds ``_draw`` returns the noise sample, and the default :meth:`_add`
    releases ``value + sample`` (insecure sources only: :class:`SecureNoise` overrides
    :meth:`_add` and :meth:`_add_many` so that the noise is added inside OpenDP).
    Invalid parameters or values raise :class:`~dpstream.errors.DPStreamInputError`
    before any randomness is consumed.
    """

    order_free: bool = False
    """True when the value of a draw does not depend on the order in which draws are requested (fresh
    independent draws, or draws keyed by site): then algorithms may batch draws out of their printed order
    (``dpstream.staged``). False for sources whose draws come from one seeded sequence."""

    @abstractmethod
    def _draw(self, site: str, kind: DrawKind, params: Params) -> Any:
        """Produce one draw with already validated parameters (for additive kinds: the bare sample)."""

    def _add(self, site: str, kind: DrawKind, params: Params, value: Any) -> tuple[Any, Any]:
        """(release, noise) of an additive draw on an already validated ``value``: release = value + noise."""
        noise = self._draw(site, kind, params)
        return value + noise, noise

    def _add_many(self, sites: Sequence[str], kind: DrawKind, params: Params, values: Sequence[Any]
                  ) -> tuple[list[Any], list[Any]]:
        """(releases, noises) of element-wise additive draws, in order; the same numbers as :meth:`_add` per element."""
        releases, noises = [], []
        for site_name, value in zip(sites, values, strict=True):
            release, noise = self._add(site_name, kind, params, value)
            releases.append(release)
            noises.append(noise)
        return releases, noises

    def draw(self, site: str, kind: DrawKind, **raw: Any) -> Any:
        """Generic entry point for the non-additive kinds: validate ``raw`` parameters for ``kind`` and draw."""
        if not isinstance(site, str) or not site:
            raise DPStreamInputError("site", "must be a non-empty string", site)
        if kind in ADDITIVE_KINDS:
            raise DPStreamInputError("kind", "additive noise is value-in: use add(site, kind, value, ...)", kind)
        return self._draw(site, kind, validated_params(kind, raw))

    def add(self, site: str, kind: DrawKind, value: Any, **raw: Any) -> Any:
        """Generic entry point for the additive kinds: validate, then release value + noise."""
        if not isinstance(site, str) or not site:
            raise DPStreamInputError("site", "must be a non-empty string", site)
        number = validated_value(kind, value)
        return self._add(site, kind, validated_params(kind, raw), number)[0]

    def add_many(self, sites: Sequence[str], kind: DrawKind, values: FloatValues | IntValues, **raw: Any
                 ) -> list[Any]:
        """Generic batch entry point: ``add`` for every (site, value), in one call of :meth:`_add_many`."""
        names = list(sites)
        numbers = [validated_value(kind, v) for v in values]
        if len(names) != len(numbers):
            raise DPStreamInputError("sites", f"must have one site per value ({len(numbers)})", len(names))
        if any(not isinstance(s, str) or not s for s in names):
            raise DPStreamInputError("sites", "must be non-empty strings", names)
        return self._add_many(names, kind, validated_params(kind, raw), numbers)[0]

    # Fast paths for the most frequent draws (one per node and step in the tree algorithms): the same rules as
    # validated_params / validated_value, checked inline; anything else takes the generic, validating call.
    def add_laplace(self, site: str, value: float, scale: float) -> float:
        if (type(site) is str and site and type(scale) is float and 0.0 < scale <= MAX_LAPLACE_SCALE
                and type(value) is float and -math.inf < value < math.inf):
            return float(self._add(site, DrawKind.LAPLACE, {"scale": scale}, value)[0])
        return float(self.add(site, DrawKind.LAPLACE, value, scale=scale))

    def add_discrete_laplace(self, site: str, value: int, scale: float) -> int:
        if (type(site) is str and site and type(scale) is float and 0.0 < scale <= MAX_INTEGER_NOISE_SCALE
                and type(value) is int and -MAX_INTEGER_VALUE <= value <= MAX_INTEGER_VALUE):
            return int(self._add(site, DrawKind.DISCRETE_LAPLACE, {"scale": scale}, value)[0])
        return int(self.add(site, DrawKind.DISCRETE_LAPLACE, value, scale=scale))

    def add_discrete_gaussian(self, site: str, value: int, sigma2: float) -> int:
        if (type(site) is str and site and type(sigma2) is float and 0.0 < sigma2 <= _MAX_SIGMA2
                and type(value) is int and -MAX_INTEGER_VALUE <= value <= MAX_INTEGER_VALUE):
            return int(self._add(site, DrawKind.DISCRETE_GAUSSIAN, {"sigma2": sigma2}, value)[0])
        return int(self.add(site, DrawKind.DISCRETE_GAUSSIAN, value, sigma2=sigma2))

    def add_laplace_many(self, sites: Sequence[str], values: FloatValues, scale: float) -> FloatArray:
        return np.asarray(self.add_many(sites, DrawKind.LAPLACE, values, scale=scale), dtype=np.float64)

    def add_discrete_laplace_many(self, sites: Sequence[str], values: IntValues, scale: float) -> list[int]:
        return [int(v) for v in self.add_many(sites, DrawKind.DISCRETE_LAPLACE, values, scale=scale)]

    def add_discrete_gaussian_many(self, sites: Sequence[str], values: IntValues, sigma2: float) -> list[int]:
        return [int(v) for v in self.add_many(sites, DrawKind.DISCRETE_GAUSSIAN, values, sigma2=sigma2)]

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

    * Additive noise is value-in: the OpenDP measurement is applied to the statistic itself
      and its output is the release; nothing is added in Python (``proofs/proof_noise_door.py``).
      Laplace: ``make_laplace`` on floats (OpenDP samples on a grid of 2^k and rounds the exact
      sum to a float: safe against Mironov's attack on the low-order bits); discrete Laplace:
      ``make_laplace`` on i64; discrete Gaussian: ``make_gaussian`` on i64 with scale
      sqrt(sigma2). The batch forms make ONE call of the vector measurement
      (``vector_domain`` with ``l1_distance`` / ``l2_distance``), independent noise per element.
    * Exponential mechanism: ``make_noisy_max`` with the zero-concentrated output
      measure, which adds Gumbel noise of scale 2*Delta/eps; Gumbel noisy max selects
      index i with probability proportional to exp(eps*u_i/(2*Delta)), exactly the
      papers' law. (Under ``max_divergence`` OpenDP adds exponential noise: a
      different selection law, not used here.)
    * Post-processing (coin, choice, uniform_box): the operating system's CSPRNG (:class:`secrets.SystemRandom`
      for coins; uniform_box and choice read all their bits in one ``secrets.token_bytes`` call).

    Draws are fresh and independent, so their order is free (:attr:`order_free`): algorithms batch them.
    Built measurements are cached by (kind, parameter, vector), since building one is slow.
    The source pickles and deep-copies without its cache (nothing random is stored; the
    measurements are rebuilt on first use).
    """

    order_free = True

    def __init__(self) -> None:
        self._cache: dict[tuple[DrawKind, float, bool], Any] = {}
        self._system = secrets.SystemRandom()
        self._dp: Any = None

    def __getstate__(self) -> dict[str, Any]:
        return {}

    def __setstate__(self, state: Mapping[str, Any]) -> None:
        self._cache = {}
        self._system = secrets.SystemRandom()
        self._dp = None

    def _opendp(self) -> Any:
        if self._dp is None:
            import opendp.prelude as dp  # local import: OpenDP loads a native library

            dp.enable_features("contrib")
            self._dp = dp
        return self._dp

    def _measurement(self, kind: DrawKind, parameter: float, vector: bool = False) -> Any:
        """The OpenDP measurement of ``kind`` (scale, sigma2 or Gumbel scale); on a vector when ``vector``."""
        key = (kind, parameter, vector)
        meas = self._cache.get(key)
        if meas is None:
            dp = self._opendp()
            if kind is DrawKind.LAPLACE:
                atom, metric = dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float)
                if vector:
                    atom, metric = dp.vector_domain(atom), dp.l1_distance(T=float)
                meas = dp.m.make_laplace(atom, metric, scale=parameter)
            elif kind is DrawKind.DISCRETE_LAPLACE:
                # i64, not T=int: OpenDP maps int to i32 and saturates the noise at +-(2^31 - 1),
                # a visible clamp of the law for scales ~1e8 and above (i64 clamps only at ~1e17)
                atom, metric = dp.atom_domain(T="i64"), dp.absolute_distance(T="i64")
                if vector:
                    atom, metric = dp.vector_domain(atom), dp.l1_distance(T="i64")
                meas = dp.m.make_laplace(atom, metric, scale=parameter)
            elif kind is DrawKind.DISCRETE_GAUSSIAN:
                atom, metric = dp.atom_domain(T="i64"), dp.absolute_distance(T="i64")
                if vector:
                    atom, metric = dp.vector_domain(atom), dp.l2_distance(T="i64")
                meas = dp.m.make_gaussian(atom, metric, scale=math.sqrt(parameter))
            elif kind is DrawKind.EXPONENTIAL_MECHANISM:
                space = (dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.linf_distance(T=float))
                meas = dp.m.make_noisy_max(*space, dp.zero_concentrated_divergence(), scale=parameter)
            else:  # pragma: no cover
                raise AssertionError(kind)
            self._cache[key] = meas
        return meas

    @staticmethod
    def _parameter(kind: DrawKind, params: Params) -> float:
        return float(params["sigma2"] if kind is DrawKind.DISCRETE_GAUSSIAN else params["scale"])

    def _add(self, site: str, kind: DrawKind, params: Params, value: Any) -> tuple[Any, Any]:
        # The release IS the measurement's output on the statistic; ``noise`` only serves recording.
        release = self._measurement(kind, self._parameter(kind, params))(value)
        release = float(release) if kind is DrawKind.LAPLACE else int(release)
        return release, release - value

    def _add_many(self, sites: Sequence[str], kind: DrawKind, params: Params, values: Sequence[Any]
                  ) -> tuple[list[Any], list[Any]]:
        if len(sites) != len(values):
            raise DPStreamInputError("sites", f"must have one site per value ({len(values)})", len(sites))
        if not values:
            return [], []
        out = self._measurement(kind, self._parameter(kind, params), vector=True)(list(values))
        cast = float if kind is DrawKind.LAPLACE else int
        releases = [cast(r) for r in out]
        if len(releases) != len(values):  # pragma: no cover - OpenDP returns one release per element
            raise AssertionError("vector measurement changed the length")
        return releases, [r - v for r, v in zip(releases, values, strict=True)]

    @staticmethod
    def _below(bounds: npt.NDArray[np.int64]) -> list[int]:
        """One uniform integer in [0, m) for every m >= 1 of ``bounds``, from the OS CSPRNG read in bulk; unbiased:
        a 64-bit word w is used as w mod m only when w >= 2^64 mod m (then every residue has the same number of
        preimages), otherwise it is drawn again (probability < m / 2^64)."""
        m = bounds.astype(np.uint64)
        out = np.zeros(m.size, dtype=np.uint64)
        todo = np.arange(m.size)
        while todo.size:
            words = np.frombuffer(secrets.token_bytes(8 * todo.size), dtype=np.uint64)
            mm = m[todo]
            ok = words >= (np.uint64(0) - mm) % mm  # (2^64 - m) mod m = 2^64 mod m
            out[todo[ok]] = words[ok] % mm[ok]
            todo = todo[~ok]
        return [int(v) for v in out]

    def _choice(self, n: int, k: int) -> tuple[int, ...]:
        """A uniform k-subset of range(n), sorted: the first k positions of a Fisher-Yates shuffle (position i swaps
        with i + r_i, r_i uniform in [0, n - i)), kept sparse so that the work is O(k) for any n."""
        offsets = self._below(np.arange(n, n - k, -1, dtype=np.int64))
        moved: dict[int, int] = {}
        chosen = []
        for i, r in enumerate(offsets):
            j = i + r
            chosen.append(moved.get(j, j))
            moved[j] = moved.get(i, i)
        return tuple(sorted(chosen))

    def _draw(self, site: str, kind: DrawKind, params: Params) -> Any:
        if kind in ADDITIVE_KINDS:
            raise TypeError(f"SecureNoise draws {kind.value} only value-in (_add): no bare noise sample exists")
        if kind is DrawKind.EXPONENTIAL_MECHANISM:
            gumbel_scale = 2.0 * params["sensitivity"] / params["epsilon"]
            return int(self._measurement(kind, gumbel_scale)([float(s) for s in params["scores"]]))
        if kind is DrawKind.COIN:
            return bool(self._system.getrandbits(1))
        if kind is DrawKind.CHOICE:
            return self._choice(params["n"], params["k"])
        if kind is DrawKind.UNIFORM_BOX:
            low = np.asarray(params["low"], dtype=np.float64)
            high = np.asarray(params["high"], dtype=np.float64)
            count = params["count"]
            # random.SystemRandom().random() for every coordinate, in bulk: 53 of 64 bits of the OS CSPRNG
            # scaled to [0, 1) (the same grid of 2^53 values as SystemRandom.random), one read for all of them
            words = np.frombuffer(secrets.token_bytes(8 * count * low.size), dtype=np.uint64)
            u = (words >> np.uint64(11)).astype(np.float64) * (1.0 / 2.0**53)
            return np.asarray(low + (high - low) * u.reshape(count, low.size), dtype=np.float64)
        raise AssertionError(kind)  # pragma: no cover


class ScopedNoise(BaseNoiseSource):
    """Prefixes every site with ``prefix + " / "`` and forwards to ``inner``."""

    SEPARATOR = " / "

    def __init__(self, inner: NoiseSource, prefix: str) -> None:
        if not isinstance(prefix, str) or not prefix:
            raise DPStreamInputError("prefix", "must be a non-empty string", prefix)
        self.inner = inner
        self.prefix = prefix

    @property
    def order_free(self) -> bool:  # type: ignore[override]
        return bool(getattr(self.inner, "order_free", False))

    def _full(self, site: str) -> str:
        return f"{self.prefix}{self.SEPARATOR}{site}"

    def _draw(self, site: str, kind: DrawKind, params: Params) -> Any:
        return dispatch(self.inner, self._full(site), kind, params)

    def _add(self, site: str, kind: DrawKind, params: Params, value: Any) -> tuple[Any, Any]:
        return dispatch_add(self.inner, self._full(site), kind, params, value)

    def _add_many(self, sites: Sequence[str], kind: DrawKind, params: Params, values: Sequence[Any]
                  ) -> tuple[list[Any], list[Any]]:
        return dispatch_add_many(self.inner, [self._full(s) for s in sites], kind, params, values)


# Forwarding, for sources that wrap another (ScopedNoise here; the recorder, replay and scripted sources of
# dpstream.insecure): the draw's parameters (and value) are validated already. A BaseNoiseSource gets them through
# its hooks, so that no draw is validated twice and the noise of an insecure source is its sample itself; any other
# NoiseSource through its public methods. These three functions are the only code that calls another source's hooks.


def dispatch_add(source: NoiseSource, site_name: str, kind: DrawKind, params: Params, value: Any
                 ) -> tuple[Any, Any]:
    """(release, noise) of an additive draw forwarded to ``source``: its hook for a :class:`BaseNoiseSource`,
    otherwise the public value-in method that corresponds to ``kind`` (noise = release - value)."""
    if kind not in ADDITIVE_KINDS:
        raise DPStreamInputError("kind", "additive draws are laplace, discrete_laplace or discrete_gaussian", kind)
    if isinstance(source, BaseNoiseSource):
        return source._add(site_name, kind, params, value)
    if kind is DrawKind.LAPLACE:
        release: Any = float(source.add_laplace(site_name, value, params["scale"]))
    elif kind is DrawKind.DISCRETE_LAPLACE:
        release = int(source.add_discrete_laplace(site_name, value, params["scale"]))
    elif kind is DrawKind.DISCRETE_GAUSSIAN:
        release = int(source.add_discrete_gaussian(site_name, value, params["sigma2"]))
    else:
        raise DPStreamInputError("kind", "additive draws are laplace, discrete_laplace or discrete_gaussian", kind)
    return release, release - value


def dispatch_add_many(source: NoiseSource, sites: Sequence[str], kind: DrawKind, params: Params,
                      values: Sequence[Any]) -> tuple[list[Any], list[Any]]:
    """:func:`dispatch_add` for a batch (the source's batch hook, or its public batch method)."""
    if kind not in ADDITIVE_KINDS:
        raise DPStreamInputError("kind", "additive draws are laplace, discrete_laplace or discrete_gaussian", kind)
    if isinstance(source, BaseNoiseSource):
        return source._add_many(sites, kind, params, values)
    if kind is DrawKind.LAPLACE:
        releases: list[Any] = [float(r) for r in source.add_laplace_many(sites, values, params["scale"])]
    elif kind is DrawKind.DISCRETE_LAPLACE:
        releases = [int(r) for r in source.add_discrete_laplace_many(sites, values, params["scale"])]
    elif kind is DrawKind.DISCRETE_GAUSSIAN:
        releases = [int(r) for r in source.add_discrete_gaussian_many(sites, values, params["sigma2"])]
    else:
        raise DPStreamInputError("kind", "additive draws are laplace, discrete_laplace or discrete_gaussian", kind)
    return releases, [r - v for r, v in zip(releases, values, strict=True)]


def dispatch(source: NoiseSource, site_name: str, kind: DrawKind, params: Params) -> Any:
    """A draw forwarded to ``source``: its hook ``_draw`` for a :class:`BaseNoiseSource` (for an additive kind: the
    bare sample an insecure source adds, which :class:`SecureNoise` refuses to make), otherwise the public method
    that corresponds to the non-additive ``kind`` (additive kinds are value-in: :func:`dispatch_add`)."""
    if isinstance(source, BaseNoiseSource):
        return source._draw(site_name, kind, params)
    if kind in ADDITIVE_KINDS:
        raise DPStreamInputError("kind", "additive noise is value-in: use dispatch_add", kind)
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


def unscoped(noise: NoiseSource, site_name: str) -> tuple[NoiseSource, str]:
    """The innermost source under the :func:`scoped` views of ``noise`` and the full site of ``site_name`` there."""
    while isinstance(noise, ScopedNoise):
        site_name = f"{noise.prefix}{ScopedNoise.SEPARATOR}{site_name}"
        noise = noise.inner
    return noise, site_name


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


_MOVED = ("InsecureSeededNoise", "InsecureZeroNoise", "TapeRecorder", "TapeReplay")


def __getattr__(name: str) -> object:
    if name in _MOVED:  # one door for insecure sources; no alias here
        raise ImportError(f"dpstream.noise.{name} is an insecure source and moved to the insecure door: "
                          f"from dpstream.insecure import {name}", name=__name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
