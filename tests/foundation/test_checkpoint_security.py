"""Checkpoints and an adversary, a careless caller or a full disk (issue 23, "Checkpoints").

* Noise: a secure checkpoint is resumed on secure noise only; every insecure source (seeded, zero, scripted, tape
  recorder and replay, the conformance wire, a source of your own) is refused unless ``allow_insecure=True``; an
  insecure checkpoint is not resumed on secure noise (its releases so far are not private).
* ``expect_params`` is compared with the rebuilt algorithm itself: an epsilon edited in the state (the sha256
  recomputed as docs/checkpoint.md describes it) does not pass ``expect_params={"epsilon": 1.0}``, wherever it is
  edited; the rebuilt object is shown to carry the edit (what is checked is the object, not the header).
* The MAC: a key at save is required at load; a wrong key, an edit, a removed MAC, a missing key are refused.
* ``save`` and ``load`` report file-system failures as ``CheckpointError`` naming the path, leave no temporary
  file, and keep the old checkpoint.
* A checkpoint written by another dpstream version loads (its state versions are known).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from dpstream import catalog, checkpoint
from dpstream.checkpoint import CheckpointError
from dpstream.conformance.serve import WireNoise
from dpstream.counters import HybridCounter, SimpleCounter
from dpstream.insecure import InsecureSeededNoise, InsecureZeroNoise, ScriptedNoise, TapeRecorder, TapeReplay
from dpstream.noise import NoiseSource, SecureNoise, scoped
from dpstream.tape import Tape


class YourOwnSource(InsecureSeededNoise):
    """A source of the caller's own (here a seeded one under another class name): not SecureNoise."""


def _tape() -> Tape:
    recorder = TapeRecorder(InsecureSeededNoise(0))
    SimpleCounter(1.0, noise=recorder).run([1, 0, 1, 1, 0, 1])
    return recorder.tape


INSECURE: dict[str, Callable[[], NoiseSource]] = {
    "seeded": lambda: InsecureSeededNoise(0),
    "zero": InsecureZeroNoise,
    "scripted": lambda: ScriptedNoise({}),
    "tape recorder around secure noise": lambda: TapeRecorder(SecureNoise()),
    "tape replay": lambda: TapeReplay(_tape()),
    "wire": lambda: WireNoise(lambda request: {"value": 0.0}),
    "your own": lambda: YourOwnSource(0),
}


def secure_checkpoint(tmp_path: Path) -> Path:
    counter = SimpleCounter(1.0, noise=SecureNoise())
    counter.run([1, 0, 1])
    checkpoint.save(counter, tmp_path / "secure.ckpt")
    return tmp_path / "secure.ckpt"


@pytest.mark.parametrize("source", list(INSECURE))
def test_a_secure_checkpoint_refuses_insecure_noise(source: str, tmp_path: Path) -> None:
    path = secure_checkpoint(tmp_path)
    with pytest.raises(CheckpointError, match=r"saved with secure noise .* allow_insecure=True"):
        checkpoint.load(path, INSECURE[source]())


@pytest.mark.parametrize("source", list(INSECURE))
def test_allow_insecure_is_the_explicit_opt_in(source: str, tmp_path: Path) -> None:
    path = secure_checkpoint(tmp_path)
    noise = INSECURE[source]()
    counter = checkpoint.load(path, noise, allow_insecure=True)
    assert counter.noise is noise and counter.t == 3
    if source != "wire":
        counter.step(1)  # continues on the source it was given


def test_a_secure_checkpoint_continues_on_secure_noise(tmp_path: Path) -> None:
    path = secure_checkpoint(tmp_path)
    assert type(checkpoint.load(path).noise) is SecureNoise  # noise=None: a fresh SecureNoise
    mine = SecureNoise()
    assert checkpoint.load(path, mine).noise is mine
    view = scoped(mine, "a scope")  # a scoped view of secure noise draws secure noise
    assert checkpoint.load(path, view).noise is view
    with pytest.raises(CheckpointError, match="allow_insecure=True"):
        checkpoint.load(path, scoped(InsecureSeededNoise(0), "a scope"))
    with pytest.raises(CheckpointError, match="allow_insecure must be True or False"):
        checkpoint.load(path, mine, allow_insecure="yes")  # type: ignore[arg-type]


def test_an_insecure_checkpoint_is_not_continued_on_secure_noise(tmp_path: Path) -> None:
    counter = SimpleCounter(1.0, noise=InsecureSeededNoise(3))
    counter.run([1, 0])
    checkpoint.save(counter, tmp_path / "seeded.ckpt")
    for noise in (None, SecureNoise()):
        with pytest.raises(CheckpointError, match="insecure noise, so continuing with any other source"):
            checkpoint.load(tmp_path / "seeded.ckpt", noise)
    with pytest.raises(CheckpointError, match="saved with a InsecureSeededNoise"):  # the opt-in is not about this
        checkpoint.load(tmp_path / "seeded.ckpt", SecureNoise(), allow_insecure=True)
    assert checkpoint.load(tmp_path / "seeded.ckpt", InsecureSeededNoise(0)).step(1) == counter.step(1)


