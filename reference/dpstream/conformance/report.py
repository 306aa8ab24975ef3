"""Reports of a conformance run: a terminal table (fits 100 columns), JSON, JUnit XML and Markdown.

The terminal table has one row per (algorithm, mode) with the counts of each verdict and the two
verdict columns (conformance: deviation/pass; privacy: violation/inconclusive/pass), followed by one
finding per failed check (first divergence, witness), the last lines of the program's stderr when
anything failed, and a legend. JSON holds every outcome in full; JUnit XML has one test case per check
(``deviation``/``violation``/``protocol-error`` as failures, ``skipped`` as skipped), so CI systems show
each vector by name. The report of an interrupted run says so everywhere (``"partial": true``).
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from dpstream.audit.search import finite
from dpstream.conformance.outcome import Mode, Outcome, Verdict, severity, worst
from dpstream.conformance.pictures import text_block, witness_histogram, witness_png, witnesses_of
from dpstream.conformance.runner import ConformReport
from dpstream.files import write_atomically

__all__ = ["dumps", "format_table", "plain", "to_json", "write_json", "write_junit", "write_markdown"]

WIDTH = 100
MAX_FINDINGS = 25
STDERR_SHOWN = 10
"""Lines of the program's stderr the terminal report shows (the JSON report keeps more)."""
COUNTED = (Verdict.PASS, Verdict.DEVIATION, Verdict.VIOLATION, Verdict.INCONCLUSIVE, Verdict.PROTOCOL_ERROR,
           Verdict.SKIPPED)
SHORT = {Verdict.PASS: "pass", Verdict.DEVIATION: "dev", Verdict.VIOLATION: "viol", Verdict.INCONCLUSIVE: "inc",
         Verdict.PROTOCOL_ERROR: "proto", Verdict.SKIPPED: "skip"}
EXIT_TEXT = {0: "conforms", 1: "deviates from the reference", 2: "leaks: a privacy violation is certified",
             3: "broke the protocol"}


def _groups(outcomes: Iterable[Outcome]) -> dict[tuple[str, Mode], list[Outcome]]:
    groups: dict[tuple[str, Mode], list[Outcome]] = {}
    for o in outcomes:
        groups.setdefault((o.algorithm, o.mode), []).append(o)
    return groups


def _column(outcomes: Sequence[Outcome], attr: str) -> str:
    values = [getattr(o, attr) for o in outcomes if getattr(o, attr) is not None]
    if any(o.verdict is Verdict.PROTOCOL_ERROR for o in outcomes) and attr == "conformance":
        values.append(Verdict.PROTOCOL_ERROR)
    return worst(values).value if values else "-"


def rows(report: ConformReport) -> list[dict[str, Any]]:
    out = []
    for (algorithm, mode), group in sorted(_groups(report.outcomes).items(), key=lambda kv: (kv[0][0], kv[0][1])):
        counts = {v: sum(1 for o in group if o.verdict is v) for v in COUNTED}
        out.append({"algorithm": algorithm, "mode": mode.value, "checks": len(group),
                    **{SHORT[v]: counts[v] for v in COUNTED},
                    "conformance": _column(group, "conformance"), "privacy": _column(group, "privacy")})
    return out


def _header(report: ConformReport) -> list[str]:
    hello = report.hello
    who = (f"{hello.implementation}: {len(hello.algorithms)} algorithm(s), modes {', '.join(hello.modes)}"
           if hello is not None else "no valid hello")
    command = " ".join(report.config.command)
    lines = [textwrap.shorten(f"dpstream conform -- {command}", WIDTH), textwrap.shorten(who, WIDTH)]
    if report.partial:
        lines.append(f"PARTIAL: interrupted after {report.done} of {report.planned} checks; the others did not run")
    return lines


def stderr_tail(report: ConformReport) -> str:
    """The program's last stderr lines: at the end of the run, else those kept with the last protocol error."""
    if report.stderr_tail.strip():
        return report.stderr_tail
    tails = [str(o.details.get("stderr_tail", "")) for o in report.outcomes if o.verdict is Verdict.PROTOCOL_ERROR]
    return next((t for t in reversed(tails) if t.strip()), "")


def _clip(text: str) -> str:
    return text if len(text) <= WIDTH else text[:WIDTH - 3] + "..."


