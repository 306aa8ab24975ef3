"""The import map of ``reference/dpstream`` and its layering rules (docs/architecture.md).

An AST scan of every module of the package (imports at the top, inside functions and under ``TYPE_CHECKING``
alike, and ``import_module("dpstream...")`` with a constant name) gives the package-level map: for every part of
dpstream (a subpackage such as ``counters``, a top-level module such as ``noise`` or ``selective_counting``, and
``dpstream`` itself for the root ``__init__``) the other parts it imports. The rules, one test each:

* the algorithm packages import nothing from the consumers above them (the verification room ``dpstream.audit``,
  the conformance kit, the catalog, the vectors, the experiments, the docs index, the command line) nor from the
  insecure door ``dpstream.insecure`` (algorithms run on the secure default; tests and audits pass other sources);
* no part imports a private name (a path segment or a name with a leading underscore) of another part, whether
  as ``from dpstream.x import _y`` or as ``module._y`` on a module or object it imported from another part;
* the map between parts is acyclic (the test prints a cycle if there is one).

Each rule is shown to fire on a deliberately bad snippet (the scanner runs on in-memory source too).
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterator, Mapping, Set
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "reference" / "dpstream"
ALGORITHMS = ("counters", "selective_counting", "phdstream", "longitudinal", "hypercube", "tabular")
# The one known crossing, kept visible (and checked still needed, so the entry cannot go stale): the secure
# path's test spy replaces SecureNoise's private draw methods for the duration of a ``with`` block. Open: give
# the noise door a public spy hook and drop this entry.
PRIVATE_EXCEPTIONS = {"reference/dpstream/testing/secure_path.py": "SecureNoise._"}
ABOVE_ALGORITHMS = ("audit", "conformance", "catalog", "vectors", "experiments", "docs_index", "cli", "cli_args",
                    "insecure")


@dataclass(frozen=True)
class Import:
    """One imported dotted name (``dpstream.a.b`` or ``dpstream.a.b.name``), its part and the line."""

    line: int
    target: str
    part: str


@functools.cache
def _parts() -> frozenset[str]:
    return frozenset({p.stem for p in PACKAGE.iterdir() if (p.suffix == ".py" and p.stem != "__init__")
            or (p.is_dir() and (p / "__init__.py").exists())})


def part_of(dotted: str, parts: Set[str] | None = None) -> str | None:
    """The part of dpstream a dotted name belongs to (``None``: not dpstream)."""
    segments = dotted.split(".")
    if segments[0] != "dpstream":
        return None
    if len(segments) == 1 or segments[1] not in (_parts() if parts is None else parts):
        return "dpstream"
    return segments[1]


def module_name(path: Path) -> str:
    rel = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(rel[:-1] if rel[-1] == "__init__" else rel)


def imports(source: str, module: str, is_package: bool = False) -> Iterator[Import]:
    """Every dpstream name ``source`` (the text of ``module``) imports, relative imports resolved."""
    for node in ast.walk(ast.parse(source)):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                here = module.split(".") if is_package else module.split(".")[:-1]
                here = here[:len(here) - node.level + 1]
                base = ".".join(here + ([node.module] if node.module else []))
            targets = [f"{base}.{a.name}" for a in node.names]
        elif (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)
              and isinstance(node.args[0].value, str)
              and getattr(node.func, "attr", getattr(node.func, "id", "")) in ("import_module", "__import__")):
            targets = [node.args[0].value]
        for target in targets:
            if (part := part_of(target)) is not None:
                yield Import(getattr(node, "lineno", 0), target, part)


def forbidden_imports(source: str, module: str, is_package: bool = False) -> list[str]:
    """What an algorithm module imports from the parts above the algorithms (empty: nothing)."""
    return [f"line {i.line}: {i.target}" for i in imports(source, module, is_package) if i.part in ABOVE_ALGORITHMS]


def _private(segment: str) -> bool:
    return segment.startswith("_") and not segment.startswith("__")


def private_imports(source: str, module: str, is_package: bool = False) -> list[str]:
    """Private names of other parts that ``source`` imports or reads as ``imported._name`` (empty: none)."""
    own = part_of(module)
    found: list[str] = []
    bound: set[str] = set()
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            for alias in node.names:
                foreign = [i for i in imports(ast.unparse(node), module, is_package) if i.part != own]
                if foreign and alias.name != "*":
                    bound.add(alias.asname or alias.name.split(".")[0])
    for i in imports(source, module, is_package):
        if i.part != own and any(_private(s) for s in i.target.split(".")):
            found.append(f"line {i.line}: imports {i.target}")
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and _private(node.attr) and isinstance(node.value, ast.Name)
                and node.value.id in bound):
            found.append(f"line {node.lineno}: {node.value.id}.{node.attr}")
    return found


def find_cycle(graph: Mapping[str, set[str]]) -> list[str] | None:
    """One cycle of ``graph`` as a path ``[a, b, ..., a]`` (``None``: acyclic)."""
    state: dict[str, int] = {}  # 1 on the stack, 2 done
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt):], nxt]
            if nxt not in state and (cycle := visit(nxt)) is not None:
                return cycle
        stack.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state and (cycle := visit(start)) is not None:
            return cycle
    return None


def _modules() -> list[tuple[Path, str, bool]]:
    return [(p, module_name(p), p.name == "__init__.py") for p in sorted(PACKAGE.rglob("*.py"))]


@functools.cache
def import_map() -> dict[str, dict[str, list[str]]]:
    """part -> imported part -> the ``file:line`` sites (the part itself left out)."""
    out: dict[str, dict[str, list[str]]] = {}
    for path, module, is_package in _modules():
        own = part_of(module)
        assert own is not None
        edges = out.setdefault(own, {})
        for i in imports(path.read_text(encoding="utf-8"), module, is_package):
            if i.part != own:
                edges.setdefault(i.part, []).append(f"{path.relative_to(ROOT)}:{i.line}")
    return out


@functools.cache
def _offenders(rule: str, only: tuple[str, ...] | None = None) -> tuple[str, ...]:
    """Every offence against ``rule`` in the package (read once per test process)."""
    check = forbidden_imports if rule == "forbidden" else private_imports
    out: list[str] = []
    for path, module, is_package in _modules():
        if only is not None and part_of(module) not in only:
            continue
        out += [f"{path.relative_to(ROOT)}:{hit}" for hit in check(path.read_text(encoding="utf-8"), module,
                                                                        is_package)]
    return tuple(out)


def test_the_parts_named_by_the_rules_exist() -> None:
    assert set(ALGORITHMS) | set(ABOVE_ALGORITHMS) <= _parts()
    graph = import_map()
    assert {"claims", "staged"} <= set(graph["selective_counting"])  # the scan sees real imports
    assert "selective_counting" in graph["phdstream"] and "selective_counting" in graph["tabular"]


def test_algorithms_import_nothing_from_above_them() -> None:
    offenders = _offenders("forbidden", ALGORITHMS)
    assert not offenders, ("algorithm packages must not import the verification room, conformance kit, catalog, "
                           "vectors, experiments, docs index, CLI or the insecure door:\n" + "\n".join(offenders))


def _excepted(offender: str) -> bool:
    return any(offender.startswith(f"{path}:") and f": {prefix}" in offender
               for path, prefix in PRIVATE_EXCEPTIONS.items())


def test_no_part_imports_a_private_name_of_another() -> None:
    offenders = [o for o in _offenders("private") if not _excepted(o)]
    assert not offenders, "private names crossed between parts of dpstream:\n" + "\n".join(offenders)


def test_the_private_exceptions_are_still_needed() -> None:
    hits = _offenders("private")
    assert all(any(h.startswith(f"{path}:") for h in hits) for path in PRIVATE_EXCEPTIONS), "drop the stale entry"


def test_the_import_map_is_acyclic() -> None:
    graph = {part: set(edges) for part, edges in import_map().items()}
    cycle = find_cycle(graph)
    if cycle is not None:
        sites = [f"  {a} -> {b}: {', '.join(import_map()[a][b][:3])}" for a, b in pairwise(cycle)]
        pytest.fail("the import map has a cycle " + " -> ".join(cycle) + "\n" + "\n".join(sites))


@pytest.mark.parametrize("snippet", [
    "from dpstream.audit.counters.loss import exact_loss",
    "def f():\n    from dpstream.catalog import entries\n    return entries()",
    "import dpstream.vectors.corpus",
    "from dpstream import insecure",
    "from dpstream.insecure import InsecureSeededNoise",
    "from ..conformance import serve",
    "import importlib\nimportlib.import_module('dpstream.experiments')",
    "from dpstream.cli import main",
])
def test_the_algorithm_rule_catches_every_form(snippet: str) -> None:
    assert forbidden_imports(snippet, "dpstream.counters.simple")


def test_the_algorithm_rule_allows_the_foundation_and_other_algorithms() -> None:
    source = ("from dpstream.noise import default_noise\nfrom dpstream.counters import SimpleCounter\n"
              "from dpstream.selective_counting import SelectiveCounting\nfrom .partition import Node\n")
    assert not forbidden_imports(source, "dpstream.phdstream.counters_tree")


@pytest.mark.parametrize("snippet", [
    "from dpstream.counters.base import _check",
    "from dpstream.counters._internal import check",
    "import dpstream.counters.base as base\nbase._check(1)",
    "from dpstream.counters import base\nx = base._cache",
    "from dpstream.noise import SecureNoise\nSecureNoise._draw",
])
def test_the_private_rule_catches_every_form(snippet: str) -> None:
    assert private_imports(snippet, "dpstream.tabular.selective")


def test_the_private_rule_allows_a_part_its_own_private_names() -> None:
    assert not private_imports("from dpstream.counters.base import _check\nfrom .base import _x",
                               "dpstream.counters.simple")
    assert not private_imports("from dpstream.counters import base\nbase.__name__", "dpstream.tabular.selective")


def test_the_cycle_finder_names_the_cycle() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) is None
    # an upward arrow closes a cycle: an algorithm importing the catalog that imports it
    edges = [*imports("from dpstream.catalog.codecs import Features", "dpstream.hypercube.codec"),
             *imports("from dpstream.hypercube import OnlineSyntheticData", "dpstream.catalog.hypercube")]
    graph: dict[str, set[str]] = {"hypercube": set(), "catalog": set()}
    for src, edge in zip(("hypercube", "catalog"), edges, strict=True):
        graph[src].add(edge.part)
    assert find_cycle(graph) == ["catalog", "hypercube", "catalog"]
