"""PHDStreamTree with counters (001-alg3), written as an instance of online selective counting (001-alg4).

Every vertex v of T has a counter C_v with budget eps/2 (L4), any counter of
:mod:`dpstream.counters` (default Simple, 001-alg8). At time t PrivTree selects T(t) (L6) and
only the counters of the leaves of T(t) are stepped, with nabla F(v, t) (L7).

Algorithm 3 as Algorithm 4 (section 4.5), in code: :class:`PHDStreamTreeWithCounters` holds a
:class:`~dpstream.selective_counting.SelectiveCounting` whose

* selector M is :class:`PrivTreeSelector`: l_t = T(t) = PrivTree_T(G(., t-1) + nabla F(., t), eps/2,
  theta), reading G(., t-1), a post-processing of the release history;
* counter for the index S is :class:`LeafCounters`: the multi-dimensional counter
  (001-sec4.3) made of the leaf counters {C_v : v in L(S)}. Views for different S share the
  per-vertex counters; a neighbour changes the input of one per-vertex counter by 1, so the
  views together are one eps/2-DP family (proofs/proof_selective_counting.py);
* counter input is (nabla F(v, t))_{v in L(S)} (remark 4 of Theorem 4.2: M and the counters
  see different inputs).

L7: what is d(v, t)? A counter outputs a running sum over its activations N_v; L8 adds d to
G(., t-1) as an increment (as Algorithm 1 does). Default: d(v, t) = C_v's output minus its
previous output (the increment; with the Simple counter at eps/2 this is exactly
nabla F(v, t) + Lap(2/eps), Algorithm 1 L6). ``as_printed=True``: d(v, t) = C_v's output,
which counts every earlier input of C_v again at each activation (E-phdstream-5).

Sites: PrivTree ``"001-alg5 L11 t=<t> v=<v>"``; C_v draws inside the scope
``"001-alg3 L7 v=<v>"`` with its own local time, e.g. ``"001-alg3 L7 v=0.1 / 001-alg8 L4 t=2"``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from dpstream.claims import Neighbour, PrivacyClaim
from dpstream.convention import convention
from dpstream.counters import Counter, CounterFactory, SimpleCounter
from dpstream.errors import DPStreamInputError, require_positive_finite
from dpstream.noise import NoiseSource, scoped, site
from dpstream.phdstream.guarantees import phdstream_note
from dpstream.phdstream.partition import Node, Partition, node_label
from dpstream.phdstream.phdstream_tree import NaiveTreeStream
from dpstream.phdstream.privtree import LambdaRule, Subtree, privtree_claim, privtree_for
from dpstream.phdstream.stream import TreeRelease
from dpstream.phdstream.tree_function import TreeFunction, consistent_extension
from dpstream.selective_counting import SelectiveCounting, SelectiveRelease
from dpstream.staged import Staged, order_free, run_all

__all__ = [
    "COUNTER_SCOPE",
    "CounterFactory",
    "LeafCounters",
    "NodeCounters",
    "PHDStreamTreeWithCounters",
    "PrivTreeSelector",
    "simple_counter_factory",
]

COUNTER_SCOPE = "001-alg3 L7"


def simple_counter_factory(epsilon: float, noise: NoiseSource) -> Counter:
    """The default per-vertex counter: Simple (001-alg8), as the paper's experiments found best."""
    return SimpleCounter(epsilon, noise=noise)


class NodeCounters:
    """C_v for every vertex v, created on first activation (creation draws nothing, so this equals L4)."""

    def __init__(self, factory: CounterFactory, epsilon: float, noise: NoiseSource) -> None:
        self.factory = factory
        self.epsilon = require_positive_finite("epsilon", epsilon)
        self.noise = noise
        self.counters: dict[Node, Counter] = {}

    def scope(self, v: Node) -> str:
        return site(COUNTER_SCOPE, v=node_label(v))

    def get(self, v: Node) -> Counter:
        c = self.counters.get(v)
        if c is None:
            c = self.factory(self.epsilon, scoped(self.noise, self.scope(v)))
            if not isinstance(c, Counter):
                raise DPStreamInputError("counter", "the factory must return a dpstream Counter", c)
            self.counters[v] = c
        return c

    def stage_all(self, values: Mapping[Node, float]) -> Staged[dict[Node, float]]:
        """Staged step of the counters of ``values``' vertices: all drawn before any is committed; with an
        order-free source (the secure one) in one batched call per round (``dpstream.staged.run_all``)."""
        vertices = list(values)
        steps = run_all([self.get(v).staging(values[v]) for v in vertices], order_free(self.noise))

        def commit() -> None:
            for step in steps:
                step.commit()

        return Staged({v: step.release for v, step in zip(vertices, steps, strict=True)}, commit)


