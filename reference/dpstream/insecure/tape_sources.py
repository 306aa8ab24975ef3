"""INSECURE: the noise sources built on tapes (format: :mod:`dpstream.tape`, ``docs/tape-format.md``).

* :class:`TapeRecorder` draws from another source and records every draw (site, kind, parameters, noise): a
  tape of a secure run holds its noise, so whoever holds the tape can remove it from the releases.
* :class:`TapeReplay` serves the draws of a tape, keyed by site: its "noise" is known in advance.

Both are for tests, known-answer vectors and conformance checks, never for releases. They forward draws to the
source they wrap through the noise door's public forwarding functions (:func:`dpstream.noise.dispatch`,
:func:`~dpstream.noise.dispatch_add`, :func:`~dpstream.noise.dispatch_add_many`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from types import TracebackType
from typing import Any

from dpstream.noise import BaseNoiseSource, DrawKind, NoiseSource, Params, dispatch, dispatch_add, dispatch_add_many
from dpstream.tape import (
    Draw,
    DuplicateSiteError,
    Tape,
    TapeMismatchError,
    TapeSiteMissingError,
    TapeUnusedSitesError,
    params_equal,
)

__all__ = ["TapeRecorder", "TapeReplay"]


class TapeRecorder(BaseNoiseSource):
    """Draws from ``inner`` and records every draw; ``tape`` returns what was recorded."""

    def __init__(self, inner: NoiseSource, meta: Mapping[str, Any] | None = None) -> None:
        self.inner = inner
        self.meta = dict(meta or {})
        self._draws: list[Draw] = []
        self._sites: set[str] = set()

    @property
    def order_free(self) -> bool:  # type: ignore[override]
        return bool(getattr(self.inner, "order_free", False))

    def _check_new(self, sites: list[str]) -> None:
        if len(set(sites)) != len(sites):
            raise DuplicateSiteError(f"a site appears twice in one batch: {sites!r}")
        for site in sites:
            if site in self._sites:
                raise DuplicateSiteError(f"site {site!r} drawn twice in one run")

    def _draw(self, site: str, kind: DrawKind, params: Params) -> Any:
        self._check_new([site])
        value = dispatch(self.inner, site, kind, params)
        self._sites.add(site)
        self._draws.append(Draw(site, kind, params, value))
        return value

    def _add(self, site: str, kind: DrawKind, params: Params, value: Any) -> tuple[Any, Any]:
        # the tape holds the noise (release - value; for an insecure inner source: the sample itself)
        self._check_new([site])
        release, noise = dispatch_add(self.inner, site, kind, params, value)
        self._sites.add(site)
        self._draws.append(Draw(site, kind, params, noise))
        return release, noise

    def _add_many(self, sites: Sequence[str], kind: DrawKind, params: Params, values: Sequence[Any]
                  ) -> tuple[list[Any], list[Any]]:
        names = list(sites)
        self._check_new(names)
        releases, noises = dispatch_add_many(self.inner, names, kind, params, values)
        self._sites.update(names)
        self._draws.extend(Draw(s, kind, params, z) for s, z in zip(names, noises, strict=True))
        return releases, noises

    @property
    def tape(self) -> Tape:
        return Tape(tuple(self._draws), self.meta)

    def resume(self, draws: Sequence[Draw]) -> None:
        """Continue a recording whose first draws were ``draws`` (a checkpoint's); the sites must be unique."""
        recorded = list(draws)
        sites = {d.site for d in recorded}
        if len(sites) != len(recorded):
            raise DuplicateSiteError("a site appears twice in the draws to resume from")
        self._draws, self._sites = recorded, sites


class TapeReplay(BaseNoiseSource):
    """Replays a :class:`Tape`, keyed by site.

    Float parameters match within ``param_atol + param_rtol * |recorded|`` (default: relative 1e-12, a few
    thousand units in the last place, so that an implementation computing ``2/eps`` in a different but equivalent
    order still matches; a vector's replay uses the vector's ``draw_tolerance``, from the entry's error model);
    ``param_rtol=0.0`` demands bit equality.
    Use as a context manager, or call :meth:`assert_exhausted` at the end of a run.
    Draws are keyed by site, so their order is free (algorithms may batch them: ``dpstream.staged``).
    """

    order_free = True

    def __init__(self, tape: Tape, param_rtol: float = 1e-12, param_atol: float = 0.0) -> None:
        self.tape = tape
        self.param_rtol = param_rtol
        self.param_atol = param_atol
        self._by_site = tape.by_site()
        self._used: set[str] = set()

    def _draw(self, site: str, kind: DrawKind, params: Params) -> Any:
        recorded = self._by_site.get(site)
        if recorded is None:
            raise TapeSiteMissingError(f"site {site!r} ({kind.value}, {params}) is not on the tape")
        if site in self._used:
            raise DuplicateSiteError(f"site {site!r} requested twice")
        if recorded.kind is not kind:
            raise TapeMismatchError(
                f"site {site!r}: requested kind {kind.value!r}, tape has {recorded.kind.value!r}")
        if set(params) != set(recorded.params) or not all(
            params_equal(params[k], recorded.params[k], self.param_rtol, self.param_atol) for k in params
        ):
            raise TapeMismatchError(f"site {site!r}: requested params {params}, tape has {recorded.params}")
        self._used.add(site)
        return recorded.value

    @property
    def used_sites(self) -> frozenset[str]:
        """The sites served so far."""
        return frozenset(self._used)

    def resume(self, used: Iterable[str]) -> None:
        """Continue a replay that has served ``used`` already (a checkpoint's); every site must be on the tape."""
        served = set(used)
        unknown = served - set(self._by_site)
        if unknown:
            raise TapeSiteMissingError(f"sites to resume from are not on the tape: {sorted(unknown)[:5]}")
        self._used = served

    @property
    def unused_sites(self) -> list[str]:
        return [d.site for d in self.tape.draws if d.site not in self._used]

    def assert_exhausted(self) -> None:
        unused = self.unused_sites
        if unused:
            shown = ", ".join(repr(s) for s in unused[:10])
            more = f" and {len(unused) - 10} more" if len(unused) > 10 else ""
            raise TapeUnusedSitesError(f"{len(unused)} tape site(s) never requested: {shown}{more}")

    def __enter__(self) -> TapeReplay:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if exc_type is None:
            self.assert_exhausted()
