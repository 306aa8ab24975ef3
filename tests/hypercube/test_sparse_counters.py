"""Sparse counting (004-alg2) and inhomogeneous sparse counting (004-alg3).

Every seeded run is checked against an independent re-derivation from the printed boxes that
reads each draw from the tape by site (and must use every site of the tape exactly once);
hand-computed noiseless runs; bad input before any draw and any state change; atomic steps.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
import pytest

from dpstream.audit.counters.models import binary_tree_counter_model
from dpstream.claims import Measure, Neighbour
from dpstream.counters.sparse import InhomogeneousSparseCounter, SparseCounter, level_start
from dpstream.errors import DPStreamInputError, HorizonExceededError
from dpstream.insecure import InsecureSeededNoise, InsecureZeroNoise, TapeRecorder, TapeReplay
from dpstream.noise import NoiseSource, data_rng
from dpstream.tape import Tape, TapeMismatchError, TapeSiteMissingError
from dpstream.testing import by_value, record_run, replay_run, replay_vector
from dpstream.vectors import KnownAnswerVector
from dpstream.vectors.corpus import known_answer


class TapeReader:
    """Reads draws by site and remembers which sites were read."""

    def __init__(self, tape: Tape) -> None:
        self.values = {d.site: d.value for d in tape}
        self.params = {d.site: d.params for d in tape}
        self.read: set[str] = set()

    def __call__(self, where: str, scale: float) -> int:
        assert self.params[where]["scale"] == pytest.approx(scale, rel=1e-12), where
        self.read.add(where)
        return int(self.values[where])


def rederive_alg2(x: Sequence[int], tape: TapeReader, eps: float, T: int, as_printed: bool,
                  prefix: str = "") -> list[float]:
    """004-alg2 from the box: segments, thresholds T_0 + lambda_j, tests N_j + lambda'_t <= T~_j, A_sub."""
    T0 = 9.0 * math.log(T) / eps
    model = binary_tree_counter_model(eps / 2.0, T, discrete=True)
    sub_prefix = prefix + "004-alg2 u8 / "
    sub_inputs: list[int] = []
    j, N, read, N_tilde = 1, 0, 0, 0.0
    threshold = T0 + tape(f"{prefix}004-alg2 u2 j=1", 2.0 / eps)
    out = []
    for t in range(1, len(x) + 1):
        while as_printed or read > 0:  # the tests made after X_{t-1}
            lam = tape(f"{prefix}004-alg2 u3 j={j} t={t - 1}", 2.0 / eps)
            if N + lam <= threshold:
                break
            sub_inputs.append(N)
            m = len(sub_inputs)
            noise = {s: tape(sub_prefix + s, law.parameter) for s, law in zip(model.sites[:m], model.laws[:m],
                                                                                strict=True)}
            f = np.zeros(T)
            f[:m] = sub_inputs
            full = {**{s: 0.0 for s in model.sites}, **noise}
            N_tilde = float(model.mean(f)[m - 1] + model.error(full)[m - 1])  # A_sub's release m
            j, N, read = j + 1, 0, 0
            threshold = T0 + tape(f"{prefix}004-alg2 u2 j={j}", 2.0 / eps)
        N, read = N + x[t - 1], read + 1
        out.append(N_tilde)
    return out


def rederive_alg3(x: Sequence[int], tape: TapeReader, eps: float, r0: int, eps_levels: Callable[[int], float],
                  first_time: int = 1) -> list[float]:
    """004-alg3 from the box: level r is [ceil(2^r/eps), ceil(2^{r+1}/eps)); S~ adds each finished level's
    sum + Lap_Z(2/eps_r); c_t comes from level r's own 004-alg2 with eps_r/2; output S~ + c_t."""
    t_r0 = math.ceil(2**r0 / eps)
    by_level: dict[int, list[int]] = {}
    level_of: list[int | None] = []
    for i, xi in enumerate(x):
        t = first_time + i
        if t < t_r0:
            level_of.append(None)
            continue
        r = r0
        while math.ceil(2 ** (r + 1) / eps) <= t:
            r += 1
        by_level.setdefault(r, []).append(xi)
        level_of.append(r)
    c = {r: rederive_alg2(inputs, tape, eps_levels(r) / 2.0, math.ceil(2 ** (r + 1) / eps) - math.ceil(2**r / eps),
                          False, prefix=f"004-alg3 u2 r={r} / ") for r, inputs in by_level.items()}
    out: list[float] = []
    position = dict.fromkeys(by_level, 0)
    for level in level_of:
        if level is None:
            out.append(0.0)
            continue
        r = level
        S = sum(sum(by_level.get(k, [])) + tape(f"004-alg3 u3 r={k}", 2.0 / eps_levels(k)) for k in range(r0, r))
        out.append(S + c[r][position[r]])
        position[r] += 1
    return out


