"""The laws of the noise door's draw kinds, as probability integral transforms (PIT), and tests of reported draws.

A transcript reports, for every draw, its site, kind, parameters and value (docs/conformance.md, "Transcript mode").
If each value has the stated law given everything drawn before it, the (randomised) PIT u = F(x-) + V (F(x) - F(x-))
of every draw, with V uniform and independent, is uniform on (0, 1) and the u's of one run are independent (the
Rosenblatt transform); so are those of different runs. :func:`pit` computes it for every kind (the discrete kinds
randomised with the harness's own seeded generator: post-processing of the report, no privacy matter), and
:func:`law_findings` tests a batch of runs:

* per group (kind and parameters) of draws: Kolmogorov-Smirnov against U(0, 1), and a two-sided binomial test of
  the count in the outer tails (u < 0.005 or u > 0.995): power where a wrong scale shows most;
* per site seen in enough runs: Kolmogorov-Smirnov, and a draw that never varies (every run the same value);
* values of continuous kinds reported twice (one draw reused between sites or runs: probability 0 under the law,
  about N^2 2^-53 in floating point for N draws);
* pairs of sites seen together in enough runs: correlation of their normal scores (Fisher's z), and consecutive
  runs at the same site (a generator reseeded between runs).

Every test has a p-value; the caller's level is shared among them (Bonferroni), so a program whose draws follow the
stated laws gets a finding with probability at most the level.
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import numpy as np
import numpy.typing as npt

from dpstream.lazy import LazyModule
from dpstream.noise import DrawKind, data_rng, em_log_weights
from dpstream.tape import Draw

_st = LazyModule("scipy.stats")

__all__ = ["LawFinding", "law_findings", "pit", "selection_moments"]

FloatArray = npt.NDArray[np.float64]
TAIL = 0.005
MIN_GROUP = 20
MIN_SITE = 25
MAX_SITES = 64
"""Sites (the most frequent) whose pairs are tested for correlation."""
CONTINUOUS = (DrawKind.LAPLACE, DrawKind.UNIFORM_BOX)
SCALAR = (DrawKind.LAPLACE, DrawKind.DISCRETE_LAPLACE, DrawKind.DISCRETE_GAUSSIAN, DrawKind.EXPONENTIAL_MECHANISM,
          DrawKind.COIN)


def _laplace_cdf(x: float, b: float) -> float:
    return 0.5 * math.exp(x / b) if x < 0 else 1.0 - 0.5 * math.exp(-x / b)


def _discrete_laplace_cdf(z: int, scale: float) -> float:
    p = math.exp(-1.0 / scale)
    return p ** (-z) / (1 + p) if z < 0 else 1.0 - p ** (z + 1) / (1 + p)


@cache
def _gaussian_table(sigma2: float) -> tuple[int, tuple[float, ...]]:
    """(lowest z, CDF at lowest z ..) of the discrete Gaussian, enumerated over |z| <= 14 sigma + 2."""
    sigma = math.sqrt(sigma2)
    top = math.ceil(14 * sigma) + 2
    z = np.arange(-top, top + 1)
    w = np.exp(-(z.astype(np.float64) ** 2) / (2 * sigma2))
    cdf = np.cumsum(w) / w.sum()
    return -top, tuple(float(c) for c in cdf)


def _discrete_gaussian_cdf(z: int, sigma2: float) -> float:
    if sigma2 > 2500.0:  # sigma > 50: the normal law with continuity correction, off by < e^-(2 pi^2 sigma^2)
        return float(_st.norm.cdf((z + 0.5) / math.sqrt(sigma2)))
    low, table = _gaussian_table(sigma2)
    if z < low:
        return 0.0
    return table[min(z - low, len(table) - 1)]


def pit(draw: Draw, v: FloatArray) -> list[float]:
    """The PIT values of one draw (one per number it holds: a choice gives k, a uniform box count x d); ``v`` are
    uniforms for the randomisation of the discrete kinds (as many as the draw needs; see :func:`randomisers`)."""
    kind, p, x = draw.kind, draw.params, draw.value
    if kind is DrawKind.LAPLACE:
        return [_laplace_cdf(float(x), float(p["scale"]))]
    if kind is DrawKind.DISCRETE_LAPLACE:
        hi, lo = _discrete_laplace_cdf(int(x), float(p["scale"])), _discrete_laplace_cdf(int(x) - 1, float(p["scale"]))
        return [lo + float(v[0]) * (hi - lo)]
    if kind is DrawKind.DISCRETE_GAUSSIAN:
        hi = _discrete_gaussian_cdf(int(x), float(p["sigma2"]))
        lo = _discrete_gaussian_cdf(int(x) - 1, float(p["sigma2"]))
        return [lo + float(v[0]) * (hi - lo)]
    if kind is DrawKind.EXPONENTIAL_MECHANISM:
        logw = em_log_weights(p)
        w = np.exp(logw - logw.max())
        cdf = np.cumsum(w) / w.sum()
        i = int(x)
        lo = float(cdf[i - 1]) if i > 0 else 0.0
        return [lo + float(v[0]) * (float(cdf[i]) - lo)]
    if kind is DrawKind.COIN:
        return [0.5 * float(v[0]) + (0.5 if bool(x) else 0.0)]
    if kind is DrawKind.CHOICE:
        n = int(p["n"])
        return [] if int(p["k"]) in (0, n) else [(int(i) + float(u)) / n for i, u in zip(x, v, strict=False)]
    if kind is DrawKind.UNIFORM_BOX:
        low, high = np.asarray(p["low"], dtype=np.float64), np.asarray(p["high"], dtype=np.float64)
        rows = np.asarray(x, dtype=np.float64).reshape(-1, low.size)
        return [float(u) for u in ((rows - low) / (high - low)).ravel()]
    raise AssertionError(kind)  # pragma: no cover


def top_mass(draw: Draw) -> float:
    """The largest probability the law of ``draw`` puts on one value (0 for the continuous kinds): the chance that
    n draws of a site agree is at most its (n-1)-th power."""
    kind, p = draw.kind, draw.params
    if kind is DrawKind.DISCRETE_LAPLACE:
        q = math.exp(-1.0 / float(p["scale"]))
        return (1 - q) / (1 + q)
    if kind is DrawKind.DISCRETE_GAUSSIAN:
        return _discrete_gaussian_cdf(0, float(p["sigma2"])) - _discrete_gaussian_cdf(-1, float(p["sigma2"]))
    if kind is DrawKind.EXPONENTIAL_MECHANISM:
        logw = em_log_weights(p)
        w = np.exp(logw - logw.max())
        return float(w.max() / w.sum())
    if kind is DrawKind.COIN:
        return 0.5
    return 0.0


def randomisers(draw: Draw) -> int:
    """How many uniforms :func:`pit` needs for ``draw``."""
    if draw.kind is DrawKind.CHOICE:
        return int(draw.params["k"])
    return 0 if draw.kind in CONTINUOUS else 1


def _group(draw: Draw) -> str:
    if draw.kind in (DrawKind.LAPLACE, DrawKind.DISCRETE_LAPLACE, DrawKind.DISCRETE_GAUSSIAN):
        return f"{draw.kind.value} {', '.join(f'{k}={v:.12g}' for k, v in sorted(draw.params.items()))}"
    return draw.kind.value


@dataclass(frozen=True)
class LawFinding:
    """One failed test: ``test`` names it, ``sites`` the sites it points at (the first is where to aim a search),
    ``p`` its p-value, ``what`` one line for people."""

    test: str
    sites: tuple[str, ...]
    p: float
    what: str
    kind: str = ""
    """For the search it points at: ``scale`` (a law test), ``constant``, ``reused`` (two sites, one value)."""


@dataclass
class _Runs:
    u: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    site_u: dict[str, dict[int, float]] = field(default_factory=lambda: defaultdict(dict))
    site_raw: dict[str, dict[int, Any]] = field(default_factory=lambda: defaultdict(dict))
    values: dict[float, list[tuple[int, str]]] = field(default_factory=lambda: defaultdict(list))
    groups_of_site: dict[str, str] = field(default_factory=dict)
    top_mass: dict[str, float] = field(default_factory=dict)
    kind_of_site: dict[str, DrawKind] = field(default_factory=dict)


def _collect(runs: Sequence[Sequence[Draw]], seed: int) -> _Runs:
    gen = data_rng(seed)
    out = _Runs()
    for r, draws in enumerate(runs):
        for d in draws:
            u = pit(d, gen.random(randomisers(d)))
            group = _group(d)
            out.u[group].extend(u)
            out.groups_of_site[d.site] = group
            out.kind_of_site[d.site] = d.kind
            if d.kind in SCALAR and u:
                out.site_u[d.site][r] = u[0]
                out.site_raw[d.site][r] = d.value
                out.top_mass[d.site] = max(out.top_mass.get(d.site, 0.0), top_mass(d))
            if d.kind is DrawKind.LAPLACE:
                out.values[float(d.value)].append((r, d.site))
            elif d.kind is DrawKind.UNIFORM_BOX:
                for x in np.asarray(d.value, dtype=np.float64).ravel():
                    out.values[float(x)].append((r, d.site))
    return out


def _selection_group(d: Draw) -> str:
    """An exponential mechanism's group: its stated parameters without its scores (each draw has its own)."""
    return f"{d.kind.value} {{{', '.join(f'{k}: {v:g}' for k, v in sorted(d.params.items()) if k != 'scores')}}}"


