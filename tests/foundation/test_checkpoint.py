"""Checkpoint and resume (issue 16, part 2; issue 23, "Checkpoints"): ``dpstream.checkpoint``.

* Every streaming algorithm of every family (the enumeration of ``test_secure_default.py``), for random
  cut points (hypothesis): a seeded run of n steps equals a run to the cut, saved to a FILE, loaded into a
  fresh source (its state comes from the file) and continued -- bit for bit: the releases, the releases
  the loaded object kept, its whole final state (every attribute: the documented state is complete), and the
  tape recorded around the seeded source. The same with a tape replay.
* Under secure noise (OpenDP, spied): no site is drawn twice across the save/load boundary, and the
  released values are in the loaded state.
* Every refusal (truncated, corrupted, foreign format, unknown or newer state, a state the algorithm's rules
  reject -- negative counts, t past T, a scale inconsistent with epsilon, a component whose parameters are not
  its owner's --, mismatched class, parameters or noise, unsafe names) raises ``CheckpointError`` and changes
  nothing. Noise policy, MAC, save and load failures: test_checkpoint_security.py; fixtures of earlier versions
  and migrations: test_checkpoint_fixtures.py; the documented states: test_checkpoint_states.py.
"""

from __future__ import annotations

import dataclasses
import enum
import hashlib
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
from dpstream.checkpoint import CheckpointError, engine
from dpstream.checkpoint.sources import noise_state
from dpstream.counters import (
    BinaryTreeCounter,
    BlockCounter,
    Counter,
    HybridCounter,
    MultiDimensionalCounter,
    SimpleCounter,
    SparseCounter,
)
from dpstream.counters.sparse import binary_mechanism
from dpstream.hypercube.online import OnlineSyntheticData
from dpstream.hypercube.streams import make_stream
from dpstream.insecure import InsecureSeededNoise, InsecureZeroNoise, TapeRecorder, TapeReplay
from dpstream.longitudinal.categorical import CategoricalFixedWindowSynthesizer
from dpstream.longitudinal.cumulative import CumulativeSynthesizer
from dpstream.longitudinal.fixed_window import FixedWindowSynthesizer
from dpstream.longitudinal.generators import random_matrix
from dpstream.noise import BaseNoiseSource, NoiseSource, SecureNoise, scoped
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
        same = noise_state(a) == noise_state(b)
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


