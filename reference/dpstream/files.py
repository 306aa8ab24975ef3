"""Files written whole or not at all.

Every file a command writes -- reports (``conform --json/--junit/--markdown``, ``audit --out``), vectors, tapes,
power tables, checkpoints -- goes through :func:`write_atomically`: the content is written to a temporary file in
the same folder, flushed and synced, then renamed over the target (a rename within a folder is atomic; the folder is
synced after it). On a full
disk (``ENOSPC``), a file-size limit (``EFBIG``), a read-only folder or an interrupt, the temporary file is removed,
the target keeps its earlier content (or stays absent), and the ``OSError`` reaches the caller, which reports it
with its exit status. So a CI system never parses half a JSON document.
"""

from __future__ import annotations

import io
import os
import tempfile
from pathlib import Path
from typing import Any

__all__ = ["write_atomically", "write_figure"]


def write_atomically(path: str | Path, data: str | bytes, *, mode: int | None = None) -> Path:
    """Write ``data`` (text as UTF-8) to ``path`` whole or not at all; returns the path. ``mode``: the file's
    permission bits (default: those of an ordinary new file, umask applied; a checkpoint passes 0o600)."""
    target = Path(path)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent if str(target.parent)
                               else ".")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(payload)
            out.flush()
            os.fsync(out.fileno())
        if mode is None:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:  # an OSError, or an interrupt: nothing half-written stays
        Path(tmp).unlink(missing_ok=True)
        raise
    _sync_folder(target.parent if str(target.parent) else Path("."))
    return target


def _sync_folder(folder: Path) -> None:
    """Make the rename durable (a folder cannot be opened on some platforms: then nothing to do)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:  # pragma: no cover
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover - some file systems refuse fsync on a folder
        pass
    finally:
        os.close(fd)


def write_figure(fig: Any, path: str | Path, dpi: int = 90) -> Path:
    """A matplotlib figure saved as PNG whole or not at all (rendered in memory, then :func:`write_atomically`)."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi)
    return write_atomically(path, buffer.getvalue())
