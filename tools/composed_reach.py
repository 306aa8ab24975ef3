"""How much of its claim each design pair can show through its additive draws (docs/conformance.md, "Transcript
mode": the loss a pair composes).

For every streaming entry with a statistical plan and every setting of the profile's sweep, the reference runs once
on the setting's first input (seeded), and each design pair's loss is composed over the additive draws it moves
(:func:`dpstream.conformance.composed_tests.composed_pairs`, the reference's parameters reported as the program's). The
table gives, per setting, the pairs composed (the others flip a decision), and the best pair's share of the claim:
a leak of factor c shows on that pair through additive draws only where c x share > 1. The last column is the
same share composed at the noise door (:func:`dpstream.conformance.held_equal.door_pairs`: selections and draws
shown through any release too, decisions left out) along seeded runs 1-4 on that input: where only this column
reaches the claim, a leak is reported with its composed size but no composed event exists to certify it.
With ``--plant LEAK`` (``scale/1.5``, ...: dpstream.insecure.planted) two more columns: the door's largest share over
every design input of the setting and seeded runs 1-8, for the reference and for the reference with LEAK planted
(the door then reads the planted parameters): a leak whose composition stays at or below the claim on every sampled
path has no event on these inputs that could certify it.

    .venv/bin/python tools/composed_reach.py [--profile quick|thorough] [--plant LEAK] [--only ANCHOR ...]
"""

from __future__ import annotations

import argparse
from typing import Any

from dpstream.audit.registry import Profile
from dpstream.catalog import entries
from dpstream.conformance.composed_tests import composed_pairs
from dpstream.conformance.entry_sampler import Run, entry_run
from dpstream.conformance.held_equal import door_pairs
from dpstream.conformance.replays import seeded_tape
from dpstream.conformance.statistical import StatisticalPlan, horizon_of, plan_for
from dpstream.insecure.planted import PlantedLeak, PlantedNoise
from dpstream.noise import NoiseSource

SEEDS = range(1, 9)


def _planted(run: Run, leak: PlantedLeak) -> Run:
    def planted(source: NoiseSource, inputs: Any) -> list[Any]:
        return run(PlantedNoise(source, leak), inputs)
    return planted


def _widest(plan: StatisticalPlan, si: int, leak: PlantedLeak | None) -> str:
    """The largest share of the claim any pair composes at the door over every design input and SEEDS."""
    e, params, space = plan.entry, plan.settings[si], plan.spaces[si]
    run = entry_run(e, params)
    if leak is not None:
        run = _planted(run, leak)
    best = None
    for make in space.families.values():
        f = make(horizon_of(e, params))
        tapes = [t for t in (seeded_tape(e, params, f, seed) for seed in SEEDS) if t is not None]
        for h in door_pairs(plan, si, tapes, f, run):
            if h.diverged is None and (best is None or h.reached > best):
                best = h.reached
    return "-" if best is None else f"{best / e.claim(params).parameter:.0%}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", choices=["quick", "thorough"], default="quick")
    parser.add_argument("--plant", type=PlantedLeak.parse, default=None)
    parser.add_argument("--only", nargs="*", default=None)
    args = parser.parse_args()
    extra = (f" every input | every input, {args.plant.name} |", "---|---|") if args.plant else ("", "")
    print("| entry | setting | pairs composed | best pair's share of the claim | best pair | at the noise door |"
          + extra[0])
    print(f"|---|---|---|---|---|---|{extra[1]}")
    for e in entries(streaming=True):
        if args.only and e.anchor not in args.only:
            continue
        plan = plan_for(e.anchor, Profile(args.profile))
        if isinstance(plan, str) or e.codec is None:
            continue
        for si, (params, space) in enumerate(zip(plan.settings, plan.spaces, strict=True)):
            f = next(iter(space.families.values()))(horizon_of(e, params))
            tape = seeded_tape(e, params, f, seed=1)
            pairs = composed_pairs(plan, si, tape) if tape is not None else []
            best = max(pairs, key=lambda c: c.reached, default=None)
            share = f"{best.reached / best.claim:.0%}" if best is not None else "-"
            tapes = [t for t in (seeded_tape(e, params, f, seed) for seed in range(1, 5)) if t is not None]
            door = [h for h in door_pairs(plan, si, tapes) if h.diverged is None]
            at_door = f"{max(h.reached for h in door) / door[0].claim.parameter:.0%}" if door else "-"
            wide = (f" {_widest(plan, si, None)} | {_widest(plan, si, args.plant)} |") if args.plant else ""
            print(f"| {e.anchor} | {si + 1} | {len(pairs)}/{len(space.neighbours(f))} | {share} | "
                  f"{best.label if best is not None else ''} | {at_door} |{wide}")


if __name__ == "__main__":
    main()
