"""One catalog entry: everything dpstream knows about one algorithm, in one place.

An :class:`Entry` names the algorithm (its anchor, the protocol's algorithm name), how to build it
from protocol parameters, its parameter schema and JSON codec, where its proof note, doc page and
errata are, its exact model if it has one, its printed variant if any, the vectors it contributes to
the corpus (:class:`VectorSpec`, :class:`RejectSpec`), the space of its statistical checks
(:class:`StatisticalSpec`) and how its fresh differential cases are drawn (:mod:`dpstream.catalog.cases`).
Fields that do not apply hold ``None`` or ``()`` and the entry says why in ``notes`` (a test checks that every
entry is complete or explains itself).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from dpstream.catalog.cases import CaseGenerator
from dpstream.catalog.codecs import Codec, Features
from dpstream.catalog.error_model import ErrorModel
from dpstream.catalog.origins import Origin, record
from dpstream.catalog.params import ParamSchema
from dpstream.claims import Neighbour, PrivacyClaim
from dpstream.insecure import InsecureZeroNoise
from dpstream.noise import NoiseSource

__all__ = ["Builder", "Entry", "RejectSpec", "SearchDesign", "StatisticalSpec", "VectorSpec", "with_integers_as_floats"]

Builder = Callable[[Mapping[str, Any], NoiseSource], Any]
"""(validated protocol parameters, noise source) -> a fresh algorithm object with ``step``."""


@dataclass(frozen=True)
class VectorSpec:
    """A known-answer vector to generate: one seeded run of the algorithm on ``inputs`` (JSON INPUTs).

    ``name`` is unique within the algorithm (the corpus id is ``f"{anchor}/{name}"``); ``edges``
    names the edge cases the vector covers (``"T=1"``, ``"T=2^k+1"``, ``"empty batch"``, ...).
    """

    name: str
    params: Mapping[str, Any]
    inputs: Sequence[Any]
    seed: int
    edges: tuple[str, ...] = ()
    description: str = ""

    def integers_as_floats(self) -> VectorSpec:
        """The same vector (same seed, so the same tape and releases) with every integer of its parameters and inputs
        written as a float (``"T": 16.0``, an input ``1.0``): JSON numbers are read by value (docs/conformance.md,
        "JSON numbers"), so a program that refuses ``16.0`` for an integer fails this vector."""
        return VectorSpec(f"{self.name}-integers-as-floats", _floats(self.params), _floats(self.inputs), self.seed,
                          (*self.edges, "integers written as floats"),
                          f"{self.description or self.name}; every integer of params and inputs written as a float "
                          "(2.0 for 2)")


def with_integers_as_floats(make: Callable[[], Sequence[VectorSpec]], name: str) -> Callable[[], list[VectorSpec]]:
    """``make``'s vectors plus the :meth:`VectorSpec.integers_as_floats` copy of the one named ``name``."""

    def vectors() -> list[VectorSpec]:
        specs = list(make())
        (chosen,) = [s for s in specs if s.name == name]
        return [*specs, chosen.integers_as_floats()]

    return vectors


def _floats(value: Any) -> Any:
    """``value`` with every JSON integer (not a boolean) turned into the float of the same value, at every depth."""
    if isinstance(value, bool) or not isinstance(value, int | Mapping | list | tuple):
        return value
    if isinstance(value, int):
        return float(value)
    if isinstance(value, Mapping):
        return {k: _floats(v) for k, v in value.items()}
    return [_floats(v) for v in value]


@dataclass(frozen=True)
class RejectSpec:
    """A must-reject case: invalid ``params`` at init (``bad_input is None`` and ``at_init``), or an
    invalid ``bad_input`` sent after the valid ``before`` inputs, followed by the valid ``after`` inputs
    whose releases must be those of a run that never saw the bad input."""

    name: str
    params: Mapping[str, Any]
    reason: str
    at_init: bool = False
    before: Sequence[Any] = ()
    bad_input: Any = None
    after: Sequence[Any] = ()
    seed: int = 0


