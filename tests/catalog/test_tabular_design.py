"""The tabular entries' statistical design: k = 1 settings whose releases show which query was measured, and
features on which a multiplicative-weights measurement is linear (docs/conformance.md, "Statistical checks" and
"Transcript mode").

* Multiplicative weights (003-mw) fit h(x) proportional to h_0(x) exp(eta q(x) (m - q(h_0))) after one measurement
  m of a query q, so log h(x) minus its mean over X is exactly linear in m (the normalisation cancels), while the
  cell counts are not: moving the measured value by -2, 0, +2, +4 changes the log features by equal steps.
* With a public total, a query and its complement score alike and their updates coincide: measuring q at m releases
  what measuring 1 - q at n - m does. The k = 1 settings' workloads hold no query with its complement."""

from __future__ import annotations

import numpy as np
import pytest

from dpstream.audit.registry import Profile
from dpstream.conformance.entry_sampler import entry_run, featurise
from dpstream.conformance.held_equal import DoorDraw, _Door, door_run
from dpstream.conformance.replays import seeded_tape
from dpstream.conformance.statistical import StatisticalPlan, horizon_of, plan_for


def _plan(anchor: str) -> StatisticalPlan:
    plan = plan_for(anchor, Profile.QUICK)
    assert isinstance(plan, StatisticalPlan)
    return plan


@pytest.mark.parametrize("anchor", ["003-alg2", "000-alg2", "003-alg1", "000-alg1"])
def test_the_log_step_features_are_linear_in_a_measurement(anchor: str) -> None:
    plan = _plan(anchor)
    e, params = plan.entry, plan.settings[0]
    assert params["k"] == 1
    f = next(iter(plan.spaces[0].families.values()))(horizon_of(e, params))
    tape = seeded_tape(e, params, f, 3)
    assert tape is not None
    run = entry_run(e, params)
    base = door_run(run, f, tape)
    assert base is not None
    i = next(j for j, d in enumerate(base.seen) if d.sensitive is not None)  # the first step's measurement
    names = e.statistical.design.features(e.params.validate(params), horizon_of(e, params)).names  # type: ignore
    logs = np.asarray([" log h(" in n for n in names])
    rows = []
    for by in (-2.0, 0.0, 2.0, 4.0):
        seen = list(base.seen)
        d = seen[i]
        seen[i] = DoorDraw(d.site, d.kind, d.params, d.value + by, d.sensitive)
        rows.append(featurise(e.anchor, params, [run(_Door({x.site: x for x in seen}, hold=True), f)])[0])
    second = np.diff(np.asarray(rows), n=2, axis=0)
    assert np.max(np.abs(second[:, logs])) < 1e-9
    assert np.max(np.abs(np.diff(rows, axis=0)[:, logs])) > 1e-3  # they move
    assert np.max(np.abs(second[:, ~logs])) > 1e-4  # the cell counts bend


@pytest.mark.parametrize("anchor", ["003-alg2", "003-alg1", "003-alg3"])
def test_the_k1_settings_hold_no_query_with_its_complement(anchor: str) -> None:
    plan = _plan(anchor)
    for params in plan.settings:
        if params["k"] != 1:
            continue
        sizes = params["domain"]["sizes"]
        seen = {(tuple(q["columns"]), tuple(q["values"])) for q in params["queries"]}
        for columns, values in seen:
            if len(columns) == 1:
                others = {(columns, (v,)) for v in range(sizes[columns[0]]) if v != values[0]}
                assert not (len(others) == 1 and others <= seen)
