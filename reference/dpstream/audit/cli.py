"""``dpstream audit``: run the registered audits, print the table, write the report (``make demo``).

Options: ``--out DIR`` (report folder, default ``audit-report``), ``--profile quick|thorough`` (default
quick; ``--full`` is ``--profile thorough``), ``--scheduler ADDRESS`` (run the trials on a Dask cluster,
``dask.distributed.Client(ADDRESS).get_executor()``; cases then run one after the other here),
``--only SUBSTRING`` (repeatable; keep components whose family, name or anchor contains it),
``--seed N`` (default 0), ``--no-plots``, ``--jobs N`` (worker processes, default 2; results
do not depend on it), ``--list`` (print the registered cases and exit).
``--overwrite`` (write into ``--out`` even if it holds an earlier report; without it the report goes to
the first free ``DIR-2``, ``DIR-3``, ... beside it, and the command says so).
Exit status 1 when any case fails unexpectedly (a normal case fails, an ``expect_failure``
case passes, or a case raises), 2 when the filter selects nothing or an argument is bad (``--out``
is created and checked writable before any audit runs), 0 otherwise. Interrupted (Ctrl-C, SIGTERM), the
workers are stopped at once, the cases that finished are printed and written (``report.md`` and
``report.json`` marked partial, no plots) and the exit status is 130 (143).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from dpstream.audit.registry import ComponentReport, Profile, discover
from dpstream.audit.report import format_table, status, write_report
from dpstream.audit.runner import run_cases, select_cases
from dpstream.audit.sampler import trial_executor
from dpstream.cli_args import non_negative_int, positive_int, prepare_output_dir, resolve_output_dir, writable_dir

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", type=writable_dir, default="audit-report",
                        help="report folder; one that holds an earlier report is kept and the report goes beside it, "
                             "DIR-2, ... (default: %(default)s)")
    parser.add_argument("--overwrite", action="store_true",
                        help="write into --out even if it holds an earlier report (files of the same name replaced)")
    parser.add_argument("--profile", choices=[p.value for p in Profile if p.name != "FULL"], default=None,
                        help="quick (default) or thorough (docs/audits.md, 'Profiles')")
    parser.add_argument("--full", action="store_true", help="alias of --profile thorough")
    parser.add_argument("--scheduler", default=None, metavar="ADDRESS",
                        help="Dask scheduler to spread the trials over (needs the 'dask' extra)")
    parser.add_argument("--only", action="append", default=[], metavar="SUBSTRING",
                        help="keep components whose family, name or anchor contains SUBSTRING (repeatable)")
    parser.add_argument("--seed", type=non_negative_int, default=0, help="seed of the whole run (default: %(default)s)")
    parser.add_argument("--no-plots", action="store_true", help="skip the matplotlib figures")
    parser.add_argument("--jobs", type=positive_int, default=min(2, os.cpu_count() or 1),
                        help="worker processes (default: %(default)s; results do not depend on it)")
    parser.add_argument("--list", action="store_true", help="list the registered cases and exit")


def run(args: argparse.Namespace) -> int:
    if args.full and args.profile not in (None, Profile.THOROUGH.value):
        print("--full is --profile thorough; do not combine it with another profile", file=sys.stderr)
        return 2
    profile = Profile.THOROUGH if args.full else Profile(args.profile or Profile.QUICK.value)
    cases = select_cases(discover(), args.only)
    if args.list:
        for c in cases:
            print(f"{c.family:12s} {c.component:50s} {c.anchor:14s} false_alarm={c.false_alarm:g}"
                  f"{' expect_failure' if c.expect_failure else ''}")
        return 0
    if not cases:
        print(f"no registered audit matches {args.only!r}", file=sys.stderr)
        return 2
    out, note = resolve_output_dir(Path(args.out), args.overwrite)
    prepare_output_dir(out)  # before any audit runs: a DPStreamInputError naming --out (exit 2)
    if note:
        print(f"dpstream audit: {note}", file=sys.stderr, flush=True)
    print(f"dpstream audit: {len(cases)} case(s), {profile.value} profile, {args.jobs} worker(s)", file=sys.stderr,
          flush=True)
    command = f"dpstream audit --profile {profile.value}" + "".join(f" --only {s}" for s in args.only)
    command += f" --seed {args.seed}"
    finished: list[ComponentReport] = []
    try:
        if args.scheduler:
            with trial_executor(scheduler=args.scheduler) as executor:
                reports = run_cases(cases, profile, args.seed, executor=executor, finished=finished)
        else:
            reports = run_cases(cases, profile, args.seed, jobs=args.jobs, finished=finished)
    except KeyboardInterrupt as interrupt:  # keep what finished: the table and the reports, marked partial
        print(format_table(finished), flush=True)
        written = write_report(finished, out, profile, args.seed, plots=False, command=command,
                               partial=(len(finished), len(cases)))
        interrupt.args = (f"{len(finished)} of {len(cases)} cases finished; partial report: {written[0]}",)
        raise
    print(format_table(reports))
    written = write_report(reports, out, profile, args.seed, plots=not args.no_plots, command=command)
    total = sum(r.seconds for r in reports)
    bad = [r for r in reports if status(r) in ("FAIL", "UNEXPECTED PASS", "ERROR")]
    print(f"\n{len(reports)} components, {total:.1f}s of audits; report: {written[0]} (+ JSON, "
          f"{len(written) - 2} plots)")
    if bad:
        print("unexpected outcomes: " + ", ".join(f"{r.case.component} ({status(r)})" for r in bad))
        return 1
    return 0
