"""Checkpoints written by earlier dpstream versions keep loading (issue 23, "Checkpoints").

``tests/data/checkpoints/<version>/`` holds one checkpoint file per streaming algorithm (every streaming catalog
entry and the other streaming classes of the resume property test), written by ``tools/checkpoint_fixtures.py`` a
few steps into a run on a noise tape that sits beside it. With the current code:

1. every fixture loads (state versions migrated when older) and the continued run equals the uninterrupted run on
   the same tape, its final state included;
2. the state this code writes for the same run has the fixture's layout once the fixture's states are migrated:
   a change of a state's layout without a state version bump and a migration fails here, saying what to do;
3. every documented state is covered by some fixture.

The mechanism is shown to work: a renamed variable without a version bump is caught by (2); the same rename with
a bump and a migration loads the old fixture and continues it; a bump without a migration is refused.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from dpstream import checkpoint
from dpstream.checkpoint import engine
from dpstream.checkpoint.engine import layout, migrate_all, specs
from dpstream.checkpoint.names import CheckpointError
from dpstream.checkpoint.spec import StateSpec
from dpstream.counters import SimpleCounter
from dpstream.insecure import TapeReplay
from dpstream.tape import Tape
from dpstream.testing import load_script

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "data" / "checkpoints"
TOOL = load_script(ROOT / "tools" / "checkpoint_fixtures.py")
FOLDERS = sorted(p for p in FIXTURES.iterdir() if p.is_dir())


def manifest(folder: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    return data


CASES = [(folder.name, name, case) for folder in FOLDERS for name, case in manifest(folder)["cases"].items()]
IDS = [f"{folder}/{name}" for folder, name, _ in CASES]


def continued(folder: str, name: str, case: dict[str, Any]) -> tuple[list[str], list[str], TapeReplay]:
    """(the uninterrupted run's releases from the cut on and its final state, the same of the run continued from the
    fixture, the replay the continued run used)."""
    tape = Tape.load(FIXTURES / folder / f"{name}.tape.json")
    xs = TOOL.inputs(case)
    uninterrupted = TOOL.build(case, TapeReplay(tape))
    expected = TOOL.run(uninterrupted, case, xs)[case["cut"]:]
    replay = TapeReplay(tape)
    alg = checkpoint.load(FIXTURES / folder / f"{name}.ckpt", replay, functions=TOOL.functions())
    got = TOOL.run(alg, case, xs[case["cut"]:])

    def final(a: Any) -> str:
        return json.dumps(checkpoint.state_of(a, functions=TOOL.functions()))

    return [*expected, final(uninterrupted)], [*got, final(alg)], replay


@pytest.mark.parametrize(("folder", "name", "case"), CASES, ids=IDS)
def test_a_fixture_continues_as_the_uninterrupted_run(folder: str, name: str, case: dict[str, Any]) -> None:
    expected, got, replay = continued(folder, name, case)
    assert got == expected, f"{folder}/{name}: the run continued from the checkpoint differs from the uninterrupted run"
    replay.assert_exhausted()  # every draw of the tape served exactly once, across the save


def _first_difference(a: Any, b: Any, path: str = "state") -> tuple[str, Any, Any]:
    if isinstance(a, dict) and isinstance(b, dict):
        if list(a) != list(b):
            return path, list(a), list(b)
        for key in a:
            if a[key] != b[key]:
                return _first_difference(a[key], b[key], f"{path}.{key}")
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            if x != y:
                return _first_difference(x, y, f"{path}[{i}]")
    return path, a, b


def _owner(doc: Any, path: str) -> str:
    """The algorithm whose state holds ``path`` (the innermost state document on the way)."""
    owner = str(doc.get("algorithm", "?")) if isinstance(doc, dict) else "?"
    node = doc
    for part in path.replace("[", ".[").split(".")[1:]:
        node = node[int(part[1:-1])] if part.startswith("[") else node.get(part) if isinstance(node, dict) else None
        if isinstance(node, dict) and "state_version" in node and "algorithm" in node:
            owner = str(node["algorithm"])
    return owner


def layout_problem(folder: str, name: str, case: dict[str, Any]) -> str | None:
    """Why this code's state layout for the fixture's run is not the fixture's (None: it is)."""
    fixture = json.loads((FIXTURES / folder / f"{name}.ckpt").read_text(encoding="utf-8"))
    tape = Tape.load(FIXTURES / folder / f"{name}.tape.json")
    alg = TOOL.build(case, TapeReplay(tape))
    TOOL.run(alg, case, TOOL.inputs(case)[:case["cut"]])
    fresh = checkpoint.state_of(alg, functions=TOOL.functions())
    advice = ("A state's layout may change only with a new state version and a migration: bump `version` of the "
              "StateSpec of {algorithm} (reference/dpstream/checkpoint/states/), register `migrations={{old version: "
              "a function from the old state (plain JSON) to the new}}`, then add fixtures of the new layout with "
              "`python tools/checkpoint_fixtures.py --into NAME` and keep the old ones: they are the files users have.")
    try:
        old = layout(migrate_all(fixture["state"]))
    except CheckpointError as exc:
        return (f"{folder}/{name}: the fixture's state no longer loads: {exc}. "
                + advice.format(algorithm="the algorithm named there"))
    new = layout(fresh)
    if old == new:
        return None
    path, was, now = _first_difference(old, new)
    algorithm = _owner(fresh, path)
    return (f"{folder}/{name}: the state written for the same run has another layout at {path}: the fixture (written "
            f"by dpstream {fixture['dpstream']}, migrated) has {json.dumps(was)[:200]}, this code writes "
            f"{json.dumps(now)[:200]}. " + advice.format(algorithm=algorithm))


