"""Every rule by which tape mode judges a program's draw requests (`TapeAnswerer`), pinned so that loosening it
fails, and the known-answer check's use of them and of the vector's tolerance.

The rules (docs/conformance.md, "The checks" and "The error model"; docs/tape-format.md, "Replay"): the kind must
be the tape's; the parameter keys exactly the tape's; float parameters within the vector's draw tolerance,
absolute + relative * |tape's| (the boundary included, just over it fails: an evaluation-order difference of a few
units in the last place passes, a parameter off by 1e-9 relative does not, and neither does a zero moved beyond the
absolute part); integer parameters (k, n, count) exactly; list parameters (scores, low, high) element by element
with the same length; a site asked twice, a site never asked, a site not on the tape and a malformed request are
each noted and named in the outcome. A vector of version 2 (no draw tolerance) is read with relative 1e-12.
Deterministic: no false-alarm probability. `tools/mutation_check.py` applies loosening mutants and shows that these
tests kill each one.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pytest

from dpstream.arithmetic import U
from dpstream.catalog.codecs import Tolerance
from dpstream.conformance.outcome import Verdict
from dpstream.conformance.tape_mode import TapeAnswerer
from dpstream.conformance.vector_checks import check_known_answer
from dpstream.conformance.wire import Program, Reply
from dpstream.tape import TAPE_FORMAT, TAPE_VERSION, Tape
from dpstream.vectors.format import LEGACY_DRAW_TOLERANCE, KnownAnswerVector

BIG = 10**16  # integer parameters this large would pass the float tolerance when off by one
DRAW_TOLERANCE = Tolerance(2.0**-40, 8 * U)
"""A vector's draw tolerance as the error model writes one: 8 u relative (2 gamma(4)), 2^-40 absolute (a score)."""
LIMIT = 2.0**-40 + 8 * U * 2.0  # the largest move of the tape's scale 2.0 that passes

DRAWS: list[dict[str, Any]] = [
    {"site": "L t=1", "kind": "laplace", "params": {"scale": 2.0}, "value": 0.5},
    {"site": "D t=1", "kind": "discrete_laplace", "params": {"scale": 3.0}, "value": 2},
    {"site": "G t=1", "kind": "discrete_gaussian", "params": {"sigma2": 4.0}, "value": -1},
    {"site": "E t=1", "kind": "exponential_mechanism",
     "params": {"scores": [1.0, 2.0, 3.0], "epsilon": 1.0, "sensitivity": 1.0}, "value": 2},
    {"site": "C t=1", "kind": "coin", "params": {}, "value": True},
    {"site": "H t=1", "kind": "choice", "params": {"n": 10, "k": 3}, "value": [1, 4, 7]},
    {"site": "N t=1", "kind": "choice", "params": {"n": BIG, "k": 1}, "value": [5]},
    {"site": "U t=1", "kind": "uniform_box", "params": {"low": [0.0, 0.0], "high": [1.0, 2.0], "count": 2},
     "value": [[0.125, 0.25], [0.5, 1.5]]},
]
TAPE = Tape.from_json({"format": TAPE_FORMAT, "version": TAPE_VERSION, "draws": DRAWS})
BY_SITE = {d["site"]: d for d in DRAWS}


def request(site: str, **changes: Any) -> dict[str, Any]:
    """The tape's request at ``site`` with some parameters changed (``kind=`` changes the kind)."""
    draw = BY_SITE[site]
    kind = changes.pop("kind", draw["kind"])
    return {"site": site, "kind": kind, "params": {**draw["params"], **changes}}


def asked(*requests: Mapping[str, Any], tolerance: Tolerance = DRAW_TOLERANCE) -> TapeAnswerer:
    answerer = TapeAnswerer(TAPE, tolerance)
    answerer.begin_step(1)
    for r in requests:
        answerer.answer(r)
    return answerer


def whats(answerer: TapeAnswerer) -> list[tuple[str, str]]:
    return [(i.what, i.site) for i in answerer.issues]


def rel(x: float, r: float) -> float:
    """x moved by the relative amount r (of |x|)."""
    return x + r * abs(x)


def ulps(x: float, n: int) -> float:
    """x moved n units in the last place (up for n > 0)."""
    for _ in range(abs(n)):
        x = math.nextafter(x, math.inf if n > 0 else -math.inf)
    return x


def test_the_tapes_own_requests_are_answered_with_its_values_and_nothing_is_noted() -> None:
    answerer = TapeAnswerer(TAPE, DRAW_TOLERANCE)
    answerer.begin_step(1)
    values = [answerer.answer(request(d["site"])) for d in DRAWS]
    assert values == [d["value"] for d in DRAWS]
    assert answerer.issues == [] and answerer.missing() == []
    assert TapeAnswerer(TAPE).tolerance == LEGACY_DRAW_TOLERANCE == Tolerance(0.0, 1e-12)  # version 2 vectors


