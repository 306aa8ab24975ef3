"""`dpstream.interrupts` in-process: which exception a signal raises and where, and pools that ignore Ctrl-C.

The end-to-end checks (a whole command interrupted through its process group) are in test_interrupts.py.
Deterministic except for timing (generous deadlines).
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import signal
import threading
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, nullcontext
from typing import Any

import pytest

from dpstream.interrupts import QuietPool, Terminated, interrupts_raise, quiet_worker, stop_pool


def _signal_later(signum: int, after: float) -> None:
    threading.Timer(after, os.kill, (os.getpid(), signum)).start()


def test_sigterm_raises_terminated_inside_the_block_and_the_handlers_come_back() -> None:
    before = signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)
    with pytest.raises(Terminated), interrupts_raise():
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)  # interrupted at once
    with pytest.raises(KeyboardInterrupt) as info, interrupts_raise():
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(5)
    assert not isinstance(info.value, Terminated)
    assert (signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)) == before


def test_an_ignored_sigint_stays_ignored() -> None:
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        with interrupts_raise():
            assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.1)  # nothing happens
    finally:
        signal.signal(signal.SIGINT, previous)


ARMED: list[bool] = []


def _busy_gc_callback(phase: str, info: dict[str, Any]) -> None:
    """Python code running inside the collector, where the signal lands: 0.5 s, the first time only."""
    if ARMED:
        ARMED.clear()
        deadline = time.monotonic() + 0.5
        while time.monotonic() < deadline:
            pass


def _collect_for(seconds: float) -> None:
    """A loop that collects garbage now and then (the first collection runs the busy callback). Young objects only:
    a full collection in a big test process (a pytest worker late in the run) takes longer than the pause, so a
    redelivered signal would keep landing in the callback of the next collection, which is not the case tested."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        gc.collect(0)
        time.sleep(0.01)


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")  # the default handler's lost one
@pytest.mark.parametrize("ours", [True, pytest.param(False, marks=pytest.mark.slow)],
                         ids=["interrupts_raise", "python-default-handler"])
def test_a_signal_that_lands_in_a_gc_callback_still_interrupts(ours: bool) -> None:
    """Python swallows an exception raised in a gc callback (JAX has one): the default handler's KeyboardInterrupt
    is lost there and the loop runs to its end; ours is delivered again a moment later, outside the callback."""
    ARMED[:] = [True]
    gc.callbacks.append(_busy_gc_callback)
    context: AbstractContextManager[Any] = interrupts_raise() if ours else nullcontext()
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        started = time.monotonic()
        with context:
            _signal_later(signal.SIGINT, 0.2)  # lands while the callback runs (0.5 s from the first collection)
            try:
                _collect_for(6.0)  # long enough for a loaded machine (the default handler's run waits it out)
                interrupted = False
            except KeyboardInterrupt:
                interrupted = True
        assert interrupted is ours
        assert (time.monotonic() - started < 5.0) is ours  # ours: in about 0.5 s (at the callback's end)
    finally:
        gc.callbacks.remove(_busy_gc_callback)
        signal.signal(signal.SIGINT, previous)


def _sleep_and_report(seconds: float) -> int:
    time.sleep(seconds)
    return os.getpid()


@pytest.fixture
def pool() -> Iterator[QuietPool]:
    executor = QuietPool(max_workers=2, mp_context=multiprocessing.get_context("spawn"), initializer=quiet_worker)
    try:
        yield executor
    finally:
        stop_pool(executor)


@pytest.mark.slow
def test_pool_workers_ignore_ctrl_c_and_are_stopped_at_once(pool: QuietPool) -> None:
    running = [pool.submit(_sleep_and_report, 1.5) for _ in range(2)]  # one per worker
    time.sleep(1.0)  # both workers up and inside their task
    workers = list(pool._processes.values())
    assert len(workers) == 2
    for worker in workers:  # what a terminal does to the whole process group
        assert worker.pid is not None
        os.kill(worker.pid, signal.SIGINT)
    pids = {w.pid for w in workers}
    assert {r.result(timeout=60) for r in running} == pids  # no KeyboardInterrupt in either worker
    long = pool.submit(_sleep_and_report, 60.0)
    time.sleep(0.2)
    started = time.monotonic()
    stop_pool(pool)
    assert time.monotonic() - started < 5 and not any(w.is_alive() for w in workers)
    assert long.cancelled() or long.done()
