"""Generated documentation stays in sync with its sources."""

from __future__ import annotations

import runpy
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_errata_md_is_assembled_from_fragments() -> None:
    tool = runpy.run_path(str(ROOT / "tools" / "assemble_errata.py"))
    expected = tool["assemble"]()
    current = (ROOT / "docs" / "errata.md").read_text(encoding="utf-8")
    assert current == expected, "docs/errata.md is stale: run python tools/assemble_errata.py"
    # every fragment entry appears in the index
    for fragment in (ROOT / "docs" / "errata").glob("*.md"):
        for line in fragment.read_text(encoding="utf-8").splitlines():
            if line.startswith("## E-") and "<" not in line:
                entry_id = line[3:].split(":")[0]
                assert f"[{entry_id}](#{entry_id.lower()})" in current
