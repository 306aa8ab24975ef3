"""Power and false alarms of the Renyi divergence test (dpstream.audit.renyi) on Gaussian pairs: what it certifies of
a zCDP claim that (eps, delta) events cannot (docs/audits.md, "Renyi divergence test").

A Gaussian pair of zCDP parameter c x rho has the log-likelihood ratio N(-mu^2/2, mu^2) on f and N(mu^2/2, mu^2) on
f', mu^2 = 2 c rho. For each seed, ``--runs`` runs per input are drawn (dpstream.noise.data_rng(seed)), the first
``--selection`` share chooses the partition, the rest are held out; the table gives the bound rho >= D^lo / order per
seed, and how many exceed the claim. Beside it, the best (eps, delta) the pair's exact privacy profile exceeds the
claim's eps(delta) by, over the delta grid of the black-box events (dpstream.audit.blackbox.ZCDP_DELTAS).

    .venv/bin/python tools/renyi_power.py --factor 1.375 --runs 57800 --level 0.0005 --seeds 6
"""

from __future__ import annotations

import argparse
import math

from dpstream.audit.blackbox import ZCDP_DELTAS
from dpstream.audit.renyi import gaussian_eps, renyi_test
from dpstream.claims import zcdp_to_approx_dp
from dpstream.conformance.composed_tests import RENYI_SELECTION
from dpstream.noise import data_rng


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--factor", type=float, default=1.375, help="the pair's rho over the claimed rho")
    parser.add_argument("--rho", type=float, default=0.5, help="the claimed rho")
    parser.add_argument("--runs", type=int, default=57_800, help="runs per input")
    parser.add_argument("--level", type=float, default=0.0005)
    parser.add_argument("--seeds", type=int, default=6)
    parser.add_argument("--selection", type=float, default=RENYI_SELECTION)
    args = parser.parse_args()
    mu2 = 2 * args.factor * args.rho
    mu = math.sqrt(mu2)
    gaps = [(d, gaussian_eps(mu, d) - zcdp_to_approx_dp(args.rho, d)) for d in ZCDP_DELTAS]
    print(f"pair rho {args.factor * args.rho:.4g} against claimed {args.rho:g}; (eps, delta) excess of its exact "
          "profile over the claim's eps(delta): " + ", ".join(f"delta {d:g}: {g:+.3f}" for d, g in gaps))
    certified = 0
    for seed in range(args.seeds):
        rng = data_rng(seed)
        f, g = rng.normal(-mu2 / 2, mu, args.runs), rng.normal(mu2 / 2, mu, args.runs)
        test = renyi_test("gaussian", "log-likelihood ratio", f, g, int(args.selection * args.runs), args.rho,
                          args.level)
        assert test is not None
        certified += test.verdict == "violation"
        print(f"seed {seed}: rho >= {test.rho_lower_bound:.4f} (order {test.partition.order:g}, "
              f"{len(test.counts_p)} bins) {test.verdict}")
    print(f"certified {certified} of {args.seeds}")


if __name__ == "__main__":
    main()
