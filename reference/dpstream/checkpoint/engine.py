"""Writing and reading documented states: the registry of :class:`StateSpec`, :class:`Writer`, :class:`Reader`,
state versions and migrations, and the layout of a state (what the fixtures test compares).

A state document is ``{"algorithm", "state_version", "params", "derived", "variables"}``; a component algorithm
(a counter inside PHDStream, B_k inside the hybrid counter, ...) appears as a state document of its own inside
its owner's variables, with its own state version.
"""

from __future__ import annotations

import copy
import importlib
import json
import types
from collections.abc import Callable, Iterable, Mapping
from functools import cache
from typing import Any

from dpstream.checkpoint.kinds import fail
from dpstream.checkpoint.names import CheckpointError, package_modules, reference, resolve
from dpstream.checkpoint.spec import Field, InvariantError, StateSpec
from dpstream.errors import DPStreamInputError
from dpstream.noise import ScopedNoise

__all__ = ["STATE_KEYS", "Reader", "Writer", "by_name", "layout", "migrate_all", "migrated", "spec_for", "specs"]

STATE_KEYS = ("algorithm", "state_version", "params", "derived", "variables")
_SECTIONS = ("params", "derived", "variables")


@cache
def specs() -> tuple[StateSpec, ...]:
    """Every documented state (``dpstream.checkpoint.states``), loaded on first use."""
    found: tuple[StateSpec, ...] = importlib.import_module("dpstream.checkpoint.states").SPECS
    names = [s.algorithm for s in found]
    classes = [s.cls for s in found]
    if len(set(names)) != len(names) or len(set(classes)) != len(classes):
        raise RuntimeError("two documented states share a name or a class")
    return found


def by_name(name: str) -> StateSpec | None:
    """The documented state named ``name`` (None: unknown to this dpstream)."""
    return next((s for s in specs() if s.algorithm == name), None)


def spec_for(obj: Any, path: str = "state") -> StateSpec:
    """The documented state of ``obj``'s exact class (a subclass may hold more: it needs its own)."""
    spec = next((s for s in specs() if s.cls is type(obj)), None)
    if spec is None:
        raise fail(path, f"a {type(obj).__module__}.{type(obj).__qualname__} has no documented checkpoint state "
                         "(docs/checkpoint-states.md lists the algorithms that have one)", type(obj).__name__)
    return spec


def innermost(source: Any) -> Any:
    """The source a (possibly scoped) noise source draws from."""
    while isinstance(source, ScopedNoise):
        source = source.inner
    return source


