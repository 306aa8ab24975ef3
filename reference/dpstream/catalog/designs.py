"""Pieces of the synthesizers' search designs (:class:`~dpstream.catalog.entry.SearchDesign`) shared by families.

EVENT streams (PHDStream's point batches, the tabular record steps) are handled here as batches of *event tuples*
``(*x, +1)`` (x inserted) and ``(*x, -1)`` (x removed), the form :func:`dpstream.audit.neighbours.is_neighbour`
reads; each family converts its JSON INPUTs to and from it. :func:`event_neighbours` lists the EVENT neighbours
the search tries, every one a valid stream (:func:`valid_events`).
"""

from __future__ import annotations

from collections import Counter as Multiset
from collections.abc import Sequence
from typing import Any

from dpstream.audit.neighbours import event_pairs

__all__ = ["Event", "event_neighbours", "valid_events"]

Event = tuple[Any, ...]
"""One event: the item's coordinates (a point, a record), then +1 (inserted) or -1 (removed)."""
Batches = list[tuple[Event, ...]]


def valid_events(batches: Sequence[Sequence[Event]]) -> bool:
    """Every removal takes an item present before its batch (inserted earlier and not removed since).

    Stricter than letting a batch remove what it inserts itself, so a stream valid here is valid under either
    reading of "present" (PHDStream's f(x, t) >= 0 and the tabular f_t(x) >= 0)."""
    present: Multiset[Event] = Multiset()
    for batch in batches:
        removed: Multiset[Event] = Multiset(e[:-1] for e in batch if e[-1] == -1)
        if any(present[x] < n for x, n in removed.items()):
            return False
        present.subtract(removed)
        present.update(e[:-1] for e in batch if e[-1] == 1)
    return True


def _present_before(batches: Sequence[Sequence[Event]], t: int) -> list[Event]:
    present: Multiset[Event] = Multiset()
    for batch in batches[:t - 1]:
        present.update(e[:-1] for e in batch if e[-1] == 1)
        present.subtract(e[:-1] for e in batch if e[-1] == -1)
    return sorted(x for x, n in present.items() if n > 0)


def event_neighbours(batches: Sequence[Sequence[Event]], inserted: Sequence[tuple[str, Event]],
                     times: Sequence[int] | None = None) -> list[tuple[str, Batches]]:
    """EVENT neighbours (one event added or removed at one time) of a valid stream of event batches.

    Kinds of change, each at every time t of ``times`` (default all), kind by kind: insert each item of
    ``inserted`` (``(name, x)``); drop the first insertion of batch t whose absence keeps the stream valid (its
    item is not removed later); remove an item present before t (the first, in sorted order, that keeps the stream
    valid); drop the first removal of batch t. Kinds with no valid change at t are left out. Pairs come from
    :func:`dpstream.audit.neighbours.event_pairs`."""
    base = [tuple(b) for b in batches]
    chosen = list(range(1, len(base) + 1)) if times is None else list(times)
    out: list[tuple[str, Batches]] = []

    def add(t: int, event: Event, remove: bool, text: str) -> None:
        pair = event_pairs(base, [t], event, remove=remove)[0]
        g = [tuple(b) for b in pair.f_prime]
        if valid_events(g):
            out.append((f"t={t}: {text}", g))

    for name, x in inserted:
        for t in chosen:
            add(t, (*x, 1), False, f"insert {name} {list(x)}")
    for t in chosen:
        for e in dict.fromkeys(e for e in base[t - 1] if e[-1] == 1):
            before = len(out)
            add(t, e, True, f"drop the insertion of {list(e[:-1])}")
            if len(out) > before:
                break
    for t in chosen:
        for x in _present_before(base, t):
            before = len(out)
            add(t, (*x, -1), False, f"remove the present {list(x)}")
            if len(out) > before:
                break
    for t in chosen:
        removal = next((e for e in base[t - 1] if e[-1] == -1), None)
        if removal is not None:
            add(t, removal, True, f"drop the removal of {list(removal[:-1])}")
    return out
