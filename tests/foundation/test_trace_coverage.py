"""Every printed algorithm line is cited by a comment tag in reference/, and no tag cites a line that does not
exist (tools/trace_coverage.py in make test); the in-repo transcription is complete and well formed."""

from __future__ import annotations

import re
import runpy
from pathlib import Path

import pytest

from dpstream.errors import DPStreamInputError
from dpstream.papers import algorithm, algorithms, paper, papers, transcription
from dpstream.papers.tags import coverage, scan_file

ROOT = Path(__file__).resolve().parents[2]


def test_every_printed_line_is_cited_and_every_tag_exists() -> None:
    report = coverage([ROOT / "reference"])
    missing = {row.algorithm.anchor: row.missing for row in report.algorithms if row.missing}
    assert not missing, f"printed lines without a '# [anchor Lx]' tag under reference/: {missing}"
    assert not report.problems, "tags citing no printed line:\n" + "\n".join(map(str, report.problems))
    assert (report.have, report.need) == (280, 280)


def test_tags_in_tests_and_tools_exist_too() -> None:
    roots = [ROOT / d for d in ("tests", "property_tests", "proofs", "examples", "tools")]
    assert not coverage(roots).problems


def _write(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "mod.py"
    path.write_text(body, encoding="utf-8")
    return path


def test_wrong_tags_are_reported_and_strings_do_not_cite(tmp_path: Path) -> None:
    b = "["  # tags are assembled so that this file holds none of them
    _write(tmp_path, "\n".join([
        f"x = 1  # {b}001-alg5 L99]",                  # beyond the box (L1..L15)
        f"y = 2  # {b}001-alg99 L1]",                  # no such algorithm
        f"z = 3  # {b}002-alg1 L3]",                   # 002-alg1 is labelled u1..u21
        f"w = 4  # {b}001-alg5 L9-L7]",                # reversed range
        f"v = 5  # {b}001-alg5 9]",                    # malformed
        f"s = '# {b}001-alg8 L4]'",                     # in a string: checked, but cites nothing
        f"u = 6  # {b}001-alg8 L1-L3] and {b}001-alg7 L23-L26]",  # valid; L26 (end while) may be cited
    ]) + "\n")
    report = coverage([tmp_path])
    reasons = [(p.tag.lineno, p.reason) for p in report.problems]
    assert [n for n, _ in reasons] == [1, 2, 3, 4, 5]
    assert "L1..L15" in reasons[0][1] and "no algorithm 001-alg99" in reasons[1][1]
    assert "u1..u21" in reasons[2][1] and "L1..L15" in reasons[3][1] and "expected" in reasons[4][1]
    rows = {r.algorithm.anchor: r for r in report.algorithms}
    assert rows["001-alg8"].missing == ("L4",)  # L1-L3 from the comment; the string's L4 does not count
    assert rows["001-alg7"].have == 3 and rows["001-alg7"].missing[:3] == ("L1", "L2", "L3")
    tags = scan_file(tmp_path / "mod.py")
    assert [t.in_comment for t in tags] == [True] * 5 + [False, True, True]


def test_command_line_fails_on_a_missing_line_or_a_wrong_tag(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    main = runpy.run_path(str(ROOT / "tools" / "trace_coverage.py"))["main"]
    assert main([str(ROOT / "reference"), "--min", "100"]) == 0
    assert "coverage: 280/280 printed lines cited (100.0%)" in capsys.readouterr().out
    _write(tmp_path, "a = 1  # [" + "001-alg8 L4]\n")
    assert main([str(tmp_path)]) == 0  # no --min: a report, not a failure
    assert main([str(tmp_path), "--min", "100", "--json"]) == 1
    assert '"have": 1' in capsys.readouterr().out
    _write(tmp_path, "a = 1  # [" + "001-alg8 L5]\n")
    assert main([str(tmp_path)]) == 1


def test_transcription_lists_every_algorithm_and_paper() -> None:
    algs = algorithms()
    counts = {"000": 4, "001": 10, "002": 3, "003": 4, "004": 4}
    expected = [f"{p}-alg{i}" for p, n in counts.items() for i in range(1, n + 1)]
    assert list(algs) == expected
    assert sum(len(a.lines) for a in algs.values()) == 280
    for anchor, alg in algs.items():
        assert alg.paper.id == anchor[:3] and alg.title.startswith("Algorithm ")
        numbers = [line.number for line in alg.lines]
        assert numbers == sorted(set(numbers)) and numbers[-1] <= int(alg.last_printed[1:])
        assert all(line.label[0] == alg.prefix for line in alg.lines)
        assert alg.prefix == ("u" if anchor[:3] in ("002", "004") else "L")  # boxes printed without numbers
        for line in alg.lines:
            assert 0 < len(line.does) <= 110, line  # a short paraphrase, not the paper's text
    assert list(papers()) == ["000", "001", "002", "003", "004"]
    assert paper("000").arxiv is None and "no arXiv" in paper("000").note
    for pid in ("001", "002", "003", "004"):
        p = paper(pid)
        assert p.arxiv is not None and re.fullmatch(r"\d{4}\.\d{5}", p.arxiv) and p.year == 2024
        assert p.arxiv_url == f"https://arxiv.org/abs/{p.arxiv}" and p.authors
    assert all(re.fullmatch(r"[0-9a-f]{64}", p.source_sha256) for p in papers().values())
    assert all(re.fullmatch(r"[0-9a-f]{64}", h) for h in transcription()["derived_from"].values())


def test_lookup() -> None:
    alg = algorithm("001-alg5")
    assert alg.line("L9").tag == "[001-alg5 L9]" and "depth(v) * delta" in alg.line("L9").does
    assert alg.paper.title == "An Algorithm for Streaming Differentially Private Data"
    with pytest.raises(DPStreamInputError) as info:
        algorithm("001-alg11")
    assert info.value.field == "anchor"
    with pytest.raises(DPStreamInputError):
        alg.line("L14")  # printed (end if) but not a line code must cite
    with pytest.raises(DPStreamInputError):
        paper("005")
