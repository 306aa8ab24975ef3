"""INSECURE: the seeded and the zero noise sources, for tests, audits and simulations (never for releases).

* :class:`InsecureSeededNoise`: numpy-based, reproducible draws of every kind of the noise door; its
  floating-point samplers leak through their low-order bits and the generator is predictable from its seed.
* :class:`InsecureZeroNoise`: every privacy-relevant draw is 0 (noiseless behaviour); post-processing draws come
  from a seeded generator.

Both speak the :class:`~dpstream.noise.NoiseSource` protocol (they subclass the door's
:class:`~dpstream.noise.BaseNoiseSource`, so every draw is validated the same way); the secure default stays
:class:`dpstream.noise.SecureNoise`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from dpstream.errors import DPStreamInputError, require_int_at_least
from dpstream.noise import BaseNoiseSource, DrawKind, Params, dispatch, em_log_weights

__all__ = ["InsecureSeededNoise", "InsecureZeroNoise"]


class InsecureSeededNoise(BaseNoiseSource):
    """INSECURE: numpy-based, reproducible noise for tests and audits only.

    Floating-point samplers leak through their low-order bits and the generator is
    predictable from its seed; never release data produced with this source.
    """

    def __init__(self, seed: int | np.random.SeedSequence) -> None:
        if not isinstance(seed, np.random.SeedSequence):
            seed = require_int_at_least("seed", seed, 0)
        self._rng = np.random.default_rng(seed)

    def generator_state(self) -> dict[str, Any]:
        """The generator's state (JSON-compatible: numpy's bit-generator state dict), for checkpoints."""
        return dict(self._rng.bit_generator.state)

    def restore_generator_state(self, state: Mapping[str, Any]) -> None:
        """Continue from a :meth:`generator_state`; a state of another bit generator or a malformed one is refused
        (DPStreamInputError) and changes nothing."""
        current = self._rng.bit_generator
        if not isinstance(state, Mapping) or state.get("bit_generator") != type(current).__name__:
            raise DPStreamInputError("state", f"must be a {type(current).__name__} state", state)
        trial = type(current)()
        try:
            trial.state = dict(state)
        except (TypeError, ValueError, KeyError) as exc:
            raise DPStreamInputError("state", f"invalid {type(current).__name__} state: {exc}", state) from exc
        current.state = trial.state

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

    @property
    def post_processing(self) -> InsecureSeededNoise:
        """The seeded source of the post-processing draws (its state travels with checkpoints)."""
        return self._post

    def _draw(self, site: str, kind: DrawKind, params: Params) -> Any:
        if kind in (DrawKind.LAPLACE,):
            return 0.0
        if kind in (DrawKind.DISCRETE_LAPLACE, DrawKind.DISCRETE_GAUSSIAN):
            return 0
        if kind is DrawKind.EXPONENTIAL_MECHANISM:
            return int(np.argmax(np.asarray(params["scores"], dtype=np.float64)))
        return dispatch(self._post, site, kind, params)
