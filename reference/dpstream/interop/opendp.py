"""dpstream's one-shot algorithms as OpenDP measurements (docs/opendp.md).

* :func:`counter_measurement` -- a counter run over a fixed horizon T: input a vector of T numbers (f(1), ..., f(T)),
  metric the l1 distance (the counters' STREAM_ENTRY neighbour relation), output the T releases g(1), ..., g(T).
* :func:`privtree_measurement` -- PrivTree_T (001-alg5): input a point set in Omega, metric the symmetric distance
  (points added or removed: the EVENT relation of its claim), output the subtree S.
* :func:`mwem_measurement` -- offline MWEM (003-alg1 select-measure-fit with multiplicative weights): input a
  dataset of records, metric the symmetric distance (one record added or removed), output the fitted dataset g.

Each privacy map states the algorithm's ``.claim`` for inputs at distance d_in: max-divergence eps' for a pure-DP
claim, zero-concentrated divergence rho' for a rho-zCDP claim (002-alg3). A counter whose loss scales with the l1
distance (``Counter.loss_scales_with_l1``) maps d_in to d_in * eps (zCDP: d_in^2 * rho); otherwise, and for the
record-level algorithms (integer distances), group privacy gives ceil(d_in) * eps (zCDP: ceil(d_in)^2 * rho).
An algorithm whose claim is "not private" (e.g. ``TotalRule.true_size()``) is refused. A printed variant is built
from its ``.claim``, what really holds for it (not the paper's ``.paper_claim``), with a :class:`UserWarning` saying so.

**Domains.** The input domain a measurement declares is exactly the set of inputs it releases on: its function
checks the input against that domain before anything else (no noise is drawn for an input outside it), and every
input inside it is released. Where the algorithm could not handle a value the carrier type allows, the domain is
declared narrower: a counter's bounds keep every sum it computes within ``MAX_STREAM_SUM`` (2^53 - 1, the range the
counters themselves enforce, so they refuse nothing inside the domain). The measurements
are :class:`DPStreamMeasurement`\\ s: called directly, they check the input (and ``map``/``check`` the distance)
in Python first and refuse with an :class:`OpenDPInputError`, a one-line message, not a Python traceback wrapped
in an OpenDP FFI error.

The function runs a fresh instance of the algorithm on every invocation, drawing through ``noise`` (default
``None``: a fresh ``SecureNoise``, whose draws are OpenDP measurements applied to the noised value). Pass an insecure
source only to test (the same source then serves every invocation).
"""

from __future__ import annotations

import math
import threading
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from numbers import Integral, Real
from typing import Any, cast

import numpy as np
from opendp.mod import Measurement, OpenDPException

from dpstream import errors
from dpstream.claims import Measure, Neighbour, PrivacyClaim
from dpstream.convention import convention
from dpstream.counters.base import Counter
from dpstream.errors import DPStreamInputError, require_finite_real, require_int_at_least, require_integer_value
from dpstream.insecure import InsecureZeroNoise, TapeRecorder
from dpstream.noise import DrawKind, NoiseSource, default_noise
from dpstream.phdstream.partition import Partition
from dpstream.phdstream.privtree import LambdaRule, PrivTree, Subtree
from dpstream.phdstream.tree_function import tree_function
from dpstream.tabular.datasets import SyntheticDataset
from dpstream.tabular.domain import Domain, validate_records
from dpstream.tabular.fitting import DatasetFitter, MultiplicativeWeights
from dpstream.tabular.offline import offline_claim, select_measure_fit
from dpstream.tabular.queries import Query
from dpstream.tabular.stream import DifferentialDataset, StreamStep
from dpstream.tabular.totals import TotalRule

__all__ = [
    "FEATURES",
    "MAX_STREAM_SUM",
    "DPStreamMeasurement",
    "OpenDPInputError",
    "counter_measurement",
    "mwem_measurement",
    "privacy_map",
    "privtree_measurement",
]

FEATURES = ("contrib", "honest-but-curious")
"""The OpenDP features these measurements need (enabled for the session when one is built):

* ``contrib``: ``make_user_measurement`` and ``user_domain`` are contrib constructors (not vetted by OpenDP's own
  proofs); SecureNoise enables it too, for its Laplace / Gaussian / noisy-max measurements;
* ``honest-but-curious``: OpenDP cannot check a user-defined function or privacy map. It trusts that the map
  bounds the privacy loss of the function and that the function has no side effects; here the bound is the
  algorithm's ``.claim``, proved in dpstream's proof notes and tested by its audits, and the domain's membership
  test is the algorithm's own input validation.
"""