def test_the_resume_comparison_catches_an_incomplete_state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A documented state that leaves out a variable (here the hybrid counter's pending true sum) is caught by the
    comparison the property tests above make: the resumed run differs from the uninterrupted one."""
    hybrid = next(s for s in checkpoint.specs() if s.cls is HybridCounter)
    broken = dataclasses.replace(hybrid, variables=tuple(f for f in hybrid.variables if f.name != "pending"))
    current = checkpoint.specs()
    monkeypatch.setattr(engine, "specs", lambda: tuple(broken if s is hybrid else s for s in current))
    releases, _, final = reference("counter hybrid")
    got, resumed, _ = resumed_run("counter hybrid", 10, tmp_path, lambda: TapeRecorder(InsecureSeededNoise(SEED)))
    assert differences(releases, got) is not None or differences(vars(final), vars(resumed)) is not None


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


# --- refusals: every bad file raises CheckpointError and changes nothing ---------------------------------------

SAVED: dict[str, tuple[Callable[[NoiseSource], Any], list[Any]]] = {
    "simple": (lambda n: SimpleCounter(0.5, 10, noise=n), [1, 0, 1]),
    "binary": (lambda n: BinaryTreeCounter(1.0, 8, noise=n), [1, 0, 1]),
    "hybrid": (lambda n: HybridCounter(1.0, noise=n), [1, 0, 1, 1, 0, 1]),
    "sparse": (lambda n: SparseCounter(50.0, 16, noise=n), [1] * 6),
    "inner-subroutine": (lambda n: SparseCounter(1.0, 8, noise=n, subroutine=block_factory), [1, 0]),
    "phdstream": (CATALOG["phdstream phdstream-alg1 hypercube"][0],
                  CATALOG["phdstream phdstream-alg1 hypercube"][1][:3]),
    "window": (CATALOG["longitudinal fixed-window k=2 A=2"][0],
               CATALOG["longitudinal fixed-window k=2 A=2"][1][:4]),
    "cumulative": (CATALOG["longitudinal cumulative"][0], CATALOG["longitudinal cumulative"][1][:3]),
    "online": (CATALOG["hypercube online d=2"][0], CATALOG["hypercube online d=2"][1][:6]),
    "tabular": (CATALOG["tabular main marginals"][0], CATALOG["tabular main marginals"][1][:3]),
}
"""Algorithms saved a few steps into a seeded run, for the refusal cases below."""


def saved(tmp_path: Path, which: str = "simple") -> Path:
    make, inputs = SAVED[which]
    alg = make(InsecureSeededNoise(1))
    for x in inputs:
        alg.step(x)
    path = tmp_path / f"{which}.ckpt"
    checkpoint.save(alg, path, functions=FUNCTIONS)
    return path


def rewrite(path: Path, change: Callable[[dict[str, Any]], None], *, rehash: bool = True) -> None:
    """Edit the document; with ``rehash`` recompute its sha256 as docs/checkpoint.md describes (what anyone can do)."""
    doc = json.loads(path.read_text(encoding="utf-8"))
    change(doc)
    if rehash:
        doc.pop("sha256", None)
        doc["sha256"] = hashlib.sha256(json.dumps(doc, separators=(",", ":"), allow_nan=False, ensure_ascii=True)
                                       .encode("utf-8")).hexdigest()
    path.write_text(json.dumps(doc, separators=(",", ":")), encoding="utf-8")


def param(name: str, value: Any) -> Callable[[dict[str, Any]], None]:
    """Edit a parameter of the root algorithm in the header and in the state (consistently)."""
    def change(doc: dict[str, Any]) -> None:
        doc["params"][name] = value
        doc["state"]["params"][name] = value
    return change


def var(name: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(doc: dict[str, Any]) -> None:
        doc["state"]["variables"][name] = value
    return change


def nested(path: Sequence[str | int], value: Any) -> Callable[[dict[str, Any]], None]:
    """Set ``doc["state"]["variables"][path...]``."""
    def change(doc: dict[str, Any]) -> None:
        node: Any = doc["state"]["variables"]
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value
    return change


def _truncate(p: Path) -> None:
    p.write_bytes(p.read_bytes()[: len(p.read_bytes()) // 2])


def _corrupt(p: Path) -> None:
    text = p.read_text(encoding="utf-8")
    i = text.index('"g":') + 5
    p.write_text(text[:i] + ("1" if text[i] != "1" else "2") + text[i + 1:], encoding="utf-8")


def _state_key(key: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(doc: dict[str, Any]) -> None:
        doc["state"][key] = value
    return change


def _rename(doc: dict[str, Any]) -> None:
    doc["algorithm"] = doc["state"]["algorithm"] = "EvilCounter"


def _extra_variable(doc: dict[str, Any]) -> None:
    doc["state"]["variables"]["extra"] = 1


def _missing_variable(doc: dict[str, Any]) -> None:
    del doc["state"]["variables"]["g"]


def _wrong_component(doc: dict[str, Any]) -> None:
    doc["state"]["variables"]["B_k"]["algorithm"] = "SimpleCounter"


def _point_outside(doc: dict[str, Any]) -> None:
    doc["state"]["variables"]["f"][0][0] = [1.5, 0.5]


def _online_depth(doc: dict[str, Any]) -> None:
    doc["state"]["variables"]["r"] += 1


Change = Callable[[dict[str, Any]], None]
REFUSALS: dict[str, tuple[str, Callable[[Path], None] | Change, str]] = {
    # the file
    "truncated": ("simple", _truncate, "truncated"),
    "empty": ("simple", lambda p: p.write_text("", encoding="utf-8"), "truncated"),
    "not utf-8": ("simple", lambda p: p.write_bytes(b"\xff\xfe\x00"), "not a text file"),
    "corrupted": ("simple", _corrupt, "checksum mismatch"),
    "foreign format": ("simple", lambda d: d.update(format="dpstream-noise-tape"), "not a dpstream-checkpoint"),
    "other format version": ("simple", lambda d: d.update(version=2), "format version 2"),
    "extra key": ("simple", lambda d: d.update(extra=1), "exactly the keys"),
    "the object graph of an unreleased version": ("simple", lambda d: d.update({"class": "x", "algorithm": None}),
                                                  "saved its object graph"),
    "header params edited alone": ("simple", lambda d: d["params"].update(epsilon=5.0),
                                   "header's algorithm and params"),
    "state params edited alone": ("simple", lambda d: d["state"]["params"].update(epsilon=5.0),
                                  "header's algorithm and params"),
    "unknown algorithm": ("simple", _rename, "no algorithm state this dpstream knows"),
    "newer state version": ("simple", _state_key("state_version", 99), "written by a later dpstream"),
    "state version not an integer": ("simple", _state_key("state_version", "1"), "must be an integer >= 1"),
    "broken generator state": ("simple", lambda d: d["noise"].update(generator={"x": 1}), "invalid generator state"),
    # the state's own rules
    "extra variable": ("simple", _extra_variable, "has the variables"),
    "missing variable": ("simple", _missing_variable, "has the variables"),
    "negative t": ("simple", var("t", -1), r"variables\.t: must be an integer >= 0"),
    "t past T": ("simple", var("t", 11), "past the horizon T = 10"),
    "t and releases disagree": ("simple", var("t", 2), "holds 3 releases for t = 2"),
    "t as text": ("simple", var("t", "3"), "must be an integer"),
    "g not the last release": ("simple", var("g", 123.5), r"g\(t\) must be the last release"),
    "non-finite g": ("simple", var("g", "inf"), "must be a finite real"),
    "negative epsilon": ("simple", param("epsilon", -1.0), r"params\.epsilon: must be a finite real > 0"),
    "zero horizon": ("simple", param("T", 0), r"params\.T: must be an integer >= 1"),
    "scale inconsistent with epsilon": ("binary", lambda d: d["state"]["derived"].update(scale=99.0),
                                        r"derived\.scale: is 99\.0 in the file, but its parameters give 4\.0"),
    "p-sums of another length": ("binary", nested(["alpha_hat"], [1.0]), "needs floor"),
    "component with an edited epsilon": ("hybrid", nested(["B_k", "params", "epsilon"], 50.0),
                                         r"B_k\.params\.epsilon: is 50\.0 in the file, but its owner makes 0\.5"),
    "component of another algorithm": ("hybrid", _wrong_component, "the owner holds a BinaryTreeCounter here"),
    "interval k edited": ("hybrid", var("k", 5), r"B_k\.params\.T"),
    "negative segment count": ("sparse", var("N", -1), r"variables\.N: must be an integer >= 0"),
    "segments and A_sub disagree": ("sparse", var("segments_ended", 0), "segments have ended"),
    "a function outside dpstream": ("inner-subroutine", param("subroutine", {"dpstream": "evil_module_xyz:run"}),
                                    "dpstream's own modules"),
    "a builtin named as dpstream's": ("inner-subroutine", param("subroutine", {"dpstream": "builtins:eval"}),
                                      "dpstream's own modules"),
    "an inner function as a parameter": ("inner-subroutine", param("subroutine", {"inner": "x:y"}),
                                         "only its owner can make it again"),
    "a function of another form": ("inner-subroutine", param("subroutine", {"eval": "1"}), "a function is"),
    "a point outside Omega": ("phdstream", _point_outside, r"f: points: must lie in the domain"),
    "a count of zero": ("phdstream", nested(["f", 0, 1], 0), "must be an integer >= 1"),
    "tree and stream out of step": ("phdstream", nested(["tree", "variables", "t"], 2), "holds 3 releases for t = 2"),
    "a negative target count": ("window", nested(["p_history", 0, "values", 0], -1), "counts >= 0"),
    "an array of the wrong size": ("window", nested(["p_history", 0, "shape"], [3]), "holds 4 values for shape"),
    "inconsistent monotone counts": ("cumulative", nested(["S_hat", 1], 0), "S\\^"),
    "a depth the time does not have": ("online", _online_depth, "depth"),
    "a negative record count": ("tabular", nested(["f", 0, 1], -1), "must be an integer >= 1"),
    "a wrong dataset size": ("tabular", var("size", 999), r"\|f_t\| is the sum of the counts"),
}


@pytest.mark.parametrize("case", list(REFUSALS))
def test_bad_checkpoints_are_refused_and_change_nothing(case: str, tmp_path: Path) -> None:
    which, damage, message = REFUSALS[case]
    path = saved(tmp_path, which)
    if damage.__code__.co_varnames[:1] == ("p",):
        damage(path)  # type: ignore[arg-type]
    else:
        rewrite(path, damage)  # type: ignore[arg-type]
    noise = InsecureSeededNoise(5)
    state = noise.generator_state()
    with pytest.raises(CheckpointError, match=message) as info:
        checkpoint.load(path, noise, functions=FUNCTIONS)
    assert info.value.field == "checkpoint" and isinstance(info.value, dpstream.errors.DPStreamInputError)
    assert noise.generator_state() == state  # the source is untouched
    assert "evil_module_xyz" not in sys.modules


def test_the_refusals_fire_on_edits_only(tmp_path: Path) -> None:
    """The unedited files of the refusal cases load (so each refusal above is the edit's doing)."""
    for which in SAVED:
        path = saved(tmp_path, which)
        rewrite(path, lambda d: None)  # re-sealed as the cases are
        checkpoint.load(path, InsecureSeededNoise(5), functions=FUNCTIONS)


def test_round_trip_continues_and_records_the_state(tmp_path: Path) -> None:
    path = saved(tmp_path)
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert list(doc) == ["format", "version", "dpstream", "algorithm", "params", "origin", "noise", "state", "sha256"]
    assert doc["format"] == "dpstream-checkpoint" and doc["version"] == 1 and doc["dpstream"] == dpstream.__version__
    assert doc["algorithm"] == "SimpleCounter" and doc["params"] == {"epsilon": 0.5, "T": 10} and doc["origin"] is None
    assert doc["noise"]["kind"] == "seeded"
    state = doc["state"]
    assert state["algorithm"] == "SimpleCounter" and state["state_version"] == 1 and state["derived"] == {}
    counter = SimpleCounter(0.5, 10, noise=InsecureSeededNoise(1))
    counter.run([1, 0, 1])
    assert state["variables"] == {"t": 3, "g": counter.g, "releases": counter.releases}
    loaded = checkpoint.load(path, InsecureSeededNoise(99), expect_class=SimpleCounter, expect_params={"epsilon": 0.5})
    assert loaded.releases == counter.releases and loaded.t == 3 and loaded.horizon == 10
    assert loaded.step(1) == counter.step(1)  # the generator state came from the file


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"expect_class": BlockCounter}, "not a BlockCounter"),
    ({"expect_params": {"epsilon": 1.0}}, "'epsilon' is 0.5, expected 1.0"),
    ({"expect_params": {"T": None}}, "'T' is 10, expected None"),
    ({"expect_params": {"B": 2}}, "'B' is not recorded"),
    ({"noise": None}, "saved with a InsecureSeededNoise"),
    ({"noise": SecureNoise()}, "saved with a InsecureSeededNoise"),
    ({"noise": InsecureZeroNoise()}, "saved with a InsecureSeededNoise"),
])
def test_mismatched_checkpoints_are_refused(kwargs: dict[str, Any], message: str, tmp_path: Path) -> None:
    path = saved(tmp_path)
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

    class Holder(SimpleCounter):
        pass

    with pytest.raises(CheckpointError, match="has no documented checkpoint state"):
        checkpoint.save(Holder(1.0, noise=InsecureSeededNoise(0)), tmp_path / "x.ckpt")
    with pytest.raises(CheckpointError, match="no documented checkpoint state"):
        checkpoint.save(Path("not an algorithm"), tmp_path / "x.ckpt")
    with pytest.raises(CheckpointError, match=r"state\.params\.subroutine: .* name it"):
        checkpoint.save(SparseCounter(1.0, 8, noise=InsecureSeededNoise(0),
                                      subroutine=lambda e, n: block_factory(e, n)), tmp_path / "x.ckpt")
    with pytest.raises(CheckpointError, match="made inside another object"):
        checkpoint.save(SparseCounter(1.0, 8, noise=InsecureSeededNoise(0), subroutine=binary_mechanism(8)),
                        tmp_path / "x.ckpt")
    mixed = MultiDimensionalCounter([SimpleCounter(1.0, noise=scoped(InsecureSeededNoise(0), "a")),
                                     SimpleCounter(1.0, noise=scoped(InsecureSeededNoise(1), "b"))])
    with pytest.raises(CheckpointError, match="second noise source"):
        checkpoint.save(mixed, tmp_path / "x.ckpt")
    assert not (tmp_path / "x.ckpt").exists()
    inhomogeneous = SECURE_DEFAULT.COUNTERS["inhomogeneous-sparse"][0](InsecureSeededNoise(0))
    with pytest.raises(CheckpointError, match="give each function one name"):
        checkpoint.save(inhomogeneous, tmp_path / "s.ckpt", functions={"a": block_factory, "b": block_factory})
    checkpoint.save(inhomogeneous, tmp_path / "s.ckpt", functions=FUNCTIONS)
    with pytest.raises(CheckpointError, match="needs your function 'flat-budget'"):
        checkpoint.load(tmp_path / "s.ckpt", InsecureSeededNoise(0))


def test_floats_round_trip_bit_for_bit() -> None:
    """-0.0, subnormals, the last bits of 0.1 + 0.2 and huge values come back as the same doubles."""
    counter = SimpleCounter(1.0, noise=InsecureZeroNoise())
    values = [-0.0, 5e-324, 0.1 + 0.2, 1.7976931348623157e308, -2.5e-310]
    counter.releases, counter.t, counter.g = list(values), len(values), values[-1]
    loaded = checkpoint.loads(checkpoint.dumps(counter), InsecureZeroNoise())
    assert [v.hex() for v in loaded.releases] == [v.hex() for v in values] and loaded.g.hex() == values[-1].hex()


def test_the_docs_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The first example of docs/checkpoint.md, as printed (secure noise, a file in the working folder)."""
    text = (Path(__file__).resolve().parents[2] / "docs" / "checkpoint.md").read_text(encoding="utf-8")
    example = text.split("```python\n")[1].split("```")[0].replace("# ... later, in a new process:", "")
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, Any] = {}
    exec(compile(example, "docs/checkpoint.md", "exec"), namespace)
    assert namespace["counter"].t == 4 and len(namespace["counter"].releases) == 4
    assert (tmp_path / "counter.ckpt").stat().st_mode & 0o777 == 0o600
