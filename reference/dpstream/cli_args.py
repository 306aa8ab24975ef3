"""Argument types of the ``dpstream`` command line, and its output folders.

Each type is an argparse ``type=`` callable: it turns one command-line string into a value or raises
``argparse.ArgumentTypeError`` stating the rule, so argparse itself reports a bad value as
``dpstream reproduce X: error: argument --eps: must be a finite number > 0 (got '-1')`` with exit status 2
and no traceback. ``comma_list(item)`` with :class:`Flatten` accepts ``--eps 0.5,1 2`` as well as
``--eps 0.5 1 2``.

Output folders (docs/developing.md, "Experiments"): :func:`writable_dir` checks at parse time, without
creating anything, that the folder could be made and written; :func:`resolve_output_dir` keeps an earlier
result: a folder that already holds one is not written into (unless ``--overwrite``), the run goes to the
first free ``DIR-2``, ``DIR-3``, ... beside it, and says so; :func:`prepare_output_dir` creates it and
writes a probe file before any work starts; :func:`staged_output_dir` gives a run a hidden staging folder
inside it and moves the files into place only when the run returns (an exception, a Ctrl-C or a SIGTERM
removes the staging folder), so an interrupted or crashed run never leaves files that look complete.
"""

from __future__ import annotations

import argparse
import math
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NoReturn, TypeVar

from dpstream.errors import DPStreamInputError

__all__ = [
    "BLAS_THREADS",
    "STAGING_PREFIX",
    "Flatten",
    "Parser",
    "comma_list",
    "existing_dir",
    "existing_file",
    "finite_float",
    "fraction",
    "holds_result",
    "int_in",
    "non_negative_float",
    "non_negative_int",
    "one_blas_thread",
    "positive_float",
    "positive_int",
    "prepare_output_dir",
    "probability",
    "resolve_output_dir",
    "staged_output_dir",
    "unit_interval",
    "writable_dir",
]

T = TypeVar("T")
BLAS_THREADS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
"""The environment variables that set how many threads numpy's BLAS starts (the commands set them to 1)."""


def one_blas_thread() -> bool:
    """Set one BLAS thread per process where the user did not choose (:data:`BLAS_THREADS`); whether anything was
    set. It acts only on processes that import numpy afterwards: the audits run many small linear-algebra steps and
    spread runs over worker processes themselves, and OpenBLAS's own threads on top oversubscribe the cores (a quick
    search of 001-alg8 took 26 s with them, 8 s without, on 2 cores). Workers and programs under test inherit it."""
    missing = [v for v in BLAS_THREADS if v not in os.environ]
    for variable in missing:
        os.environ[variable] = "1"
    return bool(missing)
STAGING_PREFIX = ".dpstream-partial-"
"""Name prefix of a run's staging folder inside its output folder (left behind only if the process is killed)."""


