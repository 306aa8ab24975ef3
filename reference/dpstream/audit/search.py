"""Model-free search for a privacy-violation witness, certified on held-out runs.

Nothing here uses a model of the audited mechanism: it only needs a :class:`~dpstream.audit.sampler.Sampler`
per parameter setting, the claim, and a :class:`SearchSpace` (which inputs to try, how to make a
neighbouring input under the claim's relation, which features of a run to look at).

Procedure (docs/audits.md, "The witness search"); every sample below is fresh and seeded from ``seed``:

1. **Candidates.** For every setting (a point of the parameter sweep: epsilon, T, ...), every input
   family (all zeros, all ones, alternating, ...) and every neighbour f' of the family's stream f
   (for counters: one entry moved by 1 at every t, or at the named and random positions for large T),
   sample ``fit + select`` runs on f and on f'.
2. **Fit split.** Turn runs into features (:func:`release_features` for counters: each release, consecutive
   differences, differences of those at every lag; a design's features for the synthesizers) and propose events
   of every class of :mod:`dpstream.audit.proposals` (thresholds, atoms, naive Bayes, linear statistics: the
   space's declared contrasts and learned discriminants, exact relations, pairs of features, a classifier with
   interactions, model-chosen tail thresholds). Each event favours f or f' and, for zCDP, carries a delta.
3. **Select split.** Score every proposed event on fresh runs (approximate lower bound minus claim) and carry
   the ``carried`` best over *everything* (all settings, families, pairs, statistics), plus the ``tail`` best
   tail proposals on the margin their fitted model predicts.
4. **Held-out split.** For each carried event, now fixed, sample ``holdout`` fresh runs on its f and f'
   and compute the exact one-sided Clopper-Pearson bound
   eps_lb = log((CP_lower(k1, n, a/2) - delta) / CP_upper(k0, n, a/2)) with a = level / (events carried).
   **violation** iff some eps_lb exceeds the claimed eps (eps(delta) for zCDP). By Bonferroni over the
   carried events, a mechanism meeting its claim -- and any post-processing of it -- gets a violation
   with probability at most ``level`` (steps 1-3 only choose which events to test).

Streams may hold any JSON values (the synthesizers' batches are objects): they are frozen deeply to be compared
and grouped, and handed back to samplers (and reported in the witness) as JSON. A :class:`Setting` may carry its
own :class:`SearchSpace` when its inputs or features depend on its parameters.

When nothing is certified the verdict is ``pass`` only if the caller hands in a measured power statement for
this search that backs it (:mod:`dpstream.audit.power_statement`: planted leaks of known size certified often
enough), else ``inconclusive``. The result also reports the *detectable excess* of the carried events (the
smallest Delta such that an event with a carried event's held-out frequency p0 on its unfavoured side and ratio
e^(claim + Delta) would be certified with probability >= 1/2 at these sample sizes): what those events could have
seen, which is not a statement about the search.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import numpy.typing as npt
from scipy import stats as _st

from dpstream.audit.blackbox import claimed_eps
from dpstream.audit.events import DECIMALS, Event, Linear, count_events
from dpstream.audit.power_statement import PowerStatement
from dpstream.audit.proposals import EVENT_CLASSES, Proposal, Ranker, exact_relations, propose
from dpstream.audit.registry import CheckKind, CheckResult
from dpstream.audit.sampler import Sampler, run_reduced, run_trials
from dpstream.audit.stats import eps_lower_bound
from dpstream.claims import PrivacyClaim
from dpstream.errors import DPStreamInputError, require_int_at_least
from dpstream.noise import data_rng, derived_seed

__all__ = [
    "COUNTER_FAMILIES",
    "Alphabet",
    "SearchBudget",
    "SearchResult",
    "SearchSpace",
    "Setting",
    "Witness",
    "counter_space",
    "detectable_excess",
    "finite",
    "release_features",
    "search",
    "search_check",
    "search_positions",
]

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]
HOLDOUT_BLOCK = 50_000
"""Held-out runs turned into features at a time (memory stays bounded at 400000 runs)."""


# --------------------------------------------------------------------------------------------- space


@dataclass(frozen=True)
class Setting:
    """One point of the parameter sweep: a sampler of the mechanism built with these parameters.

    ``space``: this setting's own :class:`SearchSpace` when its inputs or features depend on its parameters (a
    synthesizer's dimension, domain, ...); ``None`` uses the space passed to :func:`search`."""

    label: str
    sampler: Sampler
    claim: PrivacyClaim
    horizon: int
    space: SearchSpace | None = None


