"""The paper's release models of the linear counters: which noise enters which release.

Each builder writes a counter's :class:`~dpstream.audit.linear_model.LinearReleaseModel` (sites, laws,
statistics S, combination W) from the pseudocode and the proof, independently of the streaming class in
:mod:`dpstream.counters`; the unit tests replay a tape through the class and check ``release - mean = W z``,
the audits compute exact losses from the model (:mod:`dpstream.audit.counters.loss`,
:func:`dpstream.audit.exact.exact_loss_linear`), and :class:`dpstream.audit.vectorised.LinearModelSampler`
draws many runs from it. The catalog's ``Entry.model`` fields point here.

* 001-alg8 :func:`simple_counter_model`; 001-alg9 :func:`block_counter_model`;
* 001-alg10 / 004-lem3.1 :func:`binary_tree_counter_model` and 002-alg3 :func:`tree_aggregation_model`, both
  :func:`dyadic_tree_model` (the tree over :func:`dyadic_cover`);
* 003-alg4 :func:`unbounded_block_model` (partition rule :func:`unbounded_block_schedule`);
* the hybrid mechanism :func:`hybrid_counter_model`; 001-sec4.3 :func:`multidimensional_model`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from dpstream.audit.linear_model import LinearReleaseModel, NoiseLaw
from dpstream.counters.binary_tree import binary_tree_scale
from dpstream.counters.hybrid import HYBRID_ANCHOR
from dpstream.counters.multidim import MULTIDIM_ANCHOR
from dpstream.counters.tree_aggregation import tree_aggregation_sigma2
from dpstream.errors import DPStreamInputError, require_int_at_least, require_positive_finite
from dpstream.noise import site

__all__ = [
    "binary_tree_counter_model",
    "block_counter_model",
    "dyadic_cover",
    "dyadic_tree_model",
    "hybrid_counter_model",
    "multidimensional_model",
    "simple_counter_model",
    "tree_aggregation_model",
    "unbounded_block_model",
    "unbounded_block_schedule",
]


def simple_counter_model(epsilon: float, T: int) -> LinearReleaseModel:
    """The paper's model of 001-alg8 over horizon T: statistic j is f(j) + z_j, g(t) = sum_{j<=t} s_j."""
    epsilon = require_positive_finite("epsilon", epsilon)
    T = require_int_at_least("T", T, 1)
    law = NoiseLaw.laplace(1.0 / epsilon)
    terms = [(site("001-alg8 L4", t=j), law, {j - 1: 1.0}) for j in range(1, T + 1)]
    releases = [{j: 1.0 for j in range(t)} for t in range(1, T + 1)]
    return LinearReleaseModel.build(terms, releases, T)


