"""Streams: Adult-randomized / Adult-ordered (003-sec7.1.2), the CSV loaders, the generator, removals."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from dpstream.errors import DPStreamInputError
from dpstream.tabular.domain import Domain
from dpstream.tabular.stream import (
    RecordMultiset,
    StreamStep,
    adult_ordered,
    adult_randomized,
    generate_records,
    generate_stream,
    load_stream_csv,
    load_table_csv,
)

DATA = Path(__file__).resolve().parents[1] / "data" / "tabular"
SAMPLE = DATA / "adult_liu2021_sample.csv"
SAMPLE_DOMAIN = DATA / "adult_liu2021_sample-domain.json"


def test_adult_sample_loads_with_its_domain() -> None:
    domain, records = load_table_csv(SAMPLE, SAMPLE_DOMAIN)
    assert records.shape == (300, 15)                      # the unnamed index column is dropped; CSV column order
    assert domain.names[0] == "age" and domain.sizes[domain.column("age")] == 91
    small, proj = load_table_csv(SAMPLE, SAMPLE_DOMAIN, columns=["sex", "income>50K", "race"])
    assert small.sizes == (2, 2, 5) and proj.shape == (300, 3)
    assert np.array_equal(proj[:, 0], records[:, domain.column("sex")])


def test_randomized_and_ordered_streams() -> None:
    domain, records = load_table_csv(SAMPLE, SAMPLE_DOMAIN, columns=["sex", "race", "relationship"])
    rand = adult_randomized(domain, records, 50, seed=1)
    ordered = adult_ordered(domain, records, 50)
    assert [s.added.shape[0] for s in rand] == [50] * 6 == [s.added.shape[0] for s in ordered]
    # without replacement: every record used exactly once (same multiset)
    rows = np.concatenate([s.added for s in rand])
    assert sorted(map(tuple, rows.tolist())) == sorted(map(tuple, records.tolist()))
    flat = np.concatenate([s.added for s in ordered])
    assert [tuple(r) for r in flat.tolist()] == sorted(tuple(r) for r in records.tolist())  # lexicographic
    assert np.array_equal(np.concatenate([s.added for s in adult_randomized(domain, records, 50, seed=1)]), rows)
    assert [s.added.shape[0] for s in adult_randomized(domain, records, 200, seed=0)] == [200, 100]


def test_stream_csv_with_time_and_removals(tmp_path: Path) -> None:
    dom = Domain(("a", "b"), (2, 3))
    path = tmp_path / "s.csv"
    path.write_text("t,a,b,op\n1,0,2,1\n1,1,1,1\n3,0,2,-1\n3,1,0,1\n", encoding="utf-8")
    steps = load_stream_csv(path, dom, op_column="op")
    assert len(steps) == 3 and steps[1].size == 0
    assert steps[0].added.tolist() == [[0, 2], [1, 1]] and steps[2].removed.tolist() == [[0, 2]]
    bad = tmp_path / "bad.csv"
    bad.write_text("t,a,b,op\n1,0,2,1\n2,1,1,-1\n", encoding="utf-8")
    with pytest.raises(DPStreamInputError):                # removes a record that is not present
        load_stream_csv(bad, dom, op_column="op")
    outside = tmp_path / "outside.csv"
    outside.write_text("t,a,b\n1,0,3\n", encoding="utf-8")
    with pytest.raises(DPStreamInputError):                # value outside X_b
        load_stream_csv(outside, dom)
    with pytest.raises(DPStreamInputError):                # missing time column
        load_stream_csv(outside, dom, time_column="time")


def test_generator_is_deterministic_and_valid() -> None:
    dom = Domain(("a", "b", "c"), (3, 2, 4))
    a, b = generate_records(dom, 200, seed=4), generate_records(dom, 200, seed=4)
    assert np.array_equal(a, b) and a.min() >= 0 and np.all(a.max(axis=0) < np.array(dom.sizes))
    stream = generate_stream(dom, 6, 20, seed=5, removal_rate=0.25)
    tracker = RecordMultiset(dom)
    for step in stream:
        tracker.check(step)
        tracker.apply(step)
    assert tracker.size == sum(s.size for s in stream) and any(s.removed.shape[0] for s in stream)


def test_multiset_rejects_absent_removal_without_change() -> None:
    dom = Domain(("a",), (3,))
    tracker = RecordMultiset(dom)
    tracker.apply(StreamStep.build(dom, [[1], [1]]))
    with pytest.raises(DPStreamInputError):
        tracker.check(StreamStep.build(dom, [], [[1], [1], [1]]))
    tracker.check(StreamStep.build(dom, [[2]], [[2], [1]]))   # added and removed in the same step: fine
    assert tracker.size == 2 and tracker.records(1).tolist() == [[1], [1]]
