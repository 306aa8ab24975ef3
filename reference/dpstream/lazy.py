"""A module imported on first use (scipy.stats costs most of a second to import; a ``dpstream serve`` that never
runs a statistical test should not pay it at start-up, nor every test that starts one)."""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

__all__ = ["LazyModule"]


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
