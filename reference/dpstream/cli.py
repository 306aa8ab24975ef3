"""The ``dpstream`` console command.

* ``dpstream audit [--profile quick|thorough] [--scheduler ADDRESS] [--out DIR]`` runs the registered
  audits and prints the table (``make demo``).
* ``dpstream reproduce <experiment> [--out DIR] ...`` reruns a paper experiment.
* ``dpstream conform [options] -- COMMAND ARGS...`` checks another implementation through the
  conformance protocol; ``dpstream serve`` is the reference speaking it.
* ``dpstream vectors generate|verify`` rewrites or replays the shipped vectors corpus.

Exit statuses (``conform`` has its own, see ``dpstream conform --help``): 0 success; 2 a usage error
(a bad argument, a rule between arguments, an output folder that cannot be written, missing or
corrupted data: one line on stderr, no traceback, nothing run); 1 a run that failed (the command's
own failure status, or an unexpected error: one line on stderr, the traceback only with ``--debug`` or
``DPSTREAM_DEBUG=1``). ``reproduce`` writes into a staging folder inside ``--out`` and moves the
files into place only when the run completes, so a failed run leaves no output behind.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
import traceback
from collections.abc import Sequence
from pathlib import Path

import dpstream
from dpstream.cli_args import BLAS_THREADS, Parser, prepare_output_dir, staged_output_dir, writable_dir
from dpstream.errors import DPStreamInputError
from dpstream.experiments import discover
from dpstream.experiments.data import default_data_dir

__all__ = ["build_parser", "main"]


def _debug_option(parser: argparse.ArgumentParser, top: bool = False) -> None:
    parser.add_argument("--debug", action="store_true", default=False if top else argparse.SUPPRESS,
                        help="print the traceback of an unexpected error (also: DPSTREAM_DEBUG=1)")


def build_parser() -> argparse.ArgumentParser:
    from dpstream.audit import cli as audit_cli
    from dpstream.conformance import cli as conform_cli

    parser = Parser(prog="dpstream", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"%(prog)s {dpstream.__version__}")
    _debug_option(parser, top=True)
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
        runs = f"{experiment.help} (runs {', '.join(experiment.anchors)})"
        sub = experiments.add_parser(name, help=runs, description=runs)
        sub.add_argument("--out", type=writable_dir, default=str(Path("out") / name),
                         help="output folder, created if needed (default: %(default)s)")
        if experiment.data:
            sub.add_argument("--data-dir", type=Path, default=default_data_dir(),
                             help="folder holding " + ", ".join(sorted({f.dataset + "/" for f in experiment.data}))
                             + " (default: the repository's data/ folder, %(default)s)")
        experiment.add_arguments(sub)
        sub.set_defaults(handler=experiment.run, check=experiment.check, staged=True)
    for sub in (*commands.choices.values(), *experiments.choices.values()):
        if sub is not conform:
            _debug_option(sub)
        sub.set_defaults(parser=sub)  # the innermost command's parser reports its errors
    return parser


def _run(args: argparse.Namespace) -> int:
    """Checks between arguments and of the output folder (usage errors), then the command."""
    check = getattr(args, "check", None)
    if check is not None:
        check(args)
    if not getattr(args, "staged", False):
        status: int = args.handler(args)
        return status
    final = prepare_output_dir(args.out)
    written: list[Path] = []
    with staged_output_dir(final, written) as stage:
        args.out = stage
        status = args.handler(args)
    args.out = final
    if written:
        print(f"wrote {len(written)} file(s) to {final}: " + ", ".join(str(p.relative_to(final)) for p in written))
    return status


def _one_blas_thread() -> None:
    """One BLAS thread per process, set before anything imports numpy (nothing imported above does): the audits run
    many small linear-algebra steps and spread runs over worker processes themselves; OpenBLAS's own threads on top
    oversubscribe the cores (a quick search of 001-alg8 took 26 s with them, 8 s without, on 2 cores). Workers and
    programs under test inherit it; a value the user set wins."""
    for variable in BLAS_THREADS:
        os.environ.setdefault(variable, "1")


def main(argv: Sequence[str] | None = None) -> int:
    _one_blas_thread()
    arguments = list(sys.argv[1:] if argv is None else argv)
    if arguments[:1] == ["conform"]:  # its own parser: `--` separates the program's command line
        from dpstream.conformance.cli import conform_main

        return conform_main(arguments[1:])
    parser = build_parser()
    try:
        args = parser.parse_args(arguments)  # a bad value: argparse prints one line and exits with 2
    except SystemExit as exc:  # also --help and --version (0)
        return exc.code if isinstance(exc.code, int) else int(exc.code is not None)
    args.command_line = shlex.join(["dpstream", *arguments])
    command: Parser = args.parser
    debug = bool(getattr(args, "debug", False)) or os.environ.get("DPSTREAM_DEBUG", "") not in ("", "0")
    try:
        return _run(args)
    except DPStreamInputError as exc:  # a bad argument found after parsing, or bad data: a usage error
        if debug:
            traceback.print_exc()
        print(command.error_line(str(exc)), file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"{command.prog}: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:
        if debug:
            traceback.print_exc()
        hint = "" if debug else " (rerun with --debug or DPSTREAM_DEBUG=1 for the traceback)"
        print(f"{command.prog}: error: {type(exc).__name__}: {' '.join(str(exc).split())}{hint}", file=sys.stderr)
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
