"""The privacy claims of the PHDStream algorithms and their exact worst-case losses.

One time step of PHDStreamTree (001-alg1, 001-alg3 with Simple counters, 001-alg6/7) runs
PrivTree_T on G(., t-1) + nabla F(., t) with budget eps/2 and adds Laplace noise of scale
``count_scale`` (2/eps by default) to the count of every leaf of T(t). Under the EVENT
relation (one point added or removed at one time tau) only step tau sees different inputs:
nabla F(., tau) moves by 1 along one root-to-leaf path of T.

Worst case of that step over all inputs and outputs (proofs/proof_privtree.py,
proofs/proof_phdstream.py, and the exact-loss audits):

* tree: at most D / lambda (each of the D split decisions on the path moves by at most
  1/lambda), attained when delta >= 1 and every split decision on the path sits at b(v) in
  [theta - delta + 1, theta] -- possible because G(., t-1) + nabla F(., t) need not be
  path-monotone (E-phdstream-3);
* counts: 1 / count_scale (the leaf of T(tau) that holds the point).

With the default ``LambdaRule.GENERAL`` (lambda = 2D/eps) the sum is eps/2 + eps/2 = eps.
"""

from __future__ import annotations

from dpstream.claims import Neighbour, PrivacyClaim
from dpstream.errors import require_positive_finite
from dpstream.phdstream.partition import Partition
from dpstream.phdstream.privtree import LambdaRule, privtree_scales

__all__ = [
    "phdstream_claim",
    "phdstream_note",
    "phdstream_paper_claim",
    "privtree_worst_case_loss",
    "step_worst_case_loss",
]


def privtree_worst_case_loss(partition: Partition, lam: float) -> float:
    """sup over F, F' in C(T) at C(T)-distance 1 (one point) and over outputs S: D / lambda (0 if D = 0)."""
    return partition.max_depth / lam


def step_worst_case_loss(partition: Partition, epsilon: float, rule: LambdaRule,
                         count_scale: float | None = None, tree_epsilon: float | None = None) -> float:
    """Worst-case loss of one PHDStream step: tree part D/lambda plus count part 1/count_scale."""
    epsilon = require_positive_finite("epsilon", epsilon)
    lam, _ = privtree_scales(partition, epsilon / 2.0 if tree_epsilon is None else tree_epsilon, rule)
    scale = 2.0 / epsilon if count_scale is None else require_positive_finite("count_scale", count_scale)
    return privtree_worst_case_loss(partition, lam) + 1.0 / scale


def phdstream_note(partition: Partition, epsilon: float, rule: LambdaRule, count_scale: float | None = None,
                   tree_epsilon: float | None = None) -> str:
    """What the claim's note says: where eps holds, or (for the printed scales) that only the worst case does.

    The worst case is an upper bound over all inputs, attained when delta >= 1 (then every split
    decision on the path can sit at b = theta - 1 for one neighbour and b = theta for the other, as
    in :func:`dpstream.audit.phdstream.loss.adversarial_past`).
    """
    worst = step_worst_case_loss(partition, epsilon, rule, count_scale, tree_epsilon)
    if worst <= epsilon * (1 + 1e-12):
        if rule is LambdaRule.GENERAL:
            return "PrivTree scale lambda = 2D/eps (E-phdstream-3): holds for every input stream"
        return (f"lambda rule {rule.value!r}: holds here because D = {partition.max_depth} is small "
                f"(worst case {worst / epsilon:.4g} eps; E-phdstream-3)")
    return (f"AS PRINTED (lambda rule {rule.value!r}): the paper's eps = {epsilon:g} does NOT hold; the worst "
            f"case over all input streams is {worst / epsilon:.4g} eps (D = {partition.max_depth}; E-phdstream-3)")


def phdstream_claim(partition: Partition, epsilon: float, rule: LambdaRule, source: str = "001-thm3.2",
                    count_scale: float | None = None, tree_epsilon: float | None = None) -> PrivacyClaim:
    """What one PHDStream instance meets (EVENT): eps, or the worst case when the rule does not meet eps."""
    epsilon = require_positive_finite("epsilon", epsilon)
    note = phdstream_note(partition, epsilon, rule, count_scale, tree_epsilon)
    worst = step_worst_case_loss(partition, epsilon, rule, count_scale, tree_epsilon)
    return PrivacyClaim.pure(max(epsilon, worst), Neighbour.EVENT, source, note=note)


def phdstream_paper_claim(epsilon: float, source: str = "001-thm3.2") -> PrivacyClaim:
    """001-thm3.2 as stated: PHDStream is eps-DP (one event added or removed at one time)."""
    return PrivacyClaim.pure(require_positive_finite("epsilon", epsilon), Neighbour.EVENT, source,
                             note="as stated by the paper")
