"""The catalog is complete and its entries are consistent with the papers, the repository and the corpus.

* every printed algorithm of the five papers (the 25 anchors of the transcription, ``dpstream.papers``) has exactly
  one entry, and every entry marked ``printed`` is one of them;
* every entry's proof note exists, names the algorithm (its anchor, also in the shorthand ``001-alg1/alg2``, an
  anchor of its title or of ``realised_by``, the source of its claim, or the module that defines it) and imports the
  module that defines it (or that module's package); its doc page exists and mentions the anchor; its errata are
  headings of docs/errata/*.md;
* streaming entries have >= 3 known-answer and >= 3 must-reject vectors in the corpus (an entry that shares its
  builder with another, e.g. 000-alg4 with 003-alg4, may rely on that entry's must-reject vectors); non-streaming
  entries say why and name streaming entries that run them;
* ``make``, ``claim``, ``paper_claim`` (and the printed variant) work for the first vector's parameters;
* the parameter schema, the INPUT and the RELEASE schemas are valid JSON Schemas, and every vector's parameters,
  inputs and expected releases validate against them;
* the shipped corpus is exactly what the catalog generates (``dpstream vectors generate`` is up to date).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from dpstream.catalog import Entry, entries, entry
from dpstream.errors import DPStreamInputError
from dpstream.insecure import InsecureSeededNoise, InsecureZeroNoise
from dpstream.papers import algorithms
from dpstream.vectors.corpus import corpus_dir, known_answer, load_manifest, must_reject
from dpstream.vectors.generate import generate, run_inputs

ROOT = Path(__file__).resolve().parents[2]
ENTRIES = entries()
IDS = [e.anchor for e in ENTRIES]
STREAMING = [e for e in ENTRIES if e.streaming]
ROWS = load_manifest()


def test_every_printed_algorithm_has_one_entry() -> None:
    anchors = set(algorithms())  # the transcription of the papers' boxes (dpstream.papers)
    assert len(anchors) == 25
    assert anchors <= set(IDS), sorted(anchors - set(IDS))
    assert {e.anchor for e in ENTRIES if e.printed} == anchors
    assert len(IDS) == len(set(IDS))


def _anchors_in(text: str) -> set[str]:
    """Anchors written in a text, with the shorthand '001-alg1/alg2/alg3' expanded."""
    found = set(re.findall(r"\b\d{3}-(?:alg|lem|sec|thm|prop|def|eq)[\d.]*\d", text))
    for paper, first, rest in re.findall(r"\b(\d{3})-alg(\d+)((?:/alg\d+)+)", text):
        found |= {f"{paper}-alg{n}" for n in [first, *re.findall(r"\d+", rest)]}
    return found


def _module_of(e: Entry) -> str | None:
    """The module that defines the algorithm an entry builds (through the protocol adapters)."""
    if not e.streaming:
        return None
    params = next(known_answer(e.anchor)).params
    built = e.make(params, InsecureZeroNoise())
    inner = getattr(built, "tree", None) if type(built).__name__ == "TreeLevelOnPoints" else None
    inner = getattr(built, "algorithm", inner)  # the catalog's one-shot and stateless adapters name what they wrap
    target = inner if inner is not None else built
    module = getattr(target, "__module__", None) if callable(target) and not hasattr(target, "step") else None
    return module if isinstance(module, str) and not isinstance(target, type) else type(target).__module__


def _imports(path: Path) -> set[str]:
    """Every module a file imports (``from m import x`` counts m and m.x), at any depth of the file."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found |= {f"{node.module}.{a.name}" for a in node.names}
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
    return found


@pytest.mark.parametrize("e", ENTRIES, ids=IDS)
def test_proof_doc_and_errata(e: Entry) -> None:
    proof = ROOT / e.proof
    assert proof.is_file(), e.proof
    text = proof.read_text(encoding="utf-8")
    names = {e.anchor, *e.realised_by, *_anchors_in(e.title)}
    if e.streaming:
        names.add(e.claim(next(known_answer(e.anchor)).params).source)
    module = _module_of(e)
    named = bool(names & _anchors_in(text)) or e.anchor in text or (
        module is not None and (module in text or module.replace(".", "/") + ".py" in text))
    assert named, f"{e.proof} names none of {sorted(names)} nor {module}"
    if module is not None:
        imported = _imports(proof)
        assert any(module == m or module.startswith(m + ".") for m in imported if m != "dpstream"), (
            f"{e.proof} does not import {module} (imports {sorted(imported)})")
    doc = ROOT / e.doc
    assert doc.is_file() and e.anchor in doc.read_text(encoding="utf-8"), e.doc
    headings = {line[3:].split(":")[0] for page in (ROOT / "docs" / "errata").glob("*.md")
                for line in page.read_text(encoding="utf-8").splitlines() if line.startswith("## E-")}
    assert set(e.errata) <= headings, sorted(set(e.errata) - headings)


@pytest.mark.parametrize("e", STREAMING, ids=[e.anchor for e in STREAMING])
def test_streaming_entries_have_vectors(e: Entry) -> None:
    kinds = [r.kind for r in ROWS if r.algorithm == e.anchor]
    assert kinds.count("known-answer") >= 3, e.anchor
    sharing = [o.anchor for o in ENTRIES if o.build is e.build]
    assert sum(r.kind == "must-reject" and r.algorithm in sharing for r in ROWS) >= 3, (e.anchor, sharing)


@pytest.mark.parametrize("e", [e for e in ENTRIES if not e.streaming], ids=lambda e: e.anchor)
def test_non_streaming_entries_are_realised_by_streaming_ones(e: Entry) -> None:
    assert e.build is None and e.codec is None and e.notes
    assert e.realised_by
    assert all(entry(a).streaming for a in e.realised_by)


