"""Documented states of the counters (docs/counters.md): 001-alg8/9/10, 002-alg3, 003-alg4, the hybrid counter,
004-alg2/alg3 and the multi-dimensional counter 001-sec4.3."""

from __future__ import annotations

from typing import Any

from dpstream.checkpoint.kinds import (
    BOOL,
    COUNT,
    NUMBER,
    POSITIVE,
    REAL,
    Array,
    Component,
    ComponentList,
    Function,
    Int,
    ListOf,
    Nullable,
    Str,
)
from dpstream.checkpoint.spec import Field, StateSpec, require
from dpstream.checkpoint.states.common import AS_PRINTED, EPSILON, HORIZON, T_STEPS, check_steps, releases, same_float
from dpstream.counters import (
    BinaryTreeCounter,
    BlockCounter,
    HybridCounter,
    InhomogeneousSparseCounter,
    MultiDimensionalCounter,
    SimpleCounter,
    SparseCounter,
    TreeAggregationCounter,
    UnboundedBlockCounter,
)
from dpstream.counters.sparse import level_start
from dpstream.noise import ScopedNoise, scoped

__all__ = ["SPECS"]

FAMILY = "counters"


def _basics(c: Any) -> None:
    check_steps(c.t, c.horizon, c.releases)


# --- 001-alg8 ------------------------------------------------------------------------------------------------------

def _check_simple(c: SimpleCounter) -> None:
    """t <= T; one release per step; g(t) is the last release (g(0) = 0)."""
    _basics(c)
    require(same_float(c.g, c.releases[-1]) if c.t else c.g == 0.0, "g(t) must be the last release (g(0) = 0)")


SIMPLE = StateSpec(
    SimpleCounter, FAMILY, "001-alg8", "Simple counter: g(t) = g(t-1) + f(t) + Lap(1/eps).",
    params=(EPSILON, HORIZON),
    variables=(T_STEPS, Field("g", REAL, "g(t), the running noisy count (g(0) = 0)"), releases(REAL)),
    check=_check_simple,
)


# --- 001-alg9 ------------------------------------------------------------------------------------------------------

def _check_block(c: BlockCounter) -> None:
    """t <= T; one release per step; alpha = beta = 0 at a block end; g(t) = beta_lastblock + alpha."""
    _basics(c)
    if c.t and c.t % c.B == 0:
        require(c.alpha == 0.0 and c.beta == 0.0, "alpha and beta restart at a block end (t = kB)")
    if c.t:
        require(same_float(c.beta_lastblock + c.alpha, c.releases[-1]), "g(t) = beta_lastblock + alpha (L12)")


BLOCK = StateSpec(
    BlockCounter, FAMILY, "001-alg9", "Block counter with block size B (two levels, Lap(2/eps) at both).",
    params=(EPSILON, Field("B", Int(1), "block size B"), HORIZON),
    variables=(
        T_STEPS,
        Field("alpha", REAL, "alpha: the noisy in-block values of the current block, summed (L10)"),
        Field("beta", REAL, "beta: the TRUE sum of the current block (noised at the block end, L7)"),
        Field("beta_lastblock", REAL, "beta_lastblock: the noisy block sums so far (L8)"),
        releases(REAL),
    ),
    check=_check_block,
)


# --- 001-alg10 and 002-alg3: the dyadic trees ----------------------------------------------------------------------

def _check_tree(c: Any, hat: list[float], integral: bool) -> None:
    _basics(c)
    n = c.t.bit_length()
    require(len(c.alpha) == len(hat) == n, f"holds {len(c.alpha)} p-sums and {len(hat)} noisy p-sums; t = {c.t} "
                                           f"needs floor(log2 t) + 1 = {n}")
    if c.t:
        j = (c.t & -c.t).bit_length() - 1
        require(all(c.alpha[i] == 0.0 and hat[i] == 0.0 for i in range(j)), "the nodes below the lowest set bit "
                                                                            "of t are reset to 0 (L9)")
        g = sum(hat[i] for i in range(n) if (c.t >> i) & 1)
        require(same_float(float(g), c.releases[-1]), "g(t) is the sum of the noisy p-sums of the set bits of t")
    if integral:
        require(all(float(v).is_integer() for v in (*c.alpha, *hat, *c.releases)), "integer inputs and noise keep "
                                                                                   "every value an integer")