def coverage_rows(report: ConformReport) -> list[str]:
    """The differential mode's coverage table (fits 100 columns): per algorithm, the cases and their rate, the printed
    lines of its box reached, the lines and branches of the algorithm modules, the largest case reached."""
    tables = [(o.algorithm, o.details["coverage"]) for o in report.outcomes
              if o.mode is Mode.DIFFERENTIAL and isinstance(o.details.get("coverage"), Mapping)]
    if not tables:
        return []
    out = ["", "Differential coverage (printed lines of the box reached, code lines and branches of the algorithm",
           "modules, the largest case: depth D, steps T, records/points n per step, fanout):",
           f"  {'algorithm':<13}{'cases':>7}{'per s':>7}{'printed':>9}{'lines':>7}{'branches':>9}  largest"]
    for algorithm, cov in sorted(tables):
        lines_reached, box = cov.get("printed_lines", [0, 0])
        printed = f"{lines_reached}/{box}" if box else "-"  # no printed box (a section's construction)
        largest = cov.get("largest", {})
        big = ", ".join(f"{k} {largest[k]:g}" for k in ("D", "T", "n", "fanout", "|X|") if k in largest)
        rate = cov.get("cases_per_second")
        out.append(_clip(f"  {algorithm[:12]:<13}{cov.get('cases', 0):>7}{rate if rate is not None else '-':>7}"
                         f"{printed:>9}{cov.get('lines', 0):>7}{cov.get('branches', 0):>9}  {big}"))
    return out


def format_table(report: ConformReport) -> str:
    lines = _header(report)
    head = (f"{'algorithm':<13}{'mode':<13}{'checks':>6}{'pass':>6}{'dev':>5}{'viol':>5}{'inc':>5}{'proto':>6}"
            f"{'skip':>5}  {'conformance':<15}privacy")
    lines += ["", head, "-" * len(head)]
    for r in rows(report):
        lines.append(f"{r['algorithm'][:12]:<13}{r['mode']:<13}{r['checks']:>6}{r['pass']:>6}{r['dev']:>5}"
                     f"{r['viol']:>5}{r['inc']:>5}{r['proto']:>6}{r['skip']:>5}  {r['conformance']:<15}"
                     f"{r['privacy']}".rstrip())
    findings = sorted((o for o in report.outcomes if o.verdict not in (Verdict.PASS, Verdict.SKIPPED)),
                      key=lambda o: severity(o.verdict), reverse=True)  # stable: the worst first, then run order
    skipped = [o for o in report.outcomes if o.verdict is Verdict.SKIPPED]
    if findings:
        shown = f", first {MAX_FINDINGS}" if len(findings) > MAX_FINDINGS else ""
        lines += ["", f"Findings ({len(findings)}{shown}):"]
        for o in findings[:MAX_FINDINGS]:
            text = f"[{o.verdict.value}] {o.algorithm} {o.mode.value} {o.name}: {o.message}"
            lines += textwrap.wrap(text, WIDTH, subsequent_indent="    ")
    lines += coverage_rows(report)
    if skipped:
        reasons = sorted({f"{o.algorithm} {o.mode.value}: {o.message}" for o in skipped})
        lines += ["", "Skipped:"] + [textwrap.shorten("  " + r, WIDTH) for r in reasons[:MAX_FINDINGS]]
    tail = stderr_tail(report).rstrip().splitlines()[-STDERR_SHOWN:]
    if findings and tail:
        lines += ["", f"The program's stderr (last {len(tail)} lines):"] + [_clip("  | " + t.expandtabs(4))
                                                                          for t in tail]
    status = report.exit_status
    if report.partial:
        verdict = (f"interrupted: {report.done} of {report.planned} checks done, the worst of them: the program "
                   f"{EXIT_TEXT[status]} ({report.seconds:.1f} s)")
    else:
        verdict = (f"exit {status}: the program {EXIT_TEXT[status]} ({len(report.outcomes)} checks, "
                   f"{report.seconds:.1f} s)")
    lines += ["", textwrap.shorten(verdict, WIDTH),
              "legend: dev = deviation from the reference (outputs or noise law), viol = privacy violation",
              "certified, inc = inconclusive (budget too small), proto = protocol error, skip = not applicable."]
    return "\n".join(lines)


def to_json(report: ConformReport) -> dict[str, Any]:
    hello = report.hello
    return {
        "format": "dpstream-conform-report", "version": 1,
        "command": list(report.config.command), "profile": report.config.profile,
        "modes": sorted(m.value for m in report.config.modes), "seed": report.config.seed,
        "implementation": None if hello is None else dict(hello.raw),
        "exit_status": report.exit_status, "exit_meaning": EXIT_TEXT[report.exit_status],
        "partial": report.partial, "checks_planned": report.planned, "checks_done": report.done,
        "seconds": round(report.seconds, 3), "summary": rows(report),
        "outcomes": [o.to_json() for o in report.outcomes], "stderr_tail": stderr_tail(report),
    }


def plain(value: Any) -> Any:
    """``value`` as strict JSON data: numpy scalars and arrays to numbers and lists, infinite and undefined floats to
    the strings "inf", "-inf" and "nan" (JSON has no Infinity or NaN), anything else unknown to its text."""
    if isinstance(value, bool) or value is None or isinstance(value, str | int):
        return value
    if isinstance(value, float | np.floating):
        return finite(float(value))
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.ndarray):
        return plain(value.tolist())
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return str(value)


