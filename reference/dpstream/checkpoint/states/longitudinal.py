"""Documented states of the longitudinal synthesizers (paper 002, docs/longitudinal.md): the fixed time window
synthesizer 002-alg1 (binary and categorical) and the cumulative synthesizer 002-alg2. Patterns of k symbols are
written as their codes (base A, the oldest symbol first), as in ``dpstream.longitudinal.data``."""

from __future__ import annotations

import numpy as np

from dpstream.checkpoint.kinds import (
    COUNT,
    NUMBER,
    POSITIVE,
    STR,
    Array,
    ComponentList,
    Function,
    Int,
    ListOf,
    Nullable,
    Real,
    Record,
    TupleOf,
)
from dpstream.checkpoint.spec import Field, StateSpec, require
from dpstream.checkpoint.states.common import AS_PRINTED, T_STEPS, check_steps
from dpstream.longitudinal.categorical import CategoricalFixedWindowSynthesizer
from dpstream.longitudinal.cumulative import CumulativeRelease, CumulativeSynthesizer
from dpstream.longitudinal.fixed_window import FixedWindowSynthesizer, PaddingExhaustedError

__all__ = ["SPECS"]

FAMILY = "longitudinal"

FROZEN = Array("int64", 1, writeable=False)
FAILURE = Record(PaddingExhaustedError, (("t", Int(1)), ("pattern", STR), ("value", Int()), ("n_pad", COUNT)),
                 name="PaddingExhausted")


def _window_params(categorical: bool) -> tuple[Field, ...]:
    return (
        Field("T", Int(1), "time horizon T"),
        Field("k", Int(1), "window length k (1 <= k <= T)"),
        Field("rho", POSITIVE, "zCDP budget rho"),
        *((Field("alphabet", Int(2, 10), "alphabet size A (symbols 0..A-1)"),) if categorical else ()),
        Field("n_pad", COUNT, "padding n_pad added to every bin (default: Corollary 3.3 at failure probability beta)"),
        Field("beta", Real(positive=True), "failure probability beta of the default n_pad"),
        AS_PRINTED,
    )


WINDOW_VARIABLES = (
    T_STEPS,
    Field("n", Nullable(COUNT), "n, the number of individuals (fixed by the first column; null before it)"),
    Field("failure", Nullable(FAILURE), "the padding-exhausted failure (E-longitudinal-3; null: none); a failed "
                                        "synthesizer stays failed"),
    Field("true_suffix", Nullable(Array("int64", 1)), "each individual's last k-1 TRUE symbols, as a pattern code",
          attr="_true_suffix"),
    Field("syn_suffix", Nullable(FROZEN), "each synthetic record's last k-1 symbols, as a pattern code (from t = k)",
          attr="_syn_suffix"),
    Field("columns", ListOf(FROZEN), "the synthetic columns released so far (m records each; from t = k)",
          attr="_columns"),
    Field("p_history", ListOf(FROZEN), "p^k, ..., p^t: the synthetic histograms of the k-symbol patterns"),
)


def _check_window(o: FixedWindowSynthesizer) -> None:
    """t <= T; n is fixed from t = 1; one true suffix code in [0, A^(k-1)) per individual; one histogram per round
    k..t and one synthetic column per round from t = k; every column has m symbols of the alphabet; every p^s has
    A^k counts >= 0 summing to m; a failure is that of round t + 1."""
    check_steps(o.t, o.T, None)
    A, k, t = o.alphabet, o.k, o.t
    require(t == 0 or o.n is not None, "n is fixed by the first column")
    require((o._true_suffix is None) == (t == 0), "the true suffixes exist from t = 1 on")
    if o._true_suffix is not None:
        require(o.n == len(o._true_suffix) and bool(np.all((o._true_suffix >= 0) & (o._true_suffix < A ** (k - 1)))),
                "one true suffix code in [0, A^(k-1)) per individual")
    require(len(o.p_history) == (t - k + 1 if t >= k else 0), "one histogram p^s per round s = k..t")
    require(len(o._columns) == (t if t >= k else 0), "one synthetic column per round once t >= k")
    require((o._syn_suffix is None) == (t < k), "the synthetic records exist from t = k on")
    if o._syn_suffix is not None:
        m = len(o._syn_suffix)
        require(all(len(c) == m and bool(np.all((c >= 0) & (c < A))) for c in o._columns),
                "every synthetic column has m symbols of the alphabet")
        require(all(len(p) == A**k and bool(np.all(p >= 0)) and int(p.sum()) == m for p in o.p_history),
                "every p^s has A^k counts >= 0 summing to m")
    if o.failure is not None:
        require(o.failure.t == t + 1, "a failure happens in the round after the last one completed")


