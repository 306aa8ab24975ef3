"""Regenerate the counters' known-answer vectors: ``python tests/vectors/generate_counters.py``.

Each vector records one seeded run (inputs, tape, releases). The tests in
``tests/counters`` replay every vector AND recompute its expected releases from the
tape by the counter's closed-form model, so a regenerated vector is only accepted if
the implementation agrees with the paper's model.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from dpstream.counters import SimpleCounter
from dpstream.noise import NoiseSource
from dpstream.testing import Streaming, record_run
from dpstream.vectors import KnownAnswerVector

HERE = Path(__file__).resolve().parent

# name -> (component anchor, params, factory(params, noise), inputs, seed)
Factory = Callable[[dict[str, Any], NoiseSource], Streaming]
VECTORS: dict[str, tuple[str, dict[str, Any], Factory, list[Any], int]] = {
    "simple-eps1-T8": (
        "001-alg8", {"epsilon": 1.0},
        lambda p, n: SimpleCounter(p["epsilon"], n),
        [1, 0, 1, 1, 0, 0, 1, 1], 11,
    ),
    "simple-eps0.5-T5-real": (
        "001-alg8", {"epsilon": 0.5},
        lambda p, n: SimpleCounter(p["epsilon"], n),
        [0.5, -1.0, 2.25, 0.0, 3.0], 12,
    ),
}


def main() -> None:
    for name, (component, params, factory, inputs, seed) in VECTORS.items():
        releases, tape = record_run(lambda n, f=factory, p=params: f(p, n), inputs, seed)  # type: ignore[misc]
        KnownAnswerVector(component, params, inputs, tape, releases,
                          description=f"{component} {params} seed={seed}").save(HERE / f"{name}.json")
        print("wrote", name)


if __name__ == "__main__":
    main()
