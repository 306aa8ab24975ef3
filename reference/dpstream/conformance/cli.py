"""``dpstream conform``, ``dpstream serve`` and ``dpstream vectors`` (argument parsing and exit codes).

``dpstream conform [options] -- COMMAND ARGS...`` exits with 0 (conforms), 1 (deviates from the
reference), 2 (privacy violation certified), 3 (the program broke the protocol), the worst verdict
deciding; 4 when the harness itself cannot run (bad arguments, an ``--algorithm`` the catalog does not
serve, a program that is not found or not executable, an output file that cannot be written: one line
on stderr, before anything runs): 2 is taken by the privacy verdict, so usage errors of ``conform`` use 4.
Interrupted (Ctrl-C, SIGTERM), it prints the table of the checks done, writes the requested reports
marked ``"partial": true`` and exits with 130 (143 after SIGTERM).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from dpstream.cli_args import (
    Parser,
    existing_dir,
    holds_result,
    non_negative_int,
    positive_float,
    positive_int,
    prepare_output_dir,
    resolve_output_dir,
    writable_dir,
)
from dpstream.conformance.outcome import Mode
from dpstream.errors import DPStreamInputError

if TYPE_CHECKING:
    from dpstream.conformance.progress import Progress

__all__ = ["USAGE_ERROR", "add_serve_arguments", "add_vectors_arguments", "conform_main", "run_serve", "run_vectors"]

USAGE_ERROR = 4
MAX_TIMEOUT = 86400.0
"""Longest ``--timeout`` (a day; the harness waits that long for one answer)."""


class _ConformParser(Parser):
    """One line on stderr, exit status 4 (2 is the privacy verdict)."""

    def error(self, message: str) -> NoReturn:
        self.exit(USAGE_ERROR, self.error_line(message) + "\n")


def conform_parser() -> argparse.ArgumentParser:
    from dpstream.conformance.runner import ConformConfig

    parser = _ConformParser(
        prog="dpstream conform", formatter_class=argparse.RawDescriptionHelpFormatter,
        usage="dpstream conform [options] -- COMMAND [ARGS...]",
        description="Check a program speaking the conformance protocol (docs/conformance.md) against the reference.",
        epilog="exit status: 0 conforms, 1 deviates, 2 privacy violation certified, 3 protocol broken, "
               "4 the harness could not run (bad arguments, unwritable output)")
    parser.add_argument("--mode", type=_modes, action="append", metavar="MODE[,MODE...]",
                        help="which checks: " + ", ".join([*(m.value for m in Mode), "all"])
                             + "; repeatable or comma-separated (default: all)")
    parser.add_argument("--profile", choices=["quick", "thorough"], default="quick",
                        help="statistical budget (default: %(default)s)")
    parser.add_argument("--algorithm", action="append", default=[], metavar="ANCHOR",
                        help="check only this algorithm (repeatable; default: every announced one)")
    parser.add_argument("--junit", type=Path, metavar="FILE", help="write a JUnit XML report")
    parser.add_argument("--json", type=Path, metavar="FILE", help="write a JSON report")
    parser.add_argument("--markdown", type=Path, metavar="FILE", help="write a Markdown report")
    parser.add_argument("--timeout", type=positive_float, default=10.0,
                        help=f"seconds to wait for one answer, at most {MAX_TIMEOUT:g} (default: 10)")
    parser.add_argument("--seed", type=non_negative_int, default=0,
                        help="seed of the statistical and differential checks (default: 0)")
    parser.add_argument("--jobs", type=positive_int, default=min(2, os.cpu_count() or 1),
                        help="program instances run in parallel by statistical checks (default: %(default)s)")
    parser.add_argument("--scheduler", metavar="ADDRESS", help="a Dask scheduler for the statistical trials")
    parser.add_argument("--vectors", type=Path, metavar="DIR", help="a corpus folder (default: the shipped one)")
    parser.add_argument("--power-table", type=Path, metavar="FILE",
                        help="the measured power that backs 'pass' verdicts (default: the shipped table; "
                             "python -m dpstream.conformance.power calibrate writes one)")
    parser.add_argument("--cases", type=positive_int, default=ConformConfig.cases, metavar="N",
                        help="differential mode: at most N fresh cases per algorithm (default: no limit, the time "
                             "budget decides)")
    parser.add_argument("--differential-seconds", type=positive_float, default=ConformConfig.differential_seconds,
                        metavar="S", help="differential mode: S seconds per algorithm: new cases, small ones first, "
                                          "until 0.8 S, then shrinking a difference until S (default: %(default)g)")
    parser.add_argument("--differential-out", type=Path, default=ConformConfig.differential_out, metavar="DIR",
                        help="differential mode: write the shrunk cases here as known-answer vectors "
                             "(default: %(default)s)")
    parser.add_argument("--no-progress", action="store_true",
                        help="no expected duration and no progress on stderr (default: a bar on a terminal; in CI or a "
                             "log a line per tenth of the checks and after any check once a minute passed)")
    return parser


def _modes(text: str) -> frozenset[Mode]:
    """``--mode``'s value: one mode, ``all``, or several separated by commas."""
    names = [n.strip() for n in text.split(",")]
    known = [m.value for m in Mode]
    unknown = [n for n in names if n not in (*known, "all")]
    if unknown or not names:
        raise argparse.ArgumentTypeError(f"{', '.join(map(repr, unknown)) or repr(text)} is not a mode (choose from "
                                         f"{', '.join([*known, 'all'])}, or several separated by commas)")
    return frozenset(Mode) if "all" in names else frozenset(Mode(n) for n in names)


