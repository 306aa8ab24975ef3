"""``dpstream reproduce bun-simulated``: 002 Appendix C.1 (Figures 3 and 4) — Algorithm 1 on extreme simulated data.

Setting of the paper: n = 25000 individuals, T = 12 months, every update equal to 1, window k = 3,
rho = 0.005, 1000 repetitions (``--reps`` to reduce). Each repetition runs the reference
:class:`~dpstream.longitudinal.fixed_window.FixedWindowSynthesizer` and evaluates, at every month
t and for window widths w = 1..``--max-width``, the largest error over the 2^w window patterns of

* the debiased fraction (synthetic count minus the padding population's count) / n (Figure 3), and
* the plain fraction on the synthetic data, synthetic count / n* (Figure 4, no debiasing),

against the true fraction (1 for the all-ones pattern, 0 otherwise). Outputs in ``--out``:

* ``errors.csv`` — one row per (repetition, width, t): both errors, also for the all-ones pattern;
* ``summary.csv`` — per (width, t): median and 2.5 / 97.5 percentiles, with the theoretical bounds
  (Theorem 3.2 / 002-debias: 2^{k-w} lambda / n; Corollary 3.3's proof without debiasing);
* ``figure3.png``, ``figure4.png`` — the panels of Figures 3 (w = k, w < k, w > k) and 4;
* ``summary.json`` — parameters, privacy claims, padding failures, run time.

Noise: insecure seeded noise by default (``--seed``), for a reproducible simulation — the run says
so; ``--secure`` uses the OpenDP-backed source. Calibration: ``--calibration printed`` (default) uses
the paper's variance (T-k+1)/(2 rho), as in the paper's figures; its guarantee is rho-zCDP for one
individual added or removed and 2 rho for one substituted (E-longitudinal-1). ``--calibration
substitution`` uses dpstream's default (rho-zCDP under substitution).

Speed: the run time is dominated by the record choices of 002-alg1 u16 (``NoiseSource.choice``
returns a sorted tuple of up to n* ints); the evaluation is vectorised.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from dpstream.claims import Neighbour
from dpstream.cli_args import int_in, non_negative_int, positive_float, positive_int, probability
from dpstream.errors import DPStreamInputError, require_int_at_least, require_positive_finite
from dpstream.experiments import Experiment, command_line, noise_mode
from dpstream.experiments.progress import progress
from dpstream.insecure import InsecureSeededNoise
from dpstream.longitudinal.bounds import corollary_3_3_bound, theorem_3_2_lambda
from dpstream.longitudinal.fixed_window import FixedWindowSynthesizer, PaddingExhaustedError
from dpstream.longitudinal.generators import all_ones
from dpstream.longitudinal.padding import padding_matrix
from dpstream.noise import NoiseSource, SecureNoise

__all__ = ["EXPERIMENT", "evaluate_run", "run_experiment"]

FloatArray = npt.NDArray[np.float64]


def _window_counts(M: npt.NDArray[np.int64], w: int) -> npt.NDArray[np.int64]:
    """counts[t-1, s] = #{rows whose width-w window ending at t equals s}, for t >= w (zeros before)."""
    m, T = M.shape
    out = np.zeros((T, 2**w), dtype=np.int64)
    codes = np.zeros(m, dtype=np.int64)
    for t in range(1, T + 1):
        codes = (codes * 2 + M[:, t - 1]) % (2**w)
        if t >= w:
            out[t - 1] = np.bincount(codes, minlength=2**w)
    return out


