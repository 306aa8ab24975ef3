"""Must-reject accounting: an init case reports its refusal, and the replay of its `then` vector afterwards only
as far as usability goes (docs/conformance.md, "The checks").

A program with exactly one known-answer mistake (`fake_program.py ka-mistake`: a run with T = 1 releases 1e-6
too much, so only 001-alg8/T1-bits-eps0.5 fails, the vector all eleven init cases of 001-alg8 replay) gets that
difference once, from the known-answer check of the vector, and no must-reject deviation; programs that
misbehave after a refusal (`sticky-epsilon`, `dirty-after-refusal`) still get one must-reject deviation per
refusal. Deterministic (tape mode): no false-alarm probability.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from dpstream.catalog.codecs import Tolerance
from dpstream.conformance.outcome import Mode, Outcome, Verdict
from dpstream.conformance.runner import ConformConfig, conform
from dpstream.conformance.vector_checks import Replay, Replays, check_must_reject
from dpstream.conformance.wire import Program
from dpstream.vectors.corpus import known_answer, must_reject

FAKE = Path(__file__).resolve().parent / "fake_program.py"
BOTH = frozenset({Mode.KNOWN_ANSWER, Mode.MUST_REJECT})
REPLAYED = "001-alg8/T1-bits-eps0.5"
INIT_CASES = [r for r in must_reject("001-alg8") if r.at == "init"]
VECTORS = {v.id: v for v in known_answer("001-alg8")}


def fake(fault: str) -> list[str]:
    return [sys.executable, str(FAKE), fault]


def outcomes(fault: str, modes: frozenset[Mode]) -> tuple[int, list[Outcome]]:
    report = conform(ConformConfig(command=tuple(fake(fault)), modes=modes, algorithms=("001-alg8",)))
    return report.exit_status, report.outcomes


def test_the_corpus_has_the_shape_these_tests_rely_on() -> None:
    assert len(INIT_CASES) == 11 and {r.then for r in INIT_CASES} == {REPLAYED}
    assert [v.id for v in VECTORS.values() if v.params.get("T") == 1] == [REPLAYED]


def test_one_known_answer_mistake_is_reported_once() -> None:
    status, found = outcomes("ka-mistake", BOTH)
    bad = [x for x in found if x.verdict is not Verdict.PASS]
    assert status == 1 and [(x.mode, x.name) for x in bad] == [(Mode.KNOWN_ANSWER, REPLAYED)]
    assert "first release divergence at step 1" in bad[0].message
    init = [x for x in found if x.name in {r.id for r in INIT_CASES}]
    assert len(init) == 11 and all(x.verdict is Verdict.PASS for x in init)
    assert all(x.details["replayed"] == REPLAYED and "reported once" in x.message for x in init)


def test_without_known_answer_mode_the_replayed_vector_is_still_reported_once() -> None:
    status, found = outcomes("ka-mistake", frozenset({Mode.MUST_REJECT}))
    bad = [x for x in found if x.verdict is not Verdict.PASS]
    assert status == 1 and [(x.mode, x.name) for x in bad] == [(Mode.KNOWN_ANSWER, REPLAYED)]
    assert [x.name for x in found if x.mode is Mode.KNOWN_ANSWER] == [REPLAYED]  # only the vector replayed
    assert sum(x.mode is Mode.MUST_REJECT for x in found) == len(list(must_reject("001-alg8")))


def test_a_correct_program_passes_every_must_reject_case_alone() -> None:
    status, found = outcomes("none", frozenset({Mode.MUST_REJECT}))
    assert status == 0 and all(x.verdict is Verdict.PASS for x in found)


@pytest.mark.parametrize(("fault", "difference"), [
    ("sticky-epsilon", "the draw requests differ"),  # Lap(1) asked where the tape has Lap(2): same releases
    ("dirty-after-refusal", "releases[0]: expected"),  # the sum starts at 1: other releases
])
def test_a_program_not_usable_after_a_refusal_deviates_once_per_refusal(fault: str, difference: str) -> None:
    status, found = outcomes(fault, BOTH)
    bad = [x for x in found if x.verdict is not Verdict.PASS]
    assert status == 1 and sorted(x.name for x in bad) == sorted(r.id for r in INIT_CASES)
    assert all(x.mode is Mode.MUST_REJECT and "not usable afterwards" in x.message and difference in x.message
               for x in bad)


def test_a_replay_that_breaks_the_protocol_is_reported_once_and_the_cases_check_the_program_answers() -> None:
    status, found = outcomes("crash-on-T1", BOTH)
    bad = [x for x in found if x.verdict is not Verdict.PASS]
    assert status == 3 and [(x.mode, x.name, x.verdict) for x in bad] == [
        (Mode.KNOWN_ANSWER, REPLAYED, Verdict.PROTOCOL_ERROR)]
    init = [x for x in found if x.name in {r.id for r in INIT_CASES}]
    assert all(x.verdict is Verdict.PASS and "answers afterwards" in x.message for x in init)


@pytest.mark.parametrize(("fault", "verdict"), [("ka-mistake", Verdict.PASS), ("none", Verdict.PASS),
                                                ("dirty-after-refusal", Verdict.DEVIATION),
                                                ("sticky-epsilon", Verdict.DEVIATION)])
def test_a_case_checked_alone_replays_the_vector_without_a_refusal_first(fault: str, verdict: Verdict) -> None:
    replays: Replays = {}
    with Program(fake(fault)) as program:
        program.hello()
        first = check_must_reject(program, INIT_CASES[0], True, VECTORS.get, replays)
        second = check_must_reject(program, INIT_CASES[1], True, VECTORS.get)  # no shared replays at all
    assert first.verdict is verdict and second.verdict is verdict
    assert set(replays) == {REPLAYED} and isinstance(replays[REPLAYED], Replay)


def test_an_accepted_invalid_init_is_still_a_must_reject_deviation() -> None:
    status, found = outcomes("accept-everything", frozenset({Mode.MUST_REJECT}))
    init = [x for x in found if x.name in {r.id for r in INIT_CASES}]
    assert status == 1 and all(x.verdict is Verdict.DEVIATION and "accepted" in x.message for x in init)


def test_replays_differ_in_acceptance_refusals_releases_and_draws() -> None:
    tol = Tolerance()
    base = Replay(True, (1.0, [2, 3]), None, ('{"site": "a"}',))
    assert base.difference(Replay(True, (1.0 + 1e-12, [2, 3]), None, ('{"site": "a"}',)), tol) is None
    assert "refused" in str(base.difference(Replay(False), tol))
    assert "step 2" in str(base.difference(Replay(True, (1.0,), 2, ('{"site": "a"}',)), tol))
    assert "extra item [2]" in str(base.difference(Replay(True, (1.0, [2, 3], 4.0), None, ('{"site": "a"}',)), tol))
    assert "releases[1]" in str(base.difference(Replay(True, (1.0, [2, 3, 4]), None, ('{"site": "a"}',)), tol))
    assert "draw requests differ" in str(base.difference(Replay(True, (1.0, [2, 3]), None, ()), tol))
    assert "draw requests differ" in str(base.difference(Replay(True, (1.0, [2, 3]), None, ('{"site": "a"}',) * 2),
                                                         tol))
