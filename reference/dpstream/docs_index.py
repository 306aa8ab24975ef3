"""The generated docs index (``docs/catalog.md``): one section per catalog entry.

``python -m dpstream.docs_index`` prints it; ``tests/catalog/test_catalog.py`` fails when the
committed file differs from what this module renders, so the index cannot go stale. For every
algorithm it lists the claim, the proof note, the doc page, the errata, the vectors, the audit
cases, the exact model, the experiments that run it, the printed variant and, for the conformance
protocol, the parameters, INPUT, RELEASE and draw sites.

It reads the catalog, the vectors manifest, the audit registry and the experiments, so it sits above all of them
(a module of its own, not part of ``dpstream.catalog``: the catalog imports none of its readers; docs/architecture.md).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from dpstream.catalog import Entry, entries

__all__ = ["render"]


def _schema_text(schema: Mapping[str, Any]) -> str:
    return "`" + json.dumps(schema, separators=(", ", ": ")) + "`"


def _params(entry: Entry) -> list[str]:
    rows = ["| parameter | type | rule | required |", "|---|---|---|---|"]
    for p in entry.params.params:
        rule = []
        if p.exclusive_minimum is not None:
            rule.append(f"> {p.exclusive_minimum:g}")
        if p.minimum is not None:
            rule.append(f">= {p.minimum:g}")
        if p.maximum is not None:
            rule.append(f"<= {p.maximum:g}")
        if p.enum is not None:
            rule.append("one of " + ", ".join(f"`{json.dumps(v)}`" for v in p.enum))
        required = ("yes" if p.required else "no (absent: none; `null` is refused)" if p.default is None
                    else f"no (default `{json.dumps(p.default)}`)")
        rows.append(f"| `{p.name}` | {p.type} | {p.doc}{'; ' if rule else ''}{', '.join(rule)} | {required} |")
    return rows


def _section(entry: Entry, vectors: Mapping[str, tuple[int, int]], audits: Mapping[str, list[str]],
             experiments: Mapping[str, list[str]]) -> list[str]:
    lines = [f'<a id="{entry.anchor}"></a>', "", f"## {entry.anchor}: {entry.title}", ""]
    facts = [f"family `{entry.family}`", "printed box" if entry.printed else "component (no printed box)",
             f"proof [`{entry.proof}`](../{entry.proof})", f"page [`{entry.doc}`](../{entry.doc})"]
    lines.append("; ".join(facts) + ".")
    if entry.errata:
        lines.append(f"Errata: {', '.join(entry.errata)} ([errata](errata.md)).")
    if entry.realised_by:
        lines.append(f"No standalone instance: run by {', '.join(entry.realised_by)}.")
    if entry.notes:
        lines.append(f"Notes: {entry.notes}.")
    if entry.streaming:
        assert entry.codec is not None
        ka, mr = vectors.get(entry.anchor, (0, 0))
        printed = "`as_printed` (dpstream serve --as-printed)" if entry.as_printed else "none"
        lines.append(f"Vectors: {ka} known-answer, {mr} must-reject (`dpstream/vectors/corpus/{entry.anchor}/`). "
                     f"Printed variant: {printed}.")
        lines.append(f"Audit cases: {', '.join(audits.get(entry.anchor, [])) or 'none registered'}.")
        model = "none" if entry.model is None else "linear release model (exact loss; vectorised audit sampler)"
        if entry.printed_model is not None:
            model += ", and one for the printed variant"
        lines.append(f"Exact model: {model}.")
        if experiments.get(entry.anchor):
            lines.append("Experiments: " + ", ".join(f"`dpstream reproduce {n}`" for n in experiments[entry.anchor])
                         + ".")
        codec = entry.codec
        shapes = f"INPUT: {_schema_text(codec.input_schema)}; RELEASE: {_schema_text(codec.release_schema)}."
        lines += ["", *_params(entry), "", shapes]
        if entry.inputs:
            lines.append(f"Input rules: {entry.inputs}.")
        if entry.sites:
            lines.append(f"Draw sites: {entry.sites}.")
        if entry.error_model is not None:
            lines.append(f"Error model ([conformance.md](conformance.md#the-error-model)): "
                         f"{entry.error_model.describe()}.")
    lines.append("")
    return lines


def render() -> str:
    from dpstream.audit.registry import discover
    from dpstream.experiments import discover as discover_experiments
    from dpstream.vectors.corpus import load_manifest

    counts: dict[str, tuple[int, int]] = {}
    for row in load_manifest():
        ka, mr = counts.get(row.algorithm, (0, 0))
        counts[row.algorithm] = (ka + (row.kind == "known-answer"), mr + (row.kind == "must-reject"))
    audits: dict[str, list[str]] = {}
    for case in discover():
        audits.setdefault(case.anchor, []).append(case.component)
    runs: dict[str, list[str]] = {}
    for name, experiment in sorted(discover_experiments().items()):
        for anchor in experiment.anchors:
            runs.setdefault(anchor, []).append(name)
    everything = entries()
    lines = ["# Catalog of algorithms (generated)", "",
             "Generated by `python -m dpstream.docs_index > docs/catalog.md` from `dpstream.catalog`, the one list",
             "of algorithms (a test fails when this file is stale). Protocol parameters, INPUT and RELEASE shapes and",
             "draw sites are those of the conformance protocol ([conformance.md](conformance.md)).", "",
             "| anchor | title | family | protocol | vectors (known-answer / must-reject) |", "|---|---|---|---|---|"]
    for e in everything:
        ka, mr = counts.get(e.anchor, (0, 0))
        served = "yes" if e.streaming else f"no (run by {', '.join(e.realised_by)})" if e.realised_by else "no"
        lines.append(f"| [{e.anchor}](#{e.anchor}) | {e.title} | {e.family} | {served} | {ka} / {mr} |")
    lines.append("")
    for e in everything:
        lines += _section(e, counts, audits, runs)
    return "\n".join(lines).rstrip() + "\n"


if __name__ == "__main__":  # pragma: no cover
    print(render(), end="")