def evaluate_run(S: npt.ArrayLike, X: npt.ArrayLike, k: int, n_pad: int, widths: list[int]
                 ) -> dict[int, dict[str, FloatArray]]:
    """Per width w: arrays over t = w..T of the max-over-patterns errors (debiased / plain) and the all-ones errors."""
    Sm = np.asarray(S, dtype=np.int64)
    Xm = np.asarray(X, dtype=np.int64)
    n, T = Xm.shape
    m = Sm.shape[0]
    pad = padding_matrix(k, T, n_pad)
    out: dict[int, dict[str, FloatArray]] = {}
    for w in widths:
        syn = _window_counts(Sm, w)[w - 1:]
        true = _window_counts(Xm, w)[w - 1:] / n
        pad_counts = _window_counts(np.asarray(pad), w)[max(w, k) - 1]  # the same at every t >= max(w, k)
        debiased = (syn - pad_counts) / n
        plain = syn / m
        ones = 2**w - 1
        out[w] = {
            "debiased": np.abs(debiased - true).max(axis=1),
            "plain": np.abs(plain - true).max(axis=1),
            "debiased_all_ones": np.abs(debiased[:, ones] - true[:, ones]),
            "plain_all_ones": np.abs(plain[:, ones] - true[:, ones]),
        }
    return out


def _bounds(n: int, T: int, k: int, lam: float, n_pad: int, X: npt.NDArray[np.int64], w: int) -> tuple[float, float]:
    """(debiased, plain) bounds for the max error over width-w patterns, w <= k, on Theorem 3.2's event.

    A width-w pattern is the sum of 2^{k-w} width-k bins; the triangle inequality adds their bounds.
    The plain bound uses the proof of Corollary 3.3 per bin, C_s^t from the data (its worst t).
    """
    deb = 2 ** (k - w) * lam / n
    worst_plain = 0.0
    for t in range(k, T + 1):
        codes = np.zeros(X.shape[0], dtype=np.int64)
        for j in range(t - k, t):
            codes = codes * 2 + X[:, j]
        C = np.bincount(codes, minlength=2**k)
        for s in range(2**w):
            total = sum(corollary_3_3_bound(lam, n_pad, n, float(C[u * 2**w + s]), k) for u in range(2 ** (k - w)))
            worst_plain = max(worst_plain, total)
    return deb, worst_plain


def run_experiment(n: int, T: int, k: int, rho: float, reps: int, seed: int, *, secure: bool = False,
                   calibration: str = "printed", beta: float = 0.05, max_width: int = 6, out: Path | None = None,
                   show_progress: bool = False, command: str | None = None) -> dict[str, Any]:
    """Run the simulation; write the outputs when ``out`` is given; return the summary.

    ``show_progress``: a bar or log lines (:func:`~dpstream.experiments.progress.progress`); ``command``: the
    command line recorded in the summary.
    """
    n = require_int_at_least("n", n, 1)
    reps = require_int_at_least("reps", reps, 1)
    rho = require_positive_finite("rho", rho)
    if calibration not in ("printed", "substitution"):
        raise DPStreamInputError("calibration", "must be 'printed' or 'substitution'", calibration)
    as_printed = calibration == "printed"
    X = all_ones(n, T)
    widths = list(range(1, min(max_width, T) + 1))
    probe = FixedWindowSynthesizer(T, k, rho, noise=InsecureSeededNoise(0), beta=beta, as_printed=as_printed)
    lam = theorem_3_2_lambda(probe.sigma2, T, k, beta)
    sources: list[NoiseSource] = (
        [SecureNoise() for _ in range(reps)] if secure else list(InsecureSeededNoise.independent(seed, reps)))
    results: list[dict[int, dict[str, FloatArray]]] = []
    failures: list[str] = []
    start = time.perf_counter()
    bar = progress(reps, "bun-simulated", f"{reps} repetitions of 002-alg1 on n={n}, T={T}, k={k}, noise: "
                   f"{noise_mode(secure, seed)}", unit="rep") if show_progress else None
    for r in range(reps):
        synth = FixedWindowSynthesizer(T, k, rho, noise=sources[r], beta=beta, as_printed=as_printed)
        try:
            synth.run(X)
        except PaddingExhaustedError as exc:
            failures.append(f"rep {r}: {exc}")
            continue
        finally:
            if bar is not None:
                bar.update(1)
        results.append(evaluate_run(synth.synthetic, X, k, probe.n_pad, widths))
    if bar is not None:
        bar.close()
    seconds = time.perf_counter() - start
    summary_rows: list[dict[str, Any]] = []
    for w in widths:
        deb_bound, plain_bound = _bounds(n, T, k, lam, probe.n_pad, X, w) if w <= k else (math.nan, math.nan)
        for i, t in enumerate(range(w, T + 1)):
            row: dict[str, Any] = {"width": w, "t": t, "bound_debiased": deb_bound, "bound_plain": plain_bound}
            for key in ("debiased", "plain", "debiased_all_ones", "plain_all_ones"):
                values = np.array([res[w][key][i] for res in results]) if results else np.array([math.nan])
                row[f"{key}_median"] = float(np.median(values))
                row[f"{key}_p2.5"] = float(np.percentile(values, 2.5))
                row[f"{key}_p97.5"] = float(np.percentile(values, 97.5))
                row[f"{key}_max"] = float(np.max(values))
            summary_rows.append(row)
    claims = probe.claims
    summary: dict[str, Any] = {
        "noise": noise_mode(secure, seed), "command": command,
        "parameters": {"n": n, "T": T, "k": k, "rho": rho, "reps": reps, "seed": None if secure else seed,
                       "secure": secure,
                       "calibration": calibration, "beta": beta, "sigma2": probe.sigma2, "n_pad": probe.n_pad,
                       "lambda": lam},
        "claims": {rel.value: claims[rel].describe() for rel in (Neighbour.INDIVIDUAL_ADD_REMOVE,
                                                                 Neighbour.INDIVIDUAL_SUBSTITUTE)},
        "padding_failures": len(failures), "failure_details": failures[:20], "completed_runs": len(results),
        "seconds": seconds, "rows": summary_rows,
    }
    if out is not None:
        _write(out, summary, results, widths, T, k)
    return summary


