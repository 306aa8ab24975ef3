"""004-alg2 with first-failure draws (GeometricSparseCounter): its law equals the printed box's, exactly.

The laws are enumerated, not sampled: a scripted noise source fixes the thresholds and walks every
outcome of the Bernoulli draws (each a Lap_Z draw whose event {Z != 0} has probability 2p/(1+p),
p = exp(-1/scale), the law of 004-sec2.4); the printed law is written again from the box (the test
of time u passes iff lambda'_u <= floor(T~_j) - N_j, with the Lap_Z cdf of
dpstream.audit.hypercube.loss).
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any

import numpy as np
import pytest

from dpstream.audit.hypercube.loss import dlap_cdf, dlap_sf
from dpstream.counters.sparse import sparse_threshold
from dpstream.counters.sparse_geometric import GeometricSparseCounter, bernoulli, first_failure, log_test_pass
from dpstream.errors import DPStreamInputError
from dpstream.insecure import InsecureSeededNoise, TapeRecorder, TapeReplay
from dpstream.noise import BaseNoiseSource, DrawKind, Params, data_rng


class BranchNeededError(Exception):
    def __init__(self, scale: float) -> None:
        super().__init__(scale)
        self.scale = scale


class ScriptedNoise(BaseNoiseSource):
    """Threshold draws return ``lambdas[j]``, A_sub draws 0, Bernoulli draws Z = 0 / 1 from ``script``."""

    def __init__(self, script: list[int], lambdas: dict[int, int] | None = None) -> None:
        self.script = list(script)
        self.lambdas = lambdas or {}
        self.used = 0

    def _draw(self, site: str, kind: DrawKind, params: Params) -> Any:
        assert kind is DrawKind.DISCRETE_LAPLACE
        if "004-alg2 u2" in site:
            return self.lambdas[int(site.rsplit("j=", 1)[1])]
        if "001-alg10" in site:
            return 0
        if self.used == len(self.script):
            raise BranchNeededError(params["scale"])
        self.used += 1
        return self.script[self.used - 1]


def p_nonzero(scale: float) -> float:
    """P(Z != 0) for Z ~ Lap_Z(scale): 1 - (1-p)/(1+p) = 2p/(1+p), p = exp(-1/scale) (004-sec2.4)."""
    p = math.exp(-1.0 / scale)
    return 2.0 * p / (1.0 + p)


def enumerate_paths(run: Any) -> list[tuple[Any, float]]:
    """Every outcome of ``run(noise)`` over the Bernoulli draws, with its probability."""
    out: list[tuple[Any, float]] = []
    stack: list[tuple[list[int], float]] = [([], 1.0)]
    while stack:
        script, prob = stack.pop()
        try:
            out.append((run(ScriptedNoise(script)), prob))
        except BranchNeededError as branch:
            q = p_nonzero(branch.scale)
            stack.append(([*script, 0], prob * (1.0 - q)))
            stack.append(([*script, 1], prob * q))
    return out


@pytest.mark.parametrize("pi", [0.5, 0.3, 0.7, 1e-9, 1.0 - 1e-9, 1e-200, 0.999])
def test_bernoulli_has_probability_pi(pi: float) -> None:
    outcomes = enumerate_paths(lambda n: bernoulli(n, "s", pi, 1.0 - pi))
    assert len(outcomes) == 2
    p_true = sum(p for hit, p in outcomes if hit)
    assert p_true == pytest.approx(pi, rel=1e-12)
    assert sum(p for _, p in outcomes) == pytest.approx(1.0, rel=1e-14)


def test_bernoulli_without_draw_when_certain() -> None:
    recorder = TapeRecorder(InsecureSeededNoise(0))
    assert bernoulli(recorder, "a", 1.0, 0.0) is True
    assert bernoulli(recorder, "b", 0.0, 1.0) is False
    assert len(recorder.tape) == 0


@pytest.mark.parametrize(("H", "pass_prob"), [(1, 0.4), (5, 0.9), (8, 0.5), (13, 0.999), (7, 1e-3), (64, 1 - 1e-12)])
def test_first_failure_is_a_truncated_geometric(H: int, pass_prob: float) -> None:
    log_pass, log_fail = math.log(pass_prob), math.log1p(-pass_prob)
    outcomes = enumerate_paths(lambda n: first_failure(n, 1, 10, H, log_pass, log_fail))
    law: dict[int | None, float] = defaultdict(float)
    for value, p in outcomes:
        law[value] += p
    assert set(law) <= {None, *range(10, 10 + H)}
    assert law[None] == pytest.approx(pass_prob**H, rel=1e-9)
    for i in range(H):
        assert law[10 + i] == pytest.approx(pass_prob**i * (1 - pass_prob), rel=1e-9, abs=1e-300)


def test_log_test_pass_matches_the_cdf() -> None:
    for scale in (0.5, 2.0, 40.0):
        for c in (-30, -3, -1, 0, 1, 7, 200):
            lp, lf = log_test_pass(c, scale)
            assert math.exp(lp) == pytest.approx(float(dlap_cdf(np.array([c]), scale)[0]), rel=1e-12)
            assert math.exp(lf) == pytest.approx(float(dlap_sf(np.array([c]), scale)[0]), rel=1e-12)


def printed_pattern_probability(x: list[int], ends: tuple[int, ...], eps: float, T: int,
                                lambdas: dict[int, int]) -> float:
    """P(segments end exactly at the steps ``ends``) for the printed 004-alg2 (default reading) given the
    threshold noises, from the box: in step t >= 2 the segment (if it has read an input) tests
    N_j + lambda'_{t-1} <= T_0 + lambda_j, lambda' ~ Lap_Z(2/eps); a failure ends it, then X_t is read."""
    scale, T0 = 2.0 / eps, sparse_threshold(eps, T)
    j, N, read, prob = 1, 0, 0, 1.0
    for t in range(1, len(x) + 1):
        if read > 0:
            c = np.array([math.floor(T0 + lambdas[j]) - N])
            if t in ends:
                prob *= float(dlap_sf(c, scale)[0])
                j, N, read = j + 1, 0, 0
            else:
                prob *= float(dlap_cdf(c, scale)[0])
        elif t in ends:
            return 0.0
        N, read = N + x[t - 1], read + 1
    return prob


@pytest.mark.parametrize(("x", "eps", "offsets"), [
    ([0, 0, 0, 0, 0, 0], 1.0, (0, 1, -1, 0, 2, 0)),
    ([1, 0, 1, 1, 0, 0, 1], 2.0, (0, 1, -1, 0, 2, 0, 1)),
    ([1, 1, 1, 1, 1, 1], 4.0, (2, 0, 1, 3, -1, 0, 0)),
    ([0, 1, 0, 0, 1, 0, 0], 0.5, (1, -2, 0, 0, 1, 0, 0)),
])
def test_segment_ends_have_the_printed_law(x: list[int], eps: float, offsets: tuple[int, ...]) -> None:
    """Given the thresholds, P(segment-end pattern) is the printed one for every pattern (exact enumeration)."""
    T = len(x) + 1
    T0 = sparse_threshold(eps, T)
    lambdas = {j: -math.floor(T0) + off for j, off in enumerate(offsets, start=1)}  # tests near 50 %

    def run(noise: ScriptedNoise) -> tuple[int, ...]:
        noise.lambdas = lambdas
        counter = GeometricSparseCounter(eps, T, noise=noise)
        ends = []
        for t, v in enumerate(x, start=1):
            before = counter.segments_ended
            counter.step(v)
            if counter.segments_ended > before:
                ends.append(t)
        return tuple(ends)

    law: dict[tuple[int, ...], float] = defaultdict(float)
    for ends, p in enumerate_paths(run):
        law[ends] += p
    assert sum(law.values()) == pytest.approx(1.0, rel=1e-12)
    assert len(law) > 3  # the enumeration reaches several patterns
    printed_total = 0.0
    for ends in _all_patterns(len(x)):
        want = printed_pattern_probability(x, ends, eps, T, lambdas)
        printed_total += want
        assert law.get(ends, 0.0) == pytest.approx(want, rel=1e-9, abs=1e-15), ends
    assert printed_total == pytest.approx(1.0, rel=1e-12)


def _all_patterns(n: int) -> list[tuple[int, ...]]:
    out: list[tuple[int, ...]] = [()]
    for t in range(2, n + 1):
        out += [(*p, t) for p in out]
    return out


@pytest.mark.parametrize(("eps", "T", "seed"), [(1.0, 40, 0), (4.0, 64, 1), (0.3, 30, 2), (8.0, 50, 3)])
def test_skip_zeros_makes_the_steps_draws(eps: float, T: int, seed: int) -> None:
    """k zero steps by skip_zeros == k calls of step(0), under one tape, both ways, same releases."""
    rng = data_rng(seed)
    x = (rng.random(T) < 0.3).astype(int).tolist()
    checks = sorted({int(v) for v in rng.integers(1, T + 1, size=6)} | {T})

    def stepwise(noise: BaseNoiseSource | TapeReplay) -> list[float]:
        c = GeometricSparseCounter(eps, T, noise=noise)
        return [c.step(v) for v in x]

    def lazy(noise: BaseNoiseSource | TapeReplay) -> dict[int, float]:
        c = GeometricSparseCounter(eps, T, noise=noise)
        seen = {}
        for t, v in enumerate(x, start=1):
            if v:
                c.skip_zeros(t - 1 - c.t)
                c.step(1)
            if t in checks:
                c.skip_zeros(t - c.t)
                seen[t] = c.N_tilde
        return seen

    recorder = TapeRecorder(InsecureSeededNoise(seed))
    full = stepwise(recorder)
    with TapeReplay(recorder.tape) as replay:
        assert lazy(replay) == {t: full[t - 1] for t in checks}
    recorder = TapeRecorder(InsecureSeededNoise(seed + 10))
    seen = lazy(recorder)
    with TapeReplay(recorder.tape) as replay:
        full = stepwise(replay)
    assert seen == {t: full[t - 1] for t in checks}


def test_segments_end_in_zero_runs() -> None:
    """With a low threshold, segments end during runs of zeros too (the draws that the printed box makes at 0s)."""
    c = GeometricSparseCounter(1.0, 200, noise=InsecureSeededNoise(1))
    c.T0 = -5.0  # tests fail often (a test-only change of the threshold)
    assert c.skip_zeros(199) > 10
    assert c.segments_ended > 10 and c.t == 199


def test_as_printed_refused_and_bad_skip() -> None:
    with pytest.raises(DPStreamInputError) as info:
        GeometricSparseCounter(1.0, 10, noise=InsecureSeededNoise(0), as_printed=True)
    assert info.value.field == "as_printed"
    c = GeometricSparseCounter(1.0, 10, noise=InsecureSeededNoise(0))
    with pytest.raises(DPStreamInputError):
        c.skip_zeros(11)
    with pytest.raises(DPStreamInputError):
        c.skip_zeros(-1)
    assert "first-failure" in c.claim.note