@dataclass(frozen=True)
class Alphabet:
    """Valid input values of a counter: numbers in [low, high] (integers if ``integer``)."""

    low: float = 0.0
    high: float = 1.0
    integer: bool = True

    def contains(self, x: float) -> bool:
        return self.low <= x <= self.high and (not self.integer or float(x).is_integer())


Stream = list[Any]
Family = Callable[[int], Stream]
NeighbourMaker = Callable[[Stream], list[tuple[str, Stream]]]


@dataclass(frozen=True)
class SearchSpace:
    """What to try: input families (T -> stream), neighbours of a stream, features of the runs.

    ``families[name](T)`` is an input stream of length T; ``neighbours(f)`` lists ``(label, f')`` for
    the claim's neighbour relation (inputs kept valid); ``features(R)`` maps the ``runs x k`` sample to
    a ``runs x q`` feature matrix with ``feature_names(k)`` naming its columns; threshold events are tried
    on the first ``threshold_columns(k)`` columns, atom events on all.
    """

    families: Mapping[str, Family]
    neighbours: NeighbourMaker
    features: Callable[[FloatArray], FloatArray] = field(default=lambda R: release_features(R))
    feature_names: Callable[[int], list[str]] = field(default=lambda k: release_feature_names(k))
    threshold_columns: Callable[[int], int] = field(default=lambda k: 2 * k - 1)
    """How many leading feature columns get threshold events (the rest, e.g. the lagged differences that
    expose reused noise, only atom events); default: the releases and their first differences."""
    statistics: Callable[[Sequence[str]], list[Linear]] = field(default=lambda names: [])
    """Declared linear statistics of the features (given the feature names): where the sensitivity analysis says
    the loss is, e.g. the difference of two released bins (:class:`~dpstream.audit.events.Linear`)."""


def search_positions(T: int, seed: int = 0, every_up_to: int = 32, random_count: int = 8) -> list[int]:
    """Times to change: all of 1..T when T <= ``every_up_to``; else 1, 2, T-1, T, every 2^k and 2^k +- 1,
    and ``random_count`` seeded random times."""
    T = require_int_at_least("T", T, 1)
    if every_up_to >= T:
        return list(range(1, T + 1))
    chosen = {1, 2, T - 1, T}
    power = 1
    while power <= T:
        chosen.update({power - 1, power, power + 1})
        power *= 2
    chosen.update(int(t) for t in data_rng(derived_seed(seed, "positions", T)).integers(1, T + 1, random_count))
    return sorted(t for t in chosen if 1 <= t <= T)


def _entry_neighbours(alphabet: Alphabet, seed: int) -> NeighbourMaker:
    def neighbours(f: Stream) -> list[tuple[str, Stream]]:
        T = len(f)
        out: list[tuple[str, Stream]] = []
        for t in search_positions(T, seed):
            row = f[t - 1]
            coords: list[int | None] = list(range(len(row))) if isinstance(row, list | tuple) else [None]
            for i in coords:
                for delta in (1.0, -1.0):
                    g = [list(r) if isinstance(r, list | tuple) else r for r in f]
                    old: Any = g[t - 1][i] if i is not None else g[t - 1]
                    value = float(old) + delta
                    if not alphabet.contains(value):
                        continue
                    value = int(value) if alphabet.integer else value
                    if i is None:
                        g[t - 1] = value
                    else:
                        g[t - 1][i] = value
                    where = f"t={t}" + (f", i={i}" if i is not None else "")
                    out.append((f"{where} {'+' if delta > 0 else '-'}1", g))
        return out

    return neighbours


COUNTER_FAMILIES = ("zeros", "ones", "alternating", "step", "round-10", "random")


