"""The secure path never adds noise in Python (issue 16, part 1).

Three independent checks, each shown to fail on a deliberately reintroduced ``value + noise``:

1. **API**: no noise source has a method that returns a bare additive sample (``laplace``,
   ``discrete_laplace``, ``discrete_gaussian`` are gone), and ``SecureNoise`` refuses to make one.
2. **Structure** (AST): outside the noise door (``noise.py``; ``dpstream.insecure``) no module
   of the package or of ``examples/`` calls a bare-noise method, calls the door's internals ``_add``/``_add_many``,
   or hands an additive draw a constant value (``add_laplace(site, 0.0, b)`` would be a bare sample).
3. **Dynamics** (``dpstream.testing.secure_path.SecureDoorSpy``): every additive draw is exactly one OpenDP
   measurement applied to exactly the value handed in, its output released unchanged; for the counters,
   the value at every site is the statistic of the paper's linear model (``S f``), and the releases are
   the model's post-processing ``W`` of the measurement outputs. ``tests/foundation/test_secure_default.py``
   applies the spy to every public algorithm.
"""

from __future__ import annotations

import ast
import math
import pickle
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy import stats

from dpstream.audit.counters.models import (
    binary_tree_counter_model,
    block_counter_model,
    hybrid_counter_model,
    simple_counter_model,
    tree_aggregation_model,
    unbounded_block_model,
)
from dpstream.audit.linear_model import LinearReleaseModel
from dpstream.counters import (
    BinaryTreeCounter,
    BlockCounter,
    Counter,
    HybridCounter,
    SimpleCounter,
    TreeAggregationCounter,
    UnboundedBlockCounter,
)
from dpstream.counters.base import CounterStaging
from dpstream.insecure import InsecureSeededNoise, InsecureZeroNoise, TapeRecorder, TapeReplay
from dpstream.mechanisms import DiscreteGaussianMechanism, LaplaceMechanism
from dpstream.noise import BaseNoiseSource, DrawKind, NoiseSource, Params, ScopedNoise, SecureNoise, scoped, site
from dpstream.tape import DuplicateSiteError
from dpstream.testing.secure_path import SecureDoorSpy, recognisable

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "reference" / "dpstream"
DOOR = {PACKAGE / "noise.py"}
INSECURE = PACKAGE / "insecure"
"""``dpstream.insecure``: insecure samplers by design (seeded sources, bulk audit noise), outside the secure path."""
BARE = ("laplace", "discrete_laplace", "discrete_gaussian")
ADD = ("add_laplace", "add_discrete_laplace", "add_discrete_gaussian",
       "add_laplace_many", "add_discrete_laplace_many", "add_discrete_gaussian_many")


# --- 1. API --------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("cls", [NoiseSource, BaseNoiseSource, SecureNoise, InsecureSeededNoise, InsecureZeroNoise,
                                 ScopedNoise, TapeRecorder, TapeReplay])
def test_no_source_offers_a_bare_additive_sample(cls: type) -> None:
    assert not [name for name in BARE if hasattr(cls, name)]
    assert all(hasattr(cls, name) for name in ADD)


def test_secure_noise_refuses_a_bare_sample() -> None:
    noise = SecureNoise()
    for kind, params in ((DrawKind.LAPLACE, {"scale": 1.0}), (DrawKind.DISCRETE_LAPLACE, {"scale": 1.0}),
                         (DrawKind.DISCRETE_GAUSSIAN, {"sigma2": 1.0})):
        with pytest.raises(TypeError):
            noise._draw("s", kind, params)
        with pytest.raises(ValueError, match="value-in"):
            noise.draw("s", kind, **params)


# --- 2. structure ----------------------------------------------------------------------------------------------

def _is_constant(node: ast.expr) -> bool:
    """A literal number (or a literal list/tuple of them, or such a list times anything): no statistic at all."""
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.UnaryOp):
        return _is_constant(node.operand)
    if isinstance(node, ast.List | ast.Tuple):
        return all(_is_constant(e) for e in node.elts)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        return _is_constant(node.left) or _is_constant(node.right)
    return False


def _receiver(node: ast.expr) -> str:
    return node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""


