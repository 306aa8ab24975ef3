"""Exact privacy loss of StreamingMWEM (003-alg2) and Algorithm 3 (003-alg3) on concrete neighbours.

Both algorithms release post-processings of a *transcript*: the selected indices η_{t,l}
and the noisy measurements (003-alg2: m(t, j) = q_j(∇f_t) + Lap; 003-alg3: the counters'
releases). The density of a transcript is computable: the exponential mechanism's
selection probabilities (003-def3.8) times the Laplace densities of the measurements
(for counters, through their :class:`~dpstream.audit.linear_model.LinearReleaseModel`). So for
neighbouring streams f, f' (one record added or removed at one time τ, 003-def3.3):

* :func:`transcript_losses` samples transcripts on f and computes, for each,
  log p(o | f) - log p(o | f') exactly, split per time step, by *forcing* the recorded
  selections and measurements through the algorithm run on f and on f'. It also checks
  that the releases g_t are the same function of the transcript under f and f' (the
  post-processing step of the proof); if not, the loss is infinite (this is how the
  printed StreamingMWEM, whose mass is |∇f_t|, fails). Sampled transcripts give *lower
  bounds* of the sup over all outputs: a value above the claim is a real violation.
* :func:`step_sup_loss` computes the exact sup over all outputs of the loss at time τ
  when k = 1, given the common prefix: max over the selectable i of
  ±(log P_f(i) - log P_f'(i)) + sum_cells |q_i(∇f_τ) - q_i(∇f'_τ)| / b_i, where b_i is the
  Laplace scale the implementation actually draws with when i is measured (read off a
  probe's noise tape). Exact for Simple counters and for StreamingMWEM, where the
  measurement of i at τ is one Laplace statistic per cell containing q_i(∇f_τ) with
  coefficient 1 and nothing later depends on the data (checked by the first function).
"""

from __future__ import annotations

import copy
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields

import numpy as np

from dpstream.audit.exact import ExactLoss
from dpstream.audit.linear_model import LinearReleaseModel, NoiseLaw
from dpstream.claims import Neighbour, PrivacyClaim
from dpstream.counters.base import Counter, CounterStaging
from dpstream.counters.multidim import MultiDimensionalCounter
from dpstream.insecure import InsecureSeededNoise, InsecureZeroNoise, TapeRecorder
from dpstream.noise import DrawKind, NoiseSource, site
from dpstream.tabular.datasets import answer
from dpstream.tabular.main_algorithm import MainAlgorithm
from dpstream.tabular.queries import FloatArray
from dpstream.tabular.selection import Selector
from dpstream.tabular.stream import DifferentialDataset, StreamStep, coerce_step
from dpstream.tabular.streaming_mwem import LaplaceMeasurer, StreamingMWEM

__all__ = ["ForcedSelector", "Transcript", "record_transcript", "step_sup_loss",
           "transcript_losses"]

Algorithm = StreamingMWEM | MainAlgorithm
Builder = Callable[[NoiseSource], Algorithm]
CounterModel = Callable[[float, int], LinearReleaseModel]

_T = re.compile(r"\bt=(\d+)")


def _time_of(site_name: str) -> int:
    m = _T.search(site_name)
    if m is None:
        raise ValueError(f"site {site_name!r} carries no time index")
    return int(m.group(1))


def _forced(selector: Selector, choices: Mapping[str, int], k: int | None = None) -> ForcedSelector:
    """A :class:`ForcedSelector` with ``selector``'s law and calibration (and ``k`` if given)."""
    base = {f.name: getattr(selector, f.name) for f in fields(Selector)}
    if k is not None:
        base["k"] = k
    return ForcedSelector(**base, choices=choices)


@dataclass(frozen=True)
class ForcedSelector(Selector):
    """A :class:`Selector` that returns recorded choices (by site) and logs log P(choice | scores)."""

    choices: Mapping[str, int] = field(default_factory=dict)
    log: list[tuple[str, float, tuple[float, ...]]] = field(default_factory=list)

    def select(self, noise: NoiseSource, site_name: str, scores: Sequence[float]) -> int:
        index = self.choices.get(site_name, 0)
        self.log.append((site_name, float(self.log_probabilities(scores)[index]), tuple(float(s) for s in scores)))
        return index


@dataclass(frozen=True)
class ForcedMeasurer(LaplaceMeasurer):
    """003-alg2 L16-L17 forced to the recorded m; logs the Laplace log density of m - value."""

    values: Mapping[str, float] = field(default_factory=dict)
    log: list[tuple[str, float]] = field(default_factory=list)

    def measure(self, noise: NoiseSource, site_name: str, value: float) -> float:
        m = self.values[site_name]
        self.log.append((site_name, float(NoiseLaw.laplace(self.scale).log_pdf(m - float(value)))))
        return m

    def measure_many(self, noise: NoiseSource, sites: Sequence[str], values: Sequence[float]) -> list[float]:
        return [self.measure(noise, s, v) for s, v in zip(sites, values, strict=True)]


