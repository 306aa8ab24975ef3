"""Checkpoint and resume a streaming algorithm (docs/checkpoint.md).

``save(obj, path)`` writes the complete state of a streaming algorithm (any dpstream object with
``step``, and everything it holds: nested counters, trees, releases so far) to a versioned,
checksummed JSON file; ``load(path, noise=...)`` returns the algorithm ready to continue.

* **Data only.** The file holds JSON values, typed tags (``{"$tuple": [...]}``, ``{"$ndarray": ...}``
  with the raw little-endian bytes in base64, ...) and names: a class, enum or function is named by
  its module and qualified name and resolved only among the modules of the dpstream package (the
  allow-list is the package's own files; a module named in a file is imported only if it is one of
  them). A closure made by dpstream code (a counter factory, say) is saved as the name of its code
  plus the data in its cells and rebuilt from dpstream's own code object, never from the file. A
  function of yours (a factory lambda, a schedule) is saved by a name you choose
  (``save(..., functions={"mine": f})``) and given back at load (``load(..., functions={"mine": f})``).
  Nothing is unpickled and nothing from the file is executed.
* **Noise is not saved inside the object.** Every reference to the algorithm's noise source is
  replaced by a marker (scoped views keep their prefixes) and ``load(path, noise=...)`` re-attaches the
  source you pass. The source's own state travels in the file's ``noise`` section: the generator state
  of an :class:`~dpstream.insecure.InsecureSeededNoise`, the draws so far of a
  :class:`~dpstream.insecure.TapeRecorder`, the sites served by a :class:`~dpstream.insecure.TapeReplay` (which
  must hold the same tape); :class:`~dpstream.noise.SecureNoise` stores nothing. The source you pass
  must be of the saved kind (any source resumes a secure checkpoint; ``None`` means a fresh
  ``SecureNoise``), and its state is overwritten from the file, so a seeded or replayed run resumed from a
  checkpoint releases exactly what the uninterrupted run releases; under secure noise the released values
  are in the state and no released noise is ever drawn again.
* **Refusals.** A truncated, corrupted (checksum), foreign (format), other-version (format or dpstream
  version) or mismatched (``expect_class``, ``expect_params``, noise kind) file raises
  :class:`CheckpointError` before anything changes: the object graph is rebuilt into new objects and
  the noise source's state is restored last, after every check passed.
* **Atomic writes.** ``save`` writes a temporary file in the target's folder, fsyncs it and renames it
  over the target (then fsyncs the folder), so a crash leaves the old checkpoint or the new one.
"""

from __future__ import annotations

import base64
import enum
import hashlib
import importlib
import inspect
import json
import math
import os
import tempfile
import types
from collections import Counter, defaultdict, deque
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

import dpstream
from dpstream.errors import DPStreamInputError
from dpstream.insecure import InsecureSeededNoise, InsecureZeroNoise, TapeRecorder, TapeReplay
from dpstream.noise import BaseNoiseSource, NoiseSource, ScopedNoise, SecureNoise
from dpstream.tape import Tape, TapeError

__all__ = ["CHECKPOINT_FORMAT", "CHECKPOINT_VERSION", "CheckpointError", "dumps", "load", "loads", "save"]

CHECKPOINT_FORMAT = "dpstream-checkpoint"
CHECKPOINT_VERSION = 1
_KEYS = {"format", "version", "dpstream", "class", "params", "noise", "state", "sha256"}
_BUILTIN_TYPES: dict[str, type] = {t.__name__: t for t in (bool, int, float, complex, str, list, dict, set,
                                                            frozenset, tuple)}
_ARRAY_KINDS = "biufc"  # bool, signed, unsigned, float, complex: plain numbers only (never object arrays)


class CheckpointError(DPStreamInputError):
    """A checkpoint cannot be written or is refused at load (nothing was changed)."""

    def __init__(self, rule: str, value: object = None) -> None:
        super().__init__("checkpoint", rule, value)


# --- the allow-list: dpstream's own modules ------------------------------------------------------------------

@cache
def _package_modules() -> frozenset[str]:
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
    if name not in _package_modules():
        raise CheckpointError("names only dpstream's own modules", name)
    return importlib.import_module(name)


def _resolve(ref: Any) -> Any:
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


def _reference(obj: Any, what: str) -> str:
    """``module:qualname`` of a dpstream class or module-level function, checked to resolve back to ``obj``."""
    module_name, qualname = getattr(obj, "__module__", ""), getattr(obj, "__qualname__", "")
    ref = f"{module_name}:{qualname}"
    if module_name not in _package_modules() or "<" in qualname:
        raise CheckpointError(f"{what}: only dpstream's module-level classes and functions can be named", ref)
    if _resolve(ref) is not obj:
        raise CheckpointError(f"{what}: does not resolve to itself", ref)
    return ref


