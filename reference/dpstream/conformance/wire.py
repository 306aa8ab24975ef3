"""The harness side of the wire protocol: drive a program under test through its stdin/stdout.

:class:`Program` starts the child process, writes one JSON object per line and reads replies with a
timeout. Everything the program can do wrong on the wire (exit, hang, print something that is not a
JSON object, answer with the wrong shape) becomes a :class:`ProtocolError`, never a harness traceback.
The program's stderr is kept (the last lines) for the report.

Reads go through a thread that drains stdout into a queue, so the harness can write many requests
ahead (:meth:`Program.run_many`) without a pipe deadlock. Every running program is known to
:func:`kill_all`, which an interrupted run (and a terminated worker process) calls, so that no
program under test outlives the harness.

**Slow is not broken.** An answer is awaited for the timeout, scaled to the work asked for (a ``runs`` message of N
runs gets N / :data:`RUNS_PER_TIMEOUT` timeouts, and at least :data:`SPEED_MARGIN` times what N runs took this
program before: its measured speed), and then, while the program still runs, :data:`PATIENCE` times as long again
before a timeout is declared: a busy machine makes a correct program late, and a late answer is noted
(:attr:`Program.late`), not an error. **A broken program is never spoken to again:** every :class:`ProtocolError`
this class raises (a timeout, a crash, bad JSON, a reply of the wrong shape) first kills the program, so a reply it
might still write can never be read as the answer to a later request; the next check starts a fresh copy.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import queue
import subprocess
import threading
import time
import weakref
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any, cast

from dpstream.interrupts import at_stop
from dpstream.noise import DrawKind

__all__ = [
    "PATIENCE",
    "PROTOCOL_VERSION",
    "Hello",
    "Program",
    "ProtocolError",
    "Reply",
    "kill_all",
    "protocol_schema",
    "validator",
]

PROTOCOL_VERSION = 1
STDERR_LINES = 200
RUNS_PER_TIMEOUT = 1000
"""A ``runs`` message of N runs is given N / RUNS_PER_TIMEOUT times the answer timeout (at least one timeout)."""
SPEED_MARGIN = 20.0
"""A ``runs`` message is also given this many times what its runs took the same program before (measured speed)."""
WRITE_BATCH = 32
"""Own-mode ``run`` messages written to the program in one write (:meth:`Program.run_many`)."""
PATIENCE = 5.0
"""After the timeout, a still-running program gets this many times as long again before a timeout is declared."""


class ProtocolError(RuntimeError):
    """The program broke the protocol: ``kind`` is one of crash, timeout, bad-json, bad-reply."""

    def __init__(self, kind: str, message: str, stderr: str = "") -> None:
        self.kind = kind
        self.stderr = stderr
        super().__init__(f"{kind}: {message}")


@cache
def protocol_schema() -> dict[str, Any]:
    """The JSON Schema of protocol v1 (shipped as ``dpstream/conformance/protocol-v1.schema.json``)."""
    text = (resources.files("dpstream.conformance") / "protocol-v1.schema.json").read_text(encoding="utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


@cache
def validator(definition: str) -> Callable[[Any], list[str]]:
    """A checker for one message definition of the schema (``"hello_reply"``, ``"draw_request"``, ...):
    returns the violations (empty when the message is valid)."""
    import jsonschema

    schema = dict(protocol_schema())
    schema.pop("oneOf", None)
    schema["$ref"] = f"#/$defs/{definition}"
    checker = jsonschema.Draft202012Validator(schema)

    def errors(message: Any) -> list[str]:
        return [f"{'/'.join(str(p) for p in e.absolute_path) or '(top)'}: {e.message}"
                for e in checker.iter_errors(message)]

    return errors


@dataclass(frozen=True)
class Hello:
    implementation: str
    algorithms: tuple[str, ...]
    modes: tuple[str, ...]
    raw: Mapping[str, Any]
    ops: tuple[str, ...] = ()
    """Optional ops beyond protocol v1's (``"runs"``: a chunk of runs in one message)."""


@dataclass(frozen=True)
class Reply:
    """The end of one step or run: ``kind`` is "release", "releases" or "error", ``value`` its content; ``draws``:
    the draws reported with it in transcript mode (the raw JSON list; None when the reply has none)."""

    kind: str
    value: Any
    draws: Any = None


_EOF = object()
_KINDS = frozenset(kind.value for kind in DrawKind)
"""The draw kinds (the schema's ``draw.kind`` enum)."""


