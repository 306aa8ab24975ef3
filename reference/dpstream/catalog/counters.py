"""Catalog entries of the continual counters (001 App. D, 002 App. B, 003 sec. 8, 004 sec. 3).

Protocol parameters (papers' symbols): ``epsilon`` or ``rho``, the horizon ``T`` where the counter
has one, ``B`` for the block counter, ``d`` and ``component`` for the multi-dimensional counter,
``r0`` and ``eps_r`` for 004-alg3. INPUT is a JSON number f(t) (an array of d numbers for 001-sec4.3),
RELEASE the number g(t).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from dpstream.audit.counters.models import (
    binary_tree_counter_model,
    block_counter_model,
    hybrid_counter_model,
    multidimensional_model,
    simple_counter_model,
    tree_aggregation_model,
    unbounded_block_model,
)
from dpstream.audit.hypercube.reach import inhomogeneous_law_pair
from dpstream.audit.linear_model import LinearReleaseModel
from dpstream.catalog.cases import (
    EDGE_HORIZONS,
    PRIVACY_EDGES,
    Case,
    CaseDraw,
    CaseGenerator,
    horizon_labels,
    optional,
)
from dpstream.catalog.codecs import NUMBER, NUMBER_VECTOR
from dpstream.catalog.entry import Entry, RejectSpec, StatisticalSpec, VectorSpec, with_integers_as_floats
from dpstream.catalog.error_model import ErrorModel
from dpstream.catalog.params import ParamSchema, integer, positive, string
from dpstream.claims import Neighbour
from dpstream.counters import (
    BinaryTreeCounter,
    BlockCounter,
    Counter,
    HybridCounter,
    InhomogeneousSparseCounter,
    MultiDimensionalCounter,
    SimpleCounter,
    SparseCounter,
    TreeAggregationCounter,
    UnboundedBlockCounter,
)
from dpstream.errors import MAX_STREAM_SUM, DPStreamInputError
from dpstream.noise import NoiseSource, data_rng, derived_seed

__all__ = ["ENTRIES"]

P = Mapping[str, Any]

EPSILON = positive("epsilon", "privacy budget eps (pure DP)")
RHO = positive("rho", "privacy budget rho (zCDP)")
HORIZON = integer("T", "time horizon T: steps past T are refused")
OPTIONAL_HORIZON = integer("T", "optional time horizon T: steps past T are refused", required=False)

# ----------------------------------------------------------------------------------------- input streams
# Edge-case streams for known-answer vectors (JSON INPUTs); every stream is a pure function of its name.

HORIZONS = (1, 2, 3, 4, 7, 8, 9, 15, 16, 17, 31, 32, 33)
"""T = 1, powers of two and their neighbours 2^k +- 1."""


def _family(name: str, length: int, seed: int) -> list[Any]:
    rng = data_rng(seed)
    if name == "zeros":
        return [0] * length
    if name == "ones":
        return [1] * length
    if name == "alternating":
        return [t % 2 for t in range(1, length + 1)]
    if name == "bits":
        return [int(v) for v in rng.integers(0, 2, size=length)]
    if name == "counts":
        return [int(v) for v in rng.integers(0, 5, size=length)]
    if name == "signed":
        return [int(v) for v in rng.integers(-3, 4, size=length)]
    if name == "reals":  # quarters: exact in binary, so sums in another order agree bit for bit
        return [float(v) / 4.0 for v in rng.integers(-8, 17, size=length)]
    raise ValueError(name)


def _edges(T: int, length: int) -> tuple[str, ...]:
    out = [f"T={T}"]
    if T == 1:
        out.append("T=1")
    elif T & (T - 1) == 0:
        out.append("T=2^k")
    elif (T - 1) & (T - 2) == 0 or (T + 1) & T == 0:
        out.append("T=2^k+-1")
    if length < T:
        out.append("partial stream")
    return tuple(out)


def _streams(anchor: str, params_for: Callable[[int, float], dict[str, Any]], families: Sequence[str],
             *, epsilons: Sequence[float] = (0.5, 1.0, 2.0), horizons: Sequence[int] = HORIZONS,
             partial: bool = True) -> list[VectorSpec]:
    """One vector per horizon (cycling through ``families`` and ``epsilons``), plus a partial stream."""
    specs: list[VectorSpec] = []
    for i, T in enumerate(horizons):
        family = families[i % len(families)]
        eps = epsilons[i % len(epsilons)]
        seed = derived_seed(1, anchor, "stream", T, family)
        params = params_for(T, eps)
        specs.append(VectorSpec(f"T{T}-{family}-{_fmt(eps)}", params, _family(family, T, seed),
                                derived_seed(2, anchor, T, family), _edges(T, T)))
    if partial:
        T = 13
        params = params_for(T, 1.0)
        stream = _family(families[-1], 9, derived_seed(1, anchor, "partial"))
        specs.append(VectorSpec(f"T{T}-partial-{families[-1]}", params, stream, derived_seed(2, anchor, "partial"),
                                _edges(T, len(stream))))
    return specs


def _fmt(value: float) -> str:
    return f"eps{value:g}"


RANGE = "|f(t)| <= 2^53 - 1 = 9007199254740991 (MAX_STREAM_SUM, docs/counters.md 'Range')"
"""The input rule of every counter (``dpstream.errors.MAX_STREAM_SUM``)."""


def _inputs(*rules: str, kind: str = "a finite number") -> str:
    """The input rules of a counter entry: ``kind`` within the range, and the ``rules`` (its sums)."""
    return "; ".join([f"{kind} with {RANGE}", *rules]) + (
        "; a step breaking a rule is refused before anything is drawn, the counter unchanged")


def _sum_rule(what: str) -> str:
    return f"{what} within +-(2^53 - 1), checked at every step"


P_SUM = _sum_rule("every p-sum alpha_j of L7 (the sum of the inputs in (t - 2^j, t], j the lowest set bit of t)")

OUT_OF_RANGE: tuple[tuple[str, Any], ...] = (
    ("above-range", MAX_STREAM_SUM + 1),       # 2^53
    ("below-range", -MAX_STREAM_SUM - 1),
    ("review-pair", MAX_STREAM_SUM + 2),       # 2^53 + 1: a float64 reader sees 2^53, outside too
    ("huge-real", 1e300),
    ("huge-integer", 10**400),                 # beyond float64: a reader sees +inf or refuses it
)
"""Inputs outside +-(2^53 - 1) every (non-Boolean) counter must refuse."""

TOP = MAX_STREAM_SUM
"""An input at the bound: the ``sums`` cases add one unit to it."""


def _rejects(anchor: str, valid: P, *, horizon: bool, integer_only: bool = False, boolean_only: bool = False,
             vector_d: int | None = None, privacy: str = "epsilon",
             sums: Sequence[tuple[str, list[Any], Any, Any, str]] = ()) -> list[RejectSpec]:
    """Invalid parameters and inputs every counter must refuse, each followed by valid use. ``sums``: (name, valid
    inputs before, an input that takes one of the counter's sums to 2^53, a valid input after it that takes the sum
    back near 0 (so that the release after the refusal is small and its tolerance tight), what the sum is); each is
    also sent with every sign flipped (to -2^53)."""
    good: Any = [1] * vector_d if vector_d else 1
    bad_params: list[tuple[str, dict[str, Any], str]] = [
        (f"{privacy}-zero", {**valid, privacy: 0.0}, f"{privacy} must be > 0"),
        (f"{privacy}-negative", {**valid, privacy: -1.0}, f"{privacy} must be > 0"),
        (f"{privacy}-string", {**valid, privacy: "1"}, f"{privacy} must be a number"),
        (f"{privacy}-null", {**valid, privacy: None}, f"{privacy} must be a number"),
        (f"{privacy}-bool", {**valid, privacy: True}, f"{privacy} must be a number, not a boolean"),
        (f"{privacy}-missing", {k: v for k, v in valid.items() if k != privacy}, f"{privacy} is required"),
    ]
    if "T" in valid:
        bad_params += [
            ("T-zero", {**valid, "T": 0}, "T must be an integer >= 1"),
            ("T-negative", {**valid, "T": -4}, "T must be an integer >= 1"),
            ("T-fraction", {**valid, "T": 2.5}, "T must be an integer"),
            ("T-string", {**valid, "T": "16"}, "T must be an integer"),
            ("T-null", {**valid, "T": None}, "T must be an integer: a parameter is given or absent, null is no value"),
        ]
    specs = [RejectSpec(f"init-{name}", params, reason, at_init=True) for name, params, reason in bad_params]
    bad_inputs: list[tuple[str, Any, str]] = [
        ("string", "1", "an input must be a JSON number"),
        ("null", None, "an input must be a JSON number"),
        ("object", {"f": 1}, "an input must be a JSON number"),
        ("bool", True, "an input must be a JSON number, not a boolean"),
    ]
    if vector_d:
        bad_inputs += [("short-vector", [1] * (vector_d - 1), f"an input must have d = {vector_d} coordinates")]
    else:
        bad_inputs += [("array", [1], "an input must be a JSON number")]
    if integer_only:
        bad_inputs.append(("fraction", 0.5, "inputs must be integers (integer noise)"))
    if boolean_only:
        bad_inputs.append(("not-boolean", 2, "inputs must be 0 or 1"))
    else:
        bad_inputs += [(f"range-{name}", [x] + [0] * (vector_d - 1) if vector_d else x,
                        "|f(t)| must be <= 2^53 - 1 (MAX_STREAM_SUM)") for name, x in OUT_OF_RANGE]
    before, after = [good, 0 if not vector_d else [0] * vector_d], [good]
    specs += [RejectSpec(f"step-{name}", valid, reason, before=before, bad_input=bad, after=after,
                         seed=derived_seed(3, anchor, name)) for name, bad, reason in bad_inputs]
    if horizon:
        T = int(valid["T"])
        specs.append(RejectSpec("step-past-horizon", valid, f"a step past the horizon T = {T} is refused",
                                before=[good] * T, bad_input=good, seed=derived_seed(3, anchor, "horizon")))
    for name, before, bad, back, what in sums:
        for sign, which in ((1, "above"), (-1, "below")):
            def signed(x: Any, sign: int = sign) -> Any:
                return [sign * v for v in x] if isinstance(x, list) else sign * x
            reason = f"{what} would be {'-' if sign < 0 else ''}2^53, outside +-(2^53 - 1) (MAX_STREAM_SUM)"
            specs.append(RejectSpec(f"step-sum-{name}-{which}-range", valid, reason, before=[signed(x) for x in before],
                                    bad_input=signed(bad), after=[signed(back)],
                                    seed=derived_seed(3, anchor, "sum", name, which)))
    return specs


def _sweep(privacy: str = "epsilon", values: Sequence[float] = (0.5, 2.0), horizons: Sequence[int] = (13, 16),
           **extra: Any) -> tuple[dict[str, Any], ...]:
    return tuple({privacy: v, "T": T, **extra} for v in values for T in horizons)


# ----------------------------------------------------------------------------------------- builders
def _simple(p: P, noise: NoiseSource) -> Counter:
    return SimpleCounter(p["epsilon"], p["T"], noise=noise)


def _block(p: P, noise: NoiseSource) -> Counter:
    return BlockCounter(p["epsilon"], p["B"], p["T"], noise=noise)


def _binary_tree(p: P, noise: NoiseSource) -> Counter:
    return BinaryTreeCounter(p["epsilon"], p["T"], noise=noise)


def _binary_tree_printed(p: P, noise: NoiseSource) -> Counter:
    return BinaryTreeCounter(p["epsilon"], p["T"], noise=noise, as_printed=True)


def _binary_mechanism(p: P, noise: NoiseSource) -> Counter:
    return BinaryTreeCounter(p["epsilon"], p["T"], noise=noise, discrete=True)


def _tree_aggregation(p: P, noise: NoiseSource) -> Counter:
    return TreeAggregationCounter(p["rho"], p["T"], noise=noise)


def _tree_aggregation_printed(p: P, noise: NoiseSource) -> Counter:
    return TreeAggregationCounter(p["rho"], p["T"], noise=noise, as_printed=True)


def _unbounded_block(p: P, noise: NoiseSource) -> Counter:
    return UnboundedBlockCounter(p["epsilon"], noise=noise)


def _unbounded_block_printed(p: P, noise: NoiseSource) -> Counter:
    return UnboundedBlockCounter(p["epsilon"], noise=noise, as_printed=True)


def _hybrid(p: P, noise: NoiseSource) -> Counter:
    return HybridCounter(p["epsilon"], noise=noise)


def _sparse(p: P, noise: NoiseSource) -> Counter:
    return SparseCounter(p["epsilon"], p["T"], noise=noise)


def _sparse_printed(p: P, noise: NoiseSource) -> Counter:
    return SparseCounter(p["epsilon"], p["T"], noise=noise, as_printed=True)


def _inhomogeneous(p: P, noise: NoiseSource) -> Counter:
    eps_r = float(p["eps_r"])
    try:
        return InhomogeneousSparseCounter(p["epsilon"], p["r0"], lambda r: eps_r, noise=noise)
    except DPStreamInputError as exc:  # the budget of level r is the protocol's one eps_r
        if not exc.field.startswith("eps_levels"):
            raise
        raise DPStreamInputError("eps_r", exc.rule, p["eps_r"]) from None


MULTIDIM_COMPONENTS: dict[str, Callable[[P], Callable[[float, NoiseSource], Counter]]] = {
    "001-alg8": lambda p: lambda eps, n: SimpleCounter(eps, noise=n),
    "001-alg9": lambda p: lambda eps, n: BlockCounter(eps, p["B"], noise=n),
    "001-alg10": lambda p: lambda eps, n: BinaryTreeCounter(eps, p["T"], noise=n),
}


def _multidim(p: P, noise: NoiseSource) -> MultiDimensionalCounter:
    component = p["component"]
    for needed in {"001-alg9": ("B",), "001-alg10": ("T",)}.get(component, ()):
        if p.get(needed) is None:
            from dpstream.errors import DPStreamInputError

            raise DPStreamInputError(needed, f"is required with component {component}", None)
    return MultiDimensionalCounter.build(MULTIDIM_COMPONENTS[component](p), p["d"], p["epsilon"], noise=noise)


def _multidim_model(p: P) -> LinearReleaseModel:
    """d independent copies of the component entry's model, sites scoped as by MultiDimensionalCounter.build."""
    (component,) = [e for e in ENTRIES if e.anchor == p["component"]]
    assert component.model is not None
    return multidimensional_model([component.model(p)] * p["d"])


