"""Continual counters used by the papers (001 App. D, 002 App. B, 003 section 8, 004 section 3).

See docs/counters.md; the sparse counters of 004 are documented in docs/hypercube.md.
"""

from dpstream.counters.base import Counter, CounterFactory
from dpstream.counters.binary_tree import BinaryTreeCounter, binary_tree_counter_model
from dpstream.counters.block import BlockCounter, block_counter_model
from dpstream.counters.hybrid import HybridCounter, hybrid_counter_model
from dpstream.counters.multidim import MultiDimensionalCounter, multidimensional_model
from dpstream.counters.simple import SimpleCounter, simple_counter_model
from dpstream.counters.sparse import InhomogeneousSparseCounter, SparseCounter
from dpstream.counters.tree_aggregation import TreeAggregationCounter, tree_aggregation_model
from dpstream.counters.unbounded_block import UnboundedBlockCounter, unbounded_block_model

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
    "binary_tree_counter_model",
    "block_counter_model",
    "hybrid_counter_model",
    "multidimensional_model",
    "simple_counter_model",
    "tree_aggregation_model",
    "unbounded_block_model",
]