def selection_moments(draws: Sequence[Draw], eps: float) -> tuple[float, float]:
    """Exponential mechanisms (each with its own scores) at epsilon ``eps``: the derivative in epsilon of the indices'
    log-likelihood (the sum over draws of u_taken - E u, u the log-weights per unit of epsilon) and its variance
    (the Fisher information, the sum of Var u)."""
    slope = info = 0.0
    for d in draws:
        u = np.asarray(em_log_weights({**d.params, "epsilon": 1.0}), dtype=np.float64)
        w = eps * u
        p = np.exp(w - float(np.max(w)))
        p /= float(np.sum(p))
        mean = float(p @ u)
        slope += float(u[int(d.value)]) - mean
        info += float(p @ (u - mean) ** 2)
    return slope, info


def _selection_scores(runs: Sequence[Sequence[Draw]]) -> dict[str, tuple[float, float, int, set[str]]]:
    """Per group of exponential mechanisms: the score test of their epsilon, :func:`selection_moments` at the stated
    epsilon, with the number of draws and their sites. The locally most powerful test of the stated epsilon against
    a larger one: where the scores differ, indices that favour the high scores more than stated (an epsilon above
    the stated one) move the sum by about its share per draw, which a test of the index's law alone
    (Kolmogorov-Smirnov of the PIT) sees only at a few times the runs."""
    groups: dict[str, list[Draw]] = {}
    for draws in runs:
        for d in draws:
            if d.kind is DrawKind.EXPONENTIAL_MECHANISM:
                groups.setdefault(_selection_group(d), []).append(d)
    return {group: (*selection_moments(ds, float(ds[0].params["epsilon"])), len(ds), {d.site for d in ds})
            for group, ds in groups.items()}