# ----------------------------------------------------------------------------------------- differential cases
def _partition_ends(limit: int) -> list[int]:
    """The ends of the unbounded block counter's partitions (T = B^2 steps of blocks of B = 2, 3, ...: t = 4, 13, 29,
    54, 90, ...) up to ``limit``."""
    ends, t, B = [], 0, 2
    while t + B * B <= limit:
        t += B * B
        ends.append(t)
        B += 1
    return ends


UNBOUNDED_LENGTHS = tuple(sorted({1, 2, *(2**k + s for k in range(1, 13) for s in (0, 1)),
                                  *(t + s for t in _partition_ends(4097) for s in (0, 1))}))
"""Stream lengths of the counters without a horizon: 2^k and 2^k + 1 (the hybrid counter's epochs) and the ends of
the unbounded block counter's partitions (t = 4, 13, 29, 54, 90, ...) and the steps after, up to 4097."""
COUNTER_SIZE = (129, 4096)
"""A counter's horizon or stream length: the vectors' range (up to 129), then up to 4096 steps as the fuzzer goes."""
INPUT_KINDS = ("integer", "bits", "real")


def _counter_cases(*, privacy: str = "epsilon", horizon: str = "required", kinds: Sequence[str] = INPUT_KINDS,
                   block: bool = False) -> CaseGenerator:
    """Cases of a counter: the privacy parameter, ``B`` for the block counter, the horizon T (``horizon``:
    "required", "optional" -- drawn or left out -- or "none"), a stream within T of one of ``kinds``."""
    def cases(draw: CaseDraw) -> Case:
        params: dict[str, Any] = {privacy: draw.number(0.001, 1000.0, PRIVACY_EDGES)}
        largest = draw.size(*COUNTER_SIZE)
        if block:
            params["B"] = draw.integer(1, draw.size(16, 512), (1, 2, 3, 4, 8))
        if horizon == "required":
            params["T"] = draw.integer(1, largest, EDGE_HORIZONS)
        elif horizon == "optional":
            params = optional(draw, params, "T", lambda: draw.integer(1, largest, EDGE_HORIZONS))
        T = params.get("T")
        length = draw.integer(1, T, (1, T)) if T is not None else draw.integer(1, largest, UNBOUNDED_LENGTHS)
        edges = horizon_labels(T, length) if T is not None else (f"{length} steps",)
        if horizon == "optional" and T is None:
            edges += ("T left out",)
        usable = [k for k in kinds if k == "bits" or draw.feature(f"{k} inputs")] or list(kinds[:1])
        return Case(params, draw.counter_stream(draw.choice(usable), length), edges)

    return cases