MAX_STREAM_SUM = errors.MAX_STREAM_SUM
"""The largest |sum of inputs| a counter measurement lets a counter compute, 2^53 - 1: its bounds must keep
T * max|bound| <= 2^53 - 1 (the default bounds of an integer counter are +-floor((2^53 - 1) / T)).

It is the counters' own range (``dpstream.errors.MAX_STREAM_SUM``, docs/counters.md "Range"): a counter refuses an
input or a sum of inputs beyond it, since float64 sums round there (2^53 + 1 and 2^53 + 2, at l1 distance 1, would
give sums 2 apart, twice the sensitivity the claim assumes). Every sum a counter forms is a sum of at most T inputs,
so inside the domain nothing is refused. The bound is also far inside the integer noise's range (|value| <= 2^62,
``dpstream.noise.MAX_INTEGER_VALUE``), into which the printed tree-aggregation counter floors its real sums."""


class OpenDPInputError(DPStreamInputError, OpenDPException):
    """An input (or distance) outside a dpstream measurement's declared domain, refused before anything is drawn.

    Both a :class:`~dpstream.errors.DPStreamInputError` (``field``, ``rule``, ``value``) and an OpenDP
    ``OpenDPException`` (``variant`` ``"FailedFunction"`` for an input, ``"FailedMap"`` for a distance, as OpenDP's
    own measurements report them), so either ``except`` clause catches it; ``str()`` is the one-line reason.
    """

    def __init__(self, field: str, rule: str, value: object, variant: str = "FailedFunction") -> None:
        DPStreamInputError.__init__(self, field, rule, value)
        self.variant = variant
        self.message: str | None = str(self.args[0])
        self.raw_traceback: str | None = None

    def __str__(self) -> str:
        return str(self.args[0])

    @classmethod
    def of(cls, error: DPStreamInputError, variant: str) -> OpenDPInputError:
        return cls(error.field, error.rule, error.value, variant)


_FAILURE = threading.local()
"""``.error``: the exception the function of a dpstream measurement last raised in this thread (OpenDP's FFI passes
on only its formatted traceback; a direct invocation re-raises the exception itself)."""


