"""The catalog: one entry per algorithm, the single list everything else reads.

Every printed algorithm of the five papers (the 25 anchors of ``dpstream.papers``) has an
:class:`~dpstream.catalog.entry.Entry` here, plus the components the papers use without a printed
box (the discrete Binary Mechanism 004-lem3.1, the multi-dimensional counter 001-sec4.3, the hybrid
counter). The conformance kit (``dpstream serve``, ``dpstream conform``), the vectors corpus
(``dpstream vectors``), the audits and the generated docs index read this list; nothing else
enumerates algorithms.

Entries live in one module per family (``dpstream.catalog.counters``, ...); they are loaded on
first use, so that importing a codec or the entry type does not import every algorithm.
"""

from __future__ import annotations

import importlib
from functools import cache

from dpstream.catalog.entry import Builder, Entry, RejectSpec, StatisticalSpec, VectorSpec
from dpstream.catalog.origins import Origin, origin

__all__ = ["FAMILIES", "Builder", "Entry", "Origin", "RejectSpec", "StatisticalSpec", "VectorSpec", "entries", "entry",
           "origin"]

FAMILIES = ("counters", "phdstream", "longitudinal", "hypercube", "tabular")
"""The catalog modules, one per algorithm family (and per docs page)."""


@cache
def _all() -> tuple[Entry, ...]:
    found: list[Entry] = []
    for family in FAMILIES:
        found.extend(importlib.import_module(f"{__name__}.{family}").ENTRIES)
    anchors = [e.anchor for e in found]
    duplicated = sorted({a for a in anchors if anchors.count(a) > 1})
    if duplicated:
        raise RuntimeError(f"catalog anchors listed twice: {duplicated}")
    return tuple(found)


def entries(*, streaming: bool | None = None, family: str | None = None) -> tuple[Entry, ...]:
    """Every entry, in family order; ``streaming=True`` keeps those that speak the protocol."""
    return tuple(e for e in _all()
                 if (streaming is None or e.streaming == streaming) and (family is None or e.family == family))


def entry(anchor: str) -> Entry:
    """The entry of ``anchor`` (``KeyError`` naming the known anchors if there is none)."""
    for e in _all():
        if e.anchor == anchor:
            return e
    raise KeyError(f"no catalog entry {anchor!r}; known: {[e.anchor for e in _all()]}")
