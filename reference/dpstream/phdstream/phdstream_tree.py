"""PHDStreamTree (001-alg1): a DP stream G in C(T) from a stream F in C(T).

At every time t: T(t) <- PrivTree_T(G(., t-1) + nabla F(., t), eps/2, theta) (L5); the
leaves of T(t) get their differential count plus Lap(2/eps) (L6); the consistent extension
of these leaf values is added to G (L7). This is the *naive* algorithm: it keeps G on all
of V(T) (beta^(D+1) vertices), so it is meant for small trees and as the ground truth of
the compute-efficient Algorithm 6/7 (:mod:`dpstream.phdstream.efficient`).

Claim (001-thm3.2): eps-DP under the EVENT relation, exactly for the default PrivTree scale
(``LambdaRule.GENERAL``, E-phdstream-3); :func:`dpstream.phdstream.guarantees.phdstream_claim`.
Proof: proofs/proof_phdstream.py (with proofs/proof_privtree.py for the PrivTree part).

Sites: PrivTree ``"001-alg5 L11 t=<t> v=<v>"``, leaf noise ``"001-alg1 L6 t=<t> v=<v>"``.
Input: ``step(nabla_F)`` with nabla F(., t) a consistent tree function (absent vertices 0),
validated before any draw (:class:`dpstream.phdstream.stream.TrueTreeCounts`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import ClassVar

from dpstream.claims import PrivacyClaim
from dpstream.convention import convention
from dpstream.errors import require_positive_finite
from dpstream.noise import DrawKind, NoiseSource, default_noise, require_drawable, site
from dpstream.phdstream.guarantees import phdstream_claim, phdstream_paper_claim
from dpstream.phdstream.partition import Node, Partition, node_label
from dpstream.phdstream.privtree import LambdaRule, privtree_for, privtree_scales, require_theta
from dpstream.phdstream.stream import TreeRelease, TrueTreeCounts
from dpstream.phdstream.tree_function import TreeFunction, consistent_extension
from dpstream.staged import Staged

__all__ = ["NaiveTreeStream", "PHDStreamParameters", "PHDStreamTree"]

LEAF_NOISE = "001-alg1 L6"


class PHDStreamParameters:
    """The inputs every PHDStream variant takes (001-alg1 L1, 001-alg3 L1, 001-alg6 L1): T, eps, theta, the
    PrivTree scale rule and the noise source, validated before anything else happens."""

    def __init__(self, partition: Partition, epsilon: float, theta: float, noise: NoiseSource | None,
                 lambda_rule: LambdaRule) -> None:
        self.partition = partition
        self.epsilon = require_positive_finite("epsilon", epsilon)
        self.theta = require_theta(theta)
        self.lambda_rule = LambdaRule(lambda_rule)
        # the largest noise scale a variant draws with: PrivTree's lambda at eps/2 (any rule), the counts' 4/eps
        largest = max(4.0 / self.epsilon, *(privtree_scales(partition, self.epsilon / 2.0, r)[0] for r in LambdaRule))
        require_drawable("epsilon", epsilon, DrawKind.LAPLACE, scale=largest)
        self.noise: NoiseSource = default_noise() if noise is None else noise

    paper_source: ClassVar[str] = "001-thm3.2"

    @property
    def paper_claim(self) -> PrivacyClaim:
        """What the paper states (eps-DP, EVENT); :attr:`claim` says what this instance really meets."""
        return phdstream_paper_claim(self.epsilon, self.paper_source)


class NaiveTreeStream(PHDStreamParameters):
    """What the naive Algorithms 1 and 3 share: G on all of V(T), the true counts, the two-phase step."""

    def __init__(self, partition: Partition, epsilon: float, theta: float, noise: NoiseSource | None,
                 lambda_rule: LambdaRule) -> None:
        super().__init__(partition, epsilon, theta, noise, lambda_rule)
        self.G: dict[Node, float] = {v: 0.0 for v in partition.nodes()}  # G(v, 0) = 0 (L3 of both boxes)
        self.t = 0
        self.releases: list[TreeRelease] = []
        self._true = TrueTreeCounts(partition)

    def stage(self, nabla_F: Mapping[Node, float]) -> Staged[TreeRelease]:
        """Validate, draw and compute step t into locals; ``.commit()`` applies it."""
        raise NotImplementedError  # pragma: no cover

    def _staged(self, release: TreeRelease, G_new: dict[Node, float], true_step: Staged[TreeFunction],
                before: Callable[[], None] | None = None) -> Staged[TreeRelease]:
        """The staged step: its commit runs ``before`` (e.g. the counters), then sets G, the true counts and t."""

        def commit() -> None:
            if before is not None:
                before()
            self.G = G_new
            true_step.commit()
            self.t = release.t
            self.releases.append(release)

        return Staged(release, commit)

    def step(self, nabla_F: Mapping[Node, float]) -> TreeRelease:
        return self.stage(nabla_F).commit()


@convention(("partition", "epsilon", "theta", "noise"))
class PHDStreamTree(NaiveTreeStream):
    """001-alg1 (naive, all of V(T)). ``step(nabla_F) -> TreeRelease`` with G(., t) on V(T)."""

    anchor = "001-alg1"

    def __init__(self, partition: Partition, epsilon: float, theta: float = 0.0, *,
                 noise: NoiseSource | None = None, lambda_rule: LambdaRule = LambdaRule.GENERAL) -> None:
        # [001-alg1 L1] Input: F in C(T), the privacy budget eps, the threshold count theta
        # [001-alg1 L2] Output: a stream G in C(T)
        super().__init__(partition, epsilon, theta, noise, lambda_rule)  # [001-alg1 L3] G(v, 0) = 0

    @property
    def claim(self) -> PrivacyClaim:
        return phdstream_claim(self.partition, self.epsilon, self.lambda_rule)

    def stage(self, nabla_F: Mapping[Node, float]) -> Staged[TreeRelease]:
        """Validate, draw and compute step t into locals; ``.commit()`` applies it."""
        true_step = self._true.stage(nabla_F)
        dF = true_step.release
        t = self.t + 1  # [001-alg1 L4] for every time t
        eps = self.epsilon
        inputs = {v: g + dF.get(v, 0.0) for v, g in self.G.items()}
        T_t = privtree_for(self.noise)(self.partition, inputs, eps / 2.0, self.theta, noise=self.noise,  # [001-alg1 L5]
                                       t=t, lambda_rule=self.lambda_rule, check_input=False)
        leaves = list(T_t.leaves)  # the door noises the leaf counts dF(v) (value-in, one batch call)
        noisy = self.noise.add_laplace_many([site(LEAF_NOISE, t=t, v=node_label(v)) for v in leaves],
                                            [dF.get(v, 0.0) for v in leaves], 2.0 / eps)
        d = dict(zip(leaves, noisy.tolist(), strict=True))  # [001-alg1 L6] (0 on every other vertex)
        extension = consistent_extension(self.partition, d)
        G_new = {v: g + extension[v] for v, g in self.G.items()}  # [001-alg1 L7] G(., t) = G(., t-1) + Ext_T(d)
        release = TreeRelease(t, T_t, G_new)
        return self._staged(release, G_new, true_step)
