"""Checkpoint and resume (issue 16, part 2): ``dpstream.checkpoint``.

* Every streaming algorithm of every family (the enumeration of ``test_secure_default.py``), for random
  cut points (hypothesis): a seeded run of n steps equals a run to the cut, saved to a FILE, loaded into a
  fresh source (its state comes from the file) and continued -- bit for bit: the releases, the releases
  the loaded object kept, its whole final state, and the tape recorded around the seeded source. The same
  with a tape replay.
* Under secure noise (OpenDP, spied): no site is drawn twice across the save/load boundary, and the
  released values are in the loaded state.
* Every refusal (truncated, corrupted, foreign format, other version, other dpstream, mismatched class,
  parameters or noise, unsafe names) raises ``CheckpointError`` and changes nothing; writes are atomic.
"""

from __future__ import annotations

import enum
import json
import math
import sys
import types
from collections import Counter as Multiset
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dpstream
from dpstream import checkpoint
from dpstream.checkpoint import CheckpointError
from dpstream.counters import BlockCounter, Counter, MultiDimensionalCounter, SimpleCounter
from dpstream.hypercube.online import OnlineSyntheticData
from dpstream.hypercube.streams import make_stream
from dpstream.insecure import InsecureSeededNoise, InsecureZeroNoise, TapeRecorder, TapeReplay
from dpstream.longitudinal.categorical import CategoricalFixedWindowSynthesizer
from dpstream.longitudinal.cumulative import CumulativeSynthesizer
from dpstream.longitudinal.fixed_window import FixedWindowSynthesizer
from dpstream.longitudinal.generators import random_matrix
from dpstream.noise import BaseNoiseSource, NoiseSource, SecureNoise
from dpstream.phdstream import PHDStreamTree, PHDStreamTreeWithCounters
from dpstream.phdstream.baselines import (
    InitPrivTreeThenCounters,
    OfflinePrivTreeOnDifferential,
    OfflinePrivTreeOnStream,
)
from dpstream.phdstream.stream import TrueStream
from dpstream.tabular.datasets import SyntheticDataset
from dpstream.tabular.fitting import MultiplicativeWeights
from dpstream.tabular.main_algorithm import MainAlgorithm
from dpstream.tabular.offline import offline_claim, select_measure_fit
from dpstream.tabular.queries import all_marginal_queries, all_workloads
from dpstream.tabular.stream import DifferentialDataset
from dpstream.tabular.streaming_mwem import OfflineToStream, StreamingMWEM
from dpstream.tabular.totals import TotalRule
from dpstream.tape import Tape
from dpstream.testing import load_script
from dpstream.testing.secure_path import SecureDoorSpy

SECURE_DEFAULT = load_script(Path(__file__).resolve().parent / "test_secure_default.py")


# --- the enumeration: every streaming algorithm, built on a given source ------------------------------------

def offline_mwem(diff: DifferentialDataset, noise: NoiseSource) -> SyntheticDataset:
    """000-alg2's offline algorithm in the enumeration: MWEM (003-alg1) on 1-way marginals."""
    m = SECURE_DEFAULT
    return select_measure_fit(diff, all_marginal_queries(m.DOM, 1), 1.0, m.K, MultiplicativeWeights(),
                              total=TotalRule.public(m.BATCH), noise=noise).g


def block_factory(epsilon: float, noise: NoiseSource) -> Counter:
    return BlockCounter(epsilon, 2, noise=noise)


FUNCTIONS: dict[str, Callable[..., Any]] = {
    "flat-budget": SECURE_DEFAULT.flat_budget, "busy-budget": SECURE_DEFAULT.busy_budget,
    "block-b2": SECURE_DEFAULT.block_counter_b2, "block-factory": block_factory, "offline-mwem": offline_mwem,
}
"""The test's own functions held by the algorithms (factories, schedules): saved by these names."""

Factory = Callable[[NoiseSource | None], Any]


def _tree_inputs(partition: Any, batches: Sequence[Any]) -> list[Any]:
    truth, out = TrueStream(partition), []
    for batch in batches:
        prepared = truth.stage(batch)
        out.append(prepared.release.dF)
        prepared.commit()
    return out


def _bind(make: Callable[..., Any], *args: Any, **kwargs: Any) -> Factory:
    """``noise -> make(*args, noise=noise, **kwargs)``."""
    def factory(noise: NoiseSource | None) -> Any:
        return make(*args, noise=noise, **kwargs)
    return factory


