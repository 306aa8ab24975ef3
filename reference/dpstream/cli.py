"""The ``dpstream`` console command.

* ``dpstream audit [--profile quick|thorough] [--scheduler ADDRESS] [--out DIR]`` runs the registered
  audits and prints the table (``make demo``).
* ``dpstream reproduce <experiment> [--out DIR] ...`` reruns a paper experiment.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from dpstream.experiments import discover

__all__ = ["main"]


def build_parser() -> argparse.ArgumentParser:
    from dpstream.audit import cli as audit_cli

    parser = argparse.ArgumentParser(prog="dpstream", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    audit = commands.add_parser("audit", help="run the privacy and accuracy audits and print the table")
    audit_cli.add_arguments(audit)
    audit.set_defaults(handler=audit_cli.run)

    reproduce = commands.add_parser("reproduce", help="rerun a paper experiment")
    experiments = reproduce.add_subparsers(dest="experiment", required=True)
    for name, experiment in sorted(discover().items()):
        sub = experiments.add_parser(name, help=experiment.help, description=experiment.help)
        sub.add_argument("--out", type=Path, default=Path("out") / name, help="output folder (default: %(default)s)")
        experiment.add_arguments(sub)
        sub.set_defaults(handler=experiment.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    status: int = args.handler(args)
    return status


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
