"""PHDStream (seed 001, Kumar, Strohmer, Vershynin 2024): DP synthetic point streams on a hierarchical partition.

Modules, by the paper's concepts:

* :mod:`~dpstream.phdstream.partition` -- trees T of hierarchical partitions (section 3.1);
* :mod:`~dpstream.phdstream.tree_function` -- transform (4), consistency (6), C(T) norm, Ext_T;
* :mod:`~dpstream.phdstream.privtree` -- PrivTree_T (001-alg5) and its noise scale;
* :mod:`~dpstream.phdstream.phdstream_tree` -- PHDStreamTree (001-alg1);
* :mod:`~dpstream.phdstream.counters_tree` -- PHDStreamTree with counters (001-alg3), an instance of online
  selective counting (001-alg4), which lives in its own module :mod:`dpstream.selective_counting` (shared with
  the tabular family);
* :mod:`~dpstream.phdstream.phdstream` -- PHDStream (001-alg2) with rule (5);
* :mod:`~dpstream.phdstream.efficient` -- compute-efficient PHDStream (001-alg6, 001-alg7);
* :mod:`~dpstream.phdstream.baselines` -- PrivTree+Counting and baselines 1-3 (section 5.3);
* :mod:`~dpstream.phdstream.initialization` -- initialization time t0 (section 5.2);
* :mod:`~dpstream.phdstream.metric` -- range queries and the relative error (section 5.4);
* :mod:`~dpstream.phdstream.data` -- concentric-circles generator and CSV loaders (section 5.1, App. G);
* :mod:`~dpstream.audit.phdstream.loss` -- exact transcript probabilities and privacy losses (audits, proofs).

Documentation: docs/phdstream.md; errata: docs/errata/phdstream.md.
"""

from dpstream.phdstream.baselines import (
    InitPrivTreeThenCounters,
    OfflinePrivTreeOnDifferential,
    OfflinePrivTreeOnStream,
    privtree_counting,
)
from dpstream.phdstream.counters_tree import PHDStreamTreeWithCounters, simple_counter_factory
from dpstream.phdstream.data import EventStream, concentric_circles_stream, load_point_stream_csv, load_query_csv
from dpstream.phdstream.efficient import EfficientPHDStream
from dpstream.phdstream.initialization import initialize, initialize_by_ratio
from dpstream.phdstream.metric import RangeQueries, query_set, relative_error
from dpstream.phdstream.partition import BooleanCubePartition, HypercubePartition, Node, Partition, node_label
from dpstream.phdstream.phdstream import PHDStream
from dpstream.phdstream.phdstream_tree import PHDStreamTree
from dpstream.phdstream.privtree import LambdaRule, PrivTree, Subtree, privtree, privtree_scales
from dpstream.phdstream.stream import PointEvents, SyntheticRelease, TreeRelease
from dpstream.phdstream.tree_function import c_t_norm, consistent_extension, is_consistent, tree_function

__all__ = [
    "BooleanCubePartition",
    "EfficientPHDStream",
    "EventStream",
    "HypercubePartition",
    "InitPrivTreeThenCounters",
    "LambdaRule",
    "Node",
    "OfflinePrivTreeOnDifferential",
    "OfflinePrivTreeOnStream",
    "PHDStream",
    "PHDStreamTree",
    "PHDStreamTreeWithCounters",
    "Partition",
    "PointEvents",
    "PrivTree",
    "RangeQueries",
    "Subtree",
    "SyntheticRelease",
    "TreeRelease",
    "c_t_norm",
    "concentric_circles_stream",
    "consistent_extension",
    "initialize",
    "initialize_by_ratio",
    "is_consistent",
    "load_point_stream_csv",
    "load_query_csv",
    "node_label",
    "privtree",
    "privtree_counting",
    "privtree_scales",
    "query_set",
    "relative_error",
    "simple_counter_factory",
    "tree_function",
]
