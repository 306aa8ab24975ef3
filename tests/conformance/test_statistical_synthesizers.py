"""The statistical mode's search over the synthesizers (catalog ``SearchDesign``s) and its power on leaky programs.

* every design's neighbours are neighbours under the entry's relation (``is_neighbour``), every input of every
  pair is valid (the reference runs it without an input error; EVENT streams never remove an absent item) and the
  features have the same fixed length on every run (deterministic checks, no false alarm);
* the quick plan keeps two settings, two families and three neighbours per family;
* a leaky program (tests/conformance/leaky_program.py: the reference releasing one count without noise at one step)
  gets ``violation`` at the quick profile, one entry per family; a program whose releases cannot be featurised
  gets ``protocol-error``.

The reference itself (no violation, every synthesizer searched) is checked by
``test_conform.py::test_the_reference_passes_the_statistical_checks``.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from dpstream.audit.neighbours import NeighbourPair, is_neighbour
from dpstream.audit.registry import Profile
from dpstream.catalog import Entry, entries
from dpstream.catalog.designs import valid_events
from dpstream.claims import Neighbour
from dpstream.conformance.outcome import Mode, Verdict
from dpstream.conformance.runner import ConformConfig, conform
from dpstream.conformance.statistical import QUICK_FAMILIES, QUICK_PAIRS, StatisticalPlan, plan_for
from dpstream.insecure import InsecureSeededNoise

LEAKY = Path(__file__).resolve().parent / "leaky_program.py"
DESIGNED = [e for e in entries() if e.statistical is not None and e.statistical.design is not None]


def _run(e: Entry, params: Mapping[str, Any], inputs: list[Any], seed: int) -> list[Any]:
    """One run of the reference on JSON inputs, JSON releases out (an invalid input raises)."""
    assert e.codec is not None
    algorithm = e.make(params, InsecureSeededNoise(seed))
    return [e.codec.encode_release(algorithm.step(e.codec.decode_input(x, e.params.validate(params))))
            for x in inputs]


def test_every_synthesizer_of_the_issue_has_a_design() -> None:
    assert {e.anchor for e in DESIGNED} == {
        "001-alg1", "001-alg2", "001-alg3", "001-alg5", "001-alg6", "002-alg1", "002-alg2", "004-alg1",
        "003-alg1", "000-alg1", "003-alg2", "000-alg2", "003-alg3", "000-alg3"}


@pytest.mark.parametrize("e", DESIGNED, ids=[e.anchor for e in DESIGNED])
def test_design_pairs_are_valid_neighbours_with_fixed_length_features(e: Entry) -> None:
    spec = e.statistical
    assert spec is not None and spec.design is not None
    design = spec.design
    for raw in spec.sweep:
        params = e.params.validate(raw)
        T = int(raw[spec.horizon]) if spec.horizon is not None else spec.length
        features = design.features(params, T)
        families = design.families(params, T)
        assert len(families) >= 3
        for name, f in families.items():
            assert len(f) == T
            pairs = design.neighbours(params, f)
            assert len(pairs) >= 2, (e.anchor, name)
            widths = {len(features.of(_run(e, raw, f, seed))) for seed in (1, 2)}
            assert widths == {len(features.names)}
            for label, g in pairs:
                pair = NeighbourPair(design.events(params, f), design.events(params, g), label, spec.relation)
                assert is_neighbour(pair), (e.anchor, name, label)
                if spec.relation is Neighbour.EVENT:
                    assert valid_events(pair.f) and valid_events(pair.f_prime), (e.anchor, name, label)
                assert len(features.of(_run(e, raw, g, 3))) == len(features.names)  # valid input, same width


def test_the_quick_plan_is_small() -> None:
    for e in DESIGNED:
        plan = plan_for(e.anchor, Profile.QUICK)
        assert isinstance(plan, StatisticalPlan)
        assert len(plan.settings) == 2
        for space in plan.spaces:
            assert len(space.families) <= QUICK_FAMILIES
            for make in space.families.values():
                assert len(space.neighbours(make(0))) <= QUICK_PAIRS
    thorough = plan_for("001-alg2", Profile.THOROUGH)  # the stream boxes' two settings (5 minutes on 2 cores)
    assert isinstance(thorough, StatisticalPlan) and len(thorough.settings) == 2
    assert len(thorough.spaces[0].families) == 3
    privtree = plan_for("001-alg5", Profile.THOROUGH)
    assert isinstance(privtree, StatisticalPlan) and len(privtree.settings) == 4


def _leaky(leak: str, anchor: str) -> tuple[int, Any]:
    report = conform(ConformConfig(command=(sys.executable, str(LEAKY), leak), modes=frozenset({Mode.STATISTICAL}),
                                   algorithms=(anchor,), timeout=30.0))
    (outcome,) = [o for o in report.outcomes if o.algorithm == anchor]
    return report.exit_status, outcome


@pytest.mark.parametrize(("leak", "anchor"), [
    pytest.param("phdstream-leaf", "001-alg2", marks=pytest.mark.slow),  # about 17 s
    pytest.param("tabular-cell", "003-alg3", marks=pytest.mark.slow),  # about 6 s; a missing counter noise in
    # 003-alg3 is caught in the default run by tests/tabular/test_audit_broken.py (exact and black-box)
    pytest.param("longitudinal-count", "002-alg2", marks=pytest.mark.slow),  # about 12 s
    pytest.param("hypercube-region", "004-alg1", marks=pytest.mark.slow),  # about 25 s
])
def test_a_noiseless_count_is_certified_at_the_quick_profile(leak: str, anchor: str) -> None:
    """Quick profile, seed 0 (deterministic): the one exact count makes an event of probability 1 under f and 0
    under f'; the held-out bound must exceed the claim. A correct program would get this verdict with probability
    at most the check's false-alarm share (here the whole 1e-3: the only check of the run)."""
    status, outcome = _leaky(leak, anchor)
    assert status == 2 and outcome.privacy is Verdict.VIOLATION, outcome.message
    assert outcome.details["eps_lower_bound"] > outcome.details["claimed_eps"]
    assert outcome.details["counts"]["other"] == 0  # the exact count never takes the favoured value on f'
    assert outcome.details["law"].startswith("not applicable")


def test_releases_of_the_wrong_shape_are_a_protocol_error() -> None:
    status, outcome = _leaky("no-values", "001-alg1")
    assert status == 3 and outcome.verdict is Verdict.PROTOCOL_ERROR
    assert "bad-reply" in outcome.message and "wrong shape" in outcome.message
