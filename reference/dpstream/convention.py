"""One calling convention for every algorithm, implemented once (docs/developing.md, "Calling convention").

* The paper's parameters, with the paper's names (``epsilon``, ``rho``, ``T``, ``B``, ``d``, ``k``, ``theta``, ...),
  come first and may be given by position, in the paper's order, or by keyword.
* ``noise`` is keyword-only; ``None`` (the default) is the secure default. Options are keyword-only.
* ``noise`` is checked before anything else happens (no validation, no state, no draw): anything that is not a
  :class:`~dpstream.noise.NoiseSource` raises ``TypeError("noise must be a NoiseSource ... got <type>")``.
* The calls of the previous release (``SimpleCounter(eps, noise, horizon)``, ``BinaryTreeCounter(eps, T, noise)``,
  the keyword ``horizon=``, ...) keep working for one release with a
  :class:`~dpstream.errors.DPStreamDeprecationWarning` naming the new call.

:func:`convention` does all of this for a function, a method or a class (whose ``__init__`` it wraps). The old
orders are listed by name, e.g. ``@convention(("epsilon", "noise"), ("epsilon", "noise", "horizon"),
renamed={"horizon": "T"})``: a call with more positional arguments than the new signature allows, or with a
noise source at the old order's ``noise`` position, is read in that old order, warned about and passed on by
keyword. The new signature is what type checkers see, so an old call in code checked by mypy is an error there.

Once built, every streaming algorithm is called the same way: :class:`Streaming`, ``step(x) -> release``.
"""

from __future__ import annotations

import functools
import inspect
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from dpstream.errors import DPStreamDeprecationWarning
from dpstream.noise import BaseNoiseSource, NoiseSource

__all__ = ["Call", "Convention", "Streaming", "check_noise", "convention", "intercepting", "with_noise"]

T = TypeVar("T")
S = TypeVar("S")

OldOrder = tuple[str, ...]


class Streaming(Protocol):
    """Anything with a ``step`` method: counters and the synthetic-data algorithms alike (``step(x) -> release``)."""

    def step(self, x: Any) -> Any: ...


def check_noise(noise: object) -> None:
    """``TypeError`` unless ``noise`` is a :class:`~dpstream.noise.NoiseSource` or ``None`` (the secure default)."""
    # BaseNoiseSource first: an ABC check is fast, the structural NoiseSource check (a runtime-checkable
    # protocol, for sources that do not subclass it) costs ~10 us
    if noise is not None and not isinstance(noise, BaseNoiseSource) and not isinstance(noise, NoiseSource):
        kind = type(noise)
        name = kind.__qualname__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"
        raise TypeError("noise must be a NoiseSource (dpstream.noise.SecureNoise; for tests dpstream.insecure: "
                        f"InsecureSeededNoise, TapeRecorder, ...) or None for the secure default, got {name}")


