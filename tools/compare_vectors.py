"""Compare the vectors corpus with its version at a git revision (what a regeneration changed).

    python tools/compare_vectors.py REV

For every vector of ``reference/dpstream/vectors/corpus`` that also exists at ``REV``: how many numbers of
its ``expected`` releases changed and the largest absolute and relative change, and how many other numbers
(the tape, a must-reject vector's releases before its bad step, ...) changed. The manifest is skipped (its
checksums change with every file).
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "reference" / "dpstream" / "vectors" / "corpus"

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
    worst: dict[str, tuple[float, float]] = {}
    files = 0
    for path in sorted(CORPUS.rglob("*.json")):
        if path.name == "manifest.json":
            continue
        rel = path.relative_to(ROOT).as_posix()
        shown = subprocess.run(["git", "show", f"{rev}:{rel}"], cwd=ROOT, capture_output=True, text=True)
        if shown.returncode != 0:
            continue
        diff = changes(json.loads(shown.stdout), json.loads(path.read_text(encoding="utf-8")))
        if not diff:
            continue
        files += 1
        expected = [c for c in diff if c[0].startswith(".expected")]
        rest = [c for c in diff if not c[0].startswith(".expected")]
        for label, group in (("expected", expected), ("other", rest)):
            if group:
                a, r = max(c[1] for c in group), max(c[2] for c in group)
                worst[label] = (max(worst.get(label, (0.0, 0.0))[0], a), max(worst.get(label, (0.0, 0.0))[1], r))
        print(f"{path.relative_to(CORPUS).as_posix()}: {len(expected)} expected numbers changed"
              + (f" (max abs {max(c[1] for c in expected):.3g}, max rel {max(c[2] for c in expected):.3g})"
                 if expected else "")
              + (f"; {len(rest)} other numbers (max abs {max(c[1] for c in rest):.3g}, "
                 f"max rel {max(c[2] for c in rest):.3g})" if rest else ""))
    print(f"{files} vectors changed")
    for label, (a, r) in worst.items():
        print(f"largest change ({label}): abs {a:.3g}, rel {r:.3g}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
