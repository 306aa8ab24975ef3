"""Calibration: the noise an implementation adds follows the law its model states.

For a linear release model the noise of every run is recovered exactly from the releases
(:func:`~dpstream.audit.scores.recover_noise`, W injective) and tested:

* marginal law of every term: Kolmogorov-Smirnov against Lap(b) for Laplace terms (exact
  p-value), chi-square against the exact pmf for integer laws (cells with expected count
  >= 5, tails pooled); recovered values that are not integers fail an integer law outright;
* pooled: all Laplace terms standardised to Lap(1) in one KS test, all integer terms with the
  same law in one chi-square test (power against a scale error shared by many terms);
* independence of the terms: Spearman rank correlation for every pair of terms, p-value from
  the normal approximation r_s sqrt(n - 1) ~ N(0, 1) (rank correlations have lighter tails
  than the normal, so the approximation errs on the conservative side). This is what catches
  one noise draw reused for two nodes, which leaves every marginal law intact.

All m + (pooled) + m(m-1)/2 tests share the check's level by Bonferroni, so the false-alarm probability
of the check is at most ``level``. A wrong scale is caught whichever side it errs on.

:func:`calibration_finite` does the same for an output with a finite law (chi-square of the
observed outcome counts against the law), e.g. the exponential mechanism's selection.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from dpstream.audit.linear_model import LinearReleaseModel, NoiseLaw
from dpstream.audit.protocol import Encoder, Transcript, flatten
from dpstream.audit.registry import CheckKind, CheckResult
from dpstream.audit.scores import recover_noise
from dpstream.errors import DPStreamInputError
from dpstream.lazy import LazyModule
from dpstream.noise import DrawKind

_st = LazyModule("scipy.stats")

__all__ = ["calibration_finite", "calibration_linear", "chi_square_pvalue", "marginal_pvalue"]

FloatArray = npt.NDArray[np.float64]


def chi_square_pvalue(observed: Sequence[int], expected_prob: Sequence[float]) -> tuple[float, float, int]:
    """Chi-square goodness of fit after pooling cells with expected count < 5 into neighbours.

    Returns (p-value, statistic, degrees of freedom). Cells are pooled left to right until each
    pooled cell expects >= 5 runs; a remainder is merged into the last cell.
    """
    obs = np.asarray(observed, dtype=np.float64)
    prob = np.asarray(expected_prob, dtype=np.float64)
    n = obs.sum()
    if obs.shape != prob.shape or n <= 0:
        raise DPStreamInputError("observed", "must match expected_prob and be non-empty", obs.shape)
    exp = prob / prob.sum() * n
    pooled_o: list[float] = []
    pooled_e: list[float] = []
    acc_o = acc_e = 0.0
    for o, e in zip(obs, exp, strict=True):
        acc_o += o
        acc_e += e
        if acc_e >= 5.0:
            pooled_o.append(acc_o)
            pooled_e.append(acc_e)
            acc_o = acc_e = 0.0
    if acc_e > 0.0 or acc_o > 0.0:
        if pooled_e:
            pooled_o[-1] += acc_o
            pooled_e[-1] += acc_e
        else:
            pooled_o.append(acc_o)
            pooled_e.append(acc_e)
    o_arr, e_arr = np.asarray(pooled_o), np.asarray(pooled_e)
    dof = o_arr.size - 1
    if dof < 1:
        return 1.0, 0.0, 0
    with np.errstate(divide="ignore", invalid="ignore"):
        stat = float(np.sum(np.where(e_arr > 0, (o_arr - e_arr) ** 2 / e_arr, np.where(o_arr > 0, np.inf, 0.0))))
    return float(_st.chi2.sf(stat, dof)), stat, dof


def marginal_pvalue(law: NoiseLaw, z: npt.ArrayLike) -> tuple[float, str]:
    """p-value of the recovered noise values ``z`` under ``law`` (KS or chi-square), and the test's name."""
    x = np.asarray(z, dtype=np.float64)
    if law.kind is DrawKind.LAPLACE:
        res = _st.kstest(x, "laplace", args=(0.0, law.parameter))
        return float(res.pvalue), f"KS D={float(res.statistic):.4f}"
    rounded = np.round(x)
    if np.any(np.abs(x - rounded) > 1e-6):
        return 0.0, "non-integer noise for an integer law"
    radius = math.ceil(40.0 * math.sqrt(law.variance())) + 2
    support = np.arange(-radius, radius + 1)
    prob = np.exp(law.log_pdf(support.astype(np.float64)))
    idx = np.clip(rounded.astype(np.int64) + radius, 0, 2 * radius)
    counts = np.bincount(idx, minlength=support.size)
    p, stat, dof = chi_square_pvalue(counts.tolist(), prob.tolist())
    return p, f"chi2={stat:.1f} (dof {dof})"


