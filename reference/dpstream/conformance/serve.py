"""``dpstream serve``: the reference implementation speaking the conformance protocol.

Every streaming entry of the catalog is served (``hello`` announces them). Noise modes:

* ``tape``: every draw becomes a ``{"draw": {...}}`` request answered by the harness with the
  tape's value (:class:`WireNoise`); the release is computed from it exactly as under
  :class:`~dpstream.insecure.TapeReplay`.
* ``own``: the reference draws itself, from ``InsecureSeededNoise(seed)`` (reproducible, for
  audits), or from ``SecureNoise`` with ``--secure`` (the seed is then ignored).
* ``transcript``: as ``own``, and every release comes with the draws made for it (site, kind, params, value:
  the tape's draw objects): ``{"release": R, "draws": [...]}`` for a step, ``{"releases": [...], "draws": [...]}``
  for a run, ``{"runs": [...], "draws": [[...], ...]}`` for the bulk op (docs/conformance.md, "Transcript mode").

``--plant LEAK`` (INSECURE, for measuring the checks' power) plants a mistake of known size into every run
(:mod:`dpstream.insecure.planted`: ``scale/<c>``, ``em*<c>``, ``shared``, ``noiseless``, ``score+<d>``, each
optionally ``:<regex>``, only at the matching sites): in own and transcript
mode the leaky source's values (a transcript reports the draws the algorithm asked for, with those values), in tape
mode the changed requests. ``--perturb SPEC`` (``dpstream serve --perturb all``) runs the reference under another
correct floating-point evaluation order (:class:`dpstream.arithmetic.PerturbedKernel`): it must still pass every
check (the perturbation self-test, docs/conformance.md "The error model").

``--as-printed`` serves the printed variants where the catalog has one (the corrected default
otherwise), which is how the kit shows itself catching a privacy bug without a second program.
Every line gets exactly one JSON object back, and the server keeps going: errors in a request (a blank
line, bytes that are not UTF-8, bad JSON (``NaN``, ``Infinity``, nesting too deep for the parser, a line longer
than :data:`MAX_LINE`), a JSON value that is not an object, an unknown op, invalid parameters or input)
are answered with ``{"error": ...}``; a failed step changes nothing.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import traceback
from collections.abc import Callable, Mapping
from typing import IO, Any

from dpstream.catalog import Entry, entries, entry
from dpstream.catalog.codecs import NUMBER
from dpstream.conformance.wire import PROTOCOL_VERSION
from dpstream.errors import DPStreamInputError, StateError, require_integer_value
from dpstream.insecure import InsecureSeededNoise, TapeRecorder
from dpstream.insecure.planted import PlantedLeak, PlantedNoise
from dpstream.noise import BaseNoiseSource, DrawKind, NoiseSource, Params, SecureNoise, derived_seed
from dpstream.tape import TapeError, value_from_json

__all__ = ["IMPLEMENTATION", "MAX_LINE", "MAX_RUNS", "LineTooLongError", "Server", "WireNoise",
           "describe", "serve"]

IMPLEMENTATION = "dpstream-reference"
MAX_LINE = 64 * 2**20
"""Longest request line read (bytes, newline included); a longer one is answered with an error and skipped."""
MAX_RUNS = 1_000_000
"""Largest ``count`` of one ``runs`` request (the statistical checks send 5000)."""
MAX_ERROR = 500
"""Longest error message sent (characters): a message quoting a huge value is cut."""


class LineTooLongError(ValueError):
    """The reader met a line longer than :data:`MAX_LINE` (and skipped it)."""


class WireError(RuntimeError):
    """The harness answered a draw request with something that is not a valid value."""


class WireNoise(BaseNoiseSource):
    """INSECURE (the harness chooses the noise): every draw asks the harness for its value."""

    def __init__(self, ask: Callable[[dict[str, Any]], Any]) -> None:
        self._ask = ask

    def _draw(self, site: str, kind: DrawKind, params: Params) -> Any:
        answer = self._ask({"draw": {"site": site, "kind": kind.value, "params": params}})
        if not isinstance(answer, dict) or set(answer) != {"value"}:
            raise WireError(f"expected {{\"value\": V}} for site {site!r}, got {answer!r}")
        try:
            return value_from_json(kind, answer["value"], params)
        except TapeError as exc:
            raise WireError(f"site {site!r}: {exc}") from exc


class Server:
    """The protocol state machine (one instance per connection)."""

    def __init__(self, read: Callable[[], str], write: Callable[[str], None], *, secure: bool = False,
                 as_printed: bool = False, plant: PlantedLeak | None = None) -> None:
        self._read = read
        self._write = write
        self.secure = secure
        self.as_printed = as_printed
        self.plant = plant
        self._entry: Entry | None = None
        self._params: Mapping[str, Any] = {}
        self._raw_params: Mapping[str, Any] = {}
        self._seed = 0
        self._bulk_calls = 0
        self._mode = "own"
        self._own: NoiseSource | None = None
        self._algorithm: Any = None
        self._recorder: TapeRecorder | None = None
        self._reported = 0

    def send(self, message: Mapping[str, Any]) -> None:
        """Write one JSON object line; a reply that is not JSON (a non-finite number) becomes an error reply."""
        try:
            text = json.dumps(message, allow_nan=False, separators=(",", ":"))
        except (ValueError, TypeError, RecursionError) as exc:
            text = json.dumps({"error": f"internal error: the reply is not JSON ({exc})"[:MAX_ERROR]})
        self._write(text + "\n")

    def _ask(self, request: dict[str, Any]) -> Any:
        self.send({**request, "draw": {**request["draw"], "params": _jsonable(request["draw"]["params"])}})
        try:
            line = self._read()
        except LineTooLongError as exc:
            raise WireError(f"draw answer: {exc}") from exc
        if not line:
            raise EOFError("end of input while waiting for a draw value")
        message, problem = parse_line(line)
        if problem is not None:
            raise WireError(f"draw answer: {problem}")
        return message

    def _noise(self) -> NoiseSource:
        """The source of one fresh run: the wire (tape mode), or the own source (with the planted leak, and under a
        recorder in transcript mode: :attr:`_recorder` is the run's)."""
        if self._mode == "tape":
            wire = WireNoise(self._ask)
            return wire if self.plant is None else PlantedNoise(wire, self.plant)
        assert self._own is not None
        own: NoiseSource = self._own if self.plant is None else PlantedNoise(self._own, self.plant)
        if self._mode == "transcript":
            self._recorder = TapeRecorder(own)
            return self._recorder
        return own

    def _drawn(self, since: int = 0) -> list[dict[str, Any]]:
        """The draws of the current run (transcript mode) from the ``since``-th on, as the tape writes them."""
        assert self._recorder is not None
        return [d.to_json() for d in self._recorder.tape.draws[since:]]

    def _decoded(self, inputs: list[Any]) -> list[Any]:
        """Every input of a ``run`` or ``runs`` message decoded (its shape checked) before any draw."""
        assert self._entry is not None and self._entry.codec is not None
        codec, params = self._entry.codec, self._params
        return [codec.decode_input(x, params) for x in inputs]

    def _fresh_run(self, values: list[Any]) -> tuple[list[Any], list[dict[str, Any]]]:
        """One fresh run over decoded inputs: its JSON releases and (transcript mode) its draws."""
        assert self._entry is not None and self._entry.codec is not None
        codec = self._entry.codec
        fresh = self._build(self._noise())
        releases = [codec.encode_release(fresh.step(x)) for x in values]
        return releases, (self._drawn() if self._mode == "transcript" else [])

    def _build(self, noise: NoiseSource) -> Any:
        assert self._entry is not None
        printed = self.as_printed and self._entry.as_printed is not None
        return self._entry.make(self._raw_params, noise, as_printed=printed)

    def handle(self, message: Any) -> dict[str, Any] | None:
        """The reply to one request (draw requests of a step are sent on the way)."""
        if not isinstance(message, dict) or not isinstance(message.get("op"), str):
            return {"error": "a request is a JSON object with an 'op'"}
        op = message["op"]
        if op == "hello":
            return {"protocol": PROTOCOL_VERSION, "implementation": IMPLEMENTATION,
                    "algorithms": [e.anchor for e in entries(streaming=True)], "modes": ["tape", "own", "transcript"],
                    "ops": ["runs"], "as_printed": self.as_printed,
                    "own_noise": "secure" if self.secure else "insecure-seeded",
                    **({"planted": self.plant.name} if self.plant is not None else {})}
        if op == "init":
            return self._init(message)
        if op in ("step", "run", "runs") and self._entry is None:
            return {"error": f"{op} before a successful init"}
        if op == "step":
            if "input" not in message:
                return {"error": "step needs 'input'"}
            assert self._entry is not None and self._entry.codec is not None
            value = self._entry.codec.decode_input(message["input"], self._params)
            release = self._algorithm.step(value)
            reply = {"release": self._entry.codec.encode_release(release)}
            if self._mode == "transcript":
                reply["draws"] = self._drawn(self._reported)
                assert self._recorder is not None
                self._reported = len(self._recorder.tape.draws)
            return reply
        if op == "run":
            inputs = message.get("inputs")
            if not isinstance(inputs, list):
                return {"error": "run needs 'inputs', a JSON array"}
            step_recorder, self._recorder = self._recorder, None
            try:
                releases, draws = self._fresh_run(self._decoded(inputs))
            finally:
                self._recorder = step_recorder  # the step-by-step run goes on after a run message
            return {"releases": releases, "draws": draws} if self._mode == "transcript" else {"releases": releases}
        if op == "runs":
            return self._runs(message)
        return {"error": f"unknown op {op!r}"}

    def _runs(self, message: Mapping[str, Any]) -> dict[str, Any]:
        """Optional op (announced in hello): ``{"op": "runs", "inputs": [...], "count": N}`` -> ``{"runs": [N lists
        of releases]}``, N fresh runs in own mode. Counters with an exact linear model are sampled vectorised
        (:class:`~dpstream.audit.vectorised.LinearModelSampler`, proven equal to the line-by-line counters in
        tests/audit/test_vectorised.py); the stream is first checked by one line-by-line run."""
        inputs, count = message.get("inputs"), _integer(message.get("count"))
        if not isinstance(inputs, list) or count is None or not 1 <= count <= MAX_RUNS:
            return {"error": f"runs needs 'inputs' (a JSON array) and 'count' (an integer in 1..{MAX_RUNS})"}
        if self._mode == "tape":
            return {"error": "runs is an own-mode and transcript-mode op"}
        assert self._entry is not None and self._entry.codec is not None
        e, codec = self._entry, self._entry.codec
        values = self._decoded(inputs)  # every input's shape before any draw
        step_recorder = self._recorder
        try:
            if self._mode == "transcript":
                runs = [self._fresh_run(values) for _ in range(count)]
                return {"runs": [r for r, _ in runs], "draws": [d for _, d in runs]}
            out = [self._fresh_run(values)[0]]  # one line-by-line run checks the stream and is the first run
        finally:
            self._recorder = step_recorder
        model = None
        if (e.model is not None and codec is NUMBER and not self.secure and not (self.as_printed and e.as_printed)
                and self.plant is None):
            with contextlib.suppress(DPStreamInputError, KeyError):
                model = e.model({**self._params, "T": self._params.get("T") or len(inputs)})
        if model is None or model.input_length != len(inputs) or count == 1:
            while len(out) < count:
                out.append(self._fresh_run(values)[0])
            return {"runs": out}
        self._bulk_calls += 1
        seed = derived_seed(self._seed, "runs", self._bulk_calls)
        from dpstream.audit.vectorised import LinearModelSampler  # the reference's vectorised runs

        rows = LinearModelSampler(model).sample([float(x) for x in inputs], count - 1, seed)
        return {"runs": out + rows.tolist()}

    def _init(self, message: Mapping[str, Any]) -> dict[str, Any]:
        self._entry, self._algorithm = None, None
        anchor, noise, seed = message.get("algorithm"), message.get("noise"), _integer(message.get("seed"))
        if noise not in ("tape", "own", "transcript"):
            return {"error": "noise must be 'tape', 'own' or 'transcript'"}
        if seed is None or seed < 0:
            return {"error": "seed must be an integer >= 0"}
        try:
            chosen = entry(str(anchor))
        except KeyError:
            return {"error": f"unknown algorithm {anchor!r}"}
        if not chosen.streaming:
            return {"error": f"{anchor} has no standalone streaming instance"}
        raw = message.get("params")
        params = chosen.params.validate(raw)  # refuses anything but a JSON object
        assert isinstance(raw, Mapping)
        self._mode = str(noise)
        self._own = SecureNoise() if self.secure else InsecureSeededNoise(seed)
        self._entry, self._params, self._raw_params = chosen, params, raw
        try:
            self._algorithm = self._build(self._noise())
        except BaseException:
            self._entry = None  # a failed init leaves no algorithm: step, run and runs are refused
            raise
        self._seed, self._bulk_calls = seed, 0
        self._reported = 0
        return {"ok": True}

    def loop(self) -> None:
        """Answer every line with one JSON object until end of input."""
        while True:
            try:
                line = self._read()
            except LineTooLongError as exc:
                self.send({"error": str(exc)})
                continue
            if not line:
                return
            try:
                reply = self.answer(line)
            except EOFError:  # end of input in the middle of a step (while waiting for a draw value)
                return
            if reply is not None:
                self.send(reply)

    def answer(self, line: str) -> dict[str, Any] | None:
        """The reply to one request line (any text: the reader decodes bytes with ``surrogateescape``)."""
        message, problem = parse_line(line)
        if problem is not None:
            return {"error": problem}
        try:
            return self.handle(message)
        except (DPStreamInputError, StateError, WireError, TapeError, LookupError) as exc:
            return {"error": _short(str(exc))}
        except RecursionError:
            return {"error": "the request is nested too deeply"}
        except MemoryError:  # parameters that ask for more than the machine has (e.g. a huge padding)
            return {"error": "out of memory: the parameters or inputs need more memory than this machine has"}
        except EOFError:
            raise
        except Exception as exc:  # a bug of ours must not take the server down: answer, log, go on
            traceback.print_exc(file=sys.stderr)
            return {"error": _short(f"internal error: {type(exc).__name__}: {exc}")}


def _short(text: str) -> str:
    return text if len(text) <= MAX_ERROR else text[:MAX_ERROR - 3] + "..."


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def parse_line(line: str) -> tuple[Any, str | None]:
    """(the JSON object of one protocol line, None), or (None, why it is not one)."""
    try:
        line.encode("utf-8")
    except UnicodeEncodeError:
        return None, "not UTF-8: a request is one JSON object per line, in UTF-8"
    text = line.strip()
    if not text:
        return None, "empty line: a request is one JSON object per line"
    try:
        message = json.loads(text, parse_constant=_no_constant)
    except RecursionError:
        return None, "not JSON: nested too deeply"
    except ValueError as exc:  # also NaN, Infinity and integers of more than 4300 digits
        return None, _short(f"not JSON ({exc}): {text[:100]!r}")
    if not isinstance(message, dict):
        return None, f"not a JSON object: a request is an object with an 'op' (got a JSON {_kind(message)})"
    return message, None


def _kind(value: Any) -> str:
    return {list: "array", str: "string", bool: "boolean", type(None): "null"}.get(type(value), "number")


def _integer(value: Any) -> int | None:
    """A JSON number whose value is an integer, as an int (``3.0`` is 3: docs/conformance.md, "JSON numbers")."""
    try:
        return require_integer_value("value", value)
    except DPStreamInputError:
        return None


def _jsonable(params: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v.tolist() if hasattr(v, "tolist") else v for k, v in params.items()}


def describe() -> str:
    """Every served algorithm's parameters, INPUT and RELEASE (JSON Schema) and draw sites, as JSON."""
    doc = {e.anchor: {"title": e.title, "params": e.params.json_schema(),
                      "input": dict(e.codec.input_schema) if e.codec else None,
                      "release": dict(e.codec.release_schema) if e.codec else None,
                      "sites": e.sites, "claim_source": e.proof, "doc": e.doc}
           for e in entries(streaming=True)}
    return json.dumps({"protocol": PROTOCOL_VERSION, "implementation": IMPLEMENTATION, "algorithms": doc}, indent=1)


def line_reader(stream: IO[bytes]) -> Callable[[], str]:
    """``readline`` of a byte stream as text: bytes that are not UTF-8 kept as lone surrogates (so that the
    server can answer them), a line longer than :data:`MAX_LINE` skipped with :class:`LineTooLongError`."""
    def read() -> str:
        raw = stream.readline(MAX_LINE)
        if len(raw) >= MAX_LINE and not raw.endswith(b"\n"):
            while raw and not raw.endswith(b"\n"):
                raw = stream.readline(MAX_LINE)
            raise LineTooLongError(f"line longer than {MAX_LINE} bytes: skipped")
        return raw.decode("utf-8", "surrogateescape")

    return read


def serve(stdin: IO[str] | None = None, stdout: IO[str] | None = None, *, secure: bool = False,
          as_printed: bool = False, plant: PlantedLeak | None = None) -> int:
    """Answer the protocol on ``stdin``/``stdout`` until end of input; returns the exit status 0 (also when the
    client closes its end of the pipe first)."""
    read = line_reader(sys.stdin.buffer) if stdin is None else stdin.readline
    dst = sys.stdout if stdout is None else stdout

    def write(text: str) -> None:
        dst.write(text)
        dst.flush()

    try:
        Server(read, write, secure=secure, as_printed=as_printed, plant=plant).loop()
    except BrokenPipeError:  # the client is gone: nothing left to answer
        with contextlib.suppress(OSError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), dst.fileno())  # no second error when Python flushes at exit
    return 0

