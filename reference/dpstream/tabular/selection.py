"""Selection scores, their sensitivities, and the exponential-mechanism law used to select.

Scores (utilities u_i of the exponential mechanism, 003-def3.8):

* marginal queries: e_i = |q_i(a) - q_i(h)| (003-alg2 L8 with a = ∇f_t; 003-alg3 L11
  with a = ∇f_t + g_{t-1}). One record added or removed at one time changes q_i(a) by
  at most 1, so Δ_u = 1;
* workloads (003-sec7.2 change 3): e_i = ||q_i(a) - q_i(h)||_1 / |q_i| - bias_i. A
  record lies in exactly one cell of every workload, so the l1 term moves by at most 1
  and the score by at most 1/|q_i|; the bias is data-independent. Hence
  Δ_u = max_i 1/|q_i| = 1 / min_i |q_i|. For 2-way workloads |q_i| = |X_a||X_b| >= 4
  whenever every attribute has at least two values, so the paper's 1/4 (change 4) is a
  valid upper bound for non-binary attributes too, and exact when two binary attributes
  meet; it is *wrong* (too small) when an attribute has a single value (|q_i| = 2) or
  for 1-way workloads of binary attributes (proofs/proof_tabular_workload_sensitivity.py).

Selection laws (the papers print three different ones; E-tabular-1, E-tabular-2):

* ``DEF_3_8`` (default): P[i] ∝ exp(ε_s u_i / (2 Δ_u)) with ε_s = ε/(2k) per selection,
  Definition 3.8 with the sign of Theorem 3.10 — what the accuracy proofs use
  (003 App. A eq (12): "budget ε/2k and sensitivity 1" gives 4k/ε ln(|Q|/β));
* ``PRINTED_ALG2_L11``: P[i] ∝ exp((ε/2k) u_i), as printed in 003-alg2 L11. With
  Δ_u = 1 this is the exponential mechanism with budget ε/k per selection: k
  selections spend ε and the step spends 3ε/2 with the k measurements;
* ``PRINTED_DEF_3_8``: P[i] ∝ exp(-ε_s u_i / (2 Δ_u)), Definition 3.8 as printed
  (minus sign): as private as the default but it favours the *smallest* error.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

import numpy as np

from dpstream.arithmetic import kernel
from dpstream.errors import DPStreamInputError, require_int_at_least, require_positive_finite
from dpstream.mechanisms import ExponentialMechanism
from dpstream.noise import DrawKind, NoiseSource, require_drawable
from dpstream.tabular.domain import Domain
from dpstream.tabular.queries import FloatArray, MarginalQuery, Query, Workload

__all__ = [
    "BiasRule",
    "SelectionLaw",
    "Selector",
    "query_scores",
    "require_round_budget",
    "score_sensitivity",
    "workload_bias",
]


def require_round_budget(epsilon: float, k: int) -> None:
    """Refuse now an ``epsilon`` whose draws of a round no source accepts: the k selections' eps/(2k) (must stay
    > 0) and the measurements' Lap(2k/eps) (the largest scale of the tabular boxes)."""
    if not epsilon / (2 * k) > 0.0:
        raise DPStreamInputError("epsilon", f"gives the selections eps/(2k) = 0 (k = {k}): it underflows", epsilon)
    require_drawable("epsilon", epsilon, DrawKind.LAPLACE, scale=2.0 * k / epsilon)


class SelectionLaw(StrEnum):
    DEF_3_8 = "def-3.8"
    PRINTED_ALG2_L11 = "printed-alg2-l11"
    PRINTED_DEF_3_8 = "printed-def-3.8"


class BiasRule(StrEnum):
    """The bias correction of the workload score (003-sec7.2 change 3)."""

    PRINTED = "printed"
    """Subtract |X_columns(q_i)| unscaled, as printed."""
    SCALED = "scaled"
    """Subtract |X_columns(q_i)| / |q_i| (= 1 for a full workload: a constant, no effect on selection)."""
    NONE = "none"


def workload_bias(domain: Domain, workload: Workload, rule: BiasRule) -> float:
    """The bias term of 003-sec7.2 change 3 for one workload."""
    cells = float(np.prod(domain.shape_of(workload.columns)))  # |X_columns(q_i)|
    if rule is BiasRule.PRINTED:
        return cells
    if rule is BiasRule.SCALED:
        return cells / workload.dim
    return 0.0


