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
    "MAX_STREAM_SUM",
    "DPStreamDeprecationWarning",
    "DPStreamInputError",
    "DataRowError",
    "HorizonExceededError",
    "StateError",
    "StreamRangeError",
    "require_finite_real",
    "require_int_at_least",
    "require_integer_value",
    "require_positive_finite",
    "require_probability",
    "require_stream_sum",
    "require_stream_value",
]

MAX_STREAM_SUM = 2**53 - 1
"""Largest |input| and |sum of inputs| a counter accepts (docs/counters.md, "Range"): 2^53 - 1.

float64 holds every integer up to 2^53 and not 2^53 + 1, so beyond it two inputs at l1 distance 1 can give sums 2
apart (2^53 + 1 rounds to 2^53, 2^53 + 2 does not), twice the sensitivity the claims are proved for. Within
+-(2^53 - 1) every integer sum is exact, and a number read as a float64 (a JSON parser's) compares with the bound as
the number itself would: any integer above 2^53 - 1 reads as >= 2^53. Far inside the noise door's integer range
(``dpstream.noise.MAX_INTEGER_VALUE`` = 2^62)."""

_RANGE = "+-(2^53 - 1) (MAX_STREAM_SUM: float64 sums are exact only within it)"


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


class StreamRangeError(DPStreamInputError):
    """An input, or a sum of inputs an algorithm would form with it, outside +-:data:`MAX_STREAM_SUM`."""


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


def require_stream_value(field: str, value: Any, *, integer: bool = False) -> float:
    """A finite real (an integer if ``integer``) with |value| <= :data:`MAX_STREAM_SUM`, as a float (exact).

    Checked on the value as given, so an integer too large for a float is refused, not an ``OverflowError``.
    """
    kind = type(value)
    if not integer and (kind is float or kind is int) and -MAX_STREAM_SUM <= value <= MAX_STREAM_SUM:
        return float(value)  # fast path (NaN and +-inf fail the comparison and are refused below)
    if integer:
        number: float = require_integer_value(field, value)
    else:
        if isinstance(value, Integral) and not isinstance(value, bool) and abs(int(value)) > MAX_STREAM_SUM:
            raise StreamRangeError(field, f"must lie within {_RANGE}", _shown(int(value)))
        number = require_finite_real(field, value)
    if not -MAX_STREAM_SUM <= number <= MAX_STREAM_SUM:
        raise StreamRangeError(field, f"must lie within {_RANGE}", _shown(value))
    return float(number)


def _shown(value: Any) -> Any:
    """``value`` for an error message: an integer of more than 64 bits by its size (its digits could fill a screen,
    and beyond 4300 digits Python refuses to print it)."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 64:
        return f"an integer of {value.bit_length()} bits"
    return value


def require_stream_sum(field: str, what: str, total: float, value: Any) -> None:
    """Refuse ``value`` (the input ``field``) when it would take the sum ``what`` to ``total`` outside
    +-:data:`MAX_STREAM_SUM` (``total`` computed in float64: exact for integer inputs within the bound)."""
    if not -MAX_STREAM_SUM <= total <= MAX_STREAM_SUM:
        raise StreamRangeError(field, f"would take {what} to {total:.17g}, outside {_RANGE}", value)