def _plain_draw_request(message: Mapping[str, Any]) -> bool:
    """Whether ``message`` meets the schema's ``draw_request`` (a fast path: the schema validator takes a tenth of a
    millisecond, and a vector of a synthesizer makes thousands of requests); False sends it to the validator."""
    draw = message.get("draw")
    return (isinstance(draw, dict) and isinstance(draw.get("site"), str) and bool(draw["site"])
            and draw.get("kind") in _KINDS and isinstance(draw.get("params"), dict))
def _plain_releases(message: Mapping[str, Any]) -> bool:
    """Whether ``message`` meets the schema's ``releases`` with no draws (the own-mode reply to ``run``: the fast
    path of :func:`_plain_draw_request`, for the statistical mode's hundreds of thousands of runs)."""
    return "draws" not in message and isinstance(message.get("releases"), list)


def _plain_runs(message: Mapping[str, Any]) -> bool:
    """Whether ``message`` meets the schema's ``runs_reply`` with no draws (see :func:`_plain_releases`)."""
    runs = message.get("runs")
    return "draws" not in message and isinstance(runs, list) and all(isinstance(r, list) for r in runs)


_PLAIN: dict[str, Callable[[Mapping[str, Any]], bool]] = {
    "draw_request": _plain_draw_request, "releases": _plain_releases, "runs_reply": _plain_runs}
"""Messages whose schema rules are checked directly when they hold (the validator only explains a failure)."""

_RUNNING: weakref.WeakSet[Program] = weakref.WeakSet()


def kill_all() -> None:
    """Kill every program this process started that is still running (an interrupt, a terminated worker)."""
    for program in list(_RUNNING):
        program.kill()


at_stop(kill_all)


READ_SIZE = 1 << 20
"""Bytes the reader thread asks of the program's stdout at a time. The parts of a line are joined once, when the line
ends: joining the line so far at every read (64 KiB, until 2026-11-29) copied a bulk reply of 20 MB (5000 runs of
002-alg2's crowd) about 300 times, and the harness waited 95 s of a 173 s transcript check on the reader thread for a
Rust program that makes 44000 such runs a second."""


