"""Errors and input validation shared by every algorithm.

Rule (docs/developing.md, "Claims, errors, atomic steps"): a bad input raises a subclass of
``ValueError`` that names the field and the rule, *before* any noise is drawn and
before any state changes. The validators here are the only place these rules are
spelled out, so every algorithm reports them the same way.
"""

from __future__ import annotations

import math
from numbers import Integral, Real
from typing import Any

__all__ = [
    "DPStreamDeprecationWarning",
    "DPStreamInputError",
    "DataRowError",
    "HorizonExceededError",
    "StateError",
    "require_finite_real",
    "require_int_at_least",
    "require_integer_value",
    "require_positive_finite",
    "require_probability",
]


class DPStreamInputError(ValueError):
    """A parameter or input value breaks a stated rule.

    ``field`` names the parameter (as in the paper where possible), ``rule`` states
    what is required, ``value`` is what was given.
    """

    def __init__(self, field: str, rule: str, value: object) -> None:
        self.field = field
        self.rule = rule
        self.value = value
        super().__init__(f"{field}: {rule} (got {value!r})")


class DataRowError(DPStreamInputError):
    """A row of an input file that does not parse or breaks a rule.

    ``path`` and ``line`` (1-based, the header is line 1) locate it; ``field`` names the column (or
    ``"row"`` for the row as a whole), ``value`` is the offending cell or row as read.
    """

    def __init__(self, path: object, line: int, field: str, rule: str, value: object) -> None:
        super().__init__(field, rule, value)
        self.path = str(path)
        self.line = line
        self.args = (f"{self.path}, line {line}, {field}: {rule} (got {value!r})",)


class HorizonExceededError(DPStreamInputError):
    """A finite-horizon algorithm was stepped past its horizon T."""


class DPStreamDeprecationWarning(DeprecationWarning):
    """A call in a form that stops working in the next release (``dpstream.convention``: the old argument orders).

    Its own class so that a test suite can turn dpstream's deprecations, and only those, into errors
    (``filterwarnings = ["error::dpstream.errors.DPStreamDeprecationWarning"]``).
    """


class StateError(RuntimeError):
    """An operation is not allowed in the object's current state (e.g. a failed step)."""


def _is_real(value: Any) -> bool:
    return isinstance(value, Real) and not isinstance(value, bool)


def require_finite_real(field: str, value: Any) -> float:
    """A finite real number (bool is rejected: it is not a count)."""
    kind = type(value)
    try:
        if (kind is float or kind is int) and math.isfinite(value):  # fast path for the common case
            return float(value)
        as_float = float(value) if _is_real(value) else None
    except OverflowError:  # an integer beyond the float range
        as_float = math.inf
    if as_float is None:
        raise DPStreamInputError(field, "must be a real number", value)
    if not math.isfinite(as_float):
        raise DPStreamInputError(field, "must be finite", value)
    return as_float


def require_positive_finite(field: str, value: Any) -> float:
    """A finite real number > 0 (privacy parameters eps and rho, scales, ...)."""
    as_float = require_finite_real(field, value)
    if not as_float > 0.0:
        raise DPStreamInputError(field, "must be > 0", value)
    return as_float


def require_int_at_least(field: str, value: Any, minimum: int) -> int:
    """An integer (not bool, not float) >= minimum (horizons, block sizes, depths)."""
    if not isinstance(value, Integral) or isinstance(value, bool):
        raise DPStreamInputError(field, f"must be an integer >= {minimum}", value)
    as_int = int(value)
    if as_int < minimum:
        raise DPStreamInputError(field, f"must be an integer >= {minimum}", value)
    return as_int


def require_integer_value(field: str, value: Any) -> int:
    """An integer-valued input (counts, Boolean stream entries given as 0/1)."""
    if isinstance(value, bool) or not isinstance(value, Integral):
        if _is_real(value) and math.isfinite(require_finite_real(field, value)) and float(value).is_integer():
            return int(value)
        raise DPStreamInputError(field, "must be an integer", value)
    return int(value)


def require_probability(field: str, value: Any) -> float:
    """A probability strictly inside (0, 1) (failure probabilities beta)."""
    as_float = require_finite_real(field, value)
    if not 0.0 < as_float < 1.0:
        raise DPStreamInputError(field, "must lie in (0, 1)", value)
    return as_float
