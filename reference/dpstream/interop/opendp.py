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

The function runs a fresh instance of the algorithm on every invocation, drawing through ``noise`` (default
``None``: a fresh ``SecureNoise``, whose draws are OpenDP measurements applied to the noised value). Pass an insecure
source only to test (the same source then serves every invocation).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from dpstream.claims import Measure, Neighbour, PrivacyClaim
from dpstream.convention import convention
from dpstream.counters.base import Counter
from dpstream.errors import DPStreamInputError, require_finite_real, require_int_at_least
from dpstream.insecure import InsecureZeroNoise
from dpstream.noise import NoiseSource, default_noise
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

__all__ = ["FEATURES", "counter_measurement", "mwem_measurement", "privacy_map", "privtree_measurement"]

FEATURES = ("contrib", "honest-but-curious")
"""The OpenDP features these measurements need (enabled for the session when one is built):

* ``contrib``: ``make_user_measurement`` and ``user_domain`` are contrib constructors (not vetted by OpenDP's own
  proofs); SecureNoise enables it too, for its Laplace / Gaussian / noisy-max measurements;
* ``honest-but-curious``: OpenDP cannot check a user-defined function or privacy map. It trusts that the map
  bounds the privacy loss of the function and that the function has no side effects; here the bound is the
  algorithm's ``.claim``, proved in dpstream's proof notes and tested by its audits, and the domain's membership
  test is the algorithm's own input validation.
"""


def _dp() -> Any:
    import opendp.prelude as dp  # local import: OpenDP loads a native library

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
        if d < 0:
            raise DPStreamInputError("d_in", "must be >= 0", d_in)
        k = d if scales_with_distance else float(math.ceil(d))
        return k * parameter if claim.measure is Measure.PURE_DP else k * k * parameter

    return loss


def _measure(dp: Any, claim: PrivacyClaim) -> Any:
    return dp.max_divergence() if claim.measure is Measure.PURE_DP else dp.zero_concentrated_divergence()


def _member(check: Callable[[Any], object]) -> Callable[[Any], bool]:
    """A user domain's membership test from a validator that raises DPStreamInputError."""

    def member(x: Any) -> bool:
        try:
            check(x)
        except DPStreamInputError:
            return False
        return True

    return member


