"""Query helpers of 002: fixed-window histogram queries, cumulative queries c_b^t, poverty queries.

* A :class:`WindowQuery` of width w is q(x^{t-w+1}, ..., x^t) = sum_s w_s [window = s]
  (002-sec2.1 fixed time window queries q_s^t, and their linear combinations, section 1).
  For w <= k it is a linear combination of the synthesizer's width-k histogram p^t
  (:meth:`WindowQuery.lift`), which is how Theorem 3.2 carries over to it.
* :class:`CumulativeQuery` is c_b^t(x) = [x^1 + ... + x^t >= b] (002-sec2.1).
* :func:`poverty_queries` are the four quarterly queries of section 5: in poverty at least one
  month, at least two months, two consecutive months, all three months of the window.

Answers are counts (sum over records); divide by n for the paper's fractions. Debiasing
(002-debias) subtracts the answer of the padding population (:mod:`dpstream.longitudinal.padding`);
for width <= k that is exactly n_pad * sum_s w_s lifted, the paper's "subtract n_pad".
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from dpstream.errors import DPStreamInputError, require_finite_real, require_int_at_least
from dpstream.longitudinal.data import pattern_code, pattern_string, window_codes
from dpstream.longitudinal.padding import padding_matrix

__all__ = [
    "CumulativeQuery",
    "WindowQuery",
    "debiased_answer",
    "histogram_queries",
    "poverty_queries",
]


@dataclass(frozen=True)
class WindowQuery:
    """q = sum_s weights[s] [window of width ``width`` ending at t = s]; ``weights`` keyed by pattern strings."""

    width: int
    weights: Mapping[str, float]
    name: str = ""
    alphabet: int = 2
    _codes: tuple[tuple[int, float], ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        require_int_at_least("width", self.width, 1)
        codes = []
        for s, w in self.weights.items():
            if len(s) != self.width:
                raise DPStreamInputError("weights", f"patterns must have width {self.width}", s)
            codes.append((pattern_code(s, self.alphabet), require_finite_real("weights", w)))
        object.__setattr__(self, "_codes", tuple(codes))

    @classmethod
    def indicator(cls, pattern: str, alphabet: int = 2) -> WindowQuery:
        """q_s^t itself: the window equals ``pattern``."""
        return cls(len(pattern), {pattern: 1.0}, name=f"window={pattern}", alphabet=alphabet)

    @classmethod
    def from_predicate(cls, width: int, predicate: object, name: str = "", alphabet: int = 2) -> WindowQuery:
        """Indicator of ``predicate(pattern tuple) -> bool`` over all width-``width`` patterns."""
        if not callable(predicate):
            raise DPStreamInputError("predicate", "must be callable", predicate)
        weights = {"".join(map(str, s)): 1.0 for s in itertools.product(range(alphabet), repeat=width)
                   if predicate(s)}
        return cls(width, weights, name=name, alphabet=alphabet)

    def answer(self, matrix: npt.ArrayLike, t: int) -> float:
        """sum_i q(window of record i ending at t) on a records x rounds matrix (1-based t >= width)."""
        codes = window_codes(matrix, t, self.width, self.alphabet)
        counts = np.bincount(codes, minlength=self.alphabet**self.width)
        return float(sum(w * counts[c] for c, w in self._codes))

    def lift(self, k: int) -> dict[int, float]:
        """Weights over the width-k bins (codes) whose suffix is the window: needs width <= k."""
        k = require_int_at_least("k", k, 1)
        if self.width > k:
            raise DPStreamInputError("width", f"must be <= k = {k} to be a combination of width-k bins", self.width)
        A = self.alphabet
        out: dict[int, float] = {}
        for c, w in self._codes:
            for prefix in range(A ** (k - self.width)):
                code = prefix * A**self.width + c
                out[code] = out.get(code, 0.0) + w
        return out

    def from_histogram(self, p: npt.ArrayLike, k: int) -> float:
        """The answer at the end of the window, read off a width-k histogram (p^t of Alg 1)."""
        hist = np.asarray(p, dtype=np.float64)
        return float(sum(w * hist[c] for c, w in self.lift(k).items()))

    def padding_answer(self, k: int, n_pad: int) -> float:
        """Answer of the padding population (the same at every t >= max(k, width))."""
        T = max(k, self.width)
        return self.answer(padding_matrix(k, T, n_pad, self.alphabet), T)


@dataclass(frozen=True)
class CumulativeQuery:
    """c_b^t(x) = [x^1 + ... + x^t >= b] (002-sec2.1 cumulative time queries)."""

    b: int

    def __post_init__(self) -> None:
        require_int_at_least("b", self.b, 0)

    def answer(self, matrix: npt.ArrayLike, t: int) -> float:
        """#{records with Hamming weight >= b after t rounds} (1-based t; t = 0 gives the empty prefix)."""
        m = np.asarray(matrix, dtype=np.int64)
        if not 0 <= t <= m.shape[1]:
            raise DPStreamInputError("t", f"must lie in 0..{m.shape[1]}", t)
        return float(np.count_nonzero(m[:, :t].sum(axis=1) >= self.b))


def histogram_queries(width: int, alphabet: int = 2) -> list[WindowQuery]:
    """All indicators q_s of width ``width`` (the fixed time window query class)."""
    return [WindowQuery.indicator(pattern_string(c, width, alphabet), alphabet) for c in range(alphabet**width)]


def poverty_queries(width: int = 3) -> dict[str, WindowQuery]:
    """Section 5's quarterly queries over a window of ``width`` months (1 = in poverty that month)."""
    return {
        "at least one month": WindowQuery.from_predicate(width, lambda s: sum(s) >= 1, "at least one month"),
        "at least two months": WindowQuery.from_predicate(width, lambda s: sum(s) >= 2, "at least two months"),
        "two consecutive months": WindowQuery.from_predicate(
            width, lambda s: any(a == b == 1 for a, b in itertools.pairwise(s)), "two consecutive months"),
        "all months": WindowQuery.from_predicate(width, lambda s: all(v == 1 for v in s), "all months"),
    }


def debiased_answer(query: WindowQuery, synthetic: npt.ArrayLike, t: int, k: int, n_pad: int) -> float:
    """002-debias / Appendix C: answer on the synthetic data minus the answer on the padding data.

    ``synthetic`` is the m x t' matrix released by Algorithm 1 (its columns are rounds 1..t').
    """
    return query.answer(synthetic, t) - query.padding_answer(k, n_pad)
