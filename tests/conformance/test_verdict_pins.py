"""The verdict logic (`dpstream.conformance.outcome`: `exit_status`, `worst`, `severity`), pinned against the exit
table of docs/conformance.md: every verdict's exit code, the worst verdict deciding over any mix of outcomes and
over the two columns of one outcome, `inconclusive` and `skipped` never raising the exit status, and a protocol
error (3) outranking a certified violation (2), as the table orders them. Deterministic.
`tools/mutation_check.py` applies loosening mutants and shows that these tests kill each one.
"""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import pytest

from dpstream.conformance.outcome import Mode, Outcome, Verdict, exit_status, severity, worst

DOCS = Path(__file__).resolve().parents[2] / "docs" / "conformance.md"

DOC_EXIT = {"pass": 0, "inconclusive": 0, "skipped": 0, "deviation": 1, "violation": 2, "protocol-error": 3}
"""docs/conformance.md, "Exit status — the worst verdict decides": 0 every check passed, inconclusive or skipped;
1 deviates; 2 privacy violation certified; 3 the program broke the protocol (4, the harness could not run, is
the command's own and never comes from an outcome)."""

ORDER = ["pass", "inconclusive", "skipped", "deviation", "violation", "protocol-error"]
"""From least to most severe: by exit code, ties (exit 0) broken pass < inconclusive < skipped (`severity`)."""


def o(conformance: Verdict | None, privacy: Verdict | None = None) -> Outcome:
    return Outcome(Mode.STATISTICAL, "001-alg8", "pins", conformance, privacy)


def test_the_docs_table_is_the_one_pinned_here() -> None:
    rows = dict(re.findall(r"^\| (\d) \| (.+?) \|$", DOCS.read_text(encoding="utf-8"), flags=re.MULTILINE))
    assert set(rows) == {"0", "1", "2", "3", "4"}
    assert all(word in rows["0"] for word in ("passed", "inconclusive", "skipped"))
    assert "deviates" in rows["1"] and "privacy violation certified" in rows["2"] and "protocol" in rows["3"]
    assert "harness could not run" in rows["4"]


@pytest.mark.parametrize("verdict", list(Verdict))
def test_every_verdict_has_its_documented_exit_code(verdict: Verdict) -> None:
    assert verdict.exit_code == DOC_EXIT[verdict.value]
    assert exit_status([o(verdict)]) == DOC_EXIT[verdict.value]
    assert exit_status([o(None, verdict)]) == DOC_EXIT[verdict.value]


def test_the_worst_verdict_decides_over_every_mix_of_outcomes() -> None:
    for n in (1, 2, 3):
        for mix in itertools.product(list(Verdict), repeat=n):
            outcomes = [o(v) for v in mix]
            assert exit_status(outcomes) == max(DOC_EXIT[v.value] for v in mix), mix
            assert exit_status(list(reversed(outcomes))) == exit_status(outcomes)
            assert worst(mix).value == max((v.value for v in mix), key=ORDER.index), mix


def test_inconclusive_and_skipped_never_raise_the_exit_status() -> None:
    harmless = [Verdict.PASS, Verdict.INCONCLUSIVE, Verdict.SKIPPED]
    for base in Verdict:
        for extra in itertools.product(harmless, repeat=2):
            assert exit_status([o(base), *(o(v) for v in extra)]) == DOC_EXIT[base.value]
    assert exit_status([o(Verdict.INCONCLUSIVE)] * 5 + [o(Verdict.SKIPPED)] * 5) == 0
    assert exit_status([]) == 0  # no check at all: nothing deviated


def test_a_protocol_error_outranks_a_violation_and_a_violation_a_deviation() -> None:
    assert exit_status([o(Verdict.VIOLATION), o(Verdict.PROTOCOL_ERROR)]) == 3
    assert exit_status([o(Verdict.PROTOCOL_ERROR), o(Verdict.VIOLATION)]) == 3
    assert exit_status([o(Verdict.DEVIATION), o(Verdict.VIOLATION), o(Verdict.PASS)]) == 2
    assert worst([Verdict.VIOLATION, Verdict.PROTOCOL_ERROR]) is Verdict.PROTOCOL_ERROR


def test_one_outcome_is_the_worse_of_its_two_columns() -> None:
    for conformance, privacy in itertools.product([None, *Verdict], repeat=2):
        if conformance is None and privacy is None:
            continue
        present = [v for v in (conformance, privacy) if v is not None]
        outcome = o(conformance, privacy)
        assert outcome.verdict.value == max((v.value for v in present), key=ORDER.index)
        assert exit_status([outcome]) == max(DOC_EXIT[v.value] for v in present)
    assert exit_status([o(Verdict.PASS, Verdict.VIOLATION)]) == 2  # a violation in the privacy column counts
    assert exit_status([o(Verdict.DEVIATION, Verdict.INCONCLUSIVE)]) == 1
    assert o(Verdict.PASS, Verdict.INCONCLUSIVE).to_json()["verdict"] == "inconclusive"


def test_severity_orders_the_verdicts_as_documented() -> None:
    assert sorted(Verdict, key=severity) == [Verdict(v) for v in ORDER]
    assert [severity(Verdict(v))[0] for v in ORDER] == [DOC_EXIT[v] for v in ORDER]
    assert worst([]) is Verdict.SKIPPED
