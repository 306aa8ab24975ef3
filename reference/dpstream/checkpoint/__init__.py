"""Checkpoint and resume a streaming algorithm (docs/checkpoint.md; the states: docs/checkpoint-states.md).

``save(obj, path)`` writes the documented state of a streaming algorithm -- its parameters, the values derived
from them and its variables, in the papers' names, each algorithm's state with its own version -- to a
checksummed JSON file; ``load(path, noise=...)`` rebuilds the algorithm from its parameters with its own
constructor, restores and checks its variables and returns it ready to continue.

* **Documented and versioned.** Every streaming algorithm has a :class:`~dpstream.checkpoint.spec.StateSpec`
  (``dpstream.checkpoint.states``): the state in the papers' variables (Simple counter: t, g(t), epsilon, T;
  binary tree: t, the p-sums alpha_i and the noisy p-sums alpha_hat_i, ...), a state version and migrations from
  older versions. A file written by another dpstream loads when its state versions are known (migrated when
  older) and is refused with the reason when they are not. The file format has a version of its own.
* **Checked.** A state is rebuilt through the algorithm's constructor (whose rules hold), a component through its
  owner (eps/2, horizons and noise scopes are the owner's), the derived values (the noise scale, ...) are
  compared, every variable is checked against its kind and the algorithm's invariants (t <= T, counts >= 0, the
  last release is g(t), ...). ``expect_params`` is compared with the rebuilt algorithm itself.
* **Noise.** A secure checkpoint continues on secure noise only, unless ``allow_insecure=True``; an insecure one
  (seeded, zero, tape) continues on a source of its kind, whose saved state is restored into it.
* **Integrity.** ``sha256`` detects accidental corruption only (anyone can recompute it); ``save(key=...)`` adds
  an HMAC-SHA256 (``mac``) that ``load(key=...)`` requires: tamper evidence against anyone without the key.
* **Data only.** Nothing is unpickled and nothing from the file is executed; a function is named (a dpstream
  function, or one of yours given back at load).
* **Refusals** are :class:`CheckpointError` (a ``DPStreamInputError`` with field ``checkpoint``), raised before
  anything changes; writes are atomic (temporary file, fsync, rename).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import dpstream
from dpstream.checkpoint import engine
from dpstream.checkpoint.engine import Reader, Writer, same, spec_for, specs
from dpstream.checkpoint.file import (
    CHECKPOINT_FORMAT,
    CHECKPOINT_VERSION,
    canonical,
    parse,
    read_text,
    seal,
    write_text,
)
from dpstream.checkpoint.names import CheckpointError
from dpstream.checkpoint.sources import noise_state, restore_plan
from dpstream.checkpoint.spec import StateSpec
from dpstream.errors import DPStreamInputError
from dpstream.noise import NoiseSource

__all__ = ["CHECKPOINT_FORMAT", "CHECKPOINT_VERSION", "CheckpointError", "StateSpec", "dumps", "load", "loads",
           "save", "specs", "state_of"]

Functions = Mapping[str, Callable[..., Any]]

_canonical = canonical  # the serialisation the sha256 is computed over (docs/checkpoint.md), as first named here
_noise_state = noise_state  # a source's noise section, as first named here


def _origin(obj: Any) -> Any:
    return importlib.import_module("dpstream.catalog").origin(obj)


def state_of(obj: Any, *, functions: Functions | None = None) -> dict[str, Any]:
    """The documented state of ``obj`` as plain JSON (what :func:`save` writes under ``state``)."""
    made = _origin(obj)
    return Writer(functions, made.noise if made is not None else spec_for(obj).source(obj)).state(obj)


def _inner_functions(node: Any) -> bool:
    if isinstance(node, dict):
        return ("inner" in node and len(node) == 1) or any(_inner_functions(v) for v in node.values())
    return isinstance(node, list) and any(_inner_functions(v) for v in node)


def dumps(obj: Any, *, functions: Functions | None = None, key: bytes | str | None = None) -> str:
    """The checkpoint document of ``obj`` (what :func:`save` writes); ``key`` adds the MAC."""
    made = _origin(obj)
    source = made.noise if made is not None else spec_for(obj).source(obj)
    state = Writer(functions, source).state(obj)
    if made is None and _inner_functions(state["params"]):
        raise CheckpointError("a parameter of the algorithm is a function dpstream made inside another object, which "
                              "load cannot make again: pass a dpstream function or one of yours, named with "
                              "save(..., functions={'name': f})", state["params"])
    origin = None if made is None else {"catalog": made.anchor, "params": dict(made.params),
                                        "as_printed": made.as_printed}
    doc = {"format": CHECKPOINT_FORMAT, "version": CHECKPOINT_VERSION, "dpstream": dpstream.__version__,
           "algorithm": state["algorithm"], "params": state["params"], "origin": origin,
           "noise": noise_state(source), "state": state}
    try:
        canonical(doc)
    except (TypeError, ValueError) as exc:
        raise CheckpointError(f"the state is not plain JSON: {exc}", None) from exc
    return seal(doc, key)


def save(obj: Any, path: str | Path, *, functions: Functions | None = None, key: bytes | str | None = None) -> None:
    """Write ``obj``'s checkpoint to ``path`` atomically (temporary file in the same folder, mode 0600, fsync,
    rename). ``functions`` names functions of yours the algorithm holds; ``key`` adds an HMAC-SHA256 that
    :func:`load` then requires. Every failure, the file system's included, is a :class:`CheckpointError`."""
    write_text(dumps(obj, functions=functions, key=key), path)


