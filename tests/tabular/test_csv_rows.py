"""Rows of a tabular CSV that do not parse: DataRowError naming the file, the line and the value."""

from __future__ import annotations

from pathlib import Path

import pytest

from dpstream.errors import DataRowError, DPStreamInputError
from dpstream.tabular.domain import Domain
from dpstream.tabular.stream import load_stream_csv, load_table_csv

DOMAIN_JSON = '{"a": 2, "b": 3}'


def _table(tmp_path: Path, rows: str) -> tuple[Path, Path]:
    csv_path, domain = tmp_path / "t.csv", tmp_path / "t-domain.json"
    csv_path.write_text("a,b\n0,2\n1,1\n" + rows, encoding="utf-8")
    domain.write_text(DOMAIN_JSON, encoding="utf-8")
    return csv_path, domain


@pytest.mark.parametrize(("row", "field", "value", "rule"), [
    ("garbage\n", "row", "garbage", "has 1 fields, the header 2"),  # a garbage row (IndexError before)
    ("1\n", "row", "1", "has 1 fields, the header 2"),               # a short row
    ("1,2,0\n", "row", "1,2,0", "has 3 fields, the header 2"),       # a long row
    ("1,x\n", "b", "x", "must be an integer code in 0..2"),          # a non-numeric cell
    ("1,2.5\n", "b", "2.5", "must be an integer code in 0..2"),      # not an integer
    ("1,3\n", "b", "3", "must be an integer code in 0..2"),          # outside the domain
    ("-1,0\n", "a", "-1", "must be an integer code in 0..1"),        # negative
])
def test_table_rows(tmp_path: Path, row: str, field: str, value: str, rule: str) -> None:
    csv_path, domain = _table(tmp_path, row)
    with pytest.raises(DataRowError) as info:
        load_table_csv(csv_path, domain)
    err = info.value
    assert (err.path, err.line, err.field, err.value, err.rule) == (str(csv_path), 4, field, value, rule)
    assert str(err) == f"{csv_path}, line 4, {field}: {rule} (got {value!r})"


def test_table_without_domain_file_and_the_good_rows(tmp_path: Path) -> None:
    csv_path, domain = _table(tmp_path, "\n1,0\n")  # blank lines are skipped, line numbers still count them
    dom, records = load_table_csv(csv_path, domain)
    assert dom.sizes == (2, 3) and records.tolist() == [[0, 2], [1, 1], [1, 0]]
    bad, _ = _table(tmp_path, "\n1,z\n")
    with pytest.raises(DataRowError, match=r"line 5, b: must be an integer code >= 0 \(got 'z'\)"):
        load_table_csv(bad)
    (tmp_path / "empty.csv").write_text("", encoding="utf-8")
    with pytest.raises(DPStreamInputError, match="empty"):
        load_table_csv(tmp_path / "empty.csv")
    (tmp_path / "bad.json").write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(DPStreamInputError, match="must map attribute names to sizes"):
        load_table_csv(csv_path, tmp_path / "bad.json")


@pytest.mark.parametrize(("row", "line", "field", "value"), [
    ("2,0\n", 3, "row", "2,0"),                 # short row (a TypeError before)
    ("x,0,1\n", 3, "t", "x"),                   # non-numeric time
    ("0,0,1\n", 3, "t", "0"),                   # time outside t >= 1
    ("2,0,7\n", 3, "b", "7"),                   # value outside X_b
    ("2,?,1\n", 3, "a", "?"),                   # non-numeric value
])
def test_stream_rows(tmp_path: Path, row: str, line: int, field: str, value: str) -> None:
    path = tmp_path / "s.csv"
    path.write_text("t,a,b\n1,0,2\n" + row, encoding="utf-8")
    with pytest.raises(DataRowError) as info:
        load_stream_csv(path, Domain(("a", "b"), (2, 3)))
    assert (info.value.path, info.value.line, info.value.field, info.value.value) == (str(path), line, field, value)


def test_stream_op_column(tmp_path: Path) -> None:
    path = tmp_path / "s.csv"
    path.write_text("t,a,b,op\n1,0,2,1\n2,0,2,0\n", encoding="utf-8")
    with pytest.raises(DataRowError, match=r"line 3, op: must be \+1 or -1 \(got '0'\)"):
        load_stream_csv(path, Domain(("a", "b"), (2, 3)), op_column="op")