def _multidim_cases(draw: CaseDraw) -> Case:
    """001-sec4.3: d in 1..4, each component with the parameters it uses (B for 001-alg9, T for 001-alg10, T optional
    otherwise), integer vectors within T."""
    component = draw.choice(("001-alg8", "001-alg9", "001-alg10"))
    params: dict[str, Any] = {"d": draw.integer(1, draw.size(4, 64), (1, 2, 3)),
                              "epsilon": draw.number(0.001, 1000.0, PRIVACY_EDGES), "component": component}
    largest = draw.size(65, 1024)
    if component == "001-alg9":
        params["B"] = draw.integer(1, draw.size(8, 128), (1, 2, 3))
    if component == "001-alg10":
        params["T"] = draw.integer(1, largest, EDGE_HORIZONS)
    else:
        params = optional(draw, params, "T", lambda: draw.integer(1, largest, EDGE_HORIZONS))
    T = params.get("T")
    length = draw.integer(1, T, (1, T)) if T is not None else draw.integer(1, largest, EDGE_HORIZONS)
    edges = (f"d={params['d']}", f"component={component}", *(horizon_labels(T, length) if T else ()))
    return Case(params, draw.vector_stream(params["d"], length), edges)


def _inhomogeneous_cases(draw: CaseDraw) -> Case:
    """004-alg3: eps, the first level r0 and a constant eps_r; a Boolean stream of up to 64 steps."""
    params = {"epsilon": draw.number(0.001, 1000.0, PRIVACY_EDGES), "r0": draw.integer(0, draw.size(6, 14), (0, 1, 2)),
              "eps_r": draw.number(0.01, 100.0, (2.0, 1.0, 8.0, 0.5))}
    length = draw.integer(1, draw.size(64, 2048), EDGE_HORIZONS)
    return Case(params, draw.counter_stream("bits", length), (f"r0={params['r0']}", f"{length} steps"))


