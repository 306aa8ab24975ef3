"""Proof note — privacy of Algorithm 3 (003-thm6.1, 000-lem4.1) and the budget of every tabular algorithm.

Claim (Theorem 6.1, as implemented)
-----------------------------------
``MainAlgorithm(Q, k, ε)`` with ε/(2k)-DP counters (pure DP, STREAM_ENTRY) is ε-DP under
003-def3.3 (one record added or removed at one time τ). Whether A_Dataset is DP is irrelevant:
it is post-processing (003-sec6.3 is right, the hypothesis of Theorem 6.1 is unnecessary).

Proof. The randomness-bearing outputs are the selections η_{t,l} and the counter releases. Every
other quantity (m, r, h_{t,l}, g_t) is a deterministic function of them and of public inputs:
L16-L21 and A_Dataset only read counter outputs and earlier releases (checked numerically for
every transcript by :func:`dpstream.audit.tabular.loss.transcript_losses`: the releases under f and
f' coincide once the transcript is fixed). So the density of a transcript factorises over the
k meta-steps (t, l) of 001-alg4 (dpstream.tabular.selective): P[η_{t,l} | past] x density of the
counter statistic drawn at (t, l).

* At t != τ: the score e_{t,l} = |q_i(∇f_t + g_{t-1}) - q_i(h_{t,l-1})| uses ∇f_t, equal under f
  and f', and g_{t-1}, h_{t,l-1}, functions of the past transcript; the counter inputs
  q_j(∇f_t) are equal. Each factor is the same: zero loss (the g_{t-1} + ∇f_t trick of §6.4 is
  what makes this hold; the true f_t would carry the change to every later selection).
* At t = τ: each selection's score moves by at most Δ_u = 1 (marginal queries) or 1/|q_i|
  (workloads), so each of the k selections costs at most ε/(2k) (Theorem 3.9 at budget ε/2k).
  Each of the k counters invoked at τ receives an input moved by at most 1 in l1 (one record is
  in at most one cell of a workload); an ε/(2k)-DP counter whose loss scales with the l1 change
  costs at most ε/(2k) for it, over its whole future (its later releases are part of its own
  guarantee). Total k ε/(2k) + k ε/(2k) = ε.

Code (reference/dpstream/tabular/main_algorithm.py, ``MainAlgorithm``)
--------------------------------------------------------------------
* ``[003-alg3 L3]`` ``eps_counter = self.epsilon / (2 * self.k)``: counter C_i = ``counter_factory(eps_counter,
  scoped(noise, "003-alg3 L3 i=<i>"))`` (a 001-sec4.3 vector of them for a workload);
* ``[003-alg3 L11]`` ``e = query_scores(self.Q, J, target, current, self.biases)``, target = q_i(∇f_t + g_{t-1});
* ``[003-alg3 L12]`` ``self.selector.select(self.noise, site("003-alg3 L12", t=t, l=l), e)``, the selector at
  ε/(2k) with Δ_u = ``score_sensitivity(Q)``;
* ``[003-alg3 L15]`` ``stage_counter(self.counters[j], state.q_diff[j])``: C_j consumes q_j(∇f_t);
* ``[003-alg3 L16]``-``[003-alg3 L21]`` and ``[003-alg3 L18]`` (A_Dataset): functions of C, r, m and earlier g only.
StreamingMWEM (``streaming_mwem.py``): ``[003-alg2 L11]`` the selector, ``self.lap_scale = 2.0 * self.k / self.epsilon``
for the measurements. Offline (``offline.py``, ``select_measure_fit``): ``[003-alg1 L7]`` selector and ``[003-alg1 L8]``
``lap_scale``: ε/(2k) and 2k/ε, as printed ε/2 and 2/ε.

Selective counting (001-thm4.2) gives the same number per meta-step, ε_M + ε_C = ε/(2k) + ε/(2k),
and a neighbour changes the k meta-steps of time τ only.

Budgets of the other algorithms (sequential composition of the same kind)
--------------------------------------------------------------------------
* StreamingMWEM (003-alg2): k selections + k measurements Lap(2k/ε) (sensitivity 1) per step,
  fresh randomness per step, neighbours change one step: with the Def 3.8 law ε/(2k) per
  selection: ε. With the printed L11 law (ε/k per selection, E-tabular-1): 3ε/2. With the mass
  |∇f_t| of L20 (E-tabular-3): not DP at all (|g_t| - |g_{t-1}| = |∇f_t| is released exactly).
* Offline MWEM (003-alg1) as printed: ε/2 + ε/2 per iteration, kε in total (E-tabular-4);
  divided by k: ε.
* The naive approach (003-sec4): |Q| Laplace measurements Lap(Δ/(ε/|Q|)) cost ε; 000-sec3.3's
  Lap(Δ/(ε|Q|)) costs ε|Q|^2 (E-tabular-5).

Checks below: the budgets in sympy; then the budgets read from runs of the code (every exponential-mechanism
draw's recorded ε' and Δ, every Laplace draw's scale, grouped by time step) for MainAlgorithm,
StreamingMWEM (both laws) and offline MWEM (default and printed), compared with the claims; and the
zero loss away from τ on exact transcript densities (:func:`dpstream.audit.tabular.loss.transcript_losses`).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable

import numpy as np
import sympy as sp

from dpstream.audit.counters.models import simple_counter_model
from dpstream.audit.tabular.loss import transcript_losses
from dpstream.claims import Measure
from dpstream.insecure import InsecureSeededNoise, TapeRecorder
from dpstream.noise import DrawKind, NoiseSource
from dpstream.tabular.datasets import ExplicitDataset
from dpstream.tabular.domain import Domain
from dpstream.tabular.fitting import MultiplicativeWeights
from dpstream.tabular.main_algorithm import MainAlgorithm
from dpstream.tabular.offline import offline_claim, select_measure_fit
from dpstream.tabular.queries import all_marginal_queries
from dpstream.tabular.selection import SelectionLaw
from dpstream.tabular.stream import StreamStep, generate_stream
from dpstream.tabular.streaming_mwem import StreamingMWEM
from dpstream.tabular.totals import TotalRule
from dpstream.tape import Draw

DOMAIN = Domain(("a", "b", "c"), (2, 3, 2))
QUERIES = all_marginal_queries(DOMAIN, 2)
STREAM = generate_stream(DOMAIN, 3, 12, seed=3, removal_rate=0.2)

eps, k, Qn = sp.symbols("epsilon k Q", positive=True)


def laplace_cost(sensitivity: sp.Expr, scale: sp.Expr) -> sp.Expr:
    """Pure-DP cost of one Laplace statistic with the given sensitivity and scale."""
    return sensitivity / scale


def test_algorithm_3_per_step_budget() -> None:
    selection = eps / (2 * k)                      # Theorem 3.9 at budget ε/2k, any Δ_u (scores use their own Δ)
    counter = laplace_cost(1, 2 * k / eps)         # Simple counter at ε/2k: Lap(2k/ε), input moved by <= 1
    assert sp.simplify(counter - eps / (2 * k)) == 0
    assert sp.simplify(k * selection + k * counter - eps) == 0
    # selective counting: (ε_M + ε_C) per meta-step, k meta-steps changed by a neighbour
    assert sp.simplify(k * (selection + counter) - eps) == 0


def test_streaming_mwem_budgets() -> None:
    measure = laplace_cost(1, 2 * k / eps)         # 003-alg2 L16
    assert sp.simplify(k * eps / (2 * k) + k * measure - eps) == 0
    printed_selection = eps / k                    # L11: exp((ε/2k) e) = Def 3.8 at ε/k with Δ = 1
    assert sp.simplify(k * printed_selection + k * measure - sp.Rational(3, 2) * eps) == 0


def test_offline_and_naive_budgets() -> None:
    printed_iteration = eps / 2 + laplace_cost(1, 2 / eps)          # 003-alg1 L7-L8 as printed
    assert sp.simplify(k * printed_iteration - k * eps) == 0
    corrected_iteration = eps / (2 * k) + laplace_cost(1, 2 * k / eps)
    assert sp.simplify(k * corrected_iteration - eps) == 0
    assert sp.simplify(Qn * laplace_cost(1, 1 / (eps / Qn)) - eps) == 0            # 003-sec4
    assert sp.simplify(Qn * laplace_cost(1, 1 / (eps * Qn)) - eps * Qn**2) == 0      # 000-sec3.3 as printed


def test_zero_loss_away_from_tau() -> None:
    """A factor P[η | e(∇f_t, past)] with identical arguments has log-ratio 0 (the §6.4 proxy)."""
    e1, e2, a = sp.symbols("e1 e2 a", real=True)
    p_f = sp.exp(a * e1) / (sp.exp(a * e1) + sp.exp(a * e2))
    p_fp = p_f.subs({e1: e1, e2: e2})            # same ∇f_t, same past: the same scores
    assert sp.simplify(sp.log(p_f) - sp.log(p_fp)) == 0
    # with the true f_t instead of g_{t-1} + ∇f_t, a change at τ < t moves every score of time t:
    p_true = sp.exp(a * (e1 + 1)) / (sp.exp(a * (e1 + 1)) + sp.exp(a * e2))
    assert sp.simplify(sp.log(p_f) - sp.log(p_true)) != 0


def _budget_per_step(draws: Iterable[Draw], true_sensitivity: float) -> dict[int, list[float]]:
    """Pure-DP cost of every draw, by time step: an exponential-mechanism draw costs ε' Δ_true / Δ_calibrated
    (Theorem 3.9); a Laplace draw on an input of sensitivity 1 costs 1/scale (for Simple counters and
    measurements, each input enters one statistic: proofs/proof_simple_counter.py). A counter draw belongs to
    the step of the selection drawn just before it."""
    out: dict[int, list[float]] = defaultdict(list)
    t = 0
    for d in draws:
        if d.kind is DrawKind.EXPONENTIAL_MECHANISM:
            found = re.search(r"\bt=(\d+)", d.site)  # offline MWEM has no time: step 0
            t = int(found.group(1)) if found else 0
            out[t].append(d.params["epsilon"] * true_sensitivity / d.params["sensitivity"])
        else:
            assert d.kind is DrawKind.LAPLACE
            out[t].append(1.0 / d.params["scale"])
    return out


def test_algorithm_3_budget_read_from_a_run() -> None:
    """MainAlgorithm(k = 3, ε = 1): per step k selections at ε/(2k) and k Simple-counter draws of scale 2k/ε,
    in total ε = the claim; every step pays the same (a neighbour changes one step)."""
    eps, k = sp.Integer(1), 3
    recorder = TapeRecorder(InsecureSeededNoise(5))
    alg = MainAlgorithm(DOMAIN, QUERIES, k, float(eps), noise=recorder, total=TotalRule.public(12))
    alg.run(STREAM)
    costs = _budget_per_step(recorder.tape, alg.selector.sensitivity)
    assert sorted(costs) == [1, 2, 3]
    for per_draw in costs.values():
        assert len(per_draw) == 2 * k
        assert np.allclose(per_draw, float(eps / (2 * k)), rtol=1e-14)
        assert np.isclose(sum(per_draw), float(eps), rtol=1e-14)
    assert np.isclose(alg.claim.parameter, float(eps), rtol=1e-14)


def test_streaming_mwem_budgets_read_from_a_run() -> None:
    """StreamingMWEM: k selections + k measurements Lap(2k/ε) per step cost ε with the Def 3.8 law and 3ε/2 with
    the printed L11 law (E-tabular-1); the claims state these numbers; the printed mass rule is not private."""
    eps, k = sp.Integer(1), 2
    for law, total in ((SelectionLaw.DEF_3_8, eps), (SelectionLaw.PRINTED_ALG2_L11, sp.Rational(3, 2) * eps)):
        recorder = TapeRecorder(InsecureSeededNoise(6))
        alg = StreamingMWEM(DOMAIN, QUERIES, k, float(eps), noise=recorder, total=TotalRule.public(12),
                            selection_law=law)
        alg.run(STREAM)
        costs = _budget_per_step(recorder.tape, alg.selector.sensitivity)
        assert sorted(costs) == [1, 2, 3]
        assert all(len(c) == 2 * k and np.isclose(sum(c), float(total), rtol=1e-14) for c in costs.values())
        assert np.isclose(alg.claim.parameter, float(total), rtol=1e-14)
    printed_mass = StreamingMWEM(DOMAIN, QUERIES, k, float(eps), noise=InsecureSeededNoise(0),
                                 total=TotalRule.true_size())
    assert printed_mass.claim.measure is Measure.NOT_PRIVATE  # E-tabular-3


def test_offline_mwem_budgets_read_from_a_run() -> None:
    """003-alg1: ε/(2k) + 1/(2k/ε) per iteration = ε in total; as printed ε/2 + ε/2 per iteration = kε."""
    eps, k = sp.Integer(1), 3
    f = ExplicitDataset(DOMAIN, np.arange(DOMAIN.size, dtype=float).reshape(DOMAIN.sizes))
    for as_printed, total in ((False, eps), (True, k * eps)):
        recorder = TapeRecorder(InsecureSeededNoise(7))
        select_measure_fit(f, QUERIES, float(eps), k, MultiplicativeWeights(), total=TotalRule.public(66.0),
                           noise=recorder,
                           as_printed=as_printed)
        (costs,) = _budget_per_step(recorder.tape, 1.0).values()
        assert len(costs) == 2 * k and np.isclose(sum(costs), float(total), rtol=1e-14)
        assert np.isclose(offline_claim(float(eps), k, as_printed, TotalRule.public(66.0)).parameter, float(total))


def test_zero_loss_away_from_tau_on_exact_transcripts() -> None:
    """Exact log p(o|f) - log p(o|f') of sampled transcripts of MainAlgorithm (k = 1, Simple counters): 0 at every
    t != τ, at most ε at τ, and the releases are the same function of the transcript under f and f'."""
    domain = Domain(("A", "B"), (2, 3))
    queries = all_marginal_queries(domain, 1)
    base = [StreamStep.build(domain, [(0, 0), (1, 2), (1, 0)]), StreamStep.build(domain, [(0, 1)]),
            StreamStep.build(domain, [(1, 1), (0, 2)])]
    neighbour = [base[0], StreamStep.build(domain, [(0, 1), (1, 1)]), base[2]]  # one record added at τ = 2

    def build(noise: NoiseSource) -> MainAlgorithm:
        return MainAlgorithm(domain, queries, 1, 1.0, noise=noise, total=TotalRule.public(3.0))

    losses = transcript_losses(build, base, neighbour, seeds=[0, 1, 2], counter_model=simple_counter_model)
    for loss in losses:
        assert loss.parts["postprocessing"] == 1.0
        assert np.allclose(np.asarray(loss.per_time)[[0, 2]], 0.0, atol=1e-9)
        assert abs(loss.per_time[1]) <= 1.0 + 1e-9
    assert max(abs(loss.per_time[1]) for loss in losses) > 0.1  # the change at τ is visible
