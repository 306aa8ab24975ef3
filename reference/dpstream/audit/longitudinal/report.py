"""Reproduce the numbers quoted in docs/longitudinal.md and docs/errata/longitudinal.md.

``python -m dpstream.audit.longitudinal.report <what>`` with ``<what>`` one of

* ``fixed-window-privacy`` — exact effective rho (max_alpha D_alpha/alpha) of 002-alg1, noisy
  histograms and released synthetic data, worst pairs, per calibration and relation (E-longitudinal-1);
* ``cumulative-privacy`` — worst substitution cost of 002-alg2's counters, exhaustive for T <= 8 and
  over structured pairs for T = 12 (E-longitudinal-7);
* ``rounding`` — the largest rounding term |B| = |p - C_pad - G| observed in seeded runs (E-longitudinal-4);
* ``small-noise-accuracy`` — Theorem 3.2's printed lambda in small-noise regimes (E-longitudinal-4);
* ``cumulative-accuracy`` — Corollary B.1 (as printed) and the corrected union bound for 002-alg2 in
  the paper's setting (n = 25000, T = 12, rho = 0.005), default and printed budgets;
* ``theorem-3-2-from-csv PATH`` — Theorem 3.2's joint event from a ``bun-simulated`` ``errors.csv``;
* ``theorem-3-2-study`` — the same event in the paper's noise setting (T = 12, k = 3, rho = 0.005,
  all-ones data, n = 100 and n_pad = 2000 so that no run stops), for both calibrations.

Insecure seeded noise only (these are measurements, not releases).
"""

from __future__ import annotations

import argparse
import itertools
import sys
from collections.abc import Sequence

import numpy as np

from dpstream.audit.exact import DEFAULT_ALPHAS, linear_renyi
from dpstream.audit.longitudinal.loss import cumulative_model, cumulative_worst_pair, worst_pair_bracket, z_vector
from dpstream.insecure import InsecureSeededNoise, TapeRecorder
from dpstream.longitudinal.bounds import fixed_window_sigma2, rho_b_allocation, theorem_3_2_lambda
from dpstream.longitudinal.data import pattern_string, window_histogram
from dpstream.longitudinal.fixed_window import FixedWindowSynthesizer
from dpstream.longitudinal.generators import random_matrix

__all__ = ["main"]


def _bits(x: Sequence[int] | None) -> str:
    return "-" if not x else "".join(map(str, x))


def fixed_window_privacy() -> None:
    A = DEFAULT_ALPHAS
    for T, k, rho in ((12, 3, 0.005), (5, 2, 1.0)):
        for printed in (True, False):
            for sub in (True, False):
                s2 = fixed_window_sigma2(T, k, rho, as_printed=printed)
                b = [worst_pair_bracket(T, k, s2, a, substitute=sub) for a in A]
                lo = max(x[0].lower / a for x, a in zip(b, A, strict=True)) / rho
                hi = max(x[0].upper / a for x, a in zip(b, A, strict=True)) / rho
                h = max(x[0].parts["histograms"] / a for x, a in zip(b, A, strict=True)) / rho
                print(f"T={T} k={k} rho={rho:g} {'printed' if printed else 'default'} "
                      f"{'substitution' if sub else 'add/remove  '}: histograms {h:.4f} rho, synthetic data "
                      f"[{lo:.4f}, {hi:.4f}] rho, worst x={_bits(b[0][1])} x'={_bits(b[0][2])}")


def cumulative_privacy() -> None:
    rho = 0.005
    for T in (4, 5, 6, 8):
        alloc = rho_b_allocation(T, rho)
        for name, budgets in (("printed", alloc), ("default", [r / 2 for r in alloc])):
            _, x, y = cumulative_worst_pair(T, budgets, 2.0)
            print(f"T={T} {name}: exhaustive worst substitution {_effective(T, budgets, x, y) / rho:.4f} rho "
                  f"(x={_bits(x)}, x'={_bits(y)})")
    T = 12
    alloc = rho_b_allocation(T, rho)
    cands = [tuple([0] * j + [1] * (T - j)) for j in range(T + 1)] + [tuple([1] * j + [0] * (T - j))
                                                                      for j in range(T + 1)]
    model = cumulative_model(T, alloc)
    best = max(((linear_renyi(model, z_vector(np.array([x]), T), z_vector(np.array([y]), T), 2.0), x, y)
                for x, y in itertools.product(cands, repeat=2) if x != y), key=lambda r: r[0])
    print(f"T=12 printed: >= {_effective(T, alloc, best[1], best[2]) / rho:.4f} rho over {len(cands) ** 2} "
          f"structured pairs (x={_bits(best[1])}, x'={_bits(best[2])})")