def _catalog() -> dict[str, tuple[Factory, list[Any]]]:
    m = SECURE_DEFAULT
    out: dict[str, tuple[Factory, list[Any]]] = {}
    for name, (counter, stream, _) in m.COUNTERS.items():
        out[f"counter {name}"] = (counter, list(stream))
    out["counter multidim"] = (lambda n: MultiDimensionalCounter.build(block_factory, 3, 1.0, noise=n),
                               [[1, 0, 2], [0, 0, 1], [1, 1, 1], [0.5, -1, 0], [2, 2, 2]])
    for data, (partition, batches) in m.BATCHES.items():
        twice = batches + batches  # 6 steps: insertions, deletions, an empty step, and the same again
        for name, make in m.PHDSTREAMS.items():
            out[f"phdstream {name} {data}"] = (_bind(lambda p, noise, make=make: make(p, noise), partition), twice)
        for cls in (PHDStreamTree, PHDStreamTreeWithCounters):
            out[f"phdstream {cls.__name__} {data}"] = (_bind(cls, partition, 1.0), _tree_inputs(partition, twice))
        for base in (OfflinePrivTreeOnStream, OfflinePrivTreeOnDifferential, InitPrivTreeThenCounters):
            out[f"phdstream {base.__name__} {data}"] = (_bind(base, partition, 1.0), twice)
    T, N = m.T_LONG, m.N_LONG
    for k, alphabet in ((1, 2), (2, 2), (2, 3)):
        X = random_matrix(N, T, seed=k, alphabet=alphabet)
        out[f"longitudinal fixed-window k={k} A={alphabet}"] = (
            _bind(FixedWindowSynthesizer, T, k, 1.0, beta=m.BETA) if alphabet == 2 else
            _bind(CategoricalFixedWindowSynthesizer, T, k, 1.0, alphabet, beta=m.BETA), [X[:, t] for t in range(T)])
    X = random_matrix(N, T, seed=3)
    out["longitudinal cumulative"] = (lambda n: CumulativeSynthesizer(T, 1.0, noise=n), [X[:, t] for t in range(T)])
    for d, eps in ((1, 2.0), (2, 2.0)):
        stream = list(make_stream("uniform", 12, d, seed=d))
        out[f"hypercube online d={d}"] = (_bind(OnlineSyntheticData, eps, d), stream)
    Q1, Q2, W2 = all_marginal_queries(m.DOM, 1), all_marginal_queries(m.DOM, 2), all_workloads(m.DOM, 2)
    total = TotalRule.public(m.BATCH)
    out["tabular streaming-mwem"] = (lambda n: StreamingMWEM(m.DOM, Q1, m.K, 1.0, total=total, noise=n),
                                     list(m.TAB_STREAM))
    out["tabular main marginals"] = (lambda n: MainAlgorithm(m.DOM, Q2, m.K, 1.0, total=total, noise=n),
                                     list(m.TAB_STREAM))
    out["tabular main workloads"] = (lambda n: MainAlgorithm(m.DOM, W2, m.K, 1.0, total=total, noise=n),
                                     list(m.TAB_STREAM))
    out["tabular offline-to-stream"] = (
        lambda n: OfflineToStream(m.DOM, offline_mwem, offline_claim(1.0, m.K, False, total),
                                  noise=n), list(m.TAB_STREAM))
    return out


CATALOG = _catalog()


# --- bitwise comparison of states and releases --------------------------------------------------------------

