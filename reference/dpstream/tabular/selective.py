"""003-alg3 as an instance of online selective counting (001-alg4), in code.

003-thm6.1's proof ("Algorithm 3 is an instance of the selective counting algorithm",
000-lem4.1 likewise) rests on this decomposition. Here it is explicit:

* the meta-stream has one item per iteration (t, l): x_{t,l} = (t, l, ∇f_t);
* the counters are C_1, ..., C_|Q| of 003-alg3 L3 (multi-dimensional for workloads);
  counter C_i's input at a meta-step is q_i(∇f_t) (``counter_input``);
* the counter-selecting algorithm M (:class:`Algorithm3Selector`) returns
  η_{t,l} = ExponentialMechanism(e_{t,l}, ε/2k) (L10-L12); e_{t,l} depends on x_{t,l}
  and on h_{t,l-1} and g_{t-1}, which are computed from the previous releases
  (l_s, C_{l_s}(x_s)) only (L16-L21 are post-processing: A_Dataset never sees the data).

:class:`SelectiveMainAlgorithm` drives :class:`dpstream.selective_counting.SelectiveCounting`
with these pieces and the post-processing of :class:`MainAlgorithm`; a test
(tests/tabular/test_selective.py) replays one noise tape through both and checks that the
releases are identical.

Claim through Theorem 4.2: per meta-step the selector is ε/(2k)-DP and the selected
counter's input moves by at most 1 (ε/(2k) for an ε/(2k)-DP counter); a neighbouring
stream (one record at one time τ, 003-def3.3) changes the k meta-steps of time τ only, so
by composition over those k meta-steps the total is k (ε/2k + ε/2k) = ε
(proofs/proof_tabular_main_privacy.py).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpstream.claims import Neighbour, PrivacyClaim
from dpstream.selective_counting import SelectiveCounting, SelectiveRelease, compose_selective_claim
from dpstream.staged import Staged
from dpstream.tabular.datasets import SyntheticDataset
from dpstream.tabular.main_algorithm import AnyCounter, MainAlgorithm, StepState, stage_counter
from dpstream.tabular.queries import FloatArray

__all__ = ["Algorithm3Selector", "MetaInput", "SelectiveMainAlgorithm"]


@dataclass(frozen=True)
class MetaInput:
    """x_{t,l}: the meta-stream item of iteration l at time t (it carries ∇f_t's query answers)."""

    t: int
    l: int
    q_diff: tuple[FloatArray, ...]


class Algorithm3Selector:
    """M of 001-alg4 for 003-alg3: the exponential mechanism on e_{t,l} (L10-L12).

    It reads h_{t,l-1} and the target q_i(∇f_t + g_{t-1}) from the post-processing state,
    which is a deterministic function of the previous releases.
    """

    def __init__(self, alg: MainAlgorithm, state: Callable[[], StepState]) -> None:
        self.alg = alg
        self.state = state
        self.last_scores: list[float] = []

    @property
    def claim(self) -> PrivacyClaim:
        return PrivacyClaim.pure(self.alg.selector.epsilon_spent, Neighbour.EVENT, "003-alg3 L12",
                                 "one selection per meta-step (t, l)")

    def select(self, t: int, x: MetaInput, history: Sequence[SelectiveRelease[Any]]) -> int:
        state = self.state()
        J = self.alg.candidates(state)
        j, e = self.alg.select(x.t, x.l, J, state.target, state.h_prev)
        self.last_scores = e
        return j


class _CounterAdapter:
    """C_i with the staged ``stage`` that SelectiveCounting uses (vector counters included)."""

    def __init__(self, counter: AnyCounter) -> None:
        self.counter = counter

    @property
    def claim(self) -> PrivacyClaim:
        return self.counter.claim

    def stage(self, value: FloatArray) -> Staged[FloatArray]:
        return stage_counter(self.counter, value)

    def step(self, value: FloatArray) -> FloatArray:
        return self.stage(value).commit()


class SelectiveMainAlgorithm:
    """003-alg3 run through the generic 001-alg4 meta-algorithm (same releases as :class:`MainAlgorithm`)."""

    def __init__(self, alg: MainAlgorithm) -> None:
        self.alg = alg
        self._state: StepState | None = None
        self.selector = Algorithm3Selector(alg, self._current)
        counter_claim = max((c.claim for c in alg.counters), key=lambda c: c.parameter)
        self.meta: SelectiveCounting[MetaInput, int] = SelectiveCounting(
            self.selector,
            {i: _CounterAdapter(c) for i, c in enumerate(alg.counters)},
            counter_claim,
            counter_input=lambda x, i: x.q_diff[i],
            note="per meta-step (t, l); k meta-steps per time",
        )

    def _current(self) -> StepState:
        if self._state is None:
            raise RuntimeError("no step in progress")
        return self._state

    @property
    def claim(self) -> PrivacyClaim:
        """Theorem 4.2 per meta-step, times the k meta-steps a neighbour changes."""
        per_meta = compose_selective_claim(self.selector.claim, self.meta.counter_claim)
        return PrivacyClaim.pure(self.alg.k * per_meta.parameter, Neighbour.EVENT, "003-thm6.1",
                                 f"001-thm4.2 per meta-step ({per_meta.parameter:g}) x k = {self.alg.k}")

    def step(self, x: object) -> SyntheticDataset:
        """One time t = k meta-steps of 001-alg4, then 003-alg3 L19-L21 (post-processing); atomic."""
        state = self.alg.begin(x)
        self._state = state

        def inputs() -> Iterator[MetaInput]:
            for l in range(1, self.alg.k + 1):
                yield MetaInput(state.t, l, tuple(state.q_diff))

        def after(release: SelectiveRelease[int]) -> None:  # L13-L18 before the next selection reads h_{t,l}
            self.alg.iteration(state, release.l, self.selector.last_scores, np.asarray(release.output))

        try:
            run = self.meta.stage_run(inputs(), after)  # k meta-steps drawn, none committed yet
            return self.alg.finish(state, [run.apply])          # L19-L21, then the counters and J, atomically
        finally:
            self._state = None
