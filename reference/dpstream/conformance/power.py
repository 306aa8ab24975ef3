"""The measured power of the statistical mode's search, per entry and profile: what backs a ``pass``.

``python -m dpstream.conformance.power calibrate --profile quick --algorithm 001-alg5 --reps 10`` runs the statistical
mode's witness search, exactly as ``dpstream conform`` runs it for that entry (same settings, inputs, neighbours,
features and budget, at :data:`CALIBRATION_LEVEL`), ``reps`` times with different seeds on the reference with each
planted leak of :data:`~dpstream.insecure.planted.PLANTED_LEAKS` (:class:`~dpstream.conformance.entry_sampler.
EntrySampler`: the reference in process, whose rows are those ``dpstream serve --plant LEAK`` would give), and
records how many searches certified a violation. The rows go into a power table (JSON; the shipped one is
``dpstream/conformance/power-table.json``), keyed by a fingerprint of the search configuration: the search's code
(sha256 of the modules that propose, rank and certify), the entry's settings, input streams, neighbours, feature
names and the budget. ``dpstream conform`` looks the configuration up (:func:`power_statement`): a matching row gives
the :class:`~dpstream.audit.power_statement.PowerStatement` the verdict ``pass`` needs; a missing or stale one gives
none, and the verdict of a search that certifies nothing is then ``inconclusive``.

A run whose false-alarm share is smaller than :data:`CALIBRATION_LEVEL` (more checks share the budget) has less
power than measured, so the statement does not apply to it.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import sys
import time
from collections.abc import Mapping, Sequence
from datetime import date
from functools import cache, partial
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from dpstream.audit.power_statement import PowerRow, PowerStatement
from dpstream.audit.registry import Profile
from dpstream.audit.sampler import trial_executor
from dpstream.catalog import entries
from dpstream.claims import Measure
from dpstream.cli_args import one_blas_thread
from dpstream.conformance.entry_sampler import EntrySampler
from dpstream.conformance.statistical import (
    SEARCH_LEVEL,
    StatisticalPlan,
    budget_for,
    horizon_of,
    plan_for,
    run_search,
)
from dpstream.files import write_atomically, write_figure
from dpstream.insecure.planted import PLANTED_LEAKS, PlantedLeak
from dpstream.noise import derived_seed

__all__ = ["CALIBRATION_LEVEL", "calibrate", "fingerprint", "main", "power_statement"]

CALIBRATION_LEVEL = SEARCH_LEVEL
"""The false-alarm level the power is measured at: every privacy search of a conform run gets at least this share of
FALSE_ALARM (:func:`~dpstream.conformance.statistical.levels`), so its power is at least the measured one."""
TABLE_FORMAT = "dpstream-power-table"
SEARCH_MODULES = ("audit/search.py", "audit/proposals.py", "audit/events.py", "audit/stats.py")


@cache
def search_code() -> str:
    """sha256 of the search's code (the modules that propose, rank and certify events)."""
    root = resources.files("dpstream")
    digest = hashlib.sha256()
    for name in SEARCH_MODULES:
        digest.update((root / name).read_bytes())
    return digest.hexdigest()


def _jsonable(x: Any) -> Any:
    return json.loads(json.dumps(x, default=str, sort_keys=True))