def bare_noise_violations(source: str, filename: str) -> list[str]:
    """Calls that could add noise in Python: a bare-noise method (NoiseLaw's constructors excepted), the door's
    internals, or an additive draw whose value is a constant."""
    out = []
    for node in ast.walk(ast.parse(source, filename)):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        name, where = node.func.attr, f"{filename}:{node.lineno}"
        if name in BARE and _receiver(node.func.value) != "NoiseLaw":
            out.append(f"{where}: bare-noise method .{name}()")
        elif name in ("_add", "_add_many"):
            out.append(f"{where}: the door's internal .{name}()")
        elif name in ADD:
            value = node.args[1] if len(node.args) > 1 else next(
                (k.value for k in node.keywords if k.arg in ("value", "values")), None)
            if value is not None and _is_constant(value):
                out.append(f"{where}: .{name}() on the constant {ast.unparse(value)} (a bare sample added in Python)")
    return out


def test_no_module_outside_the_door_can_add_noise_in_python() -> None:
    files = [p for p in sorted(PACKAGE.rglob("*.py")) if p not in DOOR and INSECURE not in p.parents]
    files += sorted((ROOT / "examples").rglob("*.py"))
    assert len(files) > 50
    found = [v for p in files for v in bare_noise_violations(p.read_text(encoding="utf-8"), str(p.relative_to(ROOT)))]
    assert found == []


@pytest.mark.parametrize("line", [
    "g = self.g + x + self.noise.laplace(site('001-alg8 L4', t=t), 1.0 / self.epsilon)",
    "g = self.g + x + self.noise.add_laplace(site('001-alg8 L4', t=t), 0.0, 1.0 / self.epsilon)",
    "c = C + noise.add_discrete_gaussian(s, value=0, sigma2=2.0)",
    "v = x + noise.add_laplace_many(sites, [0.0] * len(sites), b)",
    "r, z = self.noise._add(s, DrawKind.LAPLACE, {'scale': b}, x)",
])
def test_the_structural_check_catches_a_reintroduced_python_addition(line: str) -> None:
    assert len(bare_noise_violations(line, "snippet")) == 1
    assert bare_noise_violations("b = NoiseLaw.laplace(2.0); y = noise.add_laplace(s, x, b)", "ok") == []


# --- 3. dynamics ---------------------------------------------------------------------------------------------

COUNTERS: dict[str, tuple[Callable[[], Counter], Callable[[int], LinearReleaseModel], list[int]]] = {
    "simple": (lambda: SimpleCounter(1.0), lambda T: simple_counter_model(1.0, T), [1, 0, 1, 1, 0, 1, 0, 1, 1]),
    "block": (lambda: BlockCounter(1.0, 3), lambda T: block_counter_model(1.0, 3, T), [1, 0, 1, 1, 0, 1, 0, 1, 1]),
    "binary-tree": (lambda: BinaryTreeCounter(1.0, 16), lambda T: binary_tree_counter_model(1.0, 16, releases=T),
                    [1, 0, 1, 1, 0, 1, 0, 1, 1]),
    "binary-tree-discrete": (lambda: BinaryTreeCounter(1.0, 16, discrete=True),
                             lambda T: binary_tree_counter_model(1.0, 16, discrete=True, releases=T),
                             [2, 0, -1, 3, 1, 0, 5, 1, 1]),
    "tree-aggregation": (lambda: TreeAggregationCounter(0.5, 16), lambda T: tree_aggregation_model(0.5, 16, releases=T),
                         [2, 0, 1, 3, 1, 0, 5, 1, 4]),
    "unbounded-block": (lambda: UnboundedBlockCounter(1.0), lambda T: unbounded_block_model(1.0, T), [1, 0, 1] * 7),
    "hybrid": (lambda: HybridCounter(1.0), lambda T: hybrid_counter_model(1.0, T), [1, 0, 1] * 7),
}