@pytest.mark.parametrize("e", STREAMING, ids=[e.anchor for e in STREAMING])
def test_build_claim_and_printed_variant(e: Entry) -> None:
    v = next(known_answer(e.anchor))
    assert e.codec is not None
    assert e.claim(v.params).describe() and e.paper_claim(v.params).describe()
    got = run_inputs(e, v.params, v.inputs, InsecureSeededNoise(1))
    assert len(got) == len(v.inputs)
    if e.as_printed is None:
        assert e.printed_model is None, "a printed model needs a printed variant"
        return
    assert e.printed_model is None or e.model is not None, "a printed model without the default's model"
    # the printed variant may refuse some parameters (e.g. T = 1 where a printed scale is 0): the first it accepts
    for w in known_answer(e.anchor):
        try:
            printed = e.make(w.params, InsecureSeededNoise(1), as_printed=True)
        except DPStreamInputError:
            continue
        assert e.claim(w.params, as_printed=True).describe()
        assert len([e.codec.encode_release(printed.step(e.codec.decode_input(x, w.params))) for x in w.inputs]) == len(
            w.inputs)
        return
    raise AssertionError(f"{e.anchor}: the printed variant accepts the parameters of none of its vectors")


def _vector_documents(e: Entry) -> Iterator[tuple[str, dict[str, Any], list[Any], list[Any]]]:
    for v in known_answer(e.anchor):
        yield v.id, v.params, v.inputs, v.expected
    for r in must_reject(e.anchor):
        if r.at == "step":
            yield r.id, r.params, [*r.before, *r.after], r.expected


@pytest.mark.parametrize("e", STREAMING, ids=[e.anchor for e in STREAMING])
def test_schemas_are_valid_and_vectors_fit_them(e: Entry) -> None:
    assert e.codec is not None
    schemas = [e.params.json_schema(), dict(e.codec.input_schema), dict(e.codec.release_schema)]
    for schema in schemas:
        jsonschema.Draft202012Validator.check_schema(schema)
    params, inputs, releases = (jsonschema.Draft202012Validator(s) for s in schemas)
    for vid, p, xs, expected in _vector_documents(e):
        params.validate(p)
        for x in xs:
            inputs.validate(x)
        for y in expected:
            releases.validate(y)
        assert vid.startswith(f"{e.anchor}/")


def test_the_corpus_is_what_the_catalog_generates(tmp_path: Path) -> None:
    """`dpstream vectors generate` would not change a byte (run it after changing the catalog)."""
    fresh = tmp_path / "corpus"
    generate(fresh)
    shipped = corpus_dir()
    files = sorted(p.relative_to(fresh) for p in fresh.rglob("*.json"))
    assert files == sorted(p.relative_to(shipped) for p in shipped.rglob("*.json"))
    for name in files:
        assert (fresh / name).read_bytes() == (shipped / name).read_bytes(), name


ALWAYS_WRONG: list[Any] = [None, True, "x", {"a": 1}, [None], [["x"]]]
"""JSON values that are no INPUT of any algorithm."""
OTHER_SHAPES: list[Any] = [1.5, [], [[]], {}, {"points": 1, "moves": 1}, {"added": [], "removed": None}, [0.5, 2]]


@pytest.mark.parametrize("e", STREAMING, ids=[e.anchor for e in STREAMING])
def test_codecs_refuse_wrong_json_shapes_with_input_errors(e: Entry) -> None:
    """A wrong JSON shape is an input error (DPStreamInputError), never an IndexError, KeyError or TypeError, and it
    is raised before anything changes: the next valid input gives the release of a run that never saw it."""
    assert e.codec is not None
    codec = e.codec
    v = next(known_answer(e.anchor))
    for shape in [*ALWAYS_WRONG, *OTHER_SHAPES]:
        algorithm = e.make(v.params, InsecureSeededNoise(0))
        try:
            algorithm.step(codec.decode_input(shape, v.params))
        except DPStreamInputError:
            first = codec.encode_release(algorithm.step(codec.decode_input(v.inputs[0], v.params)))
            assert first == run_inputs(e, v.params, v.inputs[:1], InsecureSeededNoise(0))[0]
        else:
            assert shape not in ALWAYS_WRONG, (e.anchor, shape)


def test_the_docs_index_is_what_the_catalog_renders() -> None:
    """docs/catalog.md is generated (``python -m dpstream.docs_index > docs/catalog.md``): never stale."""
    from dpstream.docs_index import render

    committed = (ROOT / "docs" / "catalog.md").read_text(encoding="utf-8")
    assert committed == render(), "docs/catalog.md is stale: python -m dpstream.docs_index > docs/catalog.md"


def test_every_experiment_and_audit_case_names_catalog_entries() -> None:
    """``dpstream reproduce`` experiments name what they run by catalog anchor; an audit case names a catalog
    anchor, or, for a mechanism or a theorem that is not an algorithm box (the Laplace mechanism 000-def3.1,
    a PrivTree scale 001-thm3.2, ...), the paper statement it checks."""
    from dpstream.audit.registry import discover as audit_cases
    from dpstream.experiments import discover as experiments

    anchors = {e.anchor for e in entries()}
    for name, experiment in experiments().items():
        assert experiment.anchors and set(experiment.anchors) <= anchors, (name, experiment.anchors)
    statement = re.compile(r"^00[0-4]-(def|thm|lem|cor|sec)\d+(\.\d+)*$")
    unknown = {case.anchor for case in audit_cases()} - anchors
    assert all(statement.match(a) for a in unknown), sorted(unknown)
