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

from typing import TYPE_CHECKING

from dpstream.lazy import lazy_exports

if TYPE_CHECKING:
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

_WHERE = {
    "AccuracyBound": "dpstream.audit.accuracy",
    "AuditCase": "dpstream.audit.registry",
    "AuditContext": "dpstream.audit.registry",
    "CheckKind": "dpstream.audit.registry",
    "CheckResult": "dpstream.audit.registry",
    "ComponentReport": "dpstream.audit.registry",
    "Effort": "dpstream.audit.cases",
    "FAMILY_BUDGETS": "dpstream.audit.registry",
    "FactorySampler": "dpstream.audit.sampler",
    "FiniteLLR": "dpstream.audit.scores",
    "MechanismFactory": "dpstream.audit.protocol",
    "ModelLLR": "dpstream.audit.scores",
    "NeighbourPair": "dpstream.audit.neighbours",
    "PROFILES": "dpstream.audit.profiles",
    "Profile": "dpstream.audit.registry",
    "Sampler": "dpstream.audit.sampler",
    "SeededFactorySampler": "dpstream.audit.sampler",
    "TOTAL_FALSE_ALARM_BUDGET": "dpstream.audit.registry",
    "Transcript": "dpstream.audit.protocol",
    "Verdict": "dpstream.audit.registry",
    "accuracy_check": "dpstream.audit.accuracy",
    "audit_counter": "dpstream.audit.profiles",
    "black_box": "dpstream.audit.blackbox",
    "black_box_audit": "dpstream.audit.blackbox",
    "calibration_finite": "dpstream.audit.calibration",
    "calibration_linear": "dpstream.audit.calibration",
    "counter_positions": "dpstream.audit.neighbours",
    "discover": "dpstream.audit.registry",
    "exact_loss_finite": "dpstream.audit.exact",
    "exact_loss_linear": "dpstream.audit.exact",
    "exact_loss_pointwise": "dpstream.audit.exact",
    "feature_score": "dpstream.audit.scores",
    "finite_case": "dpstream.audit.cases",
    "flatten": "dpstream.audit.protocol",
    "histogram_score": "dpstream.audit.scores",
    "integer_grid": "dpstream.audit.exact",
    "linear_case": "dpstream.audit.cases",
    "run_case": "dpstream.audit.runner",
    "run_cases": "dpstream.audit.runner",
    "run_trials": "dpstream.audit.sampler",
    "sample_transcripts": "dpstream.audit.protocol",
    "stream_entry_pairs": "dpstream.audit.neighbours",
}
"""Where each exported name lives: imported on first use, so that ``import dpstream.audit`` (and every module that
reads one of its rooms, such as the catalog) does not load scipy.stats until a check needs it."""


__getattr__ = lazy_exports(globals(), _WHERE)


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
