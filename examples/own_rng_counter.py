"""Example (docs/audits.md, "Outside implementations"): audit a counter that uses its own RNG.

``OwnRngCounter`` is a Simple counter (001-alg8, g(t) = g(t-1) + f(t) + Lap(1/eps)) written the way an
outside project would write it: its own pseudo-random generator (SplitMix64, with Laplace noise by
inversion), nothing from dpstream. It cannot draw from our NoiseSource, so it is audited through the
**seed hook**: ``SeededFactorySampler(lambda seed: OwnRngCounter(eps, seed))`` builds run i with seed
``derived_seed(audit seed, i)``, so every audit is a deterministic function of its seed and can be
replayed. ``audit_counter`` then searches, model-free, for a witness of a privacy violation over input
families, neighbouring pairs and events. The correct counter gets no violation; a copy that releases the
exact prefix sum whenever it is a positive multiple of 10 is convicted, with its witness.

Run: ``python examples/own_rng_counter.py`` (exit status 0 when the correct counter is not convicted and
the leaky one is). The sample sizes here are smaller than the quick profile's, to keep the example short.
"""

from __future__ import annotations

import math
import sys

from dpstream.audit.profiles import audit_counter
from dpstream.audit.sampler import Sampler, SeededFactorySampler
from dpstream.audit.search import SearchBudget, SearchResult

MASK = (1 << 64) - 1


class SplitMix64:
    """A small 64-bit generator (Steele, Lea & Flood 2014); not cryptographic."""

    def __init__(self, seed: int) -> None:
        self.state = seed & MASK

    def next(self) -> int:
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        return z ^ (z >> 31)

    def laplace_sample(self, scale: float) -> float:
        u = ((self.next() >> 11) + 0.5) / 2.0**53 - 0.5  # uniform on (-1/2, 1/2)
        return -scale * math.copysign(1.0, u) * math.log(1.0 - 2.0 * abs(u))


class OwnRngCounter:
    """Simple counter with its own generator; ``exact_every=k`` adds the leak (exact multiples of k)."""

    def __init__(self, epsilon: float, seed: int, exact_every: int | None = None) -> None:
        self.scale = 1.0 / epsilon
        self.rng = SplitMix64(seed)
        self.exact_every = exact_every
        self.g = 0.0
        self.total = 0.0

    def step(self, x: float) -> float:
        self.total += x
        self.g += x + self.rng.laplace_sample(self.scale)
        if self.exact_every and self.total > 0 and self.total % self.exact_every == 0:
            return self.total
        return self.g


BUDGET = SearchBudget(fit=400, select=400, holdout=4000, carried=8)
LEVEL = 1e-4


def audit(exact_every: int | None) -> SearchResult:
    def make(epsilon: float, T: int) -> Sampler:  # one sampler per (epsilon, T) of the sweep
        return SeededFactorySampler(lambda seed: OwnRngCounter(epsilon, seed, exact_every))

    return audit_counter(make, profile="quick", level=LEVEL, seed=0, sweep=((1.0, 16),), budget=BUDGET)


def main() -> int:
    correct = audit(None)
    print(f"OwnRngCounter: {correct.verdict} (best held-out eps lower bound "
          f"{correct.best.eps_lb if correct.best else float('nan'):.3f} vs eps = 1; false-alarm level {LEVEL:g})")
    leaky = audit(10)
    print(f"OwnRngCounter(exact_every=10): {leaky.verdict}")
    if leaky.best is not None:
        w = leaky.best.witness
        print(f"  witness: {leaky.best.description} on the {w.family} stream, pair {w.label}")
        print(f"  f  = {list(w.f)}\n  f' = {list(w.f_prime)}")
        print(f"  counts {leaky.best.k1}/{leaky.best.n} vs {leaky.best.k0}/{leaky.best.n}: "
              f"eps lower bound {leaky.best.eps_lb:.3f} > 1")
    return 0 if correct.verdict != "violation" and leaky.verdict == "violation" else 1


if __name__ == "__main__":
    sys.exit(main())