def _expect(obj: Any, expect_params: Mapping[str, Any], reader: Reader) -> None:
    """Compare ``expect_params`` with the parameters of the rebuilt algorithm itself (under the papers' names; for an
    algorithm the catalog built, also the entry's protocol parameters)."""
    fields = {f.name: f for f in spec_for(obj).params}
    made = _origin(obj)
    protocol = dict(made.params) if made is not None else {}
    for name, want in expect_params.items():
        if name in fields:
            field = fields[name]
            have = field.read(obj)
            try:
                equal = same(field.kind.encode(want, reader.compare, name),
                             field.kind.encode(have, reader.compare, name))
            except CheckpointError:
                equal = False
        elif name in protocol:
            have = protocol[name]
            equal = (type(want) is type(have) and want == have) or (
                isinstance(want, int | float) and isinstance(have, int | float) and float(want) == float(have))
        else:
            known = list(fields) + [p for p in protocol if p not in fields]
            raise CheckpointError(f"parameter {name!r} is not recorded: the parameters of {spec_for(obj).algorithm} "
                                  f"are {known}", name)
        if not equal:
            raise CheckpointError(f"parameter {name!r} is {have!r}, expected {want!r}", name)


def _rebuilt(doc: dict[str, Any], reader: Reader) -> Any:
    origin = doc["origin"]
    if origin is None:
        return reader.build(doc["state"])
    if not isinstance(origin, dict) or list(origin) != ["catalog", "params", "as_printed"] \
            or not isinstance(origin["as_printed"], bool):
        raise CheckpointError("origin: must be null or {catalog, params, as_printed}", origin)
    catalog = importlib.import_module("dpstream.catalog")
    try:
        entry = catalog.entry(origin["catalog"])
        obj = entry.make(origin["params"], reader.noise, as_printed=origin["as_printed"])
    except (KeyError, LookupError, DPStreamInputError, TypeError) as exc:
        raise CheckpointError(f"origin: the catalog cannot build {origin['catalog']!r} from these parameters: {exc}",
                              origin["catalog"]) from exc
    return reader.restore(doc["state"], obj, "state")


def loads(text: str, noise: NoiseSource | None = None, *, expect_class: type | None = None,
          expect_params: Mapping[str, Any] | None = None, functions: Functions | None = None,
          key: bytes | str | None = None, allow_insecure: bool = False) -> Any:
    """The algorithm saved in ``text`` (a :func:`dumps` document), attached to ``noise``; see :func:`load`."""
    if not isinstance(allow_insecure, bool):
        raise CheckpointError("allow_insecure must be True or False", allow_insecure)
    doc = parse(text, key)
    state = doc["state"]
    if not isinstance(state, dict) or state.get("algorithm") != doc["algorithm"] \
            or not same(state.get("params"), doc["params"]):
        raise CheckpointError("the header's algorithm and params differ from the state's (an edited file?)",
                              doc["algorithm"])
    saved = engine.by_name(doc["algorithm"]) if isinstance(doc["algorithm"], str) else None
    if expect_class is not None and saved is not None and saved.cls is not expect_class:
        raise CheckpointError(f"holds a {saved.cls.__qualname__}, not a {expect_class.__qualname__}", doc["algorithm"])
    source, plan = restore_plan(doc["noise"], noise, allow_insecure)
    reader = Reader(source, functions)
    try:
        obj = _rebuilt(doc, reader)
    except RecursionError as exc:
        raise CheckpointError("the state is nested too deeply to load", None) from exc
    if expect_class is not None and type(obj) is not expect_class:
        raise CheckpointError(f"holds a {type(obj).__qualname__}, not a {expect_class.__qualname__}",
                              doc["algorithm"])
    if expect_params:
        _expect(obj, expect_params, reader)
    for step in plan:  # only now: every check passed, so the source changes all at once or not at all
        step()
    return obj


def load(path: str | Path, noise: NoiseSource | None = None, *, expect_class: type | None = None,
         expect_params: Mapping[str, Any] | None = None, functions: Functions | None = None,
         key: bytes | str | None = None, allow_insecure: bool = False) -> Any:
    """The algorithm saved at ``path``, ready to continue with ``noise`` (its saved state restored into it).

    ``noise=None`` attaches a fresh :class:`~dpstream.noise.SecureNoise` to a secure checkpoint; an insecure source
    continues a secure checkpoint only with ``allow_insecure=True``; an insecure checkpoint (seeded, zero, tape)
    needs a source of its kind. ``expect_class`` / ``expect_params`` refuse another algorithm or other parameters
    (compared with the rebuilt algorithm); ``functions`` gives back the functions named at :func:`save`; ``key``
    verifies the MAC (required when the file has one). Raises :class:`CheckpointError`, and changes nothing, when
    the file is unreadable, truncated, corrupted, of another format, of unknown state versions, inconsistent, or
    mismatched.
    """
    return loads(read_text(path), noise, expect_class=expect_class, expect_params=expect_params,
                 functions=functions, key=key, allow_insecure=allow_insecure)
