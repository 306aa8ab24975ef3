"""Shared by the tests of the programs written from the docs (examples/conformance/js, rust; the outside
JavaScript synthesizers).

Both programs implement 001-alg10 (Binary tree counter) and 001-alg5 (PrivTree_T) in tape and own
mode with the bulk op ``runs``, and take ``--as-printed`` (001-alg10's printed noise scale log2(T)/eps,
not eps-DP: erratum E-counters-1). Each test file builds its program (or skips with the reason) and
calls these checks; loaded with ``dpstream.testing.load_script`` (the test folders are not packages).
"""

from __future__ import annotations

import json
import math
import re
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from scipy import stats

from dpstream.conformance.outcome import Mode, Verdict
from dpstream.conformance.runner import ConformConfig, ConformReport, conform
from dpstream.vectors.corpus import known_answer, must_reject

ALGORITHMS = ("001-alg10", "001-alg5")
AS_PRINTED = "--as-printed"


def node_or_skip(what: str) -> str:
    """The ``node`` executable (version 18 or later), or skip the test saying that ``what`` was not run."""
    node = shutil.which("node")
    if node is None:
        pytest.skip(f"{what} not run: node is not on PATH")
    version = subprocess.run([node, "--version"], capture_output=True, text=True, check=False).stdout.strip()
    major = re.match(r"v(\d+)\.", version)
    if major is None or int(major.group(1)) < 18:
        pytest.skip(f"{what} not run: node {version or '?'} is older than 18")
    return node


def cargo_build(crate: Path, what: str) -> subprocess.CompletedProcess[str]:
    """``cargo build --offline --release`` of ``crate`` into its own, git-ignored ``target`` (no network, no
    registry: the crates have no dependencies), or skip the test saying that ``what`` was not run."""
    cargo = shutil.which("cargo")
    if cargo is None:
        pytest.skip(f"{what} not built: cargo is not on PATH")
    command = [cargo, "build", "--offline", "--release", "--manifest-path", str(crate / "Cargo.toml"),
               "--target-dir", str(crate / "target")]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return done