def _made_inside(node: Any) -> Any:
    """``node`` with every ``{"inner": name}`` function made anonymous (the owner makes it again: its name is the
    implementation's and may change between versions)."""
    if isinstance(node, dict):
        if list(node) == ["inner"]:
            return {"inner": None}
        return {k: _made_inside(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_made_inside(v) for v in node]
    return node


def same(a: Any, b: Any) -> bool:
    """Equal as JSON text (1 and 1.0 differ, so do key orders), functions made inside an owner equal one another."""
    return json.dumps(_made_inside(a)) == json.dumps(_made_inside(b))


# --- writing -----------------------------------------------------------------------------------------------------

class Writer:
    """Encodes states; names functions (``functions``: yours, by name) and refuses a second noise source."""

    def __init__(self, functions: Mapping[str, Callable[..., Any]] | None = None, source: Any = None) -> None:
        given = dict(functions or {})
        self.named = {id(f): name for name, f in given.items()}
        if len(self.named) != len(given):
            raise CheckpointError("give each function one name", sorted(given))
        self._keep = list(given.values())
        self.root = None if source is None else innermost(source)

    def function(self, f: Any, path: str) -> Any:
        if id(f) in self.named:
            return {"named": self.named[id(f)]}
        module, qualname = getattr(f, "__module__", ""), getattr(f, "__qualname__", type(f).__qualname__)
        if isinstance(f, types.FunctionType) and module in package_modules():
            ref = reference(f)
            return {"dpstream": ref} if ref is not None else {"inner": f"{module}:{qualname}"}
        raise fail(path, f"the function {module}.{qualname} is not dpstream's; name it: save(..., functions="
                         "{'name': f}) and load(..., functions={'name': f})", f)

    def state(self, obj: Any, path: str = "state") -> dict[str, Any]:
        spec = spec_for(obj, path)
        source = spec.source(obj)
        if source is not None and self.root is not None and innermost(source) is not self.root:
            raise fail(path, "draws from a second noise source (a checkpoint re-attaches one source, the one passed "
                             "to load)", type(innermost(source)).__name__)
        return {"algorithm": spec.algorithm, "state_version": spec.version,
                **{section: self.fields(getattr(spec, section), obj, f"{path}.{section}") for section in _SECTIONS}}

    def fields(self, fields: Iterable[Field], obj: Any, path: str) -> dict[str, Any]:
        return {f.name: f.kind.encode(f.read(obj), self, f"{path}.{f.name}") for f in fields}


# --- reading -----------------------------------------------------------------------------------------------------

class Reader:
    """Decodes states into algorithms attached to ``noise`` (``functions``: yours, by the names given at save)."""

    def __init__(self, noise: Any, functions: Mapping[str, Callable[..., Any]] | None = None) -> None:
        self.noise = noise
        self.functions = dict(functions or {})
        self.compare = Writer(self.functions)
        self.owner: Any = None
        """The algorithm whose variable is being read (components are made by it)."""
        self.current: Any = None
        """The value that variable has in the rebuilt algorithm (a component its constructor made)."""

    def function(self, raw: Any, path: str) -> Any:
        if not isinstance(raw, dict) or len(raw) != 1:
            raise fail(path, "a function is {\"dpstream\": ...}, {\"named\": ...} or {\"inner\": ...}", raw)
        (how, name), = raw.items()
        if how == "named":
            if name not in self.functions:
                raise fail(path, f"the checkpoint needs your function {name!r}: load(..., functions={{{name!r}: f}})",
                           name)
            return self.functions[name]
        if how == "dpstream":
            f = resolve(name)
            if not isinstance(f, types.FunctionType):
                raise fail(path, "does not name a function", name)
            return f
        if how == "inner":
            raise fail(path, "is a function dpstream made inside another object; only its owner can make it again",
                       name)
        raise fail(path, "a function is {\"dpstream\": ...}, {\"named\": ...} or {\"inner\": ...}", raw)

    def call(self, make: Callable[..., Any], values: Mapping[str, Any], path: str) -> Any:
        """``make(**values)``, its refusal of the values reported at ``path``."""
        try:
            return make(**values)
        except (DPStreamInputError, ValueError, TypeError) as exc:
            raise fail(path, f"refused: {exc}", None) from exc

    def build(self, doc: Any, path: str = "state") -> Any:
        """A new algorithm from a state document: made from its parameters, then its variables restored."""
        spec, doc = migrated(doc, path)
        return self._fill(spec, doc, self._make(spec, doc, path, self.noise), path, "its parameters give")

    def make(self, doc: Any, path: str, noise: Any) -> Any:
        """A new algorithm made from the parameters of a state document (its variables not restored yet): for
        builders whose constructor takes components (the multi-dimensional counter takes its d counters)."""
        spec, doc = migrated(doc, path)
        return self._make(spec, doc, path, noise)

    def _make(self, spec: StateSpec, doc: dict[str, Any], path: str, noise: Any) -> Any:
        params = {f.name: f.kind.decode(doc["params"][f.name], self, f"{path}.params.{f.name}") for f in spec.params}
        try:
            return spec.make(params, noise, self, doc)
        except CheckpointError:
            raise
        except (DPStreamInputError, ValueError, TypeError) as exc:
            raise fail(f"{path}.params", f"refused by {spec.algorithm}: {exc}", None) from exc

    def restore(self, doc: Any, obj: Any, path: str) -> Any:
        """Restore a state document into ``obj``, a component its owner made (its parameters must be the file's)."""
        spec = spec_for(obj, path)
        name = doc.get("algorithm") if isinstance(doc, dict) else None
        if name != spec.algorithm:
            raise fail(f"{path}.algorithm", f"the owner holds a {spec.algorithm} here", name)
        _, doc = migrated(doc, path)
        return self._fill(spec, doc, obj, path, "its owner makes")

    def _fill(self, spec: StateSpec, doc: dict[str, Any], obj: Any, path: str, maker: str) -> Any:
        for section in ("params", "derived"):
            for f in getattr(spec, section):
                have = f.kind.encode(f.read(obj), self.compare, f"{path}.{section}.{f.name}")
                if not same(have, doc[section][f.name]):
                    raise fail(f"{path}.{section}.{f.name}", f"is {json.dumps(doc[section][f.name])} in the file, "
                                                              f"but {maker} {json.dumps(have)}", None)
        saved = self.owner, self.current
        try:
            for f in spec.variables:
                self.owner, self.current = obj, f.read(obj)
                f.write(obj, f.kind.decode(doc["variables"][f.name], self, f"{path}.variables.{f.name}"))
        except InvariantError as exc:
            raise fail(path, f"not a state {spec.algorithm} can be in: {exc}", None) from exc
        finally:
            self.owner, self.current = saved
        if spec.check is not None:
            try:
                spec.check(obj)
            except InvariantError as exc:
                raise fail(path, f"not a state {spec.algorithm} can be in: {exc}", None) from exc
        return obj


# --- versions and migrations ----------------------------------------------------------------------------------------

def _shape(doc: Any, path: str) -> dict[str, Any]:
    if not isinstance(doc, dict) or list(doc) != list(STATE_KEYS):
        raise fail(path, f"a state has exactly the keys {list(STATE_KEYS)}, in this order",
                   list(doc) if isinstance(doc, dict) else doc)
    version = doc["state_version"]
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise fail(f"{path}.state_version", "must be an integer >= 1", version)
    for section in _SECTIONS:
        if not isinstance(doc[section], dict):
            raise fail(f"{path}.{section}", "must be an object", doc[section])
    return doc


def migrated(doc: Any, path: str = "state") -> tuple[StateSpec, dict[str, Any]]:
    """The documented state of ``doc``'s algorithm and ``doc`` brought to its current state version."""
    doc = _shape(doc, path)
    spec = by_name(doc["algorithm"]) if isinstance(doc["algorithm"], str) else None
    if spec is None:
        raise fail(f"{path}.algorithm", "is no algorithm state this dpstream knows (docs/checkpoint-states.md)",
                   doc["algorithm"])
    version = doc["state_version"]
    if version > spec.version:
        raise fail(f"{path}.state_version", f"state version {version} of {spec.algorithm} was written by a later "
                                            f"dpstream; this one reads versions up to {spec.version}", version)
    while version < spec.version:
        step = spec.migrations.get(version)
        if step is None:
            raise fail(f"{path}.state_version", f"no migration of {spec.algorithm} from state version {version} to "
                                                f"{version + 1} in this dpstream", version)
        try:
            doc = step(copy.deepcopy(doc))
        except (KeyError, TypeError, ValueError, IndexError) as exc:
            raise fail(path, f"the migration of {spec.algorithm} from state version {version} failed: {exc!r}",
                       None) from exc
        version += 1
        doc = _shape({**doc, "state_version": version}, path)
    for section in _SECTIONS:
        want = [f.name for f in getattr(spec, section)]
        if list(doc[section]) != want:
            raise fail(f"{path}.{section}", f"{spec.algorithm} (state version {spec.version}) has the {section} "
                                            f"{want}, in this order", list(doc[section]))
    return spec, doc


def _is_state(node: Any) -> bool:
    return isinstance(node, dict) and list(node) == list(STATE_KEYS)


def migrate_all(node: Any, path: str = "state") -> Any:
    """A JSON tree with every state document in it brought to its current version (what load does, as JSON)."""
    if _is_state(node):
        _, node = migrated(node, path)
        return {k: migrate_all(v, f"{path}.{k}") for k, v in node.items()}
    if isinstance(node, dict):
        return {k: migrate_all(v, f"{path}.{k}") for k, v in node.items()}
    if isinstance(node, list):
        return [migrate_all(v, f"{path}[{i}]") for i, v in enumerate(node)]
    return node


def layout(node: Any) -> Any:
    """The layout of a JSON tree: its keys and lists with every number, string, bool or null replaced by its type."""
    if isinstance(node, dict):
        return {k: layout(v) for k, v in node.items()}
    if isinstance(node, list):
        return [layout(v) for v in node]
    return type(node).__name__
