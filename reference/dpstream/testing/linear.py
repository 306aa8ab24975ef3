"""Measure which noise enters which release of a streaming mechanism, from its runs alone.

:func:`measured_linear_model` is what the proof notes (``proofs/proof_*.py``) read: the sites, laws,
statistics S and combination W of a linear mechanism r = W (S f + z), obtained by replaying its own
tape with chosen noise, never from its pseudocode or from a hand-written model. A note then checks
the proof's quantities (scales, how many statistics an input enters, the loss) on the implementation.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from dpstream.audit.linear_model import ADDITIVE_KINDS, LinearReleaseModel, NoiseLaw
from dpstream.convention import Streaming
from dpstream.errors import DPStreamInputError, require_int_at_least
from dpstream.noise import DrawKind, NoiseSource, data_rng
from dpstream.tape import Tape, TapeError
from dpstream.testing import record_run, replay_run

__all__ = ["measured_linear_model"]


def _law(kind: DrawKind, params: Mapping[str, Any]) -> NoiseLaw:
    if kind not in ADDITIVE_KINDS:
        raise DPStreamInputError("factory", "must draw additive noise only (laplace, discrete laplace or gaussian)",
                                 kind.value)
    return NoiseLaw.of_draw(kind, params)


def measured_linear_model(
    factory: Callable[[NoiseSource], Streaming], T: int, d: int | None = None, seed: int = 0
) -> LinearReleaseModel:
    """The linear release model r = W (S f + z) of a streaming mechanism over T steps, *measured from its runs*.

    Nothing is taken from the pseudocode: one seeded run (on a random 0/1 stream) gives the sites and
    laws of the m noise draws; replaying that tape with noise 1 at site j and 0 elsewhere on the zero
    stream gives the column W[:, j]; replaying zero noise on the stream e_i (input i set to 1) gives
    (W S)[:, i]; S solves W S = (W S) (W needs full column rank). The seeded run is then checked against
    W (S f + z), so a mechanism that is not linear (or draws at sites that depend on the data) is
    refused. ``d`` is the length of a vector input (None: scalar inputs); inputs and releases are
    flattened time-major, as in :func:`dpstream.audit.counters.models.multidimensional_model`.
    Cost: m + T * (d or 1) + 1 runs of T steps.
    """
    T = require_int_at_least("T", T, 1)
    width = 1 if d is None else require_int_at_least("d", d, 1)

    def stream(f: npt.NDArray[np.int64]) -> list[Any]:
        return [int(f[t, 0]) for t in range(T)] if d is None else [[int(v) for v in f[t]] for t in range(T)]

    def flat(releases: Sequence[Any]) -> npt.NDArray[np.float64]:
        return np.concatenate([np.ravel(np.asarray(r, dtype=np.float64)) for r in releases])

    f0 = data_rng(seed).integers(0, 2, size=(T, width))
    r0, tape = record_run(factory, stream(f0), seed)
    laws = tuple(_law(draw.kind, draw.params) for draw in tape)
    sites = tuple(draw.site for draw in tape)

    def run(f: npt.NDArray[np.int64], unit: str | None) -> npt.NDArray[np.float64]:
        draws = tuple(dataclasses.replace(draw, value=(1 if draw.site == unit else 0) if law.is_integer
                                          else (1.0 if draw.site == unit else 0.0))
                      for draw, law in zip(tape, laws, strict=True))
        try:
            return flat(replay_run(factory, stream(f), Tape(draws)))
        except TapeError as exc:
            raise DPStreamInputError("factory", f"must draw at the same sites for every input ({exc})", None) from exc

    zero = np.zeros((T, width), dtype=np.int64)
    if np.any(run(zero, None) != 0.0):
        raise DPStreamInputError("factory", "must release 0 on the zero stream with zero noise (a linear map)", None)
    W = np.column_stack([run(zero, s) for s in sites]) if sites else np.zeros((T * width, 0))
    WS = np.zeros((W.shape[0], T * width))
    for i in range(T * width):
        e = zero.copy()
        e[divmod(i, width)] = 1
        WS[:, i] = run(e, None)
    if sites and np.linalg.matrix_rank(W) != len(sites):
        raise DPStreamInputError("factory", "its releases must determine its noise (W of full column rank)", None)
    S = np.asarray(np.linalg.lstsq(W, WS, rcond=None)[0] if sites else np.zeros((0, T * width)), dtype=np.float64)
    z0 = np.array([float(draw.value) for draw in tape])
    if not (np.allclose(W @ S, WS, atol=1e-9) and np.allclose(W @ (S @ f0.ravel() + z0), flat(r0), atol=1e-9)):
        raise DPStreamInputError("factory", "must be a linear mechanism r = W (S f + z)", None)
    return LinearReleaseModel(sites, laws, S, W)
