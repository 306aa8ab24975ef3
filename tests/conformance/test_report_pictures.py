"""Reports: strict JSON (no bare Infinity or NaN) and each witness as a picture in the Markdown report."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from dpstream.conformance.outcome import Mode, Outcome, Verdict
from dpstream.conformance.pictures import witness_histogram
from dpstream.conformance.report import plain, write_json, write_markdown
from dpstream.conformance.runner import ConformConfig, ConformReport


def _witness() -> dict[str, Any]:
    edges = [0.0, 1.0, 2.0, 3.0]
    return {"event": "{x >= 2} favouring f [threshold]", "class": "threshold", "favours": "f",
            "counts": {"favoured": 90, "other": 1, "runs": 100}, "eps_lower_bound": 2.5, "claimed_eps": 1.0,
            "histogram": {"edges": edges, "f": [0, 4, 6, 50, 40], "f_prime": [30, 40, 29, 1, 0], "threshold": 2.0,
                          "upper": True, "kind": "threshold"}}


def _report(details: dict[str, Any]) -> ConformReport:
    outcome = Outcome(Mode.STATISTICAL, "001-alg8", "privacy: witness search", None, Verdict.VIOLATION,
                      message="certified", details=details)
    return ConformReport(ConformConfig(command=("prog",)), None, [outcome])


def _strict(text: str) -> Any:
    def refuse(token: str) -> Any:
        raise ValueError(f"not strict JSON: {token}")

    return json.loads(text, parse_constant=refuse)


def test_json_reports_are_strict_json(tmp_path: Path) -> None:
    details = {"witness": _witness(), "detectable_excess": math.inf, "margin": -math.inf, "odd": math.nan}
    path = tmp_path / "r.json"
    write_json(_report(details), path)
    doc = _strict(path.read_text(encoding="utf-8"))
    got = doc["outcomes"][0]["details"]
    assert (got["detectable_excess"], got["margin"], got["odd"]) == ("inf", "-inf", "nan")
    assert plain({"a": (1, 2.5)}) == {"a": [1, 2.5]}


def test_the_markdown_report_draws_every_witness(tmp_path: Path) -> None:
    path = tmp_path / "r.md"
    write_markdown(_report({"witness": _witness()}), path)
    text = path.read_text(encoding="utf-8")
    assert "## Witnesses" in text and "<- event" in text and "90 of 100" in text
    pytest.importorskip("matplotlib")
    pngs = list((tmp_path / "r-files").glob("*.png"))
    assert len(pngs) == 1 and pngs[0].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert f"(r-files/{pngs[0].name})" in text


def test_the_text_histogram_marks_the_event_bins_and_keeps_every_run() -> None:
    lines = witness_histogram(_witness())
    rows = [line for line in lines if line.startswith("[")]
    assert sum("<- event" in r for r in rows) == 2  # [2, 3) and above 3: the bins of {x >= 2}
    counts = [[int(t) for t in r.replace("<- event", "").split() if t.isdigit()][-2:] for r in rows]
    assert sum(c[0] for c in counts) == 100 and sum(c[1] for c in counts) == 100
    assert all(len(line) <= 100 for line in lines)


def test_a_renyi_certificate_is_drawn_bin_by_bin(tmp_path: Path) -> None:
    """A zCDP pair's Renyi test (details.composed_event) is a witness too: its held-out runs per bin on f and on f',
    over the statistic as given (a lower-tail partition turned back), every run kept, no bin marked as an event."""
    from dpstream.audit.renyi import RenyiPartition, RenyiTest
    from dpstream.conformance.pictures import witnesses_of

    part = RenyiPartition(2.0, (-1.0, 0.5), favours_first=True, upper=False)  # bins of -L: (., -1), [-1, .5), ...
    test = RenyiTest("pair", "composed log-likelihood ratio", part, (60, 30, 10), (10, 30, 60), 100, 25, 1.2, 0.6,
                     0.5, 1e-3, 0.1)
    details = {"composed_event": test.to_data()}
    (title, data), = witnesses_of(details)
    assert title == "pair test witness"
    hist = data["histogram"]
    assert hist["edges"] == [-0.5, 1.0] and hist["f"] == [10, 30, 60] and hist["f_prime"] == [60, 30, 10]
    lines = witness_histogram(data, title)
    assert "rho lower bound 0.6 vs claimed 0.5" in " ".join(lines)
    rows = [line for line in lines if line.startswith("[")]
    assert not any("<- event" in r for r in rows) and len(rows) == 3
    path = tmp_path / "r.md"
    write_markdown(_report(details), path)
    assert "pair test witness" in path.read_text(encoding="utf-8")
