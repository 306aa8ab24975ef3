"""Running registered cases: seeds, timing, filtering and progress.

Each case gets its own seed, derived from the run's seed and the case's family and
component name (:func:`case_seed`), so filtering with ``--only`` or adding cases never
changes another case's result. A case that raises is reported with status ``ERROR`` and
the error in its detail (also for ``expect_failure`` cases), so one broken case does not
hide the others and a crash never counts as a caught violation.
"""

from __future__ import annotations

import os
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from concurrent.futures import Executor

from dpstream.audit.protocol import derive_seed
from dpstream.audit.registry import AuditCase, AuditContext, CheckKind, CheckResult, ComponentReport, Profile
from dpstream.interrupts import QuietPool, quiet_worker, stop_pool

__all__ = ["case_seed", "progress_enabled", "run_case", "run_cases", "select_cases"]


def case_seed(seed: int, case: AuditCase) -> int:
    """The seed a case receives: derived from ``seed``, its family and its component name."""
    return derive_seed(seed, case.family, case.component)


def run_case(
    case: AuditCase, profile: Profile, seed: int, progress: Callable[[str], None] | None = None,
    executor: Executor | None = None,
) -> ComponentReport:
    """Run one case and time it; an exception becomes a failed check carrying the traceback's last line.

    That check is marked ``data={"error": ...}``, so :func:`dpstream.audit.report.status` reports the case
    as ``ERROR`` even when it is an ``expect_failure`` case: a crash is never mistaken for a caught violation.
    """
    ctx = AuditContext(profile=profile, seed=case_seed(seed, case), false_alarm=case.false_alarm,
                       progress=progress or (lambda message: None), executor=executor)
    start = time.perf_counter()
    try:
        checks = tuple(case.run(ctx))
    except Exception as exc:
        last = traceback.format_exception_only(type(exc), exc)[-1].strip()
        checks = (CheckResult(CheckKind.EXACT_LOSS, False, None, None, f"audit raised: {last}", {"error": last}),)
    return ComponentReport(case=case, checks=checks, seconds=time.perf_counter() - start)


def select_cases(cases: Sequence[AuditCase], only: Sequence[str] = ()) -> list[AuditCase]:
    """Cases whose component, family or anchor contains any of the substrings (case-insensitive)."""
    if not only:
        return list(cases)
    keys = [s.lower() for s in only]
    return [c for c in cases if any(k in f"{c.family} {c.component} {c.anchor}".lower() for k in keys)]


def progress_enabled() -> bool:
    """Progress bars only for a terminal, and never when ``CI`` is set."""
    return not os.environ.get("CI") and sys.stderr.isatty()


def run_cases(
    cases: Sequence[AuditCase], profile: Profile, seed: int, *, show_progress: bool | None = None, jobs: int = 1,
    executor: Executor | None = None, finished: list[ComponentReport] | None = None,
) -> list[ComponentReport]:
    """Run ``cases`` (in order), in ``jobs`` worker processes when ``jobs > 1``.

    With ``show_progress`` (default: :func:`progress_enabled`) a tqdm bar counts the cases. Results do not
    depend on ``jobs``: every case's seed is derived from ``seed`` and its name (:func:`case_seed`).
    Workers are started with ``spawn`` and rebuild the registry with :func:`discover`, so only case
    identities and results cross process boundaries. ``executor`` (e.g. a Dask cluster's): the cases run
    here one after the other and spread their trials over it (``jobs`` is then ignored).

    ``finished`` (a list, filled in case order) holds the reports of the cases that finished when the run is
    interrupted (Ctrl-C, SIGTERM): the interrupt propagates, the workers are stopped at once and the finished
    cases are kept for a partial report.
    """
    show = progress_enabled() if show_progress is None else show_progress
    reports: list[ComponentReport] = [] if finished is None else finished
    if executor is None and jobs > 1 and len(cases) > 1:
        return _run_parallel(cases, profile, seed, show, jobs, reports)
    if not show:
        for case in cases:
            reports.append(run_case(case, profile, seed, executor=executor))
        return reports
    from tqdm import tqdm

    with tqdm(total=len(cases), desc=f"audit ({profile.value})", unit="case", file=sys.stderr) as bar:
        for case in cases:
            name = case.component[:30]

            def hook(message: str, name: str = name) -> None:
                bar.set_postfix_str(f"{name}: {message}")

            reports.append(run_case(case, profile, seed, progress=hook, executor=executor))
            bar.update(1)
    return reports


_WORKER_CASES: dict[tuple[str, str], AuditCase] = {}


def _worker_init(families: tuple[str, ...]) -> None:
    """Load the cases of the given family rooms only (what discover() does, restricted); Ctrl-C is the parent's."""
    import dataclasses
    import importlib

    from dpstream.audit.registry import discover

    quiet_worker()
    try:
        for family in families:
            module = importlib.import_module(f"dpstream.audit.{family}.cases")
            for case in module.cases():
                case = case if case.family else dataclasses.replace(case, family=family)
                _WORKER_CASES[(case.family, case.component)] = case
    except ModuleNotFoundError:  # a case declared a family other than its module's name
        _WORKER_CASES.update({(c.family, c.component): c for c in discover()})


def _worker_run(key: tuple[str, str], profile: Profile, seed: int) -> tuple[tuple[CheckResult, ...], float]:
    report = run_case(_WORKER_CASES[key], profile, seed)
    return report.checks, report.seconds


def _run_parallel(
    cases: Sequence[AuditCase], profile: Profile, seed: int, show: bool, jobs: int, reports: list[ComponentReport]
) -> list[ComponentReport]:
    import multiprocessing
    from concurrent.futures import as_completed

    from dpstream.audit.registry import discover

    registered = {(c.family, c.component) for c in discover()}
    families = tuple(sorted({c.family for c in cases if (c.family, c.component) in registered}))
    results: dict[int, ComponentReport] = {}
    local = [i for i, c in enumerate(cases) if (c.family, c.component) not in registered]
    bar = None
    try:
        for i in local:  # cases built on the fly (not in the registry) run here
            results[i] = run_case(cases[i], profile, seed)
        if show:
            from tqdm import tqdm

            bar = tqdm(total=len(cases), initial=len(local), desc=f"audit ({profile.value}, {jobs} jobs)",
                       unit="case", file=sys.stderr)
        ctx = multiprocessing.get_context("spawn")
        with QuietPool(max_workers=jobs, mp_context=ctx, initializer=_worker_init, initargs=(families,)) as pool:
            try:
                futures = {pool.submit(_worker_run, (c.family, c.component), profile, seed): i
                           for i, c in enumerate(cases) if i not in results}
                for future in as_completed(futures):
                    i = futures[future]
                    checks, seconds = future.result()
                    results[i] = ComponentReport(case=cases[i], checks=checks, seconds=seconds)
                    if bar is not None:
                        bar.set_postfix_str(cases[i].component[:40])
                        bar.update(1)
            except BaseException:  # Ctrl-C: stop the workers now (not when their cases end)
                stop_pool(pool)
                raise
    finally:
        if bar is not None:
            bar.close()
        reports[:] = [results[i] for i in sorted(results)]
    return reports