def _code_hash(code: types.CodeType) -> str:
    parts = [code.co_code, repr(code.co_names).encode(), repr(code.co_varnames).encode(),
             repr(code.co_freevars).encode()]
    return hashlib.sha256(b"\0".join(parts)).hexdigest()[:16]


def _codes(code: types.CodeType) -> Iterator[types.CodeType]:
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _codes(const)


@cache
def _module_codes(module_name: str) -> dict[tuple[str, int], types.CodeType]:
    """Every code object of a dpstream module (functions, methods, nested functions, lambdas), by (qualname, line)."""
    module = _module(module_name)
    roots: list[types.CodeType] = []
    seen: set[int] = set()

    def visit(namespace: Mapping[str, Any]) -> None:
        for value in namespace.values():
            if id(value) in seen:
                continue
            seen.add(id(value))
            func = getattr(value, "__func__", None)
            # __wrapped__: the function under a decorator (dpstream.convention wraps __init__ and some functions)
            for candidate in (value, func, getattr(value, "fget", None), getattr(value, "func", None),
                              getattr(value, "__wrapped__", None), getattr(func, "__wrapped__", None)):
                code = getattr(candidate, "__code__", None)
                if isinstance(code, types.CodeType) and getattr(candidate, "__module__", None) == module_name:
                    roots.append(code)
            if isinstance(value, type) and value.__module__ == module_name:
                visit(vars(value))

    visit(vars(module))
    return {(c.co_qualname, c.co_firstlineno): c for root in roots for c in _codes(root)}


# --- encoding -----------------------------------------------------------------------------------------------

_ATOMS = (str, int, float, bool, complex, type(None))


def _is_noise(x: Any) -> bool:
    return isinstance(x, BaseNoiseSource | ScopedNoise) or (
        hasattr(x, "add_laplace") and not isinstance(x, type) and isinstance(x, NoiseSource))