# --- expect_params against the rebuilt algorithm ------------------------------------------------------------------

def _reseal(path: Path, change: Callable[[dict[str, Any]], None]) -> None:
    """Edit the file and recompute its sha256 as docs/checkpoint.md describes it."""
    doc = json.loads(path.read_text(encoding="utf-8"))
    change(doc)
    doc.pop("sha256")
    body = json.dumps(doc, separators=(",", ":"), allow_nan=False, ensure_ascii=True)
    doc["sha256"] = hashlib.sha256(body.encode("utf-8")).hexdigest()
    path.write_text(json.dumps(doc, separators=(",", ":")), encoding="utf-8")


def _every(key: str, value: Any) -> Callable[[dict[str, Any]], None]:
    """Set ``key`` everywhere in the document (the header, the state, every component)."""
    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for k in node:
                if k == key:
                    node[k] = value
                else:
                    walk(node[k])
        elif isinstance(node, list):
            for item in node:
                walk(item)
    return walk


def _state_only(doc: dict[str, Any]) -> None:
    doc["state"]["params"]["epsilon"] = 5.0


def _header_and_state(doc: dict[str, Any]) -> None:
    doc["params"]["epsilon"] = doc["state"]["params"]["epsilon"] = 5.0


EDITS = {"the state only": _state_only, "the header and the state": _header_and_state,
         "every epsilon": _every("epsilon", 5.0)}


@pytest.mark.parametrize("where", list(EDITS))
def test_an_edited_epsilon_does_not_pass_expect_params(where: str, tmp_path: Path) -> None:
    counter = SimpleCounter(1.0, noise=SecureNoise())
    counter.run([1, 0, 1])
    path = tmp_path / "c.ckpt"
    checkpoint.save(counter, path)
    assert checkpoint.load(path, expect_params={"epsilon": 1.0}).epsilon == 1.0  # unedited: passes
    _reseal(path, EDITS[where])
    with pytest.raises(CheckpointError):
        checkpoint.load(path, expect_params={"epsilon": 1.0})
    if where != "the state only":  # a consistent edit loads: what expect_params checked is the object's epsilon
        assert checkpoint.load(path).epsilon == 5.0
        with pytest.raises(CheckpointError, match=r"parameter 'epsilon' is 5\.0, expected 1\.0"):
            checkpoint.load(path, expect_params={"epsilon": 1.0})


def test_an_edited_component_epsilon_is_refused(tmp_path: Path) -> None:
    """Edited everywhere, the hybrid counter's epsilon rebuilds B_k with eps/2 = 2.5, not the file's 5.0."""
    counter = HybridCounter(1.0, noise=SecureNoise())
    counter.run([1, 0, 1, 1, 0, 1])
    checkpoint.save(counter, tmp_path / "h.ckpt")
    _reseal(tmp_path / "h.ckpt", _every("epsilon", 5.0))
    with pytest.raises(CheckpointError, match=r"B_k\.params\.epsilon: is 5\.0 in the file, but its owner makes 2\.5"):
        checkpoint.load(tmp_path / "h.ckpt")


def test_expect_params_reads_the_catalog_parameters_too(tmp_path: Path) -> None:
    alg = catalog.entry("001-alg5").make({"d": 2, "D": 3, "fanout": 2, "epsilon": 2.0, "theta": 1.0,
                                          "lambda_rule": "general"}, SecureNoise())
    checkpoint.save(alg, tmp_path / "p.ckpt")
    assert checkpoint.load(tmp_path / "p.ckpt", expect_params={"epsilon": 2.0, "D": 3}).t == 0
    with pytest.raises(CheckpointError, match=r"parameter 'epsilon' is 2\.0, expected 1\.0"):
        checkpoint.load(tmp_path / "p.ckpt", expect_params={"epsilon": 1.0})
    _reseal(tmp_path / "p.ckpt", lambda d: d["origin"]["params"].update(epsilon=4.0))
    with pytest.raises(CheckpointError, match=r"the header's algorithm and params differ|is .* in the file"):
        checkpoint.load(tmp_path / "p.ckpt")
    _reseal(tmp_path / "p.ckpt", lambda d: d["origin"].update(catalog="999-alg1"))
    with pytest.raises(CheckpointError, match="the catalog cannot build '999-alg1'"):
        checkpoint.load(tmp_path / "p.ckpt")


# --- the MAC ------------------------------------------------------------------------------------------------------

KEY = b"a key of the caller's"


def authenticated(tmp_path: Path) -> Path:
    counter = SimpleCounter(1.0, noise=SecureNoise())
    counter.run([1, 0, 1])
    checkpoint.save(counter, tmp_path / "mac.ckpt", key=KEY)
    return tmp_path / "mac.ckpt"


