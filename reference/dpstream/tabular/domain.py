"""The finite product domain X = X_1 x ... x X_p of seeds 003/000 (003-sec3.1, 000-notation).

A record is a p-tuple of integer codes, attribute i taking values 0..|X_i|-1. Records
are held as ``int64`` arrays of shape (n, p); every entry point validates them here so
that a bad record raises :class:`DPStreamInputError` before any draw or state change
(wrong arity, non-integer codes, values outside an attribute's range).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from dpstream.errors import DPStreamInputError, require_int_at_least

__all__ = ["Domain", "IntArray", "validate_records"]

IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True)
class Domain:
    """X = X_1 x ... x X_p: attribute ``names`` and their sizes |X_i| (003-sec3.1).

    Every size must be at least 1; a size-1 attribute is allowed (it is constant) but
    it changes workload sensitivities (see :mod:`dpstream.tabular.selection`).
    """

    names: tuple[str, ...]
    sizes: tuple[int, ...]

    def __post_init__(self) -> None:
        if not isinstance(self.names, tuple) or not isinstance(self.sizes, tuple):
            raise DPStreamInputError("domain", "names and sizes must be tuples", (self.names, self.sizes))
        if len(self.names) == 0:
            raise DPStreamInputError("domain", "must have at least one attribute (p >= 1)", self.names)
        if len(self.names) != len(self.sizes):
            raise DPStreamInputError("sizes", f"must give one size per attribute ({len(self.names)})", self.sizes)
        if len(set(self.names)) != len(self.names) or any(not isinstance(n, str) or not n for n in self.names):
            raise DPStreamInputError("names", "must be distinct non-empty strings", self.names)
        for size in self.sizes:
            require_int_at_least("sizes", size, 1)

    @classmethod
    def from_dict(cls, sizes: Mapping[str, int]) -> Domain:
        """Build from ``{name: size}`` (insertion order is the attribute order)."""
        return cls(tuple(sizes), tuple(int(v) for v in sizes.values()))

    @property
    def p(self) -> int:
        """The number of attributes."""
        return len(self.names)

    @property
    def size(self) -> int:
        """|X| = prod_i |X_i| (a Python int: it may exceed 2^63 for wide domains)."""
        return math.prod(self.sizes)

    @property
    def shape(self) -> tuple[int, ...]:
        return self.sizes

    def column(self, name: str) -> int:
        """Index of the attribute called ``name``."""
        try:
            return self.names.index(name)
        except ValueError as exc:
            raise DPStreamInputError("attribute", f"must be one of {self.names}", name) from exc

    def shape_of(self, columns: Sequence[int]) -> tuple[int, ...]:
        """(|X_c1|, ..., |X_ck|) for a tuple of column indices."""
        return tuple(self.sizes[c] for c in columns)

    def validate_columns(self, columns: Sequence[int], field: str = "columns") -> tuple[int, ...]:
        """Strictly increasing column indices c_1 < ... < c_k in [0, p) (003-def7.1)."""
        cols = tuple(columns)
        for c in cols:
            if isinstance(c, bool) or not isinstance(c, int | np.integer):
                raise DPStreamInputError(field, "column indices must be integers", columns)
            if not 0 <= int(c) < self.p:
                raise DPStreamInputError(field, f"column indices must lie in [0, p = {self.p})", columns)
        if any(b <= a for a, b in itertools.pairwise(cols)):
            raise DPStreamInputError(field, "column indices must be strictly increasing (c_1 < c_2 < ...)", columns)
        return tuple(int(c) for c in cols)

    def project(self, columns: Sequence[int]) -> Domain:
        """The sub-domain on ``columns`` (used for the MW experiments on a small projection)."""
        cols = self.validate_columns(columns)
        return Domain(tuple(self.names[c] for c in cols), tuple(self.sizes[c] for c in cols))

    def to_dict(self) -> dict[str, int]:
        return dict(zip(self.names, self.sizes, strict=True))


def validate_records(domain: Domain, records: object, field: str = "records") -> IntArray:
    """Check records against ``domain`` and return them as an (n, p) int64 array.

    Accepts an (n, p) array-like of integer codes (an empty list is n = 0). Raises
    :class:`DPStreamInputError` for a wrong arity, a non-integer code or a value outside
    0..|X_i|-1 ("unknown attribute value"); nothing is modified.
    """
    if isinstance(records, np.ndarray):
        arr = records
    else:
        try:
            arr = np.asarray(records)
        except (ValueError, TypeError) as exc:
            raise DPStreamInputError(field, "must be an (n, p) array of integer codes", records) from exc
    if arr.size == 0 and arr.ndim <= 2:
        return np.zeros((0, domain.p), dtype=np.int64)
    if arr.ndim == 1 and arr.shape[0] == domain.p and arr.dtype != object:
        arr = arr.reshape(1, domain.p)  # one record given as a flat tuple
    if arr.ndim != 2:
        raise DPStreamInputError(field, f"must be an (n, p) array with p = {domain.p}", getattr(arr, "shape", records))
    if arr.shape[1] != domain.p:
        raise DPStreamInputError(field, f"records must have arity p = {domain.p}", arr.shape[1])
    if arr.dtype == np.bool_ or not (np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)):
        raise DPStreamInputError(field, "attribute values must be integer codes", arr.dtype)
    if np.issubdtype(arr.dtype, np.floating) and not (np.all(np.isfinite(arr)) and np.all(arr == np.round(arr))):
        raise DPStreamInputError(field, "attribute values must be integer codes", "non-integer value")
    sizes = np.asarray(domain.sizes, dtype=np.int64)
    bad = (arr < 0) | (arr >= sizes[None, :])  # before the cast: a code beyond int64 must not wrap into range
    if np.any(bad):
        row, col = (int(v) for v in np.argwhere(bad)[0])
        raise DPStreamInputError(
            field,
            f"value of attribute {domain.names[col]!r} must lie in 0..{domain.sizes[col] - 1} "
            "(unknown attribute value or record outside the domain)",
            int(arr[row, col]),
        )
    return arr.astype(np.int64)
