"""Independent recomputation of the corpus vectors of 004-alg1, 004-alg4, 004-alg2 and 004-alg3.

``tests/hypercube/test_online.py::test_online_vector`` replays the 004-alg1 vectors through the
implementation. This module recomputes every expected release from the vector's inputs and tape
alone, from the printed boxes (004-alg1..alg4, 001-alg10 of paper 004, arXiv:2402.08012) with the
default corrections of docs/errata/hypercube.md (E-hypercube-1..5, 8, 9, 12, 13) and E-counters-1.
It imports nothing from ``dpstream`` (it reads the corpus files, reference/dpstream/vectors/corpus, as JSON):
the partition, the schedules (4.1) and (5.1), 004-alg2/3, the Binary Mechanism, 004-alg4's two rules
(EQUAL_SHIFT, PROPORTIONAL) and the output step are written again here.

What is recomputed, per release t (global time, one point x_t per step):

1. the depth r = max{j : t_j <= t}, t_j = ceil(2^j / eps) (E-hypercube-1; checked against
   floor(log2(eps t)) of §3.2), and the regions theta in {0,1}^{<=r} (depth k -> k + 1 halves
   coordinate k mod d at its midpoint, E-hypercube-13); region theta's input stream is
   1{x_i in Omega_theta} for i >= t_{r0} (r0 = |theta| and schedule (4.1) for d >= 2; r0 = 0 and schedule
   (5.1) for d = 1, the counter reading the whole history when its region appears; E-hypercube-2);
2. each region's noisy count n'_theta = S~ + c_t of 004-alg3 (levels r >= r0, each with its own
   004-alg2 of parameter eps_{|theta|,r}/2 and horizon t_{r+1} - t_r; S~ adds each ended level's
   exact sum + Lap_Z(2/eps_{|theta|,r})); 004-alg2 in its streaming form (E-hypercube-3, -4); A_sub
   the discrete Binary Mechanism with eps/2 and scale (floor(log2 T) + 1)/(eps/2) (E-hypercube-12,
   E-counters-1); the root count n'_root = t (E-hypercube-8);
3. the consistent counts m_theta by 004-alg4 on the clamped noisy counts with the EQUAL_SHIFT rule of
   docs/hypercube.md (E-hypercube-9);
4. the synthetic points: one ``uniform_box`` draw per deepest region with m_theta > 0, whose box
   and count must be the region's box and m_theta, concatenated in the order of theta.

Every draw is read from the tape by its site, with its kind and scale checked against the
schedule (relative 1e-12), and every site of the tape must be read exactly once.
"""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Callable, Sequence
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

CORPUS = Path(__file__).resolve().parents[2] / "reference" / "dpstream" / "vectors" / "corpus"
ONLINE = CORPUS / "004-alg1" / "online-d2-eps2-t10.json"
FLOAT_TOL = 1e-12


def corpus_files(algorithm: str) -> list[Path]:
    """The known-answer vectors of ``algorithm`` listed by the corpus manifest."""
    rows = json.loads((CORPUS / "manifest.json").read_text(encoding="utf-8"))["vectors"]
    return [CORPUS / r["file"] for r in rows if r["kind"] == "known-answer" and r["algorithm"] == algorithm]

Point = Sequence[float]


# --- reading the tape -----------------------------------------------------------------------------


