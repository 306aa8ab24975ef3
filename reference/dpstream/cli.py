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
``DPSTREAM_DEBUG=1``); 130 interrupted by Ctrl-C, 143 by SIGTERM (one line, no traceback, workers and
child programs stopped; ``audit`` and ``conform`` keep the finished work in reports marked partial).
``reproduce`` writes into a staging folder inside ``--out`` and moves the files into place only when
the run completes, so a failed or interrupted run leaves no output behind. An ``--out`` folder that
holds an earlier result is kept: the run writes beside it (``DIR-2``, ...) and says so, unless
``--overwrite`` is given.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path

import dpstream
from dpstream.cli_args import (
    Parser,
    one_blas_thread,
    prepare_output_dir,
    resolve_output_dir,
    staged_output_dir,
    writable_dir,
)
from dpstream.errors import DPStreamInputError
from dpstream.experiments import discover
from dpstream.experiments.data import default_data_dir
from dpstream.interrupts import (
    EXIT_INTERRUPTED,
    EXIT_TERMINATED,
    Terminated,
    exit_now,
    interrupts_raise,
    needs_quick_exit,
)

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
                         help="output folder, created if needed; one that holds an earlier result is kept and the "
                              "run writes beside it, DIR-2, ... (default: %(default)s)")
        sub.add_argument("--overwrite", action="store_true",
                         help="write into --out even if it holds an earlier result (files of the same name replaced)")
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
    final, note = resolve_output_dir(args.out, args.overwrite)
    prepare_output_dir(final)
    if note:
        print(f"{args.parser.prog}: {note}", file=sys.stderr, flush=True)
    written: list[Path] = []
    with staged_output_dir(final, written) as stage:
        args.out = stage
        status = args.handler(args)
    args.out = final
    if written:
        print(f"wrote {len(written)} file(s) to {final}: " + ", ".join(str(p.relative_to(final)) for p in written))
    return status


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``dpstream ARGV`` and return its exit status. Called as the process's entry point (``argv`` None), an
    interrupted command that loaded JAX ends the process at once after its one line: the interpreter's shutdown is
    skipped, as JAX's threads a Ctrl-C cut short crash it (``reproduce tabular-adult``; everything to clean up was
    cleaned up on the way out: staging folders, workers, child programs)."""
    one_blas_thread()  # before anything imports numpy (nothing imported above does)
    status = _main(list(sys.argv[1:] if argv is None else argv))
    if argv is None and status in (EXIT_INTERRUPTED, EXIT_TERMINATED) and needs_quick_exit():
        exit_now(status)
    return status


def _main(arguments: list[str]) -> int:
    with interrupts_raise():  # SIGTERM cleans up as Ctrl-C does (staging folders, workers, programs)
        if arguments[:1] == ["conform"]:  # its own parser: `--` separates the program's command line
            from dpstream.conformance.cli import USAGE_ERROR, conform_main

            return _guarded(lambda: conform_main(arguments[1:]), "dpstream conform", _debug_env(),
                            usage=USAGE_ERROR, failed=USAGE_ERROR)
        parser = build_parser()
        try:
            args = parser.parse_args(arguments)  # a bad value: argparse prints one line and exits with 2
        except SystemExit as exc:  # also --help and --version (0)
            return exc.code if isinstance(exc.code, int) else int(exc.code is not None)
        args.command_line = shlex.join(["dpstream", *arguments])
        command: Parser = args.parser
        debug = bool(getattr(args, "debug", False)) or _debug_env()
        return _guarded(lambda: _run(args), command.prog, debug, error_line=command.error_line)


def _debug_env() -> bool:
    return os.environ.get("DPSTREAM_DEBUG", "") not in ("", "0")


def _guarded(run: Callable[[], int], prog: str, debug: bool, *, usage: int = 2, failed: int = 1,
             error_line: Callable[[str], str] | None = None) -> int:
    """``run()``, with what a user can cause turned into one line on stderr and an exit status."""
    try:
        return run()
    except DPStreamInputError as exc:  # a bad argument found after parsing, or bad data: a usage error
        if debug:
            traceback.print_exc()
        print(error_line(str(exc)) if error_line else f"{prog}: error: {exc}", file=sys.stderr)
        return usage
    except KeyboardInterrupt as exc:  # Ctrl-C, or SIGTERM (Terminated); the command says what it kept
        terminated = isinstance(exc, Terminated)
        detail = " ".join(str(exc).split())
        detail = f" ({detail})" if detail and detail != "terminated" else ""
        print(f"{prog}: {'terminated' if terminated else 'interrupted'}{detail}", file=sys.stderr, flush=True)
        return EXIT_TERMINATED if terminated else EXIT_INTERRUPTED
    except Exception as exc:
        if debug:
            traceback.print_exc()
        hint = "" if debug else " (rerun with --debug or DPSTREAM_DEBUG=1 for the traceback)"
        print(f"{prog}: error: {type(exc).__name__}: {' '.join(str(exc).split())}{hint}", file=sys.stderr)
        return failed


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