@dataclass(frozen=True)
class RecordingMeasurer(LaplaceMeasurer):
    """003-alg2 L16-L17 as usual, remembering every m by site."""

    values: dict[str, float] = field(default_factory=dict)

    def measure(self, noise: NoiseSource, site_name: str, value: float) -> float:
        m = super().measure(noise, site_name, value)
        self.values[site_name] = m
        return m

    def measure_many(self, noise: NoiseSource, sites: Sequence[str], values: Sequence[float]) -> list[float]:
        ms = super().measure_many(noise, sites, values)
        self.values.update(zip(sites, ms, strict=True))
        return ms


class _ForcedCounter(Counter):
    """Returns recorded releases; remembers its inputs and the (global) times they came at."""

    anchor = "forced"
    loss_scales_with_l1 = True

    def __init__(self, epsilon: float, releases: Sequence[float], clock: list[int]) -> None:
        super().__init__(InsecureZeroNoise(), None)
        self.epsilon = epsilon
        self._recorded = list(releases)
        self.clock = clock
        self.inputs: list[float] = []
        self.times: list[int] = []

    @property
    def claim(self) -> PrivacyClaim:
        return PrivacyClaim.pure(self.epsilon, Neighbour.STREAM_ENTRY, "forced")

    def _staging(self, x: float, t: int) -> CounterStaging:
        g = self._recorded[t - 1]
        yield from ()  # draws nothing

        def commit() -> None:
            self.inputs.append(x)
            self.times.append(self.clock[0])

        return g, commit

    def state_size(self) -> int:
        return 0


@dataclass(frozen=True)
class Transcript:
    """The randomness-bearing outputs of one run: selections by site, measurements, counter releases."""

    selections: Mapping[str, int]
    measurements: Mapping[str, float]
    counter_releases: tuple[tuple[tuple[float, ...], ...], ...]  # [query i][cell c] -> releases


def record_transcript(build: Builder, stream: Sequence[object], seed: int) -> tuple[Transcript, list[FloatArray]]:
    """Run ``build`` on ``stream`` with seeded noise; return the transcript and q_i(g_t) for all i, t."""
    recorder = TapeRecorder(InsecureSeededNoise(seed))
    alg = build(recorder)
    meas = RecordingMeasurer(alg.measurer.scale) if isinstance(alg, StreamingMWEM) else None
    if isinstance(alg, StreamingMWEM) and meas is not None:
        alg.measurer = meas
    answers = []
    for x in stream:
        g = alg.step(x)
        answers.append(np.concatenate([answer(q, g) for q in alg.Q]))
    selections = {d.site: int(d.value) for d in recorder.tape if d.kind is DrawKind.EXPONENTIAL_MECHANISM}
    releases: list[tuple[tuple[float, ...], ...]] = []
    if isinstance(alg, MainAlgorithm):
        for c in alg.counters:
            parts = c.counters if isinstance(c, MultiDimensionalCounter) else [c]
            releases.append(tuple(tuple(float(v) for v in p.releases) for p in parts))
    return Transcript(selections, dict(meas.values) if meas else {}, tuple(releases)), answers


def _forced_log_likelihood(build: Builder, stream: Sequence[object], transcript: Transcript, T: int,
                           counter_model: CounterModel | None) -> tuple[FloatArray, list[FloatArray]]:
    alg = build(InsecureZeroNoise())
    per_time = np.zeros(T)
    selector = _forced(alg.selector, transcript.selections)
    alg.selector = selector
    clock = [0]
    forced: list[list[_ForcedCounter]] = []
    if isinstance(alg, StreamingMWEM):
        measurer = ForcedMeasurer(alg.measurer.scale, values=transcript.measurements)
        alg.measurer = measurer
    else:
        eps_c = alg.epsilon / (2 * alg.k)
        new_counters: list[Counter | MultiDimensionalCounter] = []
        for i, c in enumerate(alg.counters):
            recorded = transcript.counter_releases[i]
            parts = [_ForcedCounter(eps_c, recorded[cell], clock) for cell in range(len(recorded))]
            forced.append(parts)
            new_counters.append(MultiDimensionalCounter(parts) if isinstance(c, MultiDimensionalCounter) else parts[0])
        alg.counters = new_counters
    answers = []
    for t, x in enumerate(stream, start=1):
        clock[0] = t
        g = alg.step(x)
        answers.append(np.concatenate([answer(q, g) for q in alg.Q]))
    for site_name, lp, _ in selector.log:
        per_time[_time_of(site_name) - 1] += lp
    if isinstance(alg, StreamingMWEM):
        for site_name, lp in measurer.log:
            per_time[_time_of(site_name) - 1] += lp
    else:
        if counter_model is None:
            raise ValueError("a counter model is needed for Algorithm 3")
        eps_c = alg.epsilon / (2 * alg.k)
        for parts in forced:
            for p in parts:
                n = len(p.inputs)
                if n == 0:
                    continue
                model = counter_model(eps_c, n)
                z = model.noise_from_releases(np.asarray(p._recorded[:n]), np.asarray(p.inputs))
                for j, (law, zj) in enumerate(zip(model.laws, z, strict=True)):
                    used = np.nonzero(model.statistics[j])[0]
                    when = p.times[int(used.max())] if used.size else p.times[0]
                    per_time[when - 1] += float(law.log_pdf(zj))
    return per_time, answers