def test_the_kind_must_be_the_tapes() -> None:
    answerer = asked(request("L t=1", kind="discrete_laplace"), request("D t=1", kind="laplace"),
                     request("G t=1"))
    assert whats(answerer) == [("kind", "L t=1"), ("kind", "D t=1")]
    assert answerer.issues[0].expected == "laplace" and answerer.issues[0].got == "discrete_laplace"


@pytest.mark.parametrize("params", [
    {"scale": 2.0, "shift": 0.0},  # an extra key (the parameter check of the kind would ignore it)
    {"scale": 2.0, "sigma2": 4.0},
])
def test_an_extra_parameter_key_is_noted(params: dict[str, Any]) -> None:
    answerer = asked({"site": "L t=1", "kind": "laplace", "params": params})
    assert whats(answerer) == [("params", "L t=1")] and answerer.issues[0].got == params


def test_a_missing_parameter_key_is_noted() -> None:
    answerer = asked({"site": "L t=1", "kind": "laplace", "params": {}},
                     {"site": "H t=1", "kind": "choice", "params": {"n": 10}})
    assert whats(answerer) == [("malformed", "L t=1"), ("malformed", "H t=1")]


@pytest.mark.parametrize("scale", [ulps(2.0, 1), ulps(2.0, -1), ulps(2.0, 4), ulps(2.0, -4), 2, 2.0 + LIMIT,
                                   2.0 - LIMIT])
def test_an_evaluation_order_difference_passes_up_to_the_boundary(scale: float) -> None:
    assert asked(request("L t=1", scale=scale)).issues == []


@pytest.mark.parametrize("scale", [ulps(2.0 + LIMIT, 1), ulps(2.0 - LIMIT, -1), rel(2.0, 1e-9), rel(2.0, -1e-12),
                                   2.0001, 3.0])
def test_a_float_parameter_beyond_the_draw_tolerance_is_noted(scale: float) -> None:
    answerer = asked(request("L t=1", scale=scale))
    assert whats(answerer) == [("params", "L t=1")]
    assert answerer.issues[0].expected == {"scale": 2.0} and answerer.issues[0].got == {"scale": scale}


@pytest.mark.parametrize("scale", [rel(2.0, 1e-9), rel(2.0, 1e-6), rel(2.0, 1e-3)])
def test_a_loosened_tolerance_would_let_through_what_the_vectors_tolerance_convicts(scale: float) -> None:
    assert whats(asked(request("L t=1", scale=scale))) == [("params", "L t=1")]
    assert asked(request("L t=1", scale=scale), tolerance=Tolerance(0.0, 1e-3)).issues == []


def test_version_2_vectors_keep_their_relative_1e_12() -> None:
    assert asked(request("L t=1", scale=rel(2.0, 0.99e-12)), tolerance=LEGACY_DRAW_TOLERANCE).issues == []
    assert whats(asked(request("L t=1", scale=rel(2.0, 1.01e-12)), tolerance=LEGACY_DRAW_TOLERANCE)) == [
        ("params", "L t=1")]


@pytest.mark.parametrize("site", ["D t=1", "G t=1"])
def test_the_float_parameters_of_integer_noise_follow_the_same_rule(site: str) -> None:
    key = "scale" if site == "D t=1" else "sigma2"
    value = float(BY_SITE[site]["params"][key])
    assert asked(request(site, **{key: ulps(value, 3)})).issues == []
    assert whats(asked(request(site, **{key: rel(value, 1e-9)}))) == [("params", site)]


@pytest.mark.parametrize(("site", "changes"), [
    ("H t=1", {"n": 11}), ("H t=1", {"k": 2}), ("N t=1", {"n": BIG + 1}), ("N t=1", {"n": BIG - 1}),
    ("U t=1", {"count": 3}), ("U t=1", {"count": 1}),
])
def test_integer_parameters_must_be_equal(site: str, changes: dict[str, Any]) -> None:
    assert whats(asked(request(site, **changes))) == [("params", site)]


@pytest.mark.parametrize(("site", "changes"), [("H t=1", {"n": 10.0}), ("H t=1", {"k": 3.5}),
                                               ("U t=1", {"count": 2.0}), ("H t=1", {"k": True})])
def test_an_integer_parameter_given_as_a_float_or_a_boolean_is_malformed(site: str, changes: dict[str, Any]) -> None:
    assert whats(asked(request(site, **changes))) == [("malformed", site)]