def _check_binary(c: BinaryTreeCounter) -> None:
    """t <= T; one release per step; floor(log2 t) + 1 p-sums and noisy p-sums; those below the lowest set bit of t
    are 0; g(t) is the sum of the noisy p-sums of t's set bits; with discrete, every value an integer."""
    _check_tree(c, c.alpha_hat, c.discrete)


def _check_aggregation(c: TreeAggregationCounter) -> None:
    """t <= T; one release per step; floor(log2 t) + 1 p-sums and noisy p-sums; those below the lowest set bit of t
    are 0; S~^t is the sum of the noisy p-sums of t's set bits; on integer inputs every value an integer."""
    _check_tree(c, c.alpha_tilde, c.integer_input)


BINARY_TREE = StateSpec(
    BinaryTreeCounter, FAMILY, "001-alg10 (004-lem3.1 with discrete)",
    "Binary tree counter: the p-sum of (t - 2^j, t] noised once at time t, g(t) = the noisy p-sums of t's bits.",
    params=(EPSILON, Field("T", Int(1), "time horizon T"),
            Field("discrete", BOOL, "integer inputs and discrete Laplace noise (004-lem3.1)"), AS_PRINTED),
    derived=(Field("scale", POSITIVE, "noise scale b per node: (floor(log2 T) + 1)/eps (as printed: log2(T)/eps)"),),
    variables=(
        T_STEPS,
        Field("alpha", ListOf(REAL), "p-sums alpha_i, i = 0..floor(log2 t) (L7, L9)"),
        Field("alpha_hat", ListOf(REAL), "noisy p-sums alpha_hat_i = alpha_i + noise (L8)"),
        releases(REAL),
    ),
    check=_check_binary,
)

TREE_AGGREGATION = StateSpec(
    TreeAggregationCounter, FAMILY, "002-alg3",
    "Tree aggregation with discrete Gaussian noise (rho-zCDP): the dyadic tree of 001-alg10.",
    params=(Field("rho", POSITIVE, "zCDP budget rho"), Field("T", Int(1), "time upper bound T"), AS_PRINTED),
    derived=(Field("sigma2", POSITIVE, "variance sigma^2 per node: (floor(log2 T) + 1)/(2 rho) (as printed: "
                                       "log2(T)/(2 rho))"),),
    variables=(
        T_STEPS,
        Field("alpha", ListOf(REAL), "p-sums alpha_i (u4, u6)"),
        Field("alpha_tilde", ListOf(REAL), "noisy p-sums alpha~_i = alpha_i + N_Z(0, sigma^2) (u8)"),
        releases(REAL, "S~^1, ..., S~^t"),
    ),
    check=_check_aggregation,
)


# --- 003-alg4 / 000-alg4 -----------------------------------------------------------------------------------------

def _block_state(name: str) -> Any:
    return lambda c: getattr(c.state, name)


def _put_block_state(name: str) -> Any:
    def put(c: UnboundedBlockCounter, value: Any) -> None:
        c.state = type(c.state)(**{**vars(c.state), name: value})
    return put


def _check_unbounded(c: UnboundedBlockCounter) -> None:
    """one release per step; T = B^2; t_atPartition = 4 + 9 + ... + (B-1)^2; 0 <= t - t_atPartition < T; the
    in-block sums are 0 at a block end; g(0) = 0; g(t) = alpha_lastBlock (+ alpha_synthInBlock inside a block)."""
    _basics(c)
    s = c.state
    require(s.T == s.B * s.B, "the partition size is T = B^2 (L19)")
    require(s.t_atPartition == sum(b * b for b in range(2, s.B)), "t_atPartition is where the partition of block "
                                                                  "size B starts (4 + 9 + ... + (B-1)^2)")
    delta = c.t - s.t_atPartition
    require(0 <= delta < s.T, "t - t_atPartition lies in [0, T)")
    if delta % s.B == 0:
        require(s.alpha_trueInBlock == 0.0 and s.alpha_synthInBlock == 0.0, "a block end restarts the in-block sums")
    require(c.g0 == 0.0, "g(0) = 0")
    if c.t:
        g = s.alpha_lastBlock if delta % s.B == 0 else s.alpha_lastBlock + s.alpha_synthInBlock
        require(same_float(g, c.releases[-1]), "g(t) = alpha_lastBlock (+ alpha_synthInBlock inside a block)")