class Tape:
    """The tape's draws by site; every read checks the kind and the parameters and is remembered."""

    def __init__(self, tape: dict[str, Any]) -> None:
        self.draws: dict[str, dict[str, Any]] = {}
        for draw in tape["draws"]:
            assert draw["site"] not in self.draws, f"duplicate site {draw['site']}"
            self.draws[draw["site"]] = draw
        self.read: list[str] = []

    def _take(self, site: str, kind: str) -> dict[str, Any]:
        assert site in self.draws, f"site missing from the tape: {site}"
        assert site not in self.read, f"site read twice: {site}"
        draw = self.draws[site]
        assert draw["kind"] == kind, f"{site}: kind {draw['kind']} != {kind}"
        self.read.append(site)
        return draw

    def lap_z(self, site: str, scale: float) -> int:
        """A Lap_Z(scale) draw (004-sec2.4): pmf proportional to exp(-|z|/scale)."""
        draw = self._take(site, "discrete_laplace")
        assert draw["params"] == {"scale": pytest.approx(scale, rel=1e-12)}, (site, draw["params"], scale)
        value = draw["value"]
        assert isinstance(value, int) and not isinstance(value, bool), site
        return value

    def uniform_box(self, site: str, low: list[float], high: list[float], count: int) -> list[list[float]]:
        draw = self._take(site, "uniform_box")
        assert draw["params"] == {"low": low, "high": high, "count": count}, (site, draw["params"])
        rows: list[list[float]] = [[float(v) for v in row] for row in draw["value"]]
        assert len(rows) == count, site
        return rows

    def unused(self) -> set[str]:
        return set(self.draws) - set(self.read)


# --- the schedule and the level times (004-sec3.1, 004-eq4.1) --------------------------------------


def level_time(j: int, eps: float) -> int:
    """t_j = ceil(2^j / eps) (§3.2), exactly (the float eps read as a rational)."""
    return math.ceil(Fraction(2**j) / Fraction(eps))


def depth_at(t: int, eps: float) -> int:
    """Depth of the partition at time t: the level j with t_j <= t < t_{j+1} (0 before t_1; E-hypercube-1)."""
    j = 0
    while level_time(j + 1, eps) <= t:
        j += 1
    return j


def eps_41(j: int, r: int, eps: float, d: int) -> float:
    """(4.1): eps_{j,r} = C1 eps 2^{(j-r)(1-1/d)/2}, C1 = (1 - 2^{-(1-1/d)/2})/2 (d >= 2)."""
    assert d >= 2
    c1 = (1.0 - math.pow(2.0, -(1.0 - 1.0 / d) / 2.0)) / 2.0
    return c1 * eps * math.pow(2.0, (j - r) * (1.0 - 1.0 / d) / 2.0)


def eps_51(j: int, eps: float) -> float:
    """(5.1), d = 1: eps_{j,r} = (3/pi^2) eps / (j+1)^2 for every level r >= r0 = 0."""
    return 3.0 / math.pi**2 * eps / (j + 1) ** 2


def region_schedule(j: int, eps: float, d: int) -> Callable[[int], float]:
    """eps_{j,r0}, eps_{j,r0+1}, ... of the depth-j regions' counters (004-alg1 u4)."""
    if d == 1:
        return lambda r: eps_51(j, eps)
    return lambda r: eps_41(j, r, eps, d)


def start_level(j: int, d: int) -> int:
    """r0 of a depth-j region's counter: j under (4.1), 0 under (5.1)."""
    return j if d >= 2 else 0


# --- the binary partition (004-sec3.1, E-hypercube-13) ---------------------------------------------


def label(depth: int, index: int) -> str:
    """theta as printed in sites: its bits, first split first (index = theta read in binary); the root is 'root'."""
    return format(index, f"0{depth}b") if depth else "root"


def region_of(x: Point, depth: int, d: int) -> int:
    """Index of the depth-`depth` region holding x: bit k says whether x_{k mod d} is in the upper half
    of its current interval (lower halves half-open, the last cell closed at 1)."""
    low, high = [0.0] * d, [1.0] * d
    index = 0
    for k in range(depth):
        c = k % d
        mid = (low[c] + high[c]) / 2.0  # dyadic: exact
        upper = x[c] >= mid
        index = 2 * index + int(upper)
        if upper:
            low[c] = mid
        else:
            high[c] = mid
    return index


