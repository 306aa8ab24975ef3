"""Randomness has two doors: ``dpstream/noise.py`` (the secure default, and ``data_rng`` / ``derived_seed`` for
non-private data) and ``dpstream/insecure/`` (seeded, zero, scripted and tape sources, bulk noise). No other
module of the repository touches ``numpy.random``, ``random`` or ``secrets`` (an AST scan: imports, attribute
access outside type annotations, ``import_module``/``__import__`` of those names, ``rvs``/``random_state`` of
scipy, which would draw from numpy's global generator).

Excluded on purpose: ``examples/conformance/`` holds outside implementations in other styles, with their own
generators (they show that the conformance kit accepts any source of randomness behind the protocol).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "reference" / "dpstream"
DOORS = (PACKAGE / "noise.py", PACKAGE / "insecure")
EXCLUDED = {ROOT / "examples" / "conformance": "outside implementations with their own generators"}
SCANNED = ("reference", "tests", "property_tests", "proofs", "examples", "benchmarks", "tools")
FORBIDDEN_MODULES = ("random", "secrets", "numpy.random")


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def _files() -> list[Path]:
    out = []
    for top in SCANNED:
        for p in sorted((ROOT / top).rglob("*.py")):
            if any(_inside(p, door) for door in DOORS) or any(_inside(p, ex) for ex in EXCLUDED):
                continue
            out.append(p)
    return out


def _annotation_nodes(tree: ast.AST) -> set[int]:
    """ids of every node inside a type annotation (``rng: np.random.Generator`` names a type, draws nothing)."""
    roots: list[ast.AST] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.arg) and node.annotation is not None:
            roots.append(node.annotation)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.returns is not None:
            roots.append(node.returns)
        elif isinstance(node, ast.AnnAssign):
            roots.append(node.annotation)
    return {id(n) for r in roots for n in ast.walk(r)}


def touches(source: str) -> list[str]:
    """What ``source`` does with the forbidden modules (empty: nothing)."""
    tree = ast.parse(source)
    skip = _annotation_nodes(tree)
    numpy_names = {"numpy"}
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name == "numpy":
                    numpy_names.add(a.asname or a.name)
                if a.name in FORBIDDEN_MODULES or a.name.startswith("numpy.random."):
                    found.append(f"line {node.lineno}: import {a.name}")
        elif isinstance(node, ast.ImportFrom) and not node.level:
            module = node.module or ""
            if module in FORBIDDEN_MODULES or module.startswith("numpy.random.") or (
                    module == "numpy" and any(a.name == "random" for a in node.names)):
                found.append(f"line {node.lineno}: from {module} import ...")
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if (isinstance(node, ast.Attribute) and node.attr == "random" and isinstance(node.value, ast.Name)
                and node.value.id in numpy_names):
            found.append(f"line {node.lineno}: {node.value.id}.random")
        elif isinstance(node, ast.Attribute) and node.attr == "rvs":
            found.append(f"line {node.lineno}: .rvs (numpy's global generator)")
        elif isinstance(node, ast.keyword) and node.arg == "random_state":
            found.append(f"line {node.value.lineno}: random_state=")
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
            name = getattr(node.func, "attr", getattr(node.func, "id", ""))
            if name in ("import_module", "__import__") and node.args[0].value in FORBIDDEN_MODULES:
                found.append(f"line {node.lineno}: {name}({node.args[0].value!r})")
    return found


def test_only_the_two_doors_touch_randomness() -> None:
    offenders = {str(p.relative_to(ROOT)): hits for p in _files() if (hits := touches(p.read_text(encoding="utf-8")))}
    assert not offenders, f"randomness outside dpstream.noise and dpstream.insecure: {offenders}"


def test_the_doors_and_the_exclusion_exist() -> None:
    assert all(door.exists() for door in DOORS)
    assert touches((PACKAGE / "noise.py").read_text(encoding="utf-8"))  # the scan sees the door's own use
    assert all(folder.is_dir() and any(folder.rglob("*.py")) for folder in EXCLUDED)


@pytest.mark.parametrize("snippet", [
    "import random\nrandom.random()",
    "import secrets",
    "from secrets import token_bytes",
    "import numpy as np\nx = np.random.default_rng(0)",
    "import numpy\nnumpy.random.seed(1)",
    "from numpy import random",
    "from numpy.random import default_rng",
    "import importlib\nimportlib.import_module('random')",
    "from scipy import stats\nstats.norm.rvs(size=3)",
    "from scipy import stats\nstats.norm(0, 1).rvs(random_state=3)",
])
def test_the_scan_catches_every_form(snippet: str) -> None:
    assert touches(snippet)


def test_the_scan_allows_type_names_and_the_door() -> None:
    assert not touches("import numpy as np\ndef f(rng: np.random.Generator) -> np.random.Generator:\n    return rng")
    assert not touches("from dpstream.noise import data_rng\nrng = data_rng(0)")


@pytest.mark.parametrize(("module", "name"), [("dpstream.noise", "InsecureSeededNoise"),
                                              ("dpstream.noise", "InsecureZeroNoise"),
                                              ("dpstream.noise", "TapeRecorder"),
                                              ("dpstream.tape", "TapeReplay")])
def test_insecure_sources_have_one_door_and_a_pointer_to_it(module: str, name: str) -> None:
    import importlib

    import dpstream.insecure

    assert hasattr(dpstream.insecure, name)
    with pytest.raises(ImportError, match=rf"from dpstream\.insecure import {name}"):
        getattr(importlib.import_module(module), name)
    with pytest.raises(AttributeError):
        _ = importlib.import_module(module).no_such_name