def _unbounded_field(name: str, kind: Any, doc: str) -> Field:
    return Field(name, kind, doc, get=_block_state(name), put=_put_block_state(name))


UNBOUNDED_BLOCK = StateSpec(
    UnboundedBlockCounter, FAMILY, "003-alg4 = 000-alg4",
    "Unbounded block counter: partitions of lengths 4, 9, 16, ... each run as a block counter with B = sqrt(T).",
    params=(EPSILON, AS_PRINTED),
    variables=(
        T_STEPS,
        _unbounded_field("T", Int(4), "partition size T = B^2 (L3, L19)"),
        _unbounded_field("B", Int(2), "block size B of the current partition (L4, L19)"),
        _unbounded_field("alpha_lastBlock", REAL, "alpha_lastBlock: every noisy block sum so far (L14)"),
        _unbounded_field("alpha_trueInBlock", REAL, "alpha_trueInBlock: the TRUE sum of the current block (L12)"),
        _unbounded_field("alpha_synthInBlock", REAL, "alpha_synthInBlock: the noisy in-block values (L21)"),
        _unbounded_field("t_atPartition", COUNT, "t_atPartition: the time the current partition started after (L18)"),
        Field("g0", REAL, "g(0) = 0 (L9)"),
        releases(REAL),
    ),
    check=_check_unbounded,
)


# --- the hybrid counter ------------------------------------------------------------------------------------------

def _check_hybrid(c: HybridCounter) -> None:
    """one release per step; k = floor(log2 t); B_k exists from t = 2 on and has read t - 2^k inputs; g(t) = beta (+
    B_k's last release between powers of two); B_k's parameters are the owner's (eps/2, horizon 2^k - 1)."""
    _basics(c)
    require(c.k == (c.t.bit_length() - 1 if c.t else 0), "k = floor(log2 t): 2^k <= t < 2^(k+1)")
    require((c.binary is None) == (c.k == 0), "B_k exists from t = 2 on")
    if c.binary is not None:
        require(c.binary.t == c.t - 2**c.k, "B_k has read the inputs at 2^k + 1, ..., t")
    if c.t:
        g = c.beta if c.binary is None or c.binary.t == 0 else c.beta + c.binary.releases[-1]
        require(same_float(g, c.releases[-1]), "g(t) = beta (+ B_k's last release between powers of two)")


HYBRID = StateSpec(
    HybridCounter, FAMILY, "CSS11-hybrid",
    "Hybrid mechanism: the Logarithmic mechanism at powers of two plus a binary tree B_k on each (2^k, 2^(k+1)).",
    params=(EPSILON,),
    variables=(
        T_STEPS,
        Field("beta", REAL, "L's running noisy count, released at the powers of two"),
        Field("pending", REAL, "the TRUE sum of the inputs since the last power of two (L's next statistic)"),
        Field("k", COUNT, "the current interval: 2^k <= t < 2^(k+1)"),
        Field("B_k", Component(lambda c: c.binary_mechanism(c.k), nullable=True,
                               doc="null or BinaryTreeCounter state"),
              "B_k, the binary tree counter of the interval (eps/2, horizon 2^k - 1); null before t = 2",
              attr="binary"),
        releases(REAL),
    ),
    check=_check_hybrid,
)


# --- 004-alg2 and 004-alg3 ---------------------------------------------------------------------------------------