def _effective(T: int, budgets: Sequence[float], x: Sequence[int], y: Sequence[int]) -> float:
    model = cumulative_model(T, budgets)
    zx, zy = z_vector(np.array([x]), T), z_vector(np.array([y]), T)
    return max(max(linear_renyi(model, zx, zy, a), linear_renyi(model, zy, zx, a)) / a for a in DEFAULT_ALPHAS)


def rounding(runs: int = 300) -> None:
    T, k, rho, n_pad = 12, 3, 50.0, 30
    rng_seed = 0
    worst = 0.0
    O = 2 ** (k - 1)
    for rep in range(runs):
        X = random_matrix(40, T, seed=rng_seed + rep)
        recorder = TapeRecorder(InsecureSeededNoise(rep))
        synth = FixedWindowSynthesizer(T, k, rho, noise=recorder, n_pad=n_pad)
        synth.run(X)
        tape = {d.site: d.value for d in recorder.tape}
        G: np.ndarray | None = None
        for i, t in enumerate(range(k, T + 1)):
            Y = np.array([tape[f"002-alg1 u3 t={t} s={pattern_string(s, k)}"] for s in range(2**k)], dtype=float)
            if G is None:
                G = Y
            else:
                new = np.zeros(2**k)
                for z in range(O):
                    mean = 0.5 * (G[z] + G[O + z])
                    new[2 * z] = 0.5 * (Y[2 * z] - Y[2 * z + 1]) + mean
                    new[2 * z + 1] = 0.5 * (Y[2 * z + 1] - Y[2 * z]) + mean
                G = new
            B = synth.p_history[i] - (window_histogram(X, t, k) + n_pad) - G
            worst = max(worst, float(np.abs(B).max()))
    print(f"k={k}, T={T}, rho={rho:g} (sigma^2={fixed_window_sigma2(T, k, rho):g}), {runs} runs: "
          f"max |B| = {worst:g} (printed claim: 1/2; bound k/2 = {k / 2:g})")


def small_noise_accuracy(runs: int = 400) -> None:
    for T, k, rho, beta in ((7, 6, 2.0, 0.5), (8, 6, 4.0, 0.5), (12, 3, 20.0, 0.5), (10, 5, 10.0, 0.9),
                            (8, 7, 1.0, 0.9)):
        X = random_matrix(60, T, seed=0)
        Cs = [window_histogram(X, t, k) for t in range(k, T + 1)]
        fails = 0
        errs = []
        sigma2 = fixed_window_sigma2(T, k, rho, as_printed=True)
        lam = theorem_3_2_lambda(sigma2, T, k, beta)
        for rep, noise in enumerate(InsecureSeededNoise.independent(1, runs)):
            synth = FixedWindowSynthesizer(T, k, rho, noise=noise, n_pad=50, as_printed=True)
            synth.run(X)
            e = max(float(np.abs(p - (C + 50)).max()) for p, C in zip(synth.p_history, Cs, strict=True))
            errs.append(e)
            fails += e > lam
            _ = rep
        print(f"T={T} k={k} sigma^2={sigma2:g} beta={beta:g}: lambda={lam:.3f}, exceedances {fails}/{runs}, "
              f"max error {max(errs):g}")


def _interval(k: int, n: int) -> str:
    from scipy import stats

    lo = 0.0 if k == 0 else float(stats.beta.ppf(0.025, k, n - k + 1))
    hi = 1.0 if k == n else float(stats.beta.ppf(0.975, k + 1, n - k))
    return f"{k}/{n} = {k / n:.4f}, 95% Clopper-Pearson [{lo:.4f}, {hi:.4f}]"


