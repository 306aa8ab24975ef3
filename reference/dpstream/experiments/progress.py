"""Progress of long experiment loops: a ``tqdm`` bar on a terminal, log lines elsewhere.

The bar is shown when stderr is a terminal and ``CI`` is not set. Otherwise (a log file, CI, a pipe)
:func:`progress` prints to stderr a start line saying what runs and how much, a line at each further
tenth of the work with the elapsed time (at most one every ``LOG_INTERVAL`` seconds, so short runs print
only the first and last lines), a line after any step once ``HEARTBEAT`` seconds passed without one (slow
steps after fast ones), and a closing line, so a log shows that a run is alive.
"""

from __future__ import annotations

import os
import sys
import time
from types import TracebackType
from typing import Any, Protocol

__all__ = ["HEARTBEAT", "LOG_INTERVAL", "LogProgress", "Progress", "bar_enabled", "progress"]

LOG_INTERVAL = 5.0
"""Least seconds between two tenth-of-the-work lines of :class:`LogProgress`."""
HEARTBEAT = 60.0
"""Seconds after which any finished step prints a line of :class:`LogProgress`."""


class Progress(Protocol):
    """What the experiments use of a progress bar (``tqdm`` has it)."""

    def update(self, n: int = 1) -> object: ...

    def set_postfix_str(self, s: str = "", refresh: bool = True) -> None: ...

    def close(self) -> None: ...

    def __enter__(self) -> Any: ...

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 tb: TracebackType | None) -> object: ...


def bar_enabled() -> bool:
    """A live bar only on a terminal and outside CI."""
    return not os.environ.get("CI") and sys.stderr.isatty()


class LogProgress:
    """Start line, a line per tenth of ``total`` (elapsed time, last postfix; throttled), end line."""

    def __init__(self, total: int, desc: str, what: str, unit: str) -> None:
        self.total, self.desc, self.unit = max(int(total), 0), desc, unit
        self.done = 0
        self.postfix = ""
        self.started = self._last = time.monotonic()
        self._next_tenth = 1
        self._closed = False
        self._say(f"{what} ({self.total} {unit}s)")

    def _say(self, text: str) -> None:
        print(f"{self.desc}: {text}", file=sys.stderr, flush=True)

    def update(self, n: int = 1) -> None:
        self.done += n
        crossed = False
        while self.total and self._next_tenth <= 10 and self.done * 10 >= self._next_tenth * self.total:
            crossed = self._next_tenth < 10
            self._next_tenth += 1
        now = time.monotonic()
        if self.total and ((crossed and now - self._last >= LOG_INTERVAL) or now - self._last >= HEARTBEAT):
            self._last = now
            self._say(f"{self.done * 100 // self.total}% ({self.done}/{self.total} {self.unit}s, "
                      f"{now - self.started:.0f} s){f'; {self.postfix}' if self.postfix else ''}")

    def set_postfix_str(self, s: str = "", refresh: bool = True) -> None:
        self.postfix = s

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._say(f"done, {self.done}/{self.total} {self.unit}s in {time.monotonic() - self.started:.0f} s")

    def __enter__(self) -> LogProgress:
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 tb: TracebackType | None) -> None:
        if kind is None:
            self.close()


def progress(total: int, desc: str, what: str, unit: str = "step") -> Progress:
    """A ``tqdm`` bar on a terminal (``what`` is printed above it), else :class:`LogProgress`.

    ``desc`` is the experiment's name, ``what`` one line saying what runs (e.g. "3 methods x 4 streams").
    """
    if not bar_enabled():
        return LogProgress(total, desc, what, unit)
    from tqdm import tqdm

    print(f"{desc}: {what}", file=sys.stderr, flush=True)
    bar: Progress = tqdm(total=total, desc=desc, unit=unit, file=sys.stderr)
    return bar