def _tail_p(u: FloatArray) -> float:
    k = int(np.sum((u < TAIL) | (u > 1 - TAIL)))
    return float(_st.binomtest(k, u.size, 2 * TAIL).pvalue)


def _normal(u: FloatArray) -> FloatArray:
    return np.asarray(_st.norm.ppf(np.clip(u, 1e-300, 1 - 1e-16)), dtype=np.float64)


def law_findings(runs: Sequence[Sequence[Draw]], level: float, seed: int) -> tuple[list[LawFinding], int]:
    """The failed tests over the draws of ``runs`` (one list of draws per run), each at ``level`` / (number of
    tests); returns the findings, worst first, and the number of tests made."""
    data = _collect(runs, seed)
    tests: list[tuple[str, tuple[str, ...], float, str, str]] = []
    sites_of: dict[str, list[str]] = defaultdict(list)
    for site, group in data.groups_of_site.items():
        sites_of[group].append(site)
    for group, values in data.u.items():
        u = np.asarray(values)
        if u.size < MIN_GROUP:
            continue
        where = tuple(sorted(sites_of[group]))[:5]
        tests.append(("law", where, float(_st.kstest(u, "uniform").pvalue),
                      f"{u.size} reported {group} draws do not follow the stated law (Kolmogorov-Smirnov)", "scale"))
        tests.append(("tails", where, _tail_p(u),
                      f"{u.size} reported {group} draws: {int(np.sum((u < TAIL) | (u > 1 - TAIL)))} in the outer "
                      f"{2 * TAIL:.0%} tails, expected {2 * TAIL * u.size:.1f}", "scale"))
    for group, (slope, info, n, sites) in _selection_scores(runs).items():
        if n >= MIN_GROUP and info > 0:
            z = slope / math.sqrt(info)
            tests.append(("selection", tuple(sorted(sites))[:5],
                          float(2 * _st.norm.sf(abs(z))),
                          f"{n} reported {group} choices favour the high scores {'more' if z > 0 else 'less'} than "
                          f"the stated epsilon does (score test, z = {z:.2f})", "scale"))
    frequent = sorted((s for s, by_run in data.site_u.items() if len(by_run) >= MIN_SITE),
                      key=lambda s: -len(data.site_u[s]))
    for site in frequent:
        by_run = data.site_u[site]
        u = np.asarray(list(by_run.values()))
        raw = list(data.site_raw[site].values())
        if all(x == raw[0] for x in raw):
            tests.append(("constant", (site,), data.top_mass[site] ** (len(raw) - 1),
                          f"site {site!r} reported the same value {raw[0]!r} in all {len(raw)} runs", "constant"))
            continue
        tests.append(("site law", (site,), float(_st.kstest(u, "uniform").pvalue),
                      f"site {site!r}: {u.size} reported values do not follow the stated law", "scale"))
    reused: dict[tuple[str, str], int] = defaultdict(int)
    for hits in data.values.values():
        if len(hits) > 1:
            for (_, s1), (_, s2) in itertools.pairwise(hits):
                reused[(s1, s2)] += 1
    for (s1, s2), count in sorted(reused.items(), key=lambda kv: -kv[1])[:5]:
        same = "the same site in two runs" if s1 == s2 else f"sites {s1!r} and {s2!r}"
        tests.append(("reused", (s1, s2), 0.0, f"{count} value(s) reported twice: {same} (one draw reused)", "reused"))
    if not reused:
        tests.append(("reused", (), 1.0, "", ""))
    top = frequent[:MAX_SITES]
    for i, a in enumerate(top):
        for b in top[i + 1:]:
            common = sorted(set(data.site_u[a]) & set(data.site_u[b]))
            if len(common) < MIN_SITE:
                continue
            za = _normal(np.asarray([data.site_u[a][r] for r in common]))
            zb = _normal(np.asarray([data.site_u[b][r] for r in common]))
            r = float(np.corrcoef(za, zb)[0, 1]) if za.std() > 0 and zb.std() > 0 else 0.0
            z = math.atanh(min(max(r, -0.999999), 0.999999)) * math.sqrt(len(common) - 3)
            tests.append(("correlated", (a, b), float(2 * _st.norm.sf(abs(z))),
                          f"sites {a!r} and {b!r}: correlation {r:.3f} over {len(common)} runs", "reused"))
    lag = [(data.site_u[s][r], data.site_u[s][r + 1]) for s in top for r in data.site_u[s] if r + 1 in data.site_u[s]]
    if len(lag) >= MIN_SITE:
        pairs = _normal(np.asarray(lag, dtype=np.float64).reshape(-1))
        x, y = pairs[0::2], pairs[1::2]
        r = float(np.corrcoef(x, y)[0, 1]) if x.std() > 0 and y.std() > 0 else 1.0
        z = math.atanh(min(max(r, -0.999999), 0.999999)) * math.sqrt(len(lag) - 3)
        tests.append(("between runs", tuple(top[:1]), float(2 * _st.norm.sf(abs(z))),
                      f"consecutive runs: correlation {r:.3f} of the same sites' draws over {len(lag)} pairs",
                      "reused"))
    m = max(1, len(tests))
    failed = [LawFinding(name, sites, p, what, kind) for name, sites, p, what, kind in tests if p <= level / m]
    return sorted(failed, key=lambda f: f.p), m


def summary(findings: Sequence[LawFinding]) -> Mapping[str, Any]:
    return {"findings": [{"test": f.test, "sites": list(f.sites), "p": f.p, "what": f.what} for f in findings]}
