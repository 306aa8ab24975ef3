"""The noise section of a checkpoint: what the source's state was, and which source may continue it.

* ``{"kind": "secure"}``: a :class:`~dpstream.noise.SecureNoise`; nothing random is stored. ``load(noise=None)``
  attaches a fresh one. Any other source (seeded, zero, scripted, tape, wire, your own) would continue a private
  stream with noise that is not private: refused unless the caller says so with ``allow_insecure=True``.
* ``{"kind": "seeded" | "zero" | "tape-recorder" | "tape-replay", ...}``: an insecure source of the
  ``dpstream.insecure`` door, whose state is stored and restored into a source of the same kind passed to ``load``
  (so a resumed run releases what the uninterrupted run releases). Any other source is refused: the releases made
  before the save carry no privacy guarantee, so continuing with secure noise would not make the stream private,
  and the run would no longer be reproducible.
* ``{"kind": "other", "class": ...}``: a source of your own (nothing restored; pass one to ``load``);
  ``{"kind": "none"}``: the algorithm draws nothing.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

from dpstream.checkpoint.names import CheckpointError
from dpstream.errors import DPStreamInputError
from dpstream.insecure import InsecureSeededNoise, InsecureZeroNoise, TapeRecorder, TapeReplay
from dpstream.noise import ScopedNoise, SecureNoise
from dpstream.tape import Tape, TapeError

__all__ = ["noise_state", "restore_plan"]

_SOURCE_KINDS: dict[str, type] = {"seeded": InsecureSeededNoise, "zero": InsecureZeroNoise,
                                  "tape-recorder": TapeRecorder, "tape-replay": TapeReplay}


def noise_state(source: Any) -> dict[str, Any]:
    """The noise section for ``source`` (the algorithm's own source)."""
    if source is None:
        return {"kind": "none"}
    if type(source) is SecureNoise:
        return {"kind": "secure"}
    if type(source) is InsecureSeededNoise:
        return {"kind": "seeded", "generator": source.generator_state()}
    if type(source) is InsecureZeroNoise:
        return {"kind": "zero", "post": noise_state(source.post_processing)}
    if type(source) is TapeRecorder:
        return {"kind": "tape-recorder", "draws": [d.to_json() for d in source.tape.draws],
                "inner": noise_state(source.inner)}
    if type(source) is TapeReplay:
        return {"kind": "tape-replay", "tape_sha256": hashlib.sha256(source.tape.dumps().encode()).hexdigest(),
                "used": sorted(source.used_sites)}
    return {"kind": "other", "class": f"{type(source).__module__}.{type(source).__qualname__}"}


def _secure(source: Any) -> bool:
    """A SecureNoise, or a scoped view of one (its draws are the SecureNoise's, under prefixed sites)."""
    while isinstance(source, ScopedNoise):
        source = source.inner
    return type(source) is SecureNoise


def _describe(source: Any) -> str:
    return "none" if source is None else type(source).__name__


def restore_plan(state: Any, source: Any, allow_insecure: bool) -> tuple[Any, list[Callable[[], None]]]:
    """The source to attach (``source``, or a fresh SecureNoise for ``None``) and the infallible steps that restore
    the saved state into it; refuses (:class:`CheckpointError`) a source that may not continue the saved one."""
    if not isinstance(state, dict) or not isinstance(state.get("kind"), str):
        raise CheckpointError("malformed noise section", state)
    kind = state["kind"]
    if kind == "secure":
        if source is None:
            return SecureNoise(), []
        if not _secure(source) and not allow_insecure:
            raise CheckpointError(
                f"saved with secure noise (SecureNoise); a {_describe(source)} is not secure and would continue a "
                "private stream with noise that is not private: pass noise=None (a fresh SecureNoise), or opt in "
                "deliberately with allow_insecure=True", _describe(source))
        return source, []
    if kind == "none":
        return (SecureNoise() if source is None else source), []
    if kind == "other":
        if source is None:
            raise CheckpointError("saved with a noise source of your own: pass one to load(noise=...)", state)
        return source, []
    if kind not in _SOURCE_KINDS:
        raise CheckpointError("unknown noise kind", kind)
    if type(source) is not _SOURCE_KINDS[kind]:
        raise CheckpointError(
            f"saved with a {_SOURCE_KINDS[kind].__name__}: pass one to load(noise=...) (its state is restored from "
            "the checkpoint); the releases so far were made with insecure noise, so continuing with any other source "
            "(secure noise included) would neither make the stream private nor reproduce the run",
            _describe(source))
    return source, _plan(state, source)


def _plan(state: dict[str, Any], source: Any) -> list[Callable[[], None]]:
    if isinstance(source, InsecureSeededNoise):
        seeded = source
        trial = InsecureSeededNoise(0)
        try:
            trial.restore_generator_state(state["generator"])
        except (DPStreamInputError, KeyError, TypeError) as exc:
            raise CheckpointError(f"invalid generator state: {exc}", None) from exc
        generator = trial.generator_state()
        return [lambda: seeded.restore_generator_state(generator)]
    if isinstance(source, InsecureZeroNoise):
        _, steps = restore_plan(state.get("post"), source.post_processing, True)
        return steps
    if isinstance(source, TapeRecorder):
        recorder = source
        try:
            draws = Tape.from_json({"format": "dpstream-noise-tape", "version": 1, "draws": state["draws"]}).draws
        except (TapeError, KeyError) as exc:
            raise CheckpointError(f"invalid recorded draws: {exc}", None) from exc
        inner_state = state.get("inner")
        if not isinstance(inner_state, dict) or inner_state.get("kind") == "secure":
            inner: list[Callable[[], None]] = []  # a recorder around secure noise: nothing to restore inside
        else:
            _, inner = restore_plan(inner_state, recorder.inner, True)
        return [*inner, lambda: recorder.resume(draws)]
    replay = source
    assert isinstance(replay, TapeReplay)
    digest = hashlib.sha256(replay.tape.dumps().encode()).hexdigest()
    if state.get("tape_sha256") != digest:
        raise CheckpointError("the TapeReplay passed holds another tape than the one being replayed", digest)
    used = state.get("used")
    if not isinstance(used, list) or not set(used) <= {d.site for d in replay.tape.draws}:
        raise CheckpointError("invalid served sites", used)
    return [lambda: replay.resume(used)]
