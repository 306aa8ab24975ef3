"""The calling convention (dpstream.convention, docs/developing.md "Calling convention") for every catalog entry.

The algorithms are found through the catalog, not listed here: each entry with a builder is built and stepped
through the first inputs of one of its vectors while :func:`dpstream.convention.intercepting` records every
top-level call through the convention (the entry's class or function, and the algorithms its steps call). For each
of them: it is built by keyword with the same releases, a ``noise`` that is not a NoiseSource raises a TypeError
naming noise before anything else happens, and every old argument order warns and releases the same numbers.
This is the one test that calls the old orders; everywhere else pytest turns dpstream's deprecation warnings into
errors (pyproject.toml).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from dpstream import catalog
from dpstream.catalog import Entry, VectorSpec
from dpstream.claims import Neighbour
from dpstream.convention import Call, Convention, check_noise, convention, intercepting
from dpstream.counters import BinaryTreeCounter, BlockCounter, SimpleCounter
from dpstream.errors import DPStreamDeprecationWarning, DPStreamInputError
from dpstream.insecure import InsecureSeededNoise, TapeRecorder
from dpstream.mechanisms import DiscreteGaussianMechanism, ExponentialMechanism, LaplaceMechanism
from dpstream.noise import NoiseSource, data_rng
from dpstream.vectors.generate import run_inputs

ENTRIES = [e for e in catalog.entries() if e.build is not None]
STEPS = 3
"""Inputs run per entry (the first of its smallest vector with at least this many)."""


def _spec(e: Entry) -> VectorSpec:
    specs = list(e.vectors())
    assert specs, f"{e.anchor}: no vector to run"
    return min(specs, key=lambda s: (len(s.inputs) < STEPS, len(s.inputs)))


def _run(e: Entry, hook: Callable[[Call], Call] | None = None, noise: NoiseSource | None = None) -> list[Any]:
    """The JSON releases of ``e`` on its vector's first inputs under the vector's seed, calls passed to ``hook``."""
    spec = _spec(e)
    noise = InsecureSeededNoise(spec.seed) if noise is None else noise
    if hook is None:
        return run_inputs(e, spec.params, spec.inputs[:STEPS], noise)
    with intercepting(hook):
        return run_inputs(e, spec.params, spec.inputs[:STEPS], noise)


def _calls(e: Entry, noise: NoiseSource | None = None) -> list[Call]:
    calls: list[Call] = []

    def record(call: Call) -> Call:
        calls.append(call)
        return call

    _run(e, record, noise)
    return calls


def _targets(calls: list[Call]) -> dict[str, Convention]:
    """The conventions called, in order of first call."""
    return {c.convention.name: c.convention for c in calls}


def _named(call: Call) -> dict[str, Any]:
    """Every argument of a call in the new convention, by name (defaults filled in)."""
    conv = call.convention
    assert len(call.args) <= len(conv.positional)
    return {**conv.defaults, **dict(zip(conv.positional, call.args, strict=False)), **call.kwargs}


def _rewrite(name: str, make: Callable[[Call], Call]) -> Callable[[Call], Call]:
    """A hook that rewrites every call of the convention ``name`` with ``make`` and passes the others on."""
    return lambda call: make(call) if call.convention.name == name else call


class Poison:
    """An argument that fails the test if anything looks at it (the noise check must come first)."""

    def __getattribute__(self, name: str) -> Any:
        if name == "__class__":
            return Poison
        raise AssertionError(f"argument used (.{name}) before noise was checked")

    def __bool__(self) -> bool:
        raise AssertionError("argument used before noise was checked")

    def __eq__(self, other: object) -> bool:
        raise AssertionError("argument used before noise was checked")

    __hash__ = None  # type: ignore[assignment]


# ------------------------------------------------------------------------------------------- every entry


@pytest.mark.parametrize("e", ENTRIES, ids=lambda e: e.anchor)
def test_entry_algorithm_is_under_the_convention(e: Entry) -> None:
    """The entry's algorithm (its first top-level call) and everything its steps call follow the convention; an
    entry that draws passes its noise by keyword to some call."""
    recorder = TapeRecorder(InsecureSeededNoise(_spec(e).seed))
    calls = _calls(e, recorder)
    assert calls, f"{e.anchor}: building and stepping it makes no call through dpstream.convention"
    for conv in _targets(calls).values():
        if conv.takes_noise:
            assert conv.defaults["noise"] is None, conv.name
        assert "noise" not in conv.positional, conv.name
    if recorder.tape.draws:
        assert any(c.convention.takes_noise for c in calls), f"{e.anchor}: no call takes noise"


@pytest.mark.parametrize("e", ENTRIES, ids=lambda e: e.anchor)
def test_entry_built_by_keyword_releases_the_same(e: Entry) -> None:
    reference = _run(e)
    for name in _targets(_calls(e)):
        by_keyword = _run(e, _rewrite(name, lambda c: Call(c.target, c.convention, (), _named(c))))
        assert by_keyword == reference, name


@pytest.mark.parametrize("e", ENTRIES, ids=lambda e: e.anchor)
def test_wrong_noise_type_is_refused_before_anything_else(e: Entry) -> None:
    """noise=<not a NoiseSource> with every other argument poisoned: TypeError naming noise, nothing touched."""
    with_noise = {name: conv for name, conv in _targets(_calls(e)).items() if conv.takes_noise}
    if not with_noise:
        pytest.skip(f"{e.anchor} takes no noise source (it draws nothing)")
    for name in with_noise:

        def poisoned(call: Call) -> Call:
            args = {k: Poison() for k in _named(call)}
            return Call(call.target, call.convention, (), {**args, "noise": 42})

        with pytest.raises(TypeError, match=r"noise must be a NoiseSource .* got int"):
            _run(e, _rewrite(name, poisoned))


def _old_order_call(order: tuple[str, ...]) -> Callable[[Call], Call]:
    def make(call: Call) -> Call:
        named = _named(call)
        conv = call.convention
        positional = tuple(named.pop(conv.renamed.get(n, n)) for n in order)
        return Call(call.target, conv, positional, named)

    return make


@pytest.mark.parametrize("e", ENTRIES, ids=lambda e: e.anchor)
def test_old_orders_warn_and_release_the_same(e: Entry) -> None:
    reference = _run(e)
    checked = 0
    for name, conv in _targets(_calls(e)).items():
        for order in conv.old:
            with pytest.warns(DPStreamDeprecationWarning, match=rf"{name}\({', '.join(order)}\) is the old order"):
                old = _run(e, _rewrite(name, _old_order_call(order)))
            assert old == reference, (name, order)
            checked += 1
    assert checked, f"{e.anchor}: no old order to check"


# ------------------------------------------------------------------------------------------- the decorator


# the old calls, as code not checked by mypy writes them (mypy sees the new signatures only)
Simple: Any = SimpleCounter
Block: Any = BlockCounter
Tree: Any = BinaryTreeCounter


def test_old_horizon_keyword_and_orders_name_the_new_call() -> None:
    with pytest.warns(DPStreamDeprecationWarning,
                      match=r"call SimpleCounter\(epsilon, T, noise=noise\) \(horizon is now T\)"):
        old = Simple(1.0, InsecureSeededNoise(3), 4)
    with pytest.warns(DPStreamDeprecationWarning, match=r"the keyword horizon= of SimpleCounter is now T="):
        renamed = Simple(1.0, noise=InsecureSeededNoise(3), horizon=4)
    new = Simple(1.0, 4, noise=InsecureSeededNoise(3))
    assert old.run([1, 0, 1, 1]) == renamed.run([1, 0, 1, 1]) == new.run([1, 0, 1, 1])
    assert old.horizon == renamed.horizon == new.horizon == 4
    with pytest.warns(DPStreamDeprecationWarning, match=r"call BinaryTreeCounter\(epsilon, T, noise=noise\)"):
        Tree(1.0, 8, InsecureSeededNoise(0))


def test_wrong_calls_are_type_errors() -> None:
    with pytest.raises(TypeError, match=r"both 'horizon' .* and 'T'"):
        Simple(1.0, 4, horizon=4)
    with pytest.raises(TypeError, match="multiple values for argument 'noise'"):
        Block(1.0, 2, InsecureSeededNoise(0), noise=InsecureSeededNoise(1))
    with pytest.raises(TypeError, match=r"at most 2 positional arguments \(epsilon, T\), 5 given"):
        Tree(1.0, 8, None, True, False)
    # a wrong noise in an old position is the same TypeError, raised before the deprecation warning
    with pytest.raises(TypeError, match=r"noise must be a NoiseSource .* got str"):
        Tree(1.0, 8, "secure")
    # Simple(eps, x) with x not a noise source is the new order: x is T, checked as T
    with pytest.raises(DPStreamInputError) as info:
        Simple(1.0, "secure")
    assert info.value.field == "T"


def test_check_noise_names_the_type() -> None:
    check_noise(None)
    check_noise(InsecureSeededNoise(0))
    with pytest.raises(TypeError, match=r"got numpy\.random\._generator\.Generator"):
        check_noise(data_rng(0))  # a generator is not a noise source


def test_decorator_refuses_signatures_outside_the_convention() -> None:
    def positional_noise(epsilon: float, noise: NoiseSource | None = None) -> None: ...

    def secure_default_missing(epsilon: float, *, noise: NoiseSource) -> None: ...

    def unknown_old(epsilon: float, *, noise: NoiseSource | None = None) -> None: ...

    with pytest.raises(TypeError, match="noise must be keyword-only"):
        convention()(positional_noise)
    with pytest.raises(TypeError, match="noise must default to None"):
        convention()(secure_default_missing)
    with pytest.raises(TypeError, match="unknown parameters"):
        convention(("epsilon", "delta"))(unknown_old)
    with pytest.raises(ValueError, match="distinct lengths"):
        convention(("epsilon", "noise"), ("noise", "epsilon"))


@pytest.mark.parametrize(("cls", "options"), [
    (LaplaceMechanism, {"neighbour": Neighbour.STREAM_ENTRY}),
    (ExponentialMechanism, {"neighbour": Neighbour.STREAM_ENTRY, "as_printed": True}),
    (DiscreteGaussianMechanism, {"neighbour": Neighbour.EVENT, "as_printed": True}),
], ids=lambda x: getattr(x, "__name__", ""))
def test_mechanism_options_are_keyword_only(cls: Callable[..., Any], options: dict[str, Any]) -> None:
    """The mechanisms take the paper's (budget, sensitivity) by position and draw through the source handed to
    ``release``/``select``; their options are keyword-only, the old positional options warn."""
    conv: Convention = getattr(cls.__init__, "__dpstream_convention__")  # noqa: B009 - set by the decorator
    assert conv.positional[1:] == ("sensitivity",) and not conv.takes_noise
    new = cls(0.5, 2.0, **options)
    values = {**conv.defaults, **options}
    for order in conv.old:
        with pytest.warns(DPStreamDeprecationWarning, match=rf"{conv.name}\({', '.join(order)}\) is the old order"):
            old = cls(0.5, 2.0, *(values[n] for n in order[2:]), **{k: v for k, v in options.items() if k not in order})
        assert old == new
