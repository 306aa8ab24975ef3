"""Imports on first use: a module (scipy.stats costs most of a second to import; a ``dpstream serve`` that never
runs a statistical test should not pay it at start-up, nor every test that starts one), and a package's exported
names (``dpstream``, ``dpstream.audit``: importing the package loads none of the modules its names live in)."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import Any

__all__ = ["LazyModule", "lazy_exports"]


class LazyModule:
    """``LazyModule("scipy.stats")`` behaves like the module once an attribute is read (the import happens then)."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._module: ModuleType | None = None

    def __getattr__(self, attribute: str) -> Any:
        if attribute.startswith("__"):
            raise AttributeError(attribute)
        if self._module is None:
            self._module = importlib.import_module(self._name)
        return getattr(self._module, attribute)


def lazy_exports(namespace: dict[str, Any], exports: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` for a package whose ``namespace`` (its ``globals()``) exports the names of
    ``exports`` (name -> the module it lives in): the module is imported when the name is first read, and the value
    kept in the namespace (later reads skip ``__getattr__``)."""
    def exported(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {namespace['__name__']!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    return exported