def box(depth: int, index: int, d: int) -> tuple[list[float], list[float]]:
    low, high = [0.0] * d, [1.0] * d
    for k, bit in enumerate(format(index, f"0{depth}b") if depth else ""):
        c = k % d
        mid = (low[c] + high[c]) / 2.0
        if bit == "1":
            low[c] = mid
        else:
            high[c] = mid
    return low, high


def in_box(x: Point, low: Sequence[float], high: Sequence[float]) -> bool:
    return all(lo <= v and (v < hi or (hi == 1.0 and v == 1.0)) for v, lo, hi in zip(x, low, high, strict=True))


# --- 001-alg10: the Binary Mechanism, discrete, with the corrected scale (E-counters-1) -------------


class BinaryMechanism:
    """001-alg10 L5-L10 with Lap_Z noise of scale (floor(log2 T) + 1)/eps (E-counters-1, E-hypercube-12)."""

    def __init__(self, eps: float, T: int, tape: Tape, prefix: str) -> None:
        self.scale = T.bit_length() / eps
        self.T, self.tape, self.prefix = T, tape, prefix
        self.alpha: list[int] = []
        self.alpha_hat: list[int] = []
        self.t = 0

    def step(self, f: int) -> int:
        self.t += 1
        t = self.t
        assert t <= self.T, "A_sub stepped past its horizon"
        bits = [(t >> i) & 1 for i in range(t.bit_length())]  # L5
        j = min(i for i, b in enumerate(bits) if b)  # L6
        while len(self.alpha) <= j:
            self.alpha.append(0)
            self.alpha_hat.append(0)
        self.alpha[j] = sum(self.alpha[:j]) + f  # L7
        self.alpha_hat[j] = self.alpha[j] + self.tape.lap_z(f"{self.prefix}001-alg10 L8 t={t}", self.scale)  # L8
        for i in range(j):  # L9
            self.alpha[i] = self.alpha_hat[i] = 0
        return sum(self.alpha_hat[i] for i, b in enumerate(bits) if b)  # L10


# --- 004-alg2: sparse counting, streaming form (E-hypercube-3, -4) ---------------------------------


def sparse_counting(x: Sequence[int], eps: float, T: int, tape: Tape, prefix: str = "",
                    ends: list[int] | None = None) -> list[int]:
    """Releases of 004-alg2 at local times 1..len(x) <= T.

    Segment j: N_j = 0, threshold T~_j = T_0 + lambda_j (site ``u2 j=<j>``), T_0 = 9 ln T / eps. After
    reading X_t (and only if t < T: later tests would only decide releases past the horizon) the
    segment is tested with N_j + lambda'_t <= T~_j (site ``u3 j=<j> t=<t>``); a failing test ends the
    segment and feeds N_j to A_sub (u7, u8), whose latest output is N~. The release at t is N~ when X_t
    is read (u5 inside the loop); a new segment is first tested after one input (E-hypercube-4).
    """
    assert len(x) <= T
    b = 2.0 / eps
    T0 = 9.0 * math.log(T) / eps
    sub = BinaryMechanism(eps / 2.0, T, tape, prefix + "004-alg2 u8 / ")
    out: list[int] = []
    j, N, N_tilde = 1, 0, 0
    threshold = T0 + tape.lap_z(f"{prefix}004-alg2 u2 j=1", b) if x else 0.0
    for t in range(1, len(x) + 1):
        if t > 1 and not N + tape.lap_z(f"{prefix}004-alg2 u3 j={j} t={t - 1}", b) <= threshold:
            N_tilde = sub.step(N)  # end segment j (u7) and feed N_j to A_sub (u8)
            if ends is not None:
                ends.append(t - 1)
            j, N = j + 1, 0
            threshold = T0 + tape.lap_z(f"{prefix}004-alg2 u2 j={j}", b)
        N += x[t - 1]  # u4
        out.append(N_tilde)  # u5
    return out


# --- 004-alg3: inhomogeneous sparse counting (E-hypercube-5) ---------------------------------------