def differences(a: Any, b: Any, path: str = "", seen: set[tuple[int, int]] | None = None) -> str | None:
    """Where ``a`` and ``b`` differ (None if identical): same types, floats bit for bit, arrays byte for byte,
    dicts in the same order, objects attribute by attribute, functions by code and cells. Noise sources are
    compared by the checkpoint's noise state (generator state, tape so far)."""
    seen = set() if seen is None else seen
    if isinstance(a, BaseNoiseSource) and isinstance(b, BaseNoiseSource):
        same = checkpoint._noise_state(a) == checkpoint._noise_state(b)
        return None if same or type(a) is SecureNoise else f"{path}: noise state"
    if type(a) is not type(b):
        return f"{path}: {type(a).__name__} vs {type(b).__name__}"
    if isinstance(a, float):
        return None if a.hex() == b.hex() or (math.isnan(a) and math.isnan(b)) else f"{path}: {a!r} vs {b!r}"
    if isinstance(a, int | str | bool | type(None) | enum.Enum | np.generic | type | frozenset | set):
        return None if a == b else f"{path}: {a!r} vs {b!r}"
    if (id(a), id(b)) in seen:
        return None
    seen.add((id(a), id(b)))
    if isinstance(a, np.ndarray):
        same = (a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
                and a.flags.writeable == b.flags.writeable)
        return None if same else f"{path}: arrays"
    if isinstance(a, list | tuple):
        if len(a) != len(b):
            return f"{path}: length {len(a)} vs {len(b)}"
        return next((d for i, (x, y) in enumerate(zip(a, b, strict=True))
                     if (d := differences(x, y, f"{path}[{i}]", seen))), None)
    if isinstance(a, dict):
        if list(a) != list(b):
            return f"{path}: keys"
        return next((d for k in a if (d := differences(a[k], b[k], f"{path}[{k!r}]", seen))), None)
    if isinstance(a, types.FunctionType):
        if a.__code__ is not b.__code__:
            return f"{path}: code"
        cells = [[c.cell_contents for c in f.__closure__ or ()] for f in (a, b)]
        return differences(cells[0], cells[1], f"{path}.<cells>", seen)
    if isinstance(a, types.MethodType):
        return differences(a.__self__, b.__self__, path, seen) if a.__func__ is b.__func__ else f"{path}: method"
    if hasattr(a, "__dict__"):
        return differences(vars(a), vars(b), f"{path}.<{type(a).__name__}>", seen)
    return None if a == b else f"{path}: {a!r} vs {b!r}"


# --- resume == uninterrupted run ---------------------------------------------------------------------------

SEED = 2024
_REFERENCE: dict[str, tuple[list[Any], Tape, Any]] = {}


def reference(name: str) -> tuple[list[Any], Tape, Any]:
    """The uninterrupted seeded run of an algorithm: releases, tape, final object (computed once)."""
    if name not in _REFERENCE:
        factory, inputs = CATALOG[name]
        recorder = TapeRecorder(InsecureSeededNoise(SEED))
        alg = factory(recorder)
        releases = [alg.step(x) for x in inputs]
        _REFERENCE[name] = (releases, recorder.tape, alg)
    return _REFERENCE[name]


def resumed_run(name: str, cut: int, folder: Path, make_noise: Callable[[], NoiseSource]) -> tuple[list[Any], Any, Any]:
    """Steps 1..cut on ``make_noise()``, save to a file, load it onto a NEW ``make_noise()``, steps cut+1..n."""
    factory, inputs = CATALOG[name]
    alg = factory(make_noise())
    first = [alg.step(x) for x in inputs[:cut]]
    path = folder / "alg.ckpt"
    checkpoint.save(alg, path, functions=FUNCTIONS)
    del alg
    fresh = make_noise()
    resumed = checkpoint.load(path, fresh, expect_class=type(factory(InsecureZeroNoise())), functions=FUNCTIONS)
    rest = [resumed.step(x) for x in inputs[cut:]]
    return first + rest, resumed, fresh


@pytest.mark.parametrize("name", list(CATALOG))
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_seeded_resume_equals_the_uninterrupted_run(name: str, data: st.DataObject, tmp_path: Path) -> None:
    releases, tape, final = reference(name)
    cut = data.draw(st.integers(0, len(releases)), label="cut")
    got, resumed, recorder = resumed_run(name, cut, tmp_path, lambda: TapeRecorder(InsecureSeededNoise(SEED)))
    assert differences(releases, got) is None
    assert differences(vars(final), vars(resumed)) is None  # the whole state, including the releases it kept
    assert isinstance(recorder, TapeRecorder) and recorder.tape.dumps() == tape.dumps()  # the same draws


@pytest.mark.parametrize("name", list(CATALOG))
@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_replayed_resume_equals_the_uninterrupted_run(name: str, data: st.DataObject, tmp_path: Path) -> None:
    releases, tape, _ = reference(name)
    cut = data.draw(st.integers(0, len(releases)), label="cut")
    got, _, replay = resumed_run(name, cut, tmp_path, lambda: TapeReplay(tape))
    assert differences(releases, got) is None
    assert isinstance(replay, TapeReplay)
    replay.assert_exhausted()  # every site of the tape served exactly once across the two halves


# --- secure noise: nothing released is drawn again ----------------------------------------------------------

