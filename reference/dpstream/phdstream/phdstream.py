"""PHDStream (001-alg2): the point stream f -> F by (4), PHDStreamTree, G -> synthetic points g by (5).

``PHDStream(partition, eps, theta)`` runs Algorithm 1 (:class:`PHDStreamTree`); with a
``counter`` factory it runs Algorithm 3 (:class:`PHDStreamTreeWithCounters`, e.g.
``counter=lambda e, n: BlockCounter(e, 8, noise=n)``). Both are naive (all of V(T)); the
compute-efficient equivalent for deep trees is :class:`dpstream.phdstream.efficient.EfficientPHDStream`.

``step(PointEvents) -> SyntheticRelease``: the batch is validated against Omega and the true
multiset before anything is drawn; rule (5) samples ceil(G(v)) uniform points in every leaf
of T(t) through the noise source (post-processing, so the claim is the tree algorithm's).
Proofs: proofs/proof_phdstream.py (001-thm3.2), proofs/proof_privtree.py, proofs/proof_selective_counting.py.
"""

from __future__ import annotations

from dpstream.claims import PrivacyClaim
from dpstream.convention import convention
from dpstream.errors import require_positive_finite
from dpstream.noise import NoiseSource, default_noise
from dpstream.phdstream.counters_tree import CounterFactory, PHDStreamTreeWithCounters
from dpstream.phdstream.partition import Partition
from dpstream.phdstream.phdstream_tree import PHDStreamTree
from dpstream.phdstream.privtree import LambdaRule, require_theta
from dpstream.phdstream.stream import PointEvents, SyntheticRelease, TrueStream, require_synthetic_scale, sample_rule5

__all__ = ["PHDStream"]


@convention(("partition", "epsilon", "theta", "noise"))
class PHDStream:
    """001-alg2 around Algorithm 1 (``counter=None``) or Algorithm 3 (a counter factory)."""

    anchor = "001-alg2"

    def __init__(self, partition: Partition, epsilon: float, theta: float = 0.0, *,
                 noise: NoiseSource | None = None, counter: CounterFactory | None = None,
                 lambda_rule: LambdaRule = LambdaRule.GENERAL, as_printed: bool = False) -> None:
        # [001-alg2 L1] Input: data stream f, the privacy budget eps, the threshold count theta
        # [001-alg2 L2] Output: data stream g
        self.partition = partition
        self.epsilon = require_positive_finite("epsilon", epsilon)
        require_synthetic_scale(epsilon, 4.0 / self.epsilon)  # the counts' largest scale (both trees, printed too)
        self.theta = require_theta(theta)
        self.noise: NoiseSource = default_noise() if noise is None else noise
        self.tree: PHDStreamTree | PHDStreamTreeWithCounters
        if counter is None:
            self.tree = PHDStreamTree(partition, self.epsilon, self.theta, noise=self.noise, lambda_rule=lambda_rule)
        else:
            self.tree = PHDStreamTreeWithCounters(partition, self.epsilon, self.theta, noise=self.noise,
                                                  counter=counter,
                                                  lambda_rule=lambda_rule, as_printed=as_printed)
        self.t = 0
        self.releases: list[SyntheticRelease] = []
        self._true = TrueStream(partition)

    @property
    def claim(self) -> PrivacyClaim:
        return self.tree.claim

    @property
    def paper_claim(self) -> PrivacyClaim:
        """001-thm3.2 as stated (eps-DP); :attr:`claim` says what this instance really meets."""
        return self.tree.paper_claim

    def step(self, batch: PointEvents) -> SyntheticRelease:
        prepared = self._true.stage(batch)
        # [001-alg2 L3] F from f by (4), PHDStreamTree on F, G converted into g by (5)
        tree_step = self.tree.stage(prepared.release.dF)
        tree_release = tree_step.release
        leaf_values = tree_release.leaf_values
        counts, points = sample_rule5(self.partition, leaf_values, self.noise, tree_release.t)
        node_values = {v: tree_release.values[v] for v in tree_release.tree.nodes}
        release = SyntheticRelease(tree_release.t, tree_release.tree, leaf_values, counts, points, node_values)
        tree_step.commit()
        prepared.commit()
        self.t = tree_release.t
        self.releases.append(release)
        return release
