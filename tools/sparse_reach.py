"""Which leaks of 004-alg2 (sparse counting) and 004-alg3 (inhomogeneous sparse counting) any test could certify on
the statistical design's inputs, computed exactly from the paper's law (docs/conformance.md, "Where scale/1.5 does
not show yet").

For a planted leak dividing every noise scale by c (004-alg2's thresholds' and tests' Lap_Z(2/eps) and A_sub's Binary
Mechanism nodes; in 004-alg3 also the update of S~, Lap_Z(2/eps_r)), every setting of the entry's plan on both
profiles, every neighbouring pair of its design's input families (one entry flipped) and every view with at most
``--ends`` segment ends in the pair's level (:mod:`dpstream.audit.hypercube.loss`: the segment ends, A_sub's nodes
and, in 004-alg3, the sign of S~'s log-ratio; the releases are a function of the view), the loss of a view is the
log-ratio of its segment ends plus the largest log-ratio of A_sub's noisy nodes given them (reached in the nodes'
tails, so an upper bound) plus S~'s.

Two numbers per setting, the largest over the pairs and both directions:

* ``mass``: the probability, on the favoured input, of the views whose loss exceeds the claim. An event whose
  log-ratio exceeds the claim holds only on such views; a mass far below the reciprocal of the runs a check affords
  means no test of those runs can certify the leak on these inputs, however it chooses its event.
* ``oracle``: the largest lower bound a check could reach with ``--runs`` runs per input at ``--level``, if it knew
  the law and took the best event of the form "the view's loss is at least l" (Neyman-Pearson) and saw exactly the
  expected counts (A_sub at its largest ratio on every view: an overstatement). Below the claim, the leak cannot be
  certified on these inputs by any test of that size.

With ``--algorithm 004-alg1`` (the online synthetic data, whose releases' privacy loss is its region counters',
004-alg3 each): the largest loss of any view over the design's point streams and their neighbours
(:func:`dpstream.audit.hypercube.loss.online_view_loss` with ``factor``), exact; no event of any check has a larger
log-ratio. The views, the oracle and 004-alg3's law pair live in :mod:`dpstream.audit.hypercube.reach`.

    .venv/bin/python tools/sparse_reach.py [--algorithm 004-alg2|004-alg3|004-alg1] [--factor 1.5] [--ends 3]
        [--runs 400000] [--level 0.001]
"""

from __future__ import annotations

import argparse
import math
from typing import Any

import numpy as np

from dpstream.audit.hypercube.loss import online_view_loss
from dpstream.audit.hypercube.reach import flips, inhomogeneous_views, reach, scaled, sparse_views
from dpstream.audit.registry import Profile
from dpstream.conformance.statistical import horizon_of, plan_for
from dpstream.hypercube.online import OnlineSyntheticData
from dpstream.insecure import InsecureZeroNoise


def online_sup(params: dict[str, float], families: dict[str, Any], neighbours: Any, T: int, c: float
               ) -> tuple[float, str]:
    """004-alg1: the largest view loss (sup over every view, :func:`online_view_loss`) of the variant with every
    region counter's scales divided by c, over the design's point streams and their neighbours."""
    eps, d = params["epsilon"], int(params["d"])

    def make(rc: Any) -> OnlineSyntheticData:
        return OnlineSyntheticData(eps, d, noise=InsecureZeroNoise(), region_counter=rc)

    best, where = 0.0, "none"
    for family, stream in families.items():
        f = [np.asarray(p, dtype=float) for p in stream(T)]
        for label, g in neighbours(stream(T)):
            loss = online_view_loss(make, f, [np.asarray(p, dtype=float) for p in g], factor=c).upper
            if loss > best:
                best, where = loss, f"{family}, {label}"
    return best, where


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--algorithm", choices=("004-alg2", "004-alg3", "004-alg1"), default="004-alg2")
    parser.add_argument("--factor", type=float, default=1.5, help="every noise scale divided by this")
    parser.add_argument("--ends", type=int, default=3, help="views with at most this many segment ends")
    parser.add_argument("--runs", type=int, default=400000, help="runs per input of the oracle's check")
    parser.add_argument("--level", type=float, default=0.001, help="the oracle's false-alarm level")
    args = parser.parse_args()
    settings: dict[tuple[float, ...], tuple[dict[str, float], int, dict[str, Any], Any]] = {}
    for profile in (Profile.QUICK, Profile.THOROUGH):  # every setting once, with both profiles' families
        plan = plan_for(args.algorithm, profile)
        assert not isinstance(plan, str)
        for params, space in zip(plan.settings, plan.spaces, strict=True):
            T = horizon_of(plan.entry, params)
            values = {k: float(v) for k, v in params.items()}
            families = settings.setdefault((*values.values(), T), (values, T, {}, space.neighbours))[2]
            families.update(space.families)
    for values, T, families, neighbours in settings.values():
        head = f"{', '.join(f'{k}={v:g}' for k, v in values.items() if k != 'T')}, T={T} ({', '.join(families)}), " \
               f"scales / {args.factor:g}"
        if args.algorithm == "004-alg1":
            sup, where = online_sup(values, families, neighbours, T, args.factor)
            print(f"{head}: the largest loss of any view {sup:.4f} vs {values['epsilon']:g} ({where})")
            continue
        claim = values["epsilon"] if args.algorithm == "004-alg2" else values["eps_r"]
        best, oracle, where, at = 0.0, -math.inf, "none", "none"
        for family, tau, x, y in flips(families, T):
            for a, b in ((x, y), (y, x)):
                views = sparse_views(scaled(claim, T, args.factor), a, b, tau, args.ends) \
                    if args.algorithm == "004-alg2" else \
                    inhomogeneous_views(values, a, b, tau, args.factor, args.ends)
                m, o = reach(views, claim, args.runs, args.level)
                if m > best:
                    best, where = m, f"{family}, t={tau}"
                if o > oracle:
                    oracle, at = o, f"{family}, t={tau}"
        print(f"{head}: mass of the views whose loss exceeds {claim:g}: at most {best:.3g} ({where}); "
              f"oracle's bound on {args.runs} runs per input: {oracle:.3f} vs {claim:g} ({at})")


if __name__ == "__main__":
    main()
