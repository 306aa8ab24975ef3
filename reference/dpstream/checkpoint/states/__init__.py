"""Every documented state, family by family (docs/checkpoint-states.md is generated from them)."""

from __future__ import annotations

from dpstream.checkpoint.spec import StateSpec
from dpstream.checkpoint.states import catalog, counters, hypercube, longitudinal, phdstream, tabular

__all__ = ["SPECS"]

SPECS: tuple[StateSpec, ...] = (*counters.SPECS, *phdstream.SPECS, *longitudinal.SPECS, *hypercube.SPECS,
                                *tabular.SPECS, *catalog.SPECS)
