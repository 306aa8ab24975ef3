"""Write the checkpoint fixtures: one checkpoint file per streaming algorithm, a few steps into a seeded run.

    python tools/checkpoint_fixtures.py                 # writes tests/data/checkpoints/<dpstream version>/
    python tools/checkpoint_fixtures.py --into NAME     # into tests/data/checkpoints/NAME/ (e.g. a layout change
                                                        # between releases: "0.1.0+simple-v2")

An existing folder is never overwritten: the fixtures are the files users of that version have, and
``tests/foundation/test_checkpoint_fixtures.py`` loads every one of them with the current code (a run continued
from a fixture must equal the uninterrupted run) and fails when the current code writes another state layout for
the same run without a state version bump and a migration.

Every case is one run on a noise tape (recorded from ``InsecureSeededNoise(seed)``), saved after ``cut`` steps on a
replay of that tape. The catalog's streaming entries (built by ``Entry.make`` from JSON parameters, stepped with
JSON inputs through their codecs: the inputs are in the manifest) and the other streaming classes of the resume
property test (built and stepped by its enumeration, ``tests/foundation/test_checkpoint.py``, by name). Each case
writes ``<name>.ckpt`` and ``<name>.tape.json``; ``manifest.json`` lists the cases.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

import dpstream
from dpstream import catalog, checkpoint
from dpstream.insecure import InsecureSeededNoise, TapeRecorder, TapeReplay
from dpstream.noise import NoiseSource
from dpstream.tape import Tape
from dpstream.testing import load_script

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "data" / "checkpoints"
SEED = 2024

CONFIGS = {
    "PHDStreamTree": "phdstream PHDStreamTree hypercube",
    "PHDStreamTreeWithCounters": "phdstream PHDStreamTreeWithCounters boolean-cube",
    "OfflinePrivTreeOnStream": "phdstream OfflinePrivTreeOnStream hypercube",
    "OfflinePrivTreeOnDifferential": "phdstream OfflinePrivTreeOnDifferential boolean-cube",
    "InitPrivTreeThenCounters": "phdstream InitPrivTreeThenCounters hypercube",
    "CategoricalFixedWindowSynthesizer": "longitudinal fixed-window k=2 A=3",
}
"""Streaming classes that no catalog entry builds as its algorithm, and the property test's configuration of each."""

Case = dict[str, Any]


@cache
def enumeration() -> ModuleType:
    """The resume property test's enumeration of streaming algorithms (``CATALOG``, ``FUNCTIONS``)."""
    return load_script(ROOT / "tests" / "foundation" / "test_checkpoint.py")


def functions() -> dict[str, Callable[..., Any]]:
    return dict(enumeration().FUNCTIONS)


def cases() -> dict[str, Case]:
    """Every fixture case: each streaming catalog entry (its longest known-answer vector's parameters and inputs)
    and each class of :data:`CONFIGS`."""
    out: dict[str, Case] = {}
    for e in catalog.entries(streaming=True):
        vector = max(e.vectors(), key=lambda v: len(v.inputs))
        inputs = list(vector.inputs)
        out[e.anchor] = {"catalog": e.anchor, "params": dict(vector.params), "inputs": inputs, "seed": vector.seed,
                         "cut": len(inputs) // 2}
    for name, config in CONFIGS.items():
        n = len(enumeration().CATALOG[config][1])
        out[name] = {"config": config, "seed": SEED, "cut": n // 2}
    return out


def build(case: Case, noise: NoiseSource) -> Any:
    if "catalog" in case:
        return catalog.entry(case["catalog"]).make(case["params"], noise)
    return enumeration().CATALOG[case["config"]][0](noise)


def inputs(case: Case) -> list[Any]:
    """The run's inputs as the algorithm takes them (catalog: decoded from the manifest's JSON)."""
    if "catalog" in case:
        codec = catalog.entry(case["catalog"]).codec
        assert codec is not None
        return [codec.decode_input(x, case["params"]) for x in case["inputs"]]
    return list(enumeration().CATALOG[case["config"]][1])


def run(alg: Any, case: Case, xs: list[Any]) -> list[Any]:
    """Step ``alg`` through ``xs``; the releases as JSON text (the codec's for catalog entries, else the state)."""
    out = []
    for x in xs:
        release = alg.step(x)
        if "catalog" in case:
            codec = catalog.entry(case["catalog"]).codec
            assert codec is not None
            out.append(json.dumps(codec.encode_release(release)))
        else:
            out.append(json.dumps(checkpoint.state_of(alg, functions=functions())))
    return out


def record(case: Case) -> Tape:
    """The tape of the uninterrupted run (seeded)."""
    recorder = TapeRecorder(InsecureSeededNoise(case["seed"]))
    run(build(case, recorder), case, inputs(case))
    return recorder.tape


def write(folder: Path) -> list[str]:
    """Write every case into ``folder`` (must not exist); the names written."""
    folder.mkdir(parents=True)
    manifest: dict[str, Any] = {"dpstream": dpstream.__version__, "cases": {}}
    for name, case in cases().items():
        tape = record(case)
        alg = build(case, TapeReplay(tape))
        run(alg, case, inputs(case)[:case["cut"]])
        checkpoint.save(alg, folder / f"{name}.ckpt", functions=functions())
        tape.save(folder / f"{name}.tape.json")
        manifest["cases"][name] = case
    (folder / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    return list(manifest["cases"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--into", default=dpstream.__version__, help="folder name under tests/data/checkpoints")
    args = parser.parse_args(argv)
    folder = FIXTURES / args.into
    if folder.exists():
        print(f"{folder} exists: fixtures of a version are never rewritten (choose --into NAME)", file=sys.stderr)
        return 2
    names = write(folder)
    print(f"wrote {len(names)} checkpoint fixtures to {folder.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