Stream = list[Any]
"""An input stream on the wire: one JSON INPUT per step."""


@dataclass(frozen=True)
class SearchDesign:
    """What the witness search needs for an algorithm whose inputs are not counter entries (the synthesizers).

    Every function takes the validated parameters of one setting of the sweep:

    * ``families(params, T)``: a few named input streams of length T (JSON INPUTs; deterministic, randomness from
      :func:`dpstream.noise.data_rng`), valid for these parameters;
    * ``neighbours(params, f)``: ``(label, f')`` for every neighbour f' of f the search tries under the entry's
      relation, each a valid input (no removal of what is not present, points and records in the domain), ordered
      so that an evenly spaced subset still varies the kind of change and its time (the quick profile keeps a few);
    * ``features(params, T)``: the fixed-length featurisation of a run's releases (:class:`Features`);
    * ``events(params, f)``: f as :func:`dpstream.audit.neighbours.is_neighbour` reads it under the relation (EVENT:
      batches of event tuples ``(*x, +1 | -1)``; individual relations: the record columns; POINT_REPLACE: the
      points), so that a test can check every pair;
    * ``statistics(params, T)``: linear statistics of the features where the papers' sensitivity analysis puts the
      loss, ``(label, {feature name: weight})`` (a count summed over the steps it persists, the difference of two
      cells a record moves between, the records of a region): the search proposes events on them first
      (:func:`dpstream.catalog.designs.contrasts`).
    """

    families: Callable[[Mapping[str, Any], int], dict[str, Stream]]
    neighbours: Callable[[Mapping[str, Any], Stream], list[tuple[str, Stream]]]
    features: Callable[[Mapping[str, Any], int], Features]
    events: Callable[[Mapping[str, Any], Sequence[Any]], tuple[Any, ...]]
    statistics: Callable[[Mapping[str, Any], int], Sequence[tuple[str, Mapping[str, float]]]] = \
        field(default=lambda p, T: ())
    linear: str | None = None
    """Where only some features are linear in the additive draws (multiplicative weights: the log of each step's
    counts), the text their names contain: the composition of a pair's draws reads those alone
    (:func:`dpstream.conformance.composed.influence`); None: every feature."""


@dataclass(frozen=True)
class StatisticalSpec:
    """What the statistical (black-box) checks may vary for this algorithm.

    ``sweep``: parameter sets to audit (epsilon below and above 1, T powers and non-powers of two);
    ``relation``: the neighbour relation of the claim; ``alphabet``: the input values a neighbouring
    stream may use (counters: ``(0, 1)`` or ``None`` for any real); ``horizon``: the parameter that
    fixes the stream length (``"T"``), or ``None`` with ``length`` giving it.

    ``design``: the inputs, neighbours and features of the search for algorithms that are not counters
    (:class:`SearchDesign`); ``None`` for counters, searched with :func:`dpstream.audit.search.counter_space`
    (one entry moved by 1; d-dimensional entries when the parameters have ``d``). ``cost``: the line-by-line
    search budget of the profile is divided by it (a run through the protocol costs about that many runs of a
    counter), so that the quick profile stays small for the synthesizers.
    """

    sweep: tuple[Mapping[str, Any], ...]
    relation: Neighbour
    alphabet: tuple[int, ...] | None = (0, 1)
    integer_inputs: bool = False
    horizon: str | None = "T"
    length: int = 16
    design: SearchDesign | None = None
    cost: int = 1
    planted: str | None = None
    """The sites (a regular expression) of the released counts the design's neighbours move: where the power
    calibration plants a noiseless count or a shared draw (:mod:`dpstream.insecure.planted`); None: any additive
    draw."""
    pair_reach: float | None = None
    """The least share of the claim the design's best pair must reach for the statistical check to test its composed
    event (``conformance.statistical._composed_pair``); None: ``statistical.PAIR_REACH`` (a 2x leak can show). Lower
    where the reference spends little of its claim on any short stream but a leak of one budget shows many times
    over (004-alg1: its pairs reach 15 %, a region counter given the whole eps draws 15 times as strong)."""
    law_pair: Callable[[Mapping[str, Any], int, Mapping[str, Callable[[int], Any]]], Any] | None = None
    """Where the entry's exact law names the neighbouring pair of a setting's inputs (given its parameters, the
    stream length and the input families) and the statistics of the releases in which a budget-level leak shows,
    beyond what the search's pairs and quantile grid reach: a :class:`dpstream.audit.hypercube.reach.LawPair` or
    None (004-alg3: :func:`dpstream.audit.hypercube.reach.inhomogeneous_law_pair`). The statistical check tests it
    besides the search (``conformance.composed_tests.law_pair_test``)."""


