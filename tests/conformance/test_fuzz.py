"""The differential mode's fuzzer (dpstream.conformance.fuzz): choice sequences, sizes that grow, swarm features,
coverage and the shrinker; and, end to end, mistakes that only larger cases show.

Deterministic: the generators are seeded and the programs answer in tape mode, so no false-alarm probability.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from dpstream.catalog import entry
from dpstream.catalog.cases import Case, CaseDraw
from dpstream.conformance.fuzz import Candidate, ChoiceDraw, Tracer, materialize, shrink, tag_map, wide_choices
from dpstream.conformance.outcome import Mode, Verdict
from dpstream.conformance.runner import ConformConfig, conform
from dpstream.noise import data_rng

HERE = Path(__file__).resolve().parent


def test_zero_choices_are_the_simplest_decisions() -> None:
    draw = ChoiceDraw(Candidate())
    assert draw.integer(3, 90, (7, 1)) == 7  # the first edge inside the range
    assert draw.integer(3, 90) == 3 and draw.number(0.5, 2.0) == 0.5 and draw.choice(("a", "b")) == "a"
    assert draw.size(4, 12) == 4 and draw.feature("deletions") is True  # level 0; a replay keeps features on


def test_sizes_grow_with_the_level_and_stay_in_range() -> None:
    assert [ChoiceDraw(Candidate(level=x)).size(4, 64) for x in (0.0, 0.5, 1.0)] == [4, 16, 64]
    rng = data_rng(0)
    for level in (0.0, 0.3, 1.0):
        draw = ChoiceDraw(Candidate(level=level), rng)
        values = [draw.integer(1, draw.size(9, 64), (1, 2)) for _ in range(300)]
        assert min(values) >= 1 and max(values) <= draw.size(9, 64)
    big = ChoiceDraw(Candidate(level=1.0), rng)
    assert max(big.integer(1, big.size(9, 64)) for _ in range(300)) > 40  # the large sizes are reached


def test_a_case_replays_from_its_candidate_and_swarm_choices_are_kept() -> None:
    e = entry("001-alg1")
    assert e.cases is not None
    rng = data_rng(1)
    for _ in range(20):
        case, exact = materialize(e.cases, Candidate(level=0.7), rng)
        again, same = materialize(e.cases, exact)
        assert (again.params, again.inputs) == (case.params, case.inputs) and same == exact
        assert "deletions" in exact.decided  # the generator asked; the fuzzer decided at random


def _values(draw: CaseDraw) -> Case:
    n = draw.integer(1, draw.size(10, 1000))
    return Case({"n": n}, [draw.integer(0, 5) for _ in range(3)])


def test_the_shrinker_finds_the_smallest_failing_size_and_never_goes_below() -> None:
    """A 'mistake' that shows for n >= 600 only: the found case shrinks to n = 600 exactly (the bisection of the
    size choice), its other choices to the simplest (zeros)."""
    rng = data_rng(2)
    while True:
        case, found = materialize(_values, Candidate(level=1.0), rng)
        if case.params["n"] >= 900:
            break
    best = [(case.params["n"], sum(case.inputs))]

    def fails(c: Candidate) -> bool:  # still failing, and smaller than the best so far (the shrinker's contract)
        trial, _ = materialize(_values, c)
        size = (trial.params["n"], sum(trial.inputs))
        if trial.params["n"] >= 600 and size < best[0]:
            best[0] = size
            return True
        return False

    smallest, tried = shrink(found, fails, deadline=float("inf"), sizes=lambda c: wide_choices(_values, c))
    small, _ = materialize(_values, smallest)
    assert small.params["n"] == 600 and small.inputs == [0, 0, 0] and tried < 200


def test_the_tracer_sees_printed_lines_and_branches() -> None:
    e = entry("001-alg10")
    tracer = Tracer(tags=tag_map())
    from dpstream.insecure import InsecureSeededNoise
    from dpstream.vectors.generate import run_inputs

    _, keys = tracer.run(lambda: run_inputs(e, {"epsilon": 1.0, "T": 8}, [1, 0, 1, 1], InsecureSeededNoise(0)))
    tags = {k[1] for k in keys if k[0] == "tag"}
    assert {"001-alg10 L7", "001-alg10 L8", "001-alg10 L10"} <= tags
    assert any(k[0] == "arc" for k in keys) and any(k[0] == "line" for k in keys)


def test_the_report_has_a_coverage_table(tmp_path: Path) -> None:
    report = conform(ConformConfig(command=(sys.executable, "-m", "dpstream.cli", "serve"),
                                   modes=frozenset({Mode.DIFFERENTIAL}), algorithms=("001-alg5",), cases=6,
                                   differential_out=tmp_path / "out"))
    (outcome,) = report.outcomes
    coverage = outcome.details["coverage"]
    assert outcome.verdict is Verdict.PASS and outcome.details["cases"] == 6
    assert coverage["printed_lines"][0] == coverage["printed_lines"][1] == 13  # every line of PrivTree reached
    assert coverage["branches"] > 50 and coverage["largest"]["D"] >= 1 and coverage["kept"] >= 2
    from dpstream.conformance.report import format_table

    table = format_table(report)
    assert "Differential coverage" in table and max(len(line) for line in table.splitlines()) <= 100


LARGER = [("privtree-depth-6", "001-alg5", lambda p, x: p["D"] == 6 and len(x) == 1),
          ("cumulative-step-40", "002-alg2", lambda p, x: len(x) >= 40),
          ("tabular-step-20", "003-alg2", lambda p, x: len(x) >= 20)]


@pytest.mark.slow
@pytest.mark.parametrize(("mistake", "anchor", "corner"), LARGER, ids=[m for m, _, _ in LARGER])
def test_a_mistake_only_larger_cases_show_is_convicted(mistake: str, anchor: str, corner: object,
                                                      tmp_path: Path) -> None:
    """The default budget (60 s): the fuzzer's cases grow until one shows the mistake, which shrinks no lower than
    the size it needs (depth 6 stays 6; a step-40 mistake keeps 40 steps or more)."""
    report = conform(ConformConfig(command=(sys.executable, str(HERE / "mistaken_program.py"), mistake),
                                   modes=frozenset({Mode.DIFFERENTIAL}), algorithms=(anchor,),
                                   differential_out=tmp_path / "out"))
    (outcome,) = report.outcomes
    assert outcome.verdict is Verdict.DEVIATION, outcome.message
    case = outcome.details["minimal_case"]
    assert callable(corner) and corner(case["params"], case["inputs"]), case
    assert outcome.seconds < 60 * 1.15  # within the budget (plus the replay on a fresh copy)
