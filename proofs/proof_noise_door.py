"""Proof note — the noise door adds secure noise inside OpenDP; the floating-point argument.

Claim
-----
With the default source (:class:`dpstream.noise.SecureNoise`) every additive draw of every
algorithm is an OpenDP measurement applied to the statistic itself:
``add_laplace(site, value, b)`` returns ``M_b(value)`` with ``M_b = make_laplace(atom_domain(T=float),
absolute_distance(T=float), b)`` (the batch form: one call of the vector measurement with
``l1_distance``), integer statistics go through ``make_laplace`` / ``make_gaussian`` on i64. No
algorithm adds a float sample to a sensitive value in Python (there is no method that returns a bare
sample; ``tests/foundation/test_secure_path.py`` checks it structurally and by spying on the
measurements). So each noisy statistic is covered by OpenDP's proof, at the sensitivity of the float
value handed in, and everything the algorithms do afterwards is post-processing.

Why the value must go in (Mironov 2012)
---------------------------------------
The papers write ``x + Lap(b)`` in exact real arithmetic. Computing ``fl(x + s)`` with a float sample
``s`` is a different mechanism: its output set depends on x. Example (checked below): 2^-60 is
``fl(0 + s)`` for s = 2^-60, but no float s gives ``fl(1 + s) = 2^-60`` (near -1 the floats are
multiples of 2^-53, and 1 + s is then exact), so that output has probability 0 under x = 1 and
positive probability under x = 0 for a sampler that can return 2^-60: the privacy loss is infinite.
Mironov's attack exploits exactly this on real samplers (the low-order bits of the release reveal x).
OpenDP's float Laplace instead takes x exactly (as a rational on the grid 2^k, default k = -1074, so
every float is on it), adds an exact discrete-Laplace sample on that grid and rounds the exact sum to
a float ONCE. The guarantee holds for the exact noisy sum; the final rounding depends on nothing
else, so it is post-processing. Its privacy map is the paper's eps = d_in / b (rounded up by at most a
few ulps; checked below through ``SecureNoise``), and the vector form's map at l1 distance d is the same.

Post-processing in floats is free
---------------------------------
Where the old code computed ``g = (g_prev + x) + z`` the algorithms now compute
``g = g_prev + door(x)``: a float function of released noisy statistics only (sums of noisy nodes,
consistent extensions, MW fits, comparisons with a public threshold). Any function of the releases,
however it rounds, costs no privacy. Only the rounding order changed, hence the last-bit differences
of the known-answer vectors (docs/errata/noise.md).

Sensitivity in floating point
-----------------------------
OpenDP measures d_in as the distance between the two FLOAT values handed in, so the claim holds
with the float sensitivity of the statistic as computed:

* integer-valued statistics (counts, sums of 0/1 or integer inputs) are exact while every partial sum
  is below 2^53: their float sensitivity is the proof's (checked below). Above 2^53 one changed unit
  can move a float sum by 2 (ties to even; example below). So integer statistics of the discrete
  mechanisms are handed over as Python ints (exact, |value| <= 2^62: no i64 saturation), and the
  counters refuse every input and every sum of inputs outside +-(2^53 - 1)
  (``dpstream.errors.MAX_STREAM_SUM``, docs/counters.md "Range") before drawing. A running sum grows
  by one input per step and is checked at every step, so each of its partial sums is inside; the
  trees' p-sums sum_{i<j} alpha_i + f(t) are computed correctly rounded (``math.fsum``), which is the
  exact sum whenever that sum is an integer inside the range, whatever the partial sums (left to
  right it is not: checked below).
* a statistic that IS one input (Simple counter's f(t), an in-block value, a leaf count dF(v)) has
  float sensitivity |f(t) - f'(t)| exactly.
* a float sum of m real-valued inputs differs from the exact sum by at most gamma_{m-1} sum|x_i|,
  gamma_n = n u / (1 - n u), u = 2^-53 (Higham, Accuracy and Stability, eq. (4.4)); the float
  sensitivity of such a p-sum is therefore at most Delta + 2 gamma_{m-1} (sum|x| + sum|x'|), and the
  guarantee is eps (1 + 2 gamma_{m-1} (sum|x| + sum|x'|) / Delta). For m inputs of size <= 1 and
  Delta = 1 this worst-case relative excess is about 4 m^2 2^-53: below 5e-10 for m = 1000, below
  5e-4 for m = 2^20 (checked below). It is not a new cost of the door: any implementation that forms
  the sum in floats has it (and the old code had it too); the door guarantees that nothing ELSE (the
  noise) is computed in floats. Integer-valued streams, the papers' main case, have no excess at all.

Two statistics need care because their noise is integer and their value is not:

* 004-alg2 u2's threshold T~_j = T_0 + lambda_j noises the PUBLIC threshold T_0 (AboveThreshold's
  proof): the door gets floor(T_0), and the public fractional part is added afterwards;
  (floor(T_0) + lambda) + (T_0 - floor(T_0)) is the same float as T_0 + lambda (both roundings are of
  the same exact real with exact operands; checked below), so no release changed.
* 002-alg3 as printed (real inputs, erratum E-counters-4) noises floor(alpha_i) and adds the
  fractional part unnoised: exactly the printed alpha_i + N_Z (same float, same check), which is not
  private for non-integer inputs, as the erratum says.
"""

