"""Regenerate the tabular known-answer vectors: ``.venv/bin/python tests/tabular/vectors/generate_tabular.py``.

Each vector is one seeded run (inputs, noise tape, releases) of StreamingMWEM (003-alg2) or of the main
algorithm (003-alg3) with multiplicative weights (003-mw) as A_Dataset and Simple counters, on the domain
X = {0,1} x {0,1,2} with Q = all five 1-way marginal queries, k = 2, eps = 1 and public sizes (the
per-step |nabla f_t|). The expected release at each time is the whole synthetic dataset g_t (its 6 cell
counts, row-major). ``tests/tabular/test_vectors.py`` replays every vector through the implementation AND
recomputes its releases from the tape alone with a line-by-line numpy rendering of the printed boxes, so a
regenerated vector is accepted only if both agree.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dpstream.noise import NoiseSource
from dpstream.tabular.datasets import SyntheticDataset, explicit_counts
from dpstream.tabular.domain import Domain
from dpstream.tabular.main_algorithm import MainAlgorithm
from dpstream.tabular.queries import MarginalQuery
from dpstream.tabular.stream import StreamStep
from dpstream.tabular.streaming_mwem import StreamingMWEM
from dpstream.tabular.totals import TotalRule
from dpstream.testing import Streaming, record_run
from dpstream.vectors import KnownAnswerVector

HERE = Path(__file__).resolve().parent

# nabla f_t as added / removed records of X = {0,1} x {0,1,2}: a turnstile stream with removals at t = 3, 5
INPUTS: list[dict[str, list[list[int]]]] = [
    {"added": [[0, 0], [0, 0], [1, 2], [0, 1], [1, 2], [1, 0]], "removed": []},
    {"added": [[1, 1], [1, 2], [0, 0], [1, 2]], "removed": []},
    {"added": [[0, 2], [0, 2], [1, 1]], "removed": [[0, 0], [1, 2]]},
    {"added": [[1, 0], [1, 0], [1, 0], [0, 1], [0, 0]], "removed": []},
    {"added": [[0, 1], [0, 2], [1, 1]], "removed": [[1, 0], [1, 1]]},
]
PARAMS: dict[str, Any] = {
    "domain": {"names": ["a", "b"], "sizes": [2, 3]},
    "queries": [{"columns": [0], "values": [0]}, {"columns": [0], "values": [1]}, {"columns": [1], "values": [0]},
                {"columns": [1], "values": [1]}, {"columns": [1], "values": [2]}],
    "k": 2,
    "epsilon": 1.0,
    "total": "public: the mass of nabla f_t is sizes[t-1] = |added| - |removed|",
    "sizes": [len(x["added"]) - len(x["removed"]) for x in INPUTS],
    "A_Dataset": "multiplicative weights, newest measurement (003-mw)",
}


def domain(params: dict[str, Any]) -> Domain:
    return Domain(tuple(params["domain"]["names"]), tuple(params["domain"]["sizes"]))


def queries(params: dict[str, Any]) -> list[MarginalQuery]:
    dom = domain(params)
    return [MarginalQuery.build(dom, q["columns"], q["values"]) for q in params["queries"]]


def steps(params: dict[str, Any], inputs: list[dict[str, list[list[int]]]]) -> list[StreamStep]:
    dom = domain(params)
    return [StreamStep.build(dom, x["added"], x["removed"]) for x in inputs]


def build(component: str, params: dict[str, Any], noise: NoiseSource) -> StreamingMWEM | MainAlgorithm:
    sizes = [float(s) for s in params["sizes"]]
    total = TotalRule.public(lambda t: sizes[t - 1])
    if component == "003-alg2":
        return StreamingMWEM(domain(params), queries(params), params["k"], params["epsilon"], noise, total=total)
    if component == "003-alg3":
        return MainAlgorithm(domain(params), queries(params), params["k"], params["epsilon"], noise, total=total)
    raise ValueError(component)


def cells(g: SyntheticDataset) -> list[float]:
    """g_t's cell counts, row-major over X."""
    return [float(v) for v in explicit_counts(g).reshape(-1)]


def main() -> None:
    for name, component, seed in (("streaming-mwem-mw-eps1-k2-T5", "003-alg2", 71),
                                  ("main-algorithm-mw-simple-eps1-k2-T5", "003-alg3", 72)):

        def make(n: NoiseSource, component: str = component) -> Streaming:
            return build(component, PARAMS, n)

        releases, tape = record_run(make, steps(PARAMS, INPUTS), seed)
        KnownAnswerVector(component, PARAMS, INPUTS, tape, [cells(g) for g in releases],
                          description=f"{component} with MW, 1-way marginal queries on {{0,1}}x{{0,1,2}}, "
                                      f"seed={seed}").save(HERE / f"{name}.json")


if __name__ == "__main__":
    main()
