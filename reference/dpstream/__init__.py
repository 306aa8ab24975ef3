"""dpstream: reference implementation of continual-release differentially private synthetic data.

Start with ``dpstream.noise`` (the one door to randomness), ``dpstream.claims``
(privacy claims as values) and ``dpstream.counters``; the algorithm families live in
their own subpackages, the audits in ``dpstream.audit``.

The main types are exported here: the noise door's public side (:class:`SecureNoise`, the default, and
the :class:`NoiseSource` protocol; the insecure sources for tests and simulations sit behind their own door,
:mod:`dpstream.insecure`), privacy claims, errors, noise tapes and the basic mechanisms. They are loaded on
first use (module ``__getattr__``), so ``import dpstream`` imports neither OpenDP nor numpy.
``dpstream.__version__`` is the installed distribution's version.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dpstream.lazy import lazy_exports

if TYPE_CHECKING:
    from dpstream.audit.linear_model import LinearReleaseModel
    from dpstream.claims import Measure, Neighbour, PrivacyClaim
    from dpstream.convention import Streaming
    from dpstream.errors import (
        DataRowError,
        DPStreamDeprecationWarning,
        DPStreamInputError,
        HorizonExceededError,
        StateError,
    )
    from dpstream.mechanisms import DiscreteGaussianMechanism, ExponentialMechanism, LaplaceMechanism
    from dpstream.noise import NoiseSource, SecureNoise, default_noise, scoped, site
    from dpstream.tape import Tape

_EXPORTS: dict[str, str] = {
    "DPStreamDeprecationWarning": "dpstream.errors",
    "DPStreamInputError": "dpstream.errors",
    "DataRowError": "dpstream.errors",
    "DiscreteGaussianMechanism": "dpstream.mechanisms",
    "ExponentialMechanism": "dpstream.mechanisms",
    "HorizonExceededError": "dpstream.errors",
    "LaplaceMechanism": "dpstream.mechanisms",
    "LinearReleaseModel": "dpstream.audit.linear_model",
    "Measure": "dpstream.claims",
    "Neighbour": "dpstream.claims",
    "NoiseSource": "dpstream.noise",
    "PrivacyClaim": "dpstream.claims",
    "SecureNoise": "dpstream.noise",
    "StateError": "dpstream.errors",
    "Streaming": "dpstream.convention",
    "Tape": "dpstream.tape",
    "default_noise": "dpstream.noise",
    "scoped": "dpstream.noise",
    "site": "dpstream.noise",
}

__all__ = [
    "DPStreamDeprecationWarning",
    "DPStreamInputError",
    "DataRowError",
    "DiscreteGaussianMechanism",
    "ExponentialMechanism",
    "HorizonExceededError",
    "LaplaceMechanism",
    "LinearReleaseModel",
    "Measure",
    "Neighbour",
    "NoiseSource",
    "PrivacyClaim",
    "SecureNoise",
    "StateError",
    "Streaming",
    "Tape",
    "__version__",
    "default_noise",
    "scoped",
    "site",
]


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("dpstream")
    except PackageNotFoundError:  # pragma: no cover - a source tree that is not installed
        return "0+unknown"


_exported = lazy_exports(globals(), _EXPORTS)


def __getattr__(name: str) -> Any:
    return _version() if name == "__version__" else _exported(name)


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