@pytest.mark.parametrize("name", list(CATALOG))
def test_secure_resume_draws_no_released_site_again(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                                   ) -> None:
    """On the real OpenDP source: every site (additive draws seen by the spy, the others counted in _draw) is drawn
    once across the save/load boundary, and the loaded object holds the releases made before the save."""
    factory, inputs = CATALOG[name]
    cut = len(inputs) // 2
    other_sites: list[str] = []
    real_draw = SecureNoise._draw

    def counting_draw(self: SecureNoise, site: str, kind: Any, params: Any) -> Any:
        other_sites.append(site)
        return real_draw(self, site, kind, params)

    monkeypatch.setattr(SecureNoise, "_draw", counting_draw)

    def sites(spy: SecureDoorSpy) -> Multiset[str]:
        return Multiset([*(s for door in spy.doors for s in door.sites), *other_sites])

    with SecureDoorSpy() as spy:
        alg = factory(None)
        for x in inputs[:cut]:
            alg.step(x)
        kept = list(getattr(alg, "releases", []))
        before = sites(spy)
        checkpoint.save(alg, tmp_path / "secure.ckpt", functions=FUNCTIONS)
        header = json.loads((tmp_path / "secure.ckpt").read_text(encoding="utf-8"))
        assert header["noise"] == {"kind": "secure"}  # a SecureNoise, and nothing random stored
        resumed = checkpoint.load(tmp_path / "secure.ckpt", functions=FUNCTIONS)  # noise=None: a new SecureNoise
        assert differences(kept, list(getattr(resumed, "releases", []))) is None  # released values in the state
        for x in inputs[cut:]:
            resumed.step(x)
        after = sites(spy) - before
    assert spy.violations() == []
    assert not set(before) & set(after) and max((before + after).values(), default=1) == 1
    assert sum(after.values()) > 0 or cut == len(inputs)


# --- refusals --------------------------------------------------------------------------------------------------

def _saved(tmp_path: Path, noise: NoiseSource | None = None) -> tuple[Path, SimpleCounter]:
    counter = SimpleCounter(0.5, 10, noise=InsecureSeededNoise(1) if noise is None else noise)
    counter.run([1, 0, 1])
    path = tmp_path / "c.ckpt"
    checkpoint.save(counter, path)
    return path, counter


def _rewrite(path: Path, change: Callable[[dict[str, Any]], None], *, rehash: bool = True) -> None:
    doc = json.loads(path.read_text(encoding="utf-8"))
    change(doc)
    if rehash:
        doc.pop("sha256")
        import hashlib

        doc["sha256"] = hashlib.sha256(checkpoint._canonical(doc).encode()).hexdigest()
    path.write_text(checkpoint._canonical(doc), encoding="utf-8")


def test_round_trip_continues_and_records_the_parameters(tmp_path: Path) -> None:
    path, counter = _saved(tmp_path)
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert doc["format"] == "dpstream-checkpoint" and doc["version"] == 1 and doc["dpstream"] == dpstream.__version__
    assert doc["class"] == "dpstream.counters.simple:SimpleCounter" and doc["params"] == {"epsilon": 0.5, "T": 10}
    assert doc["noise"]["kind"] == "seeded"
    noise = InsecureSeededNoise(99)
    loaded = checkpoint.load(path, noise, expect_class=SimpleCounter, expect_params={"epsilon": 0.5})
    assert loaded.releases == counter.releases and loaded.t == 3 and loaded.horizon == 10
    assert loaded.step(1) == counter.step(1)  # the generator state came from the file