def cumulative_accuracy(runs: int = 100) -> None:
    from dpstream.counters.tree_aggregation import tree_aggregation_sigma2
    from dpstream.longitudinal.bounds import corollary_b1_alpha, cumulative_union_bound
    from dpstream.longitudinal.cumulative import CumulativeSynthesizer

    n, T, rho = 25000, 12, 0.005
    X = random_matrix(n, T, seed=0, p1=0.3)
    W = np.cumsum(X, axis=1)
    truth = [[int(np.count_nonzero(W[:, t - 1] >= b)) for b in range(t + 1)] for t in range(1, T + 1)]
    for printed in (False, True):
        probe = CumulativeSynthesizer(T, rho, noise=InsecureSeededNoise(0), as_printed=printed)
        spent = sum(probe.counter_rho)
        alpha, beta_star = corollary_b1_alpha(T, spent, 0.05 / T, n)
        sigma2 = [tree_aggregation_sigma2(r, T - b + 1) for b, r in enumerate(probe.counter_rho, start=1)]
        union = cumulative_union_bound(sigma2, 0.05)
        errors = []
        for noise in InsecureSeededNoise.independent(2 if printed else 1, runs):
            synth = CumulativeSynthesizer(T, rho, noise=noise, as_printed=printed)
            worst = 0
            for t, release in enumerate(synth.run(X), start=1):
                worst = max(worst, int(np.abs(release.S_hat - np.asarray(truth[t - 1])).max()))
            errors.append(worst)
        e = np.asarray(errors, dtype=float)
        q = float(np.quantile(e, 0.95))
        print(f"{'printed' if printed else 'default'} budgets (counters spend {spent:g} add/remove units): "
              f"max error median {np.median(e):g}, 95% quantile {q:g}, max {e.max():g} (counts)")
        print(f"  Corollary B.1 alpha* n = {alpha * n:.2f} (beta* = {beta_star:g}): exceedances "
              f"{_interval(int((e > alpha * n).sum()), runs)}; tightness q95/bound = {q / (alpha * n):.3f}")
        print(f"  corrected union bound {union:.2f} (beta = 0.05): exceedances "
              f"{_interval(int((e > union).sum()), runs)}; tightness {q / union:.3f}")


def theorem_3_2_from_csv(path: str) -> None:
    import csv
    import json
    from pathlib import Path

    folder = Path(path).parent
    params = json.loads((folder / "summary.json").read_text())["parameters"]
    n, k, lam, beta = params["n"], params["k"], params["lambda"], params["beta"]
    worst: dict[int, float] = {}
    with open(path, newline="", encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            if int(row["width"]) == k:
                r = int(row["rep"])
                worst[r] = max(worst.get(r, 0.0), float(row["debiased"]) * n)
    e = np.asarray(list(worst.values()))
    q = float(np.quantile(e, 1 - beta))
    print(f"Theorem 3.2 (lambda = {lam:.3f}, beta = {beta:g}), {e.size} runs: max_(s,t) |p - C - n_pad| median "
          f"{np.median(e):g}, (1-beta) quantile {q:g}, max {e.max():g}; exceedances "
          f"{_interval(int((e > lam + 1e-9).sum()), e.size)}; tightness {q / lam:.3f}")


def theorem_3_2_study(runs: int = 1500) -> None:
    X = np.ones((100, 12), dtype=np.int64)
    C = [window_histogram(X, t, 3) for t in range(3, 13)]
    for printed in (False, True):
        exceed = 0
        for noise in InsecureSeededNoise.independent(777, runs):
            synth = FixedWindowSynthesizer(12, 3, 0.005, noise=noise, as_printed=printed, n_pad=2000)
            synth.run(X)
            lam = theorem_3_2_lambda(synth.sigma2, 12, 3, 0.05)
            exceed += max(float(np.abs(p - c - 2000).max()) for p, c in zip(synth.p_history, C, strict=True)) > lam
        print(f"{'printed' if printed else 'default'} variance: Theorem 3.2 (beta = 0.05) exceedances "
              f"{_interval(int(exceed), runs)}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dpstream.audit.longitudinal.report", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("what", choices=("fixed-window-privacy", "cumulative-privacy", "rounding",
                                         "small-noise-accuracy", "cumulative-accuracy", "theorem-3-2-from-csv",
                                         "theorem-3-2-study"))
    parser.add_argument("path", nargs="?", help="errors.csv of a bun-simulated run (theorem-3-2-from-csv)")
    parser.add_argument("--runs", type=int, default=None,
                        help="runs of cumulative-accuracy (default 100) or theorem-3-2-study (default 1500)")
    args = parser.parse_args(argv)
    if args.what == "theorem-3-2-from-csv":
        if not args.path:
            parser.error("theorem-3-2-from-csv needs the path of errors.csv")
        theorem_3_2_from_csv(args.path)
    elif args.what == "cumulative-accuracy":
        cumulative_accuracy(args.runs or 100)
    elif args.what == "theorem-3-2-study":
        theorem_3_2_study(args.runs or 1500)
    else:
        {"fixed-window-privacy": fixed_window_privacy, "cumulative-privacy": cumulative_privacy,
         "rounding": rounding, "small-noise-accuracy": small_noise_accuracy}[args.what]()
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
