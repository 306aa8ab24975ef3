"""What docs/conformance.md shows runs as shown: the Python example block as pasted, and the schema command.

The example block is taken from the page (the first ```python block of "A complete implementation in Python"),
written to a file and checked by `dpstream conform --mode known-answer` (every known-answer vector of 001-alg8
in the corpus); it is also the file examples/conformance/python/simple_counter.py, so the page and the example
cannot drift apart. The schema command is taken from the page and run; its output must be JSON, the shipped
schema. About 0.5 s, plus about 2 s to load the catalog and corpus once per session (measured on a shared
machine).
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

from dpstream.conformance.outcome import Mode, Verdict
from dpstream.conformance.runner import ConformConfig, conform
from dpstream.conformance.wire import protocol_schema
from dpstream.vectors.corpus import known_answer

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "conformance.md"
EXAMPLE = ROOT / "examples" / "conformance" / "python" / "simple_counter.py"


def section(title: str) -> str:
    text = PAGE.read_text(encoding="utf-8")
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start:end]


def test_the_python_example_of_the_page_runs_as_pasted(tmp_path: Path) -> None:
    (block,) = re.findall(r"```python\n(.*?)```", section("A complete implementation in Python"), re.S)[:1]
    assert block == EXAMPLE.read_text(encoding="utf-8")
    program = tmp_path / "pasted.py"
    program.write_text(block, encoding="utf-8")
    config = ConformConfig(command=(sys.executable, str(program)), algorithms=("001-alg8",),
                           modes=frozenset({Mode.KNOWN_ANSWER}))
    report = conform(config)
    failed = [o.message for o in report.outcomes if o.verdict is not Verdict.PASS]
    assert report.exit_status == 0 and not failed, failed[:3]
    assert len(report.outcomes) == len(list(known_answer("001-alg8")))


def test_the_schema_command_of_the_page_prints_the_schema_as_json() -> None:
    (command,) = re.findall(r"```\n(python -c .*?)\n```", section("Wire protocol, version 1"))
    argv = shlex.split(command)
    assert argv[0] == "python"
    done = subprocess.run([sys.executable, *argv[1:]], capture_output=True, text=True, timeout=60, check=True)
    assert json.loads(done.stdout) == protocol_schema()
