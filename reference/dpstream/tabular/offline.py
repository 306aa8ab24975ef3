"""Offline synthetic data: select-measure-fit-iterate (003-alg1, 000-alg1) and the naive approach (003-sec4).

:func:`select_measure_fit` is 003-alg1 line by line; with ``MultiplicativeWeights`` as
A_Dataset and the exponential mechanism as A_Select it is MWEM (003-mw).

Budget (E-tabular-4): 003-alg1 L7-L8 print the selection as A_Select(e_i, 2/ε) and the
measurement as Lap(2Δ/ε) in *each* of the k iterations, i.e. ε/2 + ε/2 per iteration
and kε in total. The default divides by k (selection ε/(2k) per Definition 3.8,
measurement Lap(2kΔ/ε)), which makes the whole run ε-DP by sequential composition
(proofs/proof_tabular_main_privacy.py); ``as_printed=True`` restores the printed scales.

000-alg1 differs only in L10, "h_i ← R_Dataset(M)" (no initialisation argument): pass
``from_scratch=True`` to fit every iteration from h_0 (pair it with
``MultiplicativeWeights(updates="all")``, which then reproduces the 003 chain exactly).

:func:`naive_offline` is the "measure everything" approach of 003-sec4 eq (10):
Lap(Δ/(ε/|Q|)) per query. 000-sec3.3 prints Lap(Δ/(ε|Q|)), a scale that *shrinks* with
|Q| and costs ε|Q|^2 instead of ε (E-tabular-5); ``as_printed_000=True`` uses it. The
arg-min of eq (10) is delegated to the given A_Dataset (starting from the uniform dataset).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from dpstream.claims import Neighbour, PrivacyClaim
from dpstream.convention import convention
from dpstream.errors import require_int_at_least, require_positive_finite
from dpstream.noise import NoiseSource, default_noise, site
from dpstream.tabular.datasets import SyntheticDataset, UniformDataset, answer
from dpstream.tabular.fitting import DatasetFitter, Measurement
from dpstream.tabular.queries import Query
from dpstream.tabular.selection import SelectionLaw, Selector, query_scores, require_round_budget, score_sensitivity
from dpstream.tabular.streaming_mwem import checked_queries
from dpstream.tabular.totals import TotalKind, TotalRule

__all__ = ["OfflineResult", "measure_all", "naive_offline", "offline_claim", "select_measure_fit"]


@dataclass(frozen=True, eq=False)
class OfflineResult:
    """g = h_k (003-alg1 L2), the iterates h_1..h_k, the selected indices l_i and M."""

    g: SyntheticDataset
    iterates: tuple[SyntheticDataset, ...]
    selected: tuple[int, ...]
    measurements: tuple[Measurement, ...]


def _total(rule: TotalRule, f: SyntheticDataset, measurements: Sequence[Measurement], fallback: float) -> float:
    if rule.kind is TotalKind.PUBLIC:
        return rule.public_size(1)
    if rule.kind is TotalKind.MEASURED:
        return TotalRule.estimate(measurements, fallback)
    return f.total  # TRUE_SIZE: reads the private size (as printed: "|f| times the distribution")


def offline_claim(epsilon: float, k: int, as_printed: bool, total: TotalRule) -> PrivacyClaim:
    """What 003-alg1 achieves: ε (default), kε as printed; nothing if the true size is released."""
    if not total.private:
        return PrivacyClaim.not_private(Neighbour.EVENT, "003-alg1",
                                        "the fitted dataset has mass exactly |f| (TotalRule.true_size)")
    spent = k * epsilon if as_printed else epsilon
    note = "as printed: eps/2 + eps/2 per iteration (E-tabular-4)" if as_printed else "eps/(2k) select + measure"
    return PrivacyClaim.pure(spent, Neighbour.EVENT, "003-alg1", note)


@convention(("f", "queries", "epsilon", "k", "fitter", "total"),
            ("f", "queries", "epsilon", "k", "fitter", "total", "noise"))
def select_measure_fit(
    f: SyntheticDataset,
    queries: Sequence[Query],
    epsilon: float,
    k: int,
    fitter: DatasetFitter,
    *,
    total: TotalRule,
    noise: NoiseSource | None = None,
    as_printed: bool = False,
    from_scratch: bool = False,
) -> OfflineResult:
    """003-alg1 (MWEM when ``fitter`` is MW). ``f`` is the private dataset."""
    # [003-alg1 L1] [000-alg1 L1] Input: dataset f, ordered queries Q, budget eps, A_Select, A_Dataset, k
    Q = checked_queries(queries, distinct=False)
    epsilon = require_positive_finite("epsilon", epsilon)
    k = require_int_at_least("k", k, 1)
    require_round_budget(epsilon, k)
    total.check_queries(Q)
    noise = default_noise() if noise is None else noise
    # [003-alg1 L2] [000-alg1 L2] Output: a dataset g in N_0^X (g = h_k, the box never assigns g)
    delta_u = score_sensitivity(Q)
    if as_printed:
        # [003-alg1 L7] A_Select(e_i, 2/eps): read as the exponential mechanism with budget eps/2
        select = Selector(epsilon * 1.0, 1, delta_u, SelectionLaw.DEF_3_8)  # per-selection eps/(2*1)
        lap_scale = 2.0 / epsilon                                              # [003-alg1 L8] Lap(2 Delta/eps)
    else:
        select = Selector(epsilon, k, delta_u, SelectionLaw.DEF_3_8)          # eps/(2k) per selection
        lap_scale = 2.0 * k / epsilon                                          # Lap(2k Delta/eps), Delta = 1
    biases = [0.0] * len(Q)
    true_answers = [answer(q, f) for q in Q]
    h0 = UniformDataset(f.domain, 1.0)          # [003-alg1 L3] [000-alg1 L3] h_0(x) = 1 for all x
    M: list[Measurement] = []                   # [003-alg1 L4] [000-alg1 L4] M <- {}
    h_prev: SyntheticDataset = h0
    iterates: list[SyntheticDataset] = []
    selected: list[int] = []
    for i in range(1, k + 1):                   # [003-alg1 L5] [000-alg1 L5] for i = 1..k
        current = [answer(q, h_prev) for q in Q]
        # [003-alg1 L6] [000-alg1 L6] e_i <- (|q(h_{i-1}) - q(f)|)_{q in Q}
        e_i = query_scores(Q, range(len(Q)), true_answers, current, biases)
        l_i = select.select(noise, site("003-alg1 L7", i=i), e_i)   # [003-alg1 L7] [000-alg1 L7] Select
        q = Q[l_i]
        # [003-alg1 L8] [000-alg1 L8] Measure: m_i <- q_{l_i}(f) + Lap(2 Delta_{q_{l_i}} / eps)
        m_i = Measurement(q, noise.add_laplace_many([site("003-alg1 L8", i=i, cell=c) for c in range(q.dim)],
                                                    true_answers[l_i], lap_scale), lap_scale)  # value-in
        M.append(m_i)                           # [003-alg1 L9] [000-alg1 L9] M <- M u {(q_{l_i}, m_i)}
        N = _total(total, f, M, fallback=h_prev.total if i > 1 else 1.0)
        if from_scratch:
            h_i = fitter.fit(M, h0, N)          # [000-alg1 L10] h_i <- R_Dataset(M)
        else:
            h_i = fitter.fit(M, h_prev, N)      # [003-alg1 L10] Optimize: h_i <- A_Dataset(M, h_{i-1})
        iterates.append(h_i)
        selected.append(l_i)
        h_prev = h_i
    return OfflineResult(h_prev, tuple(iterates), tuple(selected), tuple(M))


@convention(("f", "queries", "epsilon", "noise"))
def measure_all(f: SyntheticDataset, queries: Sequence[Query], epsilon: float, *, noise: NoiseSource | None = None,
                as_printed_000: bool = False) -> list[Measurement]:
    """Step (1) of 003-sec4: every query with Lap(Δ / (ε/|Q|)) per cell (Δ = 1).

    ``as_printed_000`` uses 000-sec3.3's Lap(Δ / (ε |Q|)).
    """
    Q = checked_queries(queries, distinct=False)
    epsilon = require_positive_finite("epsilon", epsilon)
    noise = default_noise() if noise is None else noise
    scale = 1.0 / (epsilon * len(Q)) if as_printed_000 else 1.0 / (epsilon / len(Q))
    out = []
    for i, q in enumerate(Q):
        value = noise.add_laplace_many([site("003-sec4 eq10", i=i, cell=c) for c in range(q.dim)], answer(q, f), scale)
        out.append(Measurement(q, value, scale))
    return out


@convention(("f", "queries", "epsilon", "fitter", "total"), ("f", "queries", "epsilon", "fitter", "total", "noise"))
def naive_offline(f: SyntheticDataset, queries: Sequence[Query], epsilon: float, fitter: DatasetFitter, *,
                  total: TotalRule, noise: NoiseSource | None = None, as_printed_000: bool = False
                  ) -> tuple[SyntheticDataset, list[Measurement]]:
    """003-sec4 (1) measure all queries, (2) fit them (eq (10)'s arg-min delegated to ``fitter``)."""
    Q = checked_queries(queries, distinct=False)
    total.check_queries(Q)
    M = measure_all(f, Q, epsilon, noise=noise, as_printed_000=as_printed_000)
    N = _total(total, f, M, fallback=1.0)
    return fitter.fit(M, UniformDataset(f.domain, 1.0), N), M