def block_counter_model(epsilon: float, B: int, T: int) -> LinearReleaseModel:
    """The model of 001-alg9 over T steps: a block statistic at each t = kB (sum over ((k-1)B, kB]),
    an in-block statistic f(t) at every other t, all Lap(2/eps); release t = all block statistics
    up to floor(t/B) B plus the in-block statistics after it."""
    epsilon = require_positive_finite("epsilon", epsilon)
    B = require_int_at_least("B", B, 1)
    T = require_int_at_least("T", T, 1)
    law = NoiseLaw.laplace(2.0 / epsilon)
    terms: list[tuple[str, NoiseLaw, dict[int, float]]] = []
    index: dict[int, int] = {}
    for t in range(1, T + 1):
        index[t] = len(terms)
        if t % B == 0:
            terms.append((site("001-alg9 L7", t=t), law, {i - 1: 1.0 for i in range(t - B + 1, t + 1)}))
        else:
            terms.append((site("001-alg9 L10", t=t), law, {t - 1: 1.0}))
    rows: list[dict[int, float]] = []
    for t in range(1, T + 1):
        last = (t // B) * B
        row = {index[k * B]: 1.0 for k in range(1, t // B + 1)}
        row.update({index[j]: 1.0 for j in range(last + 1, t + 1)})
        rows.append(row)
    return LinearReleaseModel.build(terms, rows, T)


def dyadic_cover(t: int) -> list[int]:
    """The nodes t, t - lsb(t), t - lsb(t) - lsb(...), ... (> 0): the greedy dyadic cover of [1, t]."""
    cover = []
    while t > 0:
        cover.append(t)
        t -= t & -t
    return cover


def dyadic_tree_model(draw_line: str, law: NoiseLaw, T: int, releases: int | None) -> LinearReleaseModel:
    """The tree shared by 001-alg10 and 002-alg3, over horizon T (first ``releases`` releases, default T).

    Derived from the tree, not from the streaming code: node u (one per time step, drawn at
    ``site(draw_line, t=u)`` with ``law``) is the noisy p-sum of the dyadic interval (u - lsb(u), u];
    release t is the sum of the nodes of :func:`dyadic_cover` (t).
    """
    n_rel = T if releases is None else require_int_at_least("releases", releases, 0)
    if n_rel > T:
        raise DPStreamInputError("releases", f"must be <= T = {T}", releases)
    terms = [(site(draw_line, t=u), law, {i - 1: 1.0 for i in range(u - (u & -u) + 1, u + 1)})
             for u in range(1, n_rel + 1)]
    rows = [{u - 1: 1.0 for u in dyadic_cover(t)} for t in range(1, n_rel + 1)]
    return LinearReleaseModel.build(terms, rows, n_rel)


def binary_tree_counter_model(
    epsilon: float, T: int, *, discrete: bool = False, as_printed: bool = False, releases: int | None = None
) -> LinearReleaseModel:
    """The paper's model of 001-alg10 over horizon T (first ``releases`` releases, default T):
    :func:`dyadic_tree_model` with (discrete) Laplace nodes of scale :func:`binary_tree_scale`."""
    scale = binary_tree_scale(epsilon, T, as_printed=as_printed)
    law = NoiseLaw.discrete_laplace(scale) if discrete else NoiseLaw.laplace(scale)
    return dyadic_tree_model("001-alg10 L8", law, T, releases)


def tree_aggregation_model(
    rho: float, T: int, *, as_printed: bool = False, releases: int | None = None
) -> LinearReleaseModel:
    """The model of 002-alg3 over horizon T: the tree of 001-alg10 (:func:`dyadic_tree_model`: node t =
    noisy sum over (t - lsb(t), t], release t = the nodes of the dyadic cover of [1, t]) with N_Z nodes."""
    sigma2 = tree_aggregation_sigma2(rho, T, as_printed=as_printed)
    return dyadic_tree_model("002-alg3 u8", NoiseLaw.discrete_gaussian(sigma2), T, releases)


def unbounded_block_schedule(T: int) -> list[tuple[bool, int]]:
    """For t = 1..T: (is t a block end, start time of its block), from the partition rule alone:
    partitions of lengths 4, 9, 16, ... with block sizes 2, 3, 4, ..."""
    T = require_int_at_least("T", T, 1)
    out: list[tuple[bool, int]] = []
    start, size = 1, 2
    while len(out) < T:
        for k in range(size):  # the size blocks of this partition
            block_start = start + k * size
            for offset in range(size):
                out.append((offset == size - 1, block_start))
        start += size * size
        size += 1
    return out[:T]


def unbounded_block_model(epsilon: float, T: int) -> LinearReleaseModel:
    """The model of 003-alg4 over T steps: at a block end a Lap(2/eps) block-sum statistic
    (site L14), elsewhere an in-block statistic f(t) + Lap(2/eps) (site L21); release t = all
    block sums so far + the in-block statistics of the current block up to t."""
    epsilon = require_positive_finite("epsilon", epsilon)
    law = NoiseLaw.laplace(2.0 / epsilon)
    schedule = unbounded_block_schedule(T)
    terms: list[tuple[str, NoiseLaw, dict[int, float]]] = []
    blocks: list[int] = []
    rows: list[dict[int, float]] = []
    for t, (is_end, block_start) in enumerate(schedule, start=1):
        if is_end:
            blocks.append(len(terms))
            terms.append((site("003-alg4 L14", t=t), law, {i - 1: 1.0 for i in range(block_start, t + 1)}))
            rows.append(dict.fromkeys(blocks, 1.0))
        else:
            terms.append((site("003-alg4 L21", t=t), law, {t - 1: 1.0}))
            row = dict.fromkeys(blocks, 1.0)
            row.update({j - 1: 1.0 for j in range(block_start, t + 1)})  # term of time j has index j - 1
            rows.append(row)
    return LinearReleaseModel.build(terms, rows, T)


def hybrid_counter_model(epsilon: float, T: int) -> LinearReleaseModel:
    """The model of the hybrid mechanism over T steps, derived from the construction:
    an L statistic (sum over (2^(k-1), 2^k], Lap(2/eps)) at each power of two; at
    t = 2^k + tau (0 < tau < 2^k) the B_k node over global times (2^k + tau - lsb(tau), 2^k + tau]
    with Lap(2k/eps); release t = all L statistics up to 2^k + the B_k nodes of the dyadic
    cover tau, tau - lsb(tau), ... of [1, tau]."""
    epsilon = require_positive_finite("epsilon", epsilon)
    T = require_int_at_least("T", T, 1)
    terms: list[tuple[str, NoiseLaw, dict[int, float]]] = []
    l_terms: list[int] = []
    rows: list[dict[int, float]] = []
    index: dict[int, int] = {}
    for t in range(1, T + 1):
        index[t] = len(terms)
        k = t.bit_length() - 1
        if t == 2**k:
            lo = 2 ** (k - 1) if k >= 1 else 0
            terms.append((f"{HYBRID_ANCHOR} L t={t}", NoiseLaw.laplace(2.0 / epsilon),
                          {i - 1: 1.0 for i in range(lo + 1, t + 1)}))
            l_terms.append(index[t])
            rows.append(dict.fromkeys(l_terms, 1.0))
        else:
            tau = t - 2**k
            low = tau & -tau
            terms.append((f"{HYBRID_ANCHOR} B k={k} / 001-alg10 L8 t={tau}", NoiseLaw.laplace(2.0 * k / epsilon),
                          {2**k + i - 1: 1.0 for i in range(tau - low + 1, tau + 1)}))
            row = dict.fromkeys(l_terms, 1.0)
            row.update({index[2**k + u]: 1.0 for u in dyadic_cover(tau)})
            rows.append(row)
    return LinearReleaseModel.build(terms, rows, T)


def multidimensional_model(models: Sequence[LinearReleaseModel]) -> LinearReleaseModel:
    """Block-diagonal model of d independent counters with models ``models`` (same length T),
    sites scoped as by :meth:`MultiDimensionalCounter.build`. Input and releases are flattened
    time-major: index (t - 1) * d + i is coordinate i at time t."""
    models = list(models)
    if not models:
        raise DPStreamInputError("models", "must be non-empty", models)
    T = models[0].input_length
    if any(m.input_length != T or m.n_releases != T for m in models):
        raise DPStreamInputError("models", "must all have input length and release count T", T)
    d = len(models)
    m_total = sum(len(m.sites) for m in models)
    S = np.zeros((m_total, T * d))
    W = np.zeros((T * d, m_total))
    sites: list[str] = []
    laws: list[NoiseLaw] = []
    offset = 0
    for i, m in enumerate(models):
        k = len(m.sites)
        sites.extend(f"{site(MULTIDIM_ANCHOR, i=i)} / {s}" for s in m.sites)
        laws.extend(m.laws)
        S[offset:offset + k, i::d] = m.statistics
        W[i::d, offset:offset + k] = m.combination
        offset += k
    return LinearReleaseModel(tuple(sites), tuple(laws), S, W)