def _write(out: Path, summary: dict[str, Any], results: list[dict[int, dict[str, FloatArray]]],
           widths: list[int], T: int, k: int) -> None:
    out.mkdir(parents=True, exist_ok=True)
    with (out / "errors.csv").open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(["rep", "width", "t", "debiased", "plain", "debiased_all_ones", "plain_all_ones"])
        for r, res in enumerate(results):
            for w in widths:
                for i, t in enumerate(range(w, T + 1)):
                    writer.writerow([r, w, t, *(f"{res[w][key][i]:.8g}" for key in
                                                ("debiased", "plain", "debiased_all_ones", "plain_all_ones"))])
    rows = summary["rows"]
    with (out / "summary.csv").open("w", newline="", encoding="utf-8") as fh:
        dict_writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        dict_writer.writeheader()
        dict_writer.writerows(rows)
    (out / "summary.json").write_text(json.dumps({key: v for key, v in summary.items()}, indent=1,
                                                 default=float) + "\n", encoding="utf-8")
    _plot(out, rows, widths, k)


def _plot(out: Path, rows: list[dict[str, Any]], widths: list[int], k: int) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    for figure, key, bound_key, title in (
        ("figure3.png", "debiased", "bound_debiased", "debiased (Figure 3)"),
        ("figure4.png", "plain", "bound_plain", "no debiasing (Figure 4)"),
    ):
        groups = [("w = k", [k]), ("w < k", [w for w in widths if w < k]), ("w > k", [w for w in widths if w > k])]
        groups = [(name, ws) for name, ws in groups if ws]
        fig, axes = plt.subplots(len(groups), 1, figsize=(7, 3.2 * len(groups)), squeeze=False)
        for ax, (name, ws) in zip(axes[:, 0], groups, strict=True):
            for w in ws:
                sel = [r for r in rows if r["width"] == w]
                t = [r["t"] for r in sel]
                line = ax.plot(t, [r[f"{key}_median"] for r in sel], label=f"w = {w} median")[0]
                color = line.get_color()
                ax.plot(t, [r[f"{key}_p2.5"] for r in sel], ":", color=color)
                ax.plot(t, [r[f"{key}_p97.5"] for r in sel], ":", color=color)
                bound = sel[0][bound_key]
                if isinstance(bound, float) and math.isfinite(bound):
                    ax.axhline(bound, linestyle="--", color=color, linewidth=0.8, label=f"w = {w} bound")
            ax.set_title(f"{name}: max error over width-w patterns, {title}")
            ax.set_xlabel("t (month)")
            ax.set_ylabel("error (fraction)")
            ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(out / figure, dpi=120)
        plt.close(fig)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--reps", type=int_in(1, 10**9), default=1000,
                        help="repetitions (default: %(default)s, as the paper)")
    parser.add_argument("--seed", type=non_negative_int, default=0,
                        help="seed of the insecure seeded noise (default: 0)")
    parser.add_argument("--secure", action="store_true", help="use the OpenDP-backed secure source (slow)")
    parser.add_argument("--n", type=int_in(1, MAX_CELLS), default=25000, help="individuals (default: %(default)s)")
    parser.add_argument("--T", type=int_in(1, MAX_CELLS), default=12, help="months (default: %(default)s)")
    parser.add_argument("--k", type=positive_int, default=3, help="window length, k <= T (default: %(default)s)")
    parser.add_argument("--rho", type=positive_float, default=0.005, help="zCDP budget (default: %(default)s)")
    parser.add_argument("--beta", type=probability, default=0.05,
                        help="failure probability of the bound and n_pad, in (0, 1) (default: %(default)s)")
    parser.add_argument("--max-width", type=positive_int, default=6, help="largest query window width evaluated")
    parser.add_argument("--calibration", choices=("printed", "substitution"), default="printed",
                        help="noise variance: the paper's (default) or dpstream's substitution-safe default")