def conform_json(tmp_path: Path, anchor: str, mode: str, program: Sequence[str],
                 options: Sequence[str] = ()) -> tuple[int, dict[str, Any]]:
    """``dpstream conform --mode MODE --algorithm ANCHOR --seed 0 [OPTIONS] --json ... -- PROGRAM`` (this venv's
    script): its exit status (0, 1 or 2, else the assertion fails) and its JSON report."""
    report = tmp_path / "r.json"
    done = subprocess.run([str(Path(sys.executable).parent / "dpstream"), "conform", "--mode", mode, "--algorithm",
                           anchor, "--seed", "0", "--no-progress", *options, "--json", str(report), "--", *program],
                          capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode in (0, 1, 2), done.stdout[-2000:] + done.stderr[-2000:]
    return done.returncode, json.loads(report.read_text())


def request_lines(command: Sequence[str], messages: Sequence[dict[str, Any] | str]) -> list[dict[str, Any]]:
    """Send every message (a dict, or a raw line) at once, close stdin, and return the answer lines;
    the program must exit with status 0 at end of input."""
    text = "".join((m if isinstance(m, str) else json.dumps(m)) + "\n" for m in messages)
    done = subprocess.run(list(command), input=text, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return [json.loads(line) for line in done.stdout.splitlines()]


def own_runs(command: Sequence[str], algorithm: str, params: dict[str, Any], inputs: list[Any], count: int,
             seed: int) -> list[list[Any]]:
    """``count`` own-mode runs of ``inputs`` through one ``runs`` message after an init with ``seed``."""
    init = {"op": "init", "algorithm": algorithm, "params": params, "noise": "own", "seed": seed}
    answers = request_lines(command, [init, {"op": "runs", "inputs": inputs, "count": count}])
    assert answers[0] == {"ok": True}, answers[0]
    runs: list[list[Any]] = answers[1]["runs"]
    assert len(runs) == count and all(len(r) == len(inputs) for r in runs)
    return runs


def check_hello(command: Sequence[str]) -> None:
    (answer,) = request_lines(command, [{"op": "hello"}])
    assert answer["protocol"] == 1
    assert tuple(answer["algorithms"]) == ALGORITHMS
    assert answer["modes"] == ["tape", "own"] and answer["ops"] == ["runs"]


def check_vectors_pass(command: Sequence[str]) -> None:
    """Known-answer and must-reject: exit status 0, every vector of both algorithms checked and passed."""
    modes = frozenset({Mode.KNOWN_ANSWER, Mode.MUST_REJECT})
    report = conform(ConformConfig(command=tuple(command), modes=modes, algorithms=ALGORITHMS))
    failed = [o.message for o in report.outcomes if o.verdict is not Verdict.PASS]
    assert report.exit_status == 0 and not failed, failed[:3]
    expected = sum(len(list(known_answer(a))) + len(list(must_reject(a))) for a in ALGORITHMS)
    assert len(report.outcomes) == expected > 0


def check_as_printed_deviates(command: Sequence[str]) -> None:
    """``--as-printed``: every 001-alg10 vector deviates at its first draw request (the scale), exit 1."""
    report = conform(ConformConfig(command=(*command, AS_PRINTED), modes=frozenset({Mode.KNOWN_ANSWER}),
                                   algorithms=("001-alg10",)))
    assert report.exit_status == 1
    assert len(report.outcomes) == len(list(known_answer("001-alg10"))) > 0
    assert all(o.verdict is Verdict.DEVIATION and "001-alg10 L8 t=1" in o.message for o in report.outcomes)


def statistical(command: Sequence[str]) -> ConformReport:
    """The quick statistical checks of the counter 001-alg10 (privacy search and law), own mode."""
    return conform(ConformConfig(command=tuple(command), modes=frozenset({Mode.STATISTICAL}),
                                 algorithms=("001-alg10",)))


def check_seeded(command: Sequence[str]) -> None:
    """The seed replays a run; another seed gives others; runs after one init are not reseeded."""
    params = {"epsilon": 1.0, "T": 4}
    first = own_runs(command, "001-alg10", params, [1, 0, 1, 1], 3, seed=7)
    assert first == own_runs(command, "001-alg10", params, [1, 0, 1, 1], 3, seed=7)
    assert first != own_runs(command, "001-alg10", params, [1, 0, 1, 1], 3, seed=8)
    assert first[0] != first[1] != first[2]


def check_counter_noise(command: Sequence[str], as_printed: bool) -> None:
    """g(16) - 16 over 20000 own-mode runs of T = 16 (t = 16 is one tree node) against Laplace of the
    stated scale, bit_length(16)/eps = 10 (printed: log2(16)/eps = 8) at eps = 0.5: KS test.

    False-alarm probability 1e-6 (p-value threshold; fixed seed). The other build's scale must be rejected
    (KS distance ~0.04 between Laplace(10) and Laplace(8): p ~ 1e-29 at n = 20000), so the test tells
    the two apart.
    """
    args = (*command, AS_PRINTED) if as_printed else tuple(command)
    runs = own_runs(args, "001-alg10", {"epsilon": 0.5, "T": 16}, [1] * 16, 20_000, seed=12345)
    errors = [r[-1] - 16 for r in runs]
    scale, other = (8.0, 10.0) if as_printed else (10.0, 8.0)
    assert stats.kstest(errors, stats.laplace(scale=scale).cdf).pvalue > 1e-6
    assert stats.kstest(errors, stats.laplace(scale=other).cdf).pvalue < 1e-6


def check_privtree_split_probability(command: Sequence[str]) -> None:
    """PrivTree's one own-mode decision at the root, against its closed form.

    D = 1, eps = 1 (lambda = D/eps = 1, delta = lambda ln 2), theta = 1, F = 0: the biased count is
    b = max(0 - 0 delta, theta - delta) = 1 - ln 2, so P[split] = P[Lap(1) > theta - b = ln 2] =
    exp(-ln 2)/2 = 1/4. Without the clamp at theta - delta it would be exp(-1)/2 = 0.184, which the data
    must reject. 20000 runs (fixed seed), binomial test, false-alarm probability 1e-6.
    """
    params = {"d": 1, "D": 1, "epsilon": 1.0, "theta": 1.0}
    runs = own_runs(command, "001-alg5", params, [{"root": 0.0, "0": 0.0, "1": 0.0}], 20_000, seed=99)
    shapes = {json.dumps(r[0], sort_keys=True) for r in runs}
    assert shapes == {'{"leaves": ["root"], "nodes": ["root"]}', '{"leaves": ["0", "1"], "nodes": ["root", "0", "1"]}'}
    splits = sum(len(r[0]["nodes"]) == 3 for r in runs)
    assert stats.binomtest(splits, len(runs), 0.25).pvalue > 1e-6
    assert stats.binomtest(splits, len(runs), math.exp(-1) / 2).pvalue < 1e-6


def check_refusals_change_nothing(command: Sequence[str]) -> None:
    """Refused messages answer one error line each and leave the run as it was; a bad draw answer in
    tape mode is an error and the step did not happen; end of input while a draw waits: exit 0."""
    tape = {"op": "init", "algorithm": "001-alg10", "params": {"epsilon": 1.0, "T": 4}, "noise": "tape", "seed": 0}
    answers = request_lines(command, [
        tape,
        "not json", "[1]", {"op": "fly"}, {"op": "step", "input": "1"}, {"op": "step", "input": 1, "x": 0},
        {"op": "init", "algorithm": "001-alg10", "params": {"epsilon": 0, "T": 4}, "noise": "tape", "seed": 0},
        {"op": "step", "input": 1.0}, '{"value":"0.5"}',
        {"op": "step", "input": 1.0}, {"value": 0.5},
        {"op": "step", "input": 2.0},
    ])
    assert answers[0] == {"ok": True}
    assert all(list(a) == ["error"] for a in answers[1:7]), answers[1:7]
    assert answers[7]["draw"]["site"] == "001-alg10 L8 t=1" and "error" in answers[8]
    assert answers[9]["draw"] == {"site": "001-alg10 L8 t=1", "kind": "laplace", "params": {"scale": 3}}
    assert answers[10] == {"release": 1.5}
    assert answers[11]["draw"]["site"] == "001-alg10 L8 t=2" and len(answers) == 12