@dataclass
class _Encoder:
    functions: dict[int, str]
    root: Any = None
    counts: dict[int, int] = field(default_factory=dict)
    ids: dict[int, int] = field(default_factory=dict)
    alive: list[Any] = field(default_factory=list)

    @staticmethod
    def _shared(x: Any) -> bool:
        """Objects with an identity worth keeping (mutable ones, objects, functions, scoped views): a second
        reference to one is saved as a reference, so aliasing and cycles survive the round trip."""
        return not (isinstance(x, (*_ATOMS, tuple, frozenset, enum.Enum, np.generic, type))
                    or (_is_noise(x) and not isinstance(x, ScopedNoise)))

    def count(self, x: Any) -> None:
        """First pass: how often each shareable object is reached (cycles stop at the second visit)."""
        stack = [x]
        while stack:
            y = stack.pop()
            if isinstance(y, _ATOMS):
                continue
            if self._shared(y):
                self.counts[id(y)] = self.counts.get(id(y), 0) + 1
                self.alive.append(y)
                if self.counts[id(y)] > 1:
                    continue
            stack.extend(self._children(y))

    def _children(self, x: Any) -> list[Any]:
        if isinstance(x, bytes | np.ndarray | np.generic | type | enum.Enum):
            return []
        if isinstance(x, ScopedNoise):
            return [x.inner]
        if _is_noise(x):
            return []
        if isinstance(x, dict):
            return [*x.keys(), *x.values()]
        if isinstance(x, list | tuple | set | frozenset | deque):
            return list(x)
        if isinstance(x, types.MethodType):
            return [x.__self__]
        if isinstance(x, types.FunctionType):
            if id(x) in self.functions:
                return []
            cells = [c.cell_contents for c in (x.__closure__ or ()) if _cell_full(c)]
            return [*cells, *(x.__defaults__ or ()), *(x.__kwdefaults__ or {}).values()]
        if hasattr(x, "__dict__") and not isinstance(x, types.ModuleType | enum.Enum):
            return [*vars(x).values(), *(getattr(x, s) for s in _slots(type(x)) if hasattr(x, s))]
        return []

    def encode(self, x: Any, path: str) -> Any:
        kind = type(x)
        if x is None or kind is bool or kind is str or kind is int:
            return x
        if kind is float:
            return x if math.isfinite(x) else {"$float": repr(x)}
        if id(x) in self.ids:
            return {"$ref": self.ids[id(x)]}
        if self._shared(x) and self.counts.get(id(x), 0) > 1:
            self.ids[id(x)] = len(self.ids)  # before the children: a cycle back to x becomes a reference
            return {"$id": self.ids[id(x)], **self._node(x, path)}
        return self._node(x, path)

    def _node(self, x: Any, path: str) -> dict[str, Any]:
        if isinstance(x, ScopedNoise):
            return {"$scoped": x.prefix, "inner": self.encode(x.inner, path + ".inner")}
        if _is_noise(x):
            if self.root is None:
                self.root = x
            elif self.root is not x:
                raise CheckpointError(f"{path}: a second noise source (one source per checkpoint)", type(x).__name__)
            return {"$noise": "root"}
        if isinstance(x, enum.Enum):
            return {"$enum": _reference(type(x), path), "name": x.name}
        if isinstance(x, str | int | float):
            raise CheckpointError(f"{path}: a {type(x).__qualname__} (subclass of a number or str) is not data", x)
        if isinstance(x, type):
            if x.__module__ == "builtins" and _BUILTIN_TYPES.get(x.__name__) is x:
                return {"$builtin": x.__name__}
            return {"$type": _reference(x, path)}
        if isinstance(x, np.ndarray):
            return {"$ndarray": _array_bytes(x, path), "dtype": x.dtype.newbyteorder("<").str, "shape": list(x.shape),
                    "writeable": bool(x.flags.writeable)}
        if isinstance(x, np.generic):
            arr = np.asarray(x)
            return {"$npscalar": _array_bytes(arr, path), "dtype": arr.dtype.newbyteorder("<").str}
        if isinstance(x, complex):
            return {"$complex": [self.encode(x.real, path), self.encode(x.imag, path)]}
        if type(x) is tuple:
            return {"$tuple": [self.encode(v, f"{path}[{i}]") for i, v in enumerate(x)]}
        if type(x) is list:
            return {"$list": [self.encode(v, f"{path}[{i}]") for i, v in enumerate(x)]}
        if type(x) in (set, frozenset):
            return {f"${type(x).__name__}": [self.encode(v, f"{path}{{}}") for v in x]}
        if type(x) is deque:
            return {"$deque": [self.encode(v, f"{path}[{i}]") for i, v in enumerate(x)], "maxlen": x.maxlen}
        if type(x) in (dict, defaultdict, Counter):
            items = [[self.encode(k, f"{path}{{key}}"), self.encode(v, f"{path}[{k!r}]")] for k, v in x.items()]
            if type(x) is dict:
                return {"$dict": items}
            if type(x) is Counter:
                return {"$counter": items}
            factory = x.default_factory
            return {"$defaultdict": items, "factory": None if factory is None else self.encode(factory, path)}
        if isinstance(x, types.MethodType):
            owner = x.__self__
            if _method_function(type(owner), x.__name__) is not x.__func__:
                raise CheckpointError(f"{path}: a bound method that is not its class's method", x)
            return {"$method": x.__name__, "self": self.encode(owner, path + ".__self__")}
        if isinstance(x, types.FunctionType):
            return self._function(x, path)
        module = getattr(type(x), "__module__", "")
        if module in _package_modules() and hasattr(x, "__dict__") and not isinstance(x, types.ModuleType):
            if isinstance(x, tuple | list | dict | set):
                raise CheckpointError(f"{path}: a dpstream subclass of a builtin container is not supported", x)
            state = {k: self.encode(v, f"{path}.{k}") for k, v in vars(x).items()}
            slots = {s: self.encode(getattr(x, s), f"{path}.{s}") for s in _slots(type(x)) if hasattr(x, s)}
            node: dict[str, Any] = {"$obj": _reference(type(x), path), "state": state}
            if slots:
                node["slots"] = slots
            return node
        raise CheckpointError(f"{path}: a {type(x).__module__}.{type(x).__qualname__} is not data dpstream can save", x)

    def _function(self, f: types.FunctionType, path: str) -> dict[str, Any]:
        if id(f) in self.functions:
            return {"$named": self.functions[id(f)]}
        module = f.__module__
        if module not in _package_modules():
            raise CheckpointError(
                f"{path}: the function {module}.{f.__qualname__} is not dpstream's; name it: "
                "save(..., functions={'name': f}) and load(..., functions={'name': f})", f)
        if "<" not in f.__qualname__ and f.__closure__ is None:
            return {"$func": _reference(f, path)}
        code = f.__code__
        if _module_codes(module).get((code.co_qualname, code.co_firstlineno)) is not code:
            raise CheckpointError(f"{path}: the code of {f.__qualname__} is not found in {module}", f)
        cells = [self.encode(c.cell_contents, f"{path}.<{name}>") if _cell_full(c) else {"$empty": True}
                 for name, c in zip(code.co_freevars, f.__closure__ or (), strict=True)]
        return {"$closure": f"{module}:{code.co_qualname}", "line": code.co_firstlineno, "code": _code_hash(code),
                "cells": cells, "defaults": self.encode(f.__defaults__, path + ".__defaults__"),
                "kwdefaults": self.encode(f.__kwdefaults__, path + ".__kwdefaults__")}


