"""Generated documentation stays in sync with its sources."""

from __future__ import annotations

import runpy
from pathlib import Path

import pytest

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


def test_counters_page_quotes_the_claims_the_code_states() -> None:
    """docs/counters.md quotes claim.describe() verbatim; a changed claim text must change the page too."""
    from dpstream.counters import BinaryTreeCounter, SimpleCounter
    from dpstream.insecure import InsecureZeroNoise

    text = (ROOT / "docs" / "counters.md").read_text(encoding="utf-8")
    assert SimpleCounter(1.0, noise=InsecureZeroNoise()).claim.describe() in text
    assert BinaryTreeCounter(1.0, 16, noise=InsecureZeroNoise()).claim.describe() in text


def test_tape_format_example_is_the_shipped_vector() -> None:
    """The tape shown in docs/tape-format.md is the start of the corpus vector 001-alg10/T8-bits-eps2."""
    import json

    from dpstream.vectors.corpus import known_answer

    vector = next(v for v in known_answer("001-alg10") if v.id == "001-alg10/T8-bits-eps2")
    text = (ROOT / "docs" / "tape-format.md").read_text(encoding="utf-8")
    for draw in vector.tape.draws[:2]:
        assert json.dumps(draw.to_json()) in text
    assert f"\"inputs\": {json.dumps(vector.inputs)}" in text
    assert all(repr(x) in text for x in vector.expected[:3])


def _markdown_files() -> list[Path]:
    return [ROOT / "README.md", ROOT / "CHANGELOG.md", *sorted((ROOT / "docs").rglob("*.md"))]


def test_relative_links_in_the_docs_resolve() -> None:
    """Every relative Markdown link of README.md, CHANGELOG.md and docs/ points at a file of the repository."""
    import re

    link = re.compile(r"\]\(([^)#\s]+)(#[^)\s]*)?\)")
    broken = []
    for page in _markdown_files():
        prose = re.sub(r"`[^`\n]*`", "", re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S))
        for target, _ in link.findall(prose):
            if "://" in target or target.startswith("mailto:"):
                continue
            if not (page.parent / target).exists():
                broken.append(f"{page.relative_to(ROOT)} -> {target}")
    assert not broken, broken


def test_readme_python_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The README's Python block runs as written (in a scratch folder: it saves tape.json)."""
    import re

    text = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert blocks, "the README has a Python example"
    monkeypatch.chdir(tmp_path)
    for block in blocks:
        exec(compile(block, "README.md", "exec"), {})
    assert (tmp_path / "tape.json").exists()


def test_no_placeholder_is_left_in_the_docs() -> None:
    """A figure to be filled in after a run (a line such as ``MEASURED_TABLE`` or ``TODO``) never ships."""
    import re

    placeholder = re.compile(r"^\s*([A-Z]+_[A-Z_]*TABLE|TODO|TBD|XXX)\b")
    left = [f"{page.relative_to(ROOT)}:{i}: {line.strip()}" for page in _markdown_files()
            for i, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1) if placeholder.match(line)]
    assert not left, left
