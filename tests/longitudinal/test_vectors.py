"""Known-answer vectors of 002-alg1: replayed, and recomputed from the tape by the paper's equations."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from dpstream.longitudinal.data import window_histogram
from dpstream.longitudinal.fixed_window import FixedWindowSynthesizer
from dpstream.longitudinal.testing import targets_from_tape
from dpstream.testing import replay_vector
from dpstream.vectors import KnownAnswerVector

VECTORS = sorted((Path(__file__).resolve().parent / "vectors").glob("fixed-window-*.json"))


@pytest.mark.parametrize("path", VECTORS, ids=[p.stem for p in VECTORS])
def test_fixed_window_vector(path: Path) -> None:
    vector = KnownAnswerVector.load(path)
    P = vector.params
    T, k = int(P["T"]), int(P["k"])
    got = replay_vector(lambda n: FixedWindowSynthesizer(T, k, float(P["rho"]), n, n_pad=int(P["n_pad"])), vector)
    for release, expected in zip(got, vector.expected, strict=True):
        if expected is None:
            assert release is None
            continue
        assert release is not None
        assert release.p.tolist() == expected["p"]
        assert np.asarray(release.columns).T.tolist() == expected["columns"]
    # independent recomputation of the targets from the tape, and realisation by the expected records
    X = np.asarray(vector.inputs, dtype=np.int64).T
    tape = {d.site: d.value for d in vector.tape}
    targets = targets_from_tape(X, T, k, int(P["n_pad"]), tape)
    assert [e["p"] for e in vector.expected if e is not None] == targets
    blocks = [np.asarray(e["columns"], dtype=np.int64).T for e in vector.expected if e is not None]
    S = np.hstack(blocks)
    for t in range(k, T + 1):
        assert window_histogram(S, t, k).tolist() == targets[t - k]
