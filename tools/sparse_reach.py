"""Which leaks of 004-alg2 (sparse counting) any test could certify on the statistical design's inputs: the mass of the
views whose privacy loss exceeds the claim, computed exactly from the paper's law (docs/conformance.md, "Where
scale/1.5 does not show yet").

For a planted leak dividing every noise scale by c (the thresholds' and the tests' Lap_Z(2/eps) and A_sub's Binary
Mechanism nodes), every setting of the entry's plan on both profiles, every neighbouring pair of its design's input
families (one entry flipped) and every view with at most ``--ends`` segment ends
(:mod:`dpstream.audit.hypercube.loss`: the segment ends and A_sub's nodes; the releases are a function of the view),
the loss of the view is the log-ratio of its segment ends plus the largest log-ratio of A_sub's noisy nodes given
them (reached in the nodes' tails, so an upper bound).
An event whose log-ratio exceeds the claim eps holds only on views whose loss does; the table gives the largest
probability, over the pairs and both directions, of that set of views on the favoured input. A mass far below the
reciprocal of the runs a check affords (400000 at thorough) means no test of those runs can certify the leak on these
inputs, however it chooses its event.

    .venv/bin/python tools/sparse_reach.py [--factor 1.5] [--ends 3] [--excess 0.05]
"""

from __future__ import annotations

import argparse
import math
from dataclasses import replace

from dpstream.audit.hypercube.loss import SparseLaw, segment_end_patterns, segments_of
from dpstream.audit.registry import Profile
from dpstream.conformance.statistical import plan_for


def scaled(eps: float, T: int, c: float) -> SparseLaw:
    """004-alg2's law with every noise scale divided by c (A_sub's node losses multiplied by c)."""
    base = SparseLaw.printed(eps, T)
    return replace(base, threshold_scale=base.threshold_scale / c, test_scale=base.test_scale / c,
                   sub_loss=tuple(tuple(v * c for v in row) for row in base.sub_loss))


def exceeding_mass(law: SparseLaw, eps: float, a: list[int], b: list[int], tau: int, ends_at_most: int) -> float:
    """P_a of the views (at most ``ends_at_most`` segment ends) whose loss log P_a / P_b exceeds ``eps``."""
    n, total = len(a), 0.0
    for ends in segment_end_patterns(n, False, ends_at_most):
        segs = segments_of(ends, n)
        pa = pb = 1.0
        for s, u in segs:
            last = n - 1 if u is None else u
            ca = tuple(sum(a[s:v]) for v in range(s + 1, last + 1))
            cb = tuple(sum(b[s:v]) for v in range(s + 1, last + 1))
            if ca:
                pa *= law.segment_probability(ca, u is not None)
                pb *= law.segment_probability(cb, u is not None)
        k = next(i for i, (s, u) in enumerate(segs) if s < tau and (u is None or u >= tau))
        sub = law.sub_loss[len(ends)][k] if segs[k][1] is not None else 0.0
        if pa > 0 and pb > 0 and math.log(pa / pb) + sub > eps * (1 + 1e-9):
            total += pa
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--factor", type=float, default=1.5, help="every noise scale divided by this")
    parser.add_argument("--ends", type=int, default=3, help="views with at most this many segment ends")
    parser.add_argument("--excess", type=float, default=0.0, help="count the views whose loss exceeds the claim by "
                        "this share of it (0: any excess)")
    args = parser.parse_args()
    seen: set[tuple[float, int]] = set()
    for profile in (Profile.QUICK, Profile.THOROUGH):
        plan = plan_for("004-alg2", profile)
        assert not isinstance(plan, str)
        for params, space in zip(plan.settings, plan.spaces, strict=True):
            eps, T = float(params["epsilon"]), int(params["T"])
            if (eps, T) in seen:
                continue
            seen.add((eps, T))
            law = scaled(eps, T, args.factor)
            best, where = 0.0, "none"
            for family, make in space.families.items():
                x = [int(v) for v in make(T)]
                for tau in range(1, T + 1):
                    y = list(x)
                    y[tau - 1] = 1 - y[tau - 1]
                    for a, b in ((x, y), (y, x)):
                        m = exceeding_mass(law, eps * (1 + args.excess), a, b, tau, args.ends)
                        if m > best:
                            best, where = m, f"{family}, t={tau}"
            print(f"{profile.value}: eps={eps:g}, T={T}, scales / {args.factor:g}: views whose loss exceeds "
                  f"{eps * (1 + args.excess):g} have probability at most {best:.3g} ({where})")

if __name__ == "__main__":
    main()
