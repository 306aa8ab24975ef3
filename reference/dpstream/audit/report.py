"""The audit table, and the same report as Markdown, JSON and plots.

One row per component: component, paper anchor, claimed guarantee and neighbour relation,
exact privacy loss found, black-box eps lower bound, calibration, accuracy check, errata,
status. Status is ``pass``, ``FAIL`` (unexpected), ``expected failure`` (an ``expect_failure``
case whose audit caught the violation), ``UNEXPECTED PASS`` (an ``expect_failure`` case whose
audits all passed: the demonstration did not work) or ``ERROR`` (the case raised; never read
as a caught violation, also for ``expect_failure`` cases).

Plots (matplotlib, Agg backend) per component under ``<out>/plots/``: the privacy-loss
distribution (the model log-likelihood-ratio histogram of the black-box runs on f and on
f', with the exact loss bounds), and the error against the bound over time (accuracy checks).
"""

from __future__ import annotations

import itertools
import json
import math
import re
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from dpstream.audit.registry import (
    LAW_CHECKS,
    PRIVACY_CHECKS,
    CheckKind,
    CheckResult,
    ComponentReport,
    Profile,
    Verdict,
)
from dpstream.files import write_atomically, write_figure

__all__ = [
    "COLUMNS",
    "LEGEND",
    "TABLE_COLUMNS",
    "format_table",
    "law_cell",
    "privacy_cell",
    "report_rows",
    "shorten_name",
    "status",
    "to_json",
    "to_markdown",
    "write_report",
]

COLUMNS = ("component", "anchor", "claim", "privacy", "law", "exact loss", "black-box eps LB", "witness search",
           "calibration", "accuracy", "errata", "time", "status")
"""Columns of the Markdown report (every check); the terminal table shows :data:`TABLE_COLUMNS`."""
TABLE_COLUMNS = ("anchor", "component", "privacy", "law", "time", "status")
TABLE_WIDTH = 100
MIN_NAME = 12
"""Narrowest component column: the name gets what the other columns leave of :data:`TABLE_WIDTH`."""
LEGEND = ("privacy: violation (a certified loss above the claim: 'exact' white-box, 'LB' held-out "
          "black-box bound) | pass, backed by 'exact+cal' (the exact loss meets the claim and the noise is "
          "calibrated) or 'power' (a search with measured power) | inconclusive (nothing certified, nothing "
          "backs a pass); LB = best held-out bound <= claim; law: deviation (calibration 'cal' or accuracy "
          "'acc' differs from the reference law) | pass; status: pass, FAIL, expected failure, UNEXPECTED PASS, "
          "ERROR (docs/audits.md)")


def status(report: ComponentReport) -> str:
    """``pass``, ``FAIL``, ``expected failure``, ``UNEXPECTED PASS``, or ``ERROR`` (the case raised)."""
    if any("error" in c.data for c in report.checks):
        return "ERROR"
    failed = any(c.passed is False for c in report.checks)
    if report.case.expect_failure:
        return "expected failure" if failed else "UNEXPECTED PASS"
    return "FAIL" if failed else "pass"


def privacy_cell(report: ComponentReport) -> str:
    """The privacy verdict with its evidence (see :data:`LEGEND`)."""
    verdict = report.privacy
    if verdict is None:
        return "-"
    checks = [c for c in report.checks if c.kind in PRIVACY_CHECKS and "error" not in c.data]
    failed = [c for c in checks if c.passed is False]
    if failed:
        c = next((c for c in failed if c.kind is not CheckKind.EXACT_LOSS), failed[0])
        what = "exact" if c.kind is CheckKind.EXACT_LOSS else "LB"
        return f"violation {what} {_fmt(c.value)}>{_fmt(c.bound, 'g')}"
    sampled = [c for c in checks if c.kind is not CheckKind.EXACT_LOSS and c.value is not None and c.bound]
    best = max(sampled, key=lambda c: float(c.value or 0.0) - float(c.bound or 0.0)) if sampled else None
    bound = f" LB {_fmt(best.value, '.2f')}<={_fmt(best.bound, '.3g')}" if best is not None else ""
    if verdict is Verdict.INCONCLUSIVE:
        return f"inconclusive{bound}"
    return f"pass ({report.pass_backed_by}){bound}"


