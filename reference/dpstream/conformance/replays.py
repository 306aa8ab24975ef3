"""Replays of the reference on a program's reported draws: what transcript mode and the composed tests compare and
aim with (docs/conformance.md, "Transcript mode").

* :func:`replay`: the reference run on an input with every draw answered from the reported ones by site, the
  parameters compared within the entry's error model (the exactness check);
* :func:`lenient_replay` / :func:`answered` / :func:`completed`: replays that hold the program's noise fixed whatever
  its reported parameters, answering what does not fit from a seeded source (they choose neighbours and statistics,
  never a verdict);
* :func:`seeded_tape`: the draws of a seeded run of the reference; :func:`reference_features`: the features of a
  replay, as the composition of :mod:`dpstream.conformance.composed` reads them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from dpstream.arithmetic import recording
from dpstream.catalog import Entry
from dpstream.catalog.codecs import Tolerance
from dpstream.catalog.error_model import Bounds, ambiguous_decisions
from dpstream.conformance.entry_sampler import entry_run, featurise
from dpstream.conformance.serve import WireError, WireNoise
from dpstream.conformance.tape_mode import ANY_PARAMS, DrawIssue, TapeAnswerer
from dpstream.errors import DPStreamInputError, StateError
from dpstream.insecure import InsecureSeededNoise, TapeRecorder
from dpstream.noise import ADDITIVE_KINDS, DrawKind, dispatch_add, validated_params
from dpstream.tape import Draw, Tape, TapeError, params_equal, value_to_json

if TYPE_CHECKING:
    pass


__all__ = ["LENIENT", "Replay", "answered", "completed", "lenient_replay", "reference_features", "replay",
           "seeded_tape"]


@dataclass(frozen=True)
class Replay:
    """The reference replayed on a transcript: its releases, the draw issues (sites, kinds, parameters that differ
    from what the reference asks), the reported sites it never asked for, or why it could not run."""

    releases: list[Any]
    issues: list[DrawIssue]
    unused: list[str]
    failed: str | None = None
    bounds: Bounds | None = None
    """The entry's error model on this case (the tolerances of the comparisons)."""
    ambiguous: int = 0
    """Decisions taken within rounding of their threshold: the case is no ground truth (skipped)."""


def replay(e: Entry, params: Mapping[str, Any], inputs: Sequence[Any], draws: Sequence[Draw]) -> Replay:
    """The reference for ``e`` run on ``inputs`` with every draw answered from ``draws`` by site (a site not
    reported is answered with a neutral value and noted, as in tape mode); parameters compared within the entry's
    error model on this case (a first pass, accepting any parameter, notes what the model needs)."""
    assert e.error_model is not None
    tape = Tape(tuple(draws))
    with recording() as notes:
        first = _replay_within(e, params, inputs, tape, ANY_PARAMS)
    bounds = e.error_model.bounds(params, inputs, tape, notes)
    checked = _replay_within(e, params, inputs, tape, bounds.draws)
    return Replay(checked.releases, checked.issues, checked.unused, checked.failed, bounds,
                  len(ambiguous_decisions(notes.decisions, bounds)) if first.failed is None else 0)


def _replay_within(e: Entry, params: Mapping[str, Any], inputs: Sequence[Any], tape: Tape, tolerance: Tolerance
                   ) -> Replay:
    assert e.codec is not None
    answerer = TapeAnswerer(tape, tolerance)

    def ask(request: dict[str, Any]) -> Any:
        return {"value": answerer.answer(request["draw"])}

    codec = e.codec
    valid = e.params.validate(params)
    releases: list[Any] = []
    try:
        algorithm = e.make(params, WireNoise(ask))
        for t, x in enumerate(inputs, start=1):
            answerer.begin_step(t)
            releases.append(codec.encode_release(algorithm.step(codec.decode_input(x, valid))))
    except (DPStreamInputError, StateError, WireError, TapeError) as exc:
        return Replay(releases, answerer.issues, answerer.missing(), f"{type(exc).__name__}: {exc}")
    return Replay(releases, answerer.issues, answerer.missing())


LENIENT = Tolerance(0.0, 1e-9)
"""The aimed search's replays keep a reported draw whose parameters are the reference's within this (it only chooses
neighbours and statistics; exactness is judged elsewhere)."""