def test_a_mac_verifies_with_its_key(tmp_path: Path) -> None:
    path = authenticated(tmp_path)
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert list(doc)[-2:] == ["mac", "sha256"] and len(doc["mac"]) == 64
    assert checkpoint.load(path, key=KEY).t == 3
    assert checkpoint.load(path, key=KEY.decode()).t == 3  # text keys are their UTF-8 bytes


@pytest.mark.parametrize(("case", "message"), [
    ("wrong key", "MAC mismatch"),
    ("no key", r"authenticated .* pass the key"),
    ("edited, sha256 recomputed", "MAC mismatch"),
    ("mac removed, sha256 recomputed", "has no MAC"),
    ("mac forged as another file's", "MAC mismatch"),
])
def test_a_mac_refuses(case: str, message: str, tmp_path: Path) -> None:
    path = authenticated(tmp_path)
    key: bytes | None = KEY
    if case == "wrong key":
        key = b"another key"
    elif case == "no key":
        key = None
    elif case == "edited, sha256 recomputed":
        _reseal(path, _every("epsilon", 5.0))
    elif case == "mac removed, sha256 recomputed":
        _reseal(path, lambda d: d.pop("mac"))
    else:
        other = SimpleCounter(1.0, noise=SecureNoise())
        other.run([1, 1, 1])
        forged = json.loads(checkpoint.dumps(other, key=b"another key"))["mac"]
        _reseal(path, lambda d: d.update(mac=forged))
    with pytest.raises(CheckpointError, match=message):
        checkpoint.load(path, key=key)


def test_a_key_requires_a_mac(tmp_path: Path) -> None:
    counter = SimpleCounter(1.0, noise=SecureNoise())
    checkpoint.save(counter, tmp_path / "plain.ckpt")
    with pytest.raises(CheckpointError, match="has no MAC"):
        checkpoint.load(tmp_path / "plain.ckpt", key=KEY)
    for bad in (b"", "", 42):
        with pytest.raises(CheckpointError, match="key must be non-empty bytes"):
            checkpoint.save(counter, tmp_path / "x.ckpt", key=bad)  # type: ignore[arg-type]
        with pytest.raises(CheckpointError, match="key must be non-empty bytes"):
            checkpoint.load(tmp_path / "plain.ckpt", key=bad)  # type: ignore[arg-type]


# --- the file system --------------------------------------------------------------------------------------------------

def _counter() -> SimpleCounter:
    counter = SimpleCounter(1.0, noise=SecureNoise())
    counter.run([1, 0])
    return counter


@pytest.mark.parametrize("where", ["a missing folder", "a folder", "below a file"])
def test_save_failures_are_checkpoint_errors(where: str, tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x", encoding="utf-8")
    (tmp_path / "folder").mkdir()
    target = {"a missing folder": tmp_path / "missing" / "c.ckpt", "a folder": tmp_path / "folder",
              "below a file": tmp_path / "file" / "c.ckpt"}[where]
    with pytest.raises(CheckpointError, match=f"cannot write the checkpoint to {target}") as info:
        checkpoint.save(_counter(), target)
    assert info.value.field == "checkpoint" and info.value.value == str(target)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file", "folder"]
    assert not list((tmp_path / "folder").iterdir())


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root writes into read-only folders")
def test_save_into_a_read_only_folder_is_a_checkpoint_error(tmp_path: Path) -> None:  # pragma: no cover - not root
    tmp_path.chmod(0o500)
    try:
        with pytest.raises(CheckpointError, match="cannot write the checkpoint"):
            checkpoint.save(_counter(), tmp_path / "c.ckpt")
    finally:
        tmp_path.chmod(0o700)


def test_a_failed_write_keeps_the_old_checkpoint(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "c.ckpt"
    counter = _counter()
    checkpoint.save(counter, path)
    before = path.read_bytes()
    counter.step(1)

    def full(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("os.replace", full)
    with pytest.raises(CheckpointError, match="No space left on device"):
        checkpoint.save(counter, path)
    assert path.read_bytes() == before and [p.name for p in tmp_path.iterdir()] == ["c.ckpt"]


@pytest.mark.parametrize("what", ["missing", "a folder"])
def test_load_failures_are_checkpoint_errors(what: str, tmp_path: Path) -> None:
    path = tmp_path / "missing.ckpt" if what == "missing" else tmp_path
    with pytest.raises(CheckpointError, match="cannot read the checkpoint"):
        checkpoint.load(path)


def test_a_checkpoint_of_another_dpstream_version_loads(tmp_path: Path) -> None:
    counter = SimpleCounter(1.0, noise=InsecureSeededNoise(1))
    counter.run([1, 0, 1])
    checkpoint.save(counter, tmp_path / "c.ckpt")
    _reseal(tmp_path / "c.ckpt", lambda d: d.update(dpstream="0.0.1"))
    loaded = checkpoint.load(tmp_path / "c.ckpt", InsecureSeededNoise(0))
    assert loaded.step(1) == counter.step(1)

