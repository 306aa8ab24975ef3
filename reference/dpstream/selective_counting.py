"""Online selective counting (001-alg4) as a reusable meta-algorithm, with Theorem 4.2's claim.

Printed in paper 001 but shared: this module depends on nothing PHDStream-specific, so it has a home of
its own beside the families (docs/architecture.md). The tabular family (003 Alg 3, 000 Alg 3) runs through
it (:mod:`dpstream.tabular.selective`); PHDStreamTree with counters (001-alg3) is an instance of it
(:mod:`dpstream.phdstream.counters_tree`).

The algorithm. k counters C_1, ..., C_k (any objects with ``step`` and ``claim``; created
lazily by a factory, so k may be huge, e.g. one counter per subtree of T) and a
counter-selecting algorithm M. At every time t (L4):

* L5  l_t <- M(f(t), g|[t-1])       -- M sees the current input and the output history;
* L6  J_{l_t} <- J_{l_t} u {t}       -- the activation times of each counter;
* L7  g(t) <- (l_t, C_{l_t}(f(t)))   -- only the selected counter is stepped.

The counters may receive a different input than M (remark 4 of Theorem 4.2):
``counter_input(f(t), l_t)`` (default: f(t) itself).

What M may look at (E-phdstream-7). L5 prints M(f(t), g(t-1)); the Appendix E proof writes
M(f|[tau], g|[tau-1]). The proof's step "for t > tau the inputs are identical" needs M at time
t to depend on the input only through f(t): with the whole prefix f|[t], M would see the
change at every t >= tau. And Algorithm 3's selector needs the whole output history (G(., t-1)
sums all past releases). Default: ``select(t, f(t), history)`` with the full history
g(1), ..., g(t-1); ``as_printed=True`` passes only the last release g(t-1) (a tuple of at most
one element).

Claim (Theorem 4.2). If M is eps_M-DP (in the sense above: one changed input f(tau) is seen by
M at tau only) and every counter is eps_C-DP for its own input stream f|J_l, and a neighbour
changes the input of at most one counter, then the algorithm is (eps_M + eps_C)-DP. The
counters' claim is declared up front (``counter_claim``) because they are created lazily; each
created counter is checked against it. For zCDP components the same argument gives
rho_M + rho_C (adaptive composition); measures must agree. Proof note:
proofs/proof_selective_counting.py.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from dpstream.claims import Measure, PrivacyClaim
from dpstream.errors import DPStreamInputError
from dpstream.staged import Staged

__all__ = [
    "CounterSelector",
    "SelectableCounter",
    "SelectiveCounting",
    "SelectiveRelease",
    "compose_selective_claim",
]

L = TypeVar("L", bound=Hashable)
X = TypeVar("X")
X_contra = TypeVar("X_contra", contravariant=True)
L_co = TypeVar("L_co", covariant=True)

ANCHOR = "001-alg4"


class SelectableCounter(Protocol):
    """A counter of Algorithm 4: anything with ``step(input) -> output`` and a ``claim``."""

    @property
    def claim(self) -> PrivacyClaim: ...

    def step(self, x: Any) -> Any: ...


@dataclass(frozen=True)
class SelectiveRelease(Generic[L]):
    """g(t) = (l_t, C_{l_t}(f(t))) (001-alg4 L7)."""

    t: int
    l: L
    output: Any


class CounterSelector(Protocol[X_contra, L_co]):
    """The counter-selecting algorithm M of Algorithm 4 (eps_M-DP, see the module docstring)."""

    @property
    def claim(self) -> PrivacyClaim: ...

    def select(self, t: int, x: X_contra, history: Sequence[SelectiveRelease[Any]]) -> L_co: ...


def compose_selective_claim(selector_claim: PrivacyClaim, counter_claim: PrivacyClaim,
                            note: str = "") -> PrivacyClaim:
    """Theorem 4.2: (eps_M + eps_C)-DP (or rho_M + rho_C for zCDP), under the selector's neighbour relation."""
    measures = {selector_claim.measure, counter_claim.measure}
    if Measure.NOT_PRIVATE in measures:
        return PrivacyClaim.not_private(selector_claim.neighbour, "001-thm4.2",
                                        note or "a component is not differentially private")
    if len(measures) != 1:
        raise DPStreamInputError("counter_claim", "must use the same privacy measure as the selector",
                                 (selector_claim.measure.value, counter_claim.measure.value))
    total = selector_claim.parameter + counter_claim.parameter
    text = (f"selector {selector_claim.symbol}={selector_claim.parameter:g} + counters "
            f"{counter_claim.symbol}={counter_claim.parameter:g}")
    if note:
        text = f"{text}; {note}"
    return PrivacyClaim(selector_claim.measure, total, selector_claim.neighbour, "001-thm4.2", text)


