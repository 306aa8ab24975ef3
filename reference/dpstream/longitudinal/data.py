"""The model of 002 made explicit: an n x T matrix revealed one column per round (002-sec2.1).

* Input: individual i has the sequence x_i = (x_i^1, ..., x_i^T) over a universe X
  (X = {0, 1} unless stated otherwise); round t reveals the column D^t = (x_1^t, ..., x_n^t).
  n is fixed over the whole horizon (the paper's model; the neighbour relation of the paper
  substitutes one individual's whole sequence, ``Neighbour.INDIVIDUAL_SUBSTITUTE``).
* Output: after round t the synthesizer has released the m x t synthetic matrix so far,
  one column per round (Alg 1 releases its first k columns at once, at t = k).

Patterns: a window (x^{t-w+1}, ..., x^t) over an alphabet of size A is coded as the integer
sum_j x^{t-w+j} A^{w-j}, i.e. the oldest symbol is the most significant digit. For A = 2 the
code of the string "z c" is 2 z + c and the code of "a z" is a 2^{w-1} + z, the two moves
002-alg1 u8-u16 make (z0, z1 from z; 0z, 1z from z).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from dpstream.errors import DPStreamInputError, require_int_at_least

__all__ = [
    "IntArray",
    "LongitudinalData",
    "columns",
    "frozen",
    "pattern_code",
    "pattern_string",
    "validate_column",
    "validate_matrix",
    "window_codes",
    "window_histogram",
]

IntArray = npt.NDArray[np.int64]


def frozen(a: npt.ArrayLike) -> IntArray:
    """``a`` as a read-only int64 array (no copy when it already is one)."""
    out = np.asarray(a, dtype=np.int64)
    out.setflags(write=False)
    return out


def validate_column(value: Any, n: int | None, alphabet: int = 2, field: str = "D^t") -> IntArray:
    """One round's reports D^t: a 1-D sequence of length n with entries in {0, ..., alphabet-1}.

    Accepts integer, boolean or float arrays whose values are exactly those integers; anything
    else (2, -1, 0.5, NaN, strings, a 2-D array, a column of another length) raises
    :class:`~dpstream.errors.DPStreamInputError` naming ``field``.
    """
    try:
        arr = np.asarray(value)
    except (TypeError, ValueError) as exc:  # ragged input
        raise DPStreamInputError(field, "must be a 1-D array of reports", value) from exc
    if arr.ndim != 1:
        raise DPStreamInputError(field, "must be a 1-D array of reports (one per individual)",
                                 getattr(arr, "shape", value))
    if n is not None and arr.shape[0] != n:
        raise DPStreamInputError(field, f"must have length n = {n} (n is fixed over the horizon)", arr.shape[0])
    if arr.dtype.kind in "biu":
        ints = arr.astype(np.int64)
    elif arr.dtype.kind == "f":
        if not np.all(np.isfinite(arr)) or not np.all(arr == np.round(arr)):
            raise DPStreamInputError(field, f"entries must be integers in {{0, ..., {alphabet - 1}}}", value)
        ints = arr.astype(np.int64)
    else:
        raise DPStreamInputError(field, f"entries must be integers in {{0, ..., {alphabet - 1}}}", value)
    if ints.size and (ints.min() < 0 or ints.max() >= alphabet):
        bad = ints[(ints < 0) | (ints >= alphabet)][0]
        rule = "entries must be 0 or 1" if alphabet == 2 else f"entries must lie in {{0, ..., {alphabet - 1}}}"
        raise DPStreamInputError(field, rule, int(bad))
    return frozen(np.array(ints, dtype=np.int64))


def validate_matrix(value: Any, alphabet: int = 2, field: str = "D") -> IntArray:
    """An n x T matrix of reports (rows = individuals, columns = rounds)."""
    try:
        arr = np.asarray(value)
    except (TypeError, ValueError) as exc:
        raise DPStreamInputError(field, "must be an n x T matrix", value) from exc
    if arr.ndim != 2:
        raise DPStreamInputError(field, "must be an n x T matrix (rows: individuals, columns: rounds)",
                                 getattr(arr, "shape", value))
    cols = [validate_column(arr[:, j], arr.shape[0], alphabet, field=f"{field}[:, {j}]") for j in range(arr.shape[1])]
    out = np.column_stack(cols) if cols else np.zeros((arr.shape[0], 0), dtype=np.int64)
    return frozen(out)


def columns(matrix: Any) -> list[IntArray]:
    """The rounds D^1, ..., D^T of an n x T matrix, in order (what a synthesizer is stepped with)."""
    m = validate_matrix(matrix)
    return [m[:, j] for j in range(m.shape[1])]


def pattern_code(pattern: str | Sequence[int], alphabet: int = 2) -> int:
    """Integer code of a window pattern, oldest symbol most significant: ``pattern_code("011") == 3``."""
    symbols = [int(c) for c in pattern]
    code = 0
    for s in symbols:
        if not 0 <= s < alphabet:
            raise DPStreamInputError("pattern", f"symbols must lie in {{0, ..., {alphabet - 1}}}", pattern)
        code = code * alphabet + s
    return code


def pattern_string(code: int, width: int, alphabet: int = 2) -> str:
    """Inverse of :func:`pattern_code`: ``pattern_string(3, 3) == "011"`` (digits for alphabet <= 10)."""
    if alphabet > 10:
        raise DPStreamInputError("alphabet", "pattern strings need alphabet <= 10", alphabet)
    digits = []
    for _ in range(width):
        digits.append(str(code % alphabet))
        code //= alphabet
    return "".join(reversed(digits))


def window_codes(matrix: npt.ArrayLike, t: int, w: int, alphabet: int = 2) -> IntArray:
    """Code of each row's window (x^{t-w+1}, ..., x^t) (1-based t, t >= w)."""
    m = np.asarray(matrix, dtype=np.int64)
    require_int_at_least("w", w, 1)
    if not w <= t <= m.shape[1]:
        raise DPStreamInputError("t", f"must satisfy w = {w} <= t <= {m.shape[1]}", t)
    codes = np.zeros(m.shape[0], dtype=np.int64)
    for j in range(t - w, t):
        codes = codes * alphabet + m[:, j]
    return codes