@pytest.mark.parametrize(("site", "changes"), [
    ("E t=1", {"scores": [1.0, 2.0, 3.0, 4.0]}), ("E t=1", {"scores": [1.0, 2.0]}),  # an extra, a missing item
    ("E t=1", {"scores": [1.0, rel(2.0, 1e-9), 3.0]}), ("E t=1", {"scores": [3.0, 2.0, 1.0]}),
    ("E t=1", {"scores": [1.0, 2.0, 4.0]}),  # a score off by a step
    ("E t=1", {"epsilon": rel(1.0, 1e-9)}), ("E t=1", {"sensitivity": 2.0}),
    ("U t=1", {"low": [0.0, 0.0, 0.0], "high": [1.0, 2.0, 3.0]}), ("U t=1", {"low": [0.0], "high": [1.0]}),
    ("U t=1", {"high": [1.0, rel(2.0, -1e-9)]}), ("U t=1", {"low": [2.0**-39, 0.0]}),
])
def test_list_parameters_are_compared_element_by_element_with_the_same_length(
        site: str, changes: dict[str, Any]) -> None:
    assert whats(asked(request(site, **changes))) == [("params", site)]


def test_list_parameters_pass_within_a_few_units_in_the_last_place() -> None:
    assert asked(request("E t=1", scores=[1.0, ulps(2.0, 2), ulps(3.0, -3)]),
                 request("U t=1", high=[ulps(1.0, 1), ulps(2.0, -4)])).issues == []


def test_the_absolute_part_lets_a_zero_move_by_rounding_and_no_further() -> None:
    """A score that is 0 in real arithmetic comes out 0.0 in one order and 2.2e-16 in another: the absolute part
    (from the entry's error model, which bounds the score by the mass it is computed from) accepts both."""
    assert asked(request("U t=1", low=[2.220446049250313e-16, 0.0])).issues == []
    assert asked(request("U t=1", low=[2.0**-40, 0.0])).issues == []
    assert whats(asked(request("U t=1", low=[ulps(2.0**-40, 1), 0.0]))) == [("params", "U t=1")]
    relative_only = Tolerance(0.0, 8 * U)
    assert whats(asked(request("U t=1", low=[math.nextafter(0.0, 1.0), 0.0]), tolerance=relative_only)) == [
        ("params", "U t=1")]


def test_a_site_asked_twice_is_noted_in_the_same_step_and_across_steps() -> None:
    answerer = asked(request("L t=1"), request("L t=1"))
    assert whats(answerer) == [("repeated-site", "L t=1")]
    answerer.begin_step(2)
    answerer.answer(request("C t=1"))
    answerer.answer(request("C t=1"))
    assert whats(answerer)[1:] == [("repeated-site", "C t=1")] and answerer.issues[1].step == 2


def test_a_site_never_asked_is_missing() -> None:
    answerer = asked(*(request(d["site"]) for d in DRAWS if d["site"] not in ("G t=1", "U t=1")))
    assert answerer.missing() == ["G t=1", "U t=1"] and answerer.issues == []


def test_a_site_not_on_the_tape_is_unexpected_and_answered_with_a_neutral_value() -> None:
    answerer = TapeAnswerer(TAPE, DRAW_TOLERANCE)
    answerer.begin_step(3)
    assert answerer.answer({"site": "L t=2", "kind": "laplace", "params": {"scale": 2.0}}) == 0.0
    assert answerer.answer({"site": "H t=9", "kind": "choice", "params": {"n": 5, "k": 2}}) == [0, 1]
    assert whats(answerer) == [("unexpected-site", "L t=2"), ("unexpected-site", "H t=9")]
    assert answerer.issues[0].step == 3 and "L t=2" in answerer.issues[0].describe()


@pytest.mark.parametrize("draw", [
    {"site": "L t=1", "kind": "gaussian", "params": {"scale": 2.0}},  # unknown kind
    {"site": "L t=1", "kind": None, "params": {"scale": 2.0}},
    {"site": "L t=1", "kind": "laplace", "params": {"scale": -2.0}},  # bad parameters
    {"site": "L t=1", "kind": "laplace", "params": {"scale": "2.0"}},
    {"site": "L t=1", "kind": "laplace", "params": {"scale": math.inf}},
    {"site": "L t=1", "kind": "laplace", "params": [2.0]},
    {"site": "L t=1", "kind": "laplace"},
    {"site": "E t=1", "kind": "exponential_mechanism", "params": {"scores": [], "epsilon": 1.0, "sensitivity": 1.0}},
    {"site": "U t=1", "kind": "uniform_box", "params": {"low": [1.0, 0.0], "high": [0.0, 2.0], "count": 2}},
    {"site": "", "kind": "laplace", "params": {"scale": 2.0}},  # no usable site
    {"site": 7, "kind": "laplace", "params": {"scale": 2.0}},
    {"kind": "laplace", "params": {"scale": 2.0}},
])
def test_a_malformed_request_is_noted(draw: dict[str, Any]) -> None:
    answerer = asked(draw)
    assert [i.what for i in answerer.issues] == ["malformed"]
    assert answerer.issues[0].site == str(draw.get("site")) and "malformed" in answerer.issues[0].describe()