class SelectiveCounting(Generic[X, L]):
    """001-alg4 with lazily created counters. ``step(f(t)) -> SelectiveRelease``."""

    anchor = ANCHOR

    def __init__(
        self,
        selector: CounterSelector[X, L],
        counters: Callable[[L], SelectableCounter] | Mapping[L, SelectableCounter],
        counter_claim: PrivacyClaim,
        *,
        counter_input: Callable[[X, L], Any] | None = None,
        note: str = "",
        as_printed: bool = False,
    ) -> None:
        # [001-alg4 L1] Input: an input stream f, counters {C_1, ..., C_k}, a counter-selecting DP algorithm M
        # [001-alg4 L2] Output: an output stream g
        self.selector = selector
        self._make = counters if callable(counters) else counters.__getitem__
        self.counter_claim = counter_claim
        self.counter_input = counter_input
        self.as_printed = as_printed
        self._note = note
        self.counters: dict[L, SelectableCounter] = {}
        self.J: dict[L, list[int]] = {}  # [001-alg4 L3] J_l <- {} for all l (absent key = empty set)
        self.t = 0
        self.releases: list[SelectiveRelease[L]] = []

    @property
    def claim(self) -> PrivacyClaim:
        return compose_selective_claim(self.selector.claim, self.counter_claim, self._note)

    def counter(self, l: L) -> SelectableCounter:
        """C_l, created on first use and checked against the declared ``counter_claim``."""
        c = self.counters.get(l)
        if c is None:
            c = self._make(l)
            claim = c.claim
            if claim.measure is not self.counter_claim.measure or claim.parameter > self.counter_claim.parameter:
                raise DPStreamInputError("counters", f"counter {l!r} claims {claim.describe()}, more than the "
                                         f"declared {self.counter_claim.describe()}", l)
            self.counters[l] = c
        return c

    def stage(self, x: X) -> Staged[SelectiveRelease[L]]:
        """Staged step t: select, draw and compute into locals; ``.commit()`` applies it.

        The selected counter is staged too when it offers ``stage(x)`` (returning a
        :class:`~dpstream.staged.Staged` step, as :class:`dpstream.counters.base.Counter` does);
        otherwise it is stepped at once (then a failure later in the step is not atomic).
        """
        run = self.stage_run([x])
        return Staged(run.release[0], run.apply)

    def stage_run(self, inputs: Iterable[X], after: Callable[[SelectiveRelease[L]], None] | None = None
                  ) -> Staged[list[SelectiveRelease[L]]]:
        """Several consecutive steps t+1, t+2, ... drawn before any is committed (atomic as a whole).

        ``inputs`` is consumed lazily: after each step's release, ``after(release)`` runs before the next
        input is taken, so a caller can compute the next input from the release (003-alg3's k iterations of
        one time step, :mod:`dpstream.tabular.selective`). Each step sees the committed history plus the
        run's earlier releases. A counter is prepared at most once per run (two uncommitted steps of one
        counter would both start from its committed state).
        """
        pending: list[tuple[SelectiveRelease[L], Callable[[], object]]] = []
        for x in inputs:
            t = self.t + len(pending) + 1  # [001-alg4 L4] for t = 1 to infinity
            past = [*self.releases, *(r for r, _ in pending)]
            history: Sequence[SelectiveRelease[L]] = past[-1:] if self.as_printed else past
            l_t = self.selector.select(t, x, tuple(history))  # [001-alg4 L5] l_t <- M(f(t), g(t-1)) (see docstring)
            if any(r.l == l_t for r, _ in pending):
                raise DPStreamInputError("selector", "selected a counter twice within one atomic run", l_t)
            counter = self.counter(l_t)
            y = x if self.counter_input is None else self.counter_input(x, l_t)
            stage = getattr(counter, "stage", None)
            if callable(stage):
                staged = stage(y)
                output, counter_commit = staged.release, staged.apply  # [001-alg4 L7] C_{l_t}(f(t))
            else:
                output, counter_commit = counter.step(y), _nothing  # [001-alg4 L7] C_{l_t}(f(t))
            release = SelectiveRelease(t, l_t, output)  # [001-alg4 L7] g(t) <- (l_t, C_{l_t}(f(t)))
            pending.append((release, counter_commit))
            if after is not None:
                after(release)

        def commit() -> None:
            for release, counter_commit in pending:
                counter_commit()
                self.J.setdefault(release.l, []).append(release.t)  # [001-alg4 L6] J_{l_t} <- J_{l_t} u {t}
                self.t = release.t
                self.releases.append(release)

        return Staged([r for r, _ in pending], commit)

    def step(self, x: X) -> SelectiveRelease[L]:
        """One time step (001-alg4 L4-L7)."""
        return self.stage(x).commit()


def _nothing() -> None:
    return None
