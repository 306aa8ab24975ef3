"""Privacy parameters at the edges of the float range: refused when the algorithm is built, or usable.

A parameter whose derived noise parameters no source accepts (a scale 1/eps that is infinite for eps = 1e-320, a
variance that underflows to 0 for a huge rho, an integer scale that would saturate 64 bits) must be refused by the
constructor (so also by ``dpstream serve`` at ``init``) with a :class:`DPStreamInputError` naming the parameter,
not accepted and then refused at every step. Every streaming entry of the catalog is built with each extreme value
of each of its privacy parameters; either the constructor refuses it, naming it, or the entry's longest vector
stream runs through (seeded noise) with releases that are JSON. Deterministic: no false-alarm probability.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from dpstream.catalog import Entry, entries
from dpstream.errors import DPStreamInputError
from dpstream.insecure import InsecureSeededNoise

PRIVACY_PARAMETERS = ("epsilon", "rho", "eps_r")
EXTREMES = (5e-324, 1e-320, 1e-308, 1e-300, 1e-200, 1e-30, 1e30, 1e300, 1.7976931348623157e308)


def _cases() -> list[Any]:
    out: list[Any] = []
    for e in entries(streaming=True):
        names = [p.name for p in e.params.params if p.name in PRIVACY_PARAMETERS]
        out += [pytest.param(e, name, id=f"{e.anchor}-{name}") for name in names]
    return out


@pytest.mark.parametrize(("e", "name"), _cases())
def test_an_extreme_privacy_parameter_is_refused_at_construction_or_usable(e: Entry, name: str) -> None:
    vector = max(e.vectors(), key=lambda v: len(v.inputs))
    assert e.codec is not None
    for value in EXTREMES:
        params = {**vector.params, name: value}
        try:
            algorithm = e.make(params, InsecureSeededNoise(0))
        except DPStreamInputError as exc:
            assert exc.field == name, f"{e.anchor} {name}={value:g}: the refusal names {exc.field!r}: {exc}"
            continue
        valid = e.params.validate(params)
        for t, x in enumerate(vector.inputs, start=1):
            try:
                release = algorithm.step(e.codec.decode_input(x, valid))
            except DPStreamInputError as exc:
                pytest.fail(f"{e.anchor} {name}={value:g} was accepted, then step {t} failed: {exc}")
            json.dumps(e.codec.encode_release(release), allow_nan=False)
