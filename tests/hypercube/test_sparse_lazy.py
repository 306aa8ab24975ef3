"""The lazy 004-alg3 (LazyInhomogeneousCounter) equals the line-by-line one under one tape."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from dpstream.counters.sparse import InhomogeneousSparseCounter, SparseCounter, SparseFactory
from dpstream.counters.sparse_geometric import GeometricSparseCounter
from dpstream.counters.sparse_lazy import LazyInhomogeneousCounter, advance_sparse
from dpstream.errors import DPStreamInputError
from dpstream.insecure import InsecureSeededNoise, TapeRecorder, TapeReplay
from dpstream.noise import NoiseSource, data_rng

FORMS: dict[str, SparseFactory] = {
    "printed": lambda eps, T, n: SparseCounter(eps, T, noise=n),
    "printed-as-printed": lambda eps, T, n: SparseCounter(eps, T, noise=n, as_printed=True),
    "geometric": lambda eps, T, n: GeometricSparseCounter(eps, T, noise=n),
}

CASES = [  # (eps, r0, first_time, n, constant eps_r or None for a decreasing schedule)
    (1.0, 0, 1, 70, None),
    (1.0, 2, 1, 70, 4.0),
    (1.0, 3, 8, 60, None),
    (4.0, 0, 1, 50, 8.0),  # empty levels: t_0 = t_1 = t_2 = 1
    (0.3, 1, 2, 60, None),
]


def levels(constant: float | None) -> Callable[[int], float]:
    return (lambda r: constant) if constant is not None else (lambda r: 3.0 / (r + 1))


def line_by_line(eps: float, r0: int, first: int, el: Callable[[int], float], form: SparseFactory,
                 x: list[int], noise: NoiseSource) -> list[float]:
    c = InhomogeneousSparseCounter(eps, r0, el, noise=noise, first_time=first, sparse=form)
    return [c.step(v) for v in x]


def lazy(eps: float, r0: int, first: int, el: Callable[[int], float], form: SparseFactory,
         x: list[int], noise: NoiseSource, checks: set[int]) -> dict[int, float]:
    """Told only about the inputs 1 (global time first + i), caught up at the ``checks`` and at the end."""
    c = LazyInhomogeneousCounter(eps, r0, el, noise=noise, first_time=first, sparse=form)
    seen = {}
    for i, v in enumerate(x):
        tg = first + i
        if v:
            c.advance(tg - 1)
            c.step(1)
        if tg in checks:
            c.advance(tg)
            seen[tg] = c.value
    return seen


# As printed, A_sub can be stepped past its horizon (E-hypercube-4); with case 0's one-step level 0 it is
# (HorizonExceededError on both sides), so that pair is left out.
PAIRS = [(form, case) for form in sorted(FORMS) for case in CASES
         if not (form == "printed-as-printed" and case is CASES[0])]


@pytest.mark.parametrize(("form", "case"), PAIRS)
def test_lazy_equals_line_by_line_under_one_tape(form: str, case: tuple[float, int, int, int, float | None]) -> None:
    eps, r0, first, n, constant = case
    el, make = levels(constant), FORMS[form]
    rng = data_rng(n + r0)
    x = (rng.random(n) < 0.35).astype(int).tolist()
    last = first + n - 1
    checks = {int(v) for v in rng.integers(first, last + 1, size=8)} | {last}
    # record through the line-by-line counter, replay through the lazy one (every site used) ...
    recorder = TapeRecorder(InsecureSeededNoise(7))
    full = line_by_line(eps, r0, first, el, make, x, recorder)
    with TapeReplay(recorder.tape) as replay:
        seen = lazy(eps, r0, first, el, make, x, replay, checks)
    assert seen == {t: full[t - first] for t in sorted(checks)}
    # ... and the reverse
    recorder = TapeRecorder(InsecureSeededNoise(8))
    seen = lazy(eps, r0, first, el, make, x, recorder, checks)
    with TapeReplay(recorder.tape) as replay:
        full = line_by_line(eps, r0, first, el, make, x, replay)
    assert seen == {t: full[t - first] for t in sorted(checks)}


def test_bad_inputs() -> None:
    with pytest.raises(DPStreamInputError):
        LazyInhomogeneousCounter(1.0, 2, lambda r: 1.0, noise=InsecureSeededNoise(0), first_time=10)  # > t_r0 = 4
    c = LazyInhomogeneousCounter(1.0, 0, lambda r: 1.0, noise=InsecureSeededNoise(0))
    with pytest.raises(DPStreamInputError):
        c.step(2)
    with pytest.raises(DPStreamInputError):
        advance_sparse(SparseCounter(1.0, 5, noise=InsecureSeededNoise(0)), 1, 3)
    assert c.t == 0 and c.value == 0.0


def test_printed_catch_up_costs_one_operation_per_step() -> None:
    """The printed tests are one draw per step: catching up k zeros is k operations (and k test draws)."""
    recorder = TapeRecorder(InsecureSeededNoise(0))
    c = LazyInhomogeneousCounter(1.0, 0, lambda r: 1.0, noise=recorder)
    ops = c.advance(63)  # levels 0..5 (t_r = 2^r), 63 steps
    assert ops == 63 + 6 + 5  # 63 steps, 6 level starts, 5 level ends (one S~ draw each)
    tests = [d for d in recorder.tape if "004-alg2 u3" in d.site]
    assert len(tests) == 63 - 6  # every step but the first of each level tests once (E-hypercube-3)
    g = LazyInhomogeneousCounter(1.0, 0, lambda r: 1.0, noise=InsecureSeededNoise(0),
                                 sparse=lambda eps, T, n: GeometricSparseCounter(eps, T, noise=n))
    assert g.advance(63) < 30
