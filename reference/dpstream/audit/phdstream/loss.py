"""Exact transcript probabilities and privacy losses of PrivTree and PHDStream (audits, proofs).

Written from the paper's description, independently of the streaming classes:

* PrivTree_T (001-alg5) selects S with probability
  prod_{v in S with children in T} P[b(v) + Lap(lambda) > theta]^{[v split]} P[... <= theta]^{[v leaf]},
  b(v) = max(F(v) - depth(v) delta, theta - delta) -- a product of Laplace tail probabilities
  (vertices at the maximum depth draw, but their draw decides nothing);
* one PHDStream step multiplies this by the Laplace densities of the leaf counts.

The exact privacy loss of neighbours F, F' is sup_S |log P[S | F] - log P[S | F']|. It is
computed by enumerating every subtree (tiny trees, :func:`enumerate_subtrees`) or by the
exact dynamic programme of :func:`privtree_sup_loss` (the log-ratio is a sum over the
vertices of S, so the best S is found bottom-up), which also handles the count part of a
PHDStream step (:func:`phdstream_step_sup_loss`).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Mapping

from dpstream.audit.exact import ExactLoss
from dpstream.phdstream.partition import Node, Partition
from dpstream.phdstream.privtree import Subtree
from dpstream.phdstream.tree_function import TreeFunction

__all__ = [
    "adversarial_past",
    "enumerate_subtrees",
    "laplace_log_cdf",
    "laplace_log_pdf",
    "laplace_log_sf",
    "phdstream_step_sup_loss",
    "privtree_decision_log_prob",
    "privtree_log_probability",
    "privtree_sup_loss",
]


def laplace_log_sf(a: float, lam: float) -> float:
    """log P[Lap(lambda) > a]."""
    if a >= 0:
        return -a / lam - math.log(2.0)
    return math.log1p(-0.5 * math.exp(a / lam))


def laplace_log_cdf(a: float, lam: float) -> float:
    """log P[Lap(lambda) <= a]."""
    return laplace_log_sf(-a, lam)


def laplace_log_pdf(z: float, scale: float) -> float:
    return -abs(z) / scale - math.log(2.0 * scale)


def biased_count(partition: Partition, F: Mapping[Node, float], v: Node, delta: float, theta: float) -> float:
    """b(v) of 001-alg5 L9-L10."""
    return max(F.get(v, 0.0) - partition.depth(v) * delta, theta - delta)


def privtree_decision_log_prob(b: float, lam: float, theta: float, split: bool) -> float:
    """log P[b + Lap(lambda) > theta] (split) or log P[b + Lap(lambda) <= theta] (leaf)."""
    return laplace_log_sf(theta - b, lam) if split else laplace_log_cdf(theta - b, lam)


def privtree_log_probability(partition: Partition, F: Mapping[Node, float], S: Subtree, lam: float, delta: float,
                             theta: float) -> float:
    """log P[PrivTree_T(F) = S] for scale ``lam``, bias ``delta`` and threshold ``theta``."""
    total = 0.0
    for v in S.nodes:
        children = partition.children(v)
        if not children:
            continue
        split = children[0] in S.nodes
        total += privtree_decision_log_prob(biased_count(partition, F, v, delta, theta), lam, theta, split)
    return total


def enumerate_subtrees(partition: Partition) -> Iterator[Subtree]:
    """Every subtree PrivTree can output (root present, each vertex split fully or not at all). Tiny trees only."""

    def grow(v: Node) -> Iterator[frozenset[Node]]:
        yield frozenset([v])
        children = partition.children(v)
        if children:
            for parts in itertools.product(*(list(grow(c)) for c in children)):
                yield frozenset([v]).union(*parts)

    for nodes in grow(partition.root):
        yield Subtree.from_nodes(partition, nodes)


def _relevant(partition: Partition, F: Mapping[Node, float], F2: Mapping[Node, float]) -> set[Node]:
    """Vertices where F and F2 differ, with all their ancestors (elsewhere both laws agree)."""
    out: set[Node] = set()
    for v in set(F) | set(F2):
        if F.get(v, 0.0) != F2.get(v, 0.0):
            out.add(v)
            out.update(v[:k] for k in range(len(v)))
    return out


def privtree_sup_loss(partition: Partition, F: Mapping[Node, float], F2: Mapping[Node, float], lam: float,
                      delta: float, theta: float, leaf_bonus: Mapping[Node, float] | None = None) -> float:
    """sup_S [log P[S | F] - log P[S | F2] + sum_{v in leaves(S)} leaf_bonus(v)], exactly.

    The log-ratio is a sum of per-vertex terms, so the best S is found bottom-up:
    best(v) = bonus(v) at depth D, else max(leaf term + bonus(v), split term + sum best(children)).
    Vertices where nothing differs contribute 0 (their subtrees are skipped).
    """
    bonus = leaf_bonus or {}
    relevant = _relevant(partition, F, F2) | set(bonus)
    for v in list(relevant):
        relevant.update(v[:k] for k in range(len(v)))

    def best(v: Node) -> float:
        if v not in relevant:
            return 0.0
        children = partition.children(v)
        own = bonus.get(v, 0.0)
        if not children:
            return own
        b1 = biased_count(partition, F, v, delta, theta)
        b2 = biased_count(partition, F2, v, delta, theta)
        leaf = (privtree_decision_log_prob(b1, lam, theta, False)
                - privtree_decision_log_prob(b2, lam, theta, False) + own)
        split = (privtree_decision_log_prob(b1, lam, theta, True)
                 - privtree_decision_log_prob(b2, lam, theta, True) + sum(best(c) for c in children))
        return max(leaf, split)

    return best(partition.root)


def phdstream_step_sup_loss(partition: Partition, inputs: Mapping[Node, float], inputs2: Mapping[Node, float],
                            dF: Mapping[Node, float], dF2: Mapping[Node, float], lam: float, delta: float,
                            theta: float, count_scale: float) -> ExactLoss:
    """Exact sup loss of one step: PrivTree on ``inputs`` vs ``inputs2`` and Lap(count_scale) leaf counts.

    For a fixed S the count part's sup is sum_{v in leaves(S)} |dF(v) - dF2(v)| / count_scale
    (independent Laplace coordinates), so it enters the programme as a leaf bonus. The loss is the larger of
    the two directions, ``parts["forward"]`` (sup_o log p(o | f) - log p(o | f')) and ``parts["backward"]``.
    """
    bonus = {v: abs(dF.get(v, 0.0) - dF2.get(v, 0.0)) / count_scale
             for v in set(dF) | set(dF2) if dF.get(v, 0.0) != dF2.get(v, 0.0)}
    forward = privtree_sup_loss(partition, inputs, inputs2, lam, delta, theta, bonus)
    backward = privtree_sup_loss(partition, inputs2, inputs, lam, delta, theta, bonus)
    return ExactLoss.exact(max(forward, backward), "forward" if forward >= backward else "backward",
                           {"forward": forward, "backward": backward})


def adversarial_past(partition: Partition, leaf: Node, dF: Mapping[Node, float], delta: float,
                     theta: float) -> TreeFunction:
    """A reachable G(., tau-1) that puts every split decision of ``leaf``'s path at b = theta - 1 at time tau.

    G(v_i) + nabla F(v_i, tau) = theta - 1 + i delta for the path vertices v_0 (root), ..., v_D: G is
    built from leaf values (one leaf under one sibling of each v_i carries the difference), so it is
    Ext_T of leaf values, i.e. the G of the past transcript "T(tau-1) = T, d(., tau-1) = these values",
    which has positive density (Laplace noise has full support). Not path-monotone: the siblings
    carry negative values. Needs delta >= 2 for theta - 1 >= theta - delta + 1.
    """
    D = partition.max_depth
    path = [leaf[:i] for i in range(D + 1)]
    target = [theta - 1.0 + i * delta - dF.get(v, 0.0) for i, v in enumerate(path)]
    leaves: dict[Node, float] = {leaf: target[D]}
    for i in range(1, D + 1):
        sibling = (*leaf[: i - 1], (leaf[i - 1] + 1) % partition.beta)
        below = sibling + (0,) * (D - i)
        leaves[below] = leaves.get(below, 0.0) + target[i - 1] - target[i]
    G: TreeFunction = {}
    for v, x in leaves.items():
        for k in range(len(v) + 1):
            G[v[:k]] = G.get(v[:k], 0.0) + x
    return G
