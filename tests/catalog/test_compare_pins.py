"""Every rule of the release comparison (`dpstream.catalog.codecs.compare`), pinned so that loosening it fails.

The rules (docs/conformance.md, "The checks"): a float expected matches any JSON number within
`absolute + relative * |expected|` (boundary included, just over fails, both directions); an integer expected
only a number of the same value; the spelling of a JSON number never matters; booleans are not numbers; null,
NaN and infinities match no number; objects need the same keys and lists the same length, at every depth,
the top-level list of a run's releases too. Deterministic: no false-alarm probability.
`tools/mutation_check.py` applies loosening mutants to `compare` and shows that these tests kill each one.
Tolerances such as 0.25 are exact binary fractions, so every boundary below is exact, not rounded.
"""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

from dpstream.catalog.codecs import Tolerance, compare
from dpstream.vectors.corpus import known_answer

QUARTER = Tolerance(absolute=0.25, relative=0.25)  # expected 2.0: limit 0.25 + 0.25 * 2 = 0.75, exactly
CORPUS = Tolerance()  # a tolerance of 1e-9 + 1e-9 |expected| (the default Tolerance)
EXACT = Tolerance(0.0, 0.0)


def up(x: float) -> float:
    return math.nextafter(x, math.inf)


def down(x: float) -> float:
    return math.nextafter(x, -math.inf)


def matches(expected: Any, got: Any, tolerance: Tolerance = CORPUS) -> bool:
    return compare(expected, got, tolerance) is None


# ---------------------------------------------------------------------------------------------- floats
@pytest.mark.parametrize(("got", "ok"), [
    (2.75, True), (1.25, True),  # exactly on the boundary, above and below: included
    (up(2.75), False), (down(1.25), False),  # one unit in the last place beyond it: fails
    (2.0, True), (2, True), (3, False), (1, False),
])
def test_a_float_expected_matches_within_the_tolerance_boundary_included(got: float, ok: bool) -> None:
    assert matches(2.0, got, QUARTER) is ok


def test_the_corpus_tolerance_is_not_loosened() -> None:
    """Just over 1e-9 + 1e-9 |expected| fails, just under passes (a tolerance widened to 1e-3 fails here)."""
    for expected in (1.0, -7.5, 0.0, 123.456):
        limit = 1e-9 + 1e-9 * abs(expected)
        for sign in (1, -1):
            assert matches(expected, expected + sign * limit * (1 - 1e-6))
            assert not matches(expected, expected + sign * limit * (1 + 1e-6))
        assert not matches(expected, expected + 1e-4)


def test_a_corpus_vector_is_compared_with_its_own_tolerance() -> None:
    vector = next(v for v in known_answer("001-alg10") if v.id == "001-alg10/T8-bits-eps2")
    expected = vector.expected[0]
    assert isinstance(expected, float) and vector.tolerance.absolute > 0  # the entry's error model on this case
    limit = vector.tolerance.absolute + vector.tolerance.relative * abs(expected)
    assert compare(expected, expected + 0.999 * limit, vector.tolerance) is None
    diff = compare(expected, expected + 1.001 * limit, vector.tolerance)
    assert diff is not None and diff.startswith("release: expected")


def test_the_relative_part_scales_with_the_expected_value_not_the_received_one() -> None:
    half = Tolerance(0.0, 0.5)
    assert matches(2.0, 3.0, half) and matches(3.0, 2.0, half)  # limits 1.0 and 1.5
    assert not matches(2.0, 3.25, half)  # 0.5 * |got| = 1.625 would accept it; 0.5 * |expected| = 1.0 does not
    assert matches(-2.0, -3.0, half) and matches(-2.0, -1.0, half)  # |expected|: a negative value has a limit too
    assert not matches(-2.0, down(-3.0), half) and not matches(-2.0, -3.25, half)


def test_the_absolute_part_alone_and_a_zero_tolerance() -> None:
    assert matches(0.0, 0.5, Tolerance(0.5, 0.0)) and matches(0.0, -0.5, Tolerance(0.5, 0.0))
    assert not matches(0.0, up(0.5), Tolerance(0.5, 0.0))
    assert matches(0.1, 0.1, EXACT) and not matches(0.1, up(0.1), EXACT) and not matches(0.1, down(0.1), EXACT)


# ---------------------------------------------------------------------------------------------- integers
@pytest.mark.parametrize(("text", "ok"), [
    ("3", True), ("3.0", True), ("3e0", True), ("0.3e1", True),
    ("3.0000001", False), ("3.000000001", False),  # 1e-9 is within the corpus tolerance 4e-9 of a float 3.0
    ("2.9999999999", False), ("4", False), ("-3", False),
])
def test_an_integer_expected_is_matched_exactly_by_value(text: str, ok: bool) -> None:
    assert matches(3, json.loads(text)) is ok
    assert matches(3, json.loads(text), Tolerance(1.0, 1.0)) is ok  # whatever the tolerance


def test_integers_are_compared_exactly_beyond_float_precision() -> None:
    big = 2**53 + 1
    assert matches(big, big) and not matches(big, float(2**53)) and not matches(big, 2**53)
    assert matches(0, -0.0) and not matches(0, 1e-300)


