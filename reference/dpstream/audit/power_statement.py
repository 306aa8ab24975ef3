"""What backs a ``pass``: the measured power of the search as it is run (docs/audits.md, "Power and pass").

The witness search says ``pass`` only with a :class:`PowerStatement`: for each class of planted leak
(:data:`dpstream.insecure.planted.PLANTED_LEAKS`: noise scale divided by 1.5, 2, 3, 4; one draw shared by two sites;
one count without noise) planted into the reference, how many of R repetitions of *this* search (same settings,
inputs, features, budget) certified a violation. The statement backs ``pass`` when, for every class, the one-sided
Clopper-Pearson lower bound (confidence :data:`CONFIDENCE`) of the share certified is at least :data:`POWER_FLOOR`:
with 10 repetitions, 9 or 10 certified. Otherwise the verdict is ``inconclusive``, and the report says which class
fell short. A statement is tied to the search configuration it was measured for by a fingerprint; a stale one (the
search, the design or the budget changed since) backs nothing.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from dpstream.audit.stats import clopper_pearson_lower

__all__ = ["CONFIDENCE", "POWER_FLOOR", "PowerRow", "PowerStatement"]

CONFIDENCE = 0.95
POWER_FLOOR = 0.6
"""The least power (lower confidence bound) against every planted leak class that backs a ``pass``."""


@dataclass(frozen=True)
class PowerRow:
    """One planted leak class: ``certified`` of ``reps`` searches gave ``violation``; ``excess`` is the loss above
    the claim the leak adds at the setting where it is largest (inf: not private at all)."""

    leak: str
    excess: float
    certified: int
    reps: int

    @property
    def lower(self) -> float:
        """Lower confidence bound of the probability that the search certifies this leak."""
        return clopper_pearson_lower(self.certified, self.reps, 1.0 - CONFIDENCE) if self.reps else 0.0

    def to_json(self) -> dict[str, Any]:
        return {"leak": self.leak, "excess": self.excess if math.isfinite(self.excess) else "inf",
                "certified": self.certified, "reps": self.reps, "power_lower_bound": round(self.lower, 4)}

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> PowerRow:
        excess = doc["excess"]
        return cls(str(doc["leak"]), math.inf if excess == "inf" else float(excess), int(doc["certified"]),
                   int(doc["reps"]))


@dataclass(frozen=True)
class PowerStatement:
    """The measured power of one search configuration against the planted leak classes (module docstring)."""

    rows: tuple[PowerRow, ...]
    source: str
    """Where it was measured: the command and the fingerprint of the search configuration."""

    @property
    def backs_pass(self) -> bool:
        return bool(self.rows) and all(r.lower >= POWER_FLOOR for r in self.rows)

    def shortfalls(self) -> list[PowerRow]:
        return [r for r in self.rows if r.lower < POWER_FLOOR]

    def describe(self) -> str:
        if not self.rows:
            return self.source  # why there is no measured power
        parts = [f"{r.leak} {r.certified}/{r.reps}" for r in self.rows]
        head = (f"measured power against planted leaks (certified / repetitions): {', '.join(parts)}; "
                f"a pass needs a {CONFIDENCE:.0%} lower bound >= {POWER_FLOOR:g} against every class")
        if self.backs_pass:
            return head + " (met)"
        weak = ", ".join(f"{r.leak} (lower bound {r.lower:.2f})" for r in self.shortfalls())
        return head + f"; short of it: {weak}" if weak else head

    def to_json(self) -> dict[str, Any]:
        return {"rows": [r.to_json() for r in self.rows], "source": self.source, "backs_pass": self.backs_pass,
                "floor": POWER_FLOOR, "confidence": CONFIDENCE}

    @classmethod
    def none(cls, why: str) -> PowerStatement:
        """No measured power (``why`` says why): backs nothing."""
        return cls((), why)

    @classmethod
    def of(cls, rows: Sequence[PowerRow], source: str) -> PowerStatement:
        return cls(tuple(rows), source)
