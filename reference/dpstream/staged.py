"""Draw, then commit: the one staged-step type :class:`Staged` and the batched drawing of many steps.

Every algorithm step that must be atomic (a failing draw changes nothing) is split in two:
*staging* draws everything into locals and returns a :class:`Staged` -- the step's release and a
``commit`` that applies the state change, draws nothing and cannot fail. Nothing changes until
``commit()``; a caller stepping several sub-algorithms at once stages all of them, then commits all.

Batching. A sub-algorithm whose additive draws can be declared before they are made writes its
staging as a *generator* (:data:`Staging`): each additive draw is ``(yield request)``, a
:class:`DrawRequest` (noise source, site, kind, parameter, value), and the generator receives the
noisy value; it finally *returns* the :class:`Staged` step. The printed line stays one line
with its tag (001-alg8 L4 in ``dpstream.counters.simple``)::

    g = self.g + (yield laplace(self.noise, site("001-alg8 L4", t=t), x, 1.0 / self.epsilon))

Two drivers run such generators:

* :func:`run` fulfils each request at once through its own source (``add_laplace`` ...), in the
  order the generator asks: exactly the draws, in exactly the order, of the line-by-line code;
* :func:`run_all` runs many generators (all leaf counters of a tree, all coordinates of a vector
  counter) in rounds: it collects the pending request of every generator, fulfils all requests of
  one (source, kind, parameter) with ONE ``add_*_many`` call (one OpenDP vector measurement in the
  secure source), sends the values back and repeats until every generator has returned.

Order. The batched driver changes the order in which draws are requested, never their sites. It
is used only when the source is *order free* (``NoiseSource.order_free``: the value of a draw does
not depend on the order of the requests -- :class:`~dpstream.noise.SecureNoise`, a
:class:`~dpstream.insecure.TapeReplay`); an order-dependent source (the seeded or the zero one)
gets the line-by-line order, so seeded runs, their tapes and the test vectors are unchanged by
batching, and a seeded tape replays through the batched path to the same releases (tests).
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass
from typing import Any, Generic, NamedTuple, TypeAlias, TypeVar

from dpstream.noise import DrawKind, NoiseSource, unscoped

__all__ = [
    "DrawRequest",
    "Staged",
    "Staging",
    "discrete_gaussian",
    "discrete_laplace",
    "laplace",
    "order_free",
    "run",
    "run_all",
    "staged_now",
]

R = TypeVar("R")
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Staged(Generic[R]):
    """A drawn but uncommitted step: ``release`` is what the step releases; :meth:`commit` applies it."""

    release: R
    apply: Callable[[], object]
    """The state change (no draws, cannot fail except on misuse, e.g. a stale step)."""

    def commit(self) -> R:
        """Apply the step's state change and return its release."""
        self.apply()
        return self.release


def _nothing() -> None:
    return None


def staged_now(release: R) -> Staged[R]:
    """A step that has nothing left to commit (already applied, or stateless)."""
    return Staged(release, _nothing)


class DrawRequest(NamedTuple):
    """One additive draw a staging generator needs: ``value`` + noise of ``kind`` with ``parameter``
    (scale, or sigma2 for the discrete Gaussian) at ``site`` of ``noise`` (a named tuple: made once per draw)."""

    noise: NoiseSource
    site: str
    kind: DrawKind
    value: float | int
    parameter: float

    def fulfil(self) -> Any:
        """Draw it through the source's public value-in method (the line-by-line call)."""
        if self.kind is DrawKind.LAPLACE:
            return self.noise.add_laplace(self.site, float(self.value), self.parameter)
        if self.kind is DrawKind.DISCRETE_LAPLACE:
            return self.noise.add_discrete_laplace(self.site, int(self.value), self.parameter)
        return self.noise.add_discrete_gaussian(self.site, int(self.value), self.parameter)


def laplace(noise: NoiseSource, site: str, value: float, scale: float) -> DrawRequest:
    """Request value + Lap(scale) (as ``noise.add_laplace(site, value, scale)``)."""
    return DrawRequest(noise, site, DrawKind.LAPLACE, value, scale)


def discrete_laplace(noise: NoiseSource, site: str, value: int, scale: float) -> DrawRequest:
    """Request value + Lap_Z(scale) (as ``noise.add_discrete_laplace``)."""
    return DrawRequest(noise, site, DrawKind.DISCRETE_LAPLACE, value, scale)


def discrete_gaussian(noise: NoiseSource, site: str, value: int, sigma2: float) -> DrawRequest:
    """Request value + N_Z(0, sigma2) (as ``noise.add_discrete_gaussian``)."""
    return DrawRequest(noise, site, DrawKind.DISCRETE_GAUSSIAN, value, sigma2)


Staging: TypeAlias = Generator[DrawRequest, Any, Staged[R]]
"""A staging generator: yields :class:`DrawRequest` s, receives each noisy value, returns the staged step."""


def order_free(noise: NoiseSource) -> bool:
    """Whether draws of ``noise`` may be requested in any order (then drivers batch them)."""
    return bool(getattr(noise, "order_free", False))


def run(staging: Generator[DrawRequest, Any, T]) -> T:
    """Fulfil every request of ``staging`` at once, in its order (line by line); return what it returns
    (for a :data:`Staging`: its staged step)."""
    try:
        request = next(staging)
        while True:
            request = staging.send(request.fulfil())
    except StopIteration as stop:
        result: T = stop.value
        return result


_MANY = {
    DrawKind.LAPLACE: lambda n, sites, values, p: n.add_laplace_many(sites, values, p).tolist(),
    DrawKind.DISCRETE_LAPLACE: lambda n, sites, values, p: n.add_discrete_laplace_many(sites, values, p),
    DrawKind.DISCRETE_GAUSSIAN: lambda n, sites, values, p: n.add_discrete_gaussian_many(sites, values, p),
}


def run_all(stagings: Sequence[Staging[R]], batched: bool) -> list[Staged[R]]:
    """Run every generator to its staged step; nothing is committed (a failing draw leaves all unchanged).

    ``batched=False``: one after the other, line by line (:func:`run`). ``batched=True``: in rounds,
    one ``add_*_many`` call per (innermost source, kind, parameter) and round (module docstring);
    pass ``order_free(noise)`` unless the order of the draws is known not to matter.
    """
    if not batched:
        return [run(s) for s in stagings]
    done: list[Staged[R] | None] = [None] * len(stagings)
    pending: dict[int, DrawRequest] = {}
    for i, staging in enumerate(stagings):
        try:
            pending[i] = next(staging)
        except StopIteration as stop:
            done[i] = stop.value
    while pending:
        groups: dict[tuple[int, DrawKind, float], tuple[NoiseSource, list[int], list[str], list[Any]]] = {}
        for i, request in pending.items():
            source, full_site = unscoped(request.noise, request.site)
            key = (id(source), request.kind, request.parameter)
            group = groups.get(key)
            if group is None:
                group = groups[key] = (source, [], [], [])
            group[1].append(i)
            group[2].append(full_site)
            group[3].append(request.value)
        answers: dict[int, Any] = {}
        for (_, kind, parameter), (source, owners, sites, values) in groups.items():
            answers.update(zip(owners, _MANY[kind](source, sites, values, parameter), strict=True))
        pending = {}
        for i, value in answers.items():
            try:
                pending[i] = stagings[i].send(value)
            except StopIteration as stop:
                done[i] = stop.value
    finished = [s for s in done if s is not None]
    if len(finished) != len(stagings):  # pragma: no cover - every generator above ran to its return
        raise AssertionError("a staging generator did not finish")
    return finished
