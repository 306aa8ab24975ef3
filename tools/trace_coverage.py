#!/usr/bin/env python3
"""Which printed algorithm lines the code does not cite, and which tags cite nothing.

Reads the transcription shipped in the package (``reference/dpstream/papers/algorithms.json``,
see :mod:`dpstream.papers`) and the ``# [001-alg5 L9]`` tags in the comments of every ``*.py``
file under the given folders (:mod:`dpstream.papers.tags`).

Usage (from the repository root)::

    python tools/trace_coverage.py [SRC_DIR ...] [--json] [--min PCT]

SRC_DIR defaults to ``reference``. Exit status: 0; 1 when a tag cites a line that does not
exist, or when ``--min`` is given and the coverage is below it. ``tests/foundation/test_trace_coverage.py``
runs the same check in ``make test`` with ``--min 100``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "reference"))  # runs from a clone without installing the package

from dpstream.papers.tags import CoverageReport, coverage  # noqa: E402


def render(report: CoverageReport) -> str:
    lines = []
    for row in report.algorithms:
        status = "ok" if not row.missing else "missing " + ", ".join(row.missing)
        lines.append(f"{row.algorithm.anchor:<10} {row.have:>3}/{row.need:<3} {row.algorithm.title[:44]:<44} {status}")
    lines += [f"wrong tag: {p}" for p in report.problems]
    lines.append(f"coverage: {report.have}/{report.need} printed lines cited ({report.percent:.1f}%)"
                 + (f", {len(report.problems)} wrong tag(s)" if report.problems else ""))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("roots", nargs="*", type=Path, default=[ROOT / "reference"], metavar="SRC_DIR")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--min", type=float, default=None, metavar="PCT", help="fail below this coverage (percent)")
    args = parser.parse_args(argv)
    missing = [str(r) for r in args.roots if not r.exists()]
    if missing:
        parser.error(f"no such folder: {', '.join(missing)}")
    report = coverage(args.roots)
    print(json.dumps(report.as_json(), indent=2) if args.json else render(report))
    too_low = args.min is not None and report.percent < args.min
    return 1 if report.problems or too_low else 0


if __name__ == "__main__":
    sys.exit(main())
