"""Continual counters used by the papers (001 App. D, 002 App. B, 003 section 8, 004 section 3).

See docs/counters.md; the sparse counters of 004 are documented in docs/hypercube.md.
"""

from dpstream.counters.base import Counter, CounterFactory
from dpstream.counters.binary_tree import BinaryTreeCounter
from dpstream.counters.block import BlockCounter
from dpstream.counters.hybrid import HybridCounter
from dpstream.counters.multidim import MultiDimensionalCounter
from dpstream.counters.simple import SimpleCounter
from dpstream.counters.sparse import InhomogeneousSparseCounter, SparseCounter
from dpstream.counters.tree_aggregation import TreeAggregationCounter
from dpstream.counters.unbounded_block import UnboundedBlockCounter

__all__ = [
    "BinaryTreeCounter",
    "BlockCounter",
    "Counter",
    "CounterFactory",
    "HybridCounter",
    "InhomogeneousSparseCounter",
    "MultiDimensionalCounter",
    "SimpleCounter",
    "SparseCounter",
    "TreeAggregationCounter",
    "UnboundedBlockCounter",
]
