"""Samplers: the one interface the statistical audits draw runs from, and how trials are spread.

A *sampler* answers ``sample(inputs, runs, seed) -> float array of shape (runs, k)``: one row per
independent run of a *fresh* mechanism on the input stream ``inputs``, k numbers per run (for a
counter its T releases; for other algorithms a featurisation of the transcript). The same
``(inputs, runs, seed)`` must give the same array. That is the whole protocol (:class:`Sampler`).

Adapters:

* :class:`FactorySampler` — a Python factory ``factory(noise) -> mechanism`` drawing from our seeded
  source (run i draws from ``InsecureSeededNoise.independent(seed, runs)[i]``, as
  :func:`~dpstream.audit.protocol.sample_transcripts` does); transcripts become rows with ``encode``.
* :class:`SeededFactorySampler` — the **seed hook** for an implementation with its own randomness:
  ``factory_from_seed(seed: int) -> mechanism``; run i gets ``derived_seed(seed, i)``, so a failing
  audit of an outside implementation can be replayed exactly.
* vectorised samplers of our own algorithms: :mod:`dpstream.audit.vectorised`.
* the conformance kit's child-process sampler (``{"op": "run", ...}`` messages) follows the same
  protocol; it must be picklable and start its child lazily in each process.

Trials: :func:`run_trials` cuts ``runs`` into chunks of a fixed size (``sampler.chunk`` if set, else
:data:`DEFAULT_CHUNK`); chunk c is sampled with seed ``derived_seed(seed, "chunk", c)``. Chunks go to
any :class:`concurrent.futures.Executor` (local processes: :func:`trial_executor`; a Dask cluster:
``dask.distributed.Client(address).get_executor()``) and are concatenated in order, so the result
for a given seed is the same for 1, 2 or N workers, and on Dask. Samplers that the standard pickle
cannot send (lambdas, closures) are sent with cloudpickle when it is installed (it comes with Dask).
"""

from __future__ import annotations

import contextlib
import multiprocessing
import pickle
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Executor
from typing import Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from dpstream.audit.protocol import Encoder, MechanismFactory, flatten, run_once
from dpstream.convention import Streaming
from dpstream.errors import DPStreamInputError, require_int_at_least
from dpstream.insecure import InsecureSeededNoise
from dpstream.interrupts import QuietPool, quiet_worker, stop_pool
from dpstream.noise import derived_seed

__all__ = [
    "DEFAULT_CHUNK",
    "FactorySampler",
    "Sampler",
    "SeededFactorySampler",
    "run_reduced",
    "run_trials",
    "run_trials_until",
    "trial_executor",
]

FloatArray = npt.NDArray[np.float64]
DEFAULT_CHUNK = 2000
"""Runs per chunk for samplers without their own ``chunk`` (part of what a seed means: keep it fixed)."""


@runtime_checkable
class Sampler(Protocol):
    """``sample(inputs, runs, seed)``: ``runs`` independent runs on ``inputs``, one row of k floats each."""

    def sample(self, inputs: Sequence[Any], runs: int, seed: int) -> FloatArray: ...


def _rows(transcripts: Sequence[Sequence[Any]], encode: Encoder) -> FloatArray:
    rows = [encode(t) for t in transcripts]
    if not rows:
        return np.zeros((0, 0), dtype=np.float64)
    return np.asarray(np.stack(rows), dtype=np.float64)


class FactorySampler:
    """Runs of ``factory(noise)`` on our seeded source (see the module docstring)."""

    def __init__(self, factory: MechanismFactory, encode: Encoder = flatten) -> None:
        self.factory = factory
        self.encode = encode

    def sample(self, inputs: Sequence[Any], runs: int, seed: int) -> FloatArray:
        runs = require_int_at_least("runs", runs, 1)
        sources = InsecureSeededNoise.independent(seed, runs)
        return _rows([run_once(self.factory, inputs, s) for s in sources], self.encode)