FIXED_WINDOW = StateSpec(
    FixedWindowSynthesizer, FAMILY, "002-alg1",
    "Fixed time window synthesizer: noisy k-window histograms, m persistent synthetic records extended by one bit "
    "per round.",
    params=_window_params(False),
    derived=(Field("sigma2", POSITIVE, "variance sigma^2 of the discrete Gaussian per bin and round (u3)"),),
    variables=WINDOW_VARIABLES,
    check=_check_window,
)

CATEGORICAL_WINDOW = StateSpec(
    CategoricalFixedWindowSynthesizer, FAMILY, "002-alg1 over an alphabet of A symbols",
    "The fixed time window synthesizer over the alphabet {0, ..., A-1} (A = 2 is 002-alg1).",
    params=_window_params(True),
    derived=FIXED_WINDOW.derived,
    variables=WINDOW_VARIABLES,
    check=_check_window,
)

CUMULATIVE_RELEASE = Record(CumulativeRelease, (("t", Int(1)), ("column", FROZEN), ("S_hat", FROZEN),
                                                 ("S_tilde", TupleOf(NUMBER))))


def _check_cumulative(o: CumulativeSynthesizer) -> None:
    """t <= T; one counter M_b per round, M_b having read rounds b..t; one release and one column per round; weights
    in [0, t]; S^_0 = n, S^ non-increasing in b and equal to the number of synthetic records of weight >= b."""
    check_steps(o.t, o.T, o.history)
    t = o.t
    require(len(o.counters) == t, "one counter M_b per round b = 1..t")
    require(all(c.t == t - b for b, c in enumerate(o.counters)), "M_b has read rounds b..t")
    require([h.t for h in o.history] == list(range(1, t + 1)), "one release per round")
    require(len(o._columns) == t and all(c is not None for c in o._columns), "one synthetic column per round")
    if t == 0:
        require(o._weights is None and o._syn_weights is None and o._S_hat == [], "nothing before the first round")
        return
    n = o.n
    require(n is not None, "n is fixed by the first column")
    for name in ("_weights", "_syn_weights"):
        w = getattr(o, name)
        require(w is not None and len(w) == n and bool(np.all((w >= 0) & (w <= t))), f"{name[1:]}: in [0, t]")
    require(len(o._S_hat) == t + 1 and o._S_hat[0] == n, "S^_b^t for b = 0..t, S^_0 = n")
    require(all(a >= b >= 0 for a, b in zip(o._S_hat, o._S_hat[1:], strict=False)), "S^_b^t is non-increasing in b")
    syn = o._syn_weights
    assert syn is not None
    require(all(int((syn >= b).sum()) == s for b, s in enumerate(o._S_hat)),
            "S^_b^t counts the synthetic records of weight >= b")
    require(all(bool(np.array_equal(c, h.column)) for c, h in zip(o._columns, o.history, strict=True)),
            "the columns are the releases'")


CUMULATIVE = StateSpec(
    CumulativeSynthesizer, FAMILY, "002-alg2",
    "Cumulative synthesizer: a counter M_b per weight b, monotonized counts, n persistent synthetic records.",
    params=(
        Field("T", Int(1), "time upper bound T"),
        Field("rho", POSITIVE, "total zCDP budget rho"),
        Field("rho_b", TupleOf(POSITIVE), "the budgets rho_1, ..., rho_T of the counters (sum rho)"),
        Field("counter_factory", Function(), "the counter M's factory (rho_b, horizon, noise) -> counter"),
        Field("substitution_factor", Real(positive=True), "what a substitution costs a counter, in units of one "
                                                          "change (E-longitudinal-7)"),
        AS_PRINTED,
    ),
    derived=(Field("counter_rho", TupleOf(POSITIVE), "the budget handed to counter b: rho_b / substitution_factor "
                                                     "(as printed: rho_b)"),),
    variables=(
        T_STEPS,
        Field("n", Nullable(COUNT), "n, the number of individuals (fixed by the first column)"),
        Field("counters", ComponentList(lambda o, i: o.new_counter(i + 1), "list of counter states"),
              "M_1, ..., M_t: counter b counts z_b (horizon T - b + 1, scope \"002-alg2 u5 b=<b>\")"),
        Field("weights", Nullable(FROZEN), "each individual's TRUE weight x_i^1 + ... + x_i^t", attr="_weights"),
        Field("syn_weights", Nullable(FROZEN), "each synthetic record's weight", attr="_syn_weights"),
        Field("S_hat", ListOf(COUNT), "S^_b^t for b = 0..t (S^_0 = n)", attr="_S_hat"),
        Field("columns", ListOf(FROZEN), "the synthetic columns D^^1, ..., D^^t", attr="_columns"),
        Field("history", ListOf(CUMULATIVE_RELEASE), "the releases (t, D^^t, S^^t, the counters' raw S~^t)"),
    ),
    check=_check_cumulative,
)

SPECS = (FIXED_WINDOW, CATEGORICAL_WINDOW, CUMULATIVE)

