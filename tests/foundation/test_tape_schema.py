"""dpstream/vectors/schema.json: our tapes, the corpus's vectors and its manifest validate; broken ones are
rejected (by the schema, and, for the same mutations, by Tape.from_json / KnownAnswerVector.from_json /
MustRejectVector.from_json)."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

import jsonschema
import pytest

from dpstream.counters import BinaryTreeCounter, TreeAggregationCounter
from dpstream.insecure import InsecureSeededNoise, TapeRecorder
from dpstream.tape import Tape, TapeFormatError
from dpstream.testing import record_run
from dpstream.vectors import KnownAnswerVector, MustRejectVector
from dpstream.vectors.corpus import MANIFEST, corpus_dir, load_manifest

CORPUS = corpus_dir()
SCHEMA = json.loads((CORPUS.parent / "schema.json").read_text(encoding="utf-8"))
ROWS = load_manifest()
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)
SAMPLE = CORPUS / "001-alg10" / "T8-bits-eps2.json"
"""A known-answer vector the broken-document tests start from."""


def _all_kinds_tape() -> dict[str, Any]:
    recorder = TapeRecorder(InsecureSeededNoise(3), meta={"seed": 3})
    recorder.add_laplace("001-alg8 L4 t=1", 0.0, 0.5)
    recorder.add_discrete_laplace("001-alg10 L8 t=1", 0, 2.0)
    recorder.add_discrete_gaussian("002-alg3 u8 t=1", 0, 4.0)
    recorder.exponential_mechanism("003-alg2 L11 t=1", [1.0, 2.5, -1.0], 0.7, 1.0)
    recorder.coin("002-alg1 u9 t=1")
    recorder.choice("002-alg1 u12 t=1", 9, 3)
    recorder.uniform_box("004-alg1 u20 t=1", [0.0, 0.0], [1.0, 2.0], 3)
    doc: dict[str, Any] = json.loads(recorder.tape.dumps())
    return doc


def test_schema_is_a_valid_2020_12_schema() -> None:
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


def test_tape_with_every_kind_validates() -> None:
    doc = _all_kinds_tape()
    VALIDATOR.validate(doc)
    assert Tape.from_json(doc).dumps() == json.dumps(doc, indent=1)


@pytest.mark.parametrize("every", [7, pytest.param(1, marks=pytest.mark.slow)], ids=["every-7th", "all"])
def test_every_shipped_vector_and_the_manifest_validate(every: int) -> None:
    """The default run validates every 7th vector of the manifest (0.7 s; the generator that wrote them all is
    checked by tests/catalog/test_catalog.py), ``slow`` all of them (4.7 s)."""
    VALIDATOR.validate(json.loads((CORPUS / MANIFEST).read_text(encoding="utf-8")))
    assert len(ROWS) >= 200
    for row in ROWS[::every]:
        doc = json.loads((CORPUS / row.file).read_text(encoding="utf-8"))
        VALIDATOR.validate(doc)
        if doc.get("tape") is not None:
            VALIDATOR.validate(doc["tape"])
        reader = KnownAnswerVector if row.kind == "known-answer" else MustRejectVector
        assert reader.from_json(doc).id == row.id


def test_counter_tapes_validate() -> None:
    _, tape = record_run(lambda n: BinaryTreeCounter(1.0, 8, noise=n, discrete=True), [1, 0, 2, 1], seed=0)
    VALIDATOR.validate(tape.to_json())
    _, tape = record_run(lambda n: TreeAggregationCounter(1.0, 8, noise=n), [1, 0, 2, 1], seed=0)
    VALIDATOR.validate(tape.to_json())


Mutation = Callable[[dict[str, Any]], None]
TAPE_MUTATIONS: dict[str, Mutation] = {
    "format": lambda d: d.update(format="other"),
    "version": lambda d: d.update(version=2),
    "missing draws": lambda d: d.pop("draws"),
    "extra key": lambda d: d.update(extra=1),
    "unknown kind": lambda d: d["draws"][0].update(kind="gauss"),
    "negative scale": lambda d: d["draws"][0]["params"].update(scale=-1.0),
    "zero sigma2": lambda d: d["draws"][2]["params"].update(sigma2=0),
    "integer noise scale beyond 64 bits": lambda d: d["draws"][1]["params"].update(scale=1e16),
    "integer noise sigma2 beyond 64 bits": lambda d: d["draws"][2]["params"].update(sigma2=1e31),
    "extra param": lambda d: d["draws"][0]["params"].update(extra=1),
    "missing param": lambda d: d["draws"][1]["params"].pop("scale"),
    "float for integer kind": lambda d: d["draws"][1].update(value=1.5),
    "string value": lambda d: d["draws"][0].update(value="0.3"),
    "bool for laplace": lambda d: d["draws"][0].update(value=True),
    "int for coin": lambda d: d["draws"][4].update(value=1),
    "choice not unique": lambda d: d["draws"][5].update(value=[3, 3, 1]),
    "empty site": lambda d: d["draws"][0].update(site=""),
    "missing value": lambda d: d["draws"][0].pop("value"),
    "empty scores": lambda d: d["draws"][3]["params"].update(scores=[]),
    "coin with params": lambda d: d["draws"][4]["params"].update(p=0.5),
    "uniform_box flat value": lambda d: d["draws"][6].update(value=[0.1, 0.2, 0.3, 0.4, 0.5, 0.6]),
}
# Rules the schema cannot state (docs/tape-format.md): only the reader can reject these.
READER_ONLY_MUTATIONS: dict[str, Mutation] = {
    "uniform_box short row": lambda d: d["draws"][6]["value"][0].pop(),
    "uniform_box row count": lambda d: d["draws"][6]["value"].pop(),
    "choice value out of range": lambda d: d["draws"][5].update(value=[1, 4, 9]),
    "em index out of range": lambda d: d["draws"][3].update(value=3),
    "duplicate site": lambda d: d["draws"][1].update(site=d["draws"][0]["site"]),
}


@pytest.mark.parametrize("name", READER_ONLY_MUTATIONS)
def test_reader_enforces_rules_beyond_the_schema(name: str) -> None:
    doc = _all_kinds_tape()
    READER_ONLY_MUTATIONS[name](doc)
    with pytest.raises(TapeFormatError):
        Tape.from_json(doc)




@pytest.mark.parametrize("name", TAPE_MUTATIONS)
def test_broken_tapes_are_rejected(name: str) -> None:
    doc = _all_kinds_tape()
    TAPE_MUTATIONS[name](doc)
    assert not VALIDATOR.is_valid(doc)
    with pytest.raises(TapeFormatError):
        Tape.from_json(doc)


VECTOR_MUTATIONS: dict[str, Mutation] = {
    "format": lambda d: d.update(format="dpstream-noise-tape"),
    "version": lambda d: d.update(version=7),
    "missing expected": lambda d: d.pop("expected"),
    "missing tape": lambda d: d.pop("tape"),
    "broken inner tape": lambda d: d["tape"]["draws"][0].update(kind="normal"),
    "empty algorithm": lambda d: d.update(algorithm=""),
    "id not <algorithm>/<name>": lambda d: d.update(id="T8"),
    "tolerance not an object": lambda d: d.update(tolerance=1e-9),
    "extra key": lambda d: d.update(extra=1),
    "params not an object": lambda d: d.update(params=[1.0, 8]),
    "inputs not a list": lambda d: d.update(inputs="10110011"),
    "expected not a list": lambda d: d.update(expected={"1": 2.0}),
    "meta not an object": lambda d: d.update(meta=[]),
    "description not a string": lambda d: d.update(description=3),
    "inputs shorter than expected": lambda d: d["inputs"].pop(),
}


@pytest.mark.parametrize("name", VECTOR_MUTATIONS)
def test_broken_vectors_are_rejected(name: str) -> None:
    doc = json.loads(SAMPLE.read_text(encoding="utf-8"))
    broken = copy.deepcopy(doc)
    VECTOR_MUTATIONS[name](broken)
    if name != "inputs shorter than expected":  # a rule the schema cannot state (the reader checks it)
        assert not VALIDATOR.is_valid(broken)
    with pytest.raises(TapeFormatError):
        KnownAnswerVector.from_json(broken)


def test_non_finite_values_are_rejected_by_the_reader() -> None:
    """Python's json accepts the non-standard NaN / Infinity tokens; the reader must not (the schema
    never sees them, as they are not JSON)."""
    text = json.dumps(_all_kinds_tape())
    for token in ("NaN", "Infinity", "-Infinity"):
        doc = json.loads(text)
        doc["draws"][0]["value"] = json.loads(token)
        with pytest.raises(TapeFormatError):
            Tape.from_json(doc)
        doc = json.loads(text)
        doc["draws"][6]["value"][0][0] = json.loads(token)
        with pytest.raises(TapeFormatError):
            Tape.from_json(doc)


REJECT_SAMPLE = CORPUS / "001-alg10" / "reject-step-string.json"
REJECT_MUTATIONS: dict[str, Mutation] = {
    "at neither init nor step": lambda d: d.update(at="later"),
    "step without its tape": lambda d: d.pop("tape"),
    "step without after": lambda d: d.pop("after"),
    "extra key": lambda d: d.update(extra=1),
    "expected one short": lambda d: d["expected"].pop(),
}


@pytest.mark.parametrize("name", REJECT_MUTATIONS)
def test_broken_must_reject_vectors_are_rejected(name: str) -> None:
    broken = json.loads(REJECT_SAMPLE.read_text(encoding="utf-8"))
    REJECT_MUTATIONS[name](broken)
    if name != "expected one short":  # a rule the schema cannot state (the reader checks it)
        assert not VALIDATOR.is_valid(broken)
    with pytest.raises(TapeFormatError):
        MustRejectVector.from_json(broken)