def lenient_replay(e: Entry, params: Mapping[str, Any], inputs: Sequence[Any], draws: Sequence[Draw]
                    ) -> list[Any] | None:
    """The reference's releases on ``inputs``, each draw answered by site from ``draws`` where its kind and parameters
    agree (an additive draw whatever its parameters: the program's noise held fixed), and from a seeded source where
    they do not (a moved draw can change a later draw's parameters: the k of a ``choice`` in 002-alg1; an additive
    draw not reported is 0); None if the reference cannot run. For the aimed search's features only."""
    return answered(e, params, inputs, draws, seeded_noise=False, keep_choices=True)[0]


def answered(e: Entry, params: Mapping[str, Any], inputs: Sequence[Any], draws: Sequence[Draw], *,
              seeded_noise: bool, keep_choices: bool, forced: bool = False) -> tuple[list[Any] | None, list[Draw]]:
    """(the reference's releases on ``inputs``, None if it cannot run; every draw it asked for, in order, with its own
    kind and parameters and the value it got). A draw is answered by site from ``draws``: an additive one where the
    kinds agree, whatever its reported parameters; another one (with ``keep_choices``) where the parameters agree
    too, or (``forced``: a path the caller chose) an exponential mechanism's index whatever its parameters, where
    the reference's candidates hold it. The rest from a seeded source: an additive draw not in ``draws`` gets seeded
    noise (``seeded_noise``) or none."""
    assert e.codec is not None
    by_site = {d.site: d for d in draws}
    fallback = InsecureSeededNoise(0)
    asked: list[Draw] = []

    def ask(request: dict[str, Any]) -> Any:
        d = request["draw"]
        site, kind = str(d["site"]), DrawKind(str(d["kind"]))
        checked = validated_params(kind, d["params"])
        recorded = by_site.get(site)
        if recorded is not None and recorded.kind is kind and (kind in ADDITIVE_KINDS or (keep_choices and (
                set(recorded.params) == set(checked)
                and all(params_equal(checked[k], recorded.params[k], LENIENT.relative, LENIENT.absolute)
                        for k in checked))) or (forced and kind is DrawKind.EXPONENTIAL_MECHANISM
                                                and 0 <= int(recorded.value) < len(checked["scores"]))):
            value = recorded.value
        elif kind in ADDITIVE_KINDS:
            zero: Any = 0.0 if kind is DrawKind.LAPLACE else 0
            value = dispatch_add(fallback, site, kind, checked, zero)[1] if seeded_noise else zero
        else:
            value = fallback.draw(site, kind, **checked)
        asked.append(Draw(site, kind, dict(checked), value))
        return {"value": value_to_json(kind, value)}

    try:
        return entry_run(e, params)(WireNoise(ask), inputs), asked
    except (DPStreamInputError, StateError, WireError, TapeError):
        return None, asked


def seeded_tape(e: Entry, params: Mapping[str, Any], inputs: Sequence[Any], seed: int = 0) -> list[Draw] | None:
    """The draws of a seeded run of the reference on ``inputs`` (None if it refuses them)."""
    recorder = TapeRecorder(InsecureSeededNoise(seed))
    try:
        entry_run(e, params)(recorder, inputs)
    except (DPStreamInputError, StateError):
        return None
    return list(recorder.tape.draws)


def reference_features(e: Entry, params: Mapping[str, Any]) -> Any:
    """Features of the reference's run on an input with given draws (replayed exactly, or leniently where the draws
    do not fit: :func:`lenient_replay`); None if it cannot run."""
    def features(inputs: Sequence[Any], draws: Sequence[Draw]) -> np.ndarray[Any, Any] | None:
        ref = replay(e, params, inputs, draws)
        releases = lenient_replay(e, params, inputs, draws) if ref.failed else ref.releases
        return None if releases is None else featurise(e.anchor, params, [releases])[0]

    return features


def completed(e: Entry, params: Mapping[str, Any], f: Sequence[Any], draws: Sequence[Draw]) -> list[Draw]:
    """Every draw the reference asks for when run on f with ``draws``, in order, with its own kind and parameters:
    the value of ``draws`` at that site where the kinds agree and the draw is additive, else a seeded value (the
    tape of a run on a branch the draws did not take)."""
    return answered(e, params, f, draws, seeded_noise=True, keep_choices=False)[1]
