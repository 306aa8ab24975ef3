"""Audit profiles shared by ``dpstream audit --profile`` and ``dpstream conform --profile``.

A :class:`ProfileSpec` fixes, per profile, the sample sizes of the witness search
(:mod:`dpstream.audit.search`) for vectorised samplers (our own counters, thousands of runs per
call), for samplers that run one mechanism at a time (an outside implementation, a child
process) and for the registered cases of ``dpstream audit`` (vectorised, kept small on quick so that
``make test`` stays fast), the parameter sweep for counters, the input families, and the *target excess*: the
search reports ``pass`` only when the smallest excess over the claim it could have certified is at
most ``target_excess`` times the claim, else ``inconclusive``.

``quick`` (the default; ``make demo``, ``make test``) keeps the registered suite within a few
minutes on 2 cores; ``thorough`` (``--full`` is an alias) runs a few minutes per algorithm on 2
cores and certifies, by the black-box search alone, 001-alg10 as printed at T = 16 (true loss 1.25
eps) and every class of mistake listed in docs/audits.md (``tests/audit/test_search_power.py``).

:func:`audit_counter` runs the search on any counter given a sampler per (epsilon, T): the entry
point for counters written outside the project (a factory on our noise, or the seed hook).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass

from dpstream.audit.registry import Profile
from dpstream.audit.sampler import Sampler
from dpstream.audit.search import (
    COUNTER_FAMILIES,
    Alphabet,
    SearchBudget,
    SearchResult,
    Setting,
    counter_space,
    search,
)
from dpstream.claims import Neighbour, PrivacyClaim

__all__ = ["PROFILES", "ProfileSpec", "audit_counter", "counter_settings", "profile_spec"]

COUNTER_ALPHABET = Alphabet()
"""Counter inputs: integers in [0, 1]."""
CounterParams = tuple[float, int]
"""(epsilon, T) of one point of a counter's parameter sweep (rho for zCDP counters)."""


@dataclass(frozen=True)
class ProfileSpec:
    """Sizes and targets of one profile (see the module docstring)."""

    profile: Profile
    vectorised: SearchBudget
    line_by_line: SearchBudget
    registered: SearchBudget
    sweep: tuple[CounterParams, ...]
    families: tuple[str, ...]
    registered_families: tuple[str, ...]
    target_excess: float


PROFILES: dict[Profile, ProfileSpec] = {
    Profile.QUICK: ProfileSpec(
        Profile.QUICK,
        vectorised=SearchBudget(fit=1000, select=1000, holdout=20_000, carried=8),
        line_by_line=SearchBudget(fit=600, select=600, holdout=6000, carried=8),
        registered=SearchBudget(fit=500, select=500, holdout=20_000, carried=8),
        sweep=((1.0, 16), (0.5, 12)),
        families=COUNTER_FAMILIES,
        registered_families=("ones", "round-10"),
        target_excess=1.0,
    ),
    Profile.THOROUGH: ProfileSpec(
        Profile.THOROUGH,
        vectorised=SearchBudget(fit=20_000, select=20_000, holdout=400_000, carried=8),
        line_by_line=SearchBudget(fit=10_000, select=10_000, holdout=400_000, carried=8),
        registered=SearchBudget(fit=20_000, select=20_000, holdout=400_000, carried=8),
        sweep=((1.0, 16), (0.5, 12), (2.0, 32)),
        families=COUNTER_FAMILIES,
        registered_families=COUNTER_FAMILIES,
        target_excess=0.25,
    ),
}
"""The profiles (``Profile.FULL`` is ``Profile.THOROUGH``)."""


def profile_spec(profile: Profile | str) -> ProfileSpec:
    """The spec of a profile given by value (``"quick"``, ``"thorough"``, ``"full"``) or member."""
    return PROFILES[Profile(profile)]


def counter_settings(
    make: Callable[[float, int], Sampler],
    sweep: Sequence[CounterParams],
    claim: Callable[[float, int], PrivacyClaim] | None = None,
) -> list[Setting]:
    """One search setting per (epsilon, T) of ``sweep``; the claim defaults to pure eps-DP under STREAM_ENTRY."""
    def default(eps: float, T: int) -> PrivacyClaim:
        return PrivacyClaim.pure(eps, Neighbour.STREAM_ENTRY, "audited counter")

    claim_of = claim or default
    return [Setting(f"eps={eps:g}, T={T}", make(eps, T), claim_of(eps, T), T) for eps, T in sweep]


def audit_counter(
    make: Callable[[float, int], Sampler],
    *,
    profile: Profile | str = Profile.QUICK,
    level: float = 1e-4,
    seed: int = 0,
    vectorised: bool = False,
    sweep: Sequence[CounterParams] | None = None,
    claim: Callable[[float, int], PrivacyClaim] | None = None,
    alphabet: Alphabet = COUNTER_ALPHABET,
    dimension: int = 1,
    budget: SearchBudget | None = None,
    executor: Executor | None = None,
    progress: Callable[[str], None] | None = None,
) -> SearchResult:
    """Search for a privacy-violation witness in a counter; ``make(epsilon, T)`` returns its sampler.

    ``level`` is the false-alarm probability (a correct counter, or any post-processing of one, gets
    ``violation`` with at most this probability). ``vectorised`` picks the larger budget of samplers that
    return many runs per call. ``sweep`` defaults to the profile's (epsilon below and above 1, T powers
    and non-powers of two); ``budget`` overrides the profile's sample sizes.
    """
    spec = profile_spec(profile)
    settings = counter_settings(make, spec.sweep if sweep is None else sweep, claim)
    space = counter_space(alphabet, dimension=dimension, seed=seed, families=spec.families)
    if budget is None:
        budget = spec.vectorised if vectorised else spec.line_by_line
    return search(settings, space, budget, level=level, seed=seed, target_excess=spec.target_excess,
                  executor=executor, progress=progress)