def _cell_full(cell: types.CellType) -> bool:
    try:
        cell.cell_contents  # noqa: B018 - probing an empty cell raises
    except ValueError:
        return False
    return True


def _slots(cls: type) -> list[str]:
    names: list[str] = []
    for klass in cls.__mro__:
        slots = vars(klass).get("__slots__", ())
        names.extend([slots] if isinstance(slots, str) else [s for s in slots if s not in ("__dict__", "__weakref__")])
    return names


def _method_function(cls: type, name: str) -> Any:
    for klass in cls.__mro__:
        if name in vars(klass):
            return vars(klass)[name]
    return None


def _array_bytes(arr: np.ndarray[Any, Any], path: str) -> str:
    if arr.dtype.kind not in _ARRAY_KINDS or arr.dtype.fields is not None:
        raise CheckpointError(f"{path}: only arrays of plain numbers are data", str(arr.dtype))
    little = np.ascontiguousarray(arr, dtype=arr.dtype.newbyteorder("<"))
    return base64.b64encode(little.tobytes()).decode("ascii")


# --- decoding -----------------------------------------------------------------------------------------------

@dataclass
class _Decoder:
    noise: Any
    functions: Mapping[str, Callable[..., Any]]
    ids: dict[int, Any] = field(default_factory=dict)

    def decode(self, node: Any, path: str = "state") -> Any:
        if node is None or isinstance(node, bool | str):
            return node
        if isinstance(node, int | float):
            return node
        if isinstance(node, list):
            raise CheckpointError(f"{path}: an untagged list", None)
        if not isinstance(node, dict) or not node:
            raise CheckpointError(f"{path}: not a checkpoint value", node)
        if "$ref" in node:
            ref = node["$ref"]
            if set(node) != {"$ref"} or not isinstance(ref, int) or ref not in self.ids:
                raise CheckpointError(f"{path}: a reference to nothing", node)
            return self.ids[ref]
        tag = next((k for k in node if k.startswith("$") and k != "$id"), None)
        handler = _DECODERS.get(tag or "")
        if handler is None:
            raise CheckpointError(f"{path}: unknown value tag", tag)
        try:
            return handler(self, node, path)
        except CheckpointError:
            raise
        except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
            raise CheckpointError(f"{path}: malformed {tag} ({type(exc).__name__}: {exc})", None) from exc

    def _register(self, node: Mapping[str, Any], value: Any) -> Any:
        if "$id" in node:
            key = node["$id"]
            if not isinstance(key, int) or key in self.ids:
                raise CheckpointError("a duplicate or invalid object id", key)
            self.ids[key] = value
        return value

    def items(self, node: Any, path: str) -> list[Any]:
        if not isinstance(node, list):
            raise CheckpointError(f"{path}: expected a list", type(node).__name__)
        return [self.decode(v, f"{path}[{i}]") for i, v in enumerate(node)]


def _dec_float(d: _Decoder, n: dict[str, Any], path: str) -> float:
    if n["$float"] not in ("inf", "-inf", "nan"):
        raise CheckpointError(f"{path}: a non-finite float is inf, -inf or nan", n["$float"])
    return float(n["$float"])


def _dec_tuple(d: _Decoder, n: dict[str, Any], path: str) -> tuple[Any, ...]:
    return tuple(d.items(n["$tuple"], path))


def _dec_list(d: _Decoder, n: dict[str, Any], path: str) -> list[Any]:
    out: list[Any] = d._register(n, [])
    out.extend(d.items(n["$list"], path))
    return out


def _dec_set(d: _Decoder, n: dict[str, Any], path: str) -> set[Any]:
    out: set[Any] = d._register(n, set())
    out.update(d.items(n["$set"], path))
    return out


def _dec_frozenset(d: _Decoder, n: dict[str, Any], path: str) -> frozenset[Any]:
    return frozenset(d.items(n["$frozenset"], path))


def _dec_deque(d: _Decoder, n: dict[str, Any], path: str) -> deque[Any]:
    maxlen = n["maxlen"]
    if maxlen is not None and (not isinstance(maxlen, int) or maxlen < 0):
        raise CheckpointError(f"{path}: invalid deque maxlen", maxlen)
    out: deque[Any] = d._register(n, deque(maxlen=maxlen))
    out.extend(d.items(n["$deque"], path))
    return out