# ----------------------------------------------------------------------------------------- entries
UNBOUNDED_BLOCK_SPEC = StatisticalSpec(({"epsilon": 0.5}, {"epsilon": 2.0}), Neighbour.STREAM_ENTRY, horizon=None,
                                       length=29)


def _block_vectors() -> list[VectorSpec]:
    specs = _streams("001-alg9", lambda T, eps: {"epsilon": eps, "B": 3, "T": T}, ("bits", "reals", "counts"))
    for B, T in ((1, 8), (4, 16), (8, 8), (20, 9), (5, 17)):
        edges = ("B=1",) if B == 1 else ("B=T",) if B == T else ("B>T",) if B > T else ("block boundary",)
        specs.append(VectorSpec(f"B{B}-T{T}-ones", {"epsilon": 1.0, "B": B, "T": T}, [1] * T,
                                derived_seed(2, "001-alg9", B, T), (*_edges(T, T), *edges)))
    return specs


def _unbounded_vectors(anchor: str) -> Callable[[], list[VectorSpec]]:
    def make() -> list[VectorSpec]:
        specs: list[VectorSpec] = []
        for length, family, eps in ((1, "ones", 1.0), (4, "bits", 0.5), (5, "ones", 2.0), (13, "reals", 1.0),
                                    (14, "alternating", 1.0), (29, "bits", 1.0), (30, "counts", 0.5)):
            specs.append(VectorSpec(f"n{length}-{family}-{_fmt(eps)}", {"epsilon": eps},
                                    _family(family, length, derived_seed(1, anchor, length)),
                                    derived_seed(2, anchor, length), (f"{length} steps", "partition boundary")
                                    if length in (4, 5, 13, 14, 29, 30) else (f"{length} steps",)))
        return specs
    return make


