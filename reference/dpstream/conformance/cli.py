"""``dpstream conform``, ``dpstream serve`` and ``dpstream vectors`` (argument parsing and exit codes).

``dpstream conform [options] -- COMMAND ARGS...`` exits with 0 (conforms), 1 (deviates from the
reference), 2 (privacy violation certified), 3 (the program broke the protocol), the worst verdict
deciding; 4 when the harness itself cannot run (bad arguments, an output file that cannot be
written): 2 is taken by the privacy verdict, so usage errors of ``conform`` use 4.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

from dpstream.cli_args import existing_dir, positive_float, positive_int, writable_dir
from dpstream.conformance.outcome import Mode, Outcome

__all__ = ["USAGE_ERROR", "add_serve_arguments", "add_vectors_arguments", "conform_main", "run_serve", "run_vectors"]

USAGE_ERROR = 4


class _ConformParser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(USAGE_ERROR, f"{self.prog}: error: {message}\n")


def conform_parser() -> argparse.ArgumentParser:
    from dpstream.conformance.runner import ConformConfig

    parser = _ConformParser(
        prog="dpstream conform", formatter_class=argparse.RawDescriptionHelpFormatter,
        usage="dpstream conform [options] -- COMMAND [ARGS...]",
        description="Check a program speaking the conformance protocol (docs/conformance.md) against the reference.",
        epilog="exit status: 0 conforms, 1 deviates, 2 privacy violation certified, 3 protocol broken, "
               "4 the harness could not run (bad arguments, unwritable output)")
    parser.add_argument("--mode", choices=[*(m.value for m in Mode), "all"], default="all",
                        help="which checks (default: %(default)s)")
    parser.add_argument("--profile", choices=["quick", "thorough"], default="quick",
                        help="statistical budget (default: %(default)s)")
    parser.add_argument("--algorithm", action="append", default=[], metavar="ANCHOR",
                        help="check only this algorithm (repeatable; default: every announced one)")
    parser.add_argument("--junit", type=Path, metavar="FILE", help="write a JUnit XML report")
    parser.add_argument("--json", type=Path, metavar="FILE", help="write a JSON report")
    parser.add_argument("--markdown", type=Path, metavar="FILE", help="write a Markdown report")
    parser.add_argument("--timeout", type=float, default=10.0, help="seconds to wait for one answer (default: 10)")
    parser.add_argument("--seed", type=int, default=0,
                        help="seed of the statistical and differential checks (default: 0)")
    parser.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1),
                        help="program instances run in parallel by statistical checks (default: %(default)s)")
    parser.add_argument("--scheduler", metavar="ADDRESS", help="a Dask scheduler for the statistical trials")
    parser.add_argument("--vectors", type=Path, metavar="DIR", help="a corpus folder (default: the shipped one)")
    parser.add_argument("--power-table", type=Path, metavar="FILE",
                        help="the measured power that backs 'pass' verdicts (default: the shipped table; "
                             "python -m dpstream.conformance.power calibrate writes one)")
    parser.add_argument("--cases", type=positive_int, default=ConformConfig.cases, metavar="N",
                        help="differential mode: fresh cases per algorithm (default: %(default)s)")
    parser.add_argument("--differential-seconds", type=positive_float, default=ConformConfig.differential_seconds,
                        metavar="S", help="differential mode: at most S seconds per algorithm, half for new cases, "
                                          "the rest for shrinking (default: %(default)g)")
    parser.add_argument("--differential-out", type=Path, default=ConformConfig.differential_out, metavar="DIR",
                        help="differential mode: write the shrunk cases here as known-answer vectors "
                             "(default: %(default)s)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    return parser


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


def conform_main(argv: Sequence[str]) -> int:
    from dpstream.conformance.report import format_table, write_json, write_junit, write_markdown
    from dpstream.conformance.runner import ConformConfig, conform

    args_part, command = _split(list(argv))
    parser = conform_parser()
    args = parser.parse_args(args_part)
    if not command:
        parser.error("give the program after '--': dpstream conform [options] -- COMMAND [ARGS...]")
    from dpstream.conformance.differential import output_problem

    modes = frozenset(Mode) if args.mode == "all" else frozenset({Mode(args.mode)})
    out_problem = output_problem(args.differential_out) if Mode.DIFFERENTIAL in modes else None
    for problem in (_writable(args.junit), _writable(args.json), _writable(args.markdown), out_problem):
        if problem:
            parser.error(problem)
    if args.timeout <= 0:
        parser.error("--timeout must be > 0")
    if args.seed < 0:
        parser.error("--seed must be >= 0")
    if args.jobs < 1:
        parser.error("--jobs must be >= 1")
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
    print(format_table(report))
    for path, write in ((args.json, write_json), (args.junit, write_junit), (args.markdown, write_markdown)):
        if path is not None:
            write(report, path)
    return report.exit_status


def _split(argv: list[str]) -> tuple[list[str], list[str]]:
    if "--" in argv:
        i = argv.index("--")
        return argv[:i], argv[i + 1:]
    return argv, []


class _Bar:
    def __init__(self) -> None:
        from tqdm import tqdm

        self._tqdm = tqdm
        self.bar: Any = None

    def __call__(self, outcome: Outcome, done: int, total: int) -> None:
        if self.bar is None:
            self.bar = self._tqdm(total=total, desc="conform", unit="check", file=sys.stderr, leave=False)
        self.bar.set_postfix_str(f"{outcome.algorithm} {outcome.mode.value}", refresh=False)
        self.bar.update(1)
        if done == total:
            self.bar.close()


def _progress(disabled: bool) -> _Bar | None:
    if disabled or os.environ.get("CI") or not sys.stderr.isatty():
        return None
    return _Bar()


def add_serve_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--secure", action="store_true",
                        help="own mode draws from SecureNoise (OpenDP) instead of the seeded insecure source")
    parser.add_argument("--as-printed", action="store_true",
                        help="serve the printed variants where the default corrects the paper (NOT private)")
    parser.add_argument("--plant", metavar="LEAK", type=_leak, default=None,
                        help="INSECURE: plant a leak of known size into every own/transcript-mode run (scale/<c>, "
                             "shared, noiseless), to measure the statistical checks' power")
    parser.add_argument("--describe", action="store_true",
                        help="print every served algorithm's parameters, INPUT and RELEASE as JSON Schema and exit")


def _leak(text: str) -> Any:
    from dpstream.errors import DPStreamInputError
    from dpstream.insecure.planted import PlantedLeak

    try:
        return PlantedLeak.parse(text)
    except DPStreamInputError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def run_serve(args: argparse.Namespace) -> int:
    from dpstream.conformance.serve import describe, serve

    if args.describe:
        print(describe())
        return 0
    return serve(secure=args.secure, as_printed=args.as_printed, plant=args.plant)


def add_vectors_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="vectors_command", required=True)
    gen = sub.add_parser("generate", help="rewrite the corpus from the catalog (byte-identical)")
    gen.add_argument("--out", type=writable_dir, help="write here instead of the package's corpus folder")
    ver = sub.add_parser("verify", help="check checksums and replay every vector on the reference")
    ver.add_argument("--corpus", type=existing_dir, help="a corpus folder (default: the package's)")


def run_vectors(args: argparse.Namespace) -> int:
    from dpstream.vectors.corpus import CorpusError
    from dpstream.vectors.generate import generate, verify

    if args.vectors_command == "generate":
        rows = generate(args.out)
        kinds = {k: sum(1 for r in rows if r.kind == k) for k in ("known-answer", "must-reject")}
        print(f"wrote {len(rows)} vectors ({kinds['known-answer']} known-answer, {kinds['must-reject']} must-reject) "
              f"for {len({r.algorithm for r in rows})} algorithms")
        return 0
    try:
        problems = verify(args.corpus)
    except CorpusError as exc:
        print(f"dpstream vectors verify: {exc}", file=sys.stderr)
        return 1
    for p in problems:
        print(f"FAIL {p.id}: {p.message}")
    print("all vectors verified" if not problems else f"{len(problems)} vector(s) failed")
    return 1 if problems else 0
