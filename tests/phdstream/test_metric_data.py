"""Range queries and relative error (001-sec5.4); concentric circles and the CSV loaders (001 App. G)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from dpstream.errors import DPStreamInputError
from dpstream.noise import data_rng
from dpstream.phdstream.data import concentric_circles_stream, load_point_stream_csv, load_query_csv
from dpstream.phdstream.metric import QUERY_BANDS, RangeQueries, count_in_boxes, query_set, relative_error

DATA = Path(__file__).resolve().parents[1] / "data" / "phdstream"


def test_relative_error_by_hand() -> None:
    q = RangeQueries(np.array([[0.0, 0.0], [0.5, 0.5]]), np.array([[0.5, 0.5], [1.0, 1.0]]))
    true = np.array([[0.1, 0.1]] * 3 + [[0.9, 0.9]] * 1 + [[0.6, 0.1]] * 996)  # |f| = 1000, floor 1
    synth = np.array([[0.2, 0.2]] * 1 + [[0.7, 0.7]] * 4)
    # query 1: |3 - 1| / max(3, 1) = 2/3; query 2: |1 - 4| / max(1, 1) = 3
    assert relative_error(q, true, synth) == pytest.approx((2 / 3 + 3) / 2)
    assert count_in_boxes(true, q).tolist() == [3, 1]
    with pytest.raises(DPStreamInputError):
        relative_error(q, np.zeros((0, 2)), synth)


def test_query_bands() -> None:
    for size, (lo, hi, n) in QUERY_BANDS.items():
        q = query_set(1, size, n=300)
        assert len(q) == 300 and n in (10_000, 5_000, 1_000)
        assert np.all(q.areas >= lo * (1 - 1e-12)) and np.all(q.areas < hi)
        assert np.all(q.low >= 0) and np.all(q.high <= 1)


def test_circles_with_deletion_structure() -> None:
    s = concentric_circles_stream(1000, deletion=True, seed=3)
    assert len(s) == 500 + 2 * 500  # 500 outer added, 500 (remove outer, add inner) pairs
    assert int(s.moves.sum()) == 500
    assert np.all(s.moves[:500] == 1) and np.all(s.moves[500::2] == -1)
    assert np.array_equal(s.points[500], s.points[0])  # the first removal is the first outer point
    assert s.points.min() >= 0 and s.points.max() <= 1
    radius = np.hypot(*(s.points - 0.5).T)
    outer, inner = radius[:500], radius[501::2]
    assert outer.mean() > inner.mean() + 0.1  # factor 0.667: the inner circle is clearly inside


def test_circles_without_deletion() -> None:
    s = concentric_circles_stream(301, deletion=False, seed=4)
    assert len(s) == 301 and np.all(s.moves == 1)
    again = concentric_circles_stream(301, deletion=False, seed=4)
    assert np.array_equal(s.points, again.points)  # data_rng(seed): reproducible


def test_csv_loader_with_time_and_moves() -> None:
    s = load_point_stream_csv(DATA / "tiny_stream.csv")
    batches = s.batches_by_time()
    assert [len(b) for b in batches] == [2, 2, 1]
    assert batches[1].moves.tolist() == [-1, 1]
    assert batches[2].points.tolist() == [[1.0, 0.0]]


def test_csv_loader_errors(tmp_path: Path) -> None:
    with pytest.raises(DPStreamInputError):
        load_point_stream_csv(tmp_path / "missing.csv")
    bad = tmp_path / "bad.csv"
    bad.write_text("x,y,move\n0.1,0.2,2\n", encoding="utf-8")
    with pytest.raises(DPStreamInputError) as info:
        load_point_stream_csv(bad)
    assert info.value.field == "move"
    q = tmp_path / "q.csv"
    q.write_text("xmin,ymin,xmax,ymax,size\n0,0,0.1,0.1,small\n0.2,0.2,0.5,0.6,large\n", encoding="utf-8")
    groups = load_query_csv(q)
    assert len(groups["small"]) == 1 and groups["large"].high.tolist() == [[0.5, 0.6]]


def test_data_rng_rectangles_are_reproducible() -> None:
    from dpstream.phdstream.metric import random_rectangles

    a = random_rectangles(data_rng(9), 50, 1e-3, 1e-2)
    b = random_rectangles(data_rng(9), 50, 1e-3, 1e-2)
    assert np.array_equal(a.low, b.low)