@pytest.mark.parametrize(("folder", "name", "case"), CASES, ids=IDS)
def test_the_state_layout_matches_every_fixture(folder: str, name: str, case: dict[str, Any]) -> None:
    problem = layout_problem(folder, name, case)
    assert problem is None, problem


def _algorithms(node: Any) -> set[str]:
    if isinstance(node, dict):
        own = {node["algorithm"]} if "state_version" in node and "algorithm" in node else set()
        return own.union(*(_algorithms(v) for v in node.values()))
    if isinstance(node, list):
        return set().union(*(_algorithms(v) for v in node))
    return set()


def test_every_documented_state_is_in_a_fixture() -> None:
    newest = FOLDERS[-1]
    found = set().union(*(_algorithms(json.loads(p.read_text(encoding="utf-8"))["state"])
                          for p in newest.glob("*.ckpt")))
    assert {s.algorithm for s in specs()} <= found, sorted({s.algorithm for s in specs()} - found)


# --- the mechanism, shown on a deliberate change of the Simple counter's layout -----------------------------------

SIMPLE_CASE = next((f, n, c) for f, n, c in CASES if n == "001-alg8")


def _with(monkeypatch: pytest.MonkeyPatch, changed: StateSpec) -> None:
    current = specs()
    monkeypatch.setattr(engine, "specs", lambda: tuple(changed if s.cls is SimpleCounter else s for s in current))


def _renamed(version: int, migrations: dict[int, Any]) -> StateSpec:
    """The Simple counter with g(t) written as ``g_t``."""
    simple = next(s for s in specs() if s.cls is SimpleCounter)
    variables = tuple(dataclasses.replace(f, name="g_t", attr="g") if f.name == "g" else f for f in simple.variables)
    return dataclasses.replace(simple, version=version, variables=variables, migrations=migrations)


def _rename_g(doc: dict[str, Any]) -> dict[str, Any]:
    doc["variables"] = {("g_t" if k == "g" else k): v for k, v in doc["variables"].items()}
    return doc


def test_the_continuation_check_catches_a_variable_not_restored(monkeypatch: pytest.MonkeyPatch) -> None:
    """A state whose g(t) is read but not restored (the layout unchanged) fails check (1)."""
    simple = next(s for s in specs() if s.cls is SimpleCounter)
    variables = tuple(dataclasses.replace(f, put=lambda o, v: None) if f.name == "g" else f for f in simple.variables)
    _with(monkeypatch, dataclasses.replace(simple, variables=variables, check=None))
    expected, got, _ = continued(*SIMPLE_CASE)
    assert got != expected
    assert layout_problem(*SIMPLE_CASE) is None  # (2) sees no change: the file's layout is the same


def test_a_layout_change_without_a_version_bump_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    _with(monkeypatch, _renamed(1, {}))
    problem = layout_problem(*SIMPLE_CASE)
    assert problem is not None and "state.variables" in problem and "SimpleCounter" in problem
    assert "bump `version`" in problem and "migrations=" in problem and "--into" in problem


def test_a_version_bump_with_a_migration_loads_the_old_fixture(monkeypatch: pytest.MonkeyPatch) -> None:
    _with(monkeypatch, _renamed(2, {1: _rename_g}))
    assert layout_problem(*SIMPLE_CASE) is None
    expected, got, replay = continued(*SIMPLE_CASE)
    assert got == expected and '"state_version": 2' in got[-1] and '"g_t"' in got[-1]
    replay.assert_exhausted()


def test_a_version_bump_without_a_migration_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    _with(monkeypatch, _renamed(2, {}))
    folder, name, _ = SIMPLE_CASE
    with pytest.raises(CheckpointError, match="no migration of SimpleCounter from state version 1 to 2"):
        checkpoint.load(FIXTURES / folder / f"{name}.ckpt", TapeReplay(Tape.load(FIXTURES / folder /
                                                                                  f"{name}.tape.json")))
    problem = layout_problem(*SIMPLE_CASE)
    assert problem is not None and "no longer loads" in problem


def test_a_state_newer_than_this_dpstream_is_refused(tmp_path: Path) -> None:
    folder, name, _ = SIMPLE_CASE
    doc = json.loads((FIXTURES / folder / f"{name}.ckpt").read_text(encoding="utf-8"))
    doc["state"]["state_version"] = 99
    doc.pop("sha256")
    path = tmp_path / "newer.ckpt"
    path.write_text(checkpoint.file.seal(doc, None), encoding="utf-8")
    with pytest.raises(CheckpointError, match="state version 99 of SimpleCounter was written by a later dpstream"):
        checkpoint.load(path, TapeReplay(Tape.load(FIXTURES / folder / f"{name}.tape.json")))



