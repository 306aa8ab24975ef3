"""Rows of PHDStream point and query files that do not parse: DataRowError naming file, line and value."""

from __future__ import annotations

from pathlib import Path

import pytest

from dpstream.errors import DataRowError
from dpstream.phdstream.data import load_point_stream_csv, load_query_csv


@pytest.mark.parametrize(("row", "field", "value"), [
    ("garbage\n", "row", "garbage"),        # a garbage row
    ("0.5,0.5\n", "row", "0.5,0.5"),        # a short row
    ("0.5,abc,1\n", "y", "abc"),            # a non-numeric cell
    ("0.5,nan,1\n", "y", "nan"),            # not finite
    ("1.5,0.5,1\n", "x", "1.5"),            # outside the domain [0, 1]^2
    ("0.5,-0.1,1\n", "y", "-0.1"),          # outside the domain
    ("0.5,0.5,2\n", "move", "2"),           # a move other than +1/-1
    ("0.5,0.5,x\n", "move", "x"),           # a non-numeric move
])
def test_point_rows(tmp_path: Path, row: str, field: str, value: str) -> None:
    path = tmp_path / "points.csv"
    path.write_text("x,y,move\n0.1,0.2,1\n0.3,0.4,-1\n" + row, encoding="utf-8")
    with pytest.raises(DataRowError) as info:
        load_point_stream_csv(path)
    err = info.value
    assert (err.path, err.line, err.field, err.value) == (str(path), 4, field, value)
    assert str(err).startswith(f"{path}, line 4, {field}: ")


def test_time_must_be_an_integer(tmp_path: Path) -> None:
    path = tmp_path / "points.csv"
    path.write_text("x,y,time\n0.1,0.2,1\n0.1,0.2,1.5\n", encoding="utf-8")
    with pytest.raises(DataRowError, match=r"line 3, time: must be an integer \(got '1.5'\)"):
        load_point_stream_csv(path)


@pytest.mark.parametrize(("row", "field", "value"), [
    ("0,0,0.1\n", "row", "0,0,0.1"),            # short row
    ("0,0,0.1,zz,small\n", "ymax", "zz"),       # non-numeric cell
])
def test_query_rows(tmp_path: Path, row: str, field: str, value: str) -> None:
    path = tmp_path / "q.csv"
    path.write_text("xmin,ymin,xmax,ymax,size\n0,0,0.1,0.1,small\n" + row, encoding="utf-8")
    with pytest.raises(DataRowError) as info:
        load_query_csv(path)
    assert (info.value.line, info.value.field, info.value.value) == (3, field, value)