from __future__ import annotations

import math
from fractions import Fraction

import sympy as sp

from dpstream.counters import SimpleCounter
from dpstream.insecure import InsecureSeededNoise, TapeRecorder
from dpstream.noise import DrawKind, SecureNoise, data_rng

U = Fraction(1, 2**53)


def test_mironov_support_of_value_plus_float_sample() -> None:
    """fl(0 + s) = 2^-60 for s = 2^-60, and fl(1 + s) != 2^-60 for every float s (exhaustively where it could be)."""
    target = 2.0**-60
    assert 0.0 + target == target
    # fl(1 + s) can be near 2^-60 only for s in [-1 - 2^-50, -1 + 2^-50]: walk every float there
    s, hits, walked = -1.0 - 2.0**-50, 0, 0
    while s <= -1.0 + 2.0**-50:
        walked += 1
        total = 1.0 + s
        assert Fraction(total) == 1 + Fraction(s)  # exact (Sterbenz), hence a multiple of 2^-53
        assert Fraction(total) % Fraction(1, 2**53) == 0
        hits += total == target
        s = math.nextafter(s, math.inf)
    assert walked == 4 + 1 + 8 and hits == 0  # spacing 2^-52 below -1, 2^-53 above it


def test_secure_maps_are_the_papers_epsilon() -> None:
    """OpenDP privacy maps via SecureNoise: Laplace eps = d/b (scalar, vector), Lap_Z 1/b, N_Z rho = 1/(2 s2)."""
    noise = SecureNoise()
    for b in (0.0025, 0.7, 1.0, 3.0, 1e10):
        for vector in (False, True):
            for d in (0.3, 1.0, 2.0):
                got = noise._measurement(DrawKind.LAPLACE, b, vector).map(d)
                assert d / b <= got <= (d / b) * (1 + 8 * 2.0**-52)  # rounded up by at most a few ulps
            got = noise._measurement(DrawKind.DISCRETE_LAPLACE, b, vector).map(1)
            assert 1 / b <= got <= (1 / b) * (1 + 8 * 2.0**-52)
    for sigma2 in (1.0, 2.5, 10.0):
        for vector in (False, True):
            rho = noise._measurement(DrawKind.DISCRETE_GAUSSIAN, sigma2, vector).map(1)
            # scale = fl(sqrt(sigma2)): rho = 1/(2 scale^2) within a few ulps of 1/(2 sigma2)
            assert math.isclose(rho, 1 / (2 * sigma2), rel_tol=8 * 2.0**-52)


def test_integer_counts_are_exact_below_2_53() -> None:
    """A float sum of integer inputs equals the exact sum while partial sums stay below 2^53, so neighbouring
    sums (one input changed by 1) differ by exactly 1; above 2^53 the difference can be 2."""
    rng = data_rng(5)
    for _ in range(200):
        m = int(rng.integers(1, 51))
        xs = [float(rng.integers(-(2**40), 2**40 + 1)) for _ in range(m)]
        i = int(rng.integers(m))
        ys = list(xs)
        ys[i] += 1.0
        assert sum(xs) == sum(Fraction(x) for x in xs) and sum(ys) - sum(xs) == 1.0
    a = float(2**53 + 2)
    assert (a + 1.0) - (a + 0.0) == 2.0  # 2^53 + 3 rounds to 2^53 + 4 (ties to even)


