"""Compare every known-answer vector with its version at a git revision (what a regeneration changed).

    python tests/vectors/compare_vectors.py REV

For each ``*.json`` vector under ``tests/`` that also exists at ``REV``: how many numbers of ``expected``
changed and the largest absolute and relative change, and how many numbers of the tape (or anything else)
changed. Exit status 0; the report goes to stdout.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]

Change = tuple[str, float, float]


def changes(old: Any, new: Any, path: str = "") -> list[Change]:
    """(path, absolute change, relative change) of every differing leaf; structural differences count as inf."""
    if isinstance(old, dict) and isinstance(new, dict):
        if set(old) != set(new):
            return [(path, math.inf, math.inf)]
        return [c for k in old for c in changes(old[k], new[k], f"{path}.{k}")]
    if isinstance(old, list) and isinstance(new, list):
        if len(old) != len(new):
            return [(path, math.inf, math.inf)]
        return [c for i, (a, b) in enumerate(zip(old, new, strict=True)) for c in changes(a, b, f"{path}[{i}]")]
    if all(isinstance(x, int | float) and not isinstance(x, bool) for x in (old, new)):
        if old == new and type(old) is type(new):
            return []
        size = max(abs(old), abs(new))
        return [(path, abs(old - new), abs(old - new) / size if size else math.inf)]
    return [] if old == new else [(path, math.inf, math.inf)]


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    rev = argv[0]
    worst_abs = worst_rel = 0.0
    for path in sorted((ROOT / "tests").rglob("*.json")):
        rel = path.relative_to(ROOT).as_posix()
        shown = subprocess.run(["git", "show", f"{rev}:{rel}"], cwd=ROOT, capture_output=True, text=True)
        if shown.returncode != 0:
            continue
        old, new = json.loads(shown.stdout), json.loads(path.read_text(encoding="utf-8"))
        if not (isinstance(new, dict) and new.get("format") == "dpstream-known-answer"):
            continue
        diff = changes(old, new)
        expected = [c for c in diff if c[0].startswith(".expected")]
        rest = [c for c in diff if not c[0].startswith(".expected")]
        a = max((c[1] for c in expected), default=0.0)
        r = max((c[2] for c in expected), default=0.0)
        worst_abs, worst_rel = max(worst_abs, a), max(worst_rel, r)
        print(f"{rel}: {len(expected)} expected numbers changed (max abs {a:.3g}, max rel {r:.3g}); "
              f"{len(rest)} other changes")
    print(f"largest change of an expected release: abs {worst_abs:.3g}, rel {worst_rel:.3g}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