def test_the_draws_of_a_refused_step_do_not_count() -> None:
    answerer = asked(request("L t=1"))
    answerer.forget_step()  # the step was refused: its draws did not happen
    assert "L t=1" in answerer.missing()
    answerer.begin_step(1)
    answerer.answer(request("L t=1"))  # so asking again is not a repeat
    assert answerer.issues == [] and "L t=1" not in answerer.missing()


# ------------------------------------------------------------------------- the known-answer check reports them
class Scripted(Program):
    """An in-process stand-in for a program under test: step t sends the draw requests ``steps[t-1][0]`` and
    releases ``steps[t-1][1]``."""

    def __init__(self, steps: Sequence[tuple[Sequence[Mapping[str, Any]], Any]]) -> None:
        super().__init__(["scripted"])
        self.steps = list(steps)
        self.t = 0

    def init(self, algorithm: str, params: Mapping[str, Any], noise: str, seed: int) -> str | None:
        self.t = 0
        return None

    def step(self, value: Any, answer: Callable[[Mapping[str, Any]], Any] | None) -> Reply:
        assert answer is not None
        draws, release = self.steps[self.t]
        self.t += 1
        for d in draws:
            answer(d)
        return Reply("release", release)


CORPUS = Tolerance()  # 1e-9 + 1e-9 |expected|


def vector(expected: list[Any], tolerance: Tolerance = CORPUS,
           draw_tolerance: Tolerance = DRAW_TOLERANCE) -> KnownAnswerVector:
    return KnownAnswerVector(id="001-alg8/pins", algorithm="001-alg8", params={"epsilon": 0.5, "T": 2},
                             inputs=[1] * len(expected), tape=TAPE, expected=expected, tolerance=tolerance,
                             draw_tolerance=draw_tolerance)


def test_the_outcome_names_every_kind_of_draw_issue() -> None:
    all_but = [request(d["site"]) for d in DRAWS if d["site"] not in ("G t=1", "D t=1", "E t=1")]
    program = Scripted([
        ([*all_but, request("L t=1")], 1.0),  # L asked twice
        ([{"site": "X t=2", "kind": "coin", "params": {}}, request("H t=1", kind="banana"),
          request("E t=1", scores=[1.0, 2.0])], 2.0),  # a site not on the tape, a malformed request, other params
    ])
    outcome = check_known_answer(program, vector([1.0, 2.0]))
    assert outcome.verdict is Verdict.DEVIATION
    issues = [(i["what"], i["site"], i["step"]) for i in outcome.details["draw_issues"]]
    assert issues == [("repeated-site", "L t=1", 1), ("unexpected-site", "X t=2", 2), ("malformed", "H t=1", 2),
                      ("params", "E t=1", 2)]
    assert outcome.details["draw_issue_count"] == 4
    assert outcome.details["unexpected_sites"] == ["X t=2"]
    assert outcome.details["missing_sites"] == ["D t=1", "G t=1"] and outcome.details["missing_site_count"] == 2
    assert "L t=1" in outcome.message and "'D t=1'" in outcome.message  # the first divergence and a missing site


def test_a_clean_replay_passes_and_the_releases_use_the_vectors_tolerance() -> None:
    every = [request(d["site"]) for d in DRAWS]
    quarter = Tolerance(0.25, 0.25)  # expected 2.0: limit 0.75, exactly
    assert check_known_answer(Scripted([(every, 2.75)]), vector([2.0], quarter)).verdict is Verdict.PASS
    over = check_known_answer(Scripted([(every, math.nextafter(2.75, 3.0))]), vector([2.0], quarter))
    assert over.verdict is Verdict.DEVIATION and over.details["first_divergence"]["step"] == 1
    assert over.details["first_divergence"]["tolerance"] == {"absolute": 0.25, "relative": 0.25}
    exact = check_known_answer(Scripted([(every, 2.0000000001)]), vector([2.0], Tolerance(0.0, 0.0)))
    assert exact.verdict is Verdict.DEVIATION
    integer = check_known_answer(Scripted([(every, 3.000000001)]), vector([3]))
    assert integer.verdict is Verdict.DEVIATION and "integer" in integer.message


def test_the_known_answer_check_judges_draws_by_the_vectors_draw_tolerance() -> None:
    inside = [request(d["site"]) for d in DRAWS if d["site"] != "L t=1"] + [request("L t=1", scale=2.0 + LIMIT)]
    assert check_known_answer(Scripted([(inside, 2.0)]), vector([2.0])).verdict is Verdict.PASS
    tight = check_known_answer(Scripted([(inside, 2.0)]), vector([2.0], draw_tolerance=Tolerance(0.0, 0.0)))
    assert tight.verdict is Verdict.DEVIATION and tight.details["draw_issues"][0]["site"] == "L t=1"
