"""Pieces of the synthesizers' search designs (:class:`~dpstream.catalog.entry.SearchDesign`) shared by families.

EVENT streams (PHDStream's point batches, the tabular record steps) are handled here as batches of *event tuples*
``(*x, +1)`` (x inserted) and ``(*x, -1)`` (x removed), the form :func:`dpstream.audit.neighbours.is_neighbour`
reads; each family converts its JSON INPUTs to and from it. :func:`event_neighbours` lists the EVENT neighbours
the search tries, every one a valid stream (:func:`valid_events`).
"""

from __future__ import annotations

import itertools
import re
from collections import Counter as Multiset
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from dpstream.audit.neighbours import event_pairs

__all__ = ["Event", "contrasts", "event_neighbours", "valid_events"]

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


MAX_CONTRASTS = 48
"""Declared statistics per setting (the search proposes events on each, for every neighbouring pair)."""
_TIMED = re.compile(r"^t=(\d+) (.*)$")


def contrasts(names: Sequence[str], quantities: Sequence[str], *, total: str | None = None
              ) -> list[tuple[str, Mapping[str, float]]]:
    """The sensitivity analysis of the synthesizers, as linear statistics of their features (``t=<t> <quantity><cell>``
    names; :class:`~dpstream.catalog.entry.SearchDesign`): one event changes a count at every step from its time on,
    and a record that moves changes two cells in opposite directions. For every quantity prefix of ``quantities``:

    * every cell's count summed over the steps (the evidence of a persistent change adds up while independent noise
      does not);
    * at every step, and summed over the steps, the difference of consecutive cells (in the order of the names);
    * with ``total``, the sum of the features whose name starts with it (e.g. the size of PrivTree's subtree).
    """
    by_cell: dict[tuple[str, str], dict[str, float]] = defaultdict(dict)
    by_step: dict[tuple[str, str], list[str]] = defaultdict(list)
    for name in names:
        match = _TIMED.match(name)
        step, rest = (match.group(1), match.group(2)) if match else ("", name)
        for q in quantities:
            if rest.startswith(q):
                by_cell[(q, rest)][name] = 1.0
                by_step[(q, step)].append(name)
                break
    out: list[tuple[str, Mapping[str, float]]] = []
    if total is not None:
        chosen = {n: 1.0 for n in names if n.startswith(total)}
        if len(chosen) > 1:
            out.append((f"sum of '{total}'", chosen))
    for (_, cell), weights in by_cell.items():
        if len(weights) > 1:
            out.append((f"{cell} summed over the steps", weights))
    differences: dict[str, dict[str, float]] = defaultdict(dict)
    steps: list[tuple[str, Mapping[str, float]]] = []
    for members in by_step.values():
        for a, b in itertools.pairwise(members):
            steps.append((f"{a} - {b}", {a: 1.0, b: -1.0}))
            key = f"{_cell(a)} - {_cell(b)} summed over the steps"
            differences[key][a] = 1.0
            differences[key][b] = -1.0
    out += [(label, w) for label, w in differences.items() if len(w) > 2]
    return (out + steps)[:MAX_CONTRASTS]


def _cell(name: str) -> str:
    match = _TIMED.match(name)
    return match.group(2) if match else name