def _pairs(d: _Decoder, raw: Any, path: str) -> Iterator[tuple[Any, Any]]:
    if not isinstance(raw, list):
        raise CheckpointError(f"{path}: dict items must be a list", None)
    for i, pair in enumerate(raw):
        if not isinstance(pair, list) or len(pair) != 2:
            raise CheckpointError(f"{path}: dict item {i} must be [key, value]", pair)
        yield d.decode(pair[0], f"{path}{{key}}"), d.decode(pair[1], f"{path}[{i}]")


def _dec_dict(d: _Decoder, n: dict[str, Any], path: str) -> dict[Any, Any]:
    out: dict[Any, Any] = d._register(n, {})
    out.update(_pairs(d, n["$dict"], path))
    return out


def _dec_counter(d: _Decoder, n: dict[str, Any], path: str) -> Counter[Any]:
    out: Counter[Any] = d._register(n, Counter())
    dict.update(out, _pairs(d, n["$counter"], path))  # set the counts (Counter.update would add them)
    return out


def _dec_defaultdict(d: _Decoder, n: dict[str, Any], path: str) -> defaultdict[Any, Any]:
    factory = None if n["factory"] is None else d.decode(n["factory"], path + ".factory")
    if factory is not None and not callable(factory):
        raise CheckpointError(f"{path}: a defaultdict factory must be callable", factory)
    out: defaultdict[Any, Any] = d._register(n, defaultdict(factory))
    out.update(_pairs(d, n["$defaultdict"], path))
    return out


def _array(raw: Any, dtype: Any, shape: list[int], path: str) -> np.ndarray[Any, Any]:
    dt = np.dtype(dtype)
    if dt.kind not in _ARRAY_KINDS or dt.fields is not None or not isinstance(raw, str):
        raise CheckpointError(f"{path}: only arrays of plain numbers are data", dtype)
    if not isinstance(shape, list) or not all(isinstance(s, int) and s >= 0 for s in shape):
        raise CheckpointError(f"{path}: invalid array shape", shape)
    data = base64.b64decode(raw.encode("ascii"), validate=True)
    if len(data) != math.prod(shape) * dt.itemsize:
        raise CheckpointError(f"{path}: array data does not match its shape and dtype", (dtype, shape))
    return np.frombuffer(data, dtype=dt).reshape(shape).astype(dt.newbyteorder("="))


def _dec_ndarray(d: _Decoder, n: dict[str, Any], path: str) -> np.ndarray[Any, Any]:
    arr = _array(n["$ndarray"], n["dtype"], n["shape"], path)
    arr.setflags(write=bool(n["writeable"]))
    return d._register(n, arr)  # type: ignore[no-any-return]


def _dec_npscalar(d: _Decoder, n: dict[str, Any], path: str) -> Any:
    return _array(n["$npscalar"], n["dtype"], [], path)[()]


def _dec_complex(d: _Decoder, n: dict[str, Any], path: str) -> complex:
    real, imag = (d.decode(v, path) for v in n["$complex"])
    return complex(real, imag)


def _dec_enum(d: _Decoder, n: dict[str, Any], path: str) -> enum.Enum:
    cls = _resolve(n["$enum"])
    if not (isinstance(cls, type) and issubclass(cls, enum.Enum)) or n["name"] not in cls.__members__:
        raise CheckpointError(f"{path}: not a member of a dpstream enum", n)
    return cls.__members__[n["name"]]


def _dec_builtin(d: _Decoder, n: dict[str, Any], path: str) -> type:
    if n["$builtin"] not in _BUILTIN_TYPES:
        raise CheckpointError(f"{path}: not an allowed builtin type", n["$builtin"])
    return _BUILTIN_TYPES[n["$builtin"]]


def _dec_type(d: _Decoder, n: dict[str, Any], path: str) -> type:
    cls = _resolve(n["$type"])
    if not isinstance(cls, type):
        raise CheckpointError(f"{path}: not a class", n["$type"])
    return cls


def _dec_obj(d: _Decoder, n: dict[str, Any], path: str) -> Any:
    cls = _resolve(n["$obj"])
    if not isinstance(cls, type) or issubclass(cls, enum.Enum | BaseNoiseSource | ScopedNoise):
        raise CheckpointError(f"{path}: not a dpstream data class", n["$obj"])
    obj = d._register(n, object.__new__(cls))
    state = n["state"]
    if not isinstance(state, dict) or not all(isinstance(k, str) for k in state):
        raise CheckpointError(f"{path}: an object's state maps attribute names to values", None)
    if state:
        vars(obj).update({k: d.decode(v, f"{path}.{k}") for k, v in state.items()})
    slots = n.get("slots", {})
    if not isinstance(slots, dict) or not set(slots) <= set(_slots(cls)):
        raise CheckpointError(f"{path}: unknown slots", slots)
    for k, v in slots.items():
        object.__setattr__(obj, k, d.decode(v, f"{path}.{k}"))
    return obj