def _writable(path: Path | None) -> str | None:
    if path is None:
        return None
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        return f"{path}: folder {folder} does not exist"
    if path.is_dir():
        return f"{path} is a folder"
    if not os.access(folder, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        return f"{path}: not writable"
    return None


def _program_problem(program: str) -> str | None:
    """Why ``program`` (the command's first word) cannot be started, or None (checked before anything runs)."""
    if os.sep in program or (os.altsep and os.altsep in program):
        path = Path(program)
        if not path.exists():
            return f"program {program!r} not found"
        if path.is_dir():
            return f"program {program!r} is a folder"
        if not os.access(path, os.X_OK):
            return f"program {program!r} is not executable"
        return None
    if shutil.which(program) is None:
        return f"program {program!r} not found on PATH"
    return None


def _unknown_algorithms(anchors: Sequence[str]) -> str | None:
    from dpstream.catalog import entries

    served = [e.anchor for e in entries(streaming=True)]
    unknown = [a for a in dict.fromkeys(anchors) if a not in served]
    if not unknown:
        return None
    return (f"argument --algorithm: {', '.join(map(repr, unknown))} is not an algorithm of the catalog that speaks "
            f"the protocol (one of {', '.join(served)})")


def conform_main(argv: Sequence[str]) -> int:
    from dpstream.conformance.report import format_table, write_json, write_junit, write_markdown
    from dpstream.conformance.runner import ConformConfig, conform

    args_part, command = _split(list(argv))
    parser = conform_parser()
    args = parser.parse_args(args_part)
    if not command:
        parser.error("give the program after '--': dpstream conform [options] -- COMMAND [ARGS...]")
    from dpstream.conformance.differential import output_problem

    modes: frozenset[Mode] = frozenset[Mode]().union(*args.mode) if args.mode else frozenset(Mode)
    out_problem = output_problem(args.differential_out) if Mode.DIFFERENTIAL in modes else None
    for problem in (_writable(args.junit), _writable(args.json), _writable(args.markdown), out_problem,
                    _unknown_algorithms(args.algorithm), _program_problem(command[0])):
        if problem:
            parser.error(problem)
    if args.timeout > MAX_TIMEOUT:
        parser.error(f"argument --timeout: must be at most {MAX_TIMEOUT:g} seconds (got {args.timeout:g})")
    if args.power_table is not None and not args.power_table.is_file():
        parser.error(f"--power-table {args.power_table}: no such file")
    if args.vectors is not None and not (args.vectors / "manifest.json").is_file():
        parser.error(f"--vectors {args.vectors}: no manifest.json there")
    config = ConformConfig(command=tuple(command), modes=modes, profile=args.profile,
                           algorithms=tuple(args.algorithm), timeout=args.timeout, seed=args.seed, jobs=args.jobs,
                           scheduler=args.scheduler, corpus_root=args.vectors, power_table=args.power_table,
                           cases=args.cases, differential_seconds=args.differential_seconds,
                           differential_out=args.differential_out)
    report = conform(config, progress=_progress(args.no_progress))
    cannot = [o for o in report.outcomes if o.name == "hello" and "cannot start" in o.message]
    if report.hello is None and cannot:  # e.g. an executable file that is not a program (exec format error)
        parser.error(f"program {command[0]!r} {cannot[0].message.split(': ', 1)[-1]}")
    print(format_table(report), flush=True)
    written, failed = [], []
    for path, write in ((args.json, write_json), (args.junit, write_junit), (args.markdown, write_markdown)):
        if path is not None:
            try:  # whole or not at all (dpstream.files): on a full disk the earlier file, if any, stays
                write(report, path)
                written.append(str(path))
            except OSError as exc:
                failed.append(str(path))
                print(f"dpstream conform: cannot write {path} ({exc.strerror or exc}); it was left as it was",
                      file=sys.stderr, flush=True)
    if report.interrupted is not None:  # the checks done are reported above and in the files, marked partial
        kept = f"; partial report(s): {', '.join(written)}" if written else ""
        report.interrupted.args = (f"{report.done} of {report.planned} checks done{kept}",)
        raise report.interrupted
    return USAGE_ERROR if failed else report.exit_status


def _split(argv: list[str]) -> tuple[list[str], list[str]]:
    if "--" in argv:
        i = argv.index("--")
        return argv[:i], argv[i + 1:]
    return argv, []


def _progress(disabled: bool) -> Progress | None:
    """A bar on a terminal, plain lines in CI and logs (docs/conformance.md, "Duration and progress")."""
    from dpstream.conformance.progress import ConformProgress

    return None if disabled else ConformProgress()


def add_serve_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--secure", action="store_true",
                        help="own mode draws from SecureNoise (OpenDP) instead of the seeded insecure source")
    parser.add_argument("--as-printed", action="store_true",
                        help="serve the printed variants where the default corrects the paper (NOT private)")
    parser.add_argument("--plant", metavar="LEAK", type=_leak, default=None,
                        help="INSECURE: plant a mistake of known size into every run (scale/<c>, em*<c>, shared, "
                             "noiseless, score+<d>; LEAK:<regex> only at the sites matching the regex, e.g. "
                             "scale/2:L6 for one level under-noised), to measure the checks' power")
    parser.add_argument("--perturb", metavar="SPEC", type=_perturbation, default=None,
                        help="run the reference under another correct floating-point evaluation order (the "
                             "perturbation self-test): 'all' (sums reversed, every exp/log off by 1 ulp, weights in "
                             "log space), or sums=reverse|shuffle,ulps=N,log-space|no-log-space,seed=N")
    parser.add_argument("--describe", action="store_true",
                        help="print every served algorithm's parameters, INPUT and RELEASE as JSON Schema and exit")


