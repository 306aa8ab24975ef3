"""`dpstream serve` answers every line with exactly one JSON object, and keeps answering.

The table of bad lines (one per class: blank lines, bytes that are not UTF-8, NaN and Infinity tokens, nesting too
deep for the parser, integers beyond the float range, JSON values that are not objects, unknown ops, steps before
``init``, wrong types in every field of every request and of every parameter of every algorithm) runs in-process
through :class:`dpstream.conformance.serve.Server`; a Hypothesis fuzz test sends arbitrary byte lines and arbitrary
JSON requests. Every line gets exactly one reply line, a JSON object, never "internal error" (a traceback), and a
valid request after it still works. A few cases run the process itself: its stderr stays free of tracebacks.
Deterministic: no false-alarm probability.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dpstream.catalog import entries, entry
from dpstream.conformance.serve import MAX_RUNS, Server, line_reader

SERVE = [sys.executable, "-m", "dpstream.cli", "serve"]
HELLO = '{"op":"hello"}\n'
INIT = '{"op":"init","algorithm":"001-alg8","params":{"epsilon":1.0,"T":4},"noise":"own","seed":0}\n'
STREAMING = [e.anchor for e in entries(streaming=True)]


def replies_to(lines: list[str]) -> list[dict[str, Any]]:
    """Run a server over ``lines`` (text lines, as the reader decodes them); every reply, checked to be exactly
    one JSON object per line and never an internal error."""
    feed = iter(lines)
    written: list[str] = []
    Server(lambda: next(feed, ""), written.append).loop()
    replies = []
    for text in written:
        assert text.endswith("\n") and text.count("\n") == 1, text[:200]
        reply = json.loads(text)
        assert isinstance(reply, dict), text[:200]
        assert not str(reply.get("error", "")).startswith("internal error"), reply
        replies.append(reply)
    return replies


def assert_one_reply_each_then_hello_works(lines: list[str]) -> list[dict[str, Any]]:
    replies = replies_to([*lines, HELLO])
    assert len(replies) == len(lines) + 1, replies
    assert replies[-1].get("implementation") == "dpstream-reference", replies[-1]
    return replies[:-1]


DEEP = 100_000
BAD_LINES = {
    "blank": "\n",
    "spaces": "   \t \n",
    "carriage-return": "\r\n",
    "not-utf8": b"\xff\xfe{}\n".decode("utf-8", "surrogateescape"),
    "lone-continuation-byte": b'{"op":"hello\x80"}\n'.decode("utf-8", "surrogateescape"),
    "deep-arrays": "[" * 1000 + "\n",
    "very-deep-arrays": "[" * DEEP + "]" * DEEP + "\n",
    "deep-objects": '{"a":' * 1000 + "1" + "}" * 1000 + "\n",
    "deep-input": '{"op":"step","input":' + "[" * 900 + "]" * 900 + "}\n",
    "nan": "NaN\n",
    "infinity": '{"op":"init","algorithm":"001-alg8","params":{"epsilon":Infinity},"noise":"own","seed":0}\n',
    "minus-infinity": '{"op":"step","input":-Infinity}\n',
    "integer-400-digits": "9" * 400 + "\n",
    "integer-5000-digits": '{"op":"step","input":' + "9" * 5000 + "}\n",
    "truncated": '{"op":\n',
    "trailing-garbage": '{"op":"hello"} x\n',
    "two-objects": '{"op":"hello"}{"op":"hello"}\n',
    "array": '[{"op":"hello"}]\n',
    "string": '"hello"\n',
    "number": "42\n",
    "null": "null\n",
    "true": "true\n",
    "empty-object": "{}\n",
    "op-not-a-string": '{"op":1}\n',
    "op-null": '{"op":null}\n',
    "unknown-op": '{"op":"frobnicate"}\n',
    "step-before-init": '{"op":"step","input":1}\n',
    "run-before-init": '{"op":"run","inputs":[1]}\n',
    "runs-before-init": '{"op":"runs","inputs":[1],"count":2}\n',
    "long-line": '{"op":"frobnicate","pad":"' + "x" * 2_000_000 + '"}\n',
    "control-characters": '{"op":"he\x01llo"}\n',
    "nul-byte": '\x00{"op":"hello"}\n',
}


@pytest.mark.parametrize("line", list(BAD_LINES.values()), ids=list(BAD_LINES))
def test_a_bad_line_gets_one_error_and_the_server_keeps_answering(line: str) -> None:
    (reply,) = assert_one_reply_each_then_hello_works([line])
    assert set(reply) == {"error"} and reply["error"], reply


def test_a_blank_line_is_answered_with_an_error() -> None:
    """A client that waits for an answer to every line it writes never blocks (docs/conformance.md)."""
    (reply,) = assert_one_reply_each_then_hello_works(["\n"])
    assert reply["error"].startswith("empty line")


AFTER_INIT = {  # (request after a valid init of 001-alg8, T = 4)
    "integer-400-digits": '{"op":"step","input":' + "9" * 400 + "}\n",
    "negative-integer-400-digits": '{"op":"step","input":-' + "9" * 400 + "}\n",
    "float-overflow": '{"op":"step","input":1e400}\n',
    "input-missing": '{"op":"step"}\n',
    "input-null": '{"op":"step","input":null}\n',
    "input-bool": '{"op":"step","input":true}\n',
    "input-string": '{"op":"step","input":"1"}\n',
    "input-array": '{"op":"step","input":[1]}\n',
    "input-object": '{"op":"step","input":{"x":1}}\n',
    "run-inputs-not-a-list": '{"op":"run","inputs":1}\n',
    "run-huge-input": '{"op":"run","inputs":[1,' + "9" * 400 + "]}\n",
    "runs-count-zero": '{"op":"runs","inputs":[1],"count":0}\n',
    "runs-count-too-large": '{"op":"runs","inputs":[1],"count":' + str(MAX_RUNS + 1) + "}\n",
    "runs-count-400-digits": '{"op":"runs","inputs":[1],"count":' + "9" * 400 + "}\n",
    "runs-count-bool": '{"op":"runs","inputs":[1],"count":true}\n',
}


@pytest.mark.parametrize("line", list(AFTER_INIT.values()), ids=list(AFTER_INIT))
def test_a_bad_request_after_init_changes_nothing(line: str) -> None:
    step = '{"op":"step","input":1}\n'
    replies = assert_one_reply_each_then_hello_works([INIT, step, line, step, step])
    assert replies[0] == {"ok": True} and "release" in replies[1]
    assert "error" in replies[2], replies[2]
    # the run goes on as if the bad request had not been sent: the same releases as a run without it
    clean = replies_to([INIT, step, step, step])
    assert [r.get("release") for r in replies if "release" in r] == [r["release"] for r in clean[1:]]


def test_an_input_whose_sums_would_overflow_is_refused_and_changes_nothing() -> None:
    """1.7e308 (two of them overflow a float sum) lies beyond the counters' range +-(2^53 - 1): refused before any
    draw, and the run goes on as if it had not been sent."""
    big, step = '{"op":"step","input":1.7e308}\n', '{"op":"step","input":1}\n'
    replies = assert_one_reply_each_then_hello_works([INIT, big, step, '{"op":"step","input":-1.7e308}\n', step])
    assert "2^53" in replies[1]["error"] and "2^53" in replies[3]["error"]
    clean = replies_to([INIT, step, step])
    assert [replies[2]["release"], replies[4]["release"]] == [r["release"] for r in clean[1:]]


@pytest.mark.parametrize("field", ["algorithm", "params", "noise", "seed"])
@pytest.mark.parametrize("bad", [None, True, "x", [], {}, 10**400, -1, 1.5, "9" * 400], ids=repr)
def test_wrong_types_in_every_init_field(field: str, bad: Any) -> None:
    init = json.loads(INIT)
    init[field] = bad
    (reply,) = assert_one_reply_each_then_hello_works([json.dumps(init) + "\n"])
    if field == "seed" and bad == 10**400:  # a valid seed (an integer >= 0), however large
        assert reply == {"ok": True}
        return
    assert "error" in reply, reply
    replies = replies_to([json.dumps(init) + "\n", '{"op":"step","input":1}\n'])
    assert "error" in replies[1]  # a failed init leaves no algorithm to step


WRONG_VALUES: list[Any] = [None, True, False, "x", "", [], [None], {}, {"a": 1}, 10**400, -(10**400), 2**64, -1, 0,
                           0.5, 1e308, -1e308, 5e-324]


@pytest.mark.parametrize("anchor", STREAMING)
def test_wrong_values_in_every_parameter_and_input_of_every_algorithm(anchor: str) -> None:
    """Every parameter of the algorithm set, one at a time, to values of every JSON type (and extreme numbers);
    every step input likewise: each request gets one reply (an error or a result), never an internal error."""
    e = entry(anchor)
    vector = min(e.vectors(), key=lambda v: len(json.dumps(dict(v.params))) + len(json.dumps(list(v.inputs))))
    lines = []
    for name in [p.name for p in e.params.params]:
        for bad in WRONG_VALUES:
            init = {"op": "init", "algorithm": anchor, "params": {**vector.params, name: bad}, "noise": "own",
                    "seed": 0}
            lines += [json.dumps(init) + "\n", json.dumps({"op": "step", "input": vector.inputs[0]}) + "\n"]
    valid = {"op": "init", "algorithm": anchor, "params": dict(vector.params), "noise": "own", "seed": 0}
    lines.append(json.dumps(valid) + "\n")
    for bad in [*WRONG_VALUES, [10**400] * 3, {"points": [[10**400, 0.5]], "moves": [1]}, [[10**400]],
                {"added": [[10**400, 0]], "removed": []}]:
        lines.append(json.dumps({"op": "step", "input": bad}) + "\n")
        lines.append(json.dumps({"op": "run", "inputs": [bad]}) + "\n")
    lines += [json.dumps(valid) + "\n", json.dumps({"op": "step", "input": vector.inputs[0]}) + "\n"]
    replies = assert_one_reply_each_then_hello_works(lines)
    assert "release" in replies[-1], replies[-1]  # a valid init still works after all that


JSON_LEAF = st.one_of(st.none(), st.booleans(), st.integers(min_value=-(10**400), max_value=10**400),
                      st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=6))
JSON_VALUE = st.recursive(JSON_LEAF, lambda inner: st.lists(inner, max_size=4)
                          | st.dictionaries(st.text(max_size=6), inner, max_size=4), max_leaves=12)


@st.composite
def own_mode_session(draw: st.DrawFn) -> list[str]:
    """An init of a random algorithm (its first vector's parameters, one of them possibly replaced by any JSON
    value), then a few requests: valid or arbitrary inputs, runs, and arbitrary requests."""
    e = entry(draw(st.sampled_from(STREAMING)))
    vector = next(iter(e.vectors()))
    params = dict(vector.params)
    if draw(st.booleans()):
        params[draw(st.sampled_from(sorted(params)))] = draw(JSON_VALUE)
    requests: list[Any] = [{"op": "init", "algorithm": e.anchor, "params": params, "noise": "own",
                            "seed": draw(st.sampled_from([0, 1, 2**63, 10**30]))}]
    valid_input = st.sampled_from(list(vector.inputs))
    for _ in range(draw(st.integers(1, 4))):
        requests.append(draw(st.one_of(
            st.builds(lambda x: {"op": "step", "input": x}, valid_input | JSON_VALUE),
            st.builds(lambda xs: {"op": "run", "inputs": xs}, st.lists(valid_input | JSON_VALUE, max_size=3)),
            st.builds(lambda n: {"op": "runs", "inputs": list(vector.inputs)[:2], "count": n}, st.integers(-1, 3)),
            st.dictionaries(st.sampled_from(["op", "input", "inputs", "count", "params"]), JSON_VALUE, max_size=3),
        )))
    return [json.dumps(r) + "\n" for r in requests]


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(own_mode_session())
def test_fuzz_requests_each_get_one_reply(lines: list[str]) -> None:
    assert_one_reply_each_then_hello_works(lines)


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(st.lists(st.binary(max_size=40).map(lambda b: b.replace(b"\n", b"")), max_size=6))
def test_fuzz_byte_lines_each_get_one_reply(raw_lines: list[bytes]) -> None:
    """Arbitrary bytes (invalid UTF-8 included) through the reader the server uses on its stdin."""
    read = line_reader(io.BytesIO(b"".join(line + b"\n" for line in raw_lines) + HELLO.encode()))
    written: list[str] = []
    Server(read, written.append).loop()
    assert len(written) == len(raw_lines) + 1
    replies = [json.loads(text) for text in written]
    assert all(isinstance(r, dict) and "error" in r for r in replies[:-1])  # no byte line of <= 40 is a request
    assert replies[-1]["implementation"] == "dpstream-reference"


def test_a_line_longer_than_the_limit_is_skipped_with_one_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from dpstream.conformance import serve

    monkeypatch.setattr(serve, "MAX_LINE", 1000)
    read = line_reader(io.BytesIO(b'{"op":"hello","pad":"' + b"x" * 5000 + b'"}\n' + HELLO.encode()))
    written: list[str] = []
    Server(read, written.append).loop()
    assert len(written) == 2 and "longer than 1000 bytes" in json.loads(written[0])["error"]
    assert json.loads(written[1])["implementation"] == "dpstream-reference"


def test_the_process_answers_every_line_and_logs_no_traceback() -> None:
    lines = [BAD_LINES[k].encode("utf-8", "surrogateescape") for k in (
        "deep-arrays", "very-deep-arrays", "integer-400-digits", "blank", "not-utf8", "nan", "array", "long-line")]
    lines += [INIT.encode(), AFTER_INIT["integer-400-digits"].encode(), b'{"op":"step","input":1.7e308}\n',
              b'{"op":"step","input":1.7e308}\n',
              b'{"op":"init","algorithm":"001-alg8","params":{"epsilon":1e-320},"noise":"own","seed":0}\n',
              HELLO.encode()]
    done = subprocess.run(SERVE, input=b"".join(lines), capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr.decode()
    out = done.stdout.decode().splitlines()
    assert len(out) == len(lines), out
    replies = [json.loads(text) for text in out]
    assert all(isinstance(r, dict) for r in replies)
    assert "epsilon" in replies[-2]["error"]  # eps = 1e-320 is refused at init, naming the parameter
    assert replies[-1]["implementation"] == "dpstream-reference"
    assert b"Traceback" not in done.stderr, done.stderr.decode()


def test_a_client_that_stops_reading_ends_the_server_quietly() -> None:
    process = subprocess.Popen(SERVE, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert process.stdout is not None and process.stdin is not None
    process.stdout.close()  # the client goes away; the server's next answer meets a broken pipe
    try:
        process.stdin.write(HELLO.encode() * 2000)
        process.stdin.close()
    except BrokenPipeError:
        pass
    assert process.wait(timeout=60) == 0
    assert process.stderr is not None
    err = process.stderr.read()
    assert b"Traceback" not in err and b"Error" not in err, err.decode()


def test_the_validators_refuse_integers_beyond_the_float_range() -> None:
    """Behind the codecs: the shared validators and the parameter schema name the field (no OverflowError)."""
    from dpstream.catalog.params import integer, number
    from dpstream.errors import DPStreamInputError, require_finite_real, require_integer_value, require_positive_finite

    huge = 10**400
    for check in (lambda: require_finite_real("f(t)", huge), lambda: require_positive_finite("epsilon", huge),
                  lambda: require_finite_real("f(t)", -huge), lambda: number("x", "x").check(huge),
                  lambda: integer("T", "T").check(huge)):
        with pytest.raises(DPStreamInputError, match="finite"):
            check()
    assert require_integer_value("f(t)", huge) == huge  # an integer, however large (the door bounds it: 2^62)
