"""Noise tapes: recording, serialisation, replay by site, and every replay failure."""

from __future__ import annotations

import json

import numpy as np
import pytest

from dpstream.insecure import InsecureSeededNoise, TapeRecorder, TapeReplay
from dpstream.noise import NoiseSource
from dpstream.tape import (
    DuplicateSiteError,
    Tape,
    TapeFormatError,
    TapeMismatchError,
    TapeSiteMissingError,
    TapeUnusedSitesError,
)


def _draw_all(noise: NoiseSource) -> list[object]:
    return [
        noise.add_laplace("a", 0.0, 0.5),
        noise.add_discrete_laplace("b", 0, 2.0),
        noise.add_discrete_gaussian("c", 0, 4.0),
        noise.exponential_mechanism("d", [1.0, 2.5, -1.0], 0.7, 1.0),
        noise.coin("e"),
        noise.choice("f", 9, 3),
        noise.uniform_box("g", [0.0, 0.0], [1.0, 2.0], 3).tolist(),
    ]


def test_round_trip_and_replay_in_other_order() -> None:
    recorder = TapeRecorder(InsecureSeededNoise(3), meta={"what": "test"})
    values = _draw_all(recorder)
    tape = Tape.loads(recorder.tape.dumps())
    assert tape.dumps() == recorder.tape.dumps()
    assert tape.meta == {"what": "test"}
    with TapeReplay(tape) as replay:
        # a different order is fine: replay is keyed by site
        g = replay.uniform_box("g", [0.0, 0.0], [1.0, 2.0], 3).tolist()
        rest = [
            replay.add_laplace("a", 0.0, 0.5),
            replay.add_discrete_laplace("b", 0, 2.0),
            replay.add_discrete_gaussian("c", 0, 4.0),
            replay.exponential_mechanism("d", [1.0, 2.5, -1.0], 0.7, 1.0),
            replay.coin("e"),
            replay.choice("f", 9, 3),
        ]
    assert [*rest, g] == values


def test_replay_failures() -> None:
    recorder = TapeRecorder(InsecureSeededNoise(3))
    recorder.add_laplace("a", 0.0, 0.5)
    recorder.add_discrete_laplace("b", 0, 2.0)
    tape = recorder.tape
    with pytest.raises(TapeSiteMissingError):
        TapeReplay(tape).add_laplace("zzz", 0.0, 0.5)
    with pytest.raises(TapeMismatchError, match="kind"):
        TapeReplay(tape).add_discrete_laplace("a", 0, 0.5)
    with pytest.raises(TapeMismatchError, match="params"):
        TapeReplay(tape).add_laplace("a", 0.0, 0.25)
    replay = TapeReplay(tape)
    replay.add_laplace("a", 0.0, 0.5)
    with pytest.raises(DuplicateSiteError):
        replay.add_laplace("a", 0.0, 0.5)
    with pytest.raises(TapeUnusedSitesError, match="'b'"):
        replay.assert_exhausted()
    with pytest.raises(TapeUnusedSitesError), TapeReplay(tape) as r2:
        r2.add_laplace("a", 0.0, 0.5)


def test_param_tolerance() -> None:
    recorder = TapeRecorder(InsecureSeededNoise(0))
    recorder.add_laplace("a", 0.0, 0.1 * 3)
    tape = recorder.tape
    assert TapeReplay(tape).add_laplace("a", 0.0, 0.3) == tape.value("a")  # 0.1*3 != 0.3 by one ulp
    with pytest.raises(TapeMismatchError):
        TapeReplay(tape, param_rtol=0.0).add_laplace("a", 0.0, 0.3)


def test_recorder_rejects_duplicate_sites() -> None:
    recorder = TapeRecorder(InsecureSeededNoise(0))
    recorder.coin("x")
    with pytest.raises(DuplicateSiteError):
        recorder.coin("x")


@pytest.mark.parametrize(
    "mutate",
    [
        lambda d: d.update(format="other"),
        lambda d: d.update(version=2),
        lambda d: d["draws"].append(dict(d["draws"][0])),
        lambda d: d["draws"][0].update(kind="gauss"),
        lambda d: d["draws"][0]["params"].update(scale=-1.0),
        lambda d: d["draws"][0]["params"].update(extra=1),
        lambda d: d["draws"][1].update(value=1.5),
        lambda d: d["draws"][2].update(value=[3, 1]),
        lambda d: d["draws"][0].pop("value"),
    ],
)
def test_format_errors(mutate: object) -> None:
    recorder = TapeRecorder(InsecureSeededNoise(0))
    recorder.add_laplace("a", 0.0, 1.0)
    recorder.add_discrete_laplace("b", 0, 1.0)
    recorder.choice("c", 5, 2)
    doc = json.loads(recorder.tape.dumps())
    mutate(doc)  # type: ignore[operator]
    with pytest.raises(TapeFormatError):
        Tape.from_json(doc)


def test_uniform_box_value_is_exact() -> None:
    recorder = TapeRecorder(InsecureSeededNoise(5))
    pts = recorder.uniform_box("u", [0.0], [1.0], 4)
    back = Tape.loads(recorder.tape.dumps())
    assert np.array_equal(back.value("u"), pts)