def window_histogram(matrix: npt.ArrayLike, t: int, w: int, alphabet: int = 2) -> IntArray:
    """C_s^t for all width-w patterns s: the number of rows whose window ending at t equals s."""
    codes = window_codes(matrix, t, w, alphabet)
    return np.bincount(codes, minlength=alphabet**w).astype(np.int64)


class LongitudinalData:
    """A validated n x T report matrix (002-sec2.1): ``D[i, t-1] = x_i^t``.

    ``column(t)`` is D^t (1-based), ``histogram(t, w)`` the true width-w window histogram
    C^t, ``hamming(t)`` the weights x_i^1 + ... + x_i^t.
    """

    def __init__(self, matrix: Any, alphabet: int = 2) -> None:
        self.alphabet = require_int_at_least("alphabet", alphabet, 2)
        self.D = validate_matrix(matrix, self.alphabet)

    @property
    def n(self) -> int:
        return int(self.D.shape[0])

    @property
    def T(self) -> int:
        return int(self.D.shape[1])

    def column(self, t: int) -> IntArray:
        if not 1 <= t <= self.T:
            raise DPStreamInputError("t", f"must lie in 1..{self.T}", t)
        return self.D[:, t - 1]

    def columns(self) -> list[IntArray]:
        return [self.D[:, j] for j in range(self.T)]

    def histogram(self, t: int, w: int) -> IntArray:
        return window_histogram(self.D, t, w, self.alphabet)

    def hamming(self, t: int) -> IntArray:
        """Hamming weights x_i^1 + ... + x_i^t (0 for t = 0)."""
        if not 0 <= t <= self.T:
            raise DPStreamInputError("t", f"must lie in 0..{self.T}", t)
        return np.asarray(self.D[:, :t].sum(axis=1), dtype=np.int64)