@pytest.mark.parametrize("got", ["2", "2.0", "2e0", "20e-1", "0.2E+1"])
def test_the_spelling_of_a_json_number_never_matters(got: str) -> None:
    assert matches(2.0, json.loads(got), EXACT)
    assert matches(json.loads("2"), json.loads(got), EXACT)
    assert matches(json.loads("2.0"), json.loads(got), EXACT)


# ---------------------------------------------------------------------------------------------- other values
@pytest.mark.parametrize(("expected", "got"), [
    (True, 1), (True, 1.0), (False, 0), (False, 0.0), (1, True), (1.0, True), (0, False), (0.0, False),
    (True, False), (False, None), (True, "true"),
])
def test_booleans_are_not_numbers(expected: Any, got: Any) -> None:
    assert not matches(expected, got, Tolerance(1.0, 1.0))


@pytest.mark.parametrize("got", [None, math.nan, math.inf, -math.inf, "1", [1.0], {"value": 1.0}, 10**400],
                         ids=["null", "nan", "inf", "-inf", "string", "list", "object", "10^400"])
@pytest.mark.parametrize("expected", [1.0, 1])
def test_null_nan_infinities_and_non_numbers_never_match_a_number(expected: float, got: Any) -> None:
    assert not matches(expected, got, Tolerance(1e300, 1e300))


def test_nan_and_infinities_as_parsed_from_the_wire_never_match() -> None:
    for text in ("NaN", "Infinity", "-Infinity", "1e400"):
        assert not matches(1.0, json.loads(text), Tolerance(1e300, 0.0))
    assert not matches(math.inf, math.inf) and not matches(math.inf, 1.0, Tolerance(1e300, 0.0))


@pytest.mark.parametrize(("expected", "got", "ok"), [
    (None, None, True), (None, 0, False), (None, 0.0, False), (None, False, False), (None, "", False),
    ("a", "a", True), ("a", "b", False), ("1", 1, False), (True, True, True), (False, False, True),
])
def test_null_strings_and_booleans_match_only_themselves(expected: Any, got: Any, ok: bool) -> None:
    assert matches(expected, got) is ok


# ---------------------------------------------------------------------------------------------- structure
def test_objects_need_exactly_the_same_keys_and_the_difference_names_the_key() -> None:
    assert matches({"a": 1.0, "b": [1, 2]}, {"b": [1, 2], "a": 1.0})
    missing = compare({"a": 1.0, "b": 2.0}, {"a": 1.0}, CORPUS)
    assert missing is not None and "missing ['b']" in missing
    extra = compare({"a": 1.0}, {"a": 1.0, "c": 3.0}, CORPUS)
    assert extra is not None and "unexpected ['c']" in extra
    assert not matches({"a": 1.0}, [1.0]) and not matches({}, None) and matches({}, {})


@pytest.mark.parametrize(("expected", "got", "named"), [
    ([1.0, 2.0], [1.0, 2.0, 3.0], "extra item [2]: 3.0"),
    ([1.0, 2.0], [1.0], "missing item [1]: 2.0"),
    ([], [0.0], "extra item [0]: 0.0"),
    ([0.0], [], "missing item [0]: 0.0"),
])
def test_lists_need_exactly_the_same_length_and_the_difference_names_the_item(
        expected: list[Any], got: list[Any], named: str) -> None:
    diff = compare(expected, got, CORPUS)
    assert diff is not None and named in diff and diff.startswith("release:")


def test_lengths_and_keys_are_checked_at_every_depth() -> None:
    release = {"points": [[0.25, 0.5], [0.75, 1.0]], "weights": [1, 2], "meta": {"n": 2}}
    assert matches(release, json.loads(json.dumps(release)))
    deeper: list[tuple[Any, str]] = [
        ({**release, "points": [[0.25, 0.5], [0.75, 1.0, 0.0]]}, "release.points[1]: expected 2 items, got 3"),
        ({**release, "points": [[0.25, 0.5], [0.75]]}, "release.points[1]: expected 2 items, got 1"),
        ({**release, "points": [[0.25, 0.5]]}, "release.points: expected 2 items, got 1"),
        ({**release, "weights": [1, 2, 3]}, "release.weights: expected 2 items, got 3"),
        ({**release, "meta": {"n": 2, "m": 3}}, "release.meta: keys differ"),
        ({**release, "meta": {}}, "release.meta: keys differ"),
        ({**release, "points": [[0.25, 0.5], [0.75, 1.5]]}, "release.points[1][1]: expected 1.0, got 1.5"),
        ({**release, "weights": [1, 2.5]}, "release.weights[1]: expected the integer 2, got 2.5"),
    ]
    for got, named in deeper:
        diff = compare(release, got, CORPUS)
        assert diff is not None and diff.startswith(named), (diff, named)


def test_the_release_list_of_a_run_needs_every_release_and_no_more() -> None:
    run = [0.5, {"points": [[0.25]]}, [1, 2]]
    assert compare(run, list(run), CORPUS, "releases") is None
    extra = compare(run, [*run, 3.0], CORPUS, "releases")
    assert extra is not None and extra.startswith("releases: expected 3 items, got 4 (extra item [3]: 3.0)")
    missing = compare(run, run[:2], CORPUS, "releases")
    assert missing is not None and missing.startswith("releases: expected 3 items, got 2 (missing item [2]")