class Program:
    """A program under test, started by :meth:`start` (or ``with Program(...) as p``)."""

    def __init__(self, command: Sequence[str], *, timeout: float = 10.0, cwd: str | None = None,
                 env: Mapping[str, str] | None = None) -> None:
        if not command:
            raise ValueError("empty command")
        self.command = list(command)
        self.timeout = timeout
        self.cwd = cwd
        self.env = dict(env) if env is not None else None
        self._process: subprocess.Popen[bytes] | None = None
        self._lines: queue.Queue[object] = queue.Queue()
        """Lists of lines of stdout, as the reader thread found them in one read (then _EOF)."""
        self._pending: deque[object] = deque()
        """Lines taken from the queue and not yet received."""
        self._stderr: deque[str] = deque(maxlen=STDERR_LINES)
        self.messages = 0
        """Messages written to the program."""
        self.replies = 0
        """Lines read from the program that were JSON objects."""
        self.late: list[float] = []
        """Seconds waited for each answer that came after the timeout, within the patience (slow, not broken)."""
        self._algorithm = ""
        self._per_run: dict[tuple[str, int], float] = {}
        """Measured seconds per run of the current algorithm, by stream length (the program's speed)."""

    # ------------------------------------------------------------------------------------ process
    def start(self) -> Program:
        try:
            self._process = subprocess.Popen(
                self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                cwd=self.cwd, env={**os.environ, **self.env} if self.env is not None else None)
        except OSError as exc:
            raise ProtocolError("crash", f"cannot start {self.command!r}: {exc}") from exc
        _RUNNING.add(self)
        threading.Thread(target=self._drain_stdout, daemon=True).start()
        threading.Thread(target=self._drain_stderr, daemon=True).start()
        return self

    def _drain_stdout(self) -> None:
        """Hands stdout to :meth:`receive` a block at a time (every complete line a read brought, in one list: one
        queue operation per block, not per line, which a fast program answering thousands of runs per second
        would otherwise spend most of the harness's time on)."""
        assert self._process is not None and self._process.stdout is not None
        stream = cast(io.BufferedReader, self._process.stdout)  # the file object, never its bare descriptor: a
        parts: list[bytes] = []  # descriptor closed with a killed program can be reused by the next program's pipe
        while True:
            try:
                block = stream.read1(READ_SIZE)
            except (OSError, ValueError):  # closed under us (the program killed)
                break
            if not block:
                break
            parts.append(block)
            if b"\n" not in block:  # a long line (a bulk reply) is joined once, when it ends
                continue
            lines = b"".join(parts).split(b"\n")
            rest = lines.pop()
            parts = [rest] if rest else []
            self._lines.put(lines)
        if parts:
            self._lines.put([b"".join(parts)])
        self._lines.put(_EOF)

    def _drain_stderr(self) -> None:
        assert self._process is not None and self._process.stderr is not None
        for line in self._process.stderr:
            self._stderr.append(line.decode("utf-8", "replace").rstrip("\n"))

    @property
    def stderr(self) -> str:
        return "\n".join(self._stderr)

    @property
    def alive(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def close(self) -> int | None:
        """Close stdin (end of input), wait for the exit; kill after the timeout. Returns the exit status."""
        process = self._process
        if process is None:
            return None
        try:
            if process.stdin is not None and not process.stdin.closed:
                process.stdin.close()
        except OSError:
            pass
        try:
            status = process.wait(timeout=self.timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            status = process.wait()
        return status

    def kill(self) -> None:
        """Stop the program at once (after a protocol error its state is unknown)."""
        process = self._process
        self._process = None
        if process is not None and process.poll() is None:
            process.kill()
            process.wait()

    def __enter__(self) -> Program:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------------------------ messages
    def send(self, message: Mapping[str, Any]) -> None:
        self.send_raw(json.dumps(message, allow_nan=False, separators=(",", ":")) + "\n")

    def send_raw(self, text: str) -> None:
        self.send_bytes(text.encode("utf-8"), 1)

    def send_bytes(self, data: bytes, messages: int) -> None:
        """Write ``data`` (``messages`` whole lines) to the program's input and flush it."""
        process = self._process
        if process is None or process.stdin is None:
            raise ProtocolError("crash", "the program is not running")
        try:
            process.stdin.write(data)
            process.stdin.flush()
        except (BrokenPipeError, OSError) as exc:
            raise ProtocolError("crash", f"the program closed its input ({self._status()})", self.stderr) from exc
        self.messages += messages

    def _status(self) -> str:
        process = self._process
        code = None if process is None else process.poll()
        return "still running" if code is None else f"exit status {code}"

    def broken(self, kind: str, message: str) -> ProtocolError:
        """The error to raise for a broken protocol; the program is killed first (its state, and what it may still
        write, are unknown: it is never spoken to again)."""
        error = ProtocolError(kind, message, self.stderr)
        self.kill()
        return error

    def receive(self, timeout: float | None = None) -> dict[str, Any]:
        """The next line of stdout as a JSON object (see the module docstring for the timeout and the patience)."""
        line = self._pending.popleft() if self._pending else self._next_block(
            self.timeout if timeout is None else timeout)
        if line is _EOF:
            if self._process is not None:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    self._process.wait(timeout=1.0)
            raise self.broken("crash", f"the program closed its output ({self._status()})")
        assert isinstance(line, bytes)
        try:
            message = json.loads(line)
        except (ValueError, RecursionError):  # RecursionError: nested too deeply for the parser
            raise self.broken("bad-json", f"not JSON: {line[:200]!r}") from None
        if not isinstance(message, dict):
            raise self.broken("bad-json", f"not a JSON object: {line[:200]!r}")
        self.replies += 1
        return message

    def _next_block(self, wait: float) -> object:
        """The first line of the next block from the reader thread (the rest kept for :meth:`receive`), or _EOF."""
        started = time.monotonic()
        try:
            block = self._lines.get(timeout=wait)
        except queue.Empty:
            block = None
            if self.alive:  # slow is not broken: wait once more, longer, before declaring a timeout
                with contextlib.suppress(queue.Empty):
                    block = self._lines.get(timeout=wait * PATIENCE)
                    self.late.append(time.monotonic() - started)
            if block is None:
                raise self.broken("timeout", f"no answer within {wait * (1 + PATIENCE):g} s (the timeout {wait:g} s, "
                                             f"then {PATIENCE:g} times as long again)") from None
        if block is _EOF:
            self._pending.append(_EOF)  # every later receive sees the end too
            return _EOF
        assert isinstance(block, list)
        self._pending.extend(block[1:])
        first: object = block[0]
        return first

    def _expect(self, message: dict[str, Any], *definitions: str) -> str:
        """The first of ``definitions`` whose top-level key is in ``message`` and whose schema it meets."""
        keys = {"hello_reply": "protocol", "ok": "ok", "error": "error", "draw_request": "draw",
                "release": "release", "releases": "releases", "runs_reply": "runs"}
        for definition in definitions:
            if keys[definition] in message:
                plain = _PLAIN.get(definition)
                if plain is not None and plain(message):
                    return definition  # the schema's rules, checked directly (thousands per vector or search)
                problems = validator(definition)(message)
                if problems:
                    raise self.broken("bad-reply", f"{definition}: {'; '.join(problems)}: {message!r}"[:500])
                return definition
        raise self.broken("bad-reply", f"expected one of {list(definitions)}, got {json.dumps(message)[:300]}")

    def hello(self) -> Hello:
        self.send({"op": "hello"})
        message = self.receive()
        self._expect(message, "hello_reply")
        ops = message.get("ops", [])
        return Hello(str(message["implementation"]), tuple(message["algorithms"]), tuple(message["modes"]), message,
                     tuple(str(o) for o in ops) if isinstance(ops, list) else ())

    def init(self, algorithm: str, params: Mapping[str, Any], noise: str, seed: int) -> str | None:
        """``None`` when the program accepted, else its error message."""
        self._algorithm = algorithm
        self.send({"op": "init", "algorithm": algorithm, "params": dict(params), "noise": noise, "seed": seed})
        message = self.receive()
        if self._expect(message, "ok", "error") == "error":
            return str(message["error"])
        return None

    def step(self, value: Any, answer: Callable[[Mapping[str, Any]], Any] | None) -> Reply:
        """One step; draw requests are answered by ``answer(draw)`` (``None``: own mode, draws are an error)."""
        self.send({"op": "step", "input": value})
        return self._until_reply(answer, "release")

    def run(self, inputs: Sequence[Any], answer: Callable[[Mapping[str, Any]], Any] | None = None) -> Reply:
        self.send({"op": "run", "inputs": list(inputs)})
        return self._until_reply(answer, "releases")

    def _until_reply(self, answer: Callable[[Mapping[str, Any]], Any] | None, final: str) -> Reply:
        while True:
            message = self.receive()
            kind = self._expect(message, "draw_request", final, "error")
            if kind == "draw_request":
                if answer is None:
                    raise self.broken("bad-reply", f"draw request in own mode: {message['draw']!r}")
                self.send({"value": answer(message["draw"])})
                continue
            return Reply(kind, message[kind], message.get("draws"))

    def runs(self, inputs: Sequence[Any], count: int) -> Reply:
        """The bulk op ``runs`` (announced in hello): ``count`` fresh runs on ``inputs`` in one message; the reply's
        value is the list of runs (each a list of releases), ``draws`` one list of draws per run in transcript
        mode."""
        key = (self._algorithm, len(inputs))
        expected = self._per_run.get(key, 0.0) * count * SPEED_MARGIN  # the program's measured speed
        started = time.monotonic()
        self.send({"op": "runs", "inputs": list(inputs), "count": count})
        message = self.receive(max(self.timeout * max(1.0, count / RUNS_PER_TIMEOUT), expected))
        kind = self._expect(message, "runs_reply", "error")
        if kind == "error":
            return Reply("error", message["error"])
        block = message["runs"]
        if len(block) != count:
            raise self.broken("bad-reply", f"'runs' asked {count} runs, got {len(block)}")
        draws = message.get("draws")
        if draws is not None and (not isinstance(draws, list) or len(draws) != count):
            raise self.broken("bad-reply", f"'runs' asked {count} runs, got draws for "
                                           f"{len(draws) if isinstance(draws, list) else 'none'}")
        self._per_run[key] = max(self._per_run.get(key, 0.0), (time.monotonic() - started) / count)
        return Reply("runs", block, draws)

    def run_many(self, inputs: Sequence[Any], count: int, window: int = 256) -> Iterable[Reply]:
        """``count`` own-mode ``run`` messages on the same inputs, written ahead by a thread (at most
        ``window`` unanswered, :data:`WRITE_BATCH` messages per write), yielding the replies in order."""
        line = json.dumps({"op": "run", "inputs": list(inputs)}, allow_nan=False, separators=(",", ":")) + "\n"
        data = line.encode("utf-8")
        batch = max(1, min(WRITE_BATCH, window // 2))
        answered = [0]
        room = threading.Condition()
        failure: list[BaseException] = []

        def write() -> None:
            sent = 0
            try:
                while sent < count:
                    with room:
                        while sent - answered[0] > window - batch and not failure:
                            room.wait(timeout=0.05)
                    k = min(batch, count - sent)
                    self.send_bytes(data * k, k)
                    sent += k
            except BaseException as exc:  # reported by the reader below
                failure.append(exc)

        writer = threading.Thread(target=write, daemon=True)
        writer.start()
        for _ in range(count):
            if failure and self._lines.empty() and not self._pending:
                raise failure[0]
            message = self.receive()
            answered[0] += 1
            if answered[0] % batch == 0:
                with room:
                    room.notify()
            kind = self._expect(message, "releases", "error", "draw_request")
            if kind == "draw_request":
                raise self.broken("bad-reply", "draw request in own mode")
            yield Reply(kind, message[kind], message.get("draws"))
        writer.join(timeout=self.timeout)
