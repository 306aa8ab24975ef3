"""The shipped vectors corpus: a manifest and one JSON file per vector, inside the package.

Layout (``dpstream/vectors/corpus/``)::

    manifest.json                 {"format": "dpstream-vector-corpus", "version": 1, "corpus": CORPUS_VERSION,
                                   "vectors": [{"id", "kind", "algorithm", "params", "edges", "file", "sha256"}, ...]}
    <algorithm>/<name>.json       a known-answer vector (kind "known-answer")
    <algorithm>/reject-<name>.json  a must-reject vector (kind "must-reject")

``dpstream vectors generate`` writes it from the catalog (byte-identical on every run),
``dpstream vectors verify`` checks every file's checksum and replays every vector on the reference.
The corpus version changes whenever a vector's content changes.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from dpstream.tape import TapeFormatError
from dpstream.vectors.format import KnownAnswerVector, MustRejectVector

__all__ = [
    "CORPUS_FORMAT",
    "CORPUS_VERSION",
    "MANIFEST",
    "CorpusError",
    "ManifestRow",
    "corpus_dir",
    "known_answer",
    "load_manifest",
    "must_reject",
    "sha256_of",
]

CORPUS_FORMAT = "dpstream-vector-corpus"
CORPUS_VERSION = "3.0.0"
"""Semantic version of the corpus content (a new vector: minor; a changed vector: major)."""
MANIFEST = "manifest.json"

Kind = Literal["known-answer", "must-reject"]


class CorpusError(RuntimeError):
    """The corpus on disk is incomplete or does not match its manifest."""


@dataclass(frozen=True)
class ManifestRow:
    id: str
    kind: Kind
    algorithm: str
    params: dict[str, Any]
    edges: tuple[str, ...]
    file: str
    sha256: str

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "kind": self.kind, "algorithm": self.algorithm, "params": self.params,
                "edges": list(self.edges), "file": self.file, "sha256": self.sha256}


def corpus_dir() -> Path:
    """The folder of the shipped corpus (inside the installed package)."""
    return Path(str(resources.files("dpstream.vectors") / "corpus"))


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def load_manifest(root: Path | None = None) -> list[ManifestRow]:
    root = corpus_dir() if root is None else root
    path = root / MANIFEST
    if not path.is_file():
        raise CorpusError(f"no manifest at {path}: run `dpstream vectors generate`")
    doc = json.loads(path.read_text(encoding="utf-8"))
    if doc.get("format") != CORPUS_FORMAT or doc.get("version") != 1:
        raise CorpusError(f"{path} is not a version-1 {CORPUS_FORMAT} manifest")
    return [ManifestRow(r["id"], r["kind"], r["algorithm"], dict(r["params"]), tuple(r["edges"]), r["file"],
                        r["sha256"]) for r in doc["vectors"]]


def _checked(root: Path, row: ManifestRow) -> Path:
    path = root / row.file
    if not path.is_file():
        raise CorpusError(f"{row.id}: file {path} is missing")
    digest = sha256_of(path)
    if digest != row.sha256:
        raise CorpusError(f"{row.id}: sha256 of {path} is {digest}, the manifest says {row.sha256}")
    return path


def known_answer(algorithm: str | None = None, root: Path | None = None) -> Iterator[KnownAnswerVector]:
    """The known-answer vectors (of one algorithm), checksums verified."""
    root = corpus_dir() if root is None else root
    for row in load_manifest(root):
        if row.kind == "known-answer" and (algorithm is None or row.algorithm == algorithm):
            vector = KnownAnswerVector.load(_checked(root, row))
            if vector.id != row.id:
                raise TapeFormatError(f"{row.file} holds {vector.id!r}, the manifest says {row.id!r}")
            yield vector


def must_reject(algorithm: str | None = None, root: Path | None = None) -> Iterator[MustRejectVector]:
    """The must-reject vectors (of one algorithm), checksums verified."""
    root = corpus_dir() if root is None else root
    for row in load_manifest(root):
        if row.kind == "must-reject" and (algorithm is None or row.algorithm == algorithm):
            vector = MustRejectVector.load(_checked(root, row))
            if vector.id != row.id:
                raise TapeFormatError(f"{row.file} holds {vector.id!r}, the manifest says {row.id!r}")
            yield vector