def _pooled_tests(laws: Sequence[NoiseLaw], Z: FloatArray) -> list[tuple[float, str]]:
    """One test per group of terms with the same law kind: all their values pooled.

    Laplace terms are standardised (z / b ~ Lap(1)) and pooled into one KS test; integer terms
    with identical laws are pooled into one chi-square test. Under the model the pooled values
    are i.i.d., so a scale error shared by many terms (a wrong sensitivity) is caught with the
    power of n * m values rather than n.
    """
    out: list[tuple[float, str]] = []
    lap = [j for j, law in enumerate(laws) if law.kind is DrawKind.LAPLACE]
    if len(lap) > 1:
        scaled = np.concatenate([Z[:, j] / laws[j].parameter for j in lap])
        p, text = marginal_pvalue(NoiseLaw.laplace(1.0), scaled)
        out.append((p, f"pooled {len(lap)} Laplace terms standardised to Lap(1) [{text}]"))
    groups: dict[NoiseLaw, list[int]] = {}
    for j, law in enumerate(laws):
        if law.is_integer:
            groups.setdefault(law, []).append(j)
    for law, idx in groups.items():
        if len(idx) > 1:
            p, text = marginal_pvalue(law, np.concatenate([Z[:, j] for j in idx]))
            out.append((p, f"pooled {len(idx)} terms {law.describe()} [{text}]"))
    return out


def calibration_linear(
    model: LinearReleaseModel,
    transcripts: Sequence[Transcript],
    f: npt.ArrayLike,
    level: float,
    *,
    encode: Encoder = flatten,
    independence: bool = True,
) -> CheckResult:
    """Recover the noise of every run on input vector ``f`` and test marginals (+ pairwise independence)."""
    R = np.array([encode(t) for t in transcripts], dtype=np.float64)
    Z = recover_noise(model, R, f)
    n, m = Z.shape
    marg = [marginal_pvalue(law, Z[:, j]) for j, law in enumerate(model.laws)]
    pvals = [p for p, _ in marg]
    names = [f"{model.sites[j]} [{model.laws[j].describe()}; {marg[j][1]}]" for j in range(m)]
    tests = m
    pair_min = (1.0, "")
    if independence and m > 1:
        # Integer laws: round first, or the least-squares rounding noise (correlated between terms that
        # share releases) would break the many ties in a correlated order and fake a rank correlation.
        exact = np.column_stack([np.round(Z[:, j]) if law.is_integer else Z[:, j] for j, law in enumerate(model.laws)])
        ranks = _st.rankdata(exact, axis=0)
        sd = ranks.std(axis=0)
        live = np.flatnonzero(sd > 0)
        if live.size > 1:
            C = np.corrcoef(ranks[:, live], rowvar=False)
            iu = np.triu_indices(live.size, k=1)
            r = C[iu]
            p_pairs = 2.0 * _st.norm.sf(np.abs(r) * math.sqrt(n - 1))
            k = int(np.argmin(p_pairs))
            a, b = int(live[iu[0][k]]), int(live[iu[1][k]])
            pair_min = (float(p_pairs[k]), f"{model.sites[a]} ~ {model.sites[b]} (Spearman r={float(r[k]):.3f})")
        tests += m * (m - 1) // 2
    pooled = _pooled_tests(model.laws, Z)
    tests += len(pooled)
    for p_pool, name in pooled:
        pvals.append(p_pool)
        names.append(name)
    j = int(np.argmin(pvals))
    worst_p, worst_name = (pvals[j], names[j]) if pvals[j] <= pair_min[0] else pair_min
    adjusted = min(1.0, worst_p * tests)
    passed = adjusted > level
    detail = (f"{n} runs, {m} noise terms, {tests} tests (Bonferroni); smallest p = {worst_p:.3g} at {worst_name}; "
              f"adjusted p = {adjusted:.3g} vs level {level:.2g}")
    data = {"p_values": [float(p) for p in pvals[:m]], "sites": list(model.sites), "pair_min_p": pair_min[0],
            "pooled": [{"test": name, "p": float(p)} for p, name in pooled],
            "tests": tests, "runs": n}
    return CheckResult(CheckKind.CALIBRATION, passed, adjusted, level, detail, data)


def calibration_finite(
    outcomes: Sequence[Hashable], law: Mapping[Any, float], level: float, label: str = ""
) -> CheckResult:
    """Chi-square of the observed outcomes against an explicit finite law; unknown outcomes fail."""
    keys = list(law)
    counts = {k: 0 for k in keys}
    unknown = 0
    for o in outcomes:
        if o in counts:
            counts[o] += 1
        else:
            unknown += 1
    if unknown:
        detail = f"{label + ': ' if label else ''}{unknown} outcome(s) outside the law's support"
        return CheckResult(CheckKind.CALIBRATION, False, 0.0, level, detail, {})
    order = sorted(keys, key=lambda k: law[k])  # pool the rarest outcomes first
    p, stat, dof = chi_square_pvalue([counts[k] for k in order], [law[k] for k in order])
    detail = (f"{label + ': ' if label else ''}{len(outcomes)} runs, chi2={stat:.1f} (dof {dof}), "
              f"p = {p:.3g} vs level {level:.2g}")
    return CheckResult(CheckKind.CALIBRATION, p > level, p, level, detail,
                       {"observed": [counts[k] for k in keys], "expected": [law[k] for k in keys]})