def law_cell(report: ComponentReport) -> str:
    verdict = report.law
    if verdict is None:
        return "-"
    if verdict is Verdict.PASS:
        return "pass"
    kinds = sorted({"cal" if c.kind is CheckKind.CALIBRATION else "acc" for c in report.checks
                    if c.kind in LAW_CHECKS and c.passed is False})
    return "deviation " + "+".join(kinds)


def _mark(check: CheckResult) -> str:
    return {True: "ok", False: "FAIL", None: "n/a"}[check.passed]


def _fmt(x: float | None, spec: str = ".3g") -> str:
    if x is None:
        return "-"
    if math.isinf(x):
        return "inf"
    return format(x, spec)


def _cell(report: ComponentReport, kind: CheckKind) -> str:
    checks = [c for c in report.checks if c.kind is kind]
    if not checks:
        return "-"
    parts = []
    for c in checks:
        if kind is CheckKind.EXACT_LOSS:
            parts.append(f"{_fmt(c.value)} (<= {_fmt(c.bound, 'g')}) {_mark(c)}" if c.value is not None
                         else f"error {_mark(c)}")
        elif kind in (CheckKind.BLACK_BOX, CheckKind.SEARCH):
            parts.append(f"{_fmt(c.value)} (<= {_fmt(c.bound)}) {_mark(c)}")
        elif kind is CheckKind.CALIBRATION:
            parts.append(f"p={_fmt(c.value, '.2g')} {_mark(c)}")
        else:
            tight = c.data.get("tightness_max")
            if c.bound is None:
                parts.append(f"{_fmt(c.value, '.3g')} {_mark(c)}")
            else:
                text = f"exceed {_fmt(c.value, '.3f')} (beta {_fmt(c.bound, 'g')})"
                parts.append(text + (f" t={_fmt(tight, '.2f')}" if tight is not None else "") + f" {_mark(c)}")
    return "; ".join(parts)


def report_rows(reports: Sequence[ComponentReport]) -> list[dict[str, str]]:
    rows = []
    for r in reports:
        claim = r.case.claim
        head = {"pure-dp": f"eps={claim.parameter:g}", "zcdp": f"rho={claim.parameter:g} zCDP",
                "not-private": "not private"}[claim.measure.value]
        rows.append({
            "component": r.case.component,
            "anchor": r.case.anchor,
            "claim": f"{head}, {claim.neighbour.value}",
            "privacy": privacy_cell(r),
            "law": law_cell(r),
            "exact loss": _cell(r, CheckKind.EXACT_LOSS),
            "black-box eps LB": _cell(r, CheckKind.BLACK_BOX),
            "witness search": _cell(r, CheckKind.SEARCH),
            "calibration": _cell(r, CheckKind.CALIBRATION),
            "accuracy": _cell(r, CheckKind.ACCURACY),
            "errata": ", ".join(r.case.errata) or "-",
            "time": f"{r.seconds:.1f}s",
            "status": status(r),
        })
    return rows


def shorten_name(text: str, width: int) -> str:
    """``text`` if it fits in ``width`` columns, else its longest prefix that ends at a word boundary (before a
    space, after a hyphen) followed by ``~``: a name is never cut inside a word, unless its first word alone is
    longer than ``width``."""
    if len(text) <= width:
        return text
    breaks = [i for i in range(1, width) if text[i] == " " or text[i - 1] == "-"]  # text[:i] + "~" fits
    if not breaks:
        return text[:width - 1] + "~"
    prefix = text[:breaks[-1]].rstrip(" ,;:(/")
    return (prefix or text[:breaks[-1]]) + "~"


def _compact_seconds(seconds: float) -> str:
    """At most 6 columns: 12.3s, 45m, 2.5h."""
    if seconds < 99.95:
        return f"{seconds:.1f}s"
    if seconds < 5970:
        return f"{seconds / 60:.0f}m"
    return f"{seconds / 3600:.1f}h"