def _check_sparse(c: SparseCounter) -> None:
    """t <= T; one release per step; j = segments ended + 1; A_sub exists once a segment ended and has counted each
    ended segment once; 0 <= N_j <= inputs read <= t; T~_1 is drawn at t = 1; N~ is A_sub's last output and the last
    release."""
    _basics(c)
    require(c.j == c.segments_ended + 1, "j - 1 segments have ended")
    require((c.sub is None) == (c.segments_ended == 0), "A_sub exists once a segment has ended")
    if c.sub is not None:
        require(c.sub.t == c.segments_ended, "A_sub has counted every ended segment once")
    require(0 <= c.N <= c.read <= c.t, "0 <= N_j <= inputs read by segment j <= t")
    require((c.T_tilde is None) == (c.t == 0), "T~_1 is drawn at t = 1")
    expected = c.sub.releases[-1] if c.sub is not None else 0.0
    require(c.N_tilde == expected, "N~ is A_sub's latest output")
    if c.t:
        require(c.releases[-1] == c.N_tilde, "g(t) = N~")


SPARSE = StateSpec(
    SparseCounter, FAMILY, "004-alg2",
    "Sparse counting: segments ended by a noisy threshold; each ended segment's count fed to A_sub.",
    params=(EPSILON, Field("T", Int(1), "time horizon T"), AS_PRINTED,
            Field("subroutine", Function(nullable=True), "A_sub's maker (null: the Binary Mechanism, horizon T)")),
    derived=(Field("T0", POSITIVE, "threshold T_0 = 9 log T / eps"),),
    variables=(
        T_STEPS,
        Field("j", Int(1), "the open segment j"),
        Field("N", COUNT, "N_j: the count of the open segment"),
        Field("read", COUNT, "the inputs segment j has read"),
        Field("T_tilde", Nullable(REAL), "T~_j = T_0 + lambda_j, the open segment's noisy threshold (null before "
                                         "t = 1)"),
        Field("N_tilde", REAL, "N~: A_sub's latest output (the release)"),
        Field("segments_ended", COUNT, "segments ended so far (= j - 1)"),
        Field("A_sub", Component(lambda c: c.new_subroutine(), nullable=True, doc="null or the state of A_sub"),
              "A_sub, the online counter of the segment counts (eps/2); null before the first segment end",
              attr="sub"),
        releases(NUMBER),
    ),
    check=_check_sparse,
)


def _check_inhomogeneous(c: InhomogeneousSparseCounter) -> None:
    """one release per step; before t_r0 nothing is counted; then t_next = t_(r+1), the global time lies in level r,
    the level counter has read the level's inputs, 0 <= level count <= its inputs, and the last release is S~ + c_t."""
    _basics(c)
    require((c.r is None) == (c.sub is None), "the level's counter exists once a level has started")
    if c.r is None:
        require(c.t_next == c.t_r0 and c.S_tilde == 0.0 and c.level_sum == 0, "nothing is counted before t_r0")
        require(c.first_time + c.t - 1 < c.t_r0, "a level starts at t_r0")
        return
    require(c.r >= c.r0 and c.t_next == level_start(c.r + 1, c.epsilon), "t_next = t_{r+1} of the current level r")
    tg = c.first_time + c.t - 1
    require(level_start(c.r, c.epsilon) <= tg < c.t_next, "the global time lies in level r")
    assert c.sub is not None
    require(c.sub.t == tg - level_start(c.r, c.epsilon) + 1, "the level's counter has read the level's inputs")
    require(0 <= c.level_sum <= c.sub.t, "0 <= the level's count so far <= its inputs")
    require(same_float(float(c.S_tilde + c.sub.releases[-1]), float(c.releases[-1])), "g(t) = S~ + c_t")


