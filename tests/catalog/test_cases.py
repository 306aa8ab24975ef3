"""Every streaming entry draws differential cases (``Entry.cases``, dpstream.catalog.cases) that fit its JSON schemas
and that the reference runs: the simplest case of every entry, and most of the others (a case the reference refuses is
dropped by the differential mode, so refusals may happen, but rarely).

Deterministic: Hypothesis is derandomized here (a fixed sequence of examples), so there is no false alarm to budget.
"""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, Phase, given, settings

from dpstream.catalog import Entry, entries
from dpstream.catalog.cases import Case
from dpstream.errors import DPStreamInputError, StateError
from dpstream.testing.strategies import catalog_cases, fixed_generation
from dpstream.vectors.generate import known_answer_vector

STREAMING = [e for e in entries() if e.streaming]
CASES = 6


def _cases(anchor: str, count: int) -> list[Case]:
    drawn: list[Case] = []

    @settings(database=None, max_examples=count, deadline=None, derandomize=True, phases=(Phase.generate,),
              suppress_health_check=list(HealthCheck))
    @given(catalog_cases(anchor))
    def collect(case: Case) -> None:
        drawn.append(case)

    with fixed_generation():
        collect()
    return drawn


def test_every_streaming_entry_draws_cases() -> None:
    assert [e.anchor for e in STREAMING if e.cases is None] == []


@pytest.mark.parametrize("e", STREAMING, ids=[e.anchor for e in STREAMING])
def test_cases_fit_the_schemas_and_the_reference_runs_them(e: Entry) -> None:
    assert e.codec is not None
    params, inputs = (jsonschema.Draft202012Validator(s) for s in (e.params.json_schema(), e.codec.input_schema))
    drawn = _cases(e.anchor, CASES)
    assert len(drawn) == CASES
    refused: list[Any] = []
    for i, case in enumerate(drawn):
        params.validate(case.params)
        for x in case.inputs:
            inputs.validate(x)
        assert case.inputs and all(isinstance(label, str) for label in case.edges)
        try:
            vector = known_answer_vector(e, f"{e.anchor}/case{i}", case.params, case.inputs, i)
        except (DPStreamInputError, StateError) as exc:
            assert i > 0, f"the simplest case is refused: {exc}"  # Hypothesis's first example is the simplest
            refused.append(exc)
            continue
        assert len(vector.expected) == len(case.inputs)
    assert len(refused) <= CASES // 2, refused
