"""A small protocol driver for the C example counters (not the conformance harness).

It builds ``build/counters`` and ``build/counters_as_printed`` with make and talks to them
over the conformance protocol (docs/conformance.md): hello, init, step in tape mode, answering
every draw request from the reference's known-answer vectors (the shipped corpus), then a list of
messages that must be refused, and own-mode runs. It is independent of ``dpstream conform`` (the
harness, which the tests also run on these programs) and checks things the harness does not:
the messages of MUST_REJECT, malformed lines, pipelining, the own-mode generator. ``--bench``
times 10^5 pipelined ``run`` messages of T = 16.

Run: ``python examples/conformance/c/check.py [--build-dir DIR] [--cflags FLAGS] [--bench] [--runs N]
[--fuzz N]`` (exit status 0 when every check passes). ``--fuzz N`` feeds N mutated and random lines
(use it with a sanitizer build: ``--build-dir /tmp/asan --cflags '-O1 -g -fsanitize=address,undefined'``).
``tests/conformance/test_c_examples.py`` calls the same functions.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dpstream.noise import data_rng
from dpstream.vectors import KnownAnswerVector
from dpstream.vectors.corpus import known_answer

HERE = Path(__file__).resolve().parent
ALGORITHMS = ("001-alg8", "001-alg10")
TOLERANCE = 1e-9
"""Largest accepted |release - expected| in known-answer mode (absolute)."""
TIMEOUT = 30.0
"""Seconds to wait for any one answer before declaring the program stuck."""


# ---- building --------------------------------------------------------------------------------------


def missing_tools() -> str | None:
    """Why the C examples cannot be built here (no make, no C compiler), or None."""
    if shutil.which("make") is None:
        return "make is not installed"
    compiler = (shlex.split(os.environ.get("CC", "cc")) or ["cc"])[0]
    if shutil.which(compiler) is None:
        return f"no C compiler: {compiler!r} is not on PATH (set CC)"
    return None


def build(build_dir: Path | None = None, cflags: str | None = None) -> tuple[Path, Path]:
    """``make -C examples/conformance/c`` (into ``build_dir``, with ``CFLAGS=cflags`` when given);
    the two programs. Sanitizer builds: ``cflags="-O1 -g -fsanitize=address,undefined"``."""
    out = HERE / "build" if build_dir is None else build_dir.resolve()
    command = ["make", "-s", "-C", str(HERE), f"BUILD={out}", *([f"CFLAGS={cflags}"] if cflags else [])]
    subprocess.run(command, check=True, capture_output=True, text=True, timeout=300)
    return out / "counters", out / "counters_as_printed"


# ---- talking to a program ------------------------------------------------------------------------


class ProtocolError(RuntimeError):
    """The program answered something the protocol does not allow (or nothing at all)."""


class Program:
    """A program under test as a child process: JSON lines in, JSON lines out."""

    def __init__(self, executable: Path) -> None:
        self.process = subprocess.Popen(
            [str(executable)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            text=True, encoding="utf-8", bufsize=1,
        )
        assert self.process.stdin is not None and self.process.stdout is not None
        self.stdin = self.process.stdin
        self.stdout = self.process.stdout

    def send(self, message: dict[str, Any] | str) -> None:
        """One request line: a message (encoded here) or a raw line (for malformed input)."""
        line = message if isinstance(message, str) else json.dumps(message)
        self.stdin.write(line + "\n")
        self.stdin.flush()

    def receive(self) -> dict[str, Any]:
        """The next answer line, decoded (an object)."""
        line = self.stdout.readline()
        if not line:
            raise ProtocolError(f"no answer: the program closed its output (exit status {self.process.poll()})")
        answer = json.loads(line)
        if not isinstance(answer, dict):
            raise ProtocolError(f"an answer must be a JSON object, got {line!r}")
        return answer

    def request(self, message: dict[str, Any] | str) -> dict[str, Any]:
        self.send(message)
        return self.receive()

    def close(self) -> int:
        """Close stdin (end of input) and return the exit status."""
        self.stdin.close()
        status = self.process.wait(timeout=TIMEOUT)
        self.stdout.close()
        return status


@contextmanager
def running(executable: Path) -> Iterator[Program]:
    program = Program(executable)
    try:
        yield program
    finally:
        if program.process.poll() is None:
            program.process.kill()
            program.process.wait()
        for stream in (program.stdin, program.stdout):
            if not stream.closed:
                stream.close()


def hello(executable: Path) -> dict[str, Any]:
    """The hello answer, checked for the keys the protocol requires."""
    with running(executable) as program:
        answer = program.request({"op": "hello"})
        if program.close() != 0:
            raise ProtocolError("the program did not exit with status 0 at end of input")
    if answer.get("protocol") != 1 or not isinstance(answer.get("implementation"), str):
        raise ProtocolError(f"bad hello answer {answer}")
    if not {"001-alg8", "001-alg10"} <= set(answer.get("algorithms", [])):
        raise ProtocolError(f"hello does not list both counters: {answer}")
    if set(answer.get("modes", [])) != {"tape", "own"}:
        raise ProtocolError(f"hello does not list both noise modes: {answer}")
    return answer


# ---- known answers (tape mode) --------------------------------------------------------------------


@dataclass
class Replay:
    """One known-answer vector replayed through a program in tape mode."""

    name: str
    algorithm: str
    releases: list[float] = field(default_factory=list)
    expected: list[float] = field(default_factory=list)
    divergence: str | None = None
    """The first draw request that differs from the tape (site, kind or params), if any."""
    divergence_site: str | None = None

    @property
    def max_error(self) -> float:
        return max((abs(r - e) for r, e in zip(self.releases, self.expected, strict=True)), default=0.0)

    @property
    def agrees(self) -> bool:
        return (self.divergence is None and len(self.releases) == len(self.expected)
                and self.max_error <= TOLERANCE)


def replay(program: Program, vector: KnownAnswerVector) -> Replay:
    """Init in tape mode, step through the inputs, answer each draw from the tape by its site."""
    name = vector.id
    result = Replay(name, vector.algorithm, expected=[float(e) for e in vector.expected])
    init = {"op": "init", "algorithm": vector.algorithm, "params": vector.params, "noise": "tape", "seed": 0}
    answer = program.request(init)
    if answer != {"ok": True}:
        raise ProtocolError(f"{name}: init answered {answer}")
    tape = vector.tape.by_site()
    for x in vector.inputs:
        program.send({"op": "step", "input": x})
        while "release" not in (answer := program.receive()):
            if "draw" not in answer:
                raise ProtocolError(f"{name}: step answered {answer}")
            request = answer["draw"]
            recorded = tape.get(request.get("site"))
            if recorded is None:
                raise ProtocolError(f"{name}: draw at a site the tape does not hold: {request}")
            # the scale must be the recorded one exactly: both sides compute it the same way
            same = request.get("kind") == recorded.kind.value and request.get("params") == recorded.params
            if not same and result.divergence is None:
                result.divergence_site = recorded.site
                result.divergence = (f"site {recorded.site}: requested {request.get('kind')} "
                                     f"{request.get('params')}, tape has {recorded.kind.value} {recorded.params}")
            program.send({"value": recorded.value})  # go on, so the releases can be compared too
        result.releases.append(float(answer["release"]))
    return result


def known_answers(executable: Path) -> list[Replay]:
    """Every known-answer vector of the corpus for ALGORITHMS through one process of ``executable``."""
    with running(executable) as program:
        replays = [replay(program, vector) for algorithm in ALGORITHMS for vector in known_answer(algorithm)]
        if program.close() != 0:
            raise ProtocolError("the program did not exit with status 0 at end of input")
    return replays


# ---- messages that must be refused -----------------------------------------------------------------


def _init(algorithm: str = "001-alg8", noise: str = "tape", seed: Any = 0, **params: Any) -> str:
    return json.dumps({"op": "init", "algorithm": algorithm, "params": params, "noise": noise, "seed": seed})


MUST_REJECT: tuple[tuple[str, str], ...] = (
    ("T = 2.5", _init(epsilon=1, T=2.5)),
    ('T = "16"', _init(epsilon=1, T="16")),
    ("T = 0", _init(epsilon=1, T=0)),
    ("T = -1", _init(epsilon=1, T=-1)),
    ("T = true", _init(epsilon=1, T=True)),
    ("T = 2^63", _init(epsilon=1, T=2**63)),
    ("T missing (001-alg10)", _init("001-alg10", epsilon=1)),
    ("epsilon = 0", _init(epsilon=0, T=4)),
    ("epsilon = -1", _init(epsilon=-1, T=4)),
    ('epsilon = "1"', _init(epsilon="1", T=4)),
    ("epsilon = null", _init(epsilon=None, T=4)),
    ("epsilon = 1e400 (inf)", '{"op":"init","algorithm":"001-alg8","params":{"epsilon":1e400,"T":4},'
                              '"noise":"tape","seed":0}'),
    ("epsilon = 5e-324 (scale overflows)", _init(epsilon=5e-324, T=4)),
    ("epsilon missing", _init(T=4)),
    ("unknown parameter", _init(epsilon=1, T=4, discrete=True)),
    ("params not an object", json.dumps({"op": "init", "algorithm": "001-alg8", "params": [1, 4],
                                         "noise": "tape", "seed": 0})),
    ("unknown algorithm", _init("001-alg9", epsilon=1, T=4)),
    ('noise = "both"', _init(noise="both", epsilon=1, T=4)),
    ('seed = "1"', _init(seed="1", epsilon=1, T=4)),
    ("seed = -1", _init(seed=-1, epsilon=1, T=4)),
    ("seed = 1.5", _init(seed=1.5, epsilon=1, T=4)),
    ("seed missing", json.dumps({"op": "init", "algorithm": "001-alg8", "params": {"epsilon": 1, "T": 4},
                                 "noise": "tape"})),
    ('input = "1"', '{"op":"step","input":"1"}'),
    ("input = null", '{"op":"step","input":null}'),
    ("input = [1]", '{"op":"step","input":[1]}'),
    ('input = {"x":1}', '{"op":"step","input":{"x":1}}'),
    ("input = true", '{"op":"step","input":true}'),
    ("input = 1e400 (inf)", '{"op":"step","input":1e400}'),
    ("input missing", '{"op":"step"}'),
    ("step with an extra key", '{"op":"step","input":1,"t":1}'),
    ("run inputs not an array", '{"op":"run","inputs":1}'),
    ("run with a string input", '{"op":"run","inputs":[1,"2"]}'),
    ("run longer than T", '{"op":"run","inputs":[1,2,3,4]}'),
    ("unknown op", '{"op":"stop"}'),
    ("op not a string", '{"op":1}'),
    ("no op", '{"input":1}'),
    ("not an object", "[1,2]"),
    ("truncated JSON", '{"op":"step","input":'),
    ("empty line", ""),
    ("duplicate key", '{"op":"step","input":1,"input":2}'),
    ("NaN literal", '{"op":"step","input":NaN}'),
    ("lone surrogate", '{"op":"\\ud800"}'),
    ("trailing garbage", '{"op":"hello"} x'),
)
"""(what, request line): each must be answered by exactly one {"error":...} line, sent while a
Simple counter with T = 3 is initialised in tape mode and has taken one step."""


@dataclass
class RejectReport:
    answers: dict[str, dict[str, Any]]
    """The answer to each MUST_REJECT message."""
    state_kept: bool
    """After all of them, the next step still draws at t = 2 and releases g(1) + f(2) + z."""


def must_reject(executable: Path) -> RejectReport:
    """Send every MUST_REJECT message to a Simple counter (eps = 1, T = 3, tape mode) after step 1,
    then check that nothing changed: step 2 draws at site t=2 and adds to g(1)."""
    answers: dict[str, dict[str, Any]] = {}
    with running(executable) as program:
        if program.request(_init(epsilon=1, T=3)) != {"ok": True}:
            raise ProtocolError("init of the Simple counter failed")
        first = program.request({"op": "step", "input": 1.0})
        if first.get("draw", {}).get("site") != "001-alg8 L4 t=1":
            raise ProtocolError(f"step 1 answered {first}")
        g1 = program.request({"value": 0.5})["release"]
        for what, line in MUST_REJECT:
            answers[what] = program.request(line)
        second = program.request({"op": "step", "input": 2.0})
        kept = second == {"draw": {"site": "001-alg8 L4 t=2", "kind": "laplace", "params": {"scale": 1}}}
        if kept:
            kept = program.request({"value": 0.25}) == {"release": g1 + 2.0 + 0.25}
        if program.close() != 0:
            raise ProtocolError("the program did not exit with status 0 at end of input")
    return RejectReport(answers, kept)


# ---- own mode ----------------------------------------------------------------------------------------


def pipelined_runs(executable: Path, algorithm: str, epsilon: float, T: int, streams: list[list[float]],
                   seed: int) -> list[list[float]]:
    """One own-mode ``run`` message per stream, all written ahead by a writer thread while this
    thread reads the answers (as a harness does for statistical checks); the releases, in order."""
    with running(executable) as program:
        init = {"op": "init", "algorithm": algorithm, "params": {"epsilon": epsilon, "T": T},
                "noise": "own", "seed": seed}
        if program.request(init) != {"ok": True}:
            raise ProtocolError(f"own-mode init failed: {init}")
        errors: list[BaseException] = []

        def write_ahead() -> None:
            try:
                lines = [json.dumps({"op": "run", "inputs": inputs}) + "\n" for inputs in streams]
                for start in range(0, len(lines), 1000):  # large writes: Python is the slow side here
                    program.stdin.write("".join(lines[start:start + 1000]))
                program.stdin.flush()
            except BaseException as e:  # reported by the reader below
                errors.append(e)

        writer = threading.Thread(target=write_ahead, daemon=True)
        writer.start()
        releases = []
        for inputs in streams:
            answer = program.receive()
            if "releases" not in answer or len(answer["releases"]) != len(inputs):
                raise ProtocolError(f"run of {len(inputs)} inputs answered {answer}")
            releases.append([float(g) for g in answer["releases"]])
        writer.join(timeout=TIMEOUT)
        if errors:
            raise ProtocolError(f"writing requests failed: {errors[0]!r}")
        if program.close() != 0:
            raise ProtocolError("the program did not exit with status 0 at end of input")
    return releases


def bench(executable: Path, runs: int = 100_000, algorithm: str = "001-alg10") -> float:
    """Runs per minute of T = 16 in own mode, pipelined (includes our own JSON encoding and decoding)."""
    streams = [[0.0, 1.0] * 8] * runs
    start = time.perf_counter()
    pipelined_runs(executable, algorithm, 1.0, 16, streams, seed=2024)
    return runs / (time.perf_counter() - start) * 60.0


# ---- garbage in, errors out ---------------------------------------------------------------------

CORPUS = (
    b'{"op":"hello"}',
    b'{"op":"init","algorithm":"001-alg10","params":{"epsilon":0.5,"T":1000000},"noise":"own","seed":1}',
    b'{"op":"init","algorithm":"001-alg8","params":{"epsilon":1e-3,"T":99},"noise":"own","seed":18446744073709551615}',
    b'{"op":"step","input":-0.25}',
    b'{"op":"step","input":1.5e300}',
    b'{"op":"run","inputs":[1,0,-2.5e-3,1E+2,0.0,12345678901234567890]}',
    b'{"op":"run","inputs":[]}',
    b'{"value":3.30429379218652}',
    b'{"op":"st\\u0065p","input":1,"x":"\\ud83d\\ude00\\n\\"\\\\\\/\\b\\f\\r\\t","y":[true,false,null,{}]}',
    "{\"op\":\"h\u00e9llo \u20ac \U0001f600\"}".encode(),
)
"""Valid (or nearly valid) requests that the fuzzer mutates. None mentions tape mode, so no
mutant is likely to start a draw exchange (which would take the next line as its answer)."""

SPECIALS = (
    b'{"op":"init","algorithm":"001-alg10","params":{"epsilon":1,"T":1000000},"noise":"own","seed":5}',
    b"[" * 100_000, b"{\"a\":" * 10_000, b"[" * 32 + b"]" * 32, b"[" * 33 + b"]" * 33,
    b'{"op":"run","inputs":[' + b"1," * 100_000 + b"1]}",        # 200 kB: long but accepted
    b"x" * (1 << 20), b"x" * ((1 << 20) + 1), b"1" * (1 << 21),     # at, just over, far over the limit
    b'{"op":"step","input":' + b"9" * 100_000 + b"}",               # a 100000-digit number (inf)
    b'{"op":"step","input":0.' + b"0" * 100_000 + b"1}",
    b'{"' + b"k" * 300_000 + b'":1}', b'"' + b"\\u00e9" * 50_000 + b'"',
    b"{" + b",".join(b'"k%d":%d' % (i, i) for i in range(300)) + b"}",  # more than 256 members
    b'{"op":"\xc0\xaf"}', b'{"op":"\xed\xa0\x80"}', b'{"op":"\xf4\x90\x80\x80"}', b'{"op":"\xe2\x82"}',
    b'"\\ud800\\u0041"', b'"\\udc00"', b'"\\u12"', b"-", b"1e", b"01", b"1.", b".5", b"+1", b"\x00",
    b"\r", b"  ", b"nul", b"tru", b"[1,]", b'{"a":1,}', b'{"a" 1}', b"\x1f",
)
"""Hand-picked hard cases: deep nesting, lines at and over the 1 MiB limit, huge numbers and keys,
invalid UTF-8 (overlong, surrogate, > U+10FFFF, truncated), bad escapes, bad number grammar."""


def fuzz_input(lines: int, seed: int) -> list[bytes]:
    """SPECIALS, then ``lines`` mutants of CORPUS and random byte strings (no newlines inside)."""
    rng = data_rng(seed)
    out = list(SPECIALS)
    for _ in range(lines):
        if rng.random() < 0.2:
            out.append(bytes(rng.integers(0, 256, size=int(rng.integers(0, 300))).tolist()))
            continue
        line = bytearray(CORPUS[int(rng.integers(len(CORPUS)))])
        for _ in range(int(rng.integers(1, 5))):
            where = int(rng.integers(len(line) + 1))
            match int(rng.integers(5)):
                case 0:  # overwrite one byte
                    if line:
                        line[min(where, len(line) - 1)] = int(rng.integers(256))
                case 1:  # delete a range
                    del line[where:where + int(rng.integers(1, 8))]
                case 2:  # insert random bytes
                    line[where:where] = bytes(rng.integers(0, 256, size=int(rng.integers(1, 8))).tolist())
                case 3:  # truncate
                    del line[where:]
                case _:  # splice in a piece of another request
                    other = CORPUS[int(rng.integers(len(CORPUS)))]
                    a = int(rng.integers(len(other)))
                    line[where:where] = other[a:a + int(rng.integers(1, 40))]
        out.append(bytes(line))
    return [line.replace(b"\n", b" ") for line in out]


def _feed(executable: Path, data: list[bytes]) -> tuple[list[dict[str, Any]], float]:
    """All lines written at once; the decoded answers (each must be a JSON object) and the seconds taken.
    Exit status 0 is required (a sanitizer build exits non-zero on any error it finds)."""
    start = time.perf_counter()
    done = subprocess.run([str(executable)], input=b"\n".join(data) + b"\n", capture_output=True, timeout=600)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise ProtocolError(f"exit status {done.returncode}; stderr: {done.stderr.decode(errors='replace')[-2000:]}")
    answers = [json.loads(line) for line in done.stdout.decode("utf-8").splitlines()]
    if not all(isinstance(a, dict) for a in answers):
        raise ProtocolError("an answer is not a JSON object")
    return answers, seconds


@dataclass(frozen=True)
class FuzzReport:
    lines: int
    """Request lines sent (the last one a hello)."""
    answers: int
    errors: int
    garbage: int
    """Garbage lines sent as answers to draw requests (tape mode)."""
    garbage_errors: int
    garbage_releases: int
    seconds: float

    def summary(self) -> str:
        return (f"{self.lines} request lines: {self.answers} answers, {self.errors} errors; {self.garbage} "
                f"garbage draw answers: {self.garbage_errors} errors, {self.garbage_releases} releases; "
                f"exit status 0 ({self.seconds:.2f} s)")


def fuzz(executable: Path, lines: int, seed: int = 0) -> FuzzReport:
    """Two phases; raises ProtocolError when an answer is missing, not a JSON object, or the exit
    status is not 0.

    Requests: fuzz_input and a final hello. Each line gets one answer line (a draw request, should a
    mutant start one, takes the next line as its answer: still one output line per input line).
    Draw answers: in tape mode, each fuzz line answers the draw request of a valid step; each pair
    gives the draw request and one answer ({"error":...}, or a release if the line was a valid
    {"value":V}), and refused answers do not advance t."""
    data = [*fuzz_input(lines, seed), b'{"op":"hello"}']
    answers, seconds = _feed(executable, data)
    if len(answers) != len(data):
        raise ProtocolError(f"{len(data)} request lines but {len(answers)} answers")
    if answers[-1].get("protocol") != 1 and list(answers[-1]) != ["error"]:
        raise ProtocolError(f"the final hello was answered by {answers[-1]}")

    garbage = fuzz_input(max(1, lines // 10), seed + 1)
    init = b'{"op":"init","algorithm":"001-alg8","params":{"epsilon":1,"T":1000000000},"noise":"tape","seed":0}'
    step = b'{"op":"step","input":1}'
    tape_answers, tape_seconds = _feed(executable, [init, *(x for g in garbage for x in (step, g))])
    draws = tape_answers[1::2]
    finals = tape_answers[2::2]
    if (len(tape_answers) != 1 + 2 * len(garbage) or not all("draw" in d for d in draws)
            or not all(list(f) in (["error"], ["release"]) for f in finals)):
        raise ProtocolError("tape mode: a garbage draw answer was not answered by one error or release")
    released = 0
    for draw, final in zip(draws, finals, strict=True):  # a refused draw answer does not advance t
        if draw["draw"]["site"] != f"001-alg8 L4 t={released + 1}":
            raise ProtocolError(f"tape mode: draw {draw} after {released} releases")
        released += "release" in final
    return FuzzReport(len(data), len(answers), sum(1 for a in answers if list(a) == ["error"]), len(garbage),
                      len(finals) - released, released, seconds + tape_seconds)


# ---- the command line -----------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--build-dir", type=Path, default=None, help="where make puts the programs")
    parser.add_argument("--bench", action="store_true", help="time pipelined own-mode runs of T = 16")
    parser.add_argument("--runs", type=int, default=100_000, help="runs for --bench (default 10^5)")
    parser.add_argument("--fuzz", type=int, default=0, metavar="N", help="also feed N mutated/random lines")
    parser.add_argument("--cflags", default=None, help="CFLAGS for make, e.g. '-O1 -g -fsanitize=address,undefined'")
    args = parser.parse_args(argv)

    reason = missing_tools()
    if reason is not None:
        print(f"cannot build the C examples: {reason}")
        return 2
    counters, as_printed = build(args.build_dir, args.cflags)
    print(f"built {counters} and {as_printed}")
    ok = True

    print("hello:", json.dumps(hello(counters)))
    for r in known_answers(counters):
        verdict = "agrees" if r.agrees else "DISAGREES"
        print(f"known answer {r.name}: {len(r.releases)} releases, max |diff| {r.max_error:.3g} "
              f"(tolerance {TOLERANCE:g}): {verdict}" + (f"; {r.divergence}" if r.divergence else ""))
        ok &= r.agrees

    # the printed scale log2(T)/eps differs from bit_length(T)/eps for every T: the first draw
    # request of 001-alg10 (t = 1) already shows it; 001-alg8 is the same in both builds
    for r in known_answers(as_printed):
        tree = r.algorithm == "001-alg10"
        good = r.divergence_site == "001-alg10 L8 t=1" if tree else r.agrees
        print(f"as printed, {r.name}: " + (f"diverges at {r.divergence}" if r.divergence else "no divergence")
              + f" ({'as expected' if good else 'NOT AS EXPECTED'})")
        ok &= good

    report = must_reject(counters)
    for what, answer in report.answers.items():
        refused = set(answer) == {"error"} and isinstance(answer["error"], str)
        print(f"must reject {what}: {json.dumps(answer)}" + ("" if refused else "  <-- NOT REFUSED"))
        ok &= refused
    print(f"state unchanged after the refused messages: {report.state_kept}")
    ok &= report.state_kept

    if args.fuzz:
        for program in (counters, as_printed):
            print(f"fuzz {program.name}: {fuzz(program, args.fuzz).summary()}")
    if args.bench:
        per_minute = bench(counters, args.runs)
        print(f"bench: {args.runs} pipelined own-mode runs of T=16 (001-alg10): {per_minute:.3g} runs per minute")
    print("all checks pass" if ok else "SOME CHECKS FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