def score_sensitivity(queries: Sequence[Query], printed_workload_sensitivity: bool = False) -> float:
    """Δ_u of the selection score over Q (see the module docstring).

    ``printed_workload_sensitivity=True`` returns the paper's 1/4 for workloads
    (003-sec7.2 change 4) instead of the exact 1 / min_i |q_i|.
    """
    if not queries:
        raise DPStreamInputError("Q", "must be non-empty", queries)
    if all(isinstance(q, MarginalQuery) for q in queries):
        return 1.0
    if all(isinstance(q, Workload) for q in queries):
        return 0.25 if printed_workload_sensitivity else 1.0 / min(q.dim for q in queries)
    raise DPStreamInputError("Q", "must contain only marginal queries or only workloads", queries)


def query_scores(queries: Sequence[Query], indices: Sequence[int], target: Sequence[FloatArray],
                 current: Sequence[FloatArray], biases: Sequence[float]) -> list[float]:
    """e_i for i in ``indices``: |q_i(a) - q_i(h)| (marginal) or ||.||_1/|q_i| - bias_i (workload)."""
    out: list[float] = []
    for i in indices:
        q = queries[i]
        diff = np.asarray(target[i], dtype=np.float64) - np.asarray(current[i], dtype=np.float64)
        if isinstance(q, MarginalQuery):
            out.append(float(abs(diff[0])))
        else:
            out.append(kernel().total(np.abs(diff)) / q.dim - biases[i])
    return out


@dataclass(frozen=True)
class Selector:
    """One selection of a round: the exponential mechanism with the chosen law.

    ``epsilon`` is the algorithm's total budget ε, ``k`` the selections per step;
    ``sensitivity`` is Δ_u of the score (the true one). ``assumed_sensitivity``, if given, is the Δ_u
    the mechanism is calibrated with instead (003-sec7.2's printed 1/4 for workloads, E-tabular-8);
    :attr:`epsilon_spent` then reports what a selection really costs.
    """

    epsilon: float
    k: int
    sensitivity: float
    law: SelectionLaw = SelectionLaw.DEF_3_8
    assumed_sensitivity: float | None = None

    def __post_init__(self) -> None:
        require_positive_finite("epsilon", self.epsilon)
        require_int_at_least("k", self.k, 1)
        require_positive_finite("sensitivity", self.sensitivity)
        if self.assumed_sensitivity is not None:
            require_positive_finite("assumed_sensitivity", self.assumed_sensitivity)
        if not isinstance(self.law, SelectionLaw):
            raise DPStreamInputError("law", f"must be one of {[v.value for v in SelectionLaw]}", self.law)

    @property
    def mechanism(self) -> ExponentialMechanism:
        """The exponential mechanism (in the foundation's law exp(ε' u / (2Δ))) this selection runs."""
        per_selection = self.epsilon / (2 * self.k)
        if self.law is SelectionLaw.PRINTED_ALG2_L11:
            # exp((ε/2k) u) = exp(ε' u / (2Δ)) with Δ = 1 and ε' = ε/k
            return ExponentialMechanism(self.epsilon / self.k, 1.0)
        calibrated = self.sensitivity if self.assumed_sensitivity is None else self.assumed_sensitivity
        return ExponentialMechanism(per_selection, calibrated, as_printed=self.law is SelectionLaw.PRINTED_DEF_3_8)

    @property
    def epsilon_spent(self) -> float:
        """The privacy cost of one selection under a score of (true) sensitivity ``sensitivity``."""
        mech = self.mechanism
        return mech.epsilon * self.sensitivity / mech.sensitivity

    def log_probabilities(self, scores: Sequence[float]) -> FloatArray:
        """log P[i] of the law for the given scores (used by the exact privacy-loss audit)."""
        mech = self.mechanism
        u = np.asarray(scores, dtype=np.float64)
        if mech.as_printed:
            u = -u
        logits = u * (mech.epsilon / (2.0 * mech.sensitivity))
        top = float(logits.max())
        return np.asarray(logits - top - np.log(np.exp(logits - top).sum()), dtype=np.float64)

    def select(self, noise: NoiseSource, site: str, scores: Sequence[float]) -> int:
        return self.mechanism.select(noise, site, scores)