def format_table(reports: Sequence[ComponentReport]) -> str:
    """A plain-text table for the terminal: one line per component named by its anchor, at most
    :data:`TABLE_WIDTH` columns, with a legend (the two verdict columns; every check's numbers are in the Markdown
    and JSON reports). The component name gets the columns the others leave (at least :data:`MIN_NAME`) and is
    shortened at a word boundary when it does not fit (its full text is in the reports); should the verdict cells
    still not fit, the privacy cell is shortened the same way."""
    rows = [{**row, "time": _compact_seconds(r.seconds)} for r, row in zip(reports, report_rows(reports), strict=True)]
    widths = {c: max([len(c)] + [len(row[c]) for row in rows]) for c in TABLE_COLUMNS}
    gaps = 2 * (len(TABLE_COLUMNS) - 1)

    def room(column: str) -> int:
        return TABLE_WIDTH - gaps - sum(w for c, w in widths.items() if c != column)

    widths["component"] = min(widths["component"], max(MIN_NAME, room("component")))
    widths["privacy"] = min(widths["privacy"], room("privacy"))

    def cell(row: dict[str, str], c: str) -> str:
        return shorten_name(row[c], widths[c]) if c in ("component", "privacy") else row[c]

    line = "  ".join(c.ljust(widths[c]) for c in TABLE_COLUMNS).rstrip()
    sep = "  ".join("-" * widths[c] for c in TABLE_COLUMNS)
    body = ["  ".join(cell(row, c).ljust(widths[c]) for c in TABLE_COLUMNS).rstrip() for row in rows]
    legend = textwrap.wrap("Legend: " + LEGEND, width=TABLE_WIDTH)
    return "\n".join([line, sep, *body, "", *legend])


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|")


def to_markdown(reports: Sequence[ComponentReport], profile: Profile, seed: int, command: str = "",
                partial: tuple[int, int] | None = None) -> str:
    """The report; ``partial`` = (cases finished, cases selected) when the run was interrupted."""
    rows = report_rows(reports)
    out = ["# dpstream audit report", ""]
    if partial is not None:
        out += [f"**PARTIAL**: the run was interrupted; {partial[0]} of {partial[1]} cases finished and are "
                "reported below, the others did not run.", ""]
    out.append(f"Profile `{profile.value}`, seed {seed}" + (f", command `{command}`" if command else "") + ".")
    out.append("Verdicts: " + LEGEND + ".")
    out.append("")
    out.append("Checks: exact loss = max privacy loss found by the white-box check (eps, or max D_alpha/alpha "
               "for zCDP) vs the claim; black-box eps LB = held-out Clopper-Pearson lower bound on eps (eps(delta) "
               "for zCDP) vs the claim (the model's likelihood ratio on the worst pair); witness search = the "
               "model-free search's best held-out bound (docs/audits.md); calibration = Bonferroni-adjusted "
               "smallest p-value of the noise law tests; "
               "accuracy = largest exceedance frequency (fails only when its Clopper-Pearson lower bound "
               "exceeds beta), t = tightness (empirical (1-beta)-quantile / bound); n/a = informational.")
    out.append("")
    out.append("| " + " | ".join(COLUMNS) + " |")
    out.append("|" + "---|" * len(COLUMNS))
    for row in rows:
        out.append("| " + " | ".join(_md_escape(row[c]) for c in COLUMNS) + " |")
    out.append("")
    out.append("## Details")
    for r in reports:
        out.append("")
        out.append(f"### {r.case.component} ({r.case.anchor}) — {status(r)}, {r.seconds:.1f}s")
        out.append("")
        out.append(f"- claim: {r.case.claim.describe()}")
        out.append(f"- family: {r.case.family}; false-alarm share {r.case.false_alarm:g}; "
                   f"expect_failure={r.case.expect_failure}")
        for c in r.checks:
            out.append(f"- **{c.kind.value}** [{_mark(c)}]: {_md_escape(c.detail)}")
        slug = _slug(r.case.family, r.case.component)
        out.append(f"- plot: `plots/{slug}.png`")
    out.append("")
    return "\n".join(out)


def _jsonable(x: Any) -> Any:
    if isinstance(x, float):
        return x if math.isfinite(x) else None
    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [_jsonable(v) for v in x]
    if isinstance(x, int | str | bool) or x is None:
        return x
    try:
        return float(x)
    except (TypeError, ValueError):
        return str(x)


