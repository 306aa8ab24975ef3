"""Proofs are tied to code: every link to a proof note resolves, every note imports and calls dpstream.

* (a) every ``proofs/proof_*.py`` named under ``reference/``, ``docs/`` or ``proofs/`` exists;
* (b) every proof note imports a ``dpstream`` module at module level (AST, not a grep);
* (c) every proof note has a module docstring (the note) and a ``test_*`` function that calls a name
  imported from ``dpstream`` (so the note fails when the code drifts from it);
* (d) every printed-line tag a note quotes (``[001-alg8 L4]``) is a tag of the code (a comment in
  ``reference/dpstream``), so the quoted step exists where the note says;
* (e) every algorithm module (printed-line tags in its comments, or a class with a paper ``anchor``)
  names its proof note in its module docstring.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "reference" / "dpstream"
NOTES = sorted((ROOT / "proofs").glob("proof_*.py"))
LINK = re.compile(r"proofs/proof_[A-Za-z0-9_]+\.py")
TAG = re.compile(r"\[(\d{3}-alg\d+)\s+([Lu])(\d+)(?:\s*-\s*[Lu]?(\d+))?\]")
PAPER_ANCHOR = re.compile(r"^(\d{3}-|CSS11-)")


def _tags(text: str) -> set[str]:
    out: set[str] = set()
    for m in TAG.finditer(text):
        lo = int(m.group(3))
        hi = int(m.group(4)) if m.group(4) else lo
        out.update(f"{m.group(1)} {m.group(2)}{n}" for n in range(lo, hi + 1))
    return out


def _code_tags() -> set[str]:
    tags: set[str] = set()
    for path in PACKAGE.rglob("*.py"):
        for line in path.read_text(encoding="utf-8").splitlines():
            if "#" in line:
                tags |= _tags(line[line.index("#"):])
    return tags


def _dpstream_names(tree: ast.Module) -> set[str]:
    """Names bound at module level by imports from dpstream."""
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "dpstream":
            names.update(alias.asname or alias.name for alias in node.names)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "dpstream":
                    names.add(alias.asname or "dpstream")
    return names


def _root_name(func: ast.expr) -> str | None:
    while isinstance(func, ast.Attribute):
        func = func.value
    return func.id if isinstance(func, ast.Name) else None


def test_there_are_proof_notes() -> None:
    assert len(NOTES) >= 20


def test_every_linked_proof_note_exists() -> None:
    """(a) Links in the package, the docs and the notes themselves resolve."""
    missing: list[str] = []
    for top in ("reference", "docs", "proofs"):
        for path in sorted((ROOT / top).rglob("*")):
            if not path.is_file() or path.suffix not in (".py", ".md", ".json", ".txt", ".toml", ".rst"):
                continue
            for link in sorted(set(LINK.findall(path.read_text(encoding="utf-8")))):
                if not (ROOT / link).is_file():
                    missing.append(f"{path.relative_to(ROOT)} -> {link}")
    assert missing == []


@pytest.mark.parametrize("note", NOTES, ids=[n.stem for n in NOTES])
def test_note_imports_and_exercises_dpstream(note: Path) -> None:
    """(b), (c): a docstring, a module-level dpstream import, a test that calls what it imported."""
    tree = ast.parse(note.read_text(encoding="utf-8"))
    doc = ast.get_docstring(tree)
    assert doc is not None and doc.strip(), "the module docstring is the note"
    imported = _dpstream_names(tree)
    assert imported, "the note must import the dpstream code it justifies"
    exercising = [fn.name for fn in tree.body if isinstance(fn, ast.FunctionDef) and fn.name.startswith("test_")
                  and any(isinstance(c, ast.Call) and _root_name(c.func) in imported for c in ast.walk(fn))]
    assert exercising, f"no test_* function calls any of {sorted(imported)}"


def test_quoted_code_tags_exist() -> None:
    """(d) Every printed-line tag quoted in a note's docstring is a tag in the code."""
    code = _code_tags()
    assert len(code) > 200
    unknown = {}
    for note in NOTES:
        doc = ast.get_docstring(ast.parse(note.read_text(encoding="utf-8"))) or ""
        missing = sorted(_tags(doc) - code)
        if missing:
            unknown[note.name] = missing
    assert unknown == {}


def _is_algorithm_module(tree: ast.Module, text: str) -> bool:
    if any("#" in line and TAG.search(line[line.index("#"):]) for line in text.splitlines()):
        return True
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            for stmt in node.body:
                if (isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "anchor"
                                                         for t in stmt.targets)):
                    value = stmt.value
                    if isinstance(value, ast.Name) or (isinstance(value, ast.Constant) and isinstance(value.value, str)
                                                       and PAPER_ANCHOR.match(value.value)):
                        return True
    return False


def test_every_algorithm_module_names_its_proof() -> None:
    """(e) Algorithm modules name a proof note in their module docstring (which (a) checks exists)."""
    algorithm_modules = []
    unnamed = []
    for path in sorted(PACKAGE.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        tree = ast.parse(text)
        if not _is_algorithm_module(tree, text):
            continue
        algorithm_modules.append(path)
        if not LINK.search(ast.get_docstring(tree) or ""):
            unnamed.append(str(path.relative_to(ROOT)))
    assert len(algorithm_modules) >= 20
    assert unnamed == []
