"""The laws of reported draws (``dpstream.audit.draw_laws``): PITs are uniform for correct draws, and the law tests
find planted mistakes. Seeds are fixed; every ``law_findings`` call runs at level 1e-3 (false-alarm probability)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from dpstream.audit.draw_laws import _selection_scores, law_findings, pit, randomisers, top_mass
from dpstream.audit.registry import Profile
from dpstream.catalog import entry
from dpstream.conformance.statistical import StatisticalPlan, plan_for
from dpstream.insecure import InsecureSeededNoise, TapeRecorder
from dpstream.insecure.planted import PlantedLeak, PlantedNoise
from dpstream.noise import DrawKind, data_rng
from dpstream.tape import Draw


@pytest.mark.parametrize(("kind", "params"), [
    (DrawKind.LAPLACE, {"scale": 0.3}), (DrawKind.DISCRETE_LAPLACE, {"scale": 0.7}),
    (DrawKind.DISCRETE_GAUSSIAN, {"sigma2": 0.4}), (DrawKind.DISCRETE_GAUSSIAN, {"sigma2": 9.0e4}),
    (DrawKind.EXPONENTIAL_MECHANISM, {"scores": [0.0, 1.0, 3.0], "epsilon": 1.0, "sensitivity": 1.0}),
    (DrawKind.COIN, {}), (DrawKind.CHOICE, {"n": 7, "k": 3}),
    (DrawKind.UNIFORM_BOX, {"low": [0.0, -1.0], "high": [1.0, 2.0], "count": 2}),
])
def test_the_pit_of_correct_draws_is_uniform(kind: DrawKind, params: dict[str, object]) -> None:
    """Kolmogorov-Smirnov of 3000 PITs at 1e-4 per kind (false alarm of the whole test <= 8e-4)."""
    source = InsecureSeededNoise(1)
    gen = data_rng(2)
    values: list[float] = []
    for i in range(3000):
        if kind in (DrawKind.LAPLACE, DrawKind.DISCRETE_LAPLACE, DrawKind.DISCRETE_GAUSSIAN):
            value = source.add(f"s{i}", kind, 0.0 if kind is DrawKind.LAPLACE else 0, **params)
        else:
            value = source.draw(f"s{i}", kind, **params)
        d = Draw(f"s{i}", kind, dict(params), value)
        values.extend(pit(d, gen.random(randomisers(d))))
    assert stats.kstest(np.asarray(values), "uniform").pvalue > 1e-4


def _runs(anchor: str, params: dict[str, object], inputs: list[object], leak: str | None, runs: int = 300
          ) -> list[list[Draw]]:
    e = entry(anchor)
    assert e.codec is not None
    out = []
    valid = e.params.validate(params)
    for source in InsecureSeededNoise.independent(5, runs):
        recorder = TapeRecorder(source if leak is None else PlantedNoise(source, PlantedLeak.parse(leak)))
        algorithm = e.make(params, recorder)
        for x in inputs:
            algorithm.step(e.codec.decode_input(x, valid))
        out.append(list(recorder.tape.draws))
    return out


TREE = ("001-alg10", {"epsilon": 1.0, "T": 8}, [1, 0, 1, 1, 0, 0, 1, 0])
GAUSS = ("002-alg3", {"rho": 0.5, "T": 8}, [1, 0, 1, 1, 0, 0, 1, 0])


@pytest.mark.parametrize("case", [TREE, GAUSS], ids=["laplace", "discrete-gaussian"])
def test_correct_draws_give_no_finding(case: tuple[str, dict[str, object], list[object]]) -> None:
    findings, tests = law_findings(_runs(*case, leak=None), 1e-3, 0)
    assert findings == [] and tests > 20


@pytest.mark.parametrize("case", [TREE, GAUSS], ids=["laplace", "discrete-gaussian"])
@pytest.mark.parametrize(("leak", "tests"), [("scale/2", {"law", "tails", "site law"}),
                                            ("noiseless", {"constant"}), ("shared", {"reused", "correlated"})])
def test_planted_mistakes_are_found_and_named(case: tuple[str, dict[str, object], list[object]], leak: str,
                                              tests: set[str]) -> None:
    findings, _ = law_findings(_runs(*case, leak=leak), 1e-3, 0)
    assert {f.test for f in findings} & tests, [f.what for f in findings]
    first_site = f"{case[0]} {'L8' if case[0] == '001-alg10' else 'u8'} t=1"
    assert any(first_site in f.sites for f in findings if f.test in tests)


def test_a_constant_discrete_draw_is_judged_by_its_largest_probability() -> None:
    narrow = Draw("s", DrawKind.DISCRETE_GAUSSIAN, {"sigma2": 0.01}, 0)  # almost always 0: constant is no finding
    assert top_mass(narrow) > 0.999
    findings, _ = law_findings([[narrow] for _ in range(40)], 1e-3, 0)
    assert not [f for f in findings if f.test == "constant"]
    wide = Draw("s", DrawKind.DISCRETE_GAUSSIAN, {"sigma2": 100.0}, 3)
    findings, _ = law_findings([[wide] for _ in range(40)], 1e-3, 0)
    assert [f.test for f in findings if f.test == "constant"] == ["constant"]


def test_the_selection_score_statistic_by_hand() -> None:
    """One choice between scores 0 and 2 at eps 1, sensitivity 1: log-weights per unit of eps u = (0, 1), P = (1, e)
    / (1 + e); index 1 taken: slope 1 - e/(1 + e) = 0.26894, information P_0 P_1 = 0.19661."""
    d = Draw("s", DrawKind.EXPONENTIAL_MECHANISM, {"scores": [0.0, 2.0], "epsilon": 1.0, "sensitivity": 1.0}, 1)
    ((slope, info, n, sites),) = _selection_scores([[d]]).values()
    assert slope == pytest.approx(0.2689414213699951) and info == pytest.approx(0.19661193324148185)
    assert (n, sites) == (1, {"s"})


def test_a_selection_at_twice_its_epsilon_is_found_by_the_score_test() -> None:
    """003-alg3 on the catalog's ``opposed`` input (its k = 1 setting, eps/(2k) = 0.25): 300 seeded runs with every
    exponential mechanism at twice its epsilon (``em*2``, the transcript still stating the reference's) fail the
    score test at 1e-3 on the sites of the selections; the correct reference's 300 runs fail no test (false alarm
    <= 1e-3; seeded, so deterministic)."""
    plan = plan_for("003-alg3", Profile.QUICK)
    assert isinstance(plan, StatisticalPlan)
    params = dict(plan.settings[0])
    f = plan.spaces[0].families["opposed"](3)
    assert law_findings(_runs("003-alg3", params, f, None), 1e-3, 0)[0] == []
    findings, _ = law_findings(_runs("003-alg3", params, f, "em*2"), 1e-3, 0)
    found = [x for x in findings if x.test == "selection"]
    assert found and "003-alg3 L12 t=2 l=1" in found[0].sites and "favour the high scores more" in found[0].what
