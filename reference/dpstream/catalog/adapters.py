"""Adapters that let a box without a stream interface speak the conformance protocol.

* :class:`OneShot` -- a one-shot algorithm (PrivTree on one tree function, offline select-measure-fit on
  one dataset) served as a stream of length 1: INPUT the whole input, RELEASE the output; a second step
  is refused like a step past a horizon T = 1.
* :class:`Stateless` -- a deterministic function (004-alg4) served as a stream whose every step applies
  it to its INPUT (no state, no draws).

Both carry the wrapped algorithm's ``claim`` and ``paper_claim`` (``Entry.claim`` reads them).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dpstream.claims import PrivacyClaim
from dpstream.errors import HorizonExceededError

__all__ = ["OneShot", "Stateless"]


class OneShot:
    """``step(x)`` runs ``run(x)`` once; a second step raises :class:`HorizonExceededError` (T = 1)."""

    def __init__(self, run: Callable[[Any], Any], claim: PrivacyClaim, paper_claim: PrivacyClaim | None = None,
                 *, algorithm: object = None) -> None:
        self._run = run
        self.algorithm = algorithm
        """The wrapped algorithm (an object or a function), named for docs and tests."""
        self.claim = claim
        self.paper_claim = claim if paper_claim is None else paper_claim
        self.t = 0

    def step(self, x: Any) -> Any:
        if self.t >= 1:
            raise HorizonExceededError("t", "a one-shot algorithm takes exactly one input (T = 1)", self.t + 1)
        out = self._run(x)
        self.t = 1
        return out


class Stateless:
    """``step(x)`` returns ``function(x)`` at every step (a deterministic map: nothing is drawn or kept)."""

    def __init__(self, function: Callable[[Any], Any], claim: PrivacyClaim, *, algorithm: object = None) -> None:
        self._function = function
        self.algorithm = algorithm
        """The wrapped algorithm (an object or a function), named for docs and tests."""
        self.claim = claim
        self.paper_claim = claim
        self.t = 0

    def step(self, x: Any) -> Any:
        out = self._function(x)
        self.t += 1
        return out