def model_violations(counter: Counter, model: LinearReleaseModel, f: list[int], spy: SecureDoorSpy,
                     releases: list[float]) -> list[str]:
    """Against the paper's model: the door saw the statistic (S f)_j at site_j and nothing else, and the releases are
    W (S f + delta) with delta the stand-in's offset (0.25 for Laplace, 1 for integer noise)."""
    seen = {s: v for door in spy.doors for s, v in zip(door.sites, door.values, strict=True)}
    out = []
    if set(seen) != set(model.sites):
        out.append(f"sites drawn {sorted(set(seen) ^ set(model.sites))[:4]} differ from the model's")
    statistics = model.statistics @ np.asarray(f, dtype=np.float64)
    for s, stat in zip(model.sites, statistics, strict=True):
        if s in seen and seen[s] != stat:
            out.append(f"{s}: the door got {seen[s]!r}, the model's statistic is {stat!r}")
    delta = np.array([0.25 if law.kind is DrawKind.LAPLACE else 1.0 for law in model.laws])
    expected = model.combination @ (statistics + delta)
    if not np.allclose(np.asarray(releases, dtype=np.float64), expected, rtol=0.0, atol=1e-9):
        out.append(f"releases {releases[:4]} are not W (S f + delta) = {expected[:4].tolist()}")
    return out


@pytest.mark.parametrize("name", list(COUNTERS))
def test_counters_hand_the_door_their_models_statistics(name: str) -> None:
    factory, model, f = COUNTERS[name]
    with SecureDoorSpy(recognisable) as spy:
        counter = factory()
        assert isinstance(counter.noise, SecureNoise)
        releases = counter.run(f)
    assert spy.doors and spy.violations() == []
    assert model_violations(counter, model(len(f)), f, spy, releases) == []


class _AddsInPython(SimpleCounter):
    """The reintroduced defect: a bare sample (the door on 0.0) added to f(t) in Python."""

    def _staging(self, x: float, t: int) -> CounterStaging:
        yield from ()  # draws at once (a generator that requests nothing)
        g = self.g + x + self.noise.add_laplace(site("001-alg8 L4", t=t), 0.0, 1.0 / self.epsilon)

        def commit() -> None:
            self.g = g

        return g, commit


class _PythonSecureNoise(SecureNoise):
    """The reintroduced defect inside the door: the measurement on 0 (a bare sample), added to the value in Python."""

    def _add(self, site: str, kind: DrawKind, params: Params, value: Any) -> tuple[Any, Any]:
        zero = 0.0 if kind is DrawKind.LAPLACE else 0
        noise = self._measurement(kind, self._parameter(kind, params))(zero)
        return value + noise, noise


def test_the_dynamic_checks_catch_a_reintroduced_python_addition() -> None:
    f = [1, 0, 1, 1, 0, 1]
    with SecureDoorSpy(recognisable) as spy:
        counter = _AddsInPython(1.0)
        releases = counter.run(f)
    assert spy.violations() == []  # the door itself is fine ...
    found = model_violations(counter, simple_counter_model(1.0, len(f)), f, spy, releases)
    assert len(found) == 4  # ... but the door saw 0.0, not f(t), at the four sites where f(t) = 1
    with SecureDoorSpy(recognisable) as spy:
        SimpleCounter(1.0, noise=_PythonSecureNoise()).run(f)
    found = spy.violations()  # every draw: a measurement on 0.0 that is not the release
    assert len(found) == len(f) and all("outside an additive draw (input 0.0)" in v for v in found)


def test_mechanisms_hand_the_door_the_query_values() -> None:
    with SecureDoorSpy(recognisable) as spy:
        noise = SecureNoise()
        assert LaplaceMechanism(0.5).release(noise, "a", 3.0) == 3.25
        assert LaplaceMechanism(0.5).release_vector(noise, "v", [1.0, -2.0]).tolist() == [1.25, -1.75]
        assert DiscreteGaussianMechanism(0.5).release(noise, "g", 7) == 8
        assert DiscreteGaussianMechanism(0.5).release_vector(noise, "w", [3, 0]) == [4, 1]
    assert spy.violations() == []
    assert [(d.sites, d.values, d.batch) for d in spy.doors] == [
        (("a",), (3.0,), False), (("v i=0", "v i=1"), (1.0, -2.0), True),
        (("g",), (7,), False), (("w i=0", "w i=1"), (3, 0), True)]


