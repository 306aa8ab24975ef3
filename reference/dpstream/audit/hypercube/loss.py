"""Exact privacy loss of sparse counting (004-alg2), inhomogeneous sparse counting (004-alg3)
and online synthetic data (004-alg1) on small neighbouring streams.

The numbers here check the proofs of 004-lem3.2, 004-lem3.3 and 004-prop4.1 / 004-prop5.1
without randomness; they are computed from the paper's description of the algorithms
(:class:`SparseLaw`), never from a run.

**The view of 004-alg2.** A run on X_1..X_n (n <= T steps) is summarised by its *view*: the
segment ends pi (which tests failed) and the noisy nodes of A_sub. The releases N~_t are a
function of the view, so the loss of the releases is at most the loss of the view computed
here (post-processing). Given pi, the segments are independent AboveThreshold runs:

    P(segment started after time s ends at the test of time u)
      = sum_lambda p(lambda) prod_{v < u} F(floor(T_0) + lambda - C(s, v)) * S(floor(T_0) + lambda - C(s, u))

with C(s, v) = X_{s+1} + ... + X_v, p the Lap_Z(2/eps) pmf of the threshold noise, F and S the
cdf and survival function of the test noise (test "N + lambda' <= T~" passes iff
lambda' <= floor(T_0) + lambda - N). An open segment has the product of F's only. Only the
segment containing the changed time tau depends on X_tau. Given pi, the segment counts fed to
A_sub differ in at most one entry k (the segment of tau, when it ended), by 1; the sup over
A_sub's outputs of the log ratio is sum over the Binary Mechanism nodes containing input k
(after m inputs) of 1/scale (:func:`dpstream.audit.counters.loss`-style, from the counters'
:func:`~dpstream.audit.counters.models.binary_tree_counter_model`). Hence

    sup_view log P_X(view)/P_X'(view) = max_pi [ log P_X(seg_tau(pi)) - log P_X'(seg_tau(pi)) + sub_k,m(pi) ].

The threshold sum is truncated to |lambda| <= L; the omitted mass delta = 2 p^{L+1}/(1+p) gives
rigorous bounds P_trunc <= P <= P_trunc + delta, so every loss is reported as an interval, an
:class:`~dpstream.audit.exact.ExactLoss` [lower, upper] (upper - lower is ~1e-14 or less with the default L).

**004-alg3** adds the level of tau: loss = (view loss of that level's 004-alg2 instance with
eps_r/2, observed steps only) + eps_r/2 if the level has ended (the S~ update adds
Lap_Z(2/eps_r) to a sum of sensitivity 1). Other levels do not read X_tau.

**004-alg1**: the counters are independent mechanisms; the loss of the joint view is the sum
over regions whose input stream differs of their 004-alg3 loss. :func:`online_view_loss`
reads each region's parameters and input stream from a run of the implementation
(:class:`RecordingRegionCounter`), so a wrongly wired implementation (wrong r0, wrong
budgets, a point fed to the wrong regions) is caught, not only a wrong proof.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from functools import cached_property, lru_cache
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from dpstream.audit.counters.models import binary_tree_counter_model
from dpstream.audit.exact import ExactLoss
from dpstream.counters.base import Counter
from dpstream.counters.sparse import InhomogeneousSparseCounter, level_start, sparse_threshold
from dpstream.errors import DPStreamInputError, require_int_at_least, require_positive_finite
from dpstream.hypercube.online import RegionCounterFactory
from dpstream.hypercube.partition import Region
from dpstream.insecure import InsecureZeroNoise
from dpstream.noise import NoiseSource
from dpstream.staged import Staged, Staging

__all__ = [
    "Alg1",
    "Alg1Maker",
    "RecordingRegionCounter",
    "SparseLaw",
    "binary_mechanism_losses",
    "boolean_pairs",
    "dlap_cdf",
    "dlap_pmf",
    "dlap_sf",
    "dlap_tail_mass",
    "inhomogeneous_view_loss",
    "online_view_loss",
    "record_wiring",
    "segment_end_patterns",
    "segments_of",
    "sparse_view_loss",
]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


# --- the integer Laplace law of 004-sec2.4 -------------------------------------------------------


def _p(scale: float) -> float:
    return math.exp(-1.0 / scale)


def dlap_pmf(z: IntArray, scale: float) -> FloatArray:
    """(1-p)/(1+p) p^|z|, p = exp(-1/scale) (004-sec2.4)."""
    p = _p(scale)
    return np.asarray((1.0 - p) / (1.0 + p) * np.power(p, np.abs(z).astype(np.float64)), dtype=np.float64)


def dlap_cdf(a: IntArray, scale: float) -> FloatArray:
    """P(Z <= a): 1 - p^{a+1}/(1+p) for a >= 0, p^{-a}/(1+p) for a < 0 (no cancellation)."""
    p = _p(scale)
    af = a.astype(np.float64)
    return np.asarray(np.where(a >= 0, 1.0 - np.power(p, np.maximum(af, 0.0) + 1.0) / (1.0 + p),
                               np.power(p, np.maximum(-af, 0.0)) / (1.0 + p)), dtype=np.float64)


def dlap_sf(a: IntArray, scale: float) -> FloatArray:
    """P(Z > a) = 1 - cdf, computed without cancellation."""
    p = _p(scale)
    af = a.astype(np.float64)
    return np.asarray(np.where(a >= 0, np.power(p, np.maximum(af, 0.0) + 1.0) / (1.0 + p),
                               1.0 - np.power(p, np.maximum(-af, 0.0)) / (1.0 + p)), dtype=np.float64)


def dlap_tail_mass(L: int, scale: float) -> float:
    """P(|Z| > L) = 2 p^{L+1} / (1+p)."""
    p = _p(scale)
    return 2.0 * p ** (L + 1) / (1.0 + p)


# --- 004-alg2 --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SparseLaw:
    """The law of 004-alg2 with horizon T: threshold and test noise Lap_Z(scale), T_0, A_sub's node losses.

    :meth:`printed` gives the paper's parameters; the fields can be changed to express
    variants (e.g. a broken one with a halved test scale) for the audits' own tests.
    ``empty_tests``: a new segment is tested before reading any input (the printed loop).
    ``sub_loss[m][k]``: sup log ratio of A_sub's view after m inputs when input k (1-based) moves by 1.
    """

    T: int
    T0: float
    threshold_scale: float
    test_scale: float
    sub_loss: tuple[tuple[float, ...], ...]
    empty_tests: bool = False
    L: int = 0

    def __post_init__(self) -> None:
        require_int_at_least("T", self.T, 1)
        require_positive_finite("threshold_scale", self.threshold_scale)
        require_positive_finite("test_scale", self.test_scale)
        if self.L == 0:
            # |lambda| <= L keeps the omitted threshold mass below e^-60 relative to any probability >= e^-20
            object.__setattr__(self, "L", math.ceil(80.0 * self.threshold_scale) + self.T + 2)

    @classmethod
    def printed(cls, epsilon: float, T: int, *, as_printed: bool = False, sub_as_printed: bool = False) -> SparseLaw:
        """004-alg2 with eps: T_0 = 9 log T/eps, Lap_Z(2/eps) twice, A_sub = Binary Mechanism(eps/2, T)."""
        epsilon = require_positive_finite("epsilon", epsilon)
        T = require_int_at_least("T", T, 1)
        return _printed_law(epsilon, T, bool(as_printed), bool(sub_as_printed))

    def divided(self, c: float) -> SparseLaw:
        """The law with every noise scale divided by ``c`` (a planted ``scale/<c>``): the thresholds' and the
        tests' Lap_Z scales, and A_sub's node losses multiplied by ``c``; T_0 kept."""
        c = require_positive_finite("c", c)
        return replace(self, threshold_scale=self.threshold_scale / c, test_scale=self.test_scale / c,
                       sub_loss=tuple(tuple(v * c for v in row) for row in self.sub_loss), L=0)

    @cached_property
    def lambdas(self) -> IntArray:
        return np.arange(-self.L, self.L + 1, dtype=np.int64)

    @cached_property
    def threshold_pmf(self) -> FloatArray:
        return dlap_pmf(self.lambdas, self.threshold_scale)

    @property
    def delta(self) -> float:
        """Omitted threshold mass P(|lambda| > L)."""
        return dlap_tail_mass(self.L, self.threshold_scale)

    def segment_probability(self, counts: tuple[int, ...], ended: bool) -> float:
        """Truncated P(a segment's tests see ``counts`` in order and all pass, except the last if ``ended``).

        ``counts[i]`` is the segment's count at its i-th test; the test passes iff
        lambda' <= floor(T_0) + lambda - count.
        """
        key = (counts, ended)
        cache: dict[tuple[tuple[int, ...], bool], float] = self.__dict__.setdefault("_cache", {})
        if key not in cache:
            base = math.floor(self.T0) + self.lambdas
            prob = self.threshold_pmf.copy()
            passing = counts[:-1] if ended else counts
            for c in passing:
                prob *= dlap_cdf(base - c, self.test_scale)
            if ended:
                prob *= dlap_sf(base - counts[-1], self.test_scale)
            cache[key] = float(prob.sum())
        return cache[key]


@lru_cache(maxsize=256)
def _printed_law(epsilon: float, T: int, as_printed: bool, sub_as_printed: bool) -> SparseLaw:
    # cached: the law (and its cache of segment probabilities) is shared by every pair audited with it
    return SparseLaw(T, sparse_threshold(epsilon, T), 2.0 / epsilon, 2.0 / epsilon,
                     binary_mechanism_losses(epsilon / 2.0, T, as_printed=sub_as_printed), empty_tests=as_printed)


def binary_mechanism_losses(epsilon: float, T: int, *, as_printed: bool = False) -> tuple[tuple[float, ...], ...]:
    """sub_loss[m][k-1]: sum over the nodes of the Binary Mechanism's first m steps containing input k of 1/scale."""
    table: list[tuple[float, ...]] = [()]
    for m in range(1, T + 1):
        model = binary_tree_counter_model(epsilon, T, discrete=True, as_printed=as_printed, releases=m)
        inv_b = np.array([1.0 / law.parameter for law in model.laws])
        table.append(tuple(float(v) for v in np.abs(model.statistics).T @ inv_b))
    return tuple(table)


def segment_end_patterns(n: int, empty_tests: bool, max_ends: int) -> Iterator[tuple[int, ...]]:
    """Segment-end times of the tests made in n steps: default {1..n-1} increasing, printed {0..n-1} non-decreasing."""
    if empty_tests:
        times = range(0, n)
        for m in range(0, max_ends + 1):
            yield from itertools.combinations_with_replacement(times, m)
    else:
        times = range(1, n)
        for m in range(0, min(max_ends, n - 1) + 1):
            yield from itertools.combinations(times, m)


def segments_of(ends: tuple[int, ...], n: int) -> list[tuple[int, int | None]]:
    """(start s, end u or None) of every segment: it reads X_{s+1}..X_u."""
    out: list[tuple[int, int | None]] = []
    s = 0
    for u in ends:
        out.append((s, u))
        s = u
    out.append((s, None))
    return out


def _check_pair(x: Sequence[int], x_prime: Sequence[int]) -> int:
    if len(x) != len(x_prime) or not x:
        raise DPStreamInputError("x_prime", "must have the same non-zero length as x", (len(x), len(x_prime)))
    if any(v not in (0, 1) for v in [*x, *x_prime]):
        raise DPStreamInputError("x", "must be Boolean sequences", (x, x_prime))
    diff = [i for i, (a, b) in enumerate(zip(x, x_prime, strict=True)) if a != b]
    if len(diff) > 1:
        raise DPStreamInputError("x_prime", "must differ from x in at most one entry", diff)
    return diff[0] + 1 if diff else 0


def sparse_view_loss(law: SparseLaw, x: Sequence[int], x_prime: Sequence[int]) -> ExactLoss:
    """Exact sup |log P_x(view) - log P_x'(view)| of 004-alg2 after n = len(x) <= T steps (both orders)."""
    tau = _check_pair(x, x_prime)
    n = len(x)
    if n > law.T:
        raise DPStreamInputError("x", f"length must be <= T = {law.T}", n)
    if tau == 0:
        return ExactLoss.zero("identical streams")
    delta = law.delta
    cache: dict[tuple[int, int | None], tuple[float, float]] = {}

    def log_ratio_bounds(s: int, u: int | None) -> tuple[float, float]:
        """Bounds of log P_x(seg) - log P_x'(seg) for the segment (s, u) containing tau."""
        if (s, u) not in cache:
            first = s if law.empty_tests else s + 1
            last = n - 1 if u is None else u  # tests are made at times first..last (<= n - 1)
            probs = []
            for stream in (x, x_prime):
                counts = tuple(sum(stream[s:v]) for v in range(first, last + 1))  # C(s, v) = X_{s+1}+...+X_v
                probs.append(law.segment_probability(counts, u is not None))
            px, pxp = probs
            cache[(s, u)] = (math.log(px) - math.log(pxp + delta), math.log(px + delta) - math.log(pxp))
        return cache[(s, u)]

    best_lo, best_hi, where = -math.inf, -math.inf, ""
    best_parts: dict[str, float] = {}
    partition_only = 0.0
    for ends in segment_end_patterns(n, law.empty_tests, law.T):
        segs = segments_of(ends, n)
        k = next(i for i, (s, u) in enumerate(segs) if s < tau and (u is None or u >= tau))
        s, u = segs[k]
        lo, hi = log_ratio_bounds(s, u)
        sub = law.sub_loss[len(ends)][k] if u is not None else 0.0
        partition_only = max(partition_only, hi, -lo)
        for direction_lo, direction_hi in ((lo, hi), (-hi, -lo)):
            best_lo = max(best_lo, direction_lo + sub)
            if direction_hi + sub > best_hi:
                best_hi = direction_hi + sub
                where = f"segment ends {list(ends)}, changed t={tau} in segment {k + 1}"
                best_parts = {"partition": direction_hi, "A_sub": sub}
    best_parts["partition_only_max"] = partition_only
    return ExactLoss(max(best_lo, 0.0), best_hi, where, best_parts)


def boolean_pairs(n: int) -> Iterator[tuple[tuple[int, ...], tuple[int, ...]]]:
    """Every (X, X') of Boolean streams of length n differing in exactly one entry, X < X' (X has the 0)."""
    for x in itertools.product((0, 1), repeat=n):
        for i in range(n):
            if x[i] == 0:
                y = list(x)
                y[i] = 1
                yield tuple(x), tuple(y)


# --- 004-alg3 --------------------------------------------------------------------------------------


def inhomogeneous_view_loss(
    epsilon: float,
    r0: int,
    eps_levels: Callable[[int], float],
    x: Sequence[int],
    x_prime: Sequence[int],
    *,
    first_time: int = 1,
    law: Callable[[float, int], SparseLaw] = SparseLaw.printed,
    factor: float = 1.0,
) -> ExactLoss:
    """Exact view loss of 004-alg3 on streams x, x' given from global time ``first_time`` on; with ``factor`` c,
    of the variant whose every noise scale is divided by c (the level's law :meth:`SparseLaw.divided`, S~'s update
    Lap_Z(2 / (c eps_r)))."""
    tau_local = _check_pair(x, x_prime)
    if tau_local == 0:
        return ExactLoss.zero("identical streams")
    tau = first_time + tau_local - 1
    t_max = first_time + len(x) - 1
    t_r0 = level_start(r0, epsilon)
    if tau < t_r0:
        return ExactLoss.zero(f"t={tau} before t_r0={t_r0}: not used")
    r = r0
    while level_start(r + 1, epsilon) <= tau:
        r += 1
    t_r, t_next = level_start(r, epsilon), level_start(r + 1, epsilon)
    eps_r = require_positive_finite(f"eps_levels({r})", eps_levels(r))
    lo_i, hi_i = t_r - first_time, min(t_next, t_max + 1) - first_time
    alg2 = sparse_view_loss(law(eps_r / 2.0, t_next - t_r).divided(factor), x[lo_i:hi_i], x_prime[lo_i:hi_i])
    s_term = factor * eps_r / 2.0 if t_max >= t_next else 0.0
    return ExactLoss(alg2.lower + s_term, alg2.upper + s_term,
                     f"level r={r} (eps_r={eps_r:.4g}): 004-alg2 {alg2.where}",
                     {"alg2": alg2.upper, "S_tilde": s_term, "eps_r": eps_r})


# --- 004-alg1 --------------------------------------------------------------------------------------


class RecordingRegionCounter(InhomogeneousSparseCounter):
    """004-alg3 that also records its parameters and every input (for :func:`online_view_loss`)."""

    def __init__(self, region: Region, epsilon: float, r0: int, eps_levels: Callable[[int], float],
                 noise: NoiseSource, first_time: int) -> None:
        super().__init__(epsilon, r0, eps_levels, noise=noise, first_time=first_time)
        self.region = region
        self.inputs: list[int] = []

    def staging(self, x: float) -> Staging[float]:
        return self._recorded(super().staging(x), x)  # the public staged step, validated now

    def _recorded(self, step: Staging[float], x: float) -> Staging[float]:
        staged = yield from step

        def commit_and_record() -> None:
            staged.commit()
            self.inputs.append(int(x))

        return Staged(staged.release, commit_and_record)


class Alg1(Protocol):
    """What :func:`online_view_loss` needs of an 004-alg1 implementation."""

    epsilon: float

    def step(self, x: Any) -> Any: ...


Alg1Maker = Callable[[RegionCounterFactory], Alg1]
"""Builds an 004-alg1 whose region counters come from the given factory."""


def record_wiring(make: Alg1Maker, points: Sequence[object]) -> dict[Region, RecordingRegionCounter]:
    """Run an 004-alg1 built by ``make(region_counter)`` on ``points``; return every region's recording counter."""
    made: dict[Region, RecordingRegionCounter] = {}
    holder: list[Alg1] = []

    def factory(region: Region, r0: int, eps_levels: Callable[[int], float], first: int,
                noise: NoiseSource) -> Counter:
        counter = RecordingRegionCounter(region, holder[0].epsilon, r0, eps_levels, noise, first)
        made[region] = counter
        return counter

    holder.append(make(factory))
    for p in points:
        holder[0].step(p)
    return made


def online_view_loss(
    make: Alg1Maker,
    points: Sequence[object],
    points_prime: Sequence[object],
    factor: float = 1.0,
) -> ExactLoss:
    """Exact view loss of 004-alg1 (as built by ``make(region_counter)``) on point-replace neighbours.

    ``make`` builds the algorithm with the given region-counter factory; the wiring (which region
    exists when, its r0, budgets and input stream) does not depend on the noise, so e.g.
    ``lambda rc: OnlineSyntheticData(eps, d, noise=InsecureZeroNoise(), region_counter=rc)``. ``factor``: every
    region counter's noise scales divided by it (:func:`inhomogeneous_view_loss`).
    """
    a, b = record_wiring(make, points), record_wiring(make, points_prime)
    if set(a) != set(b):
        raise DPStreamInputError("points_prime", "the partition must not depend on the data", sorted(set(a) ^ set(b),
                                 key=lambda r: (r.depth, r.index)))
    total = ExactLoss.zero()
    changed: list[str] = []
    for region in sorted(a, key=lambda r: (r.depth, r.index)):
        ca, cb = a[region], b[region]
        if (ca.r0, ca.first_time) != (cb.r0, cb.first_time):
            raise DPStreamInputError("points_prime", "the counters' parameters must not depend on the data", region)
        if ca.inputs == cb.inputs:
            continue
        loss = inhomogeneous_view_loss(ca.epsilon, ca.r0, ca.eps_levels, ca.inputs, cb.inputs,
                                       first_time=ca.first_time, factor=factor)
        changed.append(f"theta={region.label}: {loss.upper:.4g}")
        total = total + ExactLoss(loss.lower, loss.upper, "", {"S_tilde": loss.parts.get("S_tilde", 0.0),
                                                             "alg2": loss.parts.get("alg2", 0.0)})
    return ExactLoss(total.lower, total.upper, f"{len(changed)} region(s) changed: " + ", ".join(changed),
                     total.parts)


# --- the table in docs/hypercube.md: python -m dpstream.audit.hypercube.loss ----------------------


def _table() -> None:  # pragma: no cover - documentation output
    import dataclasses

    from dpstream.hypercube.online import OnlineSyntheticData
    from dpstream.hypercube.schedule import PrivacySchedule

    print("004-alg2, exact view loss over every neighbouring Boolean pair of length T (values / eps)")
    print("eps    T  variant      total   segment-ends  A_sub   worst pair")
    for eps in (0.5, 1.0, 2.0, 4.0):
        for T in (4, 6, 8):
            for printed in (False, True):
                if printed and T > 6:
                    continue
                law = SparseLaw.printed(eps, T, as_printed=printed)
                worst, seg = None, 0.0
                for x, y in boolean_pairs(T):
                    loss = sparse_view_loss(law, x, y)
                    seg = max(seg, loss.parts["partition_only_max"])
                    if worst is None or loss.upper > worst[0].upper:
                        worst = (loss, x, y)
                assert worst is not None
                loss, x, y = worst
                print(f"{eps:<5g} {T:>2}  {'printed' if printed else 'default':<10} {loss.upper / eps:8.6f}  "
                      f"{seg / eps:8.6f}    {loss.parts['A_sub'] / eps:6.4f}  {''.join(map(str, x))}->"
                      f"{''.join(map(str, y))} ({loss.where})")
    law = SparseLaw.printed(1.0, 6)
    variants = {"test noise Lap_Z(1/eps)": dataclasses.replace(law, test_scale=law.test_scale / 2),
                "threshold noise Lap_Z(1/eps)": dataclasses.replace(law, threshold_scale=law.threshold_scale / 2),
                "A_sub = 001-alg10 printed scale": SparseLaw.printed(1.0, 6, sub_as_printed=True)}
    print("\nbroken variants of 004-alg2 (eps = 1, T = 6): max total loss")
    for name, v in variants.items():
        print(f"  {name:<34} {max(sparse_view_loss(v, x, y).upper for x, y in boolean_pairs(6)):.6f}")
    print("\n004-alg1, exact view loss over every stream of 5 points from two cells, each point replaced (eps = 1)")
    for d in (1, 2, 3):
        schedule = PrivacySchedule(1.0, d)
        cells = [np.full(d, 0.1), np.full(d, 0.9), np.array([0.9] + [0.1] * (d - 1))]
        best = 0.0

        def make(rc: RegionCounterFactory, d: int = d) -> Alg1:
            return OnlineSyntheticData(1.0, d, noise=InsecureZeroNoise(), region_counter=rc)

        for base in itertools.product(range(2), repeat=5):
            points = [cells[b] for b in base]
            for tau in range(5):
                other = list(points)
                other[tau] = cells[2]
                best = max(best, online_view_loss(make, points, other).upper)
        print(f"  d={d}: max loss {best:.6f} (proof bound 2 sup_s path = {schedule.total_budget_bound():.6f})")


if __name__ == "__main__":  # pragma: no cover
    _table()
