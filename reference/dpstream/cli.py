"""The ``dpstream`` console command.

* ``dpstream audit [--full] [--out DIR]`` runs the registered audits and prints the table
  (``make demo``).
* ``dpstream reproduce <experiment> [--out DIR] ...`` reruns a paper experiment.
* ``dpstream conform [options] -- COMMAND ARGS...`` checks another implementation through the
  conformance protocol; ``dpstream serve`` is the reference speaking it.
* ``dpstream vectors generate|verify`` rewrites or replays the shipped vectors corpus.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from dpstream.experiments import discover
from dpstream.experiments.data import default_data_dir

__all__ = ["main"]


def build_parser() -> argparse.ArgumentParser:
    from dpstream.audit import cli as audit_cli
    from dpstream.conformance import cli as conform_cli

    parser = argparse.ArgumentParser(prog="dpstream", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    audit = commands.add_parser("audit", help="run the privacy and accuracy audits and print the table")
    audit_cli.add_arguments(audit)
    audit.set_defaults(handler=audit_cli.run)

    conform = commands.add_parser("conform", help="check a program through the conformance protocol",
                                  add_help=False, usage="dpstream conform [options] -- COMMAND [ARGS...]")
    conform.add_argument("rest", nargs=argparse.REMAINDER)
    conform.set_defaults(handler=lambda args: conform_cli.conform_main(args.rest))
    serve = commands.add_parser("serve", help="answer the conformance protocol on stdin/stdout (the reference)")
    conform_cli.add_serve_arguments(serve)
    serve.set_defaults(handler=conform_cli.run_serve)
    vectors = commands.add_parser("vectors", help="rewrite or verify the shipped vectors corpus")
    conform_cli.add_vectors_arguments(vectors)
    vectors.set_defaults(handler=conform_cli.run_vectors)

    reproduce = commands.add_parser("reproduce", help="rerun a paper experiment")
    experiments = reproduce.add_subparsers(dest="experiment", required=True)
    for name, experiment in sorted(discover().items()):
        sub = experiments.add_parser(name, help=experiment.help, description=experiment.help)
        sub.add_argument("--out", type=Path, default=Path("out") / name, help="output folder (default: %(default)s)")
        if experiment.data:
            sub.add_argument("--data-dir", type=Path, default=default_data_dir(),
                             help="folder holding " + ", ".join(sorted({f.dataset + "/" for f in experiment.data}))
                             + " (default: the repository's data/ folder, %(default)s)")
        experiment.add_arguments(sub)
        sub.set_defaults(handler=experiment.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    if arguments[:1] == ["conform"]:  # its own parser: `--` separates the program's command line
        from dpstream.conformance.cli import conform_main

        return conform_main(arguments[1:])
    parser = build_parser()
    args = parser.parse_args(arguments)
    status: int = args.handler(args)
    return status


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