INHOMOGENEOUS_SPARSE = StateSpec(
    InhomogeneousSparseCounter, FAMILY, "004-alg3",
    "Inhomogeneous sparse counting: a fresh 004-alg2 per level r >= r0 of the global time, S~ the finished levels.",
    params=(
        Field("epsilon", POSITIVE, "the global budget eps that places the levels, t_r = ceil(2^r / eps)"),
        Field("r0", COUNT, "starting level r0"),
        Field("eps_levels", Function(), "the level budgets r -> eps_r"),
        Field("first_time", Int(1), "the global time of the first input (<= t_r0)"),
        Field("sparse", Function(nullable=True), "the level counter's maker (null: 004-alg2)"),
    ),
    derived=(Field("t_r0", Int(1), "t_r0 = ceil(2^r0 / eps), the first time of level r0"),),
    variables=(
        T_STEPS,
        Field("r", Nullable(COUNT), "the current level r (null before t_r0)"),
        Field("t_next", Int(1), "t_{r+1}, the first time after the current level (t_r0 before it)"),
        Field("S_tilde", REAL, "S~: the finished levels' counts, each plus Lap_Z(2/eps_r) (u3)"),
        Field("level_sum", COUNT, "the TRUE count of the current level so far (noised when the level ends)"),
        Field("sub", Component(lambda c: c.level_counter(c.r), nullable=True, doc="null or a level counter state"),
              "the current level's Algorithm 2 (eps_r/2, horizon t_{r+1} - t_r)"),
        releases(NUMBER, "S~ + c_t for t = 1..t"),
    ),
    check=_check_inhomogeneous,
)


# --- 001-sec4.3 ---------------------------------------------------------------------------------------------------

def _scopes(c: MultiDimensionalCounter) -> list[str | None]:
    return [n.prefix if isinstance(n, ScopedNoise) else None for n in (x.noise for x in c.counters)]


def _base(c: MultiDimensionalCounter) -> Any:
    bases = {id(n.inner if isinstance(n, ScopedNoise) else n): n.inner if isinstance(n, ScopedNoise) else n
             for n in (x.noise for x in c.counters)}
    return next(iter(bases.values())) if len(bases) == 1 else c.counters[0].noise


def _build_multidim(params: dict[str, Any], noise: Any, reader: Any, doc: dict[str, Any]) -> MultiDimensionalCounter:
    docs = doc["variables"]["counters"]
    scopes = params["scopes"]
    if not isinstance(docs, list) or len(docs) != params["d"] or len(scopes) != params["d"]:
        raise ValueError(f"d = {params['d']} needs d counters and d scopes")
    return MultiDimensionalCounter([reader.make(part, f"state.variables.counters[{i}]",
                                                noise if scope is None else scoped(noise, scope))
                                    for i, (part, scope) in enumerate(zip(docs, scopes, strict=True))])


def _check_multidim(c: MultiDimensionalCounter) -> None:
    """one release per step; every coordinate's counter has read t inputs; every release has d coordinates, the last
    one the counters' last releases."""
    check_steps(c.t, None, c.releases)
    require(all(x.t == c.t for x in c.counters), "every coordinate's counter has read t inputs")
    require(all(r.shape == (c.d,) for r in c.releases), "every release has d coordinates")
    if c.t:
        require(all(same_float(float(v), float(x.releases[-1])) for v, x in zip(c.releases[-1], c.counters,
                                                                                  strict=True)),
                "g(t) is the coordinates' last releases")


MULTIDIM = StateSpec(
    MultiDimensionalCounter, FAMILY, "001-sec4.3",
    "Multi-dimensional counter: d independent counters, one per coordinate.",
    params=(Field("d", Int(1), "dimension d (the number of coordinates)"),
            Field("scopes", ListOf(Nullable(Str())), "the noise scope of each coordinate's counter (\"001-sec4.3 "
                                                     "i=<i>\" when built by MultiDimensionalCounter.build)",
                  get=_scopes)),
    variables=(
        T_STEPS,
        Field("counters", ComponentList(doc="list of d counter states"), "C_1, ..., C_d"),
        releases(Array("float64", 1), "g(1), ..., g(t) (vectors of length d)"),
    ),
    build=_build_multidim,
    check=_check_multidim,
    noise_of=_base,
)

SPECS = (SIMPLE, BLOCK, BINARY_TREE, TREE_AGGREGATION, UNBOUNDED_BLOCK, HYBRID, SPARSE, INHOMOGENEOUS_SPARSE, MULTIDIM)

