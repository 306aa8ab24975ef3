"""Tape mode: answer a program's draw requests from a vector's tape, and note every divergence.

A :class:`TapeAnswerer` serves ``{"draw": {"site", "kind", "params"}}`` requests site by site, as
:class:`~dpstream.insecure.TapeReplay` does for our own code, but it never stops the run: a request with
different parameters is answered with the tape's value and noted; a site that is not on the tape is
answered with a neutral value of its kind (0, false, the first indices, the box's low corner) and
noted; at the end :meth:`missing` lists the sites never requested.

The rules (docs/conformance.md, "The checks"; pinned by ``tests/conformance/test_draw_pins.py``): the kind
must be the tape's; the parameter keys exactly the tape's; float parameters within the vector's
``draw_tolerance`` (``absolute + relative * |tape's|``, from the entry's error model: what another evaluation order
can explain; :data:`LEGACY_DRAW_TOLERANCE` for vectors written before it), integer parameters (``k``, ``n``,
``count``) exactly, list parameters (``scores``, ``low``, ``high``) element by element with the same length. A site
asked twice (``repeated-site``), a site not on the tape (``unexpected-site``) and a request with an unknown kind or
invalid parameters (``malformed``) are noted too.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from dpstream.catalog.codecs import Tolerance
from dpstream.noise import DrawKind, validated_params
from dpstream.tape import Tape, params_equal, value_to_json
from dpstream.vectors.format import LEGACY_DRAW_TOLERANCE

__all__ = ["ANY_PARAMS", "DrawIssue", "TapeAnswerer"]

ANY_PARAMS = Tolerance(float("inf"), 0.0)
"""Accept any float parameter (a first pass that only collects what the error model needs)."""


@dataclass(frozen=True)
class DrawIssue:
    """A draw request that does not match the tape: ``what`` is unexpected-site, kind or params."""

    step: int
    site: str
    what: str
    expected: Any
    got: Any
    kind: str = ""
    """The kind the reference asked for (``unexpected-site`` and ``params``: what the implied loss needs)."""

    def describe(self) -> str:
        if self.what == "unexpected-site":
            return f"step {self.step}: unexpected draw site {self.site!r} ({self.got})"
        if self.what == "repeated-site":
            return f"step {self.step}: site {self.site!r} requested twice"
        if self.what == "malformed":
            return f"step {self.step}: malformed draw request {self.got!r}"
        return f"step {self.step}: site {self.site!r}: expected {self.what} {self.expected!r}, got {self.got!r}"

    def to_json(self) -> dict[str, Any]:
        return {"step": self.step, "site": self.site, "what": self.what, "expected": self.expected, "got": self.got}


def _neutral(kind: DrawKind, params: Mapping[str, Any]) -> Any:
    if kind is DrawKind.LAPLACE:
        return 0.0
    if kind in (DrawKind.DISCRETE_LAPLACE, DrawKind.DISCRETE_GAUSSIAN, DrawKind.EXPONENTIAL_MECHANISM):
        return 0
    if kind is DrawKind.COIN:
        return False
    if kind is DrawKind.CHOICE:
        return list(range(int(params.get("k", 0))))
    low = [float(v) for v in params.get("low", [])]
    return [low] * int(params.get("count", 0))


@dataclass
class TapeAnswerer:
    """Answers draw requests of one run from ``tape``; ``step`` is the current 1-based step (for notes)."""

    tape: Tape
    tolerance: Tolerance = LEGACY_DRAW_TOLERANCE
    step: int = 0
    issues: list[DrawIssue] = field(default_factory=list)
    used: set[str] = field(default_factory=set)
    requests: int = 0

    def __post_init__(self) -> None:
        self._by_site = self.tape.by_site()
        self._this_step: list[str] = []

    def begin_step(self, step: int) -> None:
        self.step = step
        self._this_step = []

    def forget_step(self) -> None:
        """The step was rejected: its draws did not happen (the program must not keep them)."""
        for site in self._this_step:
            self.used.discard(site)
        self._this_step = []

    def answer(self, draw: Mapping[str, Any]) -> Any:
        self.requests += 1
        site, kind_name, params = draw.get("site"), draw.get("kind"), draw.get("params")
        try:
            if not isinstance(site, str) or not site:
                raise ValueError("site must be a non-empty string")
            if not isinstance(params, Mapping):
                raise TypeError("params must be an object")
            kind = DrawKind(str(kind_name))
            checked = validated_params(kind, params)
        except (ValueError, KeyError, TypeError) as exc:
            self.issues.append(DrawIssue(self.step, str(site), "malformed", None, f"{draw!r} ({exc})"))
            return 0
        recorded = self._by_site.get(site)
        if recorded is None:
            self.issues.append(DrawIssue(self.step, site, "unexpected-site", None, f"{kind.value} {checked}",
                                         kind.value))
            return _neutral(kind, checked)
        if site in self.used:
            self.issues.append(DrawIssue(self.step, site, "repeated-site", None, None))
        self.used.add(site)
        self._this_step.append(site)
        if recorded.kind is not kind:
            self.issues.append(DrawIssue(self.step, site, "kind", recorded.kind.value, kind.value))
        elif set(params) != set(recorded.params):  # an extra key is a difference too (validation ignores it)
            self.issues.append(DrawIssue(self.step, site, "params", recorded.params, dict(params), kind.value))
        elif not all(params_equal(checked[k], recorded.params[k], self.tolerance.relative, self.tolerance.absolute)
                     for k in checked):
            self.issues.append(DrawIssue(self.step, site, "params", recorded.params, checked, kind.value))
        return value_to_json(recorded.kind, recorded.value)

    def missing(self) -> list[str]:
        return [d.site for d in self.tape.draws if d.site not in self.used]