def test_batches_are_one_vector_measurement_and_scopes_and_tapes_pass_through() -> None:
    with SecureDoorSpy() as spy:  # the real OpenDP measurements
        recorder = TapeRecorder(SecureNoise())
        out = scoped(recorder, "x").add_laplace_many(["a", "b", "c"], [1.0, 2.0, 3.0], 2.0)
        ints = scoped(recorder, "y").add_discrete_gaussian_many(["a", "b"], [5, -5], 3.0)
    assert spy.violations() == [] and len(spy.measurements) == 2 and all(m.vector for m in spy.measurements)
    assert out.tolist() == list(spy.measurements[0].output) and ints == list(spy.measurements[1].output)
    tape = recorder.tape
    assert [d.site for d in tape] == ["x / a", "x / b", "x / c", "y / a", "y / b"]
    assert [d.value for d in tape] == [r - v for r, v in zip([*out.tolist(), *ints], [1.0, 2.0, 3.0, 5, -5],
                                                             strict=True)]  # the tape holds release - value


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_seeded_batches_draw_exactly_what_single_draws_draw(seed: int) -> None:
    values = [0.5, -1.0, 1e6, 0.0, 3.25]
    a, b = InsecureSeededNoise(seed), InsecureSeededNoise(seed)
    batch = a.add_laplace_many([f"s{i}" for i in range(5)], values, 1.5)
    single = [b.add_laplace(f"s{i}", v, 1.5) for i, v in enumerate(values)]
    assert batch.tolist() == single
    ints = a.add_discrete_laplace_many(["p", "q"], [3, 4], 2.0) + a.add_discrete_gaussian_many(["r"], [1], 2.0)
    assert ints == [b.add_discrete_laplace("p", 3, 2.0), b.add_discrete_laplace("q", 4, 2.0),
                    b.add_discrete_gaussian("r", 1, 2.0)]


def test_values_are_validated_before_any_draw() -> None:
    noise = TapeRecorder(InsecureSeededNoise(0))
    for call in (lambda: noise.add_laplace("a", math.nan, 1.0), lambda: noise.add_discrete_laplace("b", 0.5, 1.0),  # type: ignore[arg-type]
                 lambda: noise.add_discrete_gaussian("c", 2**62 + 1, 1.0),
                 lambda: noise.add_laplace_many(["d", "e"], [1.0], 1.0)):
        with pytest.raises(ValueError):
            call()
    with pytest.raises(DuplicateSiteError):
        noise.add_laplace_many(["f", "f"], [1.0, 2.0], 1.0)
    assert len(noise.tape) == 0


def test_secure_noise_pickles_without_state() -> None:
    noise = SecureNoise()
    noise.add_laplace("warm", 0.0, 1.0)  # builds and caches a measurement
    copy = pickle.loads(pickle.dumps(noise))
    assert isinstance(copy, SecureNoise) and copy._cache == {}
    assert math.isfinite(copy.add_laplace("a", 1.0, 1.0)) and type(copy.add_discrete_laplace("b", 1, 1.0)) is int


def test_secure_batch_laws() -> None:
    """The vector measurements add independent noise of the right law to every element.

    False alarm: two tests at significance 1e-5 each on OS entropy (OpenDP cannot be seeded): <= 2e-5."""
    noise, n = SecureNoise(), 3000
    lap = noise.add_laplace_many([f"l{i}" for i in range(n)], [3.0] * n, 2.0) - 3.0
    assert stats.kstest(lap, stats.laplace(scale=2.0).cdf).pvalue > 1e-5
    dl = np.asarray(noise.add_discrete_laplace_many([f"d{i}" for i in range(n)], [-4] * n, 1.5)) + 4
    p = math.exp(-1 / 1.5)
    support = np.arange(-6, 7)
    pmf = (1 - p) / (1 + p) * p ** np.abs(support)
    observed = np.array([np.sum(np.clip(dl, -6, 6) == k) for k in support], dtype=float)
    expected = pmf * n
    expected[[0, -1]] += n * (1 - pmf.sum()) / 2  # the tails lumped into the end bins
    assert stats.chisquare(observed, expected * observed.sum() / expected.sum()).pvalue > 1e-5
