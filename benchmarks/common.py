"""What the benchmark scripts share: timing and peak memory per step, the OpenDP call log, CSV and plots.

Run the scripts from the repository root as modules (``.venv/bin/python -m benchmarks.counters``). They are
scripts, not tests: their numbers depend on the machine and on what else runs on it (say so next to any figure).
"""

from __future__ import annotations

import csv
import time
import tracemalloc
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dpstream.insecure import InsecureSeededNoise
from dpstream.noise import DrawKind, NoiseSource, SecureNoise

__all__ = ["Config", "LoggedSecureNoise", "StepRow", "plot_family", "run_config", "write_csv"]

Factory = Callable[[NoiseSource], Any]


class LoggedSecureNoise(SecureNoise):
    """The secure source, logging every OpenDP measurement call: (kind, parameter, vector, length).

    :meth:`opendp_alone` replays exactly these calls on zeros (the same measurements, the same vector
    lengths) and returns their wall time: the cost of the run's OpenDP draws alone.
    """

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[tuple[DrawKind, float, bool, int]] = []

    def _measurement(self, kind: DrawKind, parameter: float, vector: bool = False) -> Any:
        measurement = super()._measurement(kind, parameter, vector)
        calls = self.calls

        def logged(arg: Any) -> Any:
            calls.append((kind, parameter, vector, len(arg) if isinstance(arg, list) else 0))
            return measurement(arg)

        return logged

    def opendp_alone(self, clock: Callable[[], float] = time.perf_counter) -> float:
        """Seconds (of ``clock``) that the logged OpenDP calls take when replayed alone, on zeros."""
        replay = []
        for kind, parameter, vector, length in self.calls:
            measurement = super()._measurement(kind, parameter, vector)
            zero: float | int = 0.0 if kind in (DrawKind.LAPLACE, DrawKind.EXPONENTIAL_MECHANISM) else 0
            arg: Any = [zero] * length if (vector or kind is DrawKind.EXPONENTIAL_MECHANISM) else zero
            replay.append((measurement, arg))
        start = clock()
        for measurement, arg in replay:
            measurement(arg)
        return clock() - start

    def elements(self) -> int:
        """Values drawn by the logged calls (a scalar call counts 1)."""
        return sum(max(length, 1) for *_, length in self.calls)


@dataclass(frozen=True)
class Config:
    """One benchmark configuration: ``factory(noise)`` stepped through ``inputs``; ``size`` names the parameter."""

    family: str
    label: str
    size_name: str
    size: float
    factory: Factory
    inputs: Sequence[Any]


@dataclass(frozen=True)
class StepRow:
    family: str
    label: str
    size_name: str
    size: float
    mode: str
    t: int
    seconds: float
    peak_kib: float | None


def _steps(config: Config, noise: NoiseSource, memory: bool) -> Iterable[tuple[int, float, float | None]]:
    alg = config.factory(noise)
    for t, x in enumerate(config.inputs, start=1):
        if memory:
            tracemalloc.reset_peak()
            before = tracemalloc.get_traced_memory()[0]
        start = time.perf_counter()
        alg.step(x)
        seconds = time.perf_counter() - start
        peak = (tracemalloc.get_traced_memory()[1] - before) / 1024.0 if memory else None
        yield t, seconds, peak


def run_config(config: Config, modes: Sequence[str] = ("seeded", "secure"), memory: bool = True,
               seed: int = 0) -> list[StepRow]:
    """Time every step in each mode; with ``memory``, one more seeded pass under tracemalloc gives the peak
    memory allocated during each step (Python allocations; OpenDP's native ones are not traced)."""
    rows: list[StepRow] = []
    for mode in modes:
        noise: NoiseSource = InsecureSeededNoise(seed) if mode == "seeded" else SecureNoise()
        for t, seconds, _ in _steps(config, noise, memory=False):
            rows.append(StepRow(config.family, config.label, config.size_name, config.size, mode, t, seconds, None))
    if memory:
        tracemalloc.start()
        try:
            for t, _, peak in _steps(config, InsecureSeededNoise(seed), memory=True):
                rows.append(StepRow(config.family, config.label, config.size_name, config.size, "memory", t,
                                    float("nan"), peak))
        finally:
            tracemalloc.stop()
    return rows


def write_csv(rows: Sequence[StepRow], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["family", "label", "size_name", "size", "mode", "t", "seconds", "peak_kib"])
        for r in rows:
            writer.writerow([r.family, r.label, r.size_name, r.size, r.mode, r.t, f"{r.seconds:.6g}",
                             "" if r.peak_kib is None else f"{r.peak_kib:.1f}"])