def _leak(text: str) -> Any:
    from dpstream.errors import DPStreamInputError
    from dpstream.insecure.planted import PlantedLeak

    try:
        return PlantedLeak.parse(text)
    except DPStreamInputError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _perturbation(text: str) -> Any:
    from dpstream.arithmetic import PerturbedKernel

    try:
        return PerturbedKernel.parse(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def run_serve(args: argparse.Namespace) -> int:
    from dpstream.arithmetic import FAST, using
    from dpstream.conformance.serve import describe, serve

    if args.describe:
        print(describe())
        return 0
    with using(args.perturb or FAST):
        return serve(secure=args.secure, as_printed=args.as_printed, plant=args.plant)


def add_vectors_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="vectors_command", required=True)
    gen = sub.add_parser("generate", help="rewrite the corpus from the catalog (byte-identical)")
    gen.add_argument("--out", type=writable_dir,
                     help="write here instead of the package's corpus folder; one that holds an earlier result is "
                          "kept and the corpus goes beside it, DIR-2, ...")
    gen.add_argument("--overwrite", action="store_true",
                     help="replace the corpus in --out (only a folder holding a corpus, manifest.json, is replaced)")
    ver = sub.add_parser("verify", help="check checksums and replay every vector on the reference")
    ver.add_argument("--corpus", type=existing_dir, help="a corpus folder (default: the package's)")


def run_vectors(args: argparse.Namespace) -> int:
    from dpstream.vectors.corpus import CorpusError
    from dpstream.vectors.generate import generate, verify

    if args.vectors_command == "generate":
        out = args.out
        if out is not None:
            out, note = resolve_output_dir(out, args.overwrite)
            if out == args.out and holds_result(out) and not (out / "manifest.json").is_file():
                raise DPStreamInputError("--out", "holds files that are not a vectors corpus (no manifest.json): "
                                                  "not replaced", str(out))
            prepare_output_dir(out)  # a folder that cannot be made or written: exit 2, before any work
            if note:
                print(f"dpstream vectors generate: {note}", file=sys.stderr, flush=True)
        rows = generate(out)
        kinds = {k: sum(1 for r in rows if r.kind == k) for k in ("known-answer", "must-reject")}
        print(f"wrote {len(rows)} vectors ({kinds['known-answer']} known-answer, {kinds['must-reject']} must-reject) "
              f"for {len({r.algorithm for r in rows})} algorithms" + (f" to {out}" if out is not None else ""))
        return 0
    if args.corpus is not None and not (args.corpus / "manifest.json").is_file():
        raise DPStreamInputError("--corpus", "not a vectors corpus: no manifest.json there", str(args.corpus))
    try:
        problems = verify(args.corpus)
    except CorpusError as exc:
        print(f"dpstream vectors verify: {exc}", file=sys.stderr)
        return 1
    for p in problems:
        print(f"FAIL {p.id}: {p.message}")
    print("all vectors verified" if not problems else f"{len(problems)} vector(s) failed")
    return 1 if problems else 0
