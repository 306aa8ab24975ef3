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

from dpstream.counters import (
    BinaryTreeCounter,
    BlockCounter,
    HybridCounter,
    MultiDimensionalCounter,
    SimpleCounter,
    TreeAggregationCounter,
    UnboundedBlockCounter,
)
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
    "binary-tree-eps1-T8": (
        "001-alg10", {"epsilon": 1.0, "T": 8, "discrete": False},
        lambda p, n: BinaryTreeCounter(p["epsilon"], p["T"], n, discrete=p["discrete"]),
        [1, 0, 1, 1, 0, 0, 1, 1], 21,
    ),
    "binary-tree-eps0.5-T13-real-partial": (
        "001-alg10", {"epsilon": 0.5, "T": 13, "discrete": False},
        lambda p, n: BinaryTreeCounter(p["epsilon"], p["T"], n, discrete=p["discrete"]),
        [0.5, -1.0, 2.25, 0.0, 3.0, 1.5, -0.25, 4.0, 1.0, 0.0, 2.0], 22,
    ),
    "binary-tree-discrete-eps1-T16": (
        "001-alg10", {"epsilon": 1.0, "T": 16, "discrete": True},
        lambda p, n: BinaryTreeCounter(p["epsilon"], p["T"], n, discrete=p["discrete"]),
        [1, 0, 2, 1, 0, 0, 3, 1, 1, 1, 0, 2, 0, 1, 1, 4], 23,
    ),
    "tree-aggregation-rho0.5-T8": (
        "002-alg3", {"rho": 0.5, "T": 8},
        lambda p, n: TreeAggregationCounter(p["rho"], p["T"], n),
        [1, 0, 1, 2, 0, 1, 1, 0], 31,
    ),
    "tree-aggregation-rho0.1-T12": (
        "002-alg3", {"rho": 0.1, "T": 12},
        lambda p, n: TreeAggregationCounter(p["rho"], p["T"], n),
        [0, 3, 1, 1, 0, 0, 2, 1, 5, 0, 1, 1], 32,
    ),
    "block-eps1-B3-T10": (
        "001-alg9", {"epsilon": 1.0, "B": 3},
        lambda p, n: BlockCounter(p["epsilon"], p["B"], n),
        [1, 0, 1, 1, 0, 0, 1, 1, 1, 0], 41,
    ),
    "block-eps0.5-B8-T20-real": (
        "001-alg9", {"epsilon": 0.5, "B": 8},
        lambda p, n: BlockCounter(p["epsilon"], p["B"], n),
        [0.5, 1.0, -2.0, 0.0, 3.25, 1.0, 1.0, 0.0, 2.0, 1.0, 0.0, 0.0, 4.0, 1.0, 1.0, 2.0, 0.5, 0.0, 1.0, 1.0], 42,
    ),
    "unbounded-block-eps1-T30": (
        "003-alg4", {"epsilon": 1.0},
        lambda p, n: UnboundedBlockCounter(p["epsilon"], n),
        [1, 0, 1, 1, 0, 0, 1, 1, 1, 0, 1, 1, 0, 1, 0, 0, 1, 1, 1, 1, 0, 1, 0, 1, 1, 0, 1, 1, 0, 1], 51,
    ),
    "hybrid-eps1-T20": (
        "CSS11-hybrid", {"epsilon": 1.0},
        lambda p, n: HybridCounter(p["epsilon"], n),
        [1, 0, 1, 1, 0, 0, 1, 1, 1, 0, 1, 1, 0, 1, 0, 0, 1, 1, 1, 1], 61,
    ),
    "multidim-d3-block-eps1-B2-T6": (
        "001-sec4.3", {"d": 3, "epsilon": 1.0, "B": 2, "component": "001-alg9"},
        lambda p, n: MultiDimensionalCounter.build(lambda e, m: BlockCounter(e, p["B"], m), p["d"], p["epsilon"], n),
        [[1, 0, 2], [0, 1, 1], [2, 2, 0], [1, -1, 0.5], [0, 0, 3], [1, 1, 1]], 71,
    ),
}


def _jsonable(release: Any) -> Any:
    tolist = getattr(release, "tolist", None)
    return tolist() if callable(tolist) else release


def main() -> None:
    for name, (component, params, factory, inputs, seed) in VECTORS.items():
        releases, tape = record_run(lambda n, f=factory, p=params: f(p, n), inputs, seed)  # type: ignore[misc]
        KnownAnswerVector(component, params, inputs, tape, [_jsonable(r) for r in releases],
                          description=f"{component} {params} seed={seed}").save(HERE / f"{name}.json")
        print("wrote", name)


if __name__ == "__main__":
    main()
