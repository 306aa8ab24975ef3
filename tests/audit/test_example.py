"""The worked example of docs/audits.md audits a counter written outside the package (examples/)."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest

from dpstream.counters import Counter
from dpstream.testing import load_script

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
EXAMPLE = EXAMPLES / "third_party_counter.py"


def _load(path: Path = EXAMPLE) -> ModuleType:
    return load_script(path)


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


def test_own_model_example_runs(capsys: pytest.CaptureFixture[str]) -> None:
    """docs/audits.md, "Your own counter": a counter with no library model, audited against a model written
    from its pseudocode and model-free; the correct scale T/eps passes both routes, the mistaken 1/eps (true
    guarantee T eps = 8) is caught by both.

    False-alarm probability of the passes: 1e-4 (linear case share) + 1e-4 (model-free level); fixed seed 0.
    """
    module = _load(EXAMPLES / "own_model_counter.py")
    assert module.main() == 0
    out = capsys.readouterr().out
    assert "FreshNoiseCounter(scale=8): all checks pass" in out
    assert "FreshNoiseCounter(scale=1): caught by black-box, calibration" in out
    model = module.fresh_noise_model()
    assert model.injective and model.n_releases == module.T
    assert not issubclass(module.FreshNoiseCounter, Counter)
    bad = module.model_free(1.0)
    assert bad.passed is False and bad.value is not None and bad.value > 1.0


@pytest.mark.slow
def test_own_rng_example_runs(capsys: pytest.CaptureFixture[str]) -> None:
    """docs/audits.md, "Outside implementations": a counter with its own RNG, audited through the seed hook.

    False-alarm probability of "the correct counter is not convicted": 1e-4 (the example's level); seed 0.
    """
    module = _load(EXAMPLES / "own_rng_counter.py")
    assert module.main() == 0
    out = capsys.readouterr().out
    assert "OwnRngCounter(exact_every=10): violation" in out and "witness:" in out
    assert "OwnRngCounter: violation" not in out
    first = [module.OwnRngCounter(1.0, 5).step(1) for _ in range(2)]
    assert first[0] == first[1]  # a fresh counter from the same seed replays the same noise
