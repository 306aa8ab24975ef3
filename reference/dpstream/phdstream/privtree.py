"""PrivTree_T (001-alg5, Appendix A) and the choice of its noise scale lambda.

``privtree(partition, F, epsilon, theta, noise=noise)`` grows a subtree S of T breadth first:
every visited vertex v gets the biased count b(v) = max(F(v) - depth(v) delta, theta - delta)
plus Lap(lambda), and its children are visited iff the noisy value exceeds theta.

The scale lambda (001-alg5 L3) -- three rules, see docs/errata/phdstream.md E-phdstream-3/4
--------------------------------------------------------------------------------------------
The Appendix A proof bounds the loss by (1/lambda) (2 e^{delta/lambda} - 1)/(e^{delta/lambda} - 1)
= (2 beta - 1) / ((beta - 1) lambda) (with delta = lambda ln beta), using
F(child) <= F(parent) along the path of the changed point ("path-monotone" F, true when
F counts points, f >= 0). Three scales:

* ``LambdaRule.PRINTED`` -- L3 as printed: lambda = (2b-1)/(b-1) * 2/eps. By the proof's own
  algebra this is eps/2-DP on path-monotone inputs: the printed lambda is twice what the
  proof needs (E-phdstream-4).
* ``LambdaRule.PROOF`` -- lambda = (2b-1)/((b-1) eps): what the proof needs for eps on
  path-monotone inputs (what Algorithm 6 L3 and the authors' code use for eps/2).
* ``LambdaRule.GENERAL`` (default) -- lambda = D/eps (D = max depth of T, at least 1). Theorem
  3.1 states eps-DP in the C(T) norm for *every* F in C(T); consistent functions need not be
  path-monotone (negative values, e.g. G(., t-1) + nabla F(., t) in PHDStream: noisy G,
  deletions in nabla F), and then each of the <= D split decisions on the changed path can
  lose 1/lambda, and this is attained (exact-loss audit, proofs/proof_privtree.py). With
  lambda = D/eps the theorem holds as stated. (delta = lambda ln beta in every rule.)

Sites: the draw of L11 at vertex v is ``site("001-alg5 L11", t=t, v=node_label(v))`` (``t``
omitted for a one-off run). Algorithm 7 L15 draws at the same site, so that a tape of the
naive PHDStream replays through the compute-efficient one (001-alg6, section C.1).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import KW_ONLY, dataclass
from enum import StrEnum

from dpstream.arithmetic import FUNCTION_ULPS, above, gamma, kernel
from dpstream.claims import Neighbour, PrivacyClaim
from dpstream.convention import convention
from dpstream.errors import DPStreamInputError, require_finite_real, require_positive_finite
from dpstream.noise import DrawKind, NoiseSource, default_noise, require_drawable, site
from dpstream.phdstream.partition import Node, Partition, node_label
from dpstream.phdstream.tree_function import consistency_violations, require_tree_function
from dpstream.staged import order_free

__all__ = [
    "LambdaRule",
    "PrivTree",
    "Subtree",
    "privtree",
    "privtree_by_level",
    "privtree_claim",
    "privtree_for",
    "privtree_scales",
    "privtree_site",
    "require_theta",
]

PRIVTREE_DRAW = "001-alg5 L11"


class LambdaRule(StrEnum):
    """How 001-alg5 L3 turns the budget eps into the scale lambda (module docstring)."""

    GENERAL = "general"
    """lambda = D / eps: eps-DP for every F in C(T) (default)."""
    PROOF = "proof"
    """lambda = (2 beta - 1) / ((beta - 1) eps): eps-DP for path-monotone F only (Appendix A)."""
    PRINTED = "printed"
    """lambda = (2 beta - 1) / (beta - 1) * 2 / eps: 001-alg5 L3 as printed."""


def privtree_scales(partition: Partition, epsilon: float, rule: LambdaRule = LambdaRule.GENERAL) -> tuple[float, float]:
    """(lambda, delta) of 001-alg5 L3 for budget ``epsilon`` under ``rule``; delta = lambda ln beta."""
    epsilon = require_positive_finite("epsilon", epsilon)
    beta = partition.beta
    if rule is LambdaRule.PRINTED:
        lam = (2 * beta - 1) / (beta - 1) * (2.0 / epsilon)
    elif rule is LambdaRule.PROOF:
        lam = (2 * beta - 1) / ((beta - 1) * epsilon)
    elif rule is LambdaRule.GENERAL:
        lam = max(partition.max_depth, 1) / epsilon
    else:  # pragma: no cover
        raise DPStreamInputError("lambda_rule", "must be a LambdaRule", rule)
    return lam, lam * kernel().log_scalar(beta)


def splits(b_tilde: float, b: float, theta: float, delta: float, depth: int, *, decides: bool = True) -> bool:
    """001-alg5 L12 (and 001-alg7 L16): b~(v) > theta, noted as a decision (``dpstream.arithmetic.above``).

    b~ = max(F(v) - depth delta, theta - delta) + z is a few operations on F(v), theta, z and delta = lambda ln beta
    (a logarithm): band 2 (gamma(4) (|b~| + |b| + depth |delta| + |theta| + |delta|) + gamma(FUNCTION_ULPS + 3) depth
    |delta|); F(v) itself is computed from the stream's sums inside the streams, so the case's release bound adds to
    it (``inherits``). A vertex at depth D has no children: its comparison decides nothing (``decides=False``) and
    is not noted."""
    if not decides:
        return b_tilde > theta
    size = abs(b_tilde) + abs(b) + depth * abs(delta) + abs(theta) + abs(delta)
    band = 2.0 * (gamma(4) * size + gamma(FUNCTION_ULPS + 3) * depth * abs(delta))
    return above("001-alg5 L12 b~(v) > theta", b_tilde, theta, band, inherits=True)


def require_theta(theta: object) -> float:
    """theta >= 0 (Theorem 3.1 is stated for theta >= 0)."""
    value = require_finite_real("theta", theta)
    if value < 0.0:
        raise DPStreamInputError("theta", "must be >= 0", theta)
    return value


def privtree_claim(partition: Partition, epsilon: float, rule: LambdaRule = LambdaRule.GENERAL) -> PrivacyClaim:
    """What PrivTree_T(., eps, theta) under ``rule`` meets for every F in C(T) (one point changed).

    eps when the worst case D / lambda over all F in C(T) is at most eps (always for the default
    ``LambdaRule.GENERAL``); otherwise the parameter is that worst case, and the note says that the
    paper's eps holds only for path-monotone F such as counts. The paper's statement is
    :func:`privtree_paper_claim`.
    """
    epsilon = require_positive_finite("epsilon", epsilon)
    lam, _ = privtree_scales(partition, epsilon, rule)
    worst = partition.max_depth / lam
    notes = {
        LambdaRule.GENERAL: "in the C(T) norm, for every F in C(T): lambda = D/eps (E-phdstream-3)",
        LambdaRule.PROOF: "App. A scale: eps holds for path-monotone F (F(child) <= F(parent), e.g. counts)",
        LambdaRule.PRINTED: "001-alg5 L3 as printed (E-phdstream-4): eps/2 on path-monotone F (e.g. counts)",
    }
    if worst <= epsilon * (1 + 1e-12):
        return PrivacyClaim.pure(epsilon, Neighbour.EVENT, "001-thm3.1", note=notes[rule])
    note = (f"{notes[rule]}; for general F in C(T) (e.g. inside PHDStream) only the worst case "
            f"D/lambda = {worst:.6g} holds, not the paper's eps = {epsilon:g} (E-phdstream-3)")
    return PrivacyClaim.pure(worst, Neighbour.EVENT, "001-thm3.1", note=note)


def privtree_paper_claim(epsilon: float) -> PrivacyClaim:
    """001-thm3.1 as stated: eps-DP in the C(T) norm for any theta >= 0."""
    return PrivacyClaim.pure(require_positive_finite("epsilon", epsilon), Neighbour.EVENT, "001-thm3.1",
                             note="as stated by the paper")


def privtree_site(v: Node, t: int | None = None) -> str:
    """The site of the L11 draw at vertex v (at time t inside a stream)."""
    if t is None:
        return site(PRIVTREE_DRAW, v=node_label(v))
    return site(PRIVTREE_DRAW, t=t, v=node_label(v))


@dataclass(frozen=True)
class Subtree:
    """A subtree S of T that contains the root and, with every vertex it splits, all its children."""

    nodes: frozenset[Node]
    leaves: tuple[Node, ...]

    @classmethod
    def from_nodes(cls, partition: Partition, nodes: Iterable[Node]) -> Subtree:
        node_set = frozenset(nodes)
        leaves = tuple(sorted((v for v in node_set if not any(c in node_set for c in partition.children(v))),
                              key=lambda u: (len(u), u)))
        return cls(node_set, leaves)

    def is_valid(self, partition: Partition) -> bool:
        """Root present, parents present, and every vertex has either all its children in S or none."""
        if () not in self.nodes or not all(partition.is_node(v) for v in self.nodes):
            return False
        for v in self.nodes:
            if v and v[:-1] not in self.nodes:
                return False
            inside = [c in self.nodes for c in partition.children(v)]
            if any(inside) and not all(inside):
                return False
        return True

    def internal(self) -> list[Node]:
        leaf_set = set(self.leaves)
        return sorted((v for v in self.nodes if v not in leaf_set), key=lambda u: (len(u), u))

    def __len__(self) -> int:
        return len(self.nodes)


@convention(("partition", "F", "epsilon", "theta", "noise"))
def privtree(
    partition: Partition,
    F: Mapping[Node, float],
    epsilon: float,
    theta: float,
    *,
    noise: NoiseSource | None = None,
    t: int | None = None,
    lambda_rule: LambdaRule = LambdaRule.GENERAL,
    check_input: bool = True,
) -> Subtree:
    """001-alg5: PrivTree_T(F, eps, theta) -> subtree S. Absent vertices of F count as 0.

    ``check_input`` validates F (vertices, finite values, consistency (6)); callers that built
    F themselves from consistent pieces may skip the O(|F|) check.
    """
    # [001-alg5 L1] Input: F in C(T), the privacy budget eps, the threshold count theta
    # [001-alg5 L2] Output: a subset S of the tree T
    theta = require_theta(theta)
    F = _checked(partition, F, check_input)
    noise = default_noise() if noise is None else noise
    lam, delta = privtree_scales(partition, epsilon, lambda_rule)  # [001-alg5 L3]
    S: list[Node] = []  # [001-alg5 L4]
    U: deque[Node] = deque([partition.root])  # [001-alg5 L5] U: the un-visited vertices
    while U:  # [001-alg5 L6] for v in U
        v = U.popleft()
        S.append(v)  # [001-alg5 L7]
        # [001-alg5 L8] U <- U \ {v}: done by popleft
        b = F.get(v, 0.0) - partition.depth(v) * delta  # [001-alg5 L9]
        b = max(b, theta - delta)  # [001-alg5 L10]
        # PrivTree's proof noises the biased COUNT b(v) (theta is public and compared afterwards): value-in
        b_tilde = noise.add_laplace(privtree_site(v, t), b, lam)  # [001-alg5 L11]
        depth = partition.depth(v)
        if splits(b_tilde, b, theta, delta, depth, decides=depth < partition.max_depth):  # [001-alg5 L12]
            U.extend(partition.children(v))  # [001-alg5 L13] (none at depth D)
    return Subtree.from_nodes(partition, S)


def _checked(partition: Partition, F: Mapping[Node, float], check_input: bool) -> Mapping[Node, float]:
    if check_input:
        F = require_tree_function(partition, F)
        bad = consistency_violations(partition, F)
        if bad:
            raise DPStreamInputError("F", "must be consistent (6): F(v) = sum of F over children(v)", bad[0])
    return F


def privtree_by_level(
    partition: Partition,
    F: Mapping[Node, float],
    epsilon: float,
    theta: float,
    *,
    noise: NoiseSource | None = None,
    t: int | None = None,
    lambda_rule: LambdaRule = LambdaRule.GENERAL,
    check_input: bool = True,
) -> Subtree:
    """:func:`privtree` a level at a time: the same subtree, draws, sites and draw order, one batch call per level.

    U is a FIFO queue and a vertex's children are appended when it is visited, so :func:`privtree` visits
    depth 0, then all of depth 1, ...; the L11 draws of one level depend only on the previous level's
    outcomes, so the draws of a level are made in one ``add_laplace_many`` call (one OpenDP vector call in
    the secure source), in the order the line-by-line loop makes them. A test checks it against
    :func:`privtree` under one tape (``tests/test_staged.py``).
    """
    theta = require_theta(theta)
    F = _checked(partition, F, check_input)
    noise = default_noise() if noise is None else noise
    lam, delta = privtree_scales(partition, epsilon, lambda_rule)
    S: list[Node] = []
    level: list[Node] = [partition.root]
    while level:
        S.extend(level)
        b = [max(F.get(v, 0.0) - partition.depth(v) * delta, theta - delta) for v in level]
        b_tilde = noise.add_laplace_many([privtree_site(v, t) for v in level], b, lam).tolist()
        level = [c for v, noisy, bv in zip(level, b_tilde, b, strict=True)
                 if splits(noisy, bv, theta, delta, len(v), decides=len(v) < partition.max_depth)
                 for c in partition.children(v)]
    return Subtree.from_nodes(partition, S)


def privtree_for(noise: NoiseSource) -> Callable[..., Subtree]:
    """:func:`privtree_by_level` for an order-free source (batched draws), else the line-by-line :func:`privtree`."""
    return privtree_by_level if order_free(noise) else privtree


@convention(("partition", "epsilon", "theta", "lambda_rule"))
@dataclass(frozen=True)
class PrivTree:
    """PrivTree_T with fixed parameters: ``run(F, noise=...)`` and the instance's :attr:`claim`."""

    partition: Partition
    epsilon: float
    theta: float = 0.0
    _: KW_ONLY
    lambda_rule: LambdaRule = LambdaRule.GENERAL

    def __post_init__(self) -> None:
        require_positive_finite("epsilon", self.epsilon)
        require_theta(self.theta)
        require_drawable("epsilon", self.epsilon, DrawKind.LAPLACE, scale=self.scales[0])

    @property
    def scales(self) -> tuple[float, float]:
        return privtree_scales(self.partition, self.epsilon, self.lambda_rule)

    @property
    def claim(self) -> PrivacyClaim:
        return privtree_claim(self.partition, self.epsilon, self.lambda_rule)

    @property
    def paper_claim(self) -> PrivacyClaim:
        return privtree_paper_claim(self.epsilon)

    @convention(("F", "noise"), ("F", "noise", "t"))
    def run(self, F: Mapping[Node, float], *, noise: NoiseSource | None = None, t: int | None = None) -> Subtree:
        source = default_noise() if noise is None else noise
        return privtree_for(source)(self.partition, F, self.epsilon, self.theta, noise=source, t=t,
                                    lambda_rule=self.lambda_rule)
