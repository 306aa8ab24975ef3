"""How long a ``dpstream conform`` run is expected to take, and its progress on a terminal or in a CI log.

:func:`expected_seconds` is what a check of each kind took on the reference (``dpstream serve``) on a quiet 2-core
machine (:data:`EXPECTED`; measured with the command in docs/conformance.md, "Duration and progress"). A program
slower than the reference takes longer: the progress lines scale the rest of the estimate by how fast the run has
gone so far (:class:`ConformProgress`). The statement and the progress go to stderr; the report (stdout and files)
does not depend on them.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

from dpstream.conformance.outcome import Mode, Outcome

if TYPE_CHECKING:
    from dpstream.conformance.runner import ConformConfig, Task

__all__ = ["EXPECTED", "ConformProgress", "Progress", "duration", "expected_seconds", "paired"]

EXPECTED: dict[tuple[Mode, str], float] = {
    (Mode.KNOWN_ANSWER, "quick"): 0.01,
    (Mode.MUST_REJECT, "quick"): 0.01,
    (Mode.STATISTICAL, "quick"): 16.0,
    (Mode.STATISTICAL, "thorough"): 160.0,
    (Mode.TRANSCRIPT, "quick"): 2.0,
    (Mode.TRANSCRIPT, "thorough"): 20.0,
}
"""Seconds one check of a mode takes on the reference at a profile, the mean over its entries: quick measured
(docs/conformance.md, "Duration and progress"), thorough ten times quick (the profiles' ratio of runs), an estimate.
Known-answer and must-reject checks do not depend on the profile; a differential check takes its
``--differential-seconds`` or less; a statistical law check (calibration and accuracy) :data:`LAW_CHECK` of the
statistical time."""
LAW_CHECK = 0.03
"""The statistical law check's share of a statistical check's time (0.4 s against 15.6 s measured at quick)."""


def expected_seconds(task: Task, config: ConformConfig) -> float:
    """The expected seconds of ``task`` (module docstring); a statistical privacy check of an entry with a pair
    test (:func:`paired`) the share of its time limit its pair's test plans to end by."""
    if task.mode is Mode.DIFFERENTIAL:
        return config.differential_seconds
    profile = config.profile if task.mode in (Mode.STATISTICAL, Mode.TRANSCRIPT) else "quick"
    seconds = EXPECTED.get((task.mode, profile), EXPECTED[(task.mode, "quick")])
    if task.mode is not Mode.STATISTICAL:
        return seconds
    if task.name.startswith("law"):
        return seconds * LAW_CHECK
    if paired(task.algorithm):
        from dpstream.audit.registry import Profile
        from dpstream.conformance.statistical import PAIR_END, TIME_LIMIT

        return PAIR_END[Profile(profile)] * TIME_LIMIT[Profile(profile)]
    return seconds


def paired(anchor: str) -> bool:
    """Whether the statistical privacy check of ``anchor`` may test a pair beside its search (a search design or a
    law pair in its ``StatisticalSpec``): for a correct program that test runs until the share of the time limit it
    plans to end by (``statistical.PAIR_END``), so its check takes about that long."""
    from dpstream.catalog import entry

    spec = entry(anchor).statistical
    return spec is not None and (spec.design is not None or spec.law_pair is not None)


def duration(seconds: float) -> str:
    """``seconds`` as a person reads it: 45 s, 3 min 10 s, 1 h 5 min."""
    s = round(seconds)
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60} s" if s % 60 and s < 600 else f"{round(s / 60)} min"
    return f"{s // 3600} h {round(s % 3600 / 60)} min"


class Progress(Protocol):
    """What :func:`dpstream.conformance.runner.conform` tells about a run as it goes."""

    def planned(self, expected: Sequence[float]) -> None:
        """The checks to run, with each one's expected seconds, in order."""

    def __call__(self, outcome: Outcome, done: int, total: int) -> None:
        """One more check done (``done`` of ``total``)."""


class ConformProgress:
    """:class:`Progress` through :func:`dpstream.experiments.progress.progress` (a bar on a terminal; in CI and logs
    a line per tenth of the checks and after any check once a minute passed without one), with the algorithm and
    mode last done and the time left: the expected seconds of the checks not done, scaled by how fast the run has
    gone against its expected seconds so far."""

    def __init__(self) -> None:
        self.bar: Any = None
        self.expected: list[float] = []
        self.started = time.monotonic()

    def planned(self, expected: Sequence[float]) -> None:
        from dpstream.experiments.progress import progress

        self.expected, self.started = list(expected), time.monotonic()
        self.bar = progress(len(self.expected), "conform", f"expected about {duration(sum(self.expected))} for "
                            "the reference on a quiet 2-core machine (longer for a slower program or on a busy "
                            "machine)", unit="check")

    def left(self, done: int) -> float:
        elapsed = time.monotonic() - self.started
        before, rest = sum(self.expected[:done]), sum(self.expected[done:])
        pace = elapsed / before if before > 0 else 1.0
        return rest * min(max(pace, 0.1), 100.0)

    def __call__(self, outcome: Outcome, done: int, total: int) -> None:
        if self.bar is None:
            return
        left = f"; about {duration(self.left(done))} left" if done < total else ""
        self.bar.set_postfix_str(f"{outcome.algorithm} {outcome.mode.value}: {outcome.verdict.value}{left}",
                                 refresh=False)
        self.bar.update(1)
        if done == total:
            self.bar.close()
