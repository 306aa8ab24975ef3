"""The error type of checkpoints and the allow-list of names a checkpoint may use (dpstream's own modules).

A checkpoint names a function only as ``{"dpstream": "module:qualname"}`` (a module-level function of the
dpstream package), ``{"named": "..."}`` (a function of yours, given back at load) or ``{"inner": "..."}`` (a
function dpstream code made inside an object; never resolved: the object that made it makes it again). A
``module:qualname`` is looked up only among the modules of the package (the allow-list is the package's own
files; a module is imported only if it is one of them) and must name what that module defines.
"""

from __future__ import annotations

import importlib
import types
from functools import cache
from pathlib import Path
from typing import Any

import dpstream
from dpstream.errors import DPStreamInputError

__all__ = ["CheckpointError", "package_modules", "reference", "resolve"]


class CheckpointError(DPStreamInputError):
    """A checkpoint cannot be written, or is refused at load (nothing was changed)."""

    def __init__(self, rule: str, value: object = None) -> None:
        super().__init__("checkpoint", rule, value)


@cache
def package_modules() -> frozenset[str]:
    """Every module name of the dpstream package, from its files (nothing is imported to build it)."""
    root = Path(dpstream.__file__).resolve().parent
    names = set()
    for path in root.rglob("*.py"):
        parts = path.relative_to(root).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        names.add(".".join(("dpstream", *parts)))
    return frozenset(names)


def _module(name: str) -> types.ModuleType:
    if name not in package_modules():
        raise CheckpointError("names only dpstream's own modules", name)
    return importlib.import_module(name)


def resolve(ref: Any) -> Any:
    """The object ``module:qualname`` of a dpstream module (no ``<locals>``: only names the module defines)."""
    if not isinstance(ref, str) or ref.count(":") != 1:
        raise CheckpointError("a reference is 'module:qualname'", ref)
    module_name, qualname = ref.split(":")
    obj: Any = _module(module_name)
    for part in qualname.split("."):
        if not part.isidentifier() or (part.startswith("__") and part.endswith("__")):
            raise CheckpointError("a reference names a module-level class or function", ref)
        obj = getattr(obj, part, None)
        if obj is None:
            raise CheckpointError("names nothing in this version of dpstream", ref)
    if getattr(obj, "__module__", None) != module_name:
        raise CheckpointError("names something the module does not define", ref)
    return obj


def reference(obj: Any) -> str | None:
    """``module:qualname`` of a dpstream module-level function or class that resolves back to ``obj`` (else None)."""
    module_name, qualname = getattr(obj, "__module__", ""), getattr(obj, "__qualname__", "")
    if module_name not in package_modules() or "<" in qualname:
        return None
    ref = f"{module_name}:{qualname}"
    try:
        return ref if resolve(ref) is obj else None
    except CheckpointError:
        return None