def inhomogeneous_sparse_counting(x: dict[int, int], t_end: int, eps: float, r0: int,
                                  eps_level: Callable[[int], float], tape: Tape, prefix: str = "",
                                  ends: list[int] | None = None) -> dict[int, int]:
    """Releases S~ + c_t of 004-alg3 at the global times t_{r0} <= t <= t_end; x maps each global time
    t >= t_{r0} to X_t (earlier inputs are not used). Level r is [t_r, t_{r+1}), t_r = ceil(2^r/eps)
    with the global eps; c_t comes from level r's own 004-alg2 with eps_r/2 and horizon t_{r+1} - t_r."""
    out: dict[int, int] = {}
    S = 0
    r = r0
    while level_time(r, eps) <= t_end:
        start, stop = level_time(r, eps), level_time(r + 1, eps)
        times = range(start, min(stop, t_end + 1))
        # an empty level (t_r = t_{r+1}, eps > 1) has no time, hence no Algorithm 2, but still ends with u3
        c = sparse_counting([x[t] for t in times], eps_level(r) / 2.0, stop - start, tape,
                            f"{prefix}004-alg3 u2 r={r} / ", ends) if stop > start else []
        for t, c_t in zip(times, c, strict=True):
            out[t] = S + c_t  # u3 "Output S~ + c_t"
        if stop > t_end:
            break  # level r has not ended by t_end
        S += sum(x[t] for t in range(start, stop)) + tape.lap_z(f"{prefix}004-alg3 u3 r={r}", 2.0 / eps_level(r))
        r += 1
    return out


# --- 004-alg4 with the EQUAL_SHIFT rule (docs/hypercube.md "Consistency", E-hypercube-9) ------------


