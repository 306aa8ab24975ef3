"""Regenerate seed 004's known-answer vectors: ``.venv/bin/python tests/hypercube/vectors/generate_hypercube.py``.

Each vector is one seeded run (inputs, noise tape, releases). ``tests/hypercube/test_vectors.py``
replays every vector through the implementation AND recomputes the counters' releases from the
tape with the box re-derivations of ``tests/hypercube/test_sparse_counters.py``; a regenerated
vector is only accepted if both agree.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from dpstream.counters.sparse import InhomogeneousSparseCounter, SparseCounter
from dpstream.hypercube.online import HypercubeRelease, OnlineSyntheticData
from dpstream.noise import NoiseSource, data_rng
from dpstream.testing import Streaming, record_run
from dpstream.vectors import KnownAnswerVector

HERE = Path(__file__).resolve().parent


def encode_release(release: HypercubeRelease) -> dict[str, Any]:
    """JSON form of an 004-alg1 release (integers and floats only)."""
    return {"t": release.t, "depth": release.depth,
            "noisy": [level.tolist() for level in release.noisy],
            "consistent": [level.tolist() for level in release.consistent],
            "points": None if release.points is None else release.points.tolist()}


def factory(component: str, params: dict[str, Any]) -> Any:
    if component == "004-alg2":
        return lambda n: SparseCounter(params["epsilon"], params["T"], n, as_printed=params["as_printed"])
    if component == "004-alg3":
        return lambda n: InhomogeneousSparseCounter(params["epsilon"], params["r0"], lambda r: params["eps_r"], n)
    return lambda n: OnlineSyntheticData(params["epsilon"], params["d"], n)


def main() -> None:
    bits = [int(v) for v in data_rng(404).random(24) < 0.75]
    specs: dict[str, tuple[str, dict[str, Any], list[Any], int]] = {
        "sparse-eps4-T24": ("004-alg2", {"epsilon": 4.0, "T": 24, "as_printed": False}, bits, 41),
        "sparse-printed-eps4-T24": ("004-alg2", {"epsilon": 4.0, "T": 24, "as_printed": True}, bits, 42),
        "inhomogeneous-eps1-r0-1": ("004-alg3", {"epsilon": 1.0, "r0": 1, "eps_r": 4.0}, bits, 43),
        "online-d2-eps2-t10": ("004-alg1", {"epsilon": 2.0, "d": 2},
                               [[round(float(v), 6) for v in row] for row in data_rng(405).random((10, 2))], 44),
    }
    for name, (component, params, inputs, seed) in specs.items():
        make = factory(component, params)

        def wrapped(n: NoiseSource, make: Any = make) -> Streaming:
            built: Streaming = make(n)
            return built

        releases, tape = record_run(wrapped, [np.asarray(x) if component == "004-alg1" else x for x in inputs], seed)
        expected = [encode_release(r) for r in releases] if component == "004-alg1" else releases
        KnownAnswerVector(component, params, inputs, tape, expected,
                          description=f"{component} {params} seed={seed}").save(HERE / f"{name}.json")
        print("wrote", name)


if __name__ == "__main__":
    main()
