"""Audits of seed 002: the fixed time window synthesizer (002-alg1) and the cumulative one (002-alg2).

Cases (concrete parameters below; inputs from ``random_matrix(n, T, seed=20240)``):

* ``fixed-window synthesizer`` (default, claim rho under substitution): exact loss of the noisy
  histograms (engine, linear model) and of the released synthetic data (chain-rule bracket over
  all pairs, :func:`dpstream.audit.longitudinal.checks.fixed_window_exact_output`); black-box with the
  exact transcript log-likelihood ratio on the worst pair; calibration of the first histogram's
  noise and of the later residuals V - mu; accuracy of Theorem 3.2's joint event.
* ``fixed-window synthesizer as printed, Theorem 3.1 under substitution`` (expect_failure):
  the printed variance against the paper's claim in the paper's model (E-longitudinal-1).
* ``fixed-window synthesizer as printed, add/remove`` : the same variance against the claim it
  does meet (rho, one individual added or removed).
* ``cumulative synthesizer`` (default): the T tree counters as one linear model (exact loss,
  model-LLR black-box, calibration), accuracy of Corollary B.1 as printed and of the corrected
  union bound, for the monotonized counts.
* ``cumulative synthesizer as printed, Theorem 4.1 under substitution`` (expect_failure, E-longitudinal-7).

False alarms: the family share 1.5e-4 is split 6e-5 / 6e-5 for the two sampled cases (three and
four statistical checks, Bonferroni) and 1e-5 for each exact-only case (which uses none).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from dpstream.audit.blackbox import black_box
from dpstream.audit.calibration import calibration_linear
from dpstream.audit.cases import Effort
from dpstream.audit.exact import exact_loss_linear
from dpstream.audit.longitudinal.checks import (
    FixedWindowLLR,
    cumulative_accuracy,
    fixed_window_calibration,
    fixed_window_exact_output,
    theorem_3_2_accuracy,
)
from dpstream.audit.longitudinal.loss import (
    cumulative_model,
    cumulative_worst_pair,
    fixed_window_histogram_model,
    histogram_vector,
    worst_pair_bracket,
    z_vector,
)
from dpstream.audit.neighbours import NeighbourPair, individual_add_remove_pairs, individual_substitute_pairs
from dpstream.audit.protocol import derive_seed, flatten, sample_transcripts
from dpstream.audit.registry import FAMILY_BUDGETS, AuditCase, AuditContext, CheckResult
from dpstream.audit.scores import ModelLLR
from dpstream.claims import Neighbour, PrivacyClaim
from dpstream.counters.tree_aggregation import tree_aggregation_sigma2
from dpstream.longitudinal.bounds import (
    corollary_b1_alpha,
    cumulative_union_bound,
    fixed_window_sigma2,
    n_pad_corollary_3_3,
    theorem_3_2_lambda,
)
from dpstream.longitudinal.cumulative import CumulativeSynthesizer
from dpstream.longitudinal.fixed_window import FixedWindowSynthesizer
from dpstream.longitudinal.generators import random_matrix
from dpstream.noise import NoiseSource

FAMILY = "longitudinal"
BUDGET = FAMILY_BUDGETS[FAMILY]
SAMPLED_SHARE = 0.4 * BUDGET
EXACT_SHARE = (BUDGET - 2 * SAMPLED_SHARE) / 3
DATA_SEED = 20240

# 002-alg1 audit setting: small enough for thousands of runs, two windows overlapping per step
T1, K1, RHO1, N1, BETA1 = 5, 2, 1.0, 8, 0.05
# 002-alg2 audit setting
T2, RHO2, N2 = 5, 1.0, 12
BETA_B1, BETA_UNION = 0.01, 0.05
EFFORT1 = Effort(quick=300, full=3000)
EFFORT2 = Effort(quick=200, full=2000)


def _matrix(pair_side: Sequence[Any]) -> np.ndarray:
    """Columns (as fed to step) -> the n x T matrix."""
    return np.asarray(pair_side, dtype=np.int64).T.reshape(-1, len(pair_side))


def _substitution_pairs(base: np.ndarray, rows: Sequence[tuple[Sequence[int], Sequence[int]]]) -> list[NeighbourPair]:
    """Row 0 of ``base`` set to x on one side and x' on the other, for each (x, x')."""
    out = []
    for x, y in rows:
        records = [tuple(int(v) for v in r) for r in base]
        records[0] = tuple(int(v) for v in x)
        out.extend(individual_substitute_pairs(records, [(0, tuple(int(v) for v in y))]))
    return out


# --- 002-alg1 -------------------------------------------------------------------------------------


def _fixed_window_pairs(sigma2: float, T: int, k: int) -> list[NeighbourPair]:
    base = random_matrix(N1, T, seed=DATA_SEED)
    _, x, y = worst_pair_bracket(T, k, sigma2, 2.0)
    assert y is not None
    rows = [(x, y), ([0] * T, [1] * T), ([0, 1] * T, [1, 0] * T)]
    return _substitution_pairs(base, [(list(a)[:T], list(b)[:T]) for a, b in rows])


def _histogram_input(T: int, k: int) -> Any:
    return lambda cols: histogram_vector(_matrix(cols), T, k)


def _run_fixed_window(ctx: AuditContext) -> list[CheckResult]:
    sigma2 = fixed_window_sigma2(T1, K1, RHO1)
    n_pad = n_pad_corollary_3_3(sigma2, T1, K1, BETA1)
    probe = FixedWindowSynthesizer(T1, K1, RHO1, n_pad=n_pad, noise=_no_noise())
    claim = probe.claim
    pairs = _fixed_window_pairs(sigma2, T1, K1)
    checks = [exact_loss_linear(fixed_window_histogram_model(T1, K1, sigma2), pairs, claim,
                                input_vector=_histogram_input(T1, K1)),
              fixed_window_exact_output(T1, K1, sigma2, claim)]
    pair = pairs[0]
    level = ctx.false_alarm / 3
    runs = EFFORT1.runs(ctx.profile)

    def factory(noise: NoiseSource) -> FixedWindowSynthesizer:
        return FixedWindowSynthesizer(T1, K1, RHO1, noise=noise, n_pad=n_pad)

    ctx.progress(f"sampling {2 * runs} runs on f and on f'")
    on_f = sample_transcripts(factory, pair.f, 2 * runs, derive_seed(ctx.seed, "f"))
    on_fp = sample_transcripts(factory, pair.f_prime, 2 * runs, derive_seed(ctx.seed, "f'"))
    Xf, Xg = _matrix(pair.f), _matrix(pair.f_prime)
    checks.append(black_box(on_f, on_fp, claim, level, score=FixedWindowLLR(Xf, Xg, T1, K1, n_pad, sigma2),
                            label=f"{pair.label}, exact transcript LLR"))
    checks.append(fixed_window_calibration(on_f, Xf, T1, K1, n_pad, sigma2, level))
    lam = theorem_3_2_lambda(sigma2, T1, K1, BETA1)
    checks.append(theorem_3_2_accuracy(on_f, Xf, T1, K1, n_pad, lam, BETA1, level))
    return checks


def _no_noise() -> NoiseSource:
    from dpstream.insecure import InsecureZeroNoise

    return InsecureZeroNoise()


def _run_fixed_window_printed(relation: Neighbour) -> Any:
    def run(ctx: AuditContext) -> list[CheckResult]:
        sigma2 = fixed_window_sigma2(T1, K1, RHO1, as_printed=True)
        claim = PrivacyClaim.zcdp(RHO1, relation, "002-thm3.1", note="as printed")
        if relation is Neighbour.INDIVIDUAL_SUBSTITUTE:
            pairs = _fixed_window_pairs(sigma2, T1, K1)
        else:
            base = [tuple(int(v) for v in r) for r in random_matrix(N1, T1, seed=DATA_SEED)]
            pairs = individual_add_remove_pairs(base, [0], extra=[(1,) * T1, (0, 1) * 2 + (0,)])
        return [exact_loss_linear(fixed_window_histogram_model(T1, K1, sigma2), pairs, claim,
                                  input_vector=_histogram_input(T1, K1)),
                fixed_window_exact_output(T1, K1, sigma2, claim)]

    return run


# --- 002-alg2 -------------------------------------------------------------------------------------


def _z_input(T: int) -> Any:
    return lambda cols: z_vector(_matrix(cols), T)


def _s_tilde(transcript: Sequence[Any]) -> np.ndarray:
    return flatten([r.S_tilde for r in transcript])


def _cumulative_pairs(counter_rho: Sequence[float]) -> list[NeighbourPair]:
    base = random_matrix(N2, T2, seed=DATA_SEED)
    _, x, y = cumulative_worst_pair(T2, counter_rho, 2.0)
    return _substitution_pairs(base, [(x, y), ([1] * T2, [0] * T2), ([1] * T2, [0] + [1] * (T2 - 1))])


def _run_cumulative(ctx: AuditContext) -> list[CheckResult]:
    probe = CumulativeSynthesizer(T2, RHO2, noise=_no_noise())
    claim, counter_rho = probe.claim, probe.counter_rho
    model = cumulative_model(T2, counter_rho)
    pairs = _cumulative_pairs(counter_rho)
    checks = [exact_loss_linear(model, pairs, claim, input_vector=_z_input(T2))]
    pair = pairs[0]
    level = ctx.false_alarm / 4
    runs = EFFORT2.runs(ctx.profile)

    def factory(noise: NoiseSource) -> CumulativeSynthesizer:
        return CumulativeSynthesizer(T2, RHO2, noise=noise)

    ctx.progress(f"sampling {2 * runs} runs on f and on f'")
    on_f = sample_transcripts(factory, pair.f, 2 * runs, derive_seed(ctx.seed, "f"))
    on_fp = sample_transcripts(factory, pair.f_prime, 2 * runs, derive_seed(ctx.seed, "f'"))
    zf, zg = z_vector(_matrix(pair.f), T2), z_vector(_matrix(pair.f_prime), T2)
    checks.append(black_box(on_f, on_fp, claim, level, score=ModelLLR(model, zf, zg, _s_tilde),
                            label=f"{pair.label}, model LLR"))
    checks.append(calibration_linear(model, on_f, zf, level, encode=_s_tilde))
    Xf = _matrix(pair.f)
    alpha, beta_star = corollary_b1_alpha(T2, sum(counter_rho), BETA_B1, N2)
    checks.append(cumulative_accuracy(on_f, Xf, alpha * N2, beta_star, level,
                                      f"002-corB.1 as printed (rho = sum of counter budgets = {sum(counter_rho):g})"))
    sigma2 = [tree_aggregation_sigma2(r, T2 - b + 1) for b, r in enumerate(counter_rho, start=1)]
    checks.append(cumulative_accuracy(on_f, Xf, cumulative_union_bound(sigma2, BETA_UNION), BETA_UNION, level,
                                      "corrected union bound (two-sided, all (b, t), actual node variances)"))
    return checks


def _run_cumulative_printed(ctx: AuditContext) -> list[CheckResult]:
    probe = CumulativeSynthesizer(T2, RHO2, noise=_no_noise(), as_printed=True)
    claim = probe.paper_claim
    model = cumulative_model(T2, probe.counter_rho)
    return [exact_loss_linear(model, _cumulative_pairs(probe.counter_rho), claim, input_vector=_z_input(T2))]


def cases() -> list[AuditCase]:
    sub = Neighbour.INDIVIDUAL_SUBSTITUTE
    default1 = FixedWindowSynthesizer(T1, K1, RHO1, noise=_no_noise())
    default2 = CumulativeSynthesizer(T2, RHO2, noise=_no_noise())
    printed1 = FixedWindowSynthesizer(T1, K1, RHO1, noise=_no_noise(), as_printed=True)
    printed2 = CumulativeSynthesizer(T2, RHO2, noise=_no_noise(), as_printed=True)
    return [
        AuditCase("fixed-window synthesizer", "002-alg1", default1.claim, _run_fixed_window, SAMPLED_SHARE,
                  errata=("E-longitudinal-1", "E-longitudinal-4")),
        AuditCase("fixed-window synthesizer as printed, Theorem 3.1 under substitution", "002-alg1",
                  printed1.paper_claim, _run_fixed_window_printed(sub),
                  EXACT_SHARE, errata=("E-longitudinal-1",), expect_failure=True),
        AuditCase("fixed-window synthesizer as printed, add/remove", "002-alg1",
                  PrivacyClaim.zcdp(RHO1, Neighbour.INDIVIDUAL_ADD_REMOVE, "002-thm3.1", note="as printed"),
                  _run_fixed_window_printed(Neighbour.INDIVIDUAL_ADD_REMOVE), EXACT_SHARE,
                  errata=("E-longitudinal-1",)),
        AuditCase("cumulative synthesizer", "002-alg2", default2.claim, _run_cumulative, SAMPLED_SHARE,
                  errata=("E-longitudinal-7", "E-longitudinal-10")),
        AuditCase("cumulative synthesizer as printed, Theorem 4.1 under substitution", "002-alg2",
                  printed2.paper_claim, _run_cumulative_printed,
                  EXACT_SHARE, errata=("E-longitudinal-7",), expect_failure=True),
    ]