@dataclass(frozen=True)
class Convention:
    """The convention of one callable: its new signature and the old orders it still accepts."""

    name: str
    positional: tuple[str, ...]
    """The parameters that may be given by position (the paper's), in order."""
    keyword_only: tuple[str, ...]
    old: tuple[OldOrder, ...]
    renamed: Mapping[str, str] = field(default_factory=dict)
    """Old keyword -> new keyword (``horizon`` -> ``T``)."""
    defaults: Mapping[str, Any] = field(default_factory=dict)
    """The parameters that have a default, with it."""

    @property
    def takes_noise(self) -> bool:
        return "noise" in self.keyword_only

    def _new_name(self, old_name: str) -> str:
        return self.renamed.get(old_name, old_name)

    def new_call(self, names: Sequence[str]) -> str:
        """The new spelling of a call that passes ``names`` (old names, in the old order)."""
        new = [self._new_name(n) for n in names]
        positional: list[str] = []
        for name in self.positional:
            if name not in new:
                break
            positional.append(name)
        keywords = [f"{n}={n}" for n in new if n not in positional]
        renames = [f"{n} is now {self._new_name(n)}" for n in names if n in self.renamed]
        return f"{self.name}({', '.join(positional + keywords)})" + (f" ({'; '.join(renames)})" if renames else "")

    def _old_order(self, args: tuple[Any, ...]) -> OldOrder | None:
        """The old order a positional call is written in, or ``None`` for a call in the new order."""
        candidates = [o for o in self.old if len(o) == len(args)]
        if len(args) > len(self.positional):
            if not candidates:
                names = (*self.positional, "noise") if self.takes_noise else self.positional
                raise TypeError(
                    f"{self.name}() takes at most {len(self.positional)} positional arguments "
                    f"({', '.join(self.positional)}), {len(args)} given; noise and the options are keyword-only: "
                    f"{self.new_call(names)}")
            return candidates[0]
        for order in candidates:
            noise = args[order.index("noise")] if "noise" in order else None
            if isinstance(noise, BaseNoiseSource) or (noise is not None and isinstance(noise, NoiseSource)):
                return order
        return None

    def normalize(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[tuple[Any, ...], dict[str, Any],
                                                                                    str | None]:
        """(args, kwargs) in the new convention and the deprecation message, if the call used an old one."""
        messages: list[str] = []
        order = self._old_order(args)
        if order is not None:
            moved = dict(zip(order, args, strict=True))
            messages.append(f"{self.name}({', '.join(order)}) is the old order: call {self.new_call(order)}")
            args = ()
        else:
            moved = {}
        out = dict(kwargs)
        for name, value in moved.items():
            if name in out:
                raise TypeError(f"{self.name}() got multiple values for argument {name!r}")
            out[name] = value
        for old_name, new_name in self.renamed.items():
            if old_name in out:
                given_by_position = new_name in self.positional[:len(args)]
                if new_name in out or given_by_position:
                    raise TypeError(f"{self.name}() got both {old_name!r} (deprecated) and {new_name!r}")
                out[new_name] = out.pop(old_name)
                if old_name not in moved:
                    messages.append(f"the keyword {old_name}= of {self.name} is now {new_name}=")
        if not messages:
            return args, out, None
        return args, out, (f"{'; '.join(messages)} (the old calls stop working in the next release; "
                           "docs/developing.md, 'Calling convention')")


@dataclass(frozen=True)
class Call:
    """One top-level call through the convention (see :func:`intercepting`)."""

    target: Any
    """The class or function called."""
    convention: Convention
    args: tuple[Any, ...]
    kwargs: dict[str, Any]


Hook = Callable[[Call], Call]
_HOOK: ContextVar[Hook | None] = ContextVar("dpstream_convention_hook", default=None)
_DEPTH: ContextVar[int] = ContextVar("dpstream_convention_depth", default=0)


@contextmanager
def intercepting(hook: Hook) -> Iterator[None]:
    """Pass every top-level call through the convention (not the calls it makes) to ``hook`` first.

    The hook sees the call as written and returns the call to make instead (the same one to just record it).
    Tests use it to find the algorithm a catalog entry builds and to rewrite its call in an old order.
    """
    token = _HOOK.set(hook)
    try:
        yield
    finally:
        _HOOK.reset(token)


def with_noise(make: Callable[..., S], *args: Any, **kwargs: Any) -> Callable[[NoiseSource], S]:
    """``noise -> make(*args, noise=noise, **kwargs)``, e.g. ``with_noise(SimpleCounter, 0.5)``: the factory that
    ``dpstream.testing.record_run`` and ``dpstream.interop.opendp.counter_measurement`` take, for an algorithm whose
    ``noise`` is keyword-only (what ``functools.partial(SimpleCounter, 0.5)`` called with a source no longer is)."""

    def factory(noise: NoiseSource) -> S:
        return make(*args, noise=noise, **kwargs)

    return factory


def _parameters(function: Callable[..., Any], skip_self: bool
                ) -> tuple[tuple[str, ...], tuple[str, ...], dict[str, Any]]:
    params = list(inspect.signature(function).parameters.values())
    if skip_self:
        params = params[1:]
    kinds = {p.kind for p in params}
    if inspect.Parameter.VAR_POSITIONAL in kinds or inspect.Parameter.POSITIONAL_ONLY in kinds:
        raise TypeError(f"{function.__qualname__}: the convention takes no *args or positional-only parameters")
    positional = tuple(p.name for p in params if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD)
    keyword_only = tuple(p.name for p in params if p.kind is inspect.Parameter.KEYWORD_ONLY)
    by_name = {p.name: p for p in params}
    if "noise" in positional:
        raise TypeError(f"{function.__qualname__}: noise must be keyword-only")
    if "noise" in by_name and by_name["noise"].default is not None:
        raise TypeError(f"{function.__qualname__}: noise must default to None (the secure default)")
    defaults = {p.name: p.default for p in params if p.default is not inspect.Parameter.empty}
    return positional, keyword_only, defaults


def convention(*old: OldOrder, renamed: Mapping[str, str] | None = None) -> Callable[[T], T]:
    """Decorate a function, method or class (its ``__init__``) with the calling convention (module docstring).

    ``old``: the positional orders of the previous release, by (old) parameter name, ``self`` omitted; each
    length at most once. ``renamed``: old keyword -> new keyword.
    """
    lengths = [len(o) for o in old]
    if len(set(lengths)) != len(lengths):
        raise ValueError(f"old orders must have distinct lengths: {old}")
    renames = dict(renamed or {})

    def decorate(target: T) -> T:
        if isinstance(target, type):
            if "__init__" not in target.__dict__:
                raise TypeError(f"{target.__qualname__} defines no __init__ of its own to put under the convention")
            init = target.__dict__["__init__"]
            target.__init__ = _wrap(init, target, target.__qualname__, True, old, renames)  # type: ignore[misc]
            return target
        if not callable(target):
            raise TypeError(f"convention() decorates a class or a function, not {target!r}")
        method = next(iter(inspect.signature(target).parameters), None) in ("self", "cls")
        return _wrap(target, target, getattr(target, "__qualname__", repr(target)), method, old, renames)  # type: ignore[return-value]

    return decorate


def _wrap(function: Callable[..., Any], target: Any, name: str, method: bool, old: Sequence[OldOrder],
          renamed: Mapping[str, str]) -> Callable[..., Any]:
    positional, keyword_only, defaults = _parameters(function, method)
    known = set(positional) | set(keyword_only)
    for order in old:
        unknown = [n for n in order if renamed.get(n, n) not in known]
        if unknown:
            raise TypeError(f"{name}: old order {order} names unknown parameters {unknown}")
    spec = Convention(name, positional, keyword_only, tuple(old), renamed, defaults)

    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        head, rest = (args[:1], args[1:]) if method else ((), args)
        depth = _DEPTH.get()
        hook = _HOOK.get()
        if hook is not None and depth == 0:
            call = hook(Call(target, spec, rest, dict(kwargs)))
            rest, kwargs = call.args, call.kwargs
        rest, kwargs, deprecated = spec.normalize(rest, kwargs)
        if spec.takes_noise:
            check_noise(kwargs.get("noise"))
        if deprecated is not None:
            # stacklevel 2: the caller's line (a class call adds no Python frame before __init__)
            warnings.warn(deprecated, DPStreamDeprecationWarning, stacklevel=2)
        token = _DEPTH.set(depth + 1)
        try:
            return function(*head, *rest, **kwargs)
        finally:
            _DEPTH.reset(token)

    wrapper.__dpstream_convention__ = spec  # type: ignore[attr-defined]
    return wrapper
