"""Every synthesizer's search design moves what each planted leak changes (issue 28, point 4).

The power table plants its leaks (dpstream.insecure.planted) at the sites an entry names (``StatisticalSpec.
planted``): ``noiseless`` the first additive draw there, ``shared`` the second there reusing the first's noise,
``scale/c`` every additive draw. A leak can only be seen on a neighbouring pair that moves the statistic it changes:
the sensitive value handed to the noise door at that site (``noiseless``), the difference of the two values
(``shared``), any value (``scale``). For every entry with a design, some pair the quick profile keeps must move each
of them; the values are recorded at the noise door itself, on f and on f' with the same seeded draws. Where the
sites depend on the draws (a selection picks the query measured next), runs with other seeds count too (up to
:data:`SEEDS`): the leak lands on the first planted draw of each run, whichever that is."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import pytest

from dpstream.audit.registry import Profile
from dpstream.catalog import entries
from dpstream.conformance.statistical import horizon_of, plan_for
from dpstream.insecure import InsecureSeededNoise
from dpstream.noise import BaseNoiseSource, DrawKind, NoiseSource, Params, dispatch, dispatch_add

SEEDS = 8
DESIGNED = [e.anchor for e in entries(streaming=True) if e.statistical is not None and e.statistical.design]


class Recording(BaseNoiseSource):
    """INSECURE (tests only): ``inner``, recording the sensitive value of every additive draw by site, in order."""

    def __init__(self, inner: NoiseSource) -> None:
        self.inner = inner
        self.values: dict[str, Any] = {}

    @property
    def order_free(self) -> bool:  # type: ignore[override]
        return False

    def _draw(self, site: str, kind: DrawKind, params: Params) -> Any:
        return dispatch(self.inner, site, kind, params)

    def _add(self, site: str, kind: DrawKind, params: Params, value: Any) -> tuple[Any, Any]:
        self.values[site] = float(value)
        return dispatch_add(self.inner, site, kind, params, value)

    def _add_many(self, sites: Sequence[str], kind: DrawKind, params: Params, values: Sequence[Any]
                  ) -> tuple[list[Any], list[Any]]:
        out = [self._add(site, kind, params, value) for site, value in zip(sites, values, strict=True)]
        return [r for r, _ in out], [n for _, n in out]


def _values(anchor: str, params: Any, stream: list[Any], seed: int = 0) -> dict[str, float]:
    e = next(x for x in entries(streaming=True) if x.anchor == anchor)
    assert e.codec is not None
    source = Recording(InsecureSeededNoise(seed))
    algorithm, valid = e.make(params, source), e.params.validate(params)
    for x in stream:
        algorithm.step(e.codec.decode_input(x, valid))
    return source.values


@pytest.mark.parametrize("anchor", DESIGNED)
def test_a_kept_pair_moves_what_every_planted_leak_changes(anchor: str) -> None:
    plan = plan_for(anchor, Profile.QUICK)
    assert not isinstance(plan, str) and plan.entry.statistical is not None
    where = re.compile(plan.entry.statistical.planted or "")
    moved = {"scale": False, "noiseless": False, "shared": False}
    for seed in range(SEEDS):
        for params, space in zip(plan.settings, plan.spaces, strict=True):
            T = horizon_of(plan.entry, params)
            for make in space.families.values():
                f = make(T)
                on_f = _values(anchor, params, f, seed)
                planted = [s for s in on_f if where.search(s)]
                for _, g in space.neighbours(f):
                    on_g = _values(anchor, params, g, seed)
                    moved["scale"] |= any(on_g.get(s) != v for s, v in on_f.items())
                    if planted:
                        first = planted[0]
                        moved["noiseless"] |= on_g.get(first) != on_f[first]
                    if len(planted) > 1:
                        a, b = planted[:2]
                        if a in on_g and b in on_g:
                            moved["shared"] |= on_g[b] - on_g[a] != on_f[b] - on_f[a]
        if all(moved.values()):
            return
    missed = [k for k, v in moved.items() if not v]
    assert not missed, f"{anchor}: no kept pair moves the statistic of {missed}"