def refusal_cases() -> dict[str, tuple[Callable[[Path], None], str]]:
    def truncate(p: Path) -> None:
        p.write_bytes(p.read_bytes()[: len(p.read_bytes()) // 2])

    def empty(p: Path) -> None:
        p.write_text("", encoding="utf-8")

    def not_utf8(p: Path) -> None:
        p.write_bytes(b"\xff\xfe\x00")

    def corrupt(p: Path) -> None:
        text = p.read_text(encoding="utf-8")
        i = text.index('"g":') + 5
        p.write_text(text[:i] + ("1" if text[i] != "1" else "2") + text[i + 1:], encoding="utf-8")

    return {
        "truncated": (truncate, "truncated"),
        "empty": (empty, "truncated"),
        "not utf-8": (not_utf8, "not a text file"),
        "corrupted": (corrupt, "checksum"),
        "foreign format": (lambda p: _rewrite(p, lambda d: d.update(format="dpstream-noise-tape")), "not a dpstream"),
        "other format version": (lambda p: _rewrite(p, lambda d: d.update(version=2)), "format version 2"),
        "other dpstream": (lambda p: _rewrite(p, lambda d: d.update(dpstream="0.0.1")), "dpstream 0.0.1"),
        "extra key": (lambda p: _rewrite(p, lambda d: d.update(extra=1)), "exactly the keys"),
        "a class outside dpstream": (lambda p: _rewrite(p, lambda d: d.update({"class": "evil_module_xyz:Evil"})),
                                     "dpstream's own modules"),
        "a function outside dpstream": (lambda p: _rewrite(p, lambda d: d["state"]["state"].update(
            g={"$func": "builtins:eval"})), "dpstream's own modules"),
        "a noise source as data": (lambda p: _rewrite(p, lambda d: d["state"]["state"].update(
            g={"$obj": "dpstream.noise:SecureNoise", "state": {}})), "not a dpstream data class"),
        "a forged closure": (lambda p: _rewrite(p, lambda d: d["state"]["state"].update(
            g={"$closure": "dpstream.counters.sparse:binary_mechanism.<locals>.<lambda>", "line": 1, "code": "0",
               "cells": [], "defaults": None, "kwdefaults": None})), "or no longer"),
        "an object array": (lambda p: _rewrite(p, lambda d: d["state"]["state"].update(
            g={"$ndarray": "", "dtype": "|O", "shape": [0], "writeable": True})), "plain numbers"),
        "a dangling reference": (lambda p: _rewrite(p, lambda d: d["state"]["state"].update(g={"$ref": 7})),
                                 "a reference to nothing"),
        "a broken generator state": (lambda p: _rewrite(p, lambda d: d["noise"].update(generator={"x": 1})),
                                     "invalid generator state"),
    }


@pytest.mark.parametrize("case", list(refusal_cases()))
def test_bad_checkpoints_are_refused_and_change_nothing(case: str, tmp_path: Path) -> None:
    path, _ = _saved(tmp_path)
    damage, message = refusal_cases()[case]
    damage(path)
    noise = InsecureSeededNoise(5)
    state = noise.generator_state()
    with pytest.raises(CheckpointError, match=message) as info:
        checkpoint.load(path, noise)
    assert info.value.field == "checkpoint" and isinstance(info.value, dpstream.errors.DPStreamInputError)
    assert noise.generator_state() == state  # the source is untouched
    assert "evil_module_xyz" not in sys.modules


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"expect_class": BlockCounter}, "not a BlockCounter"),
    ({"expect_params": {"epsilon": 1.0}}, "'epsilon' is 0.5, expected 1.0"),
    ({"expect_params": {"B": 2}}, "'B' is not recorded"),
    ({"noise": None}, "saved with a InsecureSeededNoise"),
    ({"noise": SecureNoise()}, "saved with a InsecureSeededNoise"),
])
def test_mismatched_checkpoints_are_refused(kwargs: dict[str, Any], message: str, tmp_path: Path) -> None:
    path, _ = _saved(tmp_path)
    kwargs = {"noise": InsecureSeededNoise(5), **kwargs}
    state = kwargs["noise"].generator_state() if isinstance(kwargs["noise"], InsecureSeededNoise) else None
    with pytest.raises(CheckpointError, match=message):
        checkpoint.load(path, **kwargs)
    if state is not None:
        assert kwargs["noise"].generator_state() == state


def test_a_replay_of_another_tape_is_refused_and_untouched(tmp_path: Path) -> None:
    recorder = TapeRecorder(InsecureSeededNoise(3))
    SimpleCounter(1.0, noise=recorder).run([1, 0, 1, 1])
    replay = TapeReplay(recorder.tape)
    counter = SimpleCounter(1.0, noise=replay)
    counter.run([1, 0])
    checkpoint.save(counter, tmp_path / "r.ckpt")
    other = TapeRecorder(InsecureSeededNoise(4))
    SimpleCounter(1.0, noise=other).run([1, 0, 1, 1])
    wrong = TapeReplay(other.tape)
    with pytest.raises(CheckpointError, match="another tape"):
        checkpoint.load(tmp_path / "r.ckpt", wrong)
    assert wrong.used_sites == frozenset()
    right = TapeReplay(recorder.tape)
    loaded = checkpoint.load(tmp_path / "r.ckpt", right)
    assert right.used_sites == replay.used_sites
    assert loaded.run([1, 1]) == SimpleCounter(1.0, noise=TapeReplay(recorder.tape)).run([1, 0, 1, 1])[2:]
    right.assert_exhausted()