def summary(rows: Sequence[StepRow]) -> list[tuple[str, str, float, str, int, float, float]]:
    """(label, size_name, size, mode, steps, total seconds, mean ms per step) per configuration and mode."""
    keys: dict[tuple[str, str, float, str], list[float]] = {}
    for r in rows:
        if r.mode != "memory":
            keys.setdefault((r.label, r.size_name, r.size, r.mode), []).append(r.seconds)
    return [(label, name, size, mode, len(v), sum(v), 1000.0 * sum(v) / len(v))
            for (label, name, size, mode), v in keys.items()]


def print_summary(rows: Sequence[StepRow]) -> None:
    peaks: dict[tuple[str, float], float] = {}
    for r in rows:
        if r.peak_kib is not None:
            key = (r.label, r.size)
            peaks[key] = max(peaks.get(key, 0.0), r.peak_kib)
    print("| configuration | size | mode | steps | total s | ms/step | peak KiB/step |")
    print("|---|---|---|---|---|---|---|")
    for label, name, size, mode, steps, total, mean in summary(rows):
        peak = peaks.get((label, size))
        print(f"| {label} | {name}={size:g} | {mode} | {steps} | {total:.3f} | {mean:.3f} | "
              f"{'-' if peak is None else f'{peak:.0f}'} |")


def plot_family(rows: Sequence[StepRow], base_label: str, title: str, path: Path) -> None:
    """Three panels: ms per step against t (base configuration, seeded and secure), mean ms per step against the
    size parameter (seeded and secure), peak KiB per step against t (base configuration)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(15, 4.2))
    for mode, style in (("seeded", "-"), ("secure", "--")):
        pts = [(r.t, 1000.0 * r.seconds) for r in rows if r.label == base_label and r.mode == mode]
        if pts:
            axes[0].plot(*zip(*pts, strict=True), style, label=mode, linewidth=0.8)
        series: dict[tuple[str, str], list[tuple[float, float]]] = {}
        points_of = [(label, name, size, mean) for label, name, size, m, _, _, mean in summary(rows) if m == mode]
        for label, name, size, mean in points_of:
            twin = any(o != label and o.split()[0] == label.split()[0] and (n, z) == (name, size)
                       for o, n, z, _ in points_of)
            if label == base_label and twin:
                continue  # the sweep measures this size over its own steps
            series.setdefault((label.split()[0], name), []).append((size, mean))
        for (head, name), points in sorted(series.items()):
            if len(points) > 1:
                axes[1].plot(*zip(*sorted(points), strict=True), style + "o", label=f"{head} ({name}), {mode}")
    size_names = sorted({r.size_name for r in rows})
    axes[0].set(xlabel="t", ylabel="ms per step", title=f"{base_label}: time per step", yscale="log")
    axes[1].set(xlabel=", ".join(size_names), ylabel="mean ms per step", title="against the size parameter",
                xscale="log", yscale="log")
    mem = [(r.t, r.peak_kib) for r in rows if r.label == base_label and r.peak_kib is not None]
    if mem:
        axes[2].plot(*zip(*mem, strict=True), linewidth=0.8)
    axes[2].set(xlabel="t", ylabel="peak KiB allocated in the step", title="peak memory per step (seeded)")
    for ax in axes[:2]:
        ax.legend()
    fig.suptitle(title)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=90)
    plt.close(fig)


def run_family(family: str, base: Config, sweep: Sequence[Config], title: str, argv: Sequence[str] | None,
               description: str | None) -> int:
    """The body of every family script: time ``base`` per step (against t) and every ``sweep`` configuration
    (against its size parameter), seeded and secure, with peak memory per step; write CSV and PNG to ``--out``."""
    import argparse

    parser = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=Path("benchmark-results"), help="folder for the CSV and PNG")
    parser.add_argument("--modes", nargs="+", default=["seeded", "secure"], choices=["seeded", "secure"])
    parser.add_argument("--no-memory", action="store_true", help="skip the tracemalloc pass")
    args = parser.parse_args(argv)
    SecureNoise().add_laplace("warm-up", 0.0, 1.0)  # import OpenDP once, before any timed step
    rows: list[StepRow] = []
    for config in [base, *sweep]:
        rows.extend(run_config(config, args.modes, memory=not args.no_memory and config is base))
    write_csv(rows, args.out / f"{family}.csv")
    plot_family(rows, base.label, title, args.out / f"{family}.png")
    print_summary(rows)
    print(f"wrote {args.out / f'{family}.csv'} and {args.out / f'{family}.png'}")
    return 0
