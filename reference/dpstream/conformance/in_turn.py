"""The witness search setting by setting, each planned on the time the ones before it left.

The statistical mode plans its search's runs at the program's speed, measured before the search on a few hundred
runs (:func:`dpstream.conformance.statistical.probe_speed`), and leaves a fifth of the time limit for the search's
own work (:func:`~dpstream.conformance.statistical.fit_to_time`). Where the budget has to be scaled down to fit, that
plan can be far off: the search's work grows with its pairs (004-alg2 at thorough: 480 pairs over 4 settings, its
search took 340 s of a 270 s limit at 4070 runs/s against the probe's 7170), and a busy machine slows the program
after the probe. So where the budget is scaled (no measured power is at stake: a scaled search has none) the search
runs one setting at a time: each setting gets an equal share of the time left, planned at the speed the settings
before it achieved (runs per second of the whole search, its own work included), and the false-alarm level / K
(a union bound over the K settings, as the single search splits it). The first violation ends the search.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Executor
from dataclasses import replace
from typing import Any

from dpstream.audit.power_statement import PowerStatement
from dpstream.audit.registry import Profile
from dpstream.audit.sampler import Sampler
from dpstream.audit.search import SearchResult
from dpstream.conformance.statistical import StatisticalPlan, budget_for, fit_to_time, run_search
from dpstream.noise import derived_seed

__all__ = ["merged", "search_in_turn"]


def search_in_turn(plan: StatisticalPlan, sampler: Callable[[Mapping[str, Any]], Sampler], profile: Profile,
                   bulk: bool, *, level: float, seed: int, executor: Executor | None, speed: float, seconds: float,
                   power: PowerStatement | None = None) -> SearchResult:
    """The search of each setting of ``plan`` in turn within ``seconds`` (module docstring), merged; ``speed``: the
    probe's runs per second, the first setting's plan; ``power``: the statement the merged result carries (a
    scaled search's: none)."""
    began = time.perf_counter()
    K = len(plan.settings)
    results: list[SearchResult] = []
    for k in range(K):
        one = StatisticalPlan(plan.entry, plan.settings[k:k + 1], plan.spaces[k:k + 1])
        left = seconds - (time.perf_counter() - began)
        budget, _ = fit_to_time(one, budget_for(one, profile, bulk), speed, max(left, 0.0) / (K - k))
        started = time.perf_counter()
        result = run_search(one, sampler, profile, bulk, level=level / K, seed=derived_seed(seed, "setting", k),
                            executor=executor, budget=budget)
        took = time.perf_counter() - started
        results.append(result)
        if result.verdict == "violation":
            break
        speed = result.trials / max(took, 1e-9)  # the search's own work included
    return merged(results, level, power)


def merged(results: Sequence[SearchResult], level: float, power: PowerStatement | None = None) -> SearchResult:
    """Searches of disjoint settings as one: a violation if any certified one, else inconclusive (``power`` is
    reported, never taken to back a pass); the best held-out event over all (its setting index shifted to the merged
    list of settings); the smallest detectable excess; the runs, pairs and proposed events summed; ``level``: the
    sum of theirs."""
    settings: list[str] = []
    certified = []
    for r in results:
        certified += [replace(c, witness=replace(c.witness, setting=c.witness.setting + len(settings)))
                      for c in r.certified]
        settings += list(r.settings)
    best = max(certified, key=lambda c: c.eps_lb - c.claimed) if certified else None
    violation = any(r.verdict == "violation" for r in results)
    return SearchResult("violation" if violation else "inconclusive", best, tuple(certified),
                        min((r.detectable_excess for r in results), default=math.inf),
                        min((r.target_excess for r in results), default=math.inf), level,
                        sum(r.trials for r in results), sum(r.pairs for r in results),
                        sum(r.proposed for r in results), tuple(settings), results[0].classes if results else (),
                        power)