class LeafCounters:
    """The multi-dimensional counter L(S) of section 4.5: the counters of the leaves of S, in ``S.leaves`` order."""

    def __init__(self, S: Subtree, pool: NodeCounters, claim: PrivacyClaim) -> None:
        self.S = S
        self.pool = pool
        self._claim = claim

    @property
    def claim(self) -> PrivacyClaim:
        return self._claim

    def stage(self, values: Sequence[float]) -> Staged[tuple[float, ...]]:
        if len(values) != len(self.S.leaves):
            raise DPStreamInputError("values", f"must hold one value per leaf of S ({len(self.S.leaves)})", values)
        step = self.pool.stage_all(dict(zip(self.S.leaves, values, strict=True)))
        return Staged(tuple(step.release[v] for v in self.S.leaves), step.apply)

    def step(self, values: Sequence[float]) -> tuple[float, ...]:
        return self.stage(values).commit()


class PrivTreeSelector:
    """M of Algorithm 4 for Algorithm 3: T(t) = PrivTree_T(G(., t-1) + nabla F(., t), eps/2, theta)."""

    def __init__(self, owner: PHDStreamTreeWithCounters) -> None:
        self.owner = owner

    @property
    def claim(self) -> PrivacyClaim:
        o = self.owner
        return privtree_claim(o.partition, o.epsilon / 2.0, o.lambda_rule)

    def select(self, t: int, x: TreeFunction, history: Sequence[SelectiveRelease[Any]]) -> Subtree:
        o = self.owner
        # G(., t-1) is a post-processing of the history g(1..t-1); the owner keeps it up to date.
        inputs = {v: g + x.get(v, 0.0) for v, g in o.G.items()}
        return privtree_for(o.noise)(o.partition, inputs, o.epsilon / 2.0, o.theta, noise=o.noise, t=t,  # [001-alg3 L6]
                                     lambda_rule=o.lambda_rule, check_input=False)


@convention(("partition", "epsilon", "theta", "noise"))
class PHDStreamTreeWithCounters(NaiveTreeStream):
    """001-alg3 (naive, all of V(T)); ``counter`` makes C_v (default Simple); ``step(nabla_F) -> TreeRelease``."""

    anchor = "001-alg3"
    paper_source = "001-thm4.2"

    def __init__(self, partition: Partition, epsilon: float, theta: float = 0.0, *,
                 noise: NoiseSource | None = None, counter: CounterFactory = simple_counter_factory,
                 lambda_rule: LambdaRule = LambdaRule.GENERAL, as_printed: bool = False) -> None:
        # [001-alg3 L1] Input: F in C(T), privacy budget eps, threshold count theta
        # [001-alg3 L2] Output: a stream G in C(T)
        super().__init__(partition, epsilon, theta, noise, lambda_rule)  # [001-alg3 L3] G(v, 0) = 0
        self.as_printed = as_printed
        self.pool = NodeCounters(counter, self.epsilon / 2.0, self.noise)  # [001-alg3 L4] C_v with budget eps/2
        counter_claim = self._counter_claim()
        self.selective: SelectiveCounting[TreeFunction, Subtree] = SelectiveCounting(
            PrivTreeSelector(self),
            lambda S: LeafCounters(S, self.pool, counter_claim),
            counter_claim,
            counter_input=lambda dF, S: [dF.get(v, 0.0) for v in S.leaves],  # [001-alg3 L7] nabla F(v, t)
            note="Algorithm 3 as Algorithm 4 (section 4.5)",
        )
        self.last_output: dict[Node, float] = {}

    def _counter_claim(self) -> PrivacyClaim:
        probe = self.pool.factory(self.pool.epsilon, scoped(self.noise, "probe"))
        c = probe.claim
        return PrivacyClaim(c.measure, c.parameter, Neighbour.STREAM_ENTRY, "001-sec4.3",
                            "leaf counters L(S): a neighbour changes one leaf's input by 1")

    @property
    def claim(self) -> PrivacyClaim:
        """Theorem 4.2's composition (eps/2 + eps/2), with the worst case of the PrivTree scale in the note."""
        composed = self.selective.claim
        note = f"{composed.note}; {phdstream_note(self.partition, self.epsilon, self.lambda_rule)}"
        return PrivacyClaim(composed.measure, composed.parameter, composed.neighbour, composed.source, note)

    def stage(self, nabla_F: Mapping[Node, float]) -> Staged[TreeRelease]:
        """Validate, draw and compute step t into locals; ``.commit()`` applies it."""
        true_step = self._true.stage(nabla_F)
        dF = true_step.release
        t = self.t + 1  # [001-alg3 L5] for every time t
        # Algorithm 4 does L6 (the selector M = PrivTree) and L7 (the leaf counters L(T(t))):
        selective_step = self.selective.stage(dF)
        selected = selective_step.release
        T_t: Subtree = selected.l
        outputs = dict(zip(T_t.leaves, selected.output, strict=True))
        if self.as_printed:
            d = dict(outputs)  # [001-alg3 L7] as printed: d(v, t) = C_v's output
        else:
            d = {v: y - self.last_output.get(v, 0.0) for v, y in outputs.items()}  # [001-alg3 L7] the increment
        extension = consistent_extension(self.partition, d)
        G_new = {v: g + extension[v] for v, g in self.G.items()}  # [001-alg3 L8] G <- G + Ext_T(d)
        release = TreeRelease(t, T_t, G_new)

        def counters_commit() -> None:
            selective_step.commit()
            self.last_output.update(outputs)

        return self._staged(release, G_new, true_step, counters_commit)