@pytest.mark.parametrize("as_printed", [False, True])
@pytest.mark.parametrize(("eps", "T", "seed"), [(2.0, 30, 1), (4.0, 40, 2), (1.0, 25, 3), (8.0, 16, 4)])
def test_alg2_equals_rederivation_from_tape(eps: float, T: int, seed: int, as_printed: bool) -> None:
    x = [int(v) for v in data_rng(seed).random(T) < 0.6]
    releases, tape = record_run(lambda n: SparseCounter(eps, T, noise=n, as_printed=as_printed), x, seed=seed)
    reader = TapeReader(tape)
    assert releases == rederive_alg2(x, reader, eps, T, as_printed)
    assert reader.read == {d.site for d in tape}  # no draw more, none less
    assert replay_run(lambda n: SparseCounter(eps, T, noise=n, as_printed=as_printed), x, tape) == releases


def test_alg2_segments_end_in_seeded_runs() -> None:
    """The re-derivation above is only a check if segments do end: count them over the seeded runs."""
    ended = 0
    for seed in range(5):
        counter = SparseCounter(4.0, 40, noise=InsecureSeededNoise(seed))
        counter.run([1] * 40)
        ended += counter.segments_ended
    assert ended >= 5


def test_alg2_noiseless_by_hand() -> None:
    # eps = 3, T = 8: T_0 = 9 ln 8 / 3 = 6.238. All ones: the test after X_u sees N = u and fails first
    # at u = 7, so the segment ends there, A_sub gets 7, and the release at t = 8 is 7.
    counter = SparseCounter(3.0, 8, noise=InsecureZeroNoise())
    assert counter.run([1] * 8) == [0, 0, 0, 0, 0, 0, 0, 7]
    printed = SparseCounter(3.0, 8, noise=InsecureZeroNoise(), as_printed=True)
    assert printed.run([1] * 8) == [0, 0, 0, 0, 0, 0, 0, 7]


def test_alg2_printed_tests_empty_segments() -> None:
    recorder = TapeRecorder(InsecureZeroNoise())
    SparseCounter(3.0, 8, noise=recorder, as_printed=True).run([1, 0])
    sites = [d.site for d in recorder.tape]
    assert sites == ["004-alg2 u2 j=1", "004-alg2 u3 j=1 t=0", "004-alg2 u3 j=1 t=1"]
    recorder = TapeRecorder(InsecureZeroNoise())
    SparseCounter(3.0, 8, noise=recorder).run([1, 0])
    assert [d.site for d in recorder.tape] == ["004-alg2 u2 j=1", "004-alg2 u3 j=1 t=1"]


def test_alg2_claim_and_threshold() -> None:
    counter = SparseCounter(0.5, 100, noise=InsecureSeededNoise(0))
    assert pytest.approx(9 * math.log(100) / 0.5) == counter.T0
    claim = counter.claim
    assert claim.measure is Measure.PURE_DP and claim.parameter == 0.5
    assert claim.neighbour is Neighbour.STREAM_ENTRY and claim.source == "004-lem3.2"


@pytest.mark.parametrize("x", [2, -1, 0.5, math.nan, "1", True, None, [1]])
def test_alg2_bad_input_no_draw_no_state_change(x: object) -> None:
    recorder = TapeRecorder(InsecureSeededNoise(0))
    counter = SparseCounter(1.0, 10, noise=recorder)
    counter.run([1, 0, 1])
    drawn, state = len(recorder.tape), (counter.t, counter.N, counter.j, counter.read, counter.T_tilde)
    with pytest.raises(DPStreamInputError) as info:
        counter.step(x)  # type: ignore[arg-type]
    assert info.value.field == "f(t)"
    assert len(recorder.tape) == drawn and (counter.t, counter.N, counter.j, counter.read, counter.T_tilde) == state
    counter.step(1)
    assert counter.t == 4