class SeededFactorySampler:
    """The seed hook: ``factory_from_seed(seed) -> mechanism`` with its own randomness.

    Run i of ``sample(inputs, runs, seed)`` is ``factory_from_seed(derived_seed(seed, i))`` stepped
    through ``inputs``. The mechanism must be a deterministic function of that seed (a fresh generator
    per call, nothing shared between runs); then every audit of it can be replayed.
    """

    def __init__(self, factory_from_seed: Callable[[int], Streaming], encode: Encoder = flatten) -> None:
        self.factory_from_seed = factory_from_seed
        self.encode = encode

    def sample(self, inputs: Sequence[Any], runs: int, seed: int) -> FloatArray:
        runs = require_int_at_least("runs", runs, 1)
        out = []
        for i in range(runs):
            mechanism = self.factory_from_seed(derived_seed(seed, i))
            out.append([mechanism.step(x) for x in inputs])
        return _rows(out, self.encode)


def _chunks(runs: int, size: int) -> list[int]:
    return [min(size, runs - start) for start in range(0, runs, size)]


def _sample_chunk(sampler: Any, inputs: Sequence[Any], runs: int, seed: int) -> FloatArray:
    if isinstance(sampler, bytes):
        sampler = pickle.loads(sampler)
    return np.asarray(sampler.sample(inputs, runs, seed), dtype=np.float64)


def _portable(obj: Any) -> Any:
    """The object (a sampler, a reducer) itself when pickle can send it, else its cloudpickle bytes, else None."""
    try:
        pickle.dumps(obj)
        return obj
    except (pickle.PicklingError, AttributeError, TypeError):
        pass
    try:
        import cloudpickle  # type: ignore[import-untyped]
    except ImportError:
        return None
    return cloudpickle.dumps(obj)


def _reduce_chunk(sampler: Any, inputs: Sequence[Any], runs: int, seed: int, reduce: Any) -> npt.NDArray[np.int64]:
    if isinstance(reduce, bytes):
        reduce = pickle.loads(reduce)
    rows = _sample_chunk(sampler, inputs, runs, seed)
    if rows.shape[0] != runs:
        raise DPStreamInputError("sampler", f"returned {rows.shape[0]} rows for {runs} runs", rows.shape)
    return np.asarray(reduce(rows), dtype=np.int64)


def _over_chunks(task: Callable[..., Any], sampler: Sampler, inputs: Sequence[Any], runs: int, seed: int,
                 executor: Executor | None, *extra: Any) -> list[Any]:
    """``task(sampler, inputs, size, chunk_seed, *extra)`` for every chunk, in chunk order: here, or on the
    executor when the sampler and the extras can travel. Chunk sizes are ``sampler.chunk`` and chunk seeds come
    from (seed, chunk index), never from who runs them, so the results do not depend on the executor."""
    runs = require_int_at_least("runs", runs, 1)
    size = require_int_at_least("chunk", int(getattr(sampler, "chunk", DEFAULT_CHUNK)), 1)
    sizes = _chunks(runs, size)
    seeds = [derived_seed(seed, "chunk", c) for c in range(len(sizes))]
    inputs = list(inputs)
    portable = [_portable(x) for x in (sampler, *extra)] if executor is not None and len(sizes) > 1 else [None]
    if any(x is None for x in portable):
        return [task(sampler, inputs, n, s, *extra) for n, s in zip(sizes, seeds, strict=True)]
    futures = [executor.submit(task, *portable[:1], inputs, n, s, *portable[1:])  # type: ignore[union-attr]
               for n, s in zip(sizes, seeds, strict=True)]
    return [f.result() for f in futures]


def run_reduced(
    sampler: Sampler, inputs: Sequence[Any], runs: int, seed: int, reduce: Callable[[FloatArray], Any],
    executor: Executor | None = None,
) -> npt.NDArray[np.int64]:
    """The sum over chunks of ``reduce(rows of the chunk)`` (integer counts): the chunks and seeds of
    :func:`run_trials`, so for a ``reduce`` that adds up over rows (how many rows an event contains) the result
    is ``reduce(run_trials(...))`` whatever the executor. Each worker samples *and* reduces its chunk and sends
    back the counts only, so a cluster is not limited by moving the rows."""
    parts = _over_chunks(_reduce_chunk, sampler, inputs, runs, seed, executor, reduce)
    return np.asarray(np.sum(parts, axis=0, dtype=np.int64), dtype=np.int64)