def to_json(reports: Sequence[ComponentReport], profile: Profile, seed: int,
            partial: tuple[int, int] | None = None) -> dict[str, Any]:
    """The report as JSON; ``"partial": true`` and ``"cases_selected"`` when the run was interrupted."""
    comps = []
    for r, row in zip(reports, report_rows(reports), strict=True):
        comps.append({
            "component": r.case.component, "anchor": r.case.anchor, "family": r.case.family,
            "claim": r.case.claim.to_dict(), "errata": list(r.case.errata), "expect_failure": r.case.expect_failure,
            "false_alarm": r.case.false_alarm, "seconds": r.seconds, "status": status(r), "passed": r.passed,
            "privacy": None if r.privacy is None else r.privacy.value, "law": None if r.law is None else r.law.value,
            "row": row,
            "checks": [{"kind": c.kind.value, "passed": c.passed, "value": c.value, "bound": c.bound,
                        "detail": c.detail, "data": dict(c.data)} for c in r.checks],
        })
    doc: dict[str, Any] = _jsonable({"format": "dpstream-audit-report", "version": 2, "profile": profile.value,
                                     "seed": seed, "partial": partial is not None,
                                     "cases_selected": len(reports) if partial is None else partial[1],
                                     "components": comps})
    return doc


def _slug(family: str, component: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", f"{family}-{component}").strip("-").lower()


def plot_component(report: ComponentReport, path: Path) -> bool:
    """Write the component's figure; False when it has nothing to plot."""
    bb = next((c for c in report.checks if c.kind is CheckKind.BLACK_BOX and "scores_f" in c.data), None)
    acc = [c for c in report.checks if c.kind is CheckKind.ACCURACY and "t" in c.data]
    exact = next((c for c in report.checks if c.kind is CheckKind.EXACT_LOSS and "values" in c.data), None)
    panels = (1 if bb is not None else 0) + (1 if acc else 0)
    if panels == 0:
        return False
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, panels, figsize=(6.0 * panels, 4.0), squeeze=False)
    k = 0
    if bb is not None:
        ax = axes[0][k]
        k += 1
        for key, name in (("scores_f", "runs on f"), ("scores_f_prime", "runs on f'")):
            h = bb.data[key]
            edges, counts = h["edges"], h["counts"]
            total = max(1, sum(counts))
            centers = [(a + b) / 2 for a, b in itertools.pairwise(edges)]
            ax.step(centers, [c / total for c in counts], where="mid", label=name)
        if exact is not None and exact.value is not None and math.isfinite(exact.value) and exact.bound:
            for sign in (-1, 1):
                ax.axvline(sign * exact.bound, color="k", ls="--", lw=0.8)
        ax.set_xlabel("log p(o|f) - log p(o|f')  (model LLR)")
        ax.set_ylabel("fraction of runs")
        ax.set_title(f"privacy-loss distribution\n{bb.detail[:70]}", fontsize=8)
        ax.legend(fontsize=8)
    if acc:
        ax = axes[0][k]
        for c in acc:
            t = c.data["t"]
            ax.plot(t, c.data["bound"], ls="--", label=f"bound: {c.data['bound_name'][:40]}")
            ax.plot(t, c.data["quantile"], marker=".", label=f"empirical {1 - c.data['beta']:.2g}-quantile")
        ax.plot(acc[0].data["t"], acc[0].data["mean_abs_error"], marker=".", label="mean |error|")
        ax.set_xlabel("release t")
        ax.set_ylabel("|error|")
        ax.set_title("error against the bound over time", fontsize=9)
        ax.legend(fontsize=7)
    fig.suptitle(f"{report.case.component} ({report.case.anchor})", fontsize=10)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    write_figure(fig, path)
    plt.close(fig)
    return True


def write_report(
    reports: Sequence[ComponentReport], out: Path, profile: Profile, seed: int, *, plots: bool = True,
    command: str = "", partial: tuple[int, int] | None = None,
) -> list[Path]:
    """Write ``report.md``, ``report.json`` and ``plots/*.png`` under ``out``; return the written paths.
    ``partial`` = (cases finished, cases selected) marks the report of an interrupted run."""
    out.mkdir(parents=True, exist_ok=True)
    written = [out / "report.md", out / "report.json"]
    write_atomically(written[0], to_markdown(reports, profile, seed, command, partial))
    write_atomically(written[1], json.dumps(to_json(reports, profile, seed, partial), indent=1))
    if plots:
        for r in reports:
            path = out / "plots" / f"{_slug(r.case.family, r.case.component)}.png"
            if plot_component(r, path):
                written.append(path)
    return written
