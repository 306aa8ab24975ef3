"""``dpstream audit``: placeholder until the audit engine lands (issue 3)."""

from __future__ import annotations

import argparse
from pathlib import Path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", type=Path, default=Path("audit-report"), help="report folder")
    parser.add_argument("--full", action="store_true", help="run the long profile")


def run(args: argparse.Namespace) -> int:
    print("the audit engine is not implemented yet")
    return 0
