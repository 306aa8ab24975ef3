"""The documented states themselves (dpstream.checkpoint.states, docs/checkpoint-states.md).

* every streaming algorithm has one: each streaming catalog entry's algorithm and each class of the resume
  property test's enumeration;
* docs/checkpoint-states.md is the rendering of the specs (never stale);
* the kinds write plain JSON, read back the same values (types, flags, order) and refuse what breaks their rule.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from dpstream import catalog
from dpstream.checkpoint import CheckpointError, specs, state_of
from dpstream.checkpoint.docs import render
from dpstream.checkpoint.engine import Reader, Writer
from dpstream.checkpoint.kinds import (
    COUNT,
    NODE,
    REAL,
    Array,
    Function,
    Int,
    Kind,
    Pairs,
    Real,
    Record,
    SetOf,
    TupleOf,
    Variant,
)
from dpstream.counters.simple import SimpleCounter
from dpstream.insecure import InsecureZeroNoise
from dpstream.phdstream.counters_tree import simple_counter_factory
from dpstream.testing import load_script

ROOT = Path(__file__).resolve().parents[2]
ENUMERATION = load_script(ROOT / "tests" / "foundation" / "test_checkpoint.py")


def test_every_streaming_algorithm_has_a_documented_state() -> None:
    documented = {s.cls for s in specs()}
    built = {type(e.make(next(iter(e.vectors())).params, InsecureZeroNoise())) for e in catalog.entries(streaming=True)}
    enumerated = {type(factory(InsecureZeroNoise())) for factory, _ in ENUMERATION.CATALOG.values()}
    assert built | enumerated <= documented, sorted(c.__name__ for c in (built | enumerated) - documented)


def test_the_states_page_is_current() -> None:
    committed = (ROOT / "docs" / "checkpoint-states.md").read_text(encoding="utf-8")
    assert committed == render(), "docs/checkpoint-states.md is stale: python -m dpstream.checkpoint.docs > " \
                                  "docs/checkpoint-states.md"


def test_every_field_is_documented() -> None:
    page = render()
    for spec in specs():
        assert f"### {spec.algorithm}\n" in page
        for f in (*spec.params, *spec.derived, *spec.variables):
            assert f.doc and f.kind.doc and f"| `{f.name}` |" in page, (spec.algorithm, f.name)


def test_a_state_is_plain_json_in_the_papers_names() -> None:
    counter = SimpleCounter(0.5, 10, noise=InsecureZeroNoise())
    counter.run([1, 2])
    state = state_of(counter)
    assert json.loads(json.dumps(state)) == state
    assert state == {"algorithm": "SimpleCounter", "state_version": 1, "params": {"epsilon": 0.5, "T": 10},
                     "derived": {}, "variables": {"t": 2, "g": 3.0, "releases": [1.0, 3.0]}}


# --- kinds --------------------------------------------------------------------------------------------------------

W = Writer({"factory": simple_counter_factory})
R = Reader(InsecureZeroNoise(), {"factory": simple_counter_factory})


def round_trip(kind: Kind, value: Any) -> Any:
    raw = kind.encode(value, W, "v")
    assert json.loads(json.dumps(raw, allow_nan=False)) == raw
    return kind.decode(raw, R, "v")


def test_kinds_read_back_what_they_wrote() -> None:
    frozen = np.arange(6, dtype=np.int64).reshape(2, 3)
    frozen.setflags(write=False)
    back = round_trip(Array("int64", 2, writeable=False), frozen)
    assert back.dtype == np.int64 and back.shape == (2, 3) and not back.flags.writeable and (back == frozen).all()
    empty = round_trip(Array("float64", 2), np.zeros((0, 3)))
    assert empty.shape == (0, 3) and empty.flags.writeable
    assert round_trip(Pairs(NODE, REAL), {(1, 0): 2.5, (): -0.0}) == {(1, 0): 2.5, (): -0.0}
    assert list(round_trip(Pairs(NODE, REAL), {(1,): 1.0, (0,): 2.0})) == [(1,), (0,)]  # the map's order
    assert round_trip(SetOf(NODE), frozenset({(1,), (0, 1)})) == frozenset({(1,), (0, 1)})
    assert round_trip(TupleOf(COUNT), (3, 4)) == (3, 4)
    assert round_trip(Real(infinite=True), math.inf) == math.inf
    assert type(round_trip(REAL, 2.0)) is float and REAL.decode(2, R, "v") == 2.0
    assert round_trip(Function(), simple_counter_factory) is simple_counter_factory
    assert Function().encode(simple_counter_factory, Writer(), "v") == {
        "dpstream": "dpstream.phdstream.counters_tree:simple_counter_factory"}


@pytest.mark.parametrize(("kind", "raw", "message"), [
    (COUNT, -1, "must be an integer >= 0"),
    (COUNT, True, "must be an integer >= 0"),
    (Int(1, 3), 4, r"integer in \[1, 3\]"),
    (REAL, "nan", "must be a finite real"),
    (Real(positive=True), 0.0, "real > 0"),
    (Array("int64", 1), {"shape": [2], "values": [1]}, "holds 1 values for shape"),
    (Array("int64", 1), {"shape": [1], "values": [1.5]}, "values must be int64 numbers"),
    (Array("int64", 1), {"shape": [1], "values": [2**70]}, "does not fit int64"),
    (Array("float64", 1), {"shape": [1, 1], "values": [1.0]}, "must be the shape of a 1-d"),
    (Array("float64", 1), [1.0], "an array is"),
    (SetOf(COUNT), [1, 1], "holds an element twice"),
    (Pairs(COUNT, REAL), [[1, 1.0], [1, 2.0]], "a key given twice"),
    (Pairs(COUNT, REAL), [[1]], "must be a \\[key, value\\] pair"),
    (NODE, [0, -1], "child indices >= 0"),
    (Variant((("a", Record(complex, (("real", REAL),))),)), {"type": "b"}, "must be one of"),
    (Record(complex, (("real", REAL), ("imag", REAL))), {"real": 1.0}, "has exactly the fields"),
    (Function(), {"named": "missing"}, "needs your function 'missing'"),
])
def test_kinds_refuse_what_breaks_their_rule(kind: Kind, raw: Any, message: str) -> None:
    with pytest.raises(CheckpointError, match=message):
        kind.decode(raw, R, "v")