def consistent_counts(noisy: list[list[int]]) -> list[list[int]]:
    """m_root = max(n'_root, 0); for each parent, with the clamped children a, b: Delta = m - a - b,
    m_{theta0} = a + floor(Delta/2) clipped to [0, m], m_{theta1} = m - m_{theta0}."""
    m = [[max(noisy[0][0], 0)]]
    for j in range(len(noisy) - 1):
        level: list[int] = []
        for i, parent in enumerate(m[j]):
            a, b = max(noisy[j + 1][2 * i], 0), max(noisy[j + 1][2 * i + 1], 0)
            left = min(max(a + (parent - a - b) // 2, 0), parent)
            right = parent - left
            assert left >= 0 and right >= 0 and (left - a) * (right - b) >= 0  # 004-alg4 u4 with n'
            level += [left, right]
        m.append(level)
    return m


# --- 004-alg1 -----------------------------------------------------------------------------------------


def recompute(vector: dict[str, Any], ends: list[int] | None = None) -> list[dict[str, Any]]:
    """Every release of an 004-alg1 vector from its params, inputs and tape; asserts that every tape site is read
    exactly once."""
    eps, d = float(vector["params"]["epsilon"]), int(vector["params"]["d"])
    xs: list[list[float]] = vector["inputs"]
    t_end = len(xs)
    tape = Tape(vector["tape"])
    r_max = depth_at(t_end, eps)
    # (1)+(2): each region's counter (created at t_j; r0 = j or 0, stream from t_{r0} on), run to t_end
    noisy_of: dict[tuple[int, int], dict[int, int]] = {}
    for j in range(1, r_max + 1):
        r0 = start_level(j, d)
        for index in range(2**j):
            stream = {t: int(region_of(xs[t - 1], j, d) == index) for t in range(level_time(r0, eps), t_end + 1)}
            noisy_of[(j, index)] = inhomogeneous_sparse_counting(
                stream, t_end, eps, r0, region_schedule(j, eps, d), tape,
                f"004-alg1 u6 theta={label(j, index)} / ", ends)
    releases: list[dict[str, Any]] = []
    for t in range(1, t_end + 1):
        r = depth_at(t, eps)
        noisy = [[t]] + [[noisy_of[(j, i)][t] for i in range(2**j)] for j in range(1, r + 1)]  # n'_root = t
        consistent = consistent_counts(noisy)  # (3)
        points: list[list[float]] = []  # (4)
        for index, m in enumerate(consistent[r]):
            if m > 0:
                low, high = box(r, index, d)
                drawn = tape.uniform_box(f"004-alg1 u8 t={t} theta={label(r, index)}", low, high, m)
                assert all(in_box(p, low, high) for p in drawn)
                points += drawn
        releases.append({"t": t, "depth": r, "noisy": noisy, "consistent": consistent, "points": points})
    assert not tape.unused(), f"tape sites never read: {sorted(tape.unused())}"
    return releases


def disagreements(vector: dict[str, Any]) -> list[str]:
    """Where the recomputation differs from the vector's `expected` (empty if it agrees everywhere)."""
    try:
        got = recompute(vector)
    except AssertionError as error:
        return [f"recomputation failed: {error}"]
    want: list[dict[str, Any]] = vector["expected"]
    found: list[str] = []
    if len(got) != len(want):
        found.append(f"{len(got)} releases recomputed, {len(want)} expected")
    for g, w in zip(got, want, strict=False):
        t = g["t"]
        for key in ("t", "depth", "noisy", "consistent"):
            if g[key] != w[key]:
                found.append(f"t={t} {key}: recomputed {g[key]}, expected {w[key]}")
        gp, wp = g["points"], w["points"]
        if wp is None or len(gp) != len(wp) or any(
                len(a) != len(b) or any(abs(u - v) > FLOAT_TOL for u, v in zip(a, b, strict=True))
                for a, b in zip(gp, wp, strict=True)):
            found.append(f"t={t} points: recomputed {gp}, expected {wp}")
        # each expected point lies in a deepest region, m_theta of them in region theta
        if wp is not None:
            cells = [0] * 2 ** g["depth"]
            for p in wp:
                cells[region_of(p, g["depth"], len(p))] += 1
            if cells != g["consistent"][-1]:
                found.append(f"t={t} points per deepest region {cells} != m {g['consistent'][-1]}")
    return found


def by_value(x: Any) -> Any:
    """JSON numbers are read by value (docs/conformance.md): 16.0 is the integer 16."""
    if isinstance(x, float) and x.is_integer():
        return int(x)
    if isinstance(x, dict):
        return {k: by_value(v) for k, v in x.items()}
    return [by_value(v) for v in x] if isinstance(x, list) else x


def load(path: Path) -> dict[str, Any]:
    """A corpus vector, its parameters and inputs read by value."""
    vector: dict[str, Any] = json.loads(path.read_text())
    return {**vector, "params": by_value(vector["params"]), "inputs": by_value(vector["inputs"])}


# --- tests --------------------------------------------------------------------------------------------


def test_schedule_and_level_times_closed_form() -> None:
    """(4.1) against its closed form (4.2) and level times / depths against §3.2 for the vector's eps."""
    eps, d = 2.0, 2
    alpha = 2.0 ** ((1 - 1 / d) / 2)
    c1 = (1 - 2.0 ** (-(1 - 1 / d) / 2)) / 2
    for s in range(1, 12):
        total = sum(eps_41(j, s, eps, d) for j in range(1, s + 1))
        assert total == pytest.approx(c1 * eps * (1 - alpha**-s) / (1 - 1 / alpha), rel=1e-12)
        assert total <= eps / 2
    assert [level_time(j, eps) for j in range(6)] == [1, 1, 2, 4, 8, 16]
    assert [depth_at(t, eps) for t in range(1, 11)] == [math.floor(math.log2(eps * t)) for t in range(1, 11)]
    assert [depth_at(t, 1.0) for t in range(1, 10)] == [0, 1, 1, 2, 2, 2, 2, 3, 3]  # E-hypercube-1 hand values


def test_partition_rule() -> None:
    """Depth k -> k + 1 halves coordinate k mod d (E-hypercube-13): volume 2^-j, l_inf diameter 2^-floor(j/d)."""
    for d in (1, 2, 3):
        for j in range(7):
            boxes = [box(j, i, d) for i in range(2**j)]
            for i, (low, high) in enumerate(boxes):
                sides = [h - lo for lo, h in zip(low, high, strict=True)]
                assert math.prod(sides) == 2.0**-j and max(sides) == 2.0 ** -(j // d)
                centre = [(lo + h) / 2 for lo, h in zip(low, high, strict=True)]
                assert region_of(centre, j, d) == i and region_of(low, j, d) == i
    assert box(2, 0b10, 2) == ([0.5, 0.0], [1.0, 0.5])
    assert region_of([1.0, 1.0], 4, 2) == 15 and region_of([0.5, 0.49], 2, 2) == 0b10


COUNTER_FILES = [*corpus_files("004-alg2"), *corpus_files("004-alg3")]


@pytest.mark.parametrize("path", COUNTER_FILES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_own_counters_reproduce_the_counter_vectors(path: Path) -> None:
    """The 004-alg2 / 004-alg3 written here also give the counters' corpus vectors (checked independently in
    tests/hypercube/test_sparse_counters.py), reading every tape site."""
    vector = load(path)
    p, x, tape = vector["params"], vector["inputs"], Tape(vector["tape"])
    if vector["algorithm"] == "004-alg2":
        assert sparse_counting(x, p["epsilon"], p["T"], tape) == vector["expected"]
    else:
        start = level_time(p["r0"], p["epsilon"])
        got = inhomogeneous_sparse_counting({t: x[t - 1] for t in range(start, len(x) + 1)}, len(x), p["epsilon"],
                                            p["r0"], lambda r: float(p["eps_r"]), tape)
        assert [got.get(t, 0) for t in range(1, len(x) + 1)] == vector["expected"]  # 0 before t_{r0}
    assert not tape.unused()


ONLINE_FILES = corpus_files("004-alg1")


@pytest.mark.parametrize("path", ONLINE_FILES, ids=lambda p: p.stem)
def test_online_vector_recomputed_independently(path: Path) -> None:
    vector = load(path)
    releases = recompute(vector)
    assert [r["t"] for r in releases] == list(range(1, len(vector["inputs"]) + 1))
    assert disagreements(vector) == []
    for got, want in zip(releases, vector["expected"], strict=True):
        assert got["depth"] == want["depth"] and got["noisy"] == want["noisy"]
        assert got["consistent"] == want["consistent"]
        assert len(got["points"]) == got["t"] == len(want["points"])
        for a, b in zip(got["points"], want["points"], strict=True):
            assert a == pytest.approx(b, abs=FLOAT_TOL, rel=0)


def test_online_vectors_exercise_the_boxes() -> None:
    """Over the corpus: A_sub (the Binary Mechanism) is fed, d = 1, 2, 3 occur, and some steps precede level 1."""
    ends: list[int] = []
    for path in ONLINE_FILES:
        recompute(load(path), ends)
    assert len(ends) >= 2  # A_sub is fed (segments end), as in the first vector
    vectors = [load(p) for p in ONLINE_FILES]
    assert {v["params"]["d"] for v in vectors} == {1, 2, 3}
    assert any(r["depth"] == 0 and r["t"] > 1 for v in vectors for r in v["expected"])
    old = load(ONLINE)
    assert old["algorithm"] == "004-alg1" and old["params"] == {"epsilon": 2.0, "d": 2}


# --- 004-alg4 on its own (the protocol's stateless stream) --------------------------------------------


def proportional_counts(noisy: list[list[int]]) -> list[list[int]]:
    """PROPORTIONAL: m_{theta0} = round-half-up(m a / (a + b)) (ceil(m/2) when a + b = 0), m_{theta1} = m - m_{theta0}.
    """
    m = [[max(noisy[0][0], 0)]]
    for j in range(len(noisy) - 1):
        level: list[int] = []
        for i, parent in enumerate(m[j]):
            a, b = max(noisy[j + 1][2 * i], 0), max(noisy[j + 1][2 * i + 1], 0)
            left = math.floor(Fraction(parent * a, a + b) + Fraction(1, 2)) if a + b else -(-parent // 2)
            right = parent - left
            assert left >= 0 and right >= 0 and (left - a) * (right - b) >= 0
            level += [left, right]
        m.append(level)
    return m


@pytest.mark.parametrize("path", corpus_files("004-alg4"), ids=lambda p: p.stem)
def test_consistency_vector_recomputed_independently(path: Path) -> None:
    vector = load(path)
    rule = {"equal-shift": consistent_counts, "proportional": proportional_counts}[vector["params"]["rule"]]
    assert vector["tape"]["draws"] == []
    got = [rule([[int(n) for n in level] for level in noisy]) for noisy in vector["inputs"]]
    assert got == vector["expected"]
    for m in got:  # consistent and non-negative
        assert all(v >= 0 for level in m for v in level)
        assert all(m[j][i] == m[j + 1][2 * i] + m[j + 1][2 * i + 1] for j in range(len(m) - 1) for i in range(2**j))


def _bump_tape(vector: dict[str, Any], site: str, delta: float) -> None:
    (draw,) = [d for d in vector["tape"]["draws"] if d["site"] == site]
    if draw["kind"] == "uniform_box":
        draw["value"][0][0] += delta
    else:
        draw["value"] += int(delta)


@pytest.mark.parametrize(("where", "field"), [
    ("expected noisy", "t=5 noisy"),
    ("expected consistent", "t=7 consistent"),
    ("expected point", "t=9 points"),
    ("tape level-end noise", "t=2 noisy"),  # 004-alg3 u3 of theta=0, level 1: every release from t=2
    ("tape A_sub noise", "t=3 noisy"),  # 001-alg10 node of theta=1, level 2: the release at t=3
    ("tape threshold", "recomputation failed"),  # a segment of theta=11 no longer ends: its A_sub draw is unused
    ("tape uniform_box", "t=6 points"),
    ("tape scale", "recomputation failed"),
])
def test_corrupted_vector_disagrees(where: str, field: str) -> None:
    vector = load(ONLINE)
    bad = copy.deepcopy(vector)
    if where == "expected noisy":
        bad["expected"][4]["noisy"][2][0] += 1
    elif where == "expected consistent":
        bad["expected"][6]["consistent"][3][4] += 1
    elif where == "expected point":
        bad["expected"][8]["points"][3][1] += 1e-9
    elif where == "tape level-end noise":
        _bump_tape(bad, "004-alg1 u6 theta=0 / 004-alg3 u3 r=1", 1)
    elif where == "tape A_sub noise":
        _bump_tape(bad, "004-alg1 u6 theta=1 / 004-alg3 u2 r=2 / 004-alg2 u8 / 001-alg10 L8 t=1", 1)
    elif where == "tape threshold":
        _bump_tape(bad, "004-alg1 u6 theta=11 / 004-alg3 u2 r=2 / 004-alg2 u2 j=1", 100)
    elif where == "tape uniform_box":
        (draw,) = [d for d in bad["tape"]["draws"] if d["site"].startswith("004-alg1 u8 t=6 ")][:1]
        draw["value"][0][0] += 1e-6
    else:
        (draw,) = [d for d in bad["tape"]["draws"] if d["site"] == "004-alg1 u6 theta=01 / 004-alg3 u3 r=2"]
        draw["params"]["scale"] *= 2
    assert disagreements(vector) == []
    found = disagreements(bad)
    assert found, where
    assert any(f.startswith(field) for f in found), found
