"""Which catalog entry built an algorithm object (``Entry.make`` records it): what a checkpoint needs to build
the same object again from the entry's JSON parameters (:mod:`dpstream.checkpoint`), including the adapters
whose inner functions only the catalog can make (``OneShot``, ``Stateless``, the offline-to-stream MWEM)."""

from __future__ import annotations

import weakref
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from dpstream.noise import NoiseSource

__all__ = ["Origin", "origin", "record"]


@dataclass(frozen=True)
class Origin:
    """``entry(anchor).make(params, noise, as_printed=as_printed)`` built the object."""

    anchor: str
    params: Mapping[str, Any]
    as_printed: bool
    noise: NoiseSource


_ORIGINS: dict[int, tuple[weakref.ref[Any], Origin]] = {}


def record(obj: Any, made: Origin) -> None:
    """Remember that ``made`` built ``obj`` (for as long as ``obj`` lives; objects without weak references are
    not recorded)."""
    try:
        ref = weakref.ref(obj)
    except TypeError:
        return
    key = id(obj)
    _ORIGINS[key] = (ref, made)
    weakref.finalize(obj, _ORIGINS.pop, key, None)


def origin(obj: Any) -> Origin | None:
    """The catalog entry and parameters that built ``obj`` (None: not built by the catalog)."""
    found = _ORIGINS.get(id(obj))
    if found is None or found[0]() is not obj:
        return None
    return found[1]
