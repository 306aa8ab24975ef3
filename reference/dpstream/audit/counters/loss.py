"""Worst-case privacy loss of a counter's :class:`~dpstream.audit.linear_model.LinearReleaseModel`.

For the counter neighbour relation ``Neighbour.STREAM_ENTRY`` (sum_t |f(t) - f'(t)| <= 1)
and a model r = W (S f + z) with injective W, the releases carry exactly the loss of the
independent noisy statistics s = S f + z. With d = f - f':

* Laplace / discrete Laplace statistics (scale b_j): the log-likelihood ratio is at most
  sum_j |(S d)_j| / b_j, which is convex in d, so its maximum over the l1 unit ball is
  attained at a vertex d = +-e_tau: ``max_tau sum_j |S[j, tau]| / b_j`` (pure eps).
  (Integer inputs of integer-noise counters only allow the vertices anyway.)
* Discrete Gaussian statistics (variance parameter sigma_j^2, integer shifts c_j = (S d)_j): the
  Renyi divergence of order alpha is at most alpha * sum_j c_j^2 / (2 sigma_j^2), with equality
  whenever every alpha c_j is an integer (the theta-function correction of
  tests/audit/test_exact.py vanishes), e.g. alpha = 2 for unit shifts; so the zCDP cost
  sup_alpha D_alpha / alpha is exactly sum_j c_j^2 / (2 sigma_j^2). It is convex in d, so the
  cost over unit changes is ``max_tau sum_j S[j, tau]^2 / (2 sigma_j^2)``.

These are the exact costs the noise scales must be calibrated against; they are what the
proof notes derive symbolically and what the unit tests compare with each claim. Both return an
:class:`~dpstream.audit.exact.ExactLoss` (exact: ``lower == upper``) saying which input attains it.
"""

from __future__ import annotations

import numpy as np

from dpstream.audit.exact import ExactLoss
from dpstream.audit.linear_model import LinearReleaseModel
from dpstream.claims import Measure
from dpstream.errors import DPStreamInputError
from dpstream.noise import DrawKind

__all__ = ["stream_entry_epsilon", "stream_entry_rho"]


def _worst_input(per_input: np.ndarray, measure: Measure) -> ExactLoss:
    if not per_input.size:
        return ExactLoss.exact(0.0, "no input", measure=measure)
    tau = int(np.argmax(per_input))
    return ExactLoss.exact(float(per_input.max()), f"input {tau + 1} changed by 1", measure=measure)


def stream_entry_epsilon(model: LinearReleaseModel) -> ExactLoss:
    """Exact worst-case pure-DP loss over unit STREAM_ENTRY changes of a Laplace-noise model."""
    if any(law.kind is DrawKind.DISCRETE_GAUSSIAN for law in model.laws):
        raise DPStreamInputError("model", "must use Laplace or discrete Laplace noise for a pure-DP loss", None)
    if not model.injective:
        raise DPStreamInputError("model", "must be injective (releases determine the statistics)", None)
    inv_b = np.array([1.0 / law.parameter for law in model.laws])
    return _worst_input(np.abs(model.statistics).T @ inv_b, Measure.PURE_DP)


def stream_entry_rho(model: LinearReleaseModel) -> ExactLoss:
    """Exact zCDP cost over unit STREAM_ENTRY changes of a discrete-Gaussian model."""
    if any(law.kind is not DrawKind.DISCRETE_GAUSSIAN for law in model.laws):
        raise DPStreamInputError("model", "must use discrete Gaussian noise for a zCDP cost", None)
    if not model.injective:
        raise DPStreamInputError("model", "must be injective (releases determine the statistics)", None)
    inv = np.array([1.0 / (2.0 * law.parameter) for law in model.laws])
    return _worst_input((model.statistics**2).T @ inv, Measure.ZCDP)
