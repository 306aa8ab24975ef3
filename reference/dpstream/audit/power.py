"""Measured power of the black-box witness search: ``python -m dpstream.audit.power``.

The audited mechanism is a binary tree counter (001-alg10's tree, T = 16) whose Laplace scale is
``(floor(log2 T) + 1) / (ratio * eps)``, so its true loss is ``ratio * eps`` while the claim stays eps = 1
(ratio 1.25 is 001-alg10 as printed at T = 16; ratio 1 is the correct counter). For each ratio, and for each
held-out size, the script runs the search (:func:`dpstream.audit.profiles.audit_counter`, vectorised sampler,
the profile's input families and features, no model) ``--reps`` times with different seeds and reports the
share of runs that certify a ``violation``, with a Clopper-Pearson 95% interval. With ``--holdouts`` the fit
and select splits scale along (holdout / 20 runs each, at least 1000, at most the profile's). Writes ``power.md`` (the
table) and ``power.png`` (the curves) under ``--out``.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from dpstream.audit.counters.models import dyadic_tree_model
from dpstream.audit.linear_model import NoiseLaw
from dpstream.audit.profiles import audit_counter, profile_spec
from dpstream.audit.registry import Profile
from dpstream.audit.sampler import Sampler, trial_executor
from dpstream.audit.stats import clopper_pearson_lower, clopper_pearson_upper
from dpstream.audit.vectorised import LinearModelSampler
from dpstream.files import write_atomically

__all__ = ["main", "measure"]

T = 16


def _tree(ratio: float) -> Sampler:
    return LinearModelSampler(dyadic_tree_model("001-alg10 L8", NoiseLaw.laplace(T.bit_length() / ratio), T, None))


def measure(ratio: float, holdout: int, profile: Profile, reps: int, level: float, workers: int) -> tuple[int, float]:
    """(violations among ``reps`` searches, mean seconds per search)."""
    spec = profile_spec(profile).vectorised
    split = min(spec.fit, max(1000, holdout // 20))  # fit and select scale with the held-out size
    budget = replace(spec, fit=split, select=split, holdout=holdout)
    hits, start = 0, time.perf_counter()
    with trial_executor(workers) as pool:
        for seed in range(reps):
            result = audit_counter(lambda e, n: _tree(ratio), profile=profile, level=level, seed=seed,
                                   sweep=((1.0, T),), budget=budget, executor=pool)
            hits += result.verdict == "violation"
    return hits, (time.perf_counter() - start) / reps


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--profile", default="thorough", choices=["quick", "thorough"])
    parser.add_argument("--ratios", default="1,1.1,1.25,1.5", help="true eps / claimed eps, comma-separated")
    parser.add_argument("--holdouts", default="", help="held-out runs per input (default: the profile's)")
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--level", type=float, default=1e-4)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--out", type=Path, default=Path("audit-power"))
    args = parser.parse_args(argv)
    profile = Profile(args.profile)
    ratios = [float(r) for r in args.ratios.split(",")]
    default = [profile_spec(profile).vectorised.holdout]
    holdouts = [int(h) for h in args.holdouts.split(",")] if args.holdouts else default
    rows = []
    for holdout in holdouts:
        for ratio in ratios:
            hits, seconds = measure(ratio, holdout, profile, args.reps, args.level, args.workers)
            lo = clopper_pearson_lower(hits, args.reps, 0.025)
            hi = clopper_pearson_upper(hits, args.reps, 0.025)
            rows.append((ratio, holdout, hits, lo, hi, seconds))
            print(f"ratio {ratio:g}, held-out {holdout}: {hits}/{args.reps} violations "
                  f"(95% CI {lo:.2f}-{hi:.2f}), {seconds:.0f} s per search", flush=True)
    args.out.mkdir(parents=True, exist_ok=True)
    command = (f"python -m dpstream.audit.power --profile {args.profile} --ratios {args.ratios} "
               f"--holdouts {','.join(map(str, holdouts))} --reps {args.reps} --level {args.level:g}")
    lines = [f"Command: `{command}`", "", "| true eps / claim | held-out runs per input | fit = select runs | "
             "P(violation) | 95% CI | s per search |", "|---|---|---|---|---|---|"]
    fit = profile_spec(profile).vectorised.fit
    lines += [f"| {r:g} | {h} | {min(fit, max(1000, h // 20))} | {k}/{args.reps} | {lo:.2f}-{hi:.2f} | {s:.0f} |"
              for r, h, k, lo, hi, s in rows]
    write_atomically(args.out / "power.md", "\n".join(lines) + "\n")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    for holdout in holdouts:
        pts = [(r, k / args.reps) for r, h, k, *_ in rows if h == holdout]
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=f"{holdout} held-out runs")
    ax.set_xlabel("true eps / claimed eps (tree counter, T = 16)")
    ax.set_ylabel("P(violation)")
    ax.set_ylim(-0.05, 1.05)
    ax.set_title(f"witness search power ({args.profile}, level {args.level:g}, {args.reps} seeds)", fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(args.out / "power.png", dpi=90)
    plt.close(fig)
    print(f"wrote {args.out / 'power.md'} and {args.out / 'power.png'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