def counter_space(alphabet: Alphabet = Alphabet(), *, dimension: int = 1, seed: int = 0,
                  families: Sequence[str] = COUNTER_FAMILIES) -> SearchSpace:
    """The space for counters (STREAM_ENTRY: one entry moved by at most 1, inputs kept in ``alphabet``).

    Families (values clipped into the alphabet): ``zeros``, ``ones`` (every entry at an end of the
    alphabet, so each change has the largest effect the relation allows), ``alternating``, ``step``
    (zeros then ones), ``round-10`` (ones until the prefix sum reaches 10, then zeros: prefix sums that
    sit on a round number), ``random`` (seeded bits). ``dimension > 1``: each entry is a vector, every
    coordinate of the family's value (d-dimensional counters, 001-sec4.3).
    """
    lo, hi = alphabet.low, alphabet.high
    one = hi if hi < 1 else 1
    zero = lo if lo > 0 else 0

    def vec(values: list[float]) -> Stream:
        cast = [int(v) if alphabet.integer else float(v) for v in values]
        return cast if dimension == 1 else [[v] * dimension for v in cast]

    known: dict[str, Family] = {
        "zeros": lambda T: vec([zero] * T),
        "ones": lambda T: vec([one] * T),
        "alternating": lambda T: vec([one if t % 2 == 0 else zero for t in range(T)]),
        "step": lambda T: vec([zero] * (T // 2) + [one] * (T - T // 2)),
        "round-10": lambda T: vec([one if t < 10 else zero for t in range(T)]),
        "random": lambda T: vec([one if b else zero for b in data_rng(derived_seed(seed, "bits", T))
                                 .integers(0, 2, T)]),
    }
    unknown = [name for name in families if name not in known]
    if unknown:
        raise DPStreamInputError("families", f"must be among {sorted(known)}", unknown)
    return SearchSpace(families={name: known[name] for name in families}, neighbours=_entry_neighbours(alphabet, seed))


def _lags(k: int) -> list[int]:
    if k <= 24:
        return list(range(1, k))
    return sorted({*range(1, 9), *(2**j for j in range(4, k.bit_length()) if 2**j < k)})


def release_features(R: FloatArray) -> FloatArray:
    """Columns: the k releases r_t; the differences d_t = r_t - r_(t-1) (t >= 2); and d_t - d_(t-L) for
    every lag L (all lags for k <= 24, else 1..8 and the powers of two), which are constant exactly when
    a noise value is reused between two steps. Rounded to :data:`DECIMALS` decimals."""
    R = np.nan_to_num(np.asarray(R, dtype=np.float64), nan=0.0, posinf=1e300, neginf=-1e300)
    k = R.shape[1]
    parts = [R]
    if k > 1:
        D = np.diff(R, axis=1, prepend=0.0)
        parts.append(D[:, 1:])
        parts.extend(D[:, L:] - D[:, :-L] for L in _lags(k))
    return np.asarray(np.round(np.concatenate(parts, axis=1), DECIMALS), dtype=np.float64)


def release_feature_names(k: int) -> list[str]:
    names = [f"r_{t}" for t in range(1, k + 1)]
    if k > 1:
        names += [f"d_{t}" for t in range(2, k + 1)]
        for L in _lags(k):
            names += [f"d_{t}-d_{t - L}" for t in range(L + 1, k + 1)]
    return names


# --------------------------------------------------------------------------------------------- witnesses


HISTOGRAM_BINS = 40
"""Bins of the picture of a witness's statistic on the held-out runs (docs/audits.md, "Reports")."""


@dataclass(frozen=True)
class Witness:
    """A fixed event on the features of a run, with the pair of inputs it separates (``favours_f``: P[E | f] is the
    larger), its delta (zCDP), the class that proposed it (``origin``, :data:`dpstream.audit.proposals.EVENT_CLASSES`)
    and ``span``: the range of its first statistic on the fit split (the picture's bins)."""

    setting: int
    family: str
    label: str
    f: tuple[Any, ...]
    f_prime: tuple[Any, ...]
    event: Event
    favours_f: bool
    delta: float = 0.0
    origin: str = "threshold"
    predicted: float = -math.inf
    span: tuple[float, float] = (0.0, 1.0)
    ladder: tuple[float, ...] = ()
    """Deeper thresholds of the same one-sided event, carried with it to the held-out split (:func:`_ladder`)."""

    def statistic(self, F: FloatArray) -> FloatArray:
        return self.event.statistics[0](F)

    def contains(self, F: FloatArray) -> BoolArray:
        return self.event.contains(F)

    def edges(self) -> FloatArray:
        """Bin edges of the picture: :data:`HISTOGRAM_BINS` bins over ``span``, the event's threshold among them."""
        lo, hi = self.span
        c = self.event.thresholds[0]
        lo, hi = min(lo, c), max(hi, c)
        if not hi > lo:
            lo, hi = lo - 0.5, hi + 0.5
        edges = np.linspace(lo, hi, HISTOGRAM_BINS + 1)
        return np.asarray(np.unique(np.append(edges, c)), dtype=np.float64)

    def describe(self, names: Sequence[str]) -> str:
        side = "f" if self.favours_f else "f'"
        return (f"{self.event.describe(names)} favouring {side}" + (f", delta={self.delta:g}" if self.delta else "")
                + f" [{self.origin}]")


@dataclass(frozen=True)
class _Pair:
    setting: int
    family: str
    label: str
    f: tuple[Any, ...]
    f_prime: tuple[Any, ...]


def _span(a: FloatArray, b: FloatArray) -> tuple[float, float]:
    x = np.concatenate([a, b])
    x = x[np.isfinite(x)]
    if x.size == 0:
        return (0.0, 1.0)
    return float(np.quantile(x, 0.001)), float(np.quantile(x, 0.999))


LADDER = (3.0, 10.0, 30.0)
"""Expected held-out hits on the unfavoured side of the deeper thresholds carried with a one-sided event."""


def _tail_quantiles(u: FloatArray, ps: Sequence[float], upper: bool) -> list[float]:
    """Thresholds c with P[u >= c] ~ p (``upper``; else P[u <= c] ~ p): the empirical quantile where at least 5 of the
    values lie beyond it, else an exponential tail fitted to the outer 10% of the values (None when it is flat)."""
    x = np.sort(u if upper else -u)
    n = x.size
    out: list[float] = []
    if n < 20:
        return out
    q = float(np.quantile(x, 0.9))
    excess = float(np.mean(x[x > q] - q)) if np.any(x > q) else 0.0
    for p in ps:
        if p * n >= 5:
            c = float(np.quantile(x, 1.0 - p))
        elif excess > 0:
            c = q + excess * math.log(0.1 / p)
        else:
            continue
        out.append(c if upper else -c)
    return out


def _ladder(p: Proposal, values: tuple[FloatArray, FloatArray], n_hold: int) -> tuple[float, ...]:
    """Deeper thresholds of a one-sided event on one statistic: where the unfavoured side is expected to have
    :data:`LADDER` hits among ``n_hold`` runs (beyond the event's own threshold). A small leak in a noise scale shows
    only that deep (docs/audits.md); each rung is one more event carried, in the Bonferroni count."""
    e = p.event
    if e.kind != "threshold" or len(e.statistics) != 1:
        return ()
    unfavoured = values[1] if p.favours_f else values[0]
    up, c = e.upper[0], e.thresholds[0]
    rungs = _tail_quantiles(unfavoured, [k / n_hold for k in LADDER], up)
    deeper = sorted({round(r, DECIMALS) for r in rungs if (r > c if up else r < c)}, reverse=not up)
    return tuple(deeper)


def _witnesses(pair: _Pair, proposals: Sequence[Proposal], A: FloatArray, B: FloatArray,
               n_hold: int) -> list[Witness]:
    values: dict[Any, tuple[FloatArray, FloatArray]] = {}
    spans: dict[Any, tuple[float, float]] = {}
    out = []
    for p in proposals:
        s = p.event.statistics[0]
        if s not in values:
            values[s] = (s(A), s(B))
            spans[s] = _span(*values[s])
        out.append(Witness(pair.setting, pair.family, pair.label, pair.f, pair.f_prime, p.event, p.favours_f,
                           p.delta, p.origin, p.predicted, spans[s], _ladder(p, values[s], n_hold)))
    return out


def _score(witnesses: Sequence[Witness], A: FloatArray, B: FloatArray, rank: Ranker) -> list[float]:
    """Ranking margin of each fixed event on the select split (with its own delta)."""
    n = A.shape[0]
    events = [w.event for w in witnesses]
    kf, kfp = count_events(events, A), count_events(events, B)
    fav = np.array([w.favours_f for w in witnesses])
    hi, lo = np.where(fav, kf, kfp), np.where(fav, kfp, kf)
    deltas = np.array([w.delta for w in witnesses])
    out = np.full(len(witnesses), -np.inf)
    for d in np.unique(deltas):
        m, _ = rank.margin(hi, lo, n, (float(d),))
        out = np.where(deltas == d, m, out)
    return [float(v) for v in out]


# --------------------------------------------------------------------------------------------- result


@dataclass(frozen=True)
class SearchBudget:
    """Runs per input on the fit and select splits, per input of a carried event on the held-out split, how many
    events are carried to the held-out split on their select-split score, and how many more (``tail``) on the
    margin a fitted model predicts (the ``tail`` class); the Bonferroni factor is the number carried in all."""

    fit: int
    select: int
    holdout: int
    carried: int = 8
    tail: int = 4

    def __post_init__(self) -> None:
        for name in ("fit", "select", "holdout", "carried", "tail"):
            minimum = {"carried": 1, "tail": 0}.get(name, 10)
            require_int_at_least(name, getattr(self, name), minimum)


@dataclass(frozen=True)
class Certified:
    """A carried event's held-out result; ``histogram``: the bin edges of its first statistic and the held-out
    runs per bin on f and on f' (first and last bins: below and above the edges)."""

    witness: Witness
    k1: int
    k0: int
    n: int
    eps_lb: float
    claimed: float
    description: str
    histogram: tuple[tuple[float, ...], tuple[int, ...], tuple[int, ...]] = ((), (), ())

    def to_data(self) -> dict[str, Any]:
        edges, on_f, on_fp = self.histogram
        return {"event": self.description, "class": self.witness.origin,
                "counts": {"favoured": self.k1, "other": self.k0, "runs": self.n},
                "favours": "f" if self.witness.favours_f else "f'", "delta": self.witness.delta,
                "eps_lower_bound": finite(self.eps_lb), "claimed_eps": finite(self.claimed),
                "histogram": {"edges": [finite(e) for e in edges], "f": list(on_f), "f_prime": list(on_fp),
                              "threshold": finite(self.witness.event.thresholds[0]),
                              "upper": self.witness.event.upper[0], "kind": self.witness.event.kind}}


def finite(x: float) -> float | str:
    """A float for a JSON report: itself when finite, else the string "inf", "-inf" or "nan" (JSON has no
    Infinity or NaN; docs/conformance.md, "Reports")."""
    x = float(x)
    if math.isfinite(x):
        return x
    return "nan" if math.isnan(x) else ("inf" if x > 0 else "-inf")


@dataclass(frozen=True)
class SearchResult:
    """Verdict (``violation``, ``pass`` or ``inconclusive``) with the best held-out result and its witness.

    ``pass`` only with a :class:`~dpstream.audit.power_statement.PowerStatement` that backs it (``power``)."""

    verdict: str
    best: Certified | None
    certified: tuple[Certified, ...]
    detectable_excess: float
    target_excess: float
    level: float
    trials: int
    pairs: int
    proposed: int
    settings: tuple[str, ...]
    classes: tuple[str, ...] = EVENT_CLASSES
    power: PowerStatement | None = None

    @property
    def margin(self) -> float:
        return -math.inf if self.best is None else self.best.eps_lb - self.best.claimed

    def detail(self) -> str:
        head = (f"searched {self.pairs} neighbouring pairs over {len(self.settings)} setting(s) "
                f"({'; '.join(self.settings)}), {self.proposed} events proposed (classes: {', '.join(self.classes)}), "
                f"{len(self.certified)} carried to the held-out split, {self.trials} runs; level {self.level:.2g}")
        if self.best is not None:
            b = self.best
            side = "f" if b.witness.favours_f else "f'"
            head += (f". Best held-out: {b.description} on {b.witness.family} stream, {b.witness.label} "
                     f"({side} favoured): {b.k1}/{b.n} vs {b.k0}/{b.n}, eps lower bound {b.eps_lb:.4g} vs claimed "
                     f"{b.claimed:.4g}")
        if self.verdict == "violation":
            return head
        head += f"; smallest excess the carried events could have certified {self.detectable_excess:.3g}"
        power = self.power.describe() if self.power is not None else "no measured power for this search"
        return f"{head}. {self.verdict}: {power}"

    def to_data(self) -> dict[str, Any]:
        data: dict[str, Any] = {"verdict": self.verdict, "detectable_excess": finite(self.detectable_excess),
                                "target_excess": finite(self.target_excess), "level": self.level,
                                "trials": self.trials, "pairs": self.pairs, "settings": list(self.settings),
                                "event_classes": list(self.classes),
                                "power": None if self.power is None else self.power.to_json()}
        if self.best is not None:
            b = self.best
            data.update({"eps_lower_bound": finite(b.eps_lb), "claimed_eps": finite(b.claimed),
                         "event": b.description, "event_class": b.witness.origin,
                         "f": [_jsonable(x) for x in b.witness.f], "f_prime": [_jsonable(x) for x in b.witness.f_prime],
                         "counts": {"favoured": b.k1, "other": b.k0, "runs": b.n}, "family": b.witness.family,
                         "pair": b.witness.label, "setting": self.settings[b.witness.setting],
                         "witness": b.to_data()})
        data["carried"] = [c.to_data() for c in self.certified]
        return data


def _jsonable(x: Any) -> Any:
    if isinstance(x, _FrozenObject):
        return {k: _jsonable(v) for k, v in x}
    if isinstance(x, list | tuple):
        return [_jsonable(v) for v in x]
    if isinstance(x, float | np.floating):
        return finite(float(x))
    return x


def detectable_excess(n: int, p0: float, level: float, claimed: float, delta: float = 0.0) -> float:
    """Smallest Delta with eps_lb(expected counts) > claimed for an event of probability p0 (unfavoured side)
    and p1 = min(1, e^(claimed + Delta) p0 + delta) on the favoured side, n runs each; inf if none <= 20."""
    p0 = max(p0, 1.0 / n)

    def certified(excess: float) -> bool:
        p1 = min(1.0, math.exp(claimed + excess) * p0 + delta)
        return eps_lower_bound(round(n * p1), n, round(n * p0), n, level, delta) > claimed

    if not math.isfinite(claimed) or not certified(20.0):
        return math.inf
    lo, hi = 0.0, 20.0
    for _ in range(40):
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if certified(mid) else (mid, hi)
    return hi


def search(
    settings: Sequence[Setting],
    space: SearchSpace,
    budget: SearchBudget,
    *,
    level: float,
    seed: int,
    target_excess: float,
    executor: Executor | None = None,
    progress: Callable[[str], None] | None = None,
    power: PowerStatement | None = None,
) -> SearchResult:
    """Run the search (module docstring) and return the verdict; the false-alarm probability is <= ``level``.

    ``pass`` needs ``power``, a measured power statement for this search that backs it; otherwise a search that
    certifies nothing says ``inconclusive``."""
    if not settings:
        raise DPStreamInputError("settings", "must contain at least one setting", settings)
    if not 0.0 < level < 1.0:
        raise DPStreamInputError("level", "must lie in (0, 1)", level)
    say = progress or (lambda message: None)
    z = float(_st.norm.isf(level / (2 * (budget.carried + budget.tail))))
    per_input = budget.fit + budget.select
    trials = 0
    proposals: list[tuple[float, Witness]] = []
    n_pairs = 0
    names_by_setting: dict[int, list[str]] = {}
    spaces = [setting.space or space for setting in settings]
    for si, setting in enumerate(settings):
        rank = Ranker(budget.holdout, z, setting.claim)
        sp = spaces[si]
        for family, make in sp.families.items():
            f = make(setting.horizon)
            base_seed = derived_seed(seed, "search", si, family)
            say(f"{setting.label}: {family} stream")
            R = run_trials(setting.sampler, f, per_input, derived_seed(base_seed, "f"), executor)
            trials += per_input
            FA = sp.features(R)
            names = names_by_setting.setdefault(si, sp.feature_names(R.shape[1]))
            A_fit, A_sel = FA[:budget.fit], FA[budget.fit:]
            relations = [r for r in exact_relations(A_fit) if not np.any(r(A_sel))]
            contrasts = sp.statistics(names)
            for label, g in sp.neighbours(f):
                n_pairs += 1
                Rp = run_trials(setting.sampler, g, per_input, derived_seed(base_seed, "f'", label), executor)
                trials += per_input
                FB = sp.features(Rp)
                pair = _Pair(si, family, label, _freeze(f), _freeze(g))
                B_fit = FB[:budget.fit]
                found = propose(A_fit, B_fit, rank, threshold_columns=sp.threshold_columns(R.shape[1]),
                                contrasts=contrasts, relations=relations)
                ws = _witnesses(pair, found, A_fit, B_fit, budget.holdout)
                scores = _score(ws, A_sel, FB[budget.fit:], rank)
                proposals.extend(zip(scores, ws, strict=True))
    if not proposals:
        raise DPStreamInputError("space", "gave no neighbouring pair to test", [list(sp.families) for sp in spaces])
    chosen = _carry(proposals, budget)
    say(f"held-out split: {len(chosen)} events")
    a = level / len(chosen)
    n = budget.holdout
    counts: dict[tuple[int, int], tuple[int, npt.NDArray[np.int64]]] = {}
    inputs_of: dict[tuple[int, tuple[Any, ...]], list[tuple[int, int]]] = {}
    for i, w in enumerate(chosen):
        for side, inputs in enumerate((w.f, w.f_prime)):
            inputs_of.setdefault((w.setting, inputs), []).append((i, side))
    for (si, inputs), users in inputs_of.items():
        # each chunk of runs is sampled and counted where it runs (a worker sends back counts, not rows)
        counter = _EventCounter(spaces[si].features, tuple(chosen[i] for i, _ in users))
        hits = run_reduced(settings[si].sampler, _thaw(inputs), n, derived_seed(seed, "holdout", si, repr(inputs)),
                           counter, executor)
        trials += n
        for (i, side), k, hist in zip(users, *counter.split(hits), strict=True):
            counts[(i, side)] = (int(k), hist)
    results: list[Certified] = []
    for i, w in enumerate(chosen):
        (k_f, h_f), (k_fp, h_fp) = counts[(i, 0)], counts[(i, 1)]
        k1, k0 = (k_f, k_fp) if w.favours_f else (k_fp, k_f)
        lb = eps_lower_bound(k1, n, k0, n, a, w.delta)
        histogram = (tuple(float(e) for e in w.edges()), tuple(int(x) for x in h_f), tuple(int(x) for x in h_fp))
        results.append(Certified(w, k1, k0, n, lb, claimed_eps(settings[w.setting].claim, w.delta),
                                 w.describe(names_by_setting[w.setting]), histogram))
    best = max(results, key=lambda c: c.eps_lb - c.claimed) if results else None
    violation = any(c.eps_lb > c.claimed for c in results)
    excess = min((detectable_excess(c.n, c.k0 / c.n, a, c.claimed, c.witness.delta) for c in results),
                 default=math.inf)
    target = min(target_excess * c.claimed for c in results) if results else math.inf
    backed = power is not None and power.backs_pass
    verdict = "violation" if violation else ("pass" if backed else "inconclusive")
    return SearchResult(verdict, best, tuple(results), excess, target, level, trials, n_pairs, len(proposals),
                        tuple(s.label for s in settings), EVENT_CLASSES, power)


def _carry(proposals: Sequence[tuple[float, Witness]], budget: SearchBudget) -> list[Witness]:
    """The events carried to the held-out split: the ``carried`` best on their select-split score and the ``tail``
    best on their predicted margin (the ``tail`` class), each taken in turn from every setting's ranking."""
    ordinary = sorted(((s, w) for s, w in proposals if w.origin != "tail"), key=lambda p: -p[0])
    tails = sorted(((w.predicted, w) for _, w in proposals if w.origin == "tail"), key=lambda p: -p[0])
    chosen = [w for _, w in _distinct(ordinary, budget.carried)]
    seen = {_key(w) for w in chosen}
    chosen += [w for _, w in _distinct([p for p in tails if _key(p[1]) not in seen], budget.tail)]
    rungs = [replace(w, event=replace(w.event, thresholds=(c,)), ladder=()) for w in chosen for c in w.ladder]
    return chosen + [w for w in rungs if _key(w) not in seen]


def _key(w: Witness) -> tuple[Any, ...]:
    return (w.setting, w.f, w.f_prime, w.event.key(), w.favours_f, w.delta)


@dataclass(frozen=True)
class _EventCounter:
    """How many runs each fixed event contains, and the histogram of its first statistic (:meth:`Witness.edges`),
    from a chunk of release rows (features block by block: bounded memory). A value, so that
    :func:`~dpstream.audit.sampler.run_reduced` can send it to the workers; its output is one integer array (the
    counts, then every histogram), which :meth:`split` takes apart."""

    features: Callable[[FloatArray], FloatArray]
    events: tuple[Witness, ...]

    def __call__(self, R: FloatArray) -> npt.NDArray[np.int64]:
        sizes = [w.edges().size + 1 for w in self.events]
        out = np.zeros(len(self.events) + sum(sizes), dtype=np.int64)
        for start in range(0, R.shape[0], HOLDOUT_BLOCK):
            F = self.features(R[start:start + HOLDOUT_BLOCK])
            out[:len(self.events)] += count_events([w.event for w in self.events], F)
            at = len(self.events)
            for w, size in zip(self.events, sizes, strict=True):
                x = w.statistic(F)
                out[at:at + size] += np.bincount(np.searchsorted(w.edges(), x, side="right"), minlength=size)[:size]
                at += size
        return out

    def split(self, total: npt.NDArray[np.int64]) -> tuple[list[int], list[npt.NDArray[np.int64]]]:
        counts = [int(k) for k in total[:len(self.events)]]
        hists, at = [], len(self.events)
        for w in self.events:
            size = w.edges().size + 1
            hists.append(np.asarray(total[at:at + size], dtype=np.int64))
            at += size
        return counts, hists


def _distinct(ranked: Sequence[tuple[float, Witness]], count: int) -> list[tuple[float, Witness]]:
    """The ``count`` best distinct events, taken in turn from each setting's ranking (round robin).

    Settings have different claims, so their margins are not comparable on the small select split: a vacuous
    event of one setting (both frequencies near 1, margin near minus its small claim) can outrank a strong
    one of another (a large likelihood ratio measured on few hits). Taking each setting's best in turn gives
    every setting a share of the held-out stage; the multiplicity correction is over the events carried,
    whoever carries them."""
    per_setting: dict[int, list[tuple[float, Witness]]] = {}
    seen: set[tuple[Any, ...]] = set()
    for score, w in ranked:
        key = _key(w)
        if key not in seen:
            seen.add(key)
            per_setting.setdefault(w.setting, []).append((score, w))
    queues = [per_setting[k] for k in sorted(per_setting)]
    out: list[tuple[float, Witness]] = []
    depth = 0
    while len(out) < count and any(depth < len(q) for q in queues):
        for q in queues:
            if depth < len(q) and len(out) < count:
                out.append(q[depth])
        depth += 1
    return out


class _FrozenObject(tuple[tuple[str, Any], ...]):
    """A JSON object inside a frozen stream: its (key, frozen value) items, sorted by key."""

    __slots__ = ()


def _freeze(value: Any) -> Any:
    """A stream (or any JSON value) made hashable: lists to tuples, objects to :class:`_FrozenObject`, deeply."""
    if isinstance(value, Mapping):
        return _FrozenObject((str(k), _freeze(v)) for k, v in sorted(value.items()))
    if isinstance(value, list | tuple):
        return tuple(_freeze(x) for x in value)
    return value


def _thaw(value: Any) -> Any:
    """The inverse of :func:`_freeze` (tuples back to lists, frozen objects back to dicts)."""
    if isinstance(value, _FrozenObject):
        return {k: _thaw(v) for k, v in value}
    if isinstance(value, tuple):
        return [_thaw(x) for x in value]
    return value


def search_check(result: SearchResult) -> CheckResult:
    """The search as an audit check: failed on ``violation``, informational (None) when ``inconclusive``."""
    passed = {"violation": False, "pass": True, "inconclusive": None}[result.verdict]
    value = None if result.best is None or not math.isfinite(result.best.eps_lb) else result.best.eps_lb
    bound = None if result.best is None else result.best.claimed
    return CheckResult(CheckKind.SEARCH, passed, value, bound, f"{result.verdict}: {result.detail()}",
                       result.to_data())
