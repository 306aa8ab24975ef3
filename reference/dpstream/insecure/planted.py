"""INSECURE, by design: leaks of known size planted into any algorithm through its noise source.

The statistical audits state their power by planting leaks into the reference and counting how often the search, as
it is run, certifies them (:mod:`dpstream.audit.power`, docs/audits.md "Power"). A :class:`PlantedNoise` wraps the
noise source of ONE run and changes its privacy-relevant (additive) draws in one of the ways an implementation gets
them wrong:

* ``scale/c``: every additive draw with its scale divided by c (Laplace and discrete Laplace ``scale / c``, discrete
  Gaussian ``sigma2 / c^2``: the standard deviation divided by c). A pure eps-DP Laplace mechanism then loses c * eps
  (excess (c - 1) * eps); a rho-zCDP Gaussian one c^2 * rho;
* ``shared``: the second additive draw of the run reuses the noise of the first (one draw shared by two sites: each
  release keeps its law, their difference is exact);
* ``noiseless``: the first additive draw of the run adds no noise (one count released exactly);
* ``score+d``: every exponential-mechanism draw sees its first candidate's score off by d (a score computed one step
  off: a known-answer or differential check must convict it; the mechanism's law changes by a factor up to
  exp(eps d / (2 Delta)) on that candidate);
* ``em*c``: every exponential-mechanism draw with its epsilon multiplied by c (a selection that spends c times its
  share: its log-ratio grows up to c-fold; with ``scale/c`` the two halves of a select-measure-fit round).

``sites`` (a regular expression; empty: every draw) limits a leak to the draws whose site matches it: ``scale/c``,
``em*c`` and ``score+d`` change only those (``scale/2:L6``: one level of a synthesizer under-noised, the others
as they should be), ``shared`` and ``noiseless`` count only those as first and second, so that the leak lands on a
count that is released (an entry's catalog names it: ``StatisticalSpec.planted``). On the command line
``LEAK:<regex>``.

Other non-additive draws (post-processing) are passed through unchanged. A fresh wrapper per run: "first" and
"second" are counted from its creation. ``dpstream serve --plant LEAK`` serves the reference with a planted leak in
every mode (in tape mode the changed request is what the known-answer and differential checks see).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from dpstream.errors import DPStreamInputError
from dpstream.noise import BaseNoiseSource, DrawKind, NoiseSource, Params, dispatch, dispatch_add

__all__ = ["PLANTED_LEAKS", "PlantedLeak", "PlantedNoise"]


@dataclass(frozen=True)
class PlantedLeak:
    """One planted mistake: ``kind`` is ``scale``, ``shared``, ``noiseless`` or ``score``; ``factor`` the divisor of
    ``scale`` or the shift of ``score``."""

    kind: str
    """``scale``, ``shared``, ``noiseless``, ``score`` or ``em``."""
    factor: float = 1.0
    sites: str = ""
    """Only additive draws at sites matching this regular expression count as first and second (empty: all)."""

    def __post_init__(self) -> None:
        if self.kind not in ("scale", "shared", "noiseless", "score", "em"):
            raise DPStreamInputError("leak", "must be scale/<c>, em*<c>, shared, noiseless or score+<d>", self.kind)
        if self.kind == "score" and not (math.isfinite(self.factor) and self.factor != 0.0):
            raise DPStreamInputError("leak", "a score shift d must be a finite number other than 0", self.factor)
        if self.kind in ("scale", "em") and not (math.isfinite(self.factor) and self.factor > 1.0):
            raise DPStreamInputError("leak", f"the factor c of {self.kind} must be a finite number > 1", self.factor)
        try:
            re.compile(self.sites)
        except re.error as exc:
            raise DPStreamInputError("leak", f"the site pattern is not a regular expression ({exc})",
                                     self.sites) from None

    @property
    def name(self) -> str:
        """The leak as ``--plant`` takes it (``parse`` reads it back)."""
        if self.kind == "score":
            head = f"score+{self.factor:g}"
        elif self.kind == "em":
            head = f"em*{self.factor:g}"
        else:
            head = f"scale/{self.factor:g}" if self.kind == "scale" else self.kind
        return f"{head}:{self.sites}" if self.sites else head

    def matches(self, site: str) -> bool:
        """Whether the leak touches the draw at ``site`` (module docstring)."""
        return not self.sites or re.search(self.sites, site) is not None

    def at(self, sites: str | None) -> PlantedLeak:
        """The same leak, counting only draws at sites matching ``sites`` (None: unchanged)."""
        return self if sites is None else PlantedLeak(self.kind, self.factor, sites)

    @classmethod
    def parse(cls, text: str) -> PlantedLeak:
        """``scale/3``, ``shared``, ``noiseless`` or ``score+1``, optionally followed by ``:<regex>`` (the sites that
        count)."""
        text, _, sites = text.partition(":")
        if text in ("shared", "noiseless"):
            return cls(text, 1.0, sites)
        if text.startswith("em*"):
            try:
                return cls("em", float(text[len("em*"):]), sites)
            except ValueError:
                raise DPStreamInputError("leak", "em*<c> needs a number c > 1", text) from None
        if text.startswith("score+"):
            try:
                return cls("score", float(text[len("score+"):]), sites)
            except ValueError:
                raise DPStreamInputError("leak", "score+<d> needs a number d", text) from None
        head, _, divisor = text.partition("/")
        if head != "scale" or not divisor:
            raise DPStreamInputError("leak", "must be scale/<c>, em*<c>, shared, noiseless or score+<d>", text)
        try:
            factor = float(divisor)
        except ValueError:
            raise DPStreamInputError("leak", "scale/<c> needs a number c > 1", text) from None
        return cls("scale", factor, sites)

    def describe(self) -> str:
        text = self._described()
        return text if not self.sites else f"{text}, at the sites matching {self.sites!r}"

    def _described(self) -> str:
        if self.kind == "scale":
            return f"every noise scale divided by {self.factor:g}"
        if self.kind == "shared":
            return "one draw shared by two sites (the second additive draw reuses the first's noise)"
        if self.kind == "score":
            return f"every exponential mechanism's first score off by {self.factor:g}"
        if self.kind == "em":
            return f"every exponential mechanism's epsilon multiplied by {self.factor:g}"
        return "one count left without noise (the first additive draw)"


PLANTED_LEAKS: tuple[PlantedLeak, ...] = (
    PlantedLeak("scale", 1.5), PlantedLeak("scale", 2.0), PlantedLeak("scale", 3.0), PlantedLeak("scale", 4.0),
    PlantedLeak("shared"), PlantedLeak("noiseless"))
"""The leak classes the power of the statistical search is calibrated against (docs/audits.md, "Power")."""


def _zero(kind: DrawKind) -> Any:
    return 0.0 if kind is DrawKind.LAPLACE else 0


class PlantedNoise(BaseNoiseSource):
    """INSECURE: ``inner`` with ``leak`` planted into the additive draws of one run (module docstring)."""

    def __init__(self, inner: NoiseSource, leak: PlantedLeak) -> None:
        self.inner = inner
        self.leak = leak
        self._additive = 0
        self._first: tuple[DrawKind, Any] | None = None

    @property
    def order_free(self) -> bool:  # type: ignore[override]
        return False  # "the first draw" depends on the order

    def _draw(self, site: str, kind: DrawKind, params: Params) -> Any:
        if kind is DrawKind.EXPONENTIAL_MECHANISM and self.leak.matches(site):
            if self.leak.kind == "score":
                scores = [float(v) for v in params["scores"]]
                params = {**params, "scores": [scores[0] + self.leak.factor, *scores[1:]]}
            if self.leak.kind == "em":
                params = {**params, "epsilon": float(params["epsilon"]) * self.leak.factor}
        return dispatch(self.inner, site, kind, params)

    def _add(self, site: str, kind: DrawKind, params: Params, value: Any) -> tuple[Any, Any]:
        leak = self.leak
        counted = leak.matches(site)
        if counted:
            self._additive += 1
        if counted and leak.kind == "scale":
            if kind is DrawKind.DISCRETE_GAUSSIAN:
                changed: Params = {"sigma2": params["sigma2"] / leak.factor**2}
            else:
                changed = {"scale": params["scale"] / leak.factor}
            return dispatch_add(self.inner, site, kind, changed, value)
        if counted and leak.kind == "noiseless" and self._additive == 1:
            return value, _zero(kind)
        if counted and leak.kind == "shared" and self._additive == 2 and self._first is not None \
                and self._first[0] is kind:
            noise = self._first[1]
            return value + noise, noise
        release, noise = dispatch_add(self.inner, site, kind, params, value)
        if counted and self._additive == 1:
            self._first = (kind, noise)
        return release, noise

    def _add_many(self, sites: Sequence[str], kind: DrawKind, params: Params, values: Sequence[Any]
                  ) -> tuple[list[Any], list[Any]]:
        releases, noises = [], []
        for site, value in zip(sites, values, strict=True):
            release, noise = self._add(site, kind, params, value)
            releases.append(release)
            noises.append(noise)
        return releases, noises