def _multidim_vectors() -> list[VectorSpec]:
    rng_seed = derived_seed(1, "001-sec4.3")
    rows = [[v / 2.0 for v in row] for row in data_rng(rng_seed).integers(-2, 5, size=(9, 3)).tolist()]
    return [
        VectorSpec("d3-block-B2-T6", {"d": 3, "epsilon": 1.0, "component": "001-alg9", "B": 2, "T": 6},
                   rows[:6], derived_seed(2, "001-sec4.3", 1), ("T=6",)),
        VectorSpec("d1-simple-T4", {"d": 1, "epsilon": 0.5, "component": "001-alg8", "T": 4},
                   [[1], [0], [2], [1]], derived_seed(2, "001-sec4.3", 2), ("d=1",)),
        VectorSpec("d3-tree-T9", {"d": 3, "epsilon": 2.0, "component": "001-alg10", "T": 9},
                   rows[:9], derived_seed(2, "001-sec4.3", 3), ("T=2^k+-1",)),
        VectorSpec("d2-tree-T8-partial", {"d": 2, "epsilon": 1.0, "component": "001-alg10", "T": 8},
                   [r[:2] for r in rows[:5]], derived_seed(2, "001-sec4.3", 4), ("partial stream",)),
    ]


def _inhomogeneous_vectors() -> list[VectorSpec]:
    specs = []
    for eps, r0, eps_r, length, family in ((1.0, 1, 4.0, 20, "bits"), (1.0, 0, 1.0, 12, "ones"),
                                           (2.0, 2, 8.0, 16, "alternating"), (0.5, 0, 2.0, 9, "zeros")):
        specs.append(VectorSpec(f"eps{eps:g}-r0{r0}-epsr{eps_r:g}-n{length}-{family}",
                                {"epsilon": eps, "r0": r0, "eps_r": eps_r},
                                _family(family, length, derived_seed(1, "004-alg3", length)),
                                derived_seed(2, "004-alg3", r0, length), (f"r0={r0}",)))
    return specs


COUNTER_DOC = "docs/counters.md"

COUNTER_ERRORS = ErrorModel("sums")
"""A counter's release is a sum of inputs and noise values; its scales are one or two operations on epsilon, rho,
floor(log2 T) + 1, B or k."""
T0_DECISION = "floor(T_0), T_0 = 9 ln T / eps (band 2 gamma(6) T_0), on which every segment end depends"
SPARSE_ERRORS = ErrorModel("sums", decisions=(T0_DECISION,))
INHOMOGENEOUS_ERRORS = ErrorModel("sums", param_ops=6, decisions=(
    "the level times t_r = ceil(2^r / eps), on the exact value of the double eps (band 2 gamma(1) 2^r / eps)",
    f"{T0_DECISION}, of every level's counter"))