def _dec_method(d: _Decoder, n: dict[str, Any], path: str) -> Any:
    owner = d.decode(n["self"], path + ".__self__")
    name = n["$method"]
    if not isinstance(name, str) or not isinstance(_method_function(type(owner), name), types.FunctionType):
        raise CheckpointError(f"{path}: not a method of {type(owner).__name__}", name)
    return d._register(n, getattr(owner, name))


def _dec_func(d: _Decoder, n: dict[str, Any], path: str) -> Any:
    f = _resolve(n["$func"])
    if not isinstance(f, types.FunctionType):
        raise CheckpointError(f"{path}: not a function", n["$func"])
    return d._register(n, f)


def _dec_named(d: _Decoder, n: dict[str, Any], path: str) -> Any:
    name = n["$named"]
    if name not in d.functions:
        raise CheckpointError(f"{path}: the checkpoint needs your function {name!r}: load(..., functions={{...}})",
                              name)
    return d._register(n, d.functions[name])


def _dec_closure(d: _Decoder, n: dict[str, Any], path: str) -> types.FunctionType:
    module_name, qualname = str(n["$closure"]).split(":")
    code = _module_codes(_module(module_name).__name__).get((qualname, n["line"]))
    if code is None or _code_hash(code) != n["code"]:
        raise CheckpointError(f"{path}: the function {qualname} is not (or no longer) this version's code",
                              n["$closure"])
    raw_cells = n["cells"]
    if not isinstance(raw_cells, list) or len(raw_cells) != len(code.co_freevars):
        raise CheckpointError(f"{path}: the closure's cells do not match its code", qualname)
    cells = [types.CellType() for _ in raw_cells]
    defaults = d.decode(n["defaults"], path + ".__defaults__")
    if defaults is not None and not isinstance(defaults, tuple):
        raise CheckpointError(f"{path}: defaults must be a tuple", defaults)
    f = types.FunctionType(code, _module(module_name).__dict__, code.co_name, defaults, tuple(cells))
    f.__qualname__ = qualname
    d._register(n, f)
    for cell, raw in zip(cells, raw_cells, strict=True):
        if raw != {"$empty": True}:
            cell.cell_contents = d.decode(raw, f"{path}.<cell>")
    kwdefaults = d.decode(n["kwdefaults"], path + ".__kwdefaults__")
    if kwdefaults is not None and not isinstance(kwdefaults, dict):
        raise CheckpointError(f"{path}: kwdefaults must be a dict", kwdefaults)
    f.__kwdefaults__ = kwdefaults
    return f


def _dec_noise(d: _Decoder, n: dict[str, Any], path: str) -> Any:
    if n != {"$noise": "root"}:
        raise CheckpointError(f"{path}: malformed noise marker", n)
    return d.noise


def _dec_scoped(d: _Decoder, n: dict[str, Any], path: str) -> ScopedNoise:
    view = ScopedNoise.__new__(ScopedNoise)
    d._register(n, view)
    inner = d.decode(n["inner"], path + ".inner")
    ScopedNoise.__init__(view, inner, n["$scoped"])
    return view


_DECODERS: dict[str, Callable[[_Decoder, dict[str, Any], str], Any]] = {
    "$float": _dec_float, "$tuple": _dec_tuple, "$list": _dec_list, "$set": _dec_set, "$frozenset": _dec_frozenset,
    "$deque": _dec_deque, "$dict": _dec_dict, "$counter": _dec_counter, "$defaultdict": _dec_defaultdict,
    "$ndarray": _dec_ndarray, "$npscalar": _dec_npscalar, "$complex": _dec_complex, "$enum": _dec_enum,
    "$builtin": _dec_builtin, "$type": _dec_type, "$obj": _dec_obj, "$method": _dec_method, "$func": _dec_func,
    "$named": _dec_named, "$closure": _dec_closure, "$noise": _dec_noise, "$scoped": _dec_scoped,
}


# --- noise state -------------------------------------------------------------------------------------------

def _noise_state(source: Any) -> dict[str, Any]:
    if source is None:
        return {"kind": "none"}
    if type(source) is SecureNoise:
        return {"kind": "secure"}
    if type(source) is InsecureSeededNoise:
        return {"kind": "seeded", "generator": source.generator_state()}
    if type(source) is InsecureZeroNoise:
        return {"kind": "zero", "post": _noise_state(source.post_processing)}
    if type(source) is TapeRecorder:
        return {"kind": "tape-recorder", "draws": [d.to_json() for d in source.tape.draws],
                "inner": _noise_state(source.inner)}
    if type(source) is TapeReplay:
        return {"kind": "tape-replay", "tape_sha256": hashlib.sha256(source.tape.dumps().encode()).hexdigest(),
                "used": sorted(source.used_sites)}
    return {"kind": "other", "class": f"{type(source).__module__}.{type(source).__qualname__}"}


