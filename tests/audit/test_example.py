"""The worked example of docs/audits.md audits a counter written outside the package (examples/)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

from dpstream.counters import Counter

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "third_party_counter.py"


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("third_party_counter", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_worked_example_runs(capsys: pytest.CaptureFixture[str]) -> None:
    """The correct third-party counter passes every check and the halved-scale copy is caught.

    False-alarm probability of the first assertion: 1e-4 (the example case's share); fixed seed 0.
    """
    module = _load()
    assert module.main() == 0
    out = capsys.readouterr().out
    assert "MyCounter(scale x1): all checks pass" in out
    assert "MyCounter(scale x0.5): caught by" in out
    assert module.MyCounter.__module__ == "third_party_counter"
    assert not issubclass(module.MyCounter, Counter)  # nothing of the library is subclassed
