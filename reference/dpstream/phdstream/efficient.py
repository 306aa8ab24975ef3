"""Compute-efficient PHDStream (001-alg6) with the modified PrivTree subroutine (001-alg7).

Algorithm 1/3 keep G on all of V(T); Algorithm 6/7 touch only the vertices of the selected
subtree T(t). Three maps on V(T) (0 when absent; 001-eq10-11) replace G:

* C_n(v): the total of the counts assigned to v while v was a leaf (the output of v's counter);
* C_a(v) = (C_a(parent) + C_n(parent)) / beta: what v received from its ancestors (10);
* C_d(v) = sum over children w of (C_d(w) + C_n(w)): what v received from its descendants (11);

and G(v, t) = C_a(v) + C_n(v) + C_d(v) on the vertices of T(t). Per step the work is
O(|T(t)|) plus O(n_t D) to bucket the n_t points of the batch by their leaf paths (L10).

Equivalence with the naive algorithm (section C.1, proofs/proof_efficient_equivalence.py):
fed the same stream and the same noise tape, this class releases the same trees and node
values as :class:`~dpstream.phdstream.counters_tree.PHDStreamTreeWithCounters` wrapped by
:class:`~dpstream.phdstream.phdstream.PHDStream` with the same counter factory (a property
test checks it). For that the draws share their sites: Algorithm 7 L15 draws at
``"001-alg5 L11 t=<t> v=<v>"`` (the PrivTree draw it replaces) and L20 steps the same
per-vertex counter, scoped ``"001-alg3 L7 v=<v>"``; rule (5) samples at ``"001-eq5 t=<t> v=<v>"``.

L20 with counters: C_n(v) is the running output of C_v, so C_n(v) <- C_v(H(v)); with the
Simple counter of budget e this is C_n(v) + H(v) + Lap(1/e), the printed line.

Defaults vs. as printed (E-phdstream-6):

* default: lambda, delta from PrivTree at eps/2 under ``lambda_rule`` (as Algorithm 1 L5 calls it)
  and counters with budget eps/2 (Lap(2/eps) for Simple, as Algorithm 1 L6 and the Appendix C
  text): the naive algorithm's exact behaviour;
* ``as_printed=True``: L3 computes lambda = (2b-1)/(b-1) * 2/eps with the full eps and L20 adds
  Lap(2/eps') with eps' = eps/2, i.e. Lap(4/eps) (counters with budget eps/4): not the same
  algorithm as Algorithm 1 as printed, contrary to section C.1.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping

from dpstream.arithmetic import kernel
from dpstream.claims import PrivacyClaim
from dpstream.convention import convention
from dpstream.noise import NoiseSource
from dpstream.phdstream.counters_tree import CounterFactory, NodeCounters, simple_counter_factory
from dpstream.phdstream.guarantees import phdstream_claim
from dpstream.phdstream.partition import Node, Partition
from dpstream.phdstream.phdstream_tree import PHDStreamParameters
from dpstream.phdstream.privtree import LambdaRule, Subtree, privtree_scales, privtree_site, splits
from dpstream.phdstream.stream import PointEvents, SyntheticRelease, TrueStream, require_synthetic_scale, sample_rule5
from dpstream.staged import Staged, order_free, run_all

__all__ = ["EfficientPHDStream"]


@convention(("partition", "epsilon", "theta", "noise"))
class EfficientPHDStream(PHDStreamParameters):
    """001-alg6/alg7. ``step(PointEvents) -> SyntheticRelease``; per-step work O(|T(t)|)."""

    anchor = "001-alg6"
    paper_source = "001-alg6"

    def __init__(self, partition: Partition, epsilon: float, theta: float = 0.0, *,
                 noise: NoiseSource | None = None, counter: CounterFactory = simple_counter_factory,
                 lambda_rule: LambdaRule = LambdaRule.GENERAL, as_printed: bool = False) -> None:
        # [001-alg6 L1] Input: stream f, a fixed known tree T, privacy budget eps, threshold count theta
        # [001-alg6 L2] Output: a synthetic data stream g
        super().__init__(partition, epsilon, theta, noise, lambda_rule)
        require_synthetic_scale(epsilon, 4.0 / self.epsilon)  # the counters' largest scale (printed: eps/4)
        self.as_printed = as_printed
        beta = partition.beta
        if as_printed:
            self.lam = (2 * beta - 1) / (beta - 1) * (2.0 / self.epsilon)  # [001-alg6 L3] as printed (full eps)
            self.delta = self.lam * kernel().log_scalar(beta)  # [001-alg6 L3]
        else:
            self.lam, self.delta = privtree_scales(partition, self.epsilon / 2.0, self.lambda_rule)  # [001-alg6 L3]
        self.epsilon_prime = self.epsilon / 2.0  # eps' of Algorithm 7, passed by [001-alg6 L6]
        counter_budget = self.epsilon_prime / 2.0 if as_printed else self.epsilon / 2.0
        self.counters = NodeCounters(counter, counter_budget, self.noise)
        # [001-alg6 L4] C_a, C_n, C_d: 0 on every vertex (absent keys), shared with Algorithm 7
        self.C_a: dict[Node, float] = {}
        self.C_n: dict[Node, float] = {}
        self.C_d: dict[Node, float] = {}
        self.t = 0
        self.releases: list[SyntheticRelease] = []
        self.visited_per_step: list[int] = []
        self._true = TrueStream(partition)

    @property
    def claim(self) -> PrivacyClaim:
        if self.as_printed:
            return phdstream_claim(self.partition, self.epsilon, LambdaRule.PROOF, source="001-alg6",
                                   count_scale=4.0 / self.epsilon)
        return phdstream_claim(self.partition, self.epsilon, self.lambda_rule, source="001-alg6")

    def s(self, v: Node) -> float:
        """The synthetic count s(v) = C_a(v) + C_n(v) + C_d(v) (valid for v in the last T(t))."""
        return self.C_a.get(v, 0.0) + self.C_n.get(v, 0.0) + self.C_d.get(v, 0.0)

    def step(self, batch: PointEvents) -> SyntheticRelease:
        """One time step; a bad batch raises before any draw, a failing draw leaves the state unchanged."""
        prepared = self._true.stage(batch)
        t = self.t + 1  # [001-alg6 L5] for every time t
        algorithm7 = self._algorithm7_by_level if order_free(self.noise) else self._algorithm7
        T_t, C_a, C_n, C_d, counter_steps = algorithm7(  # [001-alg6 L6] T(t) <- Algorithm 7(nabla f, delta, ...)
            prepared.release.dF, self.delta, self.theta, self.lam, self.epsilon_prime, t)

        def s_new(v: Node) -> float:
            return (C_a.get(v, self.C_a.get(v, 0.0)) + C_n.get(v, self.C_n.get(v, 0.0))
                    + C_d.get(v, self.C_d.get(v, 0.0)))

        G = {v: s_new(v) for v in T_t.leaves}  # [001-alg6 L7] G(v) <- C_a + C_n + C_d on leaves(T(t))
        counts, points = sample_rule5(self.partition, G, self.noise, t)  # [001-alg6 L8] g(., t) by (5)
        release = SyntheticRelease(t, T_t, G, counts, points, {v: s_new(v) for v in T_t.nodes})
        # commit (no draws below)
        for p in counter_steps:
            p.commit()
        self.C_a.update(C_a)
        self.C_n.update(C_n)
        self.C_d.update(C_d)
        prepared.commit()
        self.t = t
        self.visited_per_step.append(len(T_t))
        self.releases.append(release)
        return release

    def _algorithm7(self, h: Mapping[Node, float], delta: float, theta: float, lam: float, eps_prime: float, t: int
                    ) -> tuple[Subtree, dict[Node, float], dict[Node, float], dict[Node, float], list[Staged[float]]]:
        """001-alg7 into local overlays of C_a, C_n, C_d (committed by the caller)."""
        # [001-alg7 L1] Input: h (counts in Omega: here nabla f(., t) by (4)), delta, theta, lambda, eps'
        # [001-alg7 L2] Output: a subtree T* of T
        # (eps' fixes the counters' budget, set at construction: see the module docstring)
        part = self.partition
        C_a: dict[Node, float] = {}
        C_n: dict[Node, float] = {}
        C_d: dict[Node, float] = {}

        def get(local: dict[Node, float], shared: dict[Node, float], v: Node) -> float:
            return local.get(v, shared.get(v, 0.0))

        counter_steps: list[Staged[float]] = []
        T_star: list[Node] = []  # [001-alg7 L3]
        Q: deque[Node] = deque()  # [001-alg7 L4] queue (FIFO) of un-visited vertices
        Q.append(part.root)  # [001-alg7 L5]
        S: list[Node] = []  # [001-alg7 L6] stack (LIFO)
        while Q:  # [001-alg7 L7]
            v = Q.popleft()  # [001-alg7 L8]
            T_star.append(v)  # [001-alg7 L9]
            H = h.get(v, 0.0)  # [001-alg7 L10] H(v) by (4): h is bucketed by leaf path once per step
            if v:  # [001-alg7 L11] ancestor consistency; the root has no parent: C_a(root) stays 0
                p = v[:-1]
                C_a[v] = (get(C_a, self.C_a, p) + get(C_n, self.C_n, p)) / part.beta
            s = get(C_a, self.C_a, v) + get(C_n, self.C_n, v) + get(C_d, self.C_d, v)  # [001-alg7 L12]
            b = s + H - part.depth(v) * delta  # [001-alg7 L13]
            b = max(b, theta - delta)  # [001-alg7 L14]
            # as in PrivTree (001-alg5 L11, the same site): the biased count b(v) is noised (value-in), not theta
            b_hat = self.noise.add_laplace(privtree_site(v, t), b, lam)  # [001-alg7 L15]
            children = part.children(v)
            if children and splits(b_hat, b, theta, delta, part.depth(v)):  # [001-alg7 L16]
                Q.extend(children)  # [001-alg7 L17]
                S.append(v)  # [001-alg7 L18]
            else:
                step = self.counters.get(v).stage(H)  # [001-alg7 L20] C_n(v) <- C_n(v) + H(v) + Lap(.)
                counter_steps.append(step)
                C_n[v] = step.release
        while S:  # [001-alg7 L23]
            v = S.pop()  # [001-alg7 L24]
            C_d[v] = kernel().total(get(C_d, self.C_d, w) + get(C_n, self.C_n, w)  # [001-alg7 L25] descendant
                                    for w in part.children(v))                  # consistency
        return Subtree.from_nodes(part, T_star), C_a, C_n, C_d, counter_steps

    def _algorithm7_by_level(self, h: Mapping[Node, float], delta: float, theta: float, lam: float,
                             eps_prime: float, t: int
                             ) -> tuple[Subtree, dict[Node, float], dict[Node, float], dict[Node, float],
                                        list[Staged[float]]]:
        """:meth:`_algorithm7` with batched draws (for an order-free source): the same subtree, sites and values.

        Q is FIFO, so the loop visits T(t) level by level, and the L15 draws of one level depend only on the
        levels above (C_a(v) reads its parent, which is split, so its C_n is not changed in this step): they
        are one ``add_laplace_many`` call per level. The L20 counter steps of the leaves change only C_n of
        leaves, which no later vertex of this step reads before L23: they are staged together at the end
        (``dpstream.staged.run_all``, one batched call per round). Checked against :meth:`_algorithm7` under one
        tape (``tests/test_staged.py``).
        """
        part = self.partition
        C_a: dict[Node, float] = {}
        C_n: dict[Node, float] = {}
        C_d: dict[Node, float] = {}
        T_star: list[Node] = []
        split: list[Node] = []
        leaves: list[Node] = []
        level: list[Node] = [part.root]
        while level:
            T_star.extend(level)
            b = []
            for v in level:
                if v:  # ancestor consistency (L11); the root has no parent
                    p = v[:-1]
                    C_a[v] = (C_a.get(p, self.C_a.get(p, 0.0)) + C_n.get(p, self.C_n.get(p, 0.0))) / part.beta
                s = C_a.get(v, self.C_a.get(v, 0.0)) + self.C_n.get(v, 0.0) + self.C_d.get(v, 0.0)  # L12
                b.append(max(s + h.get(v, 0.0) - part.depth(v) * delta, theta - delta))  # L13-L14
            b_hat = self.noise.add_laplace_many([privtree_site(v, t) for v in level], b, lam).tolist()  # L15
            below: list[Node] = []
            for v, noisy, bv in zip(level, b_hat, b, strict=True):
                children = part.children(v)
                if children and splits(noisy, bv, theta, delta, part.depth(v)):  # L16-L18
                    below.extend(children)
                    split.append(v)
                else:
                    leaves.append(v)
            level = below
        counter_steps = run_all([self.counters.get(v).staging(h.get(v, 0.0)) for v in leaves], True)  # L20
        C_n.update((v, step.release) for v, step in zip(leaves, counter_steps, strict=True))
        for v in reversed(split):  # L23-L25: the stack S pops the split vertices in reverse visiting order
            C_d[v] = kernel().total(C_d.get(w, self.C_d.get(w, 0.0)) + C_n.get(w, self.C_n.get(w, 0.0))
                                    for w in part.children(v))
        return Subtree.from_nodes(part, T_star), C_a, C_n, C_d, counter_steps

    def work_log(self) -> list[int]:
        """Vertices visited per step (= |T(t)|): the per-step work, independent of |V(T)|."""
        return list(self.visited_per_step)