def dumps(doc: Any) -> str:
    """Strict JSON (:func:`plain`): every report file parses with any JSON parser."""
    return json.dumps(plain(doc), indent=1, allow_nan=False)


def write_json(report: ConformReport, path: Path) -> None:
    write_atomically(path, dumps(to_json(report)) + "\n")


def write_junit(report: ConformReport, path: Path) -> None:
    from junitparser import Error, Failure, JUnitXml, Skipped, TestCase, TestSuite

    xml = JUnitXml("dpstream conform (partial: interrupted)" if report.partial else "dpstream conform")
    for (algorithm, mode), group in sorted(_groups(report.outcomes).items(), key=lambda kv: (kv[0][0], kv[0][1])):
        suite = TestSuite(f"{algorithm} {mode.value}")
        for o in group:
            case = TestCase(o.name, classname=f"{algorithm}.{mode.value}", time=round(o.seconds, 4))
            if o.verdict is Verdict.SKIPPED:
                case.result = [Skipped(o.message)]
            elif o.verdict is Verdict.PROTOCOL_ERROR:
                case.result = [Error(o.message, "protocol-error")]
                tail = str(o.details.get("stderr_tail", ""))
                if tail:
                    case.system_err = tail
            elif o.verdict in (Verdict.DEVIATION, Verdict.VIOLATION):
                failure = Failure(o.message, o.verdict.value)
                failure.text = dumps(dict(o.details))
                case.result = [failure]
            suite.add_testcase(case)
        xml.add_testsuite(suite)
    write_atomically(path, bytes(xml.tostring()))  # type: ignore[no-untyped-call]


def _minimal_case(o: Outcome) -> list[str]:
    """A differential finding's case in full (parameters, inputs, tape seed) and its vector file, as Markdown."""
    case = o.details.get("minimal_case")
    if not isinstance(case, dict):
        return []
    shown = {k: case.get(k) for k in ("params", "inputs", "tape_seed")}
    return ["", f"  Minimal case, written to `{o.details.get('vector')}` (a known-answer vector):", "",
            "  ```json", *(f"  {line}" for line in json.dumps(shown, indent=1).splitlines()), "  ```", ""]


def write_markdown(report: ConformReport, path: Path) -> None:
    lines = ["# dpstream conform report", "", f"`dpstream conform -- {' '.join(report.config.command)}`", ""]
    if report.partial:
        lines += [f"**PARTIAL**: the run was interrupted after {report.done} of {report.planned} checks; the others "
                  "did not run.", ""]
    if report.hello is not None:
        lines += [f"Implementation **{report.hello.implementation}**, modes {', '.join(report.hello.modes)}; "
                  f"profile {report.config.profile}, seed {report.config.seed}.", ""]
    lines += ["| algorithm | mode | checks | pass | deviation | violation | inconclusive | protocol | skipped "
              "| conformance | privacy |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows(report):
        lines.append(f"| {r['algorithm']} | {r['mode']} | {r['checks']} | {r['pass']} | {r['dev']} | {r['viol']} | "
                     f"{r['inc']} | {r['proto']} | {r['skip']} | {r['conformance']} | {r['privacy']} |")
    coverage = coverage_rows(report)
    if coverage:
        lines += ["", "## Differential coverage", "", "```", *[line[2:] for line in coverage[3:]], "```"]
    findings = sorted((o for o in report.outcomes if o.verdict not in (Verdict.PASS, Verdict.SKIPPED)),
                      key=lambda o: severity(o.verdict), reverse=True)  # stable: the worst first, then run order
    if findings:
        lines += ["", "## Findings", ""]
        for o in findings:
            lines.append(f"* **{o.verdict.value}** `{o.algorithm}` {o.mode.value} `{o.name}`: {o.message}")
            lines += _minimal_case(o)
    pictured = [o for o in report.outcomes if witnesses_of(o.details)]
    if pictured:
        lines += ["", "## Witnesses", "",
                  "The best event of each privacy search: the held-out runs per bin of its statistic on f and on f', "
                  "the bins inside the event marked.", ""]
        folder = path.with_name(path.stem + "-files")
        for o in pictured:
            for title, data in witnesses_of(o.details):
                heading = f"{o.algorithm} {o.mode.value}: {title} ({o.privacy.value if o.privacy else o.verdict.value})"
                lines += [f"### {heading}", ""]
                png = folder / f"{o.algorithm}-{o.mode.value}-{title.replace(' ', '-')}.png"
                if witness_png(data, png, heading):
                    lines += [f"![{heading}]({folder.name}/{png.name})", ""]
                lines += [*text_block(witness_histogram(data, title)), ""]
    status = report.exit_status
    lines += ["", f"Exit status **{status}**: the program {EXIT_TEXT[status]}."]
    write_atomically(path, "\n".join(lines) + "\n")
