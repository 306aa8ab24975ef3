"""The protocol rules of docs/conformance.md ("JSON numbers", "init", "run and runs") as `dpstream serve` keeps them.

Each test drives :class:`dpstream.conformance.serve.Server` in memory (no child process) and checks one stated rule:
JSON numbers are read by value (an integer parameter, input, seed or count written ``4.0`` is accepted and gives
the releases of ``4``; fractions, booleans, strings and ``null`` are refused), the bulk op ``runs`` (N lists, one
error for an invalid stream, refused in tape mode, draws per run in transcript mode, the generator not reseeded
between runs or messages), an exhausted padding, the vertex labels, and the seeds the harness sends (below 2^32).
All deterministic; the file takes about 0.5 s, plus about 2 s to load the catalog once per session (measured on a
shared machine).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from dpstream.catalog.codecs import integer_list
from dpstream.catalog.codecs.phdstream import node_of
from dpstream.catalog.params import integer
from dpstream.conformance.serve import Server
from dpstream.errors import DPStreamInputError
from dpstream.noise import derived_seed


def serve(*messages: dict[str, Any]) -> list[dict[str, Any]]:
    """The answers of `dpstream serve` (own or transcript mode: no draw requests) to ``messages``."""
    lines: Iterator[str] = iter([json.dumps(m) + "\n" for m in messages])
    out: list[dict[str, Any]] = []
    Server(lambda: next(lines, ""), lambda text: out.append(json.loads(text))).loop()
    return out


def init(algorithm: str, params: dict[str, Any], noise: str = "own", seed: Any = 7) -> dict[str, Any]:
    return {"op": "init", "algorithm": algorithm, "params": params, "noise": noise, "seed": seed}


def test_an_integer_parameter_is_read_by_value() -> None:
    check = integer("T", "horizon").check
    for written in (4, 4.0, 4e0):
        value = check(written)
        assert value == 4 and type(value) is int
    assert type(check(1e300)) is int
    for refused in (2.5, True, "4", None, float("nan"), float("inf"), [4]):
        with pytest.raises(DPStreamInputError, match="T"):
            check(refused)
    assert integer_list([1.0, -1, 2e0], "moves", "integers") == [1, -1, 2]
    for refused_list in ([1.5], [True], ["1"], 1, None):
        with pytest.raises(DPStreamInputError, match="moves"):
            integer_list(refused_list, "moves", "integers")


@pytest.mark.parametrize(("algorithm", "ints", "floats", "inputs", "floated_inputs"), [
    ("001-alg10", {"epsilon": 1.0, "T": 4}, {"epsilon": 1.0, "T": 4.0}, [1, 0, 2, 1], [1.0, 0.0, 2.0, 1.0]),
    ("004-lem3.1", {"epsilon": 1.0, "T": 4}, {"epsilon": 1.0, "T": 4.0}, [1, 0, 2, 1], [1.0, 0.0, 2e0, 1.0]),
    ("001-alg5", {"d": 2, "D": 2, "fanout": 2, "epsilon": 1.0},
     {"d": 2.0, "D": 2.0, "fanout": 2.0, "epsilon": 1.0},
     [{"root": 2, "0": 2, "1": 0, "0.0": 1, "0.1": 1}], [{"root": 2.0, "0": 2.0, "1": 0.0, "0.0": 1.0, "0.1": 1.0}]),
    ("001-alg1", {"d": 1, "D": 2, "epsilon": 2.0}, {"d": 1.0, "D": 2.0, "epsilon": 2.0},
     [{"points": [[0.1], [0.7]], "moves": [1, 1]}, {"points": [[0.1]], "moves": [-1]}],
     [{"points": [[0.1], [0.7]], "moves": [1.0, 1.0]}, {"points": [[0.1]], "moves": [-1.0]}]),
    ("002-alg1", {"T": 3, "k": 2, "rho": 1.0, "n_pad": 20}, {"T": 3.0, "k": 2.0, "rho": 1.0, "n_pad": 20.0},
     [[0, 1, 1], [1, 1, 0], [0, 0, 1]], [[0.0, 1.0, 1.0], [1.0, 1.0, 0.0], [0.0, 0.0, 1.0]]),
])
def test_serve_accepts_integers_written_as_floats_with_the_same_releases(
        algorithm: str, ints: dict[str, Any], floats: dict[str, Any], inputs: list[Any],
        floated_inputs: list[Any]) -> None:
    steps = [{"op": "step", "input": x} for x in inputs]
    floated = [{"op": "step", "input": x} for x in floated_inputs]
    plain = serve(init(algorithm, ints), *steps, {"op": "runs", "inputs": inputs, "count": 3})
    written = serve(init(algorithm, floats, seed=7.0), *floated, {"op": "runs", "inputs": floated_inputs,
                                                                  "count": 3.0})
    assert plain[0] == written[0] == {"ok": True}
    assert all("error" not in a for a in plain + written), plain + written
    assert plain == written


def test_fractions_and_null_are_refused_at_init() -> None:
    for params in ({"epsilon": 1.0, "T": 2.5}, {"epsilon": 1.0, "T": None}, {"epsilon": 1.0, "T": True},
                   {"epsilon": 1.0, "T": "4"}):
        (answer,) = serve(init("001-alg8", params))
        assert "error" in answer and "T" in answer["error"], (params, answer)
    for seed in (2.5, -1, True, "1", None):
        (answer,) = serve(init("001-alg8", {"epsilon": 1.0}, seed=seed))
        assert "error" in answer and "seed" in answer["error"], (seed, answer)


def test_runs_answers_count_fresh_runs_and_one_error_for_an_invalid_stream() -> None:
    answers = serve(init("001-alg8", {"epsilon": 1.0, "T": 3}),
                    {"op": "runs", "inputs": [1, 0, 1], "count": 4},
                    {"op": "runs", "inputs": [1, 0, 1], "count": 4},
                    {"op": "runs", "inputs": [1, "0", 1], "count": 4},
                    {"op": "runs", "inputs": [1, 0, 1, 1], "count": 2},
                    {"op": "runs", "inputs": [1], "count": 0},
                    {"op": "runs", "inputs": [1], "count": 1.5},
                    {"op": "runs", "inputs": [1], "count": 1})
    first, second = answers[1]["runs"], answers[2]["runs"]
    assert len(first) == len(second) == 4 and all(len(r) == 3 for r in first + second)
    assert len({tuple(r) for r in first + second}) == 8  # fresh noise in every run and every message
    for bad in answers[3:7]:  # a string input, past the horizon, count 0, count 1.5: one error each
        assert set(bad) == {"error"}, bad
    assert len(answers[7]["runs"]) == 1  # the server goes on after the errors


def test_runs_is_refused_in_tape_mode_and_reports_draws_per_run_in_transcript_mode() -> None:
    tape = serve(init("001-alg10", {"epsilon": 1.0, "T": 4}, "tape"), {"op": "runs", "inputs": [1, 0], "count": 2})
    assert tape[0] == {"ok": True} and set(tape[1]) == {"error"}
    transcript = serve(init("001-alg10", {"epsilon": 1.0, "T": 4}, "transcript"),
                       {"op": "runs", "inputs": [1, 0], "count": 3})[1]
    assert len(transcript["runs"]) == len(transcript["draws"]) == 3
    for releases, draws in zip(transcript["runs"], transcript["draws"], strict=True):
        assert [d["site"] for d in draws] == ["001-alg10 L8 t=1", "001-alg10 L8 t=2"]
        z1, z2 = (d["value"] for d in draws)
        assert releases == pytest.approx([1 + z1, 1 + 0 + z2], abs=1e-12)  # node (0, 2] holds f(1) + f(2)


def test_a_refused_init_leaves_the_reference_uninitialised() -> None:
    answers = serve(init("001-alg8", {"epsilon": 1.0}), init("001-alg8", {"epsilon": -1.0}),
                    {"op": "step", "input": 1})
    assert answers[0] == {"ok": True} and "error" in answers[1]
    assert answers[2] == {"error": "step before a successful init"}


def test_the_harness_seeds_are_below_2_to_the_32() -> None:
    """Every seed the harness sends is 0 (vector checks) or a derived_seed, which is a 32-bit value whatever its
    inputs (docs/conformance.md, "init")."""
    seeds = [derived_seed(s, *labels) for s in (0, 1, 2**32, 2**63, 10**30)
             for labels in ((), ("chunk", 0), ("001-alg10", "law"), ("runs", 10**6))]
    assert all(0 <= s < 2**32 for s in seeds) and len(set(seeds)) == len(seeds)


@pytest.mark.parametrize(("label", "path"), [("root", ()), ("0", (0,)), ("10", (10,)), ("0.10.3", (0, 10, 3))])
def test_vertex_labels(label: str, path: tuple[int, ...]) -> None:
    assert node_of(label) == path


@pytest.mark.parametrize("label", ["", "01", "00", "0.01", "0.", ".0", "+1", "-1", " 1", "1 ", "1e1", "0x1",
                                   "\u0661", "Root", "0..1"])
def test_labels_that_are_refused(label: str) -> None:
    with pytest.raises(DPStreamInputError, match="vertex"):
        node_of(label)


def test_an_exhausted_padding_ends_the_run() -> None:
    """002-alg1 with n_pad = 0 and little budget: a step whose target count is negative is answered with an error,
    and so is every later step (docs/conformance.md, "step": when a run cannot go on); a run message whose fresh
    run exhausts the padding gets one error."""
    column = [0, 1]
    answers = serve(init("002-alg1", {"T": 4, "k": 1, "rho": 0.01, "n_pad": 0}, seed=1),
                    *[{"op": "step", "input": column}] * 4, {"op": "runs", "inputs": [column] * 4, "count": 3})
    steps = answers[1:5]
    first = next(i for i, a in enumerate(steps) if "error" in a)
    assert steps[first]["error"].startswith("padding exhausted at t=")
    assert all(a["error"].startswith("the synthesizer failed") for a in steps[first + 1:])
    assert len(steps[first + 1:]) >= 1
    assert set(answers[5]) == {"error"} and answers[5]["error"].startswith("padding exhausted")