def test_correctly_rounded_p_sums_are_exact_for_integers_inside_the_range() -> None:
    """math.fsum of integer-valued floats whose exact sum lies within +-(2^53 - 1) is that sum, even when a partial
    sum (left to right) leaves the range; left to right it can miss by a unit, so two p-sums 1 apart (one input
    changed by 1) came out 2 apart: (M, 2, -M) -> 1 and (M, 3, -M) -> 3, M = 2^53 - 1."""
    M = 2**53 - 1
    assert [math.fsum([M, a, -M]) for a in (2.0, 3.0)] == [2.0, 3.0]
    assert [(0.0 + M + a) - M for a in (2.0, 3.0)] == [1.0, 3.0]  # left to right: 2^53 + 1 rounds to 2^53
    rng = data_rng(13)
    missed = 0
    for _ in range(2000):  # big terms and their near-negatives in random order: partial sums far outside
        big = [int(v) for v in rng.integers(-M, M + 1, size=int(rng.integers(1, 6)))]
        terms = big + [-v + int(rng.integers(-3, 4)) for v in big]
        terms = [v for v in terms if abs(v) <= M]
        terms = [terms[i] for i in rng.permutation(len(terms))]
        total = sum(terms)
        assert math.fsum(float(v) for v in terms) == total  # float(v) exact: |v| <= M; |total| small
        left_to_right = 0.0
        for v in terms:
            left_to_right += v
        missed += left_to_right != total
    assert missed > 0  # not vacuous: left to right rounds in some cases (401 of the 2000 with this seed)


def exact_sum(xs: list[float]) -> Fraction:
    return sum((Fraction(x) for x in xs), Fraction(0))


def higham_gamma(n: int) -> Fraction:
    return n * U / (1 - n * U)


def test_real_valued_sums_stay_within_the_rounding_bound() -> None:
    """|fl-sum(x) - exact sum(x)| <= gamma_{m-1} sum|x_i| (left-to-right summation, as the counters sum), so the
    float sensitivity of a p-sum of m real inputs is at most Delta + 2 gamma_{m-1} (sum|x| + sum|x'|)."""
    rng = data_rng(7)
    for _ in range(300):
        m = int(rng.integers(1, 65))
        xs = [float(rng.uniform(-1.0, 1.0)) * 10.0 ** int(rng.integers(-3, 4)) for _ in range(m)]
        ys = list(xs)
        ys[int(rng.integers(m))] += float(rng.uniform(-1.0, 1.0))
        fx, fy = 0.0, 0.0
        for x, y in zip(xs, ys, strict=True):
            fx, fy = fx + x, fy + y
        ex, ey = exact_sum(xs), exact_sum(ys)
        bound_x = higham_gamma(m - 1) * sum(abs(Fraction(x)) for x in xs)
        bound_y = higham_gamma(m - 1) * sum(abs(Fraction(y)) for y in ys)
        assert abs(Fraction(fx) - ex) <= bound_x and abs(Fraction(fy) - ey) <= bound_y
        assert abs(Fraction(fy) - Fraction(fx)) <= abs(ey - ex) + bound_x + bound_y
    # the relative excess of eps quoted in the note (m inputs of size <= 1, Delta = 1): 2 gamma_{m-1} 2m
    assert 2 * higham_gamma(1000 - 1) * 2 * 1000 < Fraction(5, 10**10)
    assert 2 * higham_gamma(2**20 - 1) * 2 * 2**20 < Fraction(5, 10**4)


def test_integer_part_splits_are_the_same_float() -> None:
    """(floor(a) + z) + (a - floor(a)) == fl(a + z) for floats a >= 0 and integers z (004-alg2 u2's T_0 and 002-alg3
    as printed): a - floor(a) is exact, floor(a) + z is an exact integer, and both sides round the same real once."""
    rng = data_rng(11)
    cases = [(0.0, 0), (0.5, -1), (2.0**52 + 0.5, 3), (2.0**60, -7), (123.456, -124), (0.999, 10**6)]
    cases += [(float(rng.uniform(0, 10.0 ** int(rng.integers(0, 18)))), int(rng.integers(-(10**9), 10**9 + 1)))
              for _ in range(2000)]
    for a, z in cases:
        base = math.floor(a)
        assert Fraction(a) - base == Fraction(a - base)  # the fractional part is computed exactly
        if abs(base + z) <= 2**53:  # the integer converts exactly (counts and thresholds far below 2^53)
            assert (base + z) + (a - base) == a + z
    x = sp.symbols("x", real=True)
    z = sp.symbols("z", integer=True)
    assert sp.simplify((sp.floor(x) + z) + (x - sp.floor(x)) - (x + z)) == 0  # the same exact real


def test_simple_counter_release_is_post_processing_of_door_outputs() -> None:
    """001-alg8 through the door: g(t) is the running float sum of the noisy statistics the door returned
    (release = value + recorded noise for the seeded source), i.e. a function of the door's outputs only."""
    recorder = TapeRecorder(InsecureSeededNoise(3))
    counter = SimpleCounter(0.5, noise=recorder)
    inputs = [0.5, -1.0, 2.25, 0.0, 3.0, 1.0]
    releases = counter.run(inputs)
    noisy = [x + d.value for x, d in zip(inputs, recorder.tape, strict=True)]  # what the door returned
    g = 0.0
    for t, s in enumerate(noisy):
        g = g + s
        assert releases[t] == g
