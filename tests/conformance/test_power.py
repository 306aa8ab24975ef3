"""What backs a ``pass``: power tables (``dpstream.conformance.power``), planted leaks in the counters' vectorised
samplers, and ``pass`` given only by a measured row of this search's configuration."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from dpstream.audit.power_statement import PowerRow
from dpstream.audit.registry import Profile
from dpstream.audit.vectorised import PlantedModelSampler, noise_matrix
from dpstream.catalog import entry
from dpstream.conformance.entry_sampler import EntrySampler
from dpstream.conformance.power import CALIBRATION_LEVEL, fingerprint, leak_excess, markdown, power_statement
from dpstream.conformance.statistical import StatisticalPlan, plan_for
from dpstream.insecure import ScriptedNoise
from dpstream.insecure.planted import PLANTED_LEAKS, PlantedLeak, PlantedNoise


def _plan(anchor: str, profile: Profile = Profile.QUICK) -> StatisticalPlan:
    plan = plan_for(anchor, profile)
    assert not isinstance(plan, str)
    return plan


def _table(tmp_path: Path, plan: StatisticalPlan, certified: int, level: float = CALIBRATION_LEVEL) -> Path:
    rows = [PowerRow(leak.name, leak_excess(plan, leak), certified, 10).to_json() for leak in PLANTED_LEAKS]
    fp = fingerprint(plan, Profile.QUICK, False)
    doc = {"format": "dpstream-power-table", "version": 1,
           "rows": {fp: {"anchor": plan.entry.anchor, "profile": "quick", "bulk": False, "level": level,
                         "fingerprint": fp, "date": "2026-11-26", "command": "test", "leaks": rows}}}
    path = tmp_path / "power.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def test_the_fingerprint_is_the_configuration() -> None:
    plan = _plan("001-alg5")
    assert fingerprint(plan, Profile.QUICK, False) == fingerprint(_plan("001-alg5"), Profile.QUICK, False)
    assert fingerprint(plan, Profile.QUICK, False) != fingerprint(_plan("001-alg5", Profile.THOROUGH),
                                                                  Profile.THOROUGH, False)
    assert fingerprint(_plan("001-alg8"), Profile.QUICK, False) != fingerprint(_plan("001-alg8"), Profile.QUICK, True)


def test_a_measured_row_backs_pass_and_nothing_else_does(tmp_path: Path) -> None:
    plan = _plan("001-alg5")
    none = power_statement(plan, Profile.QUICK, False, CALIBRATION_LEVEL, tmp_path / "missing.json")
    assert not none.backs_pass and "no measured power" in none.source and "--algorithm 001-alg5" in none.source
    strong = power_statement(plan, Profile.QUICK, False, CALIBRATION_LEVEL, _table(tmp_path, plan, 10))
    assert strong.backs_pass and len(strong.rows) == len(PLANTED_LEAKS)
    weak = power_statement(plan, Profile.QUICK, False, CALIBRATION_LEVEL, _table(tmp_path, plan, 8))
    assert not weak.backs_pass and "short of it" in weak.describe()
    smaller = power_statement(plan, Profile.QUICK, False, CALIBRATION_LEVEL / 2, _table(tmp_path, plan, 10))
    assert not smaller.backs_pass and "level" in smaller.source  # a run with more checks than the calibration's
    other = power_statement(_plan("001-alg1"), Profile.QUICK, False, CALIBRATION_LEVEL, _table(tmp_path, plan, 10))
    assert not other.backs_pass  # another entry's row backs nothing
    assert "| 001-alg5 | quick |" in markdown(json.loads((tmp_path / "power.json").read_text()))


def test_leak_sizes() -> None:
    plan = _plan("001-alg8")
    eps = max(entry("001-alg8").claim(p).parameter for p in plan.settings)
    assert leak_excess(plan, PlantedLeak("scale", 2.0)) == pytest.approx(eps)
    assert leak_excess(plan, PlantedLeak("shared")) == float("inf")
    rho = max(entry("002-alg3").claim(p).parameter for p in _plan("002-alg3").settings)
    assert leak_excess(_plan("002-alg3"), PlantedLeak("scale", 2.0)) == pytest.approx(3 * rho)


@pytest.mark.parametrize("text", ["scale/2:t=3", "scale/1.5:t=[35]", "em*1.5:L8"])
def test_a_leak_with_sites_changes_only_the_draws_at_those_sites(text: str) -> None:
    """``scale/2:t=3`` is one step under-noised (the others as the reference draws them); the name round-trips."""
    from dpstream.insecure.seeded import InsecureSeededNoise
    from dpstream.insecure.tape_sources import TapeRecorder

    leak = PlantedLeak.parse(text)
    assert PlantedLeak.parse(leak.name) == leak and leak.name == text and leak.sites in leak.describe()
    scales = {}
    for planted in (None, leak):
        recorder = TapeRecorder(InsecureSeededNoise(1))
        counter = entry("001-alg10").make({"epsilon": 1.0, "T": 6},
                                          recorder if planted is None else PlantedNoise(recorder, planted))
        for x in [1, 0, 1, 1, 0, 1]:
            counter.step(x)
        scales[planted] = {d.site: float(d.params["scale"]) for d in recorder.tape.draws}
    reference, changed = scales[None], scales[leak]
    assert reference.keys() == changed.keys()
    for site, scale in reference.items():
        hit = leak.kind == "scale" and leak.matches(site)
        assert changed[site] == pytest.approx(scale / leak.factor if hit else scale, rel=1e-12), site
    assert any(leak.matches(site) for site in reference)


@pytest.mark.parametrize("leak", ["noiseless", "shared", "noiseless:t=3", "shared:t=[23]"])
def test_planted_model_sampler_plants_what_planted_noise_plants(leak: str) -> None:
    """Line by line (PlantedNoise over a scripted source) and vectorised (PlantedModelSampler), the same noise values
    give the same releases."""
    planted = PlantedLeak.parse(leak)
    build = entry("001-alg10").model
    assert build is not None
    model = build({"epsilon": 1.0, "T": 6})
    Z = noise_matrix(model.laws, 4, 9)
    inputs = [1, 0, 1, 1, 0, 1]
    vectorised = PlantedModelSampler(model, planted).releases(inputs, PlantedModelSampler(model, planted).plant(Z))
    for row in range(Z.shape[0]):
        script = dict(zip(model.sites, Z[row].tolist(), strict=True))
        counter = entry("001-alg10").make({"epsilon": 1.0, "T": 6}, PlantedNoise(ScriptedNoise(script), planted))
        assert np.allclose([counter.step(x) for x in inputs], vectorised[row], atol=1e-12)


def test_a_scale_leak_scales_the_laws_of_the_vectorised_runs() -> None:
    sampler = EntrySampler("001-alg8", {"epsilon": 1.0, "T": 4}, PlantedLeak("scale", 4.0))
    runs = sampler.sample([0, 0, 0, 0], 20_000, 3)
    increments = np.diff(runs, axis=1, prepend=0.0)
    assert np.std(increments) == pytest.approx(np.sqrt(2) / 4, rel=0.05)  # Lap(1/4): sd sqrt(2)/4


def test_every_row_of_the_shipped_table_is_current_and_the_counters_pass_on_it() -> None:
    """The shipped power table (dpstream/conformance/power-table.json) was measured on the search as it is now: a
    change of the search's code, an entry's design or a budget makes its rows stale (they would back nothing), and
    this test says which row to measure again. The counters' quick rows back ``pass`` (the docs say so)."""
    from dpstream.conformance.power import load_table

    doc = load_table()
    assert doc["rows"], "no shipped power table"
    for key, row in doc["rows"].items():
        profile = Profile(row["profile"])
        assert fingerprint(_plan(row["anchor"], profile), profile, row["bulk"]) == key, \
            f"stale power row for {row['anchor']} {row['profile']}: measure it again with `{row['command']}`"
    for anchor in ("001-alg8", "001-alg10"):
        for bulk in (False, True):
            statement = power_statement(_plan(anchor), Profile.QUICK, bulk, CALIBRATION_LEVEL)
            assert statement.backs_pass, (anchor, bulk, statement.describe())


def test_the_docs_show_the_shipped_table() -> None:
    """docs/audits.md quotes `python -m dpstream.conformance.power show` exactly (no figure by hand)."""
    from dpstream.conformance.power import load_table

    docs = (Path(__file__).resolve().parents[2] / "docs" / "audits.md").read_text(encoding="utf-8")
    assert markdown(load_table()) in docs
