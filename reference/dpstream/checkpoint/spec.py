"""The documented state of a streaming algorithm: :class:`StateSpec` (one per algorithm class) and its fields.

A state has three parts, each a table of named fields with a kind (:mod:`dpstream.checkpoint.kinds`) and a
meaning, in the papers' names:

* ``params``: the parameters the algorithm is built from (epsilon, T, ...). At load the algorithm is rebuilt from
  them by its own constructor (so every rule the constructor checks holds), and an algorithm inside another one is
  made by its owner (so eps/2, horizons and noise scopes are the owner's), then compared with the file;
* ``derived``: values the constructor computes from the parameters (the noise scale b, sigma^2, ...), written for
  readers and checked at load: a file whose scale does not match its epsilon is refused;
* ``variables``: what changes from step to step (t, g(t), the noisy p-sums, the releases so far, the true counts
  the next step needs), restored into the rebuilt algorithm after their kinds' checks, followed by the
  algorithm's own invariants (``check``: t <= T, counts >= 0, the last release equals g(t), ...).

``version`` is the state version of the algorithm (not the file format's version): whoever changes a state's
layout bumps it and registers ``migrations[v]``, a function from a version-v state document to version v + 1
(plain JSON in, plain JSON out), which :func:`dpstream.checkpoint.load` applies to older files.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from dpstream.checkpoint.kinds import Kind

__all__ = ["Field", "InvariantError", "StateSpec", "require"]


class InvariantError(Exception):
    """An invariant of a restored state does not hold (raised by ``StateSpec.check``; reported as a refusal)."""


def require(condition: bool, rule: str) -> None:
    """Raise :class:`InvariantError` with ``rule`` unless ``condition``."""
    if not condition:
        raise InvariantError(rule)


@dataclass(frozen=True)
class Field:
    """One named part of a state: ``name`` in the file (the paper's name), its kind and meaning.

    By default the value is the attribute ``attr`` (a dotted path; default ``name``) of the algorithm; ``get`` and
    ``put`` read and restore it otherwise.
    """

    name: str
    kind: Kind
    doc: str
    attr: str | None = None
    get: Callable[[Any], Any] | None = None
    put: Callable[[Any, Any], None] | None = None

    def read(self, obj: Any) -> Any:
        if self.get is not None:
            return self.get(obj)
        value = obj
        for part in (self.attr or self.name).split("."):
            value = getattr(value, part)
        return value

    def write(self, obj: Any, value: Any) -> None:
        if self.put is not None:
            self.put(obj, value)
            return
        *head, last = (self.attr or self.name).split(".")
        target = obj
        for part in head:
            target = getattr(target, part)
        setattr(target, last, value)


Migration = Callable[[dict[str, Any]], dict[str, Any]]
"""A state document of version v (plain JSON) -> the same state in version v + 1."""


@dataclass(frozen=True)
class StateSpec:
    """The documented, versioned state of one algorithm class (see the module docstring).

    ``build(params, noise, reader, doc)`` makes the algorithm from its decoded parameters (default
    ``cls(**params, noise=noise)``; ``reader.make`` makes the components a constructor takes, from ``doc``);
    ``check(obj)`` raises :class:`InvariantError` when the restored state breaks a rule; ``noise_of(obj)`` is the source
    the algorithm draws from (default ``obj.noise``; None: it draws nothing); ``family`` groups the docs tables.
    """

    cls: type
    family: str
    paper: str
    summary: str
    params: tuple[Field, ...]
    variables: tuple[Field, ...]
    derived: tuple[Field, ...] = ()
    version: int = 1
    name: str = ""
    build: Callable[[dict[str, Any], Any, Any, dict[str, Any]], Any] | None = None
    check: Callable[[Any], None] | None = None
    noise_of: Callable[[Any], Any] | None = None
    migrations: Mapping[int, Migration] = field(default_factory=dict)

    @property
    def algorithm(self) -> str:
        """The state's name in files (the class name unless given)."""
        return self.name or self.cls.__name__

    def make(self, params: dict[str, Any], noise: Any, reader: Any, doc: dict[str, Any]) -> Any:
        if self.build is not None:
            return self.build(params, noise, reader, doc)
        return self.cls(**params, noise=noise)

    def source(self, obj: Any) -> Any:
        return self.noise_of(obj) if self.noise_of is not None else getattr(obj, "noise", None)
