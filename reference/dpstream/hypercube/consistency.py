"""Consistency: 004-alg4 (adapted by the paper from He, Vershynin, Zhu 2023, Algorithm 3).

Input: integer noisy counts n'_theta for theta in {0,1}^{<=r}; output non-negative integers
m_theta with m_{theta0} + m_{theta1} = m_theta and the printed same-direction condition

    (m_{theta0} - n'_{theta0}) (m_{theta1} - n'_{theta1}) >= 0

(both children move towards the parent's total in the same direction), n' being the
clamped noisy counts. The paper prints the condition with unprimed n (elsewhere the
*true* counts); reading it literally would make the output depend on the true data, so
the default reads n'. The literal reading stays reachable through ``constraint_counts``
(docs/errata/hypercube.md E-hypercube-9); it is NOT private.

"Transform ... into any vector": two documented deterministic rules.

* ``EQUAL_SHIFT`` (default): the integer least-squares projection. With
  Delta = m_theta - a - b (a, b the clamped child counts), m_{theta0} = a + floor(Delta/2)
  clipped to [0, m_theta], m_{theta1} = m_theta - m_{theta0}. Both children move by (about)
  the same amount; an odd Delta gives the extra unit to theta1 (floor), clipping happens
  only when a child would become negative.
* ``PROPORTIONAL``: m_{theta0} = round-half-up(m_theta a / (a + b)) (exact integer
  arithmetic), or ceil(m_theta / 2) when a + b = 0; m_{theta1} = m_theta - m_{theta0}.

Both satisfy the condition for every input (proofs in the rule docstrings, checked by
property_tests/test_hypercube_properties.py). Privacy: post-processing of the noisy counts
(proofs/proof_hypercube_privacy.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum

import numpy as np
import numpy.typing as npt

from dpstream.convention import convention
from dpstream.errors import DPStreamInputError

__all__ = ["ConsistencyRule", "consistency", "split_children"]

IntArray = npt.NDArray[np.int64]


class ConsistencyRule(StrEnum):
    EQUAL_SHIFT = "equal-shift"
    PROPORTIONAL = "proportional"


def split_children(m: IntArray, a: IntArray, b: IntArray, rule: ConsistencyRule) -> tuple[IntArray, IntArray]:
    """Split each parent total m >= 0 into (m0, m1) >= 0 with m0 + m1 = m and (m0 - a)(m1 - b) >= 0.

    a, b >= 0 are the (clamped) reference counts of the two children, elementwise.

    EQUAL_SHIFT: if Delta >= 0 then 0 <= floor(Delta/2) <= Delta, so m0 >= a and m1 = b + Delta -
    floor(Delta/2) >= b; if Delta < 0 both shifts are <= 0. Clipping m0 at 0 (resp. m) happens
    only when a + floor(Delta/2) < 0 (resp. > m), and then both differences are <= 0.
    PROPORTIONAL: m a / (a+b) lies between a and m on the side of the sign of Delta, and the
    rounding of a real number on one side of an integer stays on that side (same for m1).
    """
    if rule is ConsistencyRule.EQUAL_SHIFT:
        delta = m - a - b
        m0 = np.clip(a + np.floor_divide(delta, 2), 0, m)
    elif rule is ConsistencyRule.PROPORTIONAL:
        total = a + b
        safe = np.where(total > 0, total, 1)
        m0 = np.where(total > 0, (2 * m * a + safe) // (2 * safe), (m + 1) // 2)
    else:  # pragma: no cover
        raise DPStreamInputError("rule", "must be a ConsistencyRule", rule)
    m0 = m0.astype(np.int64)
    return m0, (m - m0).astype(np.int64)


def _levels(counts: Sequence[npt.ArrayLike], field: str) -> list[IntArray]:
    levels: list[IntArray] = []
    for j, level in enumerate(counts):
        arr = np.asarray(level)
        if arr.dtype.kind not in "iu":
            as_float = np.asarray(level, dtype=np.float64)
            if not np.all(np.isfinite(as_float)) or not np.all(as_float == np.round(as_float)):
                raise DPStreamInputError(field, f"level {j} must hold integers", level)
            arr = as_float
        if arr.shape != (2**j,):
            raise DPStreamInputError(field, f"level {j} must hold 2^{j} = {2**j} counts", np.shape(level))
        levels.append(arr.astype(np.int64))
    if not levels:
        raise DPStreamInputError(field, "must hold at least the root level", counts)
    return levels


@convention(("noisy", "rule"))
def consistency(
    noisy: Sequence[npt.ArrayLike],
    *,
    rule: ConsistencyRule = ConsistencyRule.EQUAL_SHIFT,
    constraint_counts: Sequence[npt.ArrayLike] | None = None,
) -> list[IntArray]:
    """004-alg4: ``noisy[j]`` holds n'_theta for the 2^j regions of depth j (index = theta in binary).

    Returns m with the same shape: non-negative, m[j][i] = m[j+1][2i] + m[j+1][2i+1].
    ``constraint_counts`` replaces n' in the printed condition by other counts (the literal
    reading with the *true* counts; not private, kept only to show the printed variant).
    """
    # Input: integer sequence (n'_theta)_{theta in {0,1}^{<=r}}
    levels = _levels(noisy, "noisy")
    reference = None if constraint_counts is None else _levels(constraint_counts, "constraint_counts")
    if reference is not None and len(reference) != len(levels):
        raise DPStreamInputError("constraint_counts", f"must have {len(levels)} levels", len(reference))
    r = len(levels) - 1
    m: list[IntArray] = [np.maximum(levels[0], 0)]  # [004-alg4 u1] m_emptyset <- max(n'_emptyset, 0)
    for j in range(r):  # [004-alg4 u2] for j = 0, ..., r-1
        # [004-alg4 u3] for theta in {0,1}^j: done for all theta of depth j at once (vectorised)
        children = np.maximum(levels[j + 1], 0)  # [004-alg4 u4] n'_{theta0}, n'_{theta1} <- max(., 0)
        source = children if reference is None else np.maximum(reference[j + 1], 0)
        a, b = source[0::2], source[1::2]
        m0, m1 = split_children(m[j], a, b, rule)  # [004-alg4 u4] m0 + m1 = m_theta, (m0-n0)(m1-n1) >= 0
        level = np.empty(2 ** (j + 1), dtype=np.int64)
        level[0::2], level[1::2] = m0, m1
        m.append(level)
    return m  # Output: non-negative integers (m_theta)_{theta in {0,1}^{<=r}}