class Parser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose usage errors are one line on stderr (no usage block), exit status 2.

    Subcommand parsers made with ``add_subparsers`` are of the same class.
    """

    def error(self, message: str) -> NoReturn:
        self.exit(2, self.error_line(message) + "\n")

    def error_line(self, message: str) -> str:
        """The one line a usage error prints."""
        return f"{self.prog}: error: {' '.join(message.split())} (see '{self.prog} --help')"


def _bad(rule: str, text: str) -> argparse.ArgumentTypeError:
    return argparse.ArgumentTypeError(f"{rule} (got {text!r})")


def _integer(text: str, minimum: int) -> int:
    try:
        value = int(text.strip())
    except ValueError:
        raise _bad(f"must be an integer >= {minimum}", text) from None
    if value < minimum:
        raise _bad(f"must be an integer >= {minimum}", text)
    return value


def positive_int(text: str) -> int:
    """An integer >= 1 (counts, horizons, runs, batch sizes)."""
    return _integer(text, 1)


def int_in(minimum: int, maximum: int) -> Callable[[str], int]:
    """A type for an integer in minimum..maximum (a size a run holds in memory, a depth, a repetition count)."""
    def convert(text: str) -> int:
        value = _integer(text, minimum)
        if value > maximum:
            raise _bad(f"must be an integer in {minimum}..{maximum}", text)
        return value

    convert.__name__ = f"int_in({minimum}, {maximum})"
    return convert


def non_negative_int(text: str) -> int:
    """An integer >= 0 (seeds)."""
    return _integer(text, 0)


def finite_float(text: str) -> float:
    """A finite real number."""
    try:
        value = float(text)
    except ValueError:
        raise _bad("must be a finite number", text) from None
    if not math.isfinite(value):
        raise _bad("must be a finite number", text)
    return value


def _float_in(text: str, rule: str, ok: Callable[[float], bool]) -> float:
    try:
        value = finite_float(text)
    except argparse.ArgumentTypeError:
        raise _bad(rule, text) from None
    if not ok(value):
        raise _bad(rule, text)
    return value


def positive_float(text: str) -> float:
    """A finite number > 0 (eps, rho)."""
    return _float_in(text, "must be a finite number > 0", lambda v: v > 0.0)


def non_negative_float(text: str) -> float:
    """A finite number >= 0 (thresholds)."""
    return _float_in(text, "must be a finite number >= 0", lambda v: v >= 0.0)


def probability(text: str) -> float:
    """A probability strictly inside (0, 1) (failure probabilities beta)."""
    return _float_in(text, "must lie in (0, 1)", lambda v: 0.0 < v < 1.0)


def fraction(text: str) -> float:
    """A share in (0, 1] (floors as a share of the records)."""
    return _float_in(text, "must lie in (0, 1]", lambda v: 0.0 < v <= 1.0)


def unit_interval(text: str) -> float:
    """A share in [0, 1] (initialization ratios)."""
    return _float_in(text, "must lie in [0, 1]", lambda v: 0.0 <= v <= 1.0)


def existing_file(text: str) -> Path:
    """A file that exists and can be read."""
    path = Path(text)
    if not path.is_file():
        raise _bad("no such file", text)
    if not os.access(path, os.R_OK):
        raise _bad("file not readable", text)
    return path


def existing_dir(text: str) -> Path:
    """A folder that exists."""
    path = Path(text)
    if not path.is_dir():
        raise _bad("no such folder", text)
    return path


def _writable_problem(path: Path) -> str | None:
    """Why ``path`` cannot be (made into) a writable folder, or None. Creates nothing."""
    if path.exists():
        if not path.is_dir():
            return "is a file, not a folder"
        if not os.access(path, os.W_OK | os.X_OK):
            return "folder is not writable"
        return None
    parent = path.absolute().parent
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir():
        return f"cannot create a folder under the file {parent}"
    if not os.access(parent, os.W_OK | os.X_OK):
        return f"cannot create it: {parent} is not writable"
    return None


def writable_dir(text: str) -> Path:
    """An output folder that exists and is writable, or that can be created (checked, not created)."""
    if not text.strip():
        raise _bad("must name a folder", text)
    path = Path(text)
    problem = _writable_problem(path)
    if problem:
        raise _bad(problem, text)
    return path


def holds_result(path: Path) -> bool:
    """``path`` is a folder with something in it (the staging folders a killed run left behind do not count)."""
    try:
        return path.is_dir() and any(not entry.name.startswith(STAGING_PREFIX) for entry in path.iterdir())
    except OSError:
        return False


def resolve_output_dir(path: Path, overwrite: bool = False, field: str = "--out") -> tuple[Path, str | None]:
    """The folder a run writes to, and a note for the user when it is not ``path``.

    ``path`` itself when it is new, empty, or ``overwrite`` is set (files of the same name are then replaced);
    otherwise ``path`` holds an earlier result, which is kept: the run writes to the first of ``path-2``,
    ``path-3``, ... that is new or empty, and the note says so.
    """
    if overwrite or not holds_result(path):
        return path, None
    base = path if path.name else path.absolute()
    if not base.name:
        raise DPStreamInputError(field, "holds an earlier result and has no name to write beside "
                                        "(give another folder, or --overwrite)", str(path))
    n = 2
    while True:
        beside = base.with_name(f"{base.name}-{n}")
        if not beside.exists() or (beside.is_dir() and not holds_result(beside)):
            return beside, (f"{path} holds an earlier result, kept: writing to {beside} instead "
                            "(--overwrite replaces files there)")
        n += 1


def prepare_output_dir(path: Path, field: str = "--out") -> Path:
    """Create the output folder and write (then remove) a probe file in it, before any work starts.

    Raises :class:`DPStreamInputError` naming ``field`` when the folder cannot be created or written
    (a file in its place, a read-only parent, a read-only file system, a full disk).
    """
    problem = _writable_problem(path)
    if problem:
        raise DPStreamInputError(field, problem, str(path))
    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=path, prefix=STAGING_PREFIX + "probe-") as fh:
            fh.write(b"probe")
    except OSError as exc:
        raise DPStreamInputError(field, f"cannot write there ({exc.strerror or exc})", str(path)) from exc
    return path


def _move_into(source: Path, target: Path) -> list[Path]:
    """Move every entry of ``source`` into ``target`` (merging folders, replacing files); the moved files."""
    moved: list[Path] = []
    for entry in sorted(source.iterdir()):
        destination = target / entry.name
        if entry.is_dir() and destination.is_dir():
            moved += _move_into(entry, destination)
            entry.rmdir()
        else:
            if destination.is_dir():
                shutil.rmtree(destination)
            os.replace(entry, destination)
            moved += [destination] if destination.is_file() else sorted(p for p in destination.rglob("*")
                                                                        if p.is_file())
    return moved


@contextmanager
def staged_output_dir(final: Path, written: list[Path] | None = None) -> Iterator[Path]:
    """A staging folder inside ``final`` for a run's outputs.

    When the ``with`` block ends normally, every file is moved into ``final`` (same file system, so each
    move is a rename) and listed in ``written``; when it raises, the staging folder is removed and
    ``final`` keeps what it held before (for example a previous complete run). A killed process leaves
    only a folder named ``.dpstream-partial-*``.
    """
    stage = Path(tempfile.mkdtemp(prefix=STAGING_PREFIX, dir=final))
    try:
        yield stage
    except BaseException:  # also KeyboardInterrupt, and SIGTERM (dpstream.interrupts.Terminated)
        shutil.rmtree(stage, ignore_errors=True)
        raise
    moved = _move_into(stage, final)
    stage.rmdir()
    if written is not None:
        written.extend(moved)


def comma_list(item: Callable[[str], T]) -> Callable[[str], list[T]]:
    """A type for ``a,b,c``: each item converted by ``item`` (use with ``nargs='+'`` and :class:`Flatten`)."""
    def convert(text: str) -> list[T]:
        parts = [p.strip() for p in text.split(",")]
        if any(not p for p in parts):
            raise _bad("empty item in a comma-separated list", text)
        return [item(p) for p in parts]

    convert.__name__ = f"comma_list({getattr(item, '__name__', 'item')})"
    return convert


class Flatten(argparse.Action):
    """Store the items of one or more comma lists as one list (``--eps 0.5,1 2`` -> [0.5, 1.0, 2.0])."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: str | Sequence[Any] | None, option_string: str | None = None) -> None:
        items: list[Any] = []
        for value in values if isinstance(values, list) else [values]:
            items += value if isinstance(value, list) else [value]
        setattr(namespace, self.dest, items)
