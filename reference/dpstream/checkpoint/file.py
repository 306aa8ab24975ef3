"""The checkpoint file: one JSON document, checksummed, optionally authenticated (docs/checkpoint.md).

Keys, in this order: ``format``, ``version`` (of this file format; the algorithms' states have their own
versions), ``dpstream`` (the version that wrote it: informational), ``algorithm`` and ``params`` (the root
algorithm and its parameters, as in its state: a summary for readers, checked against the state), ``origin``
(the catalog entry that built it, or null), ``noise``, ``state``, then ``mac`` (only when saved with a key) and
``sha256``.

* ``sha256`` is the SHA-256 of the compact JSON of every other key, in the order written
  (``json.dumps(doc, separators=(",", ":"), allow_nan=False, ensure_ascii=True)``). It detects accidental
  corruption only: anyone can recompute it after an edit.
* ``mac`` is HMAC-SHA256, under the key given to ``save(key=...)``, of the compact JSON of every key before it.
  Without the key nobody can make an edited file verify: that is the tamper evidence.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from dpstream.checkpoint.names import CheckpointError
from dpstream.files import write_atomically

__all__ = ["CHECKPOINT_FORMAT", "CHECKPOINT_VERSION", "canonical", "mac", "parse", "read_text", "seal", "write_text"]

CHECKPOINT_FORMAT = "dpstream-checkpoint"
CHECKPOINT_VERSION = 1
HEADER = ("format", "version", "dpstream", "algorithm", "params", "origin", "noise", "state")


def canonical(doc: Mapping[str, Any]) -> str:
    """The one serialisation of a document (compact; keys in their order)."""
    return json.dumps(doc, separators=(",", ":"), allow_nan=False, ensure_ascii=True)


def _key(key: object) -> bytes:
    if isinstance(key, str):
        key = key.encode("utf-8")
    if not isinstance(key, bytes | bytearray) or not key:
        raise CheckpointError("key must be non-empty bytes (or text)", type(key).__name__)
    return bytes(key)


def mac(doc: Mapping[str, Any], key: object) -> str:
    """HMAC-SHA256 of the document's header keys under ``key`` (hex)."""
    body = {k: doc[k] for k in HEADER}
    return hmac.new(_key(key), canonical(body).encode("utf-8"), hashlib.sha256).hexdigest()


def seal(doc: dict[str, Any], key: object | None) -> str:
    """The file text of a document: with ``mac`` when a key is given, then ``sha256``."""
    if key is not None:
        doc["mac"] = mac(doc, key)
    doc["sha256"] = hashlib.sha256(canonical(doc).encode("utf-8")).hexdigest()
    return canonical(doc)


def parse(text: str, key: object | None) -> dict[str, Any]:
    """The document of a file text, its format, version, checksum and MAC checked (in that order)."""
    if key is not None:
        _key(key)
    try:
        doc = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        raise CheckpointError(f"not a complete JSON document (truncated?): {exc}", None) from exc
    if not isinstance(doc, dict) or doc.get("format") != CHECKPOINT_FORMAT:
        raise CheckpointError(f"not a {CHECKPOINT_FORMAT} file", doc.get("format") if isinstance(doc, dict) else None)
    if doc.get("version") != CHECKPOINT_VERSION:
        raise CheckpointError(f"checkpoint format version {doc.get('version')!r}; this reader reads "
                              f"{CHECKPOINT_VERSION}", doc.get("version"))
    if "class" in doc and not isinstance(doc.get("algorithm"), str):
        raise CheckpointError("written by an unreleased dpstream that saved its object graph, before the documented "
                              "states: this version reads documented states only", doc.get("dpstream"))
    keys = [*HEADER, *(["mac"] if "mac" in doc else []), "sha256"]
    if list(doc) != keys:
        raise CheckpointError(f"a checkpoint has exactly the keys {keys}, in this order", list(doc))
    digest = doc.pop("sha256")
    if not isinstance(digest, str) or hashlib.sha256(canonical(doc).encode("utf-8")).hexdigest() != digest:
        raise CheckpointError("checksum mismatch: the file is corrupted", digest)
    saved_mac = doc.pop("mac", None)
    if key is None and saved_mac is not None:
        raise CheckpointError("the checkpoint is authenticated (saved with a key): pass the key to load(key=...) to "
                              "verify it", None)
    if key is not None:
        if saved_mac is None:
            raise CheckpointError("the checkpoint has no MAC: it was saved without a key, or the MAC was removed; "
                                  "refused because a key was given", None)
        if not isinstance(saved_mac, str) or not hmac.compare_digest(saved_mac, mac(doc, key)):
            raise CheckpointError("MAC mismatch: the file was changed after it was saved, or the key is not the one "
                                  "it was saved with", None)
    return doc


def read_text(path: str | Path) -> str:
    """The file's text; an unreadable file is a :class:`CheckpointError` naming the path."""
    try:
        return Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise CheckpointError(f"not a text file: {exc}", str(path)) from exc
    except OSError as exc:
        raise CheckpointError(f"cannot read the checkpoint: {exc.strerror or exc}", str(path)) from exc


def write_text(text: str, path: str | Path) -> None:
    """Write ``text`` to ``path`` atomically: a temporary file in the same folder (mode 0600), fsync, rename over
    the target, fsync the folder. A failure is a :class:`CheckpointError` naming the path and leaves the old file
    (if any) and no temporary file behind."""
    target = Path(path)
    try:
        write_atomically(target.resolve(), text + "\n", mode=0o600)
    except OSError as exc:
        raise CheckpointError(f"cannot write the checkpoint to {target}: {exc.strerror or exc}", str(target)) from exc