@convention()
def counter_measurement(make: Callable[[NoiseSource], Counter], T: int, *, bounds: tuple[float, float] | None = None,
                        noise: NoiseSource | None = None) -> Any:
    """An OpenDP measurement running ``make(noise)`` over T inputs: vector of T numbers -> its T releases.

    ``make``: a fresh counter on the given source, e.g. ``dpstream.convention.with_noise(BinaryTreeCounter, 1.0, 16)``
    (its horizon, if any, at least T). ``bounds``: the range of the inputs, required for a real-valued counter
    (OpenDP's f64 atoms include +-inf, which a counter refuses: a data-dependent error) and for one that accepts
    only some integers (the sparse counters: ``(0, 1)``); the domain is ``vector_domain(atom_domain(bounds, T=f64 or
    i64), size=T)`` with ``l1_distance``.
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
    integer = probe.integer_input
    atom_type = "i64" if integer else "f64"
    if bounds is None:
        if not integer:
            raise DPStreamInputError("bounds", "are required for a real-valued counter (finite (lower, upper))", None)
        for probe_value in (-2, 2):  # e.g. the sparse counters accept only 0 and 1
            if not _member(probe.validate_input)(probe_value):
                raise DPStreamInputError("bounds", f"are required: {type(probe).__name__} refuses {probe_value}", None)
        atom = dp.atom_domain(T=atom_type)
    else:
        lower, upper = (int(b) if integer else require_finite_real("bounds", b) for b in bounds)
        if not lower <= upper:
            raise DPStreamInputError("bounds", "must be (lower, upper) with lower <= upper", bounds)
        for value in (lower, upper):
            probe.validate_input(value)  # DPStreamInputError if the counter refuses a bound (no state changes)
        atom = dp.atom_domain(bounds=(lower, upper), T=atom_type) if integer else \
            dp.atom_domain(bounds=(lower, upper), nan=False, T=atom_type)

    def function(x: Sequence[float]) -> list[float]:
        counter = make(default_noise() if noise is None else noise)
        return [float(counter.step(v)) for v in x]

    return dp.m.make_user_measurement(
        dp.vector_domain(atom, size=T), dp.l1_distance(T=atom_type), _measure(dp, claim), function,
        privacy_map(claim, scales_with_distance=probe.loss_scales_with_l1), TO="Vec<f64>")


@convention()
def privtree_measurement(partition: Partition, epsilon: float, theta: float = 0.0, *,
                         lambda_rule: LambdaRule = LambdaRule.GENERAL, noise: NoiseSource | None = None) -> Any:
    """An OpenDP measurement of PrivTree_T (001-alg5): a point set in Omega -> the subtree S (a :class:`Subtree`).

    The input is an (n, d) array-like of points of ``partition``'s Omega (a user domain checked by
    ``partition.validate_points``), F is its count function (001 (4)), neighbours differ by one point added or
    removed (symmetric distance: the EVENT relation of ``PrivTree.claim``); map d_in -> d_in * claim.
    """
    dp = _dp()
    alg = PrivTree(partition, epsilon, theta, lambda_rule=lambda_rule)
    claim = _usable(alg.claim, alg.paper_claim, "PrivTree")

    def function(points: Any) -> Subtree:
        return alg.run(tree_function(partition, points), noise=default_noise() if noise is None else noise)

    domain = dp.user_domain(f"dpstream.PointSet({partition!r})", _member(partition.validate_points))
    return dp.m.make_user_measurement(domain, dp.symmetric_distance(), _measure(dp, claim), function,
                                      privacy_map(claim, scales_with_distance=False))


@convention()
def mwem_measurement(domain: Domain, queries: Sequence[Query], epsilon: float, k: int, *,
                     fitter: DatasetFitter | None = None, total: TotalRule | None = None, as_printed: bool = False,
                     noise: NoiseSource | None = None) -> Any:
    """An OpenDP measurement of offline MWEM (003-alg1 with A_Dataset = multiplicative weights): records -> g.

    The input is an (n, p) array-like of records of ``domain`` (a user domain checked by ``validate_records``),
    neighbours differ by one record added or removed (symmetric distance: the EVENT relation of 003-alg1's claim);
    map d_in -> d_in * eps (``offline_claim``). ``fitter``: A_Dataset (default ``MultiplicativeWeights()``);
    ``total``: where the fitted mass comes from (default ``TotalRule.measured()``; ``TotalRule.true_size()`` is not
    private and refused). Returns the fitted :class:`~dpstream.tabular.datasets.SyntheticDataset` g = h_k.
    """
    dp = _dp()
    rule = TotalRule.measured() if total is None else total
    fit = MultiplicativeWeights() if fitter is None else fitter
    claim = _usable(offline_claim(epsilon, k, as_printed, rule), offline_claim(epsilon, k, False, rule),
                    "select_measure_fit")
    Q = list(queries)
    rule.check_queries(Q)

    def function(records: Any) -> SyntheticDataset:
        f = DifferentialDataset(domain, StreamStep(validate_records(domain, records),
                                                   np.zeros((0, domain.p), dtype=np.int64)))
        return select_measure_fit(f, Q, epsilon, k, fit, total=rule, as_printed=as_printed,
                                  noise=default_noise() if noise is None else noise).g

    user_domain = dp.user_domain(f"dpstream.Records({domain!r})", _member(lambda x: validate_records(domain, x)))
    return dp.m.make_user_measurement(user_domain, dp.symmetric_distance(), _measure(dp, claim), function,
                                      privacy_map(claim, scales_with_distance=False))
