"""INSECURE, tests only: :class:`ScriptedNoise` serves scripted values at chosen sites, seeded draws elsewhere.

Used to force rare events deterministically (e.g. noise that exhausts the longitudinal padding).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dpstream.insecure.seeded import InsecureSeededNoise
from dpstream.noise import BaseNoiseSource, DrawKind, Params, dispatch

__all__ = ["ScriptedNoise"]


class ScriptedNoise(BaseNoiseSource):
    """INSECURE, tests only: the scripted value at a scripted site, otherwise a seeded draw.

    Used to force rare events deterministically (e.g. noise that exhausts the padding).
    ``sites`` lists every site requested, in order.
    """

    def __init__(self, script: Mapping[str, Any], seed: int = 0) -> None:
        self.script = dict(script)
        self.inner = InsecureSeededNoise(seed)
        self.sites: list[str] = []

    def _draw(self, site: str, kind: DrawKind, params: Params) -> Any:
        self.sites.append(site)
        if site in self.script:
            return self.script[site]
        return dispatch(self.inner, site, kind, params)