def test_unsaveable_objects_are_refused_with_their_path(tmp_path: Path) -> None:
    counter = MultiDimensionalCounter.build(lambda e, n: BlockCounter(e, 2, noise=n), 2, 1.0,
                                            noise=InsecureSeededNoise(0))
    checkpoint.save(counter, tmp_path / "ok.ckpt")  # the factory is not kept: nothing to name
    foreign = Path("somewhere")  # any object that is not data

    class Holder(SimpleCounter):
        pass

    with pytest.raises(CheckpointError, match="not data dpstream can save"):
        checkpoint.save(Holder(1.0, noise=InsecureSeededNoise(0)), tmp_path / "x.ckpt")
    odd = SimpleCounter(1.0, noise=InsecureSeededNoise(0))
    odd.extra = foreign  # type: ignore[attr-defined]
    with pytest.raises(CheckpointError, match=r"state\.extra"):
        checkpoint.save(odd, tmp_path / "x.ckpt")
    odd.extra = lambda: 1  # type: ignore[attr-defined]
    with pytest.raises(CheckpointError, match="name it"):
        checkpoint.save(odd, tmp_path / "x.ckpt")
    odd.extra = InsecureSeededNoise(1)  # type: ignore[attr-defined]
    with pytest.raises(CheckpointError, match="a second noise source"):
        checkpoint.save(odd, tmp_path / "x.ckpt")
    assert not (tmp_path / "x.ckpt").exists()
    with pytest.raises(CheckpointError, match="needs your function"):
        sparse = SECURE_DEFAULT.COUNTERS["inhomogeneous-sparse"][0](InsecureSeededNoise(0))
        checkpoint.save(sparse, tmp_path / "s.ckpt", functions=FUNCTIONS)
        checkpoint.load(tmp_path / "s.ckpt", InsecureSeededNoise(0))


def test_writes_are_atomic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path, counter = _saved(tmp_path)
    before = path.read_bytes()
    counter.step(1)

    def crash(src: str, dst: str) -> None:
        raise OSError("disk full")

    monkeypatch.setattr("os.replace", crash)
    with pytest.raises(OSError, match="disk full"):
        checkpoint.save(counter, path)
    assert path.read_bytes() == before and [p.name for p in tmp_path.iterdir()] == ["c.ckpt"]


def test_values_round_trip_exactly() -> None:
    """Floats bit for bit (-0.0, inf, nan, subnormals), big ints, numpy scalars and arrays (dtype, shape, read-only),
    tuples as dict keys, sets, aliasing and cycles."""
    counter = SimpleCounter(1.0, noise=InsecureZeroNoise())
    shared = [1, 2]
    cycle: list[Any] = []
    cycle.append(cycle)
    frozen = np.arange(6, dtype=np.int16).reshape(2, 3)
    frozen.setflags(write=False)
    counter.extra = {  # type: ignore[attr-defined]
        "floats": [-0.0, math.inf, -math.inf, 5e-324, 0.1 + 0.2],
        "nan": math.nan, "big": 2**200, "np": (np.float32(1.5), np.int64(-3), np.bool_(True)),
        "arrays": [frozen, np.array([[True, False]]), np.array([1 + 2j]), np.zeros((0, 3))],
        (1, (2, 3)): "tuple key", "set": {1, 2, 3}, "a": shared, "b": shared, "cycle": cycle,
    }
    loaded = checkpoint.loads(checkpoint.dumps(counter), InsecureZeroNoise())
    x = loaded.extra
    assert differences(vars(counter)["extra"], x) is None
    assert math.isnan(x["nan"]) and math.copysign(1.0, x["floats"][0]) == -1.0
    assert x["a"] is x["b"] and x["cycle"][0] is x["cycle"]
    assert not x["arrays"][0].flags.writeable and x["arrays"][1].flags.writeable


def test_the_docs_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The first example of docs/checkpoint.md, as printed (secure noise, a file in the working folder)."""
    text = (Path(__file__).resolve().parents[2] / "docs" / "checkpoint.md").read_text(encoding="utf-8")
    example = text.split("```python\n")[1].split("```")[0].replace("# ... later, in a new process:", "")
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, Any] = {}
    exec(compile(example, "docs/checkpoint.md", "exec"), namespace)
    assert namespace["counter"].t == 4 and len(namespace["counter"].releases) == 4
    assert (tmp_path / "counter.ckpt").stat().st_mode & 0o777 == 0o600