_SOURCE_KINDS: dict[str, type] = {"seeded": InsecureSeededNoise, "zero": InsecureZeroNoise,
                                  "tape-recorder": TapeRecorder, "tape-replay": TapeReplay}


def _restore_plan(state: Any, source: Any) -> list[Callable[[], None]]:
    """Check that ``source`` can take the saved noise state; return the (infallible) steps that restore it."""
    if not isinstance(state, dict) or not isinstance(state.get("kind"), str):
        raise CheckpointError("malformed noise section", state)
    kind = state["kind"]
    if kind in ("none", "secure", "other"):
        return []
    if kind not in _SOURCE_KINDS:
        raise CheckpointError("unknown noise kind", kind)
    if type(source) is not _SOURCE_KINDS[kind]:
        raise CheckpointError(f"saved with a {_SOURCE_KINDS[kind].__name__}: pass one to load(noise=...) "
                              "(its state is restored from the checkpoint)", type(source).__name__)
    if isinstance(source, InsecureSeededNoise):
        seeded = source
        trial = InsecureSeededNoise(0)
        try:
            trial.restore_generator_state(state["generator"])
        except (DPStreamInputError, KeyError) as exc:
            raise CheckpointError(f"invalid generator state: {exc}", None) from exc
        generator = trial.generator_state()
        return [lambda: seeded.restore_generator_state(generator)]
    if isinstance(source, InsecureZeroNoise):
        return _restore_plan(state.get("post"), source.post_processing)
    if isinstance(source, TapeRecorder):
        recorder = source
        try:
            draws = Tape.from_json({"format": "dpstream-noise-tape", "version": 1, "draws": state["draws"]}).draws
        except (TapeError, KeyError) as exc:
            raise CheckpointError(f"invalid recorded draws: {exc}", None) from exc
        inner = _restore_plan(state.get("inner"), recorder.inner)
        return [*inner, lambda: recorder.resume(draws)]
    if not isinstance(source, TapeReplay):  # pragma: no cover - the kinds above are exhaustive
        raise AssertionError(kind)
    replay = source
    digest = hashlib.sha256(replay.tape.dumps().encode()).hexdigest()
    if state.get("tape_sha256") != digest:
        raise CheckpointError("the TapeReplay passed holds another tape than the one being replayed", digest)
    used = state.get("used")
    if not isinstance(used, list) or not set(used) <= {d.site for d in replay.tape.draws}:
        raise CheckpointError("invalid served sites", used)
    return [lambda: replay.resume(used)]


# --- the file ----------------------------------------------------------------------------------------------

def _canonical(doc: Mapping[str, Any]) -> str:
    """The one serialisation of a document. Keys keep their order (json preserves it both ways): the state is
    decoded in the order it was encoded, so a reference always follows the object it refers to."""
    return json.dumps(doc, separators=(",", ":"), allow_nan=False, ensure_ascii=True)


def _params(obj: Any, encoder: _Encoder) -> dict[str, Any]:
    """The constructor parameters the object keeps under their own names, when they are plain values."""
    out: dict[str, Any] = {}
    try:
        names = list(inspect.signature(type(obj).__init__).parameters)[1:]
    except (TypeError, ValueError):  # pragma: no cover - every dpstream class has an inspectable __init__
        return out
    for name in names:
        if name == "noise" or name not in vars(obj):
            continue
        value = vars(obj)[name]
        if _plain(value):
            out[name] = encoder.encode(value, f"params.{name}")
    return out


def _plain(value: Any) -> bool:
    if value is None or isinstance(value, bool | int | float | str | enum.Enum):
        return not isinstance(value, enum.Enum) or type(value).__module__ in _package_modules()
    return isinstance(value, tuple | list) and all(_plain(v) for v in value)


def dumps(obj: Any, *, functions: Mapping[str, Callable[..., Any]] | None = None) -> str:
    """The checkpoint document of ``obj`` (what :func:`save` writes)."""
    named = {id(f): name for name, f in (functions or {}).items()}
    if len(named) != len(functions or {}):
        raise CheckpointError("give each function one name", sorted(functions or {}))
    encoder = _Encoder(named)
    encoder.count(obj)
    try:
        state = encoder.encode(obj, "state")
    except RecursionError as exc:
        raise CheckpointError("the object graph is nested too deeply to save", type(obj).__name__) from exc
    if not (isinstance(state, dict) and "$obj" in state):
        raise CheckpointError("only a dpstream algorithm object can be checkpointed", type(obj).__name__)
    doc = {"format": CHECKPOINT_FORMAT, "version": CHECKPOINT_VERSION, "dpstream": dpstream.__version__,
           "class": state["$obj"], "params": _params(obj, _Encoder(named)), "noise": _noise_state(encoder.root),
           "state": state}
    doc["sha256"] = hashlib.sha256(_canonical(doc).encode("utf-8")).hexdigest()
    return _canonical(doc)