def transcript_losses(build: Builder, f: Sequence[object], f_prime: Sequence[object], seeds: Sequence[int],
                      counter_model: CounterModel | None = None, atol: float = 1e-7) -> list[ExactLoss]:
    """Exact loss |log p(o|f) - log p(o|f')| of transcripts o sampled on f (one per seed).

    ``per_time`` holds the signed log-ratio per time step (index t-1), ``parts["signed"]`` its sum;
    ``parts["postprocessing"]`` is 1.0 when the releases are the same function of the transcript under f
    and f' (the post-processing step of the proof), else 0.0 and the loss is infinite.
    """
    if len(f) != len(f_prime):
        raise ValueError("f and f' must have the same length")
    out = []
    for seed in seeds:
        transcript, _ = record_transcript(build, f, seed)
        lf, ans_f = _forced_log_likelihood(build, f, transcript, len(f), counter_model)
        lg, ans_g = _forced_log_likelihood(build, f_prime, transcript, len(f), counter_model)
        same = all(np.allclose(a, b, rtol=0.0, atol=atol * max(1.0, float(np.abs(a).max(initial=0.0))))
                   for a, b in zip(ans_f, ans_g, strict=True))
        diff = lf - lg
        if same:
            total = float(diff.sum())
            out.append(ExactLoss.exact(abs(total), f"transcript of seed {seed}",
                                       {"postprocessing": 1.0, "signed": total}, per_time=diff.tolist()))
        else:
            out.append(ExactLoss.exact(math.inf, f"transcript of seed {seed}: releases are not a post-processing "
                                       "of the transcript", {"postprocessing": 0.0}, per_time=diff.tolist()))
    return out


def step_sup_loss(build: Builder, prefix: Sequence[object], x: object, x_prime: object, seed: int) -> ExactLoss:
    """Exact sup over outputs of |log p(o_τ | prefix, x) - log p(o_τ | prefix, x')| at one time τ, for k = 1."""
    alg = build(TapeRecorder(InsecureSeededNoise(seed)))
    if alg.k != 1:
        raise ValueError("step_sup_loss needs k = 1")
    for item in prefix:
        alg.step(item)
    tau = alg.t + 1
    em_site = site("003-alg2 L11" if isinstance(alg, StreamingMWEM) else "003-alg3 L12", t=tau, l=1)
    step_f, step_g = coerce_step(alg.domain, x), coerce_step(alg.domain, x_prime)
    logs: list[FloatArray] = []
    for s in (step_f, step_g):
        probe = copy.deepcopy(alg)
        sel = _forced(alg.selector, {em_site: 0}, k=1)
        probe.selector = sel
        probe.step(s)
        logs.append(np.asarray(alg.selector.log_probabilities(sel.log[0][2]), dtype=np.float64))
    diff_f, diff_g = DifferentialDataset(alg.domain, step_f), DifferentialDataset(alg.domain, step_g)
    worst = 0.0
    for index, i in enumerate(range(len(alg.Q))):  # J_{τ,1} = [|Q|] at l = 1
        shift = np.abs(diff_f.answer(alg.Q[i]) - diff_g.answer(alg.Q[i]))
        scale = _measurement_scale(alg, i, tau, em_site, index, step_f)
        lap = float(shift.sum()) / scale if scale > 0 else (0.0 if not shift.any() else math.inf)
        em = float(logs[0][index] - logs[1][index])
        worst = max(worst, em + lap, -em + lap)
    return ExactLoss.exact(worst, f"outputs at t={tau}")


def _measurement_scale(alg: Algorithm, i: int, tau: int, em_site: str, index: int, step: StreamStep) -> float:
    """The Laplace scale the implementation draws with when query i is measured at τ (from a probe's tape)."""
    probe = copy.deepcopy(alg)
    recorder = TapeRecorder(InsecureZeroNoise())
    _retarget_noise(probe, recorder)
    probe.selector = _forced(alg.selector, {em_site: index}, k=1)
    probe.step(step)
    scales = [float(d.params["scale"]) for d in recorder.tape if d.kind is DrawKind.LAPLACE]
    return min(scales) if scales else 0.0


def _retarget_noise(alg: Algorithm, noise: NoiseSource) -> None:
    """Point an algorithm (and its counters) at another noise source, keeping the counters' site scopes."""
    from dpstream.noise import ScopedNoise

    alg.noise = noise
    if isinstance(alg, MainAlgorithm):
        for c in alg.counters:
            parts = c.counters if isinstance(c, MultiDimensionalCounter) else [c]
            for p in parts:
                chain: list[str] = []
                src = p.noise
                while isinstance(src, ScopedNoise):
                    chain.append(src.prefix)
                    src = src.inner
                rebuilt: NoiseSource = noise
                for prefix in reversed(chain):
                    rebuilt = ScopedNoise(rebuilt, prefix)
                p.noise = rebuilt