@dataclass(frozen=True)
class Entry:
    """One algorithm of the catalog (see the module docstring)."""

    anchor: str
    title: str
    family: str
    params: ParamSchema
    build: Builder | None
    codec: Codec | None
    proof: str
    doc: str
    errata: tuple[str, ...] = ()
    printed: bool = True
    """One of the papers' printed algorithm boxes (False for components such as the hybrid counter)."""
    as_printed: Builder | None = None
    """The printed variant where the default corrects the paper (same parameters)."""
    model: Callable[[Mapping[str, Any]], Any] | None = None
    """The exact release model for given parameters (e.g. a LinearReleaseModel), where one exists."""
    printed_model: Callable[[Mapping[str, Any]], Any] | None = None
    """The exact release model of the ``as_printed`` variant, where it differs from ``model``."""
    vectors: Callable[[], Sequence[VectorSpec]] = field(default=lambda: ())
    must_reject: Callable[[], Sequence[RejectSpec]] = field(default=lambda: ())
    statistical: StatisticalSpec | None = None
    cases: CaseGenerator | None = None
    """Fresh cases for the differential mode (:mod:`dpstream.catalog.cases`); ``None``: no differential checks."""
    realised_by: tuple[str, ...] = ()
    """For boxes with no standalone instance (a meta-algorithm, a subroutine): the entries that run it."""
    notes: str = ""
    sites: str = ""
    """The draw sites of one step, as documented for implementers (docs/conformance.md)."""
    inputs: str = ""
    """The rules an INPUT must meet beyond its JSON shape, as documented for implementers: a step breaking one is
    refused before anything is drawn, the algorithm unchanged (the must-reject vectors)."""
    error_model: ErrorModel | None = None
    """How far two correct floating-point evaluations of this computation can be apart
    (:mod:`dpstream.catalog.error_model`); every streaming entry has one."""

    @property
    def streaming(self) -> bool:
        """Speaks the conformance protocol (built from parameters, INPUT/RELEASE codecs)."""
        return self.build is not None and self.codec is not None

    def make(self, params: Mapping[str, Any], noise: NoiseSource, *, as_printed: bool = False) -> Any:
        """Validate ``params`` against the schema and build the algorithm (or its printed variant)."""
        valid = self.params.validate(params)
        builder = self.as_printed if as_printed else self.build
        if builder is None:
            what = "a printed variant" if as_printed else "a standalone instance"
            raise LookupError(f"{self.anchor} has no {what} ({self.notes or 'see the catalog'})")
        made = builder(valid, noise)
        record(made, Origin(self.anchor, dict(params), as_printed, noise))  # a checkpoint builds it again this way
        return made

    def claim(self, params: Mapping[str, Any], *, as_printed: bool = False) -> PrivacyClaim:
        """The claim that holds for these parameters (built on a zero source: construction draws nothing)."""
        claim: PrivacyClaim = self.make(params, InsecureZeroNoise(), as_printed=as_printed).claim
        return claim

    def paper_claim(self, params: Mapping[str, Any], *, as_printed: bool = False) -> PrivacyClaim:
        """What the paper states for these parameters."""
        obj = self.make(params, InsecureZeroNoise(), as_printed=as_printed)
        claim: PrivacyClaim = getattr(obj, "paper_claim", obj.claim)
        return claim
