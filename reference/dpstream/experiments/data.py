"""The data files of the paper experiments, shipped in the repository's ``data/`` folder.

Layout: ``<data dir>/<dataset>/`` holds ``SHA256SUMS`` and each file either xz-compressed
(``adult.csv.xz``) or as is (``adult-domain.json``). ``SHA256SUMS`` (the format of ``sha256sum``)
lists the sha256 of every shipped file and, for a compressed file, of its decompressed content.
An experiment names what it reads (:class:`DataFile`, ``Experiment.data``); before use
:func:`verified_bytes` checks the compressed file, decompresses it in memory and checks the
result, so a missing, truncated or altered file is an error naming the file, never a silent
wrong result. :func:`materialized` writes the checked files to a temporary folder for loaders
that take paths.

The default data dir is ``data/`` of the repository this package runs from (an editable
install or a clone); ``dpstream reproduce <name> --data-dir DIR`` reads ``DIR/<dataset>/`` instead.
"""

from __future__ import annotations

import hashlib
import lzma
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from dpstream.errors import DPStreamInputError

__all__ = ["CHECKSUMS", "DataFile", "check_files", "default_data_dir", "materialized", "read_checksums",
           "verified_bytes"]

CHECKSUMS = "SHA256SUMS"
FIELD = "--data-dir"


def default_data_dir() -> Path:
    """``data/`` of the repository holding this package (reference/dpstream/experiments/ -> repo root)."""
    return Path(__file__).resolve().parents[3] / "data"


@dataclass(frozen=True)
class DataFile:
    """A file an experiment reads: ``<data dir>/<dataset>/<name>`` (shipped as ``<name>.xz`` or as is)."""

    dataset: str
    name: str

    def folder(self, data_dir: Path | None = None) -> Path:
        return (default_data_dir() if data_dir is None else Path(data_dir)) / self.dataset

    def shipped(self, data_dir: Path | None = None) -> Path:
        """The file present in the folder: the ``.xz`` if there is one, else the plain file (which may not exist)."""
        folder = self.folder(data_dir)
        compressed = folder / f"{self.name}.xz"
        return compressed if compressed.is_file() else folder / self.name


def read_checksums(folder: Path) -> dict[str, str]:
    """``SHA256SUMS`` of a dataset folder: file name -> sha256 (hex)."""
    path = folder / CHECKSUMS
    if not path.is_file():
        raise DPStreamInputError(FIELD, f"no {CHECKSUMS} in {folder} (see data/README.md of the repository)",
                                 str(folder))
    sums: dict[str, str] = {}
    for k, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        digest, sep, name = line.partition("  ")
        if not sep or len(digest) != 64:
            raise DPStreamInputError(FIELD, f"{path} line {k}: expected '<sha256>  <file name>'", line)
        sums[name.lstrip("*")] = digest.lower()
    return sums


def _check(data: bytes, expected: str | None, what: Path) -> None:
    if expected is None:
        raise DPStreamInputError(FIELD, f"{what.name} is not listed in {what.parent / CHECKSUMS}", str(what))
    actual = hashlib.sha256(data).hexdigest()
    if actual != expected:
        raise DPStreamInputError(
            FIELD, f"{what} is corrupted: sha256 {actual}, {CHECKSUMS} says {expected} (restore it from the "
            "repository, e.g. git checkout -- data/)", str(what))


def _shipped_bytes(file: DataFile, data_dir: Path | None) -> tuple[bytes, dict[str, str]]:
    """The shipped (possibly compressed) bytes of ``file``, checked against ``SHA256SUMS``, and the sums."""
    folder = file.folder(data_dir)
    shipped = file.shipped(data_dir)
    if not shipped.is_file():
        raise DPStreamInputError(
            FIELD, f"needs {file.name} (or {file.name}.xz) in {folder}; see SOURCE.md there or data/README.md "
            "of the repository", str(folder))
    sums = read_checksums(folder)
    raw = shipped.read_bytes()
    _check(raw, sums.get(shipped.name), shipped)
    return raw, sums


def check_files(files: Sequence[DataFile], data_dir: Path | None = None) -> None:
    """Every file present and its shipped bytes matching ``SHA256SUMS`` (quick: nothing is decompressed).

    Run before any work (``Experiment.check``); :func:`verified_bytes` checks the decompressed content too.
    """
    for file in files:
        _shipped_bytes(file, data_dir)


def verified_bytes(file: DataFile, data_dir: Path | None = None) -> bytes:
    """The content of ``file``, decompressed, after checking it (and its ``.xz``) against ``SHA256SUMS``."""
    folder = file.folder(data_dir)
    shipped = file.shipped(data_dir)
    raw, sums = _shipped_bytes(file, data_dir)
    if shipped.suffix == ".xz":
        try:
            raw = lzma.decompress(raw)
        except lzma.LZMAError as exc:
            raise DPStreamInputError(FIELD, f"{shipped} is not a valid xz file ({exc})", str(shipped)) from exc
        _check(raw, sums.get(file.name), folder / file.name)
    return raw


@contextmanager
def materialized(files: Sequence[DataFile], data_dir: Path | None = None) -> Iterator[dict[DataFile, Path]]:
    """Check every file, write the decompressed contents to a temporary folder, yield their paths.

    The folder is removed when the ``with`` block ends, so loaders must read the files inside it.
    """
    contents = {f: verified_bytes(f, data_dir) for f in files}  # every check before any write
    with tempfile.TemporaryDirectory(prefix="dpstream-data-") as tmp:
        paths: dict[DataFile, Path] = {}
        for f, data in contents.items():
            path = Path(tmp) / f.dataset / f.name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
            paths[f] = path
        yield paths