@pytest.mark.parametrize(("eps", "T"), [(0.0, 5), (-1.0, 5), (math.nan, 5), (1.0, 0), (1.0, 2.5)])
def test_alg2_bad_parameters(eps: float, T: int) -> None:
    with pytest.raises(DPStreamInputError):
        SparseCounter(eps, T, noise=InsecureSeededNoise(0))


def test_alg2_horizon() -> None:
    counter = SparseCounter(1.0, 3, noise=InsecureSeededNoise(0))
    counter.run([1, 1, 1])
    with pytest.raises(HorizonExceededError):
        counter.step(1)
    assert counter.t == 3


def test_alg2_failed_draw_leaves_state_unchanged() -> None:
    recorder = TapeRecorder(InsecureSeededNoise(0))
    SparseCounter(4.0, 40, noise=recorder).run([1] * 40)
    replay = TapeReplay(recorder.tape)
    counter = SparseCounter(2.0, 40, noise=replay)  # other eps: the first threshold's scale mismatches
    with pytest.raises(TapeMismatchError):
        counter.step(1)
    assert counter.t == 0 and counter.T_tilde is None and counter.releases == []


def test_alg2_failed_sub_draw_leaves_state_unchanged() -> None:
    """A failure inside A_sub (after the segment's tests were drawn) rolls everything back."""
    x = [1] * 40
    recorder = TapeRecorder(InsecureSeededNoise(3))
    reference = SparseCounter(4.0, 40, noise=recorder)
    reference.run(x)
    assert reference.segments_ended >= 1
    first_sub = next(d for d in recorder.tape if "u8 /" in d.site)
    broken = Tape(tuple(d for d in recorder.tape if d.site != first_sub.site))
    counter = SparseCounter(4.0, 40, noise=TapeReplay(broken))
    with pytest.raises(TapeSiteMissingError):
        counter.run(x)
    t = counter.t
    assert counter.sub is None and counter.segments_ended == 0 and len(counter.releases) == t


# --- 004-alg3 -----------------------------------------------------------------------------------


@pytest.mark.parametrize(("eps", "r0", "first_time", "seed"), [(1.0, 0, 1, 1), (1.0, 2, 1, 2), (0.5, 1, 3, 3),
                                                               (3.0, 0, 1, 4), (1.0, 3, 8, 5)])
def test_alg3_equals_rederivation_from_tape(eps: float, r0: int, first_time: int, seed: int) -> None:
    def eps_levels(r: int) -> float:
        return 6.0 / (1 + r)  # large budgets so that segments do end within the levels

    x = [int(v) for v in data_rng(seed).random(70) < 0.7]
    make = lambda n: InhomogeneousSparseCounter(eps, r0, eps_levels, noise=n, first_time=first_time)  # noqa: E731
    releases, tape = record_run(make, x, seed=seed)
    reader = TapeReader(tape)
    assert releases == rederive_alg3(x, reader, eps, r0, eps_levels, first_time)
    assert reader.read == {d.site for d in tape}


def test_alg3_noiseless_by_hand() -> None:
    # eps = 1, r0 = 1, eps_r = 10 for every level; levels [2,4), [4,8), [8,16).
    # Level 1 (T=2): T_0 = 9 ln 2 / 5 = 1.25; level 2 (T=4): T_0 = 2.50; level 3 (T=8): T_0 = 3.74.
    # All ones from t=1: t=1 is before t_1 = 2 (0); level 1: c = 0, 0; at t=4 S~ = 2 (t=2,3);
    # level 2: tests see N = 1, 2 (pass), 3 > 2.5 ends a segment after t=6, so c_7 = 3;
    # at t=8 S~ = 2 + 4 = 6 and level 3 restarts c at 0.
    counter = InhomogeneousSparseCounter(1.0, 1, lambda r: 10.0, noise=InsecureZeroNoise())
    assert counter.run([1] * 9) == [0, 0, 0, 2, 2, 2, 5, 6, 6]