def save(obj: Any, path: str | Path, *, functions: Mapping[str, Callable[..., Any]] | None = None) -> None:
    """Write ``obj``'s checkpoint to ``path`` atomically (temporary file in the same folder, fsync, rename)."""
    text = dumps(obj, functions=functions)
    target = Path(path)
    folder = target.resolve().parent
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text + "\n")
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    try:
        dir_fd = os.open(folder, os.O_RDONLY)
    except OSError:  # pragma: no cover - folders cannot be opened on some platforms
        return
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def loads(text: str, noise: NoiseSource | None = None, *, expect_class: type | None = None,
          expect_params: Mapping[str, Any] | None = None,
          functions: Mapping[str, Callable[..., Any]] | None = None) -> Any:
    """The algorithm saved in ``text`` (a :func:`dumps` document), re-attached to ``noise``; see :func:`load`."""
    try:
        doc = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        raise CheckpointError(f"not a complete JSON document (truncated?): {exc}", None) from exc
    if not isinstance(doc, dict) or doc.get("format") != CHECKPOINT_FORMAT:
        raise CheckpointError(f"not a {CHECKPOINT_FORMAT} file", doc.get("format") if isinstance(doc, dict) else None)
    if doc.get("version") != CHECKPOINT_VERSION:
        raise CheckpointError(f"checkpoint format version {doc.get('version')!r}; this reader reads "
                              f"{CHECKPOINT_VERSION}", doc.get("version"))
    if set(doc) != _KEYS:
        raise CheckpointError(f"a checkpoint has exactly the keys {sorted(_KEYS)}", sorted(doc))
    digest = doc.pop("sha256")
    if hashlib.sha256(_canonical(doc).encode("utf-8")).hexdigest() != digest:
        raise CheckpointError("checksum mismatch: the file is corrupted", digest)
    if doc["dpstream"] != dpstream.__version__:
        raise CheckpointError(f"written by dpstream {doc['dpstream']}; this is dpstream {dpstream.__version__} "
                              "(the state layout is the implementation's)", doc["dpstream"])
    cls = _resolve(doc["class"])
    if expect_class is not None and cls is not expect_class:
        raise CheckpointError(f"holds a {cls.__qualname__}, not a {expect_class.__qualname__}", doc["class"])
    if expect_params:
        params = _Decoder(None, {}).decode({"$dict": [[k, v] for k, v in doc["params"].items()]}, "params")
        for name, want in expect_params.items():
            if name not in params:
                raise CheckpointError(f"parameter {name!r} is not recorded (recorded: {sorted(params)})", name)
            if params[name] != want:
                raise CheckpointError(f"parameter {name!r} is {params[name]!r}, expected {want!r}", name)
    kind = doc["noise"].get("kind") if isinstance(doc["noise"], dict) else None
    source: Any = SecureNoise() if noise is None and kind in ("secure", "none") else noise
    if kind == "other" and source is None:
        raise CheckpointError("saved with a custom noise source: pass one to load(noise=...)", doc["noise"])
    plan = _restore_plan(doc["noise"], source)
    try:
        obj = _Decoder(source, dict(functions or {})).decode(doc["state"])
    except RecursionError as exc:
        raise CheckpointError("the state is nested too deeply to load", None) from exc
    if type(obj) is not cls:
        raise CheckpointError("the state is not of the class in the header", type(obj).__name__)
    for step in plan:  # only now: every check passed, so the source changes all at once or not at all
        step()
    return obj


def load(path: str | Path, noise: NoiseSource | None = None, *, expect_class: type | None = None,
         expect_params: Mapping[str, Any] | None = None,
         functions: Mapping[str, Callable[..., Any]] | None = None) -> Any:
    """The algorithm saved at ``path``, ready to continue with ``noise`` (its saved state restored into it).

    ``noise=None`` gives a fresh :class:`~dpstream.noise.SecureNoise` (allowed for secure checkpoints only);
    ``expect_class`` / ``expect_params`` refuse a checkpoint of another algorithm or other parameters;
    ``functions`` gives back the functions named at :func:`save`. Raises :class:`CheckpointError`, and
    changes nothing, when the file is truncated, corrupted, of another format or version, or mismatched.
    """
    try:
        text = Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise CheckpointError(f"not a text file: {exc}", str(path)) from exc
    return loads(text, noise, expect_class=expect_class, expect_params=expect_params, functions=functions)