def fingerprint(plan: StatisticalPlan, profile: Profile, bulk: bool) -> str:
    """sha256 of everything the search's power depends on (module docstring)."""
    budget = budget_for(plan, profile, bulk)
    config: dict[str, Any] = {"code": search_code(), "anchor": plan.entry.anchor, "profile": profile.value,
                              "budget": [budget.fit, budget.select, budget.holdout, budget.carried, budget.tail],
                              "settings": []}
    for params, space in zip(plan.settings, plan.spaces, strict=True):
        T = horizon_of(plan.entry, params)
        streams = {name: make(T) for name, make in space.families.items()}
        config["settings"].append({
            "params": _jsonable(params), "streams": _jsonable(streams),
            "neighbours": {name: [label for label, _ in space.neighbours(f)] for name, f in streams.items()}})
    text = json.dumps(config, sort_keys=True, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _default_table() -> Path:
    return Path(str(resources.files("dpstream.conformance") / "power-table.json"))


def load_table(path: Path | None = None) -> dict[str, Any]:
    """The power table at ``path`` (default: the shipped one); an empty table if there is none."""
    where = path or _default_table()
    if not where.is_file():
        return {"format": TABLE_FORMAT, "version": 1, "rows": {}}
    doc: dict[str, Any] = json.loads(where.read_text(encoding="utf-8"))
    if doc.get("format") != TABLE_FORMAT or doc.get("version") != 1:
        raise ValueError(f"{where}: not a dpstream power table (format {TABLE_FORMAT}, version 1)")
    return doc


def power_statement(plan: StatisticalPlan, profile: Profile, bulk: bool, level: float,
                    table: Path | None = None) -> PowerStatement:
    """The measured power of this search configuration (module docstring), or a statement of why there is none."""
    anchor = plan.entry.anchor
    how = (f"python -m dpstream.conformance.power calibrate --profile {profile.value} --algorithm {anchor}"
           + (" --bulk" if bulk else ""))
    try:
        doc = load_table(table)
    except (OSError, ValueError) as exc:
        return PowerStatement.none(f"the power table cannot be read ({exc})")
    row = doc["rows"].get(fingerprint(plan, profile, bulk))
    if row is None:
        return PowerStatement.none(f"no measured power for this search configuration (measure it: `{how}`)")
    if level < float(row["level"]) * (1 - 1e-9):
        return PowerStatement.none(f"the power was measured at level {row['level']:.3g}, this run's level is "
                                   f"{level:.3g} (more checks share the false-alarm budget)")
    return PowerStatement.of([PowerRow.from_json(r) for r in row["leaks"]],
                             f"measured {row['date']} by `{row['command']}` (fingerprint {row['fingerprint'][:12]})")


def leak_excess(plan: StatisticalPlan, leak: PlantedLeak) -> float:
    """The loss above the claim ``leak`` adds, at the setting of the plan where it is largest: (c - 1) eps for a
    pure-DP scale leak, (c^2 - 1) rho for zCDP (reported in rho), infinite for a shared draw or a noiseless count."""
    if leak.kind != "scale":
        return math.inf
    worst = 0.0
    for params in plan.settings:
        claim = plan.entry.claim(params)
        factor = leak.factor - 1 if claim.measure is Measure.PURE_DP else leak.factor**2 - 1
        worst = max(worst, factor * claim.parameter)
    return worst


def calibrate(anchor: str, profile: Profile, reps: int, *, bulk: bool = False, seed: int = 0, workers: int = 1,
              leaks: Sequence[PlantedLeak] = PLANTED_LEAKS, progress: bool = True) -> dict[str, Any]:
    """The power-table row of ``anchor`` at ``profile`` (module docstring)."""
    plan = plan_for(anchor, profile)
    if isinstance(plan, str):
        raise ValueError(plan)
    measured = fingerprint(plan, profile, bulk)  # of the code that runs now (it is read once per process)
    rows = []
    with trial_executor(workers) as executor:
        for leak in leaks:
            certified, started = 0, time.perf_counter()
            for rep in range(reps):
                placed = leak.at(plan.entry.statistical.planted if plan.entry.statistical and leak.kind in (
                    "shared", "noiseless") else None)  # a scale leak on every draw, as its excess is computed
                result = run_search(plan, partial(EntrySampler, anchor, leak=placed), profile, bulk,
                                    level=CALIBRATION_LEVEL, seed=derived_seed(seed, "power", leak.name, rep),
                                    executor=executor)
                certified += result.verdict == "violation"
            rows.append(PowerRow(leak.name, leak_excess(plan, leak), certified, reps).to_json())
            if progress:
                print(f"{anchor} {profile.value} {leak.name}: {certified}/{reps} certified "
                      f"({(time.perf_counter() - started) / reps:.1f} s per search)", flush=True)
    return {"anchor": anchor, "profile": profile.value, "bulk": bulk, "level": CALIBRATION_LEVEL,
            "fingerprint": measured, "date": date.today().isoformat(),
            "command": f"python -m dpstream.conformance.power calibrate --profile {profile.value} --algorithm {anchor}"
                       f" --reps {reps} --seed {seed}" + (" --bulk" if bulk else ""),
            "leaks": rows}


def _single_blas_thread(argv: Sequence[str] | None) -> None:
    """Run again with one BLAS thread per process if the caller did not choose (numpy is imported already, so the
    setting needs a new process; see ``dpstream.cli_args.one_blas_thread``)."""
    if argv is None and one_blas_thread():
        os.execv(sys.executable, [sys.executable, "-m", "dpstream.conformance.power", *sys.argv[1:]])


def main(argv: Sequence[str] | None = None) -> int:
    _single_blas_thread(argv)
    parser = argparse.ArgumentParser(prog="python -m dpstream.conformance.power",
                                     description=(__doc__ or "").splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    cal = sub.add_parser("calibrate", help="measure the power against planted leaks and write it to the table")
    cal.add_argument("--profile", choices=["quick", "thorough"], default="quick")
    cal.add_argument("--algorithm", action="append", default=[], metavar="ANCHOR",
                     help="an entry with statistical checks (repeatable; default: all)")
    cal.add_argument("--reps", type=int, default=10)
    cal.add_argument("--seed", type=int, default=0)
    cal.add_argument("--workers", type=int, default=1)
    cal.add_argument("--bulk", action="store_true", help="the budget of programs with the bulk op 'runs'")
    cal.add_argument("--table", type=Path, default=None, help="the table to update (default: the shipped one)")
    show = sub.add_parser("show", help="print the table as Markdown")
    show.add_argument("--table", type=Path, default=None)
    plot = sub.add_parser("plot", help="draw the power table as a grid (certified share per planted leak) in a PNG")
    plot.add_argument("--table", type=Path, default=None)
    plot.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    table = args.table or _default_table()
    doc = load_table(table)
    if args.command == "show":
        print(markdown(doc))
        return 0
    if args.command == "plot":
        draw(doc, args.out)
        print(f"wrote {args.out}")
        return 0
    anchors = args.algorithm or [e.anchor for e in entries() if e.statistical is not None]
    for anchor in anchors:
        row = calibrate(anchor, Profile(args.profile), args.reps, bulk=args.bulk, seed=args.seed,
                        workers=args.workers)
        same = [k for k, r in doc["rows"].items()
                if (r["anchor"], r["profile"], r["bulk"]) == (row["anchor"], row["profile"], row["bulk"])]
        for key in same:  # an earlier row of this entry, profile and budget: stale once the configuration changed
            del doc["rows"][key]
        doc["rows"][row["fingerprint"]] = row
        write_atomically(table, json.dumps(doc, indent=1, sort_keys=True) + "\n")
    print(f"wrote {table}")
    return 0


def markdown(doc: Mapping[str, Any]) -> str:
    """The table's rows as Markdown (entry, profile, then certified / repetitions per planted leak)."""
    names = [leak.name for leak in PLANTED_LEAKS]
    lines = ["| entry | profile | " + " | ".join(names) + " | backs a pass |",
             "|---|---|" + "---|" * len(names) + "---|"]
    for row in sorted(doc["rows"].values(), key=lambda r: (r["anchor"], r["profile"], r["bulk"])):
        by = {r["leak"]: r for r in row["leaks"]}
        statement = PowerStatement.of([PowerRow.from_json(r) for r in row["leaks"]], "")
        cells = [f"{by[n]['certified']}/{by[n]['reps']}" if n in by else "-" for n in names]
        label = row["profile"] + (" (runs)" if row["bulk"] else "")
        lines.append(f"| {row['anchor']} | {label} | " + " | ".join(cells) +
                     f" | {'yes' if statement.backs_pass else 'no'} |")
    return "\n".join(lines)


def draw(doc: Mapping[str, Any], path: Path) -> None:
    """The power table as a grid: for every row (entry and profile), the searches that certified each planted leak
    (the cell's shade: the share), with the 95% Clopper-Pearson lower bound of that share, the leaks ordered from the
    largest excess to the smallest."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from dpstream.audit.stats import clopper_pearson_lower

    order = ["noiseless", "shared", "scale/4", "scale/3", "scale/2", "scale/1.5"]
    rows = sorted(doc["rows"].values(), key=lambda r: (r["profile"], r["anchor"], r["bulk"]))
    share = np.full((len(rows), len(order)), np.nan)
    fig, ax = plt.subplots(figsize=(7.5, 0.32 * len(rows) + 1.6))
    for i, row in enumerate(rows):
        by = {r["leak"]: r for r in row["leaks"]}
        for k, leak in enumerate(order):
            if leak in by:
                c, n = by[leak]["certified"], by[leak]["reps"]
                share[i, k] = c / n
                lower = clopper_pearson_lower(c, n, 0.025)
                ax.text(k, i, f"{c}/{n}\n>={lower:.2f}", ha="center", va="center", fontsize=6,
                        color="white" if c / n > 0.6 else "black")
    ax.imshow(share, cmap="Greens", vmin=0.0, vmax=1.0, aspect="auto")
    ax.set_xticks(range(len(order)), order, fontsize=8)
    ax.set_yticks(range(len(rows)), [f"{r['anchor']} {r['profile']}{' (runs)' if r['bulk'] else ''}" for r in rows],
                  fontsize=7)
    ax.set_xlabel("planted leak (largest excess first)")
    ax.set_title("Power of the statistical mode's search: certified / repetitions, 95% lower bound", fontsize=9)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    write_figure(fig, path)
    plt.close(fig)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