ENTRIES: tuple[Entry, ...] = (
    Entry(
        "001-alg8", "Simple counter (Chan et al.'s Simple II)", "counters",
        ParamSchema((EPSILON, OPTIONAL_HORIZON)), _simple, NUMBER,
        proof="proofs/proof_simple_counter.py", doc=COUNTER_DOC,
        model=lambda p: simple_counter_model(p["epsilon"], p["T"]),
        vectors=with_integers_as_floats(
            lambda: _streams("001-alg8", lambda T, eps: {"epsilon": eps, "T": T},
                             ("bits", "reals", "ones", "signed")), "T16-bits-eps2"),
        must_reject=lambda: _rejects("001-alg8", {"epsilon": 1.0, "T": 4}, horizon=True),
        inputs=_inputs(),
        statistical=StatisticalSpec(_sweep(), Neighbour.STREAM_ENTRY),
        cases=_counter_cases(horizon="optional"),
        notes="as printed = default (no erratum)",
        sites="one draw per step: laplace at '001-alg8 L4 t=<t>', scale 1/epsilon; g(t) = g(t-1) + (f(t) + z)",
        error_model=COUNTER_ERRORS,
    ),
    Entry(
        "001-alg9", "Block counter", "counters",
        ParamSchema((EPSILON, integer("B", "block size B"), OPTIONAL_HORIZON)), _block, NUMBER,
        proof="proofs/proof_block_counter.py", doc=COUNTER_DOC,
        model=lambda p: block_counter_model(p["epsilon"], p["B"], p["T"]),
        vectors=with_integers_as_floats(_block_vectors, "B4-T16-ones"),
        must_reject=lambda: [*_rejects("001-alg9", {"epsilon": 1.0, "B": 2, "T": 4}, horizon=True,
                                       sums=[("block", [TOP], 1, -TOP, "the block sum beta (L5)")]),
                             RejectSpec("init-B-zero", {"epsilon": 1.0, "B": 0, "T": 4}, "B must be >= 1",
                                        at_init=True)],
        statistical=StatisticalSpec(_sweep(B=3), Neighbour.STREAM_ENTRY),
        cases=_counter_cases(horizon="optional", block=True),
        inputs=_inputs(_sum_rule("the block sum beta of L5 (the inputs of the current block so far)")),
        notes="as printed = default (no erratum)",
        sites="block end (t mod B = 0): laplace at '001-alg9 L7 t=<t>'; otherwise laplace at '001-alg9 L10 t=<t>'; "
              "scale 2/epsilon",
        error_model=COUNTER_ERRORS,
    ),
    Entry(
        "001-alg10", "Binary tree counter (Chan et al.'s Binary Mechanism)", "counters",
        ParamSchema((EPSILON, HORIZON)), _binary_tree, NUMBER,
        proof="proofs/proof_binary_tree_counter.py", doc=COUNTER_DOC,
        errata=("E-counters-1", "E-counters-2"), as_printed=_binary_tree_printed,
        model=lambda p: binary_tree_counter_model(p["epsilon"], p["T"]),
        printed_model=lambda p: binary_tree_counter_model(p["epsilon"], p["T"], as_printed=True),
        vectors=with_integers_as_floats(
            lambda: _streams("001-alg10", lambda T, eps: {"epsilon": eps, "T": T},
                             ("bits", "reals", "ones", "counts", "alternating")), "T16-counts-eps2"),
        must_reject=lambda: _rejects("001-alg10", {"epsilon": 1.0, "T": 4}, horizon=True,
                                     sums=[("p-sum", [TOP], 1, -TOP, "the p-sum alpha_1 (L7)")]),
        inputs=_inputs(P_SUM),
        statistical=StatisticalSpec(_sweep(horizons=(13, 16, 4)), Neighbour.STREAM_ENTRY),
        cases=_counter_cases(),
        sites="one draw per step (the node created at t): laplace at '001-alg10 L8 t=<t>', scale "
              "(floor(log2 T)+1)/epsilon (printed: log2(T)/epsilon)",
        error_model=COUNTER_ERRORS,
    ),
    Entry(
        "004-lem3.1", "Binary Mechanism with discrete Laplace noise (001-alg10 on integers)", "counters",
        ParamSchema((EPSILON, HORIZON)), _binary_mechanism, NUMBER, printed=False,
        proof="proofs/proof_binary_tree_counter.py", doc=COUNTER_DOC,
        errata=("E-hypercube-12",),
        model=lambda p: binary_tree_counter_model(p["epsilon"], p["T"], discrete=True),
        vectors=with_integers_as_floats(
            lambda: _streams("004-lem3.1", lambda T, eps: {"epsilon": eps, "T": T}, ("bits", "counts", "signed"),
                             horizons=(1, 2, 4, 7, 9, 16, 17)), "T16-signed-eps2"),
        must_reject=lambda: _rejects("004-lem3.1", {"epsilon": 1.0, "T": 4}, horizon=True, integer_only=True,
                                     sums=[("p-sum", [TOP], 1, -TOP, "the p-sum alpha_1 (001-alg10 L7)")]),
        inputs=_inputs(P_SUM, kind="an integer"),
        statistical=StatisticalSpec(_sweep(), Neighbour.STREAM_ENTRY, integer_inputs=True),
        cases=_counter_cases(kinds=("integer", "bits")),
        sites="as 001-alg10 with discrete_laplace draws",
        error_model=COUNTER_ERRORS,
    ),
    Entry(
        "002-alg3", "Tree-based aggregation (discrete Gaussian counter)", "counters",
        ParamSchema((RHO, HORIZON)), _tree_aggregation, NUMBER,
        proof="proofs/proof_tree_aggregation_counter.py", doc=COUNTER_DOC,
        errata=("E-counters-3", "E-counters-4"), as_printed=_tree_aggregation_printed,
        model=lambda p: tree_aggregation_model(p["rho"], p["T"]),
        printed_model=lambda p: tree_aggregation_model(p["rho"], p["T"], as_printed=True),
        vectors=with_integers_as_floats(
            lambda: _streams("002-alg3", lambda T, rho: {"rho": rho, "T": T}, ("counts", "bits", "ones"),
                             epsilons=(0.1, 0.5, 2.0)), "T17-counts-eps0.1"),
        must_reject=lambda: _rejects("002-alg3", {"rho": 0.5, "T": 4}, horizon=True, integer_only=True, privacy="rho",
                                     sums=[("p-sum", [TOP], 1, -TOP, "the p-sum alpha_1 (u4)")]),
        inputs=_inputs(_sum_rule("every p-sum alpha_i of u4 (the sum of the inputs in (t - 2^i, t], i the lowest set "
                                 "bit of t)"), kind="an integer (E-counters-4)"),
        statistical=StatisticalSpec(_sweep("rho", (0.1, 1.0)), Neighbour.STREAM_ENTRY, integer_inputs=True),
        cases=_counter_cases(privacy="rho", kinds=("integer", "bits")),
        sites="one draw per step: discrete_gaussian at '002-alg3 u8 t=<t>', sigma2 (floor(log2 T)+1)/(2 rho)",
        error_model=COUNTER_ERRORS,
    ),
    Entry(
        "003-alg4", "Unbounded block counter", "counters",
        ParamSchema((EPSILON,)), _unbounded_block, NUMBER,
        proof="proofs/proof_unbounded_block_counter.py", doc=COUNTER_DOC,
        as_printed=_unbounded_block_printed,
        model=lambda p: unbounded_block_model(p["epsilon"], p.get("T", 30)),
        vectors=_unbounded_vectors("003-alg4"),
        must_reject=lambda: _rejects("003-alg4", {"epsilon": 1.0}, horizon=False,
                                     sums=[("block", [TOP], 1, -TOP, "the block sum alpha_trueInBlock (L12)")]),
        inputs=_inputs(_sum_rule("the block sum alpha_trueInBlock of L12 (the inputs of the current block so far)")),
        statistical=UNBOUNDED_BLOCK_SPEC,
        cases=_counter_cases(horizon="none"),
        notes="unbounded: no horizon parameter",
        sites="block ends: laplace at '003-alg4 L14 t=<t>'; in-block: laplace at '003-alg4 L21 t=<t>'; scale 2/epsilon",
        error_model=COUNTER_ERRORS,
    ),
    Entry(
        "000-alg4", "Unbounded block counter (000 draft; printed as 003-alg4)", "counters",
        ParamSchema((EPSILON,)), _unbounded_block, NUMBER,
        proof="proofs/proof_unbounded_block_counter.py", doc=COUNTER_DOC,
        as_printed=_unbounded_block_printed,
        model=lambda p: unbounded_block_model(p["epsilon"], p.get("T", 30)),
        vectors=lambda: _unbounded_vectors("000-alg4")()[:3],
        must_reject=lambda: _rejects("000-alg4", {"epsilon": 1.0}, horizon=False)[:8],
        inputs=_inputs(_sum_rule("the block sum alpha_trueInBlock of L12 (the inputs of the current block so far)")),
        statistical=UNBOUNDED_BLOCK_SPEC,
        cases=_counter_cases(horizon="none"),
        notes="the same box as 003-alg4 (same code, sites '003-alg4 ...'); its statistical checks are 003-alg4's, "
              "run under its own name",
        sites="as 003-alg4",
        error_model=COUNTER_ERRORS,
    ),
    Entry(
        "CSS11-hybrid", "Hybrid mechanism (Chan, Shi, Song 2011)", "counters",
        ParamSchema((EPSILON,)), _hybrid, NUMBER, printed=False,
        proof="proofs/proof_hybrid_counter.py", doc=COUNTER_DOC,
        model=lambda p: hybrid_counter_model(p["epsilon"], p.get("T", 16)),
        vectors=_unbounded_vectors("CSS11-hybrid"),
        must_reject=lambda: _rejects("CSS11-hybrid", {"epsilon": 1.0}, horizon=False,
                                     sums=[("L", [0, 0, TOP], 1, -TOP, "L's statistic f(3) + f(4)"),
                                           ("B_k", [0] * 8 + [-5, 0, 0, 0, TOP], 1, -TOP,
                                            "B_3's p-sum f(13) + f(14)")]),
        inputs=_inputs(_sum_rule("the sum of the inputs in (2^k, t] for 2^k < t <= 2^(k+1) (L's next statistic)"),
                       _sum_rule("every p-sum of B_k (001-alg10 L7 on the local times t - 2^k)")),
        statistical=StatisticalSpec(({"epsilon": 0.5}, {"epsilon": 2.0}), Neighbour.STREAM_ENTRY, horizon=None,
                                    length=16),
        cases=_counter_cases(horizon="none"),
        notes="not among the five papers: written from the published structure (docs/counters.md)",
        sites="'CSS11-hybrid L t=<2^k>' and 'CSS11-hybrid B k=<k> / 001-alg10 L8 t=<tau>'",
        error_model=COUNTER_ERRORS,
    ),
    Entry(
        "001-sec4.3", "Multi-dimensional counter (d independent counters)", "counters",
        ParamSchema((integer("d", "dimension d (at most 4096)", maximum=4096), EPSILON,
                     string("component", "the counter of every coordinate", ("001-alg8", "001-alg9", "001-alg10")),
                     integer("B", "block size (component 001-alg9)", required=False),
                     integer("T", "horizon (required for 001-alg10)", required=False))),
        _multidim, NUMBER_VECTOR, printed=False,
        proof="proofs/proof_multidimensional_counter.py", doc=COUNTER_DOC,
        model=_multidim_model,
        errata=("E-counters-6",),
        vectors=with_integers_as_floats(_multidim_vectors, "d3-block-B2-T6"),
        must_reject=lambda: _rejects("001-sec4.3", {"d": 2, "epsilon": 1.0, "component": "001-alg10", "T": 4},
                                     horizon=True, vector_d=2,
                                     sums=[("p-sum", [[TOP, 0]], [1, 0], [-TOP, 0],
                                            "coordinate 1's p-sum alpha_1 (L7)")]),
        inputs="an array of d finite numbers; coordinate i under the rules of its component (001-alg8, 001-alg9 or "
               "001-alg10), within +-(2^53 - 1) (MAX_STREAM_SUM); a step breaking a rule in any coordinate is refused "
               "before anything is drawn, every coordinate unchanged",
        statistical=StatisticalSpec(({"d": 2, "epsilon": 0.5, "component": "001-alg10", "T": 12},
                                     {"d": 3, "epsilon": 1.0, "component": "001-alg9", "B": 3, "T": 13},
                                     {"d": 2, "epsilon": 2.0, "component": "001-alg8", "T": 16}),
                                    Neighbour.STREAM_ENTRY, cost=5),
        cases=_multidim_cases,
        notes="a section of 001, not a printed box; statistical checks: d-dimensional entries of 0/1, one "
              "coordinate of one entry moved by 1 (l1 change 1); a run through serve takes 0.3-0.4 ms (no vectorised "
              "model: cost 5)",
        sites="coordinate i scoped '001-sec4.3 i=<i> / <component site>'",
        error_model=COUNTER_ERRORS,
    ),
    Entry(
        "004-alg2", "Sparse counting (Boolean inputs, Binary Mechanism inside)", "counters",
        ParamSchema((EPSILON, HORIZON)), _sparse, NUMBER,
        proof="proofs/proof_sparse_counting.py", doc="docs/hypercube.md",
        errata=("E-hypercube-3", "E-hypercube-4", "E-hypercube-11", "E-hypercube-12"), as_printed=_sparse_printed,
        vectors=with_integers_as_floats(
            lambda: _streams("004-alg2", lambda T, eps: {"epsilon": eps, "T": T}, ("bits", "ones", "zeros"),
                             epsilons=(4.0, 2.0, 8.0), horizons=(1, 2, 8, 9, 16, 24, 33)), "T16-ones-eps2"),
        must_reject=lambda: _rejects("004-alg2", {"epsilon": 2.0, "T": 4}, horizon=True, integer_only=True,
                                     boolean_only=True),
        inputs="0 or 1 (a Boolean data sequence; every sum is then a count of steps, far inside MAX_STREAM_SUM); a "
               "step breaking it is refused before anything is drawn, the counter unchanged",
        statistical=StatisticalSpec(_sweep(values=(1.0, 4.0), horizons=(16, 24)), Neighbour.STREAM_ENTRY,
                                    integer_inputs=True),
        cases=_counter_cases(kinds=("bits",)),
        sites="thresholds '004-alg2 u2 j=<j>', tests '004-alg2 u3 j=<j> t=<t>', A_sub scoped (docs/hypercube.md)",
        error_model=SPARSE_ERRORS,
    ),
    Entry(
        "004-alg3", "Inhomogeneous sparse counting", "counters",
        ParamSchema((EPSILON, integer("r0", "starting level r0 (t_r0 = ceil(2^r0 / eps))", minimum=0, maximum=62),
                     positive("eps_r", "the budget eps_r of every level (constant over r)"))),
        _inhomogeneous, NUMBER,
        proof="proofs/proof_sparse_counting.py", doc="docs/hypercube.md",
        errata=("E-hypercube-5",),
        vectors=with_integers_as_floats(_inhomogeneous_vectors, "eps1-r01-epsr4-n20-bits"),
        inputs="0 or 1 (a Boolean data sequence, as 004-alg2); a step breaking it is refused before anything is drawn, "
               "the counter unchanged",
        must_reject=lambda: [*_rejects("004-alg3", {"epsilon": 1.0, "r0": 0, "eps_r": 2.0}, horizon=False,
                                       integer_only=True, boolean_only=True),
                             RejectSpec("init-r0-negative", {"epsilon": 1.0, "r0": -1, "eps_r": 2.0},
                                        "r0 must be >= 0", at_init=True)],
        statistical=StatisticalSpec(({"epsilon": 0.5, "r0": 0, "eps_r": 0.5}, {"epsilon": 2.0, "r0": 1, "eps_r": 2.0}),
                                    Neighbour.STREAM_ENTRY, integer_inputs=True, horizon=None, length=16, cost=3,
                                    law_pair=inhomogeneous_law_pair),
        cases=_inhomogeneous_cases,
        notes="the protocol fixes eps_r constant over levels (the paper allows any sequence); statistical checks: "
              "Boolean streams of 16 steps (levels start at t = 2, 4, 8, 16 for eps = 0.5, r0 = 0, and at t = 1, "
              "2, 4, 8, 16 for eps = 2, r0 = 1), one entry moved by 1; a run through serve takes 0.16 ms (cost 3)",
        sites="level r: a 004-alg2 counter scoped '004-alg3 r=<r>' (docs/hypercube.md)",
        error_model=INHOMOGENEOUS_ERRORS,
    ),
)