def run_trials(
    sampler: Sampler, inputs: Sequence[Any], runs: int, seed: int, executor: Executor | None = None
) -> FloatArray:
    """``runs`` runs on ``inputs`` in fixed chunks (seeds from (seed, chunk index)); same result for any executor."""
    parts = _over_chunks(_sample_chunk, sampler, inputs, runs, seed, executor)
    out = np.concatenate(parts, axis=0)
    if out.shape[0] != runs:
        raise DPStreamInputError("sampler", f"returned {out.shape[0]} rows for {runs} runs", out.shape)
    return np.asarray(out, dtype=np.float64)


def run_trials_until(sampler: Sampler, inputs: Sequence[Sequence[Any]], runs: int, seeds: Sequence[int],
                     executor: Executor | None, deadline: float, *, looks: Sequence[float] = (),
                     look: Callable[[list[FloatArray]], bool] | None = None) -> list[FloatArray]:
    """:func:`run_trials` of ``runs`` runs on each of ``inputs`` (input i with ``seeds[i]``), round by round (chunk
    c of every input is round c), no round begun that would end after ``deadline`` (``time.perf_counter()``) at the
    pace of the round before it: every input gets the same number of rows, the first ones :func:`run_trials` gives
    it (all ``runs`` unless the deadline cut them; an empty array if the first round was not begun). A machine
    that got busy after the runs were planned, or a program slower than its probe, shortens them instead of
    carrying them past the time they were planned for. An executor's chunks are all submitted at once; a round not
    done when the deadline cuts is cancelled with every later one. ``look`` is called with the rows so far after the
    first round that ends at or after each time of ``looks`` (``time.perf_counter()``, increasing; once per round);
    where it returns True no further round is begun (a sequential test that has decided)."""
    runs = require_int_at_least("runs", runs, 1)
    size = require_int_at_least("chunk", int(getattr(sampler, "chunk", DEFAULT_CHUNK)), 1)
    sizes = _chunks(runs, size)
    lists = [list(x) for x in inputs]
    parts: list[list[FloatArray]] = [[] for _ in lists]
    futures = None
    if executor is not None and (portable := _portable(sampler)) is not None:
        futures = [[executor.submit(_sample_chunk, portable, x, n, derived_seed(seeds[i], "chunk", c))
                    for i, x in enumerate(lists)] for c, n in enumerate(sizes)]

    def rows() -> list[FloatArray]:
        return [np.asarray(np.concatenate(r, axis=0), dtype=np.float64) if r else np.zeros((0, 0)) for r in parts]

    pending = sorted(looks)
    pace, last = 0.0, time.perf_counter()
    for c, n in enumerate(sizes):
        ready = futures is not None and all(f.done() for f in futures[c])
        stop = not ready and time.perf_counter() + pace > deadline
        if not stop and c and pending and last >= pending[0] and look is not None:
            pending = [t for t in pending if t > last]
            stop = look(rows())
        if stop:
            for later in futures[c:] if futures is not None else ():
                for f in later:
                    f.cancel()
            break
        for i, x in enumerate(lists):
            parts[i].append(futures[c][i].result() if futures is not None else
                            _sample_chunk(sampler, x, n, derived_seed(seeds[i], "chunk", c)))
        now = time.perf_counter()
        pace, last = now - last, now
    return rows()


@contextlib.contextmanager
def trial_executor(workers: int = 1, scheduler: str | None = None) -> Iterator[Executor | None]:
    """The executor trials run on: None (this process) for 1 worker, local processes for more,
    or the Dask cluster at ``scheduler`` (``dask.distributed.Client(scheduler).get_executor()``)."""
    if scheduler:
        try:
            from dask.distributed import Client
        except ImportError as exc:  # pragma: no cover - depends on the installed extras
            raise DPStreamInputError("scheduler", "needs dask.distributed: pip install 'dpstream[dask]'",
                                     scheduler) from exc
        with Client(scheduler) as client:  # type: ignore[no-untyped-call]
            yield client.get_executor()
        return
    workers = require_int_at_least("workers", workers, 1)
    if workers == 1:
        yield None
        return
    with QuietPool(max_workers=workers, mp_context=multiprocessing.get_context("spawn"),
                   initializer=quiet_worker) as pool:
        try:
            yield pool
        except BaseException:  # a Ctrl-C (or an error) stops the workers now, not when their chunks end
            stop_pool(pool)
            raise