def _recording(function: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """``function``, keeping the exception it raises in ``_FAILURE.error``."""

    def recorded(x: Any) -> Any:
        try:
            return function(x)
        except Exception as error:
            _FAILURE.error = error
            raise

    return recorded


@dataclass(frozen=True)
class _Checks:
    """What a :class:`DPStreamMeasurement` checks before OpenDP sees the argument: ``input(x)`` returns x in the form
    of the domain's carrier (or raises DPStreamInputError), ``distance(d_in)`` likewise for the input metric."""

    input: Callable[[Any], Any]
    distance: Callable[[Any], Any]


class DPStreamMeasurement(Measurement):
    """An OpenDP ``Measurement`` built by this module: the same measurement (it chains with ``>>``, composes, and is
    invoked and mapped by OpenDP as any other), which checks its argument in Python before handing it to OpenDP.

    Called directly (``meas(x)``, ``meas.invoke(x)``), an input outside the declared domain raises an
    :class:`OpenDPInputError` naming the field and the rule; so do ``meas.map(d_in)`` and ``meas.check(d_in, d_out)``
    for a distance the input metric does not have (negative, NaN, infinite, or of the wrong type). Inside a
    composition built by OpenDP (a chain, ``make_composition``, ...) OpenDP calls the function itself: the same check
    refuses the input there before anything is drawn, and OpenDP reports it as an FFI error whose last line is the
    same one-line reason.
    """

    _type_ = Measurement._type_  # a ctypes pointer type: the subclass points at the same AnyMeasurement
    _dpstream_checks: _Checks

    def invoke(self, arg: Any) -> Any:
        try:
            x = self._dpstream_checks.input(arg)
        except DPStreamInputError as error:
            raise OpenDPInputError.of(error, "FailedFunction") from None
        _FAILURE.error = None
        try:
            return cast(Any, super()).invoke(x)
        except OpenDPException:
            failure, _FAILURE.error = _FAILURE.error, None
            if isinstance(failure, DPStreamInputError):
                raise OpenDPInputError.of(failure, "FailedFunction") from None
            if failure is None:
                raise
            raise failure from None  # what the function raised, not its traceback inside an FFI error

    def __call__(self, arg: Any) -> Any:
        return self.invoke(arg)

    def _distance(self, d_in: Any) -> Any:
        try:
            return self._dpstream_checks.distance(d_in)
        except DPStreamInputError as error:
            raise OpenDPInputError.of(error, "FailedMap") from None

    def map(self, d_in: Any) -> Any:
        return cast(Any, super()).map(self._distance(d_in))

    def check(self, d_in: Any, d_out: Any, *, debug: bool = False) -> bool:
        return bool(super().check(self._distance(d_in), d_out, debug=debug))


def _opendp_infers(cls: type) -> bool:
    """Let OpenDP's type inference see ``cls`` as a measurement (true if it does).

    OpenDP infers the type of a value from its exact class (``opendp.typing``'s table of elementary types), so
    without an entry a combinator that takes a list of measurements (``make_composition``) or a queryable that takes
    one as its query would refuse the subclass ("inferred type is CallbackFn")."""
    import opendp.typing as typing_

    for name in ("_ELEMENTARY_TYPES", "ELEMENTARY_TYPES"):  # the name of OpenDP 0.16 and of earlier releases
        table = getattr(typing_, name, None)
        if isinstance(table, dict) and Measurement in table:
            table.setdefault(cls, table[Measurement])
            return True
    return False


_CHECKED = _opendp_infers(DPStreamMeasurement)


def _checked(meas: Measurement, checks: _Checks) -> Measurement:
    """``meas`` as a :class:`DPStreamMeasurement` (when this OpenDP lets the subclass compose; otherwise as it is:
    its function still refuses an input outside the domain, with OpenDP's FFI message)."""
    if _CHECKED:
        meas.__class__ = DPStreamMeasurement
        cast(DPStreamMeasurement, meas)._dpstream_checks = checks
    return meas


def _dp() -> Any:
    import opendp.prelude as dp  # OpenDP's constructors (the module above imported only opendp.mod)

    dp.enable_features(*FEATURES)
    return dp


def _usable(claim: PrivacyClaim, paper_claim: PrivacyClaim, what: str) -> PrivacyClaim:
    """The claim a measurement is built from: refuses 'not private', says so for a printed variant."""
    if claim.measure is Measure.NOT_PRIVATE:
        raise DPStreamInputError(what, f"is not private ({claim.note}): no OpenDP measurement states it", claim.source)
    if (claim.measure, claim.parameter) != (paper_claim.measure, paper_claim.parameter):
        warnings.warn(f"{what}: a printed variant; the measurement states its .claim ({claim.describe()}), what really "
                      f"holds, not the paper's {paper_claim.parameter:g}", UserWarning, stacklevel=3)
    return claim


def privacy_map(claim: PrivacyClaim, *, scales_with_distance: bool) -> Callable[[float], float]:
    """d_in -> the privacy loss ``claim`` implies for inputs at distance d_in (eps' for pure DP, rho' for zCDP).

    ``scales_with_distance``: the loss at distance d <= 1 is d times the claim's (l1-linear counters), so d_in * eps
    (zCDP: d_in^2 * rho). Otherwise group privacy over ceil(d_in) neighbouring steps: ceil(d_in) * eps (zCDP:
    ceil(d_in)^2 * rho; the steps exist because every domain here contains the interpolating inputs).
    """
    if claim.measure is Measure.NOT_PRIVATE:
        raise DPStreamInputError("claim", "is not private", claim.describe())
    parameter = claim.parameter

    def loss(d_in: float) -> float:
        d = require_finite_real("d_in", d_in)
        if not d >= 0:
            raise DPStreamInputError("d_in", "must be >= 0", d_in)
        k = d if scales_with_distance else float(math.ceil(d))
        return 0.0 + (k * parameter if claim.measure is Measure.PURE_DP else k * k * parameter)  # 0.0 +: no -0.0

    return loss


def _measure(dp: Any, claim: PrivacyClaim) -> Any:
    return dp.max_divergence() if claim.measure is Measure.PURE_DP else dp.zero_concentrated_divergence()


def _member(check: Callable[[Any], object]) -> Callable[[Any], bool]:
    """A user domain's membership test from a check that raises DPStreamInputError."""

    def member(x: Any) -> bool:
        try:
            check(x)
        except DPStreamInputError:
            return False
        return True

    return member


# ---- distances: what the input metric's distance type holds ---------------------------------------------------

_U32_MAX = 2**32 - 1
_I64_MAX = 2**63 - 1


def _real_distance(d_in: Any) -> float:
    """An l1 distance of f64 inputs: a finite real number >= 0."""
    if isinstance(d_in, bool) or not isinstance(d_in, Real):
        raise DPStreamInputError("d_in", "must be a real number >= 0 (the l1 distance of f64 inputs)", d_in)
    d = float(d_in)
    if not (math.isfinite(d) and d >= 0):
        raise DPStreamInputError("d_in", "must be a finite real number >= 0 (the l1 distance of f64 inputs)", d_in)
    return d


def _integer_distance(what: str, maximum: int) -> Callable[[Any], int]:
    """A distance of integer type (``what``): an integer in 0..maximum."""

    def check(d_in: Any) -> int:
        integral = isinstance(d_in, Integral) and not isinstance(d_in, bool)  # (no narrowing: d_in stays Any)
        if not (integral and 0 <= d_in <= maximum):
            raise DPStreamInputError("d_in", f"must be an integer in 0..{maximum} ({what})", d_in)
        return int(d_in)

    return check


# ---- counters: a vector of T numbers within bounds ---------------------------------------------------------------

def _stream_check(T: int, lower: float, upper: float, integer: bool) -> Callable[[Any], list[Any]]:
    """The counter domain vector_domain(atom_domain(bounds, f64 without NaN | i64), size=T) as a check: returns the
    input as a list of T floats (ints), or raises DPStreamInputError for the first rule it breaks."""
    kind, one = ("integers (i64)", "an integer (i64)") if integer else ("real numbers (f64)", "a real number (f64)")
    number: type = Integral if integer else Real

    def check(x: Any) -> list[Any]:
        if isinstance(x, np.ndarray) and x.ndim == 1:
            values = x.tolist()
        elif isinstance(x, list | tuple):
            values = list(x)
        else:
            got = f"array of shape {x.shape}" if isinstance(x, np.ndarray) else type(x).__name__
            raise DPStreamInputError("f", f"must be a list of T = {T} {kind}", got)
        if len(values) != T:
            raise DPStreamInputError("f", f"must hold exactly T = {T} values (the size of the input domain)",
                                     len(values))
        out = []
        for t, v in enumerate(values, start=1):
            typed = isinstance(v, number) and not isinstance(v, bool)  # (no narrowing: v stays Any)
            if not typed:
                raise DPStreamInputError(f"f({t})", f"must be {one}", v)
            if not lower <= v <= upper:
                raise DPStreamInputError(f"f({t})", f"must lie in the input domain's bounds [{lower}, {upper}]", v)
            out.append(int(v) if integer else float(v))
        return out

    return check


def _adds_integer_noise(make: Callable[[NoiseSource], Counter]) -> bool:
    """Whether a counter's first step draws integer noise (discrete Laplace or Gaussian; staged, not committed).

    Such a counter is private on integer inputs only: the fractional part of a real input would be released without
    noise (E-counters-4: the printed tree-aggregation counter takes reals, and z = 0 and z = 1/2 are told apart by one
    release), so its measurement takes i64 inputs even when the counter itself accepts reals."""
    recorder = TapeRecorder(InsecureZeroNoise())
    make(recorder).stage(0)
    return any(d.kind in (DrawKind.DISCRETE_LAPLACE, DrawKind.DISCRETE_GAUSSIAN) for d in recorder.tape.draws)


def _stream_bounds(probe: Counter, T: int, bounds: object, integer: bool) -> tuple[Any, Any]:
    """The counter domain's bounds: ``bounds`` checked, or (integer counters) the widest supported ones."""
    name = type(probe).__name__
    limit = MAX_STREAM_SUM // T
    if bounds is None:
        if not integer:
            raise DPStreamInputError("bounds", "are required for a real-valued counter (finite (lower, upper))", None)
        lower: Any = -limit
        upper: Any = limit
        for value in (lower, upper):  # e.g. the sparse counters accept only 0 and 1
            if not _member(probe.validate_input)(value):
                raise DPStreamInputError("bounds", f"are required: {name} refuses {value}", None)
        return lower, upper
    if not isinstance(bounds, tuple | list) or len(bounds) != 2:
        raise DPStreamInputError("bounds", "must be a pair (lower, upper)", bounds)
    if integer:
        lower, upper = (require_integer_value("bounds", b) for b in bounds)
    else:
        lower, upper = (require_finite_real("bounds", b) for b in bounds)
    if not lower <= upper:
        raise DPStreamInputError("bounds", "must be (lower, upper) with lower <= upper", bounds)
    if Fraction(max(abs(lower), abs(upper))) * T > MAX_STREAM_SUM:
        raise DPStreamInputError("bounds", f"must keep T * max|bound| <= 2^53 - 1 (every sum of T = {T} inputs within "
                                 f"the counters' range, MAX_STREAM_SUM): |bound| <= {limit}", bounds)
    for value in (lower, upper):
        try:
            probe.validate_input(value)  # no state changes
        except DPStreamInputError as error:
            raise DPStreamInputError("bounds", f"must be inputs {name} accepts ({error})", bounds) from None
    return lower, upper


@convention()
def counter_measurement(make: Callable[[NoiseSource], Counter], T: int, *, bounds: tuple[float, float] | None = None,
                        noise: NoiseSource | None = None) -> Any:
    """An OpenDP measurement running ``make(noise)`` over T inputs: vector of T numbers -> its T releases.

    ``make``: a fresh counter on the given source, e.g. ``dpstream.convention.with_noise(BinaryTreeCounter, 1.0, 16)``
    (its horizon, if any, at least T). The domain is ``vector_domain(atom_domain(bounds, T=f64 or i64), size=T)``
    with ``l1_distance``: exactly T numbers (f64 without NaN for a real-valued counter, i64 for an integer one or one
    that adds integer noise), each within ``bounds``. ``bounds``: required for a real-valued counter (OpenDP's f64
    atoms include +-inf, which a counter refuses) and for one that accepts only some integers (the sparse counters:
    ``(0, 1)``); an integer counter's default is +-floor((2^53 - 1) / T). They must keep T * max|bound| <=
    :data:`MAX_STREAM_SUM`.
    """
    dp = _dp()
    T = require_int_at_least("T", T, 1)
    probe = make(InsecureZeroNoise())
    if not isinstance(probe, Counter):
        raise DPStreamInputError("make", "must return a dpstream Counter", type(probe).__name__)
    if probe.horizon is not None and probe.horizon < T:
        raise DPStreamInputError("T", f"exceeds the counter's horizon {probe.horizon}", T)
    claim = _usable(probe.claim, probe.paper_claim, type(probe).__name__)
    if claim.neighbour is not Neighbour.STREAM_ENTRY:
        raise DPStreamInputError("make", "the counter's claim must be for STREAM_ENTRY (l1) neighbours",
                                 claim.neighbour)
    integer = probe.integer_input or _adds_integer_noise(make)
    atom_type = "i64" if integer else "f64"
    lower, upper = _stream_bounds(probe, T, bounds, integer)
    atom = dp.atom_domain(bounds=(lower, upper), T=atom_type) if integer else \
        dp.atom_domain(bounds=(lower, upper), nan=False, T=atom_type)
    check = _stream_check(T, lower, upper, integer)

    def function(x: Sequence[float]) -> list[float]:
        values = check(x)  # inside too: a composition hands its input straight to the function
        counter = make(default_noise() if noise is None else noise)
        return [float(counter.step(v)) for v in values]

    meas = dp.m.make_user_measurement(
        dp.vector_domain(atom, size=T), dp.l1_distance(T=atom_type), _measure(dp, claim), _recording(function),
        privacy_map(claim, scales_with_distance=probe.loss_scales_with_l1), TO="Vec<f64>")
    distance = _integer_distance("the l1 distance of i64 inputs", _I64_MAX) if integer else _real_distance
    return _checked(meas, _Checks(check, distance))


# ---- point sets and records: user domains checked by the algorithm's own validation ---------------------------

def _array(x: Any, field: str, shape: str) -> np.ndarray[Any, Any]:
    """``x`` as a numpy array of real numbers (integer or floating dtype; an empty array of any dtype)."""
    try:
        arr = np.asarray(x)
    except (TypeError, ValueError, OverflowError):  # e.g. ragged rows
        raise DPStreamInputError(field, f"must be an {shape} array of numbers", type(x).__name__) from None
    if arr.size and arr.dtype.kind not in "iuf":
        raise DPStreamInputError(field, f"must be an {shape} array of numbers", arr.dtype)
    return arr


def _points_check(partition: Partition) -> Callable[[Any], Any]:
    """Point sets of Omega: an (n, d) array-like of numbers (n >= 0), every point in Omega."""
    shape = f"(n, {partition.dimension})"
    return lambda points: partition.validate_points(_array(points, "points", shape))


def _records_check(domain: Domain) -> Callable[[Any], Any]:
    """Datasets of ``domain``: an (n, p) array-like of integer codes (n >= 0), every record in the domain."""
    shape = f"(n, {domain.p})"
    return lambda records: validate_records(domain, _array(records, "records", shape))


_RECORD_DISTANCE = _integer_distance("the symmetric distance: records added or removed", _U32_MAX)


@convention()
def privtree_measurement(partition: Partition, epsilon: float, theta: float = 0.0, *,
                         lambda_rule: LambdaRule = LambdaRule.GENERAL, noise: NoiseSource | None = None) -> Any:
    """An OpenDP measurement of PrivTree_T (001-alg5): a point set in Omega -> the subtree S (a :class:`Subtree`).

    The input is an (n, d) array-like of numbers, every point in ``partition``'s Omega (a user domain checked by
    ``partition.validate_points``), F is its count function (001 (4)), neighbours differ by one point added or
    removed (symmetric distance: the EVENT relation of ``PrivTree.claim``); map d_in -> d_in * claim.
    """
    dp = _dp()
    alg = PrivTree(partition, epsilon, theta, lambda_rule=lambda_rule)
    claim = _usable(alg.claim, alg.paper_claim, "PrivTree")
    check = _points_check(partition)

    def function(points: Any) -> Subtree:
        return alg.run(tree_function(partition, check(points)), noise=default_noise() if noise is None else noise)

    domain = dp.user_domain(f"dpstream.PointSet({partition!r})", _member(check))
    meas = dp.m.make_user_measurement(domain, dp.symmetric_distance(), _measure(dp, claim), _recording(function),
                                      privacy_map(claim, scales_with_distance=False))
    return _checked(meas, _Checks(check, _RECORD_DISTANCE))


@convention()
def mwem_measurement(domain: Domain, queries: Sequence[Query], epsilon: float, k: int, *,
                     fitter: DatasetFitter | None = None, total: TotalRule | None = None, as_printed: bool = False,
                     noise: NoiseSource | None = None) -> Any:
    """An OpenDP measurement of offline MWEM (003-alg1 with A_Dataset = multiplicative weights): records -> g.

    The input is an (n, p) array-like of integer codes, every record in ``domain`` (a user domain checked by
    ``validate_records``), neighbours differ by one record added or removed (symmetric distance: the EVENT relation
    of 003-alg1's claim); map d_in -> d_in * eps (``offline_claim``). ``fitter``: A_Dataset (default
    ``MultiplicativeWeights()``); ``total``: where the fitted mass comes from (default ``TotalRule.measured()``;
    ``TotalRule.true_size()`` is not private and refused). Returns the fitted
    :class:`~dpstream.tabular.datasets.SyntheticDataset` g = h_k.
    """
    dp = _dp()
    rule = TotalRule.measured() if total is None else total
    fit = MultiplicativeWeights() if fitter is None else fitter
    claim = _usable(offline_claim(epsilon, k, as_printed, rule), offline_claim(epsilon, k, False, rule),
                    "select_measure_fit")
    Q = list(queries)
    rule.check_queries(Q)
    check = _records_check(domain)

    def function(records: Any) -> SyntheticDataset:
        f = DifferentialDataset(domain, StreamStep(check(records), np.zeros((0, domain.p), dtype=np.int64)))
        return select_measure_fit(f, Q, epsilon, k, fit, total=rule, as_printed=as_printed,
                                  noise=default_noise() if noise is None else noise).g

    user_domain = dp.user_domain(f"dpstream.Records({domain!r})", _member(check))
    meas = dp.m.make_user_measurement(user_domain, dp.symmetric_distance(), _measure(dp, claim), _recording(function),
                                      privacy_map(claim, scales_with_distance=False))
    return _checked(meas, _Checks(check, _RECORD_DISTANCE))
