"""Helpers for checking a streaming implementation against tapes and vectors.

Public, so that other implementations can reuse them in their own test suites:
record a run of any streaming object (something with ``step(x)``) under a seeded
source, replay a tape through it, or check a known-answer vector.
:mod:`dpstream.testing.strategies` has hypothesis strategies for valid parameters, input
streams and neighbouring inputs (it needs hypothesis, a dev dependency); :func:`pins` marks
a property test as the one that pins an erratum of ``docs/errata.md``.
:func:`dpstream.testing.linear.measured_linear_model` measures which noise enters which release
of a linear mechanism from its runs (what the proof notes read).
"""

from __future__ import annotations

import importlib.util
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any, TypeVar

from dpstream.convention import Streaming
from dpstream.insecure import InsecureSeededNoise, TapeRecorder, TapeReplay
from dpstream.noise import NoiseSource
from dpstream.tape import Tape
from dpstream.vectors import KnownAnswerVector

__all__ = ["ERRATUM_ID", "by_value", "load_script", "pins", "record_run", "replay_run", "replay_vector"]

ERRATUM_ID = re.compile(r"E-[a-z]+-\d+")
"""An erratum of ``docs/errata/<family>.md``: ``E-counters-1``, ``E-phdstream-3``, ..."""


def by_value(doc: Any) -> Any:
    """JSON data with every number whose value is an integer read as an int (``16.0`` -> 16), at every depth.

    The protocol reads JSON numbers by value (docs/conformance.md, "JSON numbers"): a vector may write an integer
    parameter or input as ``16.0``. A test that builds an algorithm from a vector's ``params`` directly (not through
    the catalog, which reads them so) reads them with this first."""
    if isinstance(doc, float) and doc.is_integer():
        return int(doc)
    if isinstance(doc, dict):
        return {k: by_value(v) for k, v in doc.items()}
    if isinstance(doc, list | tuple):
        return [by_value(v) for v in doc]
    return doc


def record_run(
    factory: Callable[[NoiseSource], Streaming], inputs: Sequence[Any], seed: int
) -> tuple[list[Any], Tape]:
    """Run ``factory(noise)`` on ``inputs`` with insecure seeded noise; return releases and the tape."""
    recorder = TapeRecorder(InsecureSeededNoise(seed), meta={"seed": seed})
    mechanism = factory(recorder)
    releases = [mechanism.step(x) for x in inputs]
    return releases, recorder.tape


def replay_run(
    factory: Callable[[NoiseSource], Streaming], inputs: Sequence[Any], tape: Tape, param_rtol: float = 1e-12,
    param_atol: float = 0.0,
) -> list[Any]:
    """Run ``factory(noise)`` on ``inputs`` replaying ``tape``; every tape site must be used."""
    with TapeReplay(tape, param_rtol=param_rtol, param_atol=param_atol) as replay:
        mechanism = factory(replay)
        return [mechanism.step(x) for x in inputs]


def replay_vector(factory: Callable[[NoiseSource], Streaming], vector: KnownAnswerVector) -> list[Any]:
    """Replay a known-answer vector's tape through ``factory(noise)`` on its inputs."""
    return replay_run(factory, vector.inputs, vector.tape, vector.draw_tolerance.relative,
                      vector.draw_tolerance.absolute)


def load_script(path: Path) -> ModuleType:
    """Import a file that is not on the import path (a vector generator, an example) as a module.

    The module is registered in ``sys.modules`` under the file's stem before it runs, as an import
    would do (dataclasses in a script with ``from __future__ import annotations`` look it up there).
    """
    spec = importlib.util.spec_from_file_location(path.stem, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module
    spec.loader.exec_module(module)
    return module


F = TypeVar("F", bound=Callable[..., Any])


def pins(*errata: str) -> Callable[[F], F]:
    """Mark a property test as pinning ``errata`` (ids such as ``"E-counters-1"``).

    The test states the property the default meets for every input and carries an
    ``@example(...)`` with the case the erratum is about (where the printed variant fails);
    ``property_tests/test_errata_pinned.py`` checks that every erratum is pinned this way or
    listed as documentation-only. The ids are stored on the function as ``pinned_errata``.
    """
    bad = [e for e in errata if not ERRATUM_ID.fullmatch(e)]
    if not errata or bad:
        raise ValueError(f"pins() takes erratum ids like 'E-counters-1', got {errata!r}")

    def mark(fn: F) -> F:
        fn.pinned_errata = tuple(errata)  # type: ignore[attr-defined]
        return fn

    return mark
