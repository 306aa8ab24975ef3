"""High-dimensional tabular streams: seeds 003 and 000 (marginals, MWEM, StreamingMWEM, the main algorithm).

Modules, in the order of the paper:

* :mod:`~dpstream.tabular.domain`, :mod:`~dpstream.tabular.queries` — X = X_1 x ... x X_p,
  k-way marginal queries (003-def3.5), workloads (003-def7.1);
* :mod:`~dpstream.tabular.datasets` — synthetic datasets as marginal-answering objects;
* :mod:`~dpstream.tabular.fitting`, :mod:`~dpstream.tabular.pgm` — A_Dataset: multiplicative
  weights (003-mw), exact fitting (IPF), private-pgm (003-pgm);
* :mod:`~dpstream.tabular.selection` — scores, sensitivities, exponential-mechanism laws;
* :mod:`~dpstream.tabular.totals` — where the mass of a fitted dataset comes from;
* :mod:`~dpstream.tabular.offline` — 003-alg1 / 000-alg1 (MWEM) and the naive approach;
* :mod:`~dpstream.tabular.streaming_mwem` — 003-alg2 (StreamingMWEM) and 000-alg2;
* :mod:`~dpstream.tabular.main_algorithm` — 003-alg3 / 000-alg3, with workloads (003-sec7.2);
* :mod:`~dpstream.tabular.selective` — 003-alg3 as an instance of online selective counting;
* :mod:`~dpstream.tabular.metrics` — 003-sec7.3; :mod:`~dpstream.tabular.accuracy` — App. A bounds;
* :mod:`~dpstream.tabular.stream` — turnstile streams, Adult constructions, loaders, a generator;
* :mod:`~dpstream.audit.tabular.loss` — exact privacy loss of transcripts (audits).
"""

from dpstream.tabular.datasets import ExplicitDataset, SyntheticDataset, TableDataset, UniformDataset, answer
from dpstream.tabular.domain import Domain, validate_records
from dpstream.tabular.fitting import DatasetFitter, InformationProjection, Measurement, MultiplicativeWeights
from dpstream.tabular.main_algorithm import MainAlgorithm
from dpstream.tabular.metrics import Metrics, stream_metrics
from dpstream.tabular.offline import naive_offline, select_measure_fit
from dpstream.tabular.pgm import PGMDataset, PrivatePGM, mbi_available
from dpstream.tabular.queries import MarginalQuery, Workload, all_marginal_queries, all_workloads
from dpstream.tabular.selection import BiasRule, SelectionLaw
from dpstream.tabular.stream import (
    StreamStep,
    adult_ordered,
    adult_randomized,
    generate_records,
    generate_stream,
    load_stream_csv,
    load_table_csv,
)
from dpstream.tabular.streaming_mwem import OfflineToStream, StreamingMWEM
from dpstream.tabular.totals import TotalRule

__all__ = [
    "BiasRule",
    "DatasetFitter",
    "Domain",
    "ExplicitDataset",
    "InformationProjection",
    "MainAlgorithm",
    "MarginalQuery",
    "Measurement",
    "Metrics",
    "MultiplicativeWeights",
    "OfflineToStream",
    "PGMDataset",
    "PrivatePGM",
    "SelectionLaw",
    "StreamStep",
    "StreamingMWEM",
    "SyntheticDataset",
    "TableDataset",
    "TotalRule",
    "UniformDataset",
    "Workload",
    "adult_ordered",
    "adult_randomized",
    "all_marginal_queries",
    "all_workloads",
    "answer",
    "generate_records",
    "generate_stream",
    "load_stream_csv",
    "load_table_csv",
    "mbi_available",
    "naive_offline",
    "select_measure_fit",
    "stream_metrics",
    "validate_records",
]