def test_alg3_ignores_inputs_before_start() -> None:
    def make(n: NoiseSource) -> InhomogeneousSparseCounter:
        return InhomogeneousSparseCounter(1.0, 3, lambda r: 2.0, noise=n)

    a, _ = record_run(make, [1] * 7 + [1, 0, 1, 1], seed=9)
    b, _ = record_run(make, [0] * 7 + [1, 0, 1, 1], seed=9)
    assert a == b and a[:7] == [0.0] * 7  # t_3 = 8


def test_alg3_empty_levels() -> None:
    # eps = 4: t_0 = t_1 = t_2 = 1, t_3 = 2: levels 0 and 1 are empty, each adds Lap_Z noise once
    recorder = TapeRecorder(InsecureSeededNoise(0))
    InhomogeneousSparseCounter(4.0, 0, lambda r: 1.0, noise=recorder).run([1, 1, 1])
    sites = [d.site for d in recorder.tape if d.site.startswith("004-alg3 u3")]
    assert sites == ["004-alg3 u3 r=0", "004-alg3 u3 r=1", "004-alg3 u3 r=2"]
    assert [level_start(r, 4.0) for r in range(4)] == [1, 1, 1, 2]


def test_alg3_claim() -> None:
    claim = InhomogeneousSparseCounter(1.0, 2, lambda r: 0.1 * 2.0 ** (2 - r), noise=InsecureSeededNoise(0)).claim
    assert claim.parameter == pytest.approx(0.1) and claim.source == "004-lem3.3"


def test_alg3_bad_parameters_and_input() -> None:
    with pytest.raises(DPStreamInputError):
        InhomogeneousSparseCounter(1.0, 2, lambda r: 1.0, noise=InsecureSeededNoise(0), first_time=5)  # t_2 = 4
    with pytest.raises(DPStreamInputError):
        InhomogeneousSparseCounter(1.0, 0, lambda r: -1.0, noise=InsecureSeededNoise(0))
    recorder = TapeRecorder(InsecureSeededNoise(0))
    counter = InhomogeneousSparseCounter(1.0, 0, lambda r: 1.0 if r < 2 else math.nan, noise=recorder)
    counter.run([1, 1, 1])
    drawn = len(recorder.tape)
    with pytest.raises(DPStreamInputError):
        counter.step(1)  # t = 4 starts level 2, whose budget is NaN: refused before any draw
    assert counter.t == 3 and len(recorder.tape) == drawn
    with pytest.raises(DPStreamInputError):
        counter.step(3)


def test_two_phase_equals_step() -> None:
    for make in (lambda n: SparseCounter(4.0, 30, noise=n),
                 lambda n: InhomogeneousSparseCounter(1.0, 1, lambda r: 4.0, noise=n)):
        x = [1, 1, 0, 1] * 7
        direct, _ = record_run(make, x, seed=5)
        counter = make(InsecureSeededNoise(5))
        assert counter.supports_staging
        assert [counter.stage(v).commit() for v in x] == direct


# --- known-answer vectors of the corpus (the counters' catalog entries) -----------------------------

COUNTER_VECTORS = [*known_answer("004-alg2"), *known_answer("004-alg3")]


@pytest.mark.parametrize("vector", COUNTER_VECTORS, ids=[v.id for v in COUNTER_VECTORS])
def test_counter_vectors(vector: KnownAnswerVector) -> None:
    p = by_value(vector.params)
    reader = TapeReader(vector.tape)
    if vector.algorithm == "004-alg2":
        got = replay_vector(lambda n: SparseCounter(p["epsilon"], p["T"], noise=n), vector)
        closed = rederive_alg2(vector.inputs, reader, p["epsilon"], p["T"], False)
    else:
        got = replay_vector(lambda n: InhomogeneousSparseCounter(p["epsilon"], p["r0"], lambda r: p["eps_r"], noise=n),
                            vector)
        closed = rederive_alg3(vector.inputs, reader, p["epsilon"], p["r0"], lambda r: p["eps_r"])
    assert got == vector.expected == closed
    assert reader.read == {d.site for d in vector.tape}  # every draw of the tape is read by the re-derivation
