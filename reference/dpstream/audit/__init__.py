"""Audits: exact privacy loss, black-box distinguishing, calibration and accuracy checks.

The protocol and the entry points are documented in ``docs/audits.md``. In short:

* the audited object: anything with ``step(x) -> release``, built by ``factory(noise)``
  (:mod:`dpstream.audit.protocol`);
* neighbouring inputs: :mod:`dpstream.audit.neighbours`;
* the four checks: :mod:`~dpstream.audit.exact` (white-box loss), :mod:`~dpstream.audit.blackbox`,
  :mod:`~dpstream.audit.calibration`, :mod:`~dpstream.audit.accuracy` (+ :mod:`~dpstream.audit.bounds`);
* ready-made cases: :mod:`dpstream.audit.cases`; registration: :mod:`dpstream.audit.registry`;
* the verification room, one subpackage per algorithm family (``counters``, ``phdstream``,
  ``longitudinal``, ``hypercube``, ``tabular``): its release models and exact losses (one result type,
  :class:`~dpstream.audit.exact.ExactLoss`), its own checks and ``cases.py``, the audits it registers;
  the model type itself is :mod:`dpstream.audit.linear_model`; algorithm packages import nothing from here;
* running and reporting: :mod:`~dpstream.audit.runner`, :mod:`~dpstream.audit.report`,
  ``dpstream audit`` (:mod:`~dpstream.audit.cli`);
* samplers and trials over any executor: :mod:`~dpstream.audit.sampler` (seed hook:
  :class:`~dpstream.audit.sampler.SeededFactorySampler`), vectorised counters :mod:`~dpstream.audit.vectorised`;
* the model-free witness search: :mod:`~dpstream.audit.search`; profiles and :func:`audit_counter`:
  :mod:`~dpstream.audit.profiles`; verdicts: :class:`~dpstream.audit.registry.Verdict`.
"""

from dpstream.audit.accuracy import AccuracyBound, accuracy_check
from dpstream.audit.blackbox import black_box, black_box_audit
from dpstream.audit.calibration import calibration_finite, calibration_linear
from dpstream.audit.cases import Effort, finite_case, linear_case
from dpstream.audit.exact import exact_loss_finite, exact_loss_linear, exact_loss_pointwise, integer_grid
from dpstream.audit.neighbours import NeighbourPair, counter_positions, stream_entry_pairs
from dpstream.audit.profiles import PROFILES, audit_counter
from dpstream.audit.protocol import MechanismFactory, Transcript, flatten, sample_transcripts
from dpstream.audit.registry import (
    FAMILY_BUDGETS,
    TOTAL_FALSE_ALARM_BUDGET,
    AuditCase,
    AuditContext,
    CheckKind,
    CheckResult,
    ComponentReport,
    Profile,
    Verdict,
    discover,
)
from dpstream.audit.runner import run_case, run_cases
from dpstream.audit.sampler import FactorySampler, Sampler, SeededFactorySampler, run_trials
from dpstream.audit.scores import FiniteLLR, ModelLLR, feature_score, histogram_score

__all__ = [
    "FAMILY_BUDGETS",
    "PROFILES",
    "TOTAL_FALSE_ALARM_BUDGET",
    "AccuracyBound",
    "AuditCase",
    "AuditContext",
    "CheckKind",
    "CheckResult",
    "ComponentReport",
    "Effort",
    "FactorySampler",
    "FiniteLLR",
    "MechanismFactory",
    "ModelLLR",
    "NeighbourPair",
    "Profile",
    "Sampler",
    "SeededFactorySampler",
    "Transcript",
    "Verdict",
    "accuracy_check",
    "audit_counter",
    "black_box",
    "black_box_audit",
    "calibration_finite",
    "calibration_linear",
    "counter_positions",
    "discover",
    "exact_loss_finite",
    "exact_loss_linear",
    "exact_loss_pointwise",
    "feature_score",
    "finite_case",
    "flatten",
    "histogram_score",
    "integer_grid",
    "linear_case",
    "run_case",
    "run_cases",
    "run_trials",
    "sample_transcripts",
    "stream_entry_pairs",
]
