"""Generate the known-answer vectors of 002-alg1 in this folder (run from the repository root).

``.venv/bin/python tests/longitudinal/vectors/generate_longitudinal.py`` rewrites the JSON files.
Every vector is recomputed independently by tests/longitudinal/test_vectors.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from dpstream.longitudinal.fixed_window import FixedWindowSynthesizer
from dpstream.longitudinal.generators import random_matrix
from dpstream.noise import NoiseSource
from dpstream.testing import record_run
from dpstream.vectors import KnownAnswerVector

HERE = Path(__file__).resolve().parent


def release_json(release: object) -> object:
    if release is None:
        return None
    return {"p": [int(v) for v in release.p], "columns": np.asarray(release.columns).T.tolist()}  # type: ignore[attr-defined]


def main() -> None:
    for T, k, rho, n, n_pad, seed in ((6, 2, 1.0, 10, 12, 11), (5, 3, 4.0, 8, 10, 12)):
        X = random_matrix(n, T, seed=seed)
        inputs = [X[:, j].tolist() for j in range(T)]
        def factory(noise: NoiseSource, T: int = T, k: int = k, rho: float = rho, n_pad: int = n_pad) -> Any:
            return FixedWindowSynthesizer(T, k, rho, noise, n_pad=n_pad)

        releases, tape = record_run(factory, inputs, seed=seed)
        vector = KnownAnswerVector(
            component="002-alg1", params={"T": T, "k": k, "rho": rho, "n_pad": n_pad},
            inputs=inputs, tape=tape, expected=[release_json(r) for r in releases],
            description=("FixedWindowSynthesizer (default variance (T-k+1)/rho). Each step's input is the column "
                         "D^t; expected is null for t < k, else p^t and the new synthetic columns (as rows of "
                         "the transposed block)."),
        )
        vector.save(HERE / f"fixed-window-T{T}-k{k}-rho{rho:g}.json")


if __name__ == "__main__":
    main()