MAX_CELLS = 2**27
"""Largest n x T: the n individuals' T reports (and the synthetic records) are held in memory."""


def check(args: argparse.Namespace) -> None:
    """Before any work: the window fits the horizon (002-sec2.1: k in {1, ..., T}); the data fit in memory."""
    if args.k > args.T:
        raise DPStreamInputError("--k", f"must be <= --T = {args.T} (the window must fit the horizon)", args.k)
    if args.n * args.T > MAX_CELLS:
        raise DPStreamInputError("--n", f"x --T must be <= {MAX_CELLS} (the reports are held in memory)", args.n)


def run(args: argparse.Namespace) -> int:
    if not args.secure:
        print("NOTE: insecure seeded noise (--seed) for a reproducible simulation; never release its output.",
              file=sys.stderr)
    summary = run_experiment(args.n, args.T, args.k, args.rho, args.reps, args.seed, secure=args.secure,
                             calibration=args.calibration, beta=args.beta, max_width=args.max_width, out=args.out,
                             show_progress=True, command=command_line(args))
    p = summary["parameters"]
    print(f"bun-simulated: n={p['n']} T={p['T']} k={p['k']} rho={p['rho']} ({p['calibration']} variance "
          f"sigma^2={p['sigma2']:g}), n_pad={p['n_pad']}, lambda={p['lambda']:.4g}, {summary['completed_runs']}/"
          f"{p['reps']} runs completed ({summary['padding_failures']} padding failures), {summary['seconds']:.0f}s")
    print(f"  noise: {summary['noise']}; command: {summary['command']}")
    for relation, text in summary["claims"].items():
        print(f"  claim ({relation}): {text}")
    print("  width  t  | debiased: median [2.5%, 97.5%]  bound | plain: median [2.5%, 97.5%]  bound")
    for row in summary["rows"]:
        print(f"  {row['width']:>5} {row['t']:>2}  | {row['debiased_median']:.5f} [{row['debiased_p2.5']:.5f}, "
              f"{row['debiased_p97.5']:.5f}]  {row['bound_debiased']:.5f} | {row['plain_median']:.5f} "
              f"[{row['plain_p2.5']:.5f}, {row['plain_p97.5']:.5f}]  {row['bound_plain']:.5f}")
    return 0


EXPERIMENT = Experiment(
    name="bun-simulated",
    help="002 Appendix C.1 / Figures 3-4: Algorithm 1 on all-ones data (n=25000, T=12, k=3, rho=0.005)",
    add_arguments=add_arguments,
    run=run,
    anchors=("002-alg1", "002-alg3"),
    check=check,
)
