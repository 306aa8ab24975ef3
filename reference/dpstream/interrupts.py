"""Interrupts of the command line: Ctrl-C and SIGTERM stop a command quickly, in one line, leaving nothing behind.

* :func:`interrupts_raise` makes Ctrl-C raise ``KeyboardInterrupt`` and SIGTERM :class:`Terminated` (a
  ``KeyboardInterrupt``) for the time of a command, so that the code a Ctrl-C runs (``finally`` blocks, context
  managers: a staging folder removed, workers and child programs stopped, finished work kept and marked partial)
  also runs when the process is terminated. An exception raised inside a garbage-collector callback or a
  ``__del__`` method is swallowed by Python ("Exception ignored in ..."), and the command would run on (JAX's
  ``_xla_gc_callback`` did so in ``reproduce tabular-adult``): there the signal is delivered again a moment later.
* Worker processes of a pool (:class:`QuietPool`) never see Ctrl-C: a terminal sends it to the whole process
  group, but they are started with SIGINT blocked (so also while Python starts in them) and their initializer
  (:func:`quiet_worker`) ignores it; the parent decides, and stops them. On SIGTERM they run the hooks registered
  with :func:`at_stop` (e.g. killing the programs they started) and exit at once, without a traceback.
* :func:`stop_pool` stops a ``ProcessPoolExecutor`` at once: queued work cancelled, running workers terminated and
  reaped (``shutdown(wait=True)`` would wait for every running task to end).
* :func:`exit_now` ends an interrupted process after its last line, without the interpreter's shutdown, when
  :func:`needs_quick_exit` (threads an interrupt cut short, JAX's, crash it).
"""

from __future__ import annotations

import gc
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from contextlib import contextmanager, suppress
from types import FrameType
from typing import ParamSpec, TypeVar

__all__ = ["EXIT_INTERRUPTED", "EXIT_TERMINATED", "QuietPool", "Terminated", "at_stop", "exit_now", "interrupts_raise",
           "needs_quick_exit", "quiet_worker", "stop_pool"]

P = ParamSpec("P")
R = TypeVar("R")

EXIT_INTERRUPTED = 130
"""Exit status after Ctrl-C (128 + SIGINT), as a shell reports it."""
EXIT_TERMINATED = 143
"""Exit status after SIGTERM (128 + SIGTERM)."""
STOP_WAIT = 2.0
"""Seconds a terminated worker gets to exit before it is killed."""
REDELIVER = 0.05
"""Seconds after which a signal that arrived where its exception would be swallowed is delivered again."""

_HOOKS: list[Callable[[], None]] = []


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread like a Ctrl-C (see :func:`terminate_as_interrupt`)."""


def _swallowed_here(frame: FrameType | None) -> bool:
    """Whether an exception raised in ``frame`` would be swallowed: a garbage-collector callback, a ``__del__``."""
    if frame is None:
        return False
    callbacks = {getattr(callback, "__code__", None) for callback in gc.callbacks}
    return frame.f_code in callbacks or frame.f_code.co_name == "__del__"


_PENDING: dict[int, threading.Timer] = {}
"""The redeliveries scheduled, by signal (at most one each; cancelled when :func:`interrupts_raise` ends)."""


def _deliver(signum: int) -> None:
    _PENDING.pop(signum, None)
    os.kill(os.getpid(), signum)


def _redeliver(signum: int) -> None:
    if signum not in _PENDING:
        timer = _PENDING[signum] = threading.Timer(REDELIVER, _deliver, (signum,))
        timer.daemon = True
        timer.start()


def _raise_interrupt(signum: int, frame: FrameType | None) -> None:
    if _swallowed_here(frame):
        _redeliver(signum)
        return
    if signum == signal.SIGTERM:
        raise Terminated("terminated")
    raise KeyboardInterrupt


@contextmanager
def interrupts_raise() -> Iterator[None]:
    """While the block runs, SIGINT raises ``KeyboardInterrupt`` and SIGTERM :class:`Terminated` in the main thread
    (never where Python would swallow them: see the module docstring). Elsewhere than the main thread: no change."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {signum: signal.signal(signum, _raise_interrupt) for signum in (signal.SIGINT, signal.SIGTERM)
                if signal.getsignal(signum) is not signal.SIG_IGN}  # (a job started with them ignored keeps that)
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
            timer = _PENDING.pop(signum, None)
            if timer is not None:
                timer.cancel()


def at_stop(hook: Callable[[], None]) -> None:
    """Run ``hook`` when a worker is terminated (:func:`quiet_worker`), before it exits (it must not block)."""
    if hook not in _HOOKS:
        _HOOKS.append(hook)


def _stop_worker(signum: int, frame: FrameType | None) -> None:
    for hook in _HOOKS:
        with suppress(Exception):
            hook()
    os._exit(128 + signum)


def quiet_worker() -> None:
    """Initializer of a pool's worker processes: ignore SIGINT, exit quietly on SIGTERM (after the hooks)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _stop_worker)


@contextmanager
def _sigint_blocked() -> Iterator[None]:
    """SIGINT held back in this thread (a Ctrl-C meanwhile is delivered when the block ends); processes started
    here inherit the blocked signal."""
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


class QuietPool(ProcessPoolExecutor):
    """A ``ProcessPoolExecutor`` whose workers never receive Ctrl-C (see the module docstring): they are started,
    in ``submit``, with SIGINT blocked. Give them :func:`quiet_worker` as (part of) their initializer and stop the
    pool with :func:`stop_pool` on an interrupt."""

    def submit(self, fn: Callable[P, R], /, *args: P.args, **kwargs: P.kwargs) -> Future[R]:
        with _sigint_blocked():
            return super().submit(fn, *args, **kwargs)


def stop_pool(pool: ProcessPoolExecutor) -> None:
    """Stop ``pool`` now: cancel what has not started, terminate the running workers and reap them."""
    workers = list((getattr(pool, "_processes", None) or {}).values())  # (Python 3.14: pool.terminate_workers())
    manager = getattr(pool, "_executor_manager_thread", None)
    pool.shutdown(wait=False, cancel_futures=True)
    for worker in workers:
        if worker.is_alive():
            worker.terminate()
    for worker in workers:
        worker.join(STOP_WAIT)
        if worker.is_alive():
            worker.kill()
            worker.join(STOP_WAIT)
    if manager is not None:  # it closes the pool's pipes once it sees the workers gone; the interpreter's exit
        manager.join(STOP_WAIT)  # wakes it through one of them, which must not be closing at that moment


def needs_quick_exit() -> bool:
    """Whether an interrupted process should skip the interpreter's shutdown: JAX is loaded (``reproduce
    tabular-adult`` fits PGM with it), whose threads a Ctrl-C cut short crash the shutdown (a segmentation fault
    after the interrupted line, 2 runs in 3 before this)."""
    return "jax" in sys.modules


def exit_now(status: int) -> None:
    """End the process with ``status`` at once: flush the standard streams, then ``os._exit`` (no interpreter
    shutdown: everything to clean up must already be cleaned up, as after a Ctrl-C it is)."""
    for stream in (sys.stdout, sys.stderr):
        with suppress(OSError, ValueError):
            stream.flush()
    os._exit(status)
