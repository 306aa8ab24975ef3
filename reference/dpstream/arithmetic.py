"""Floating-point arithmetic as the reference specifies it: kernels, and the decisions a rounding can flip.

Ground truth must not depend on the machine, and no comparison may demand bits that another correct evaluation
order would change (docs/conformance.md, "The error model"). Two tools serve that:

* **Kernels.** The few operations whose last bits differ between correct evaluations -- elementary functions
  (``exp``, ``log``: numpy dispatches SIMD versions by CPU, libm versions differ by platform) and sums of many
  terms (order, pairwise blocking) -- go through the current :class:`Kernel` (:func:`kernel`):

  * :data:`FAST` (the default): numpy and libm, what every run uses;
  * :data:`SPECIFIED`: correctly rounded ``exp``/``log`` (evaluated with mpmath at 113 bits, rounded once to the
    nearest double) and correctly rounded sums (``math.fsum``): the same bytes on every machine. ``dpstream vectors
    generate`` runs under it, so the corpus does not depend on the CPU that wrote it;
  * :class:`PerturbedKernel`: another correct evaluation order -- sums reversed or shuffled, every elementary
    function off by ``ulps`` units in the last place, multiplicative weights kept in log space. The reference run
    under it must pass its own corpus and differential mode (the perturbation self-test).

  ``with using(SPECIFIED): ...`` switches the kernel for a block (a context variable: per thread and task).
* **Decisions.** A comparison whose inputs lie within rounding of its threshold is *ambiguous*: another correct
  evaluation may take the other branch. The algorithms take such comparisons through :func:`above`,
  :func:`ceil_of` and :func:`floor_of`, which return what the plain comparison returns and, inside
  :func:`recording`, note a :class:`Decision` (the compared quantity, its distance to the threshold, and the
  rounding band of its own evaluation). The catalog's error model (``dpstream.catalog.error_model``) adds the band
  the operands carry and says whether a case is ambiguous; the vector generator never ships one and the
  differential mode neither convicts nor counts one.

Unit roundoff :data:`U` = 2^-53; an elementary function is assumed within :data:`FUNCTION_ULPS` units in the last
place (numpy's SIMD exp/log are documented within 4; glibc's within 1), a sum of n terms in any order within
gamma(n - 1) of its terms' absolute sum (:func:`gamma`).
"""

from __future__ import annotations

import contextlib
import math
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from fractions import Fraction
from typing import Final, Literal

import numpy as np
import numpy.typing as npt
from mpmath.libmp import from_float, mpf_exp, mpf_log, mpf_pow, round_nearest, to_float

from dpstream.noise import data_rng

__all__ = [
    "FAST",
    "FUNCTION_ULPS",
    "SPECIFIED",
    "Decision",
    "Kernel",
    "Notes",
    "PerturbedKernel",
    "Step",
    "U",
    "above",
    "ceil_of",
    "floor_of",
    "gamma",
    "kernel",
    "note_step",
    "recording",
    "recording_active",
    "using",
]

FloatArray = npt.NDArray[np.float64]

U: Final = 2.0**-53
"""Unit roundoff of IEEE double precision (round to nearest)."""
FUNCTION_ULPS: Final = 4
"""Units in the last place an elementary function (exp, log, pow) may be off in a correct evaluation."""
_PRECISION = 113
"""Bits of the high-precision evaluation behind :data:`SPECIFIED` (then rounded once to 53)."""


def gamma(n: int) -> float:
    """gamma(n) = n u / (1 - n u): the relative error bound of n rounded operations (Higham, Lemma 3.1)."""
    if n <= 0:
        return 0.0
    return n * U / (1.0 - n * U)


class Kernel(ABC):
    """The operations whose rounding differs between correct evaluations (module docstring)."""

    @property
    @abstractmethod
    def name(self) -> str:
        """How reports and ``dpstream serve --perturb`` name the kernel."""

    @property
    def log_space_weights(self) -> bool:
        """Multiplicative weights keep log p between steps and normalise by log-sum-exp (another correct order)."""
        return False

    @abstractmethod
    def exp(self, x: FloatArray) -> FloatArray:
        """e^x elementwise."""

    @abstractmethod
    def log(self, x: FloatArray) -> FloatArray:
        """ln x elementwise (-inf at 0)."""

    def log_scalar(self, x: float) -> float:
        """ln x of one positive float."""
        return float(self.log(np.array([x], dtype=np.float64))[0])

    @abstractmethod
    def power(self, base: float, exponent: float) -> float:
        """base^exponent of two floats (base > 0): an elementary function like exp and log."""

    @abstractmethod
    def total(self, values: FloatArray | Iterable[float]) -> float:
        """The sum of many terms."""

    @abstractmethod
    def sum_axes(self, array: FloatArray, axes: tuple[int, ...]) -> FloatArray:
        """``array`` summed over ``axes`` (the remaining axes in order)."""


class _Fast(Kernel):
    @property
    def name(self) -> str:
        return "fast"

    def exp(self, x: FloatArray) -> FloatArray:
        return np.asarray(np.exp(x), dtype=np.float64)

    def log(self, x: FloatArray) -> FloatArray:
        with np.errstate(divide="ignore"):
            return np.asarray(np.log(x), dtype=np.float64)

    def log_scalar(self, x: float) -> float:
        return math.log(x)

    def power(self, base: float, exponent: float) -> float:
        return math.pow(base, exponent)

    def total(self, values: FloatArray | Iterable[float]) -> float:
        if isinstance(values, np.ndarray):
            return float(np.sum(values))
        return float(sum(values))  # left to right, as Python adds

    def sum_axes(self, array: FloatArray, axes: tuple[int, ...]) -> FloatArray:
        return np.asarray(array.sum(axis=axes), dtype=np.float64)


def _rounded(value: tuple[int, int, int, int]) -> float:
    return float(to_float(value, rnd=round_nearest))


def _exp_correctly_rounded(x: float) -> float:
    if math.isnan(x):
        return x
    if x == -math.inf:
        return 0.0
    if x > 709.8:  # beyond the largest double
        return math.inf
    return _rounded(mpf_exp(from_float(x), _PRECISION, round_nearest))


def _log_correctly_rounded(x: float) -> float:
    if math.isnan(x) or x < 0.0:
        return math.nan
    if x == 0.0:
        return -math.inf
    if x == math.inf:
        return math.inf
    return _rounded(mpf_log(from_float(x), _PRECISION, round_nearest))


def _sum_rows(array: FloatArray, axes: tuple[int, ...], row_sum: Callable[[FloatArray], float]) -> FloatArray:
    """``array`` summed over ``axes`` with ``row_sum`` applied to each row of the summed axes (in C order)."""
    kept = [a for a in range(array.ndim) if a not in axes]
    moved = np.moveaxis(array, [*kept, *axes], list(range(array.ndim)))
    shape = tuple(array.shape[a] for a in kept)
    rows = moved.reshape((int(np.prod(shape, dtype=np.int64)), -1))
    return np.array([float(row_sum(row)) for row in rows], dtype=np.float64).reshape(shape)


class _Specified(Kernel):
    @property
    def name(self) -> str:
        return "specified"

    def exp(self, x: FloatArray) -> FloatArray:
        flat = np.asarray(x, dtype=np.float64)
        return np.array([_exp_correctly_rounded(float(v)) for v in flat.ravel()], dtype=np.float64).reshape(flat.shape)

    def log(self, x: FloatArray) -> FloatArray:
        flat = np.asarray(x, dtype=np.float64)
        return np.array([_log_correctly_rounded(float(v)) for v in flat.ravel()], dtype=np.float64).reshape(flat.shape)

    def log_scalar(self, x: float) -> float:
        return _log_correctly_rounded(float(x))

    def power(self, base: float, exponent: float) -> float:
        if float(exponent).is_integer() and abs(exponent) <= 64 and float(base) == 2.0:
            return math.ldexp(1.0, int(exponent))  # exact
        return _rounded(mpf_pow(from_float(float(base)), from_float(float(exponent)), _PRECISION, round_nearest))

    def total(self, values: FloatArray | Iterable[float]) -> float:
        if isinstance(values, np.ndarray):
            return math.fsum(values.ravel().tolist())
        return math.fsum(values)

    def sum_axes(self, array: FloatArray, axes: tuple[int, ...]) -> FloatArray:
        return _sum_rows(np.asarray(array, dtype=np.float64), axes, lambda row: math.fsum(row.tolist()))


@dataclass(frozen=True)
class PerturbedKernel(Kernel):
    """Another correct evaluation order: the perturbation self-test's arithmetic.

    ``sums``: ``"reverse"`` adds the terms of every sum from the last to the first, one at a time; ``"shuffle"`` in an
    order drawn from ``seed`` (a non-private generator, :func:`dpstream.noise.data_rng`). ``ulps``: every ``exp`` and
    ``log`` result moved that many units in the last place, up at even positions and down at odd ones (within
    :data:`FUNCTION_ULPS`). ``log_space``: multiplicative weights kept in log space.
    """

    sums: Literal["reverse", "shuffle"] = "reverse"
    ulps: int = 1
    log_space: bool = True
    seed: int = 0

    def __post_init__(self) -> None:
        if self.sums not in ("reverse", "shuffle"):
            raise ValueError(f"sums must be 'reverse' or 'shuffle', got {self.sums!r}")
        if not 0 <= self.ulps <= FUNCTION_ULPS:
            raise ValueError(f"ulps must be in 0..{FUNCTION_ULPS} (a correct function), got {self.ulps}")

    @classmethod
    def parse(cls, text: str) -> PerturbedKernel:
        """``all`` (sums reversed, 1 ulp, log space), or comma-separated ``sums=reverse|shuffle``, ``ulps=N``,
        ``log-space`` / ``no-log-space``, ``seed=N`` (the rest as ``all``); raises ValueError."""
        if text.strip() in ("", "all"):
            return cls()
        sums, ulps, log_space, seed = "reverse", 1, True, 0
        for part in (p.strip() for p in text.split(",")):
            key, _, value = part.partition("=")
            if key == "sums" and value in ("reverse", "shuffle"):
                sums = value
            elif key == "ulps" and value.isdigit():
                ulps = int(value)
            elif key == "seed" and value.isdigit():
                seed = int(value)
            elif part in ("log-space", "no-log-space"):
                log_space = part == "log-space"
            else:
                raise ValueError(f"unknown perturbation {part!r} (all, sums=reverse|shuffle, ulps=N, log-space, "
                                 "no-log-space, seed=N)")
        return cls("reverse" if sums == "reverse" else "shuffle", ulps, log_space, seed)

    @property
    def name(self) -> str:
        return f"perturbed(sums={self.sums}, ulps={self.ulps}, log_space={self.log_space})"

    @property
    def log_space_weights(self) -> bool:
        return self.log_space

    def _moved(self, values: FloatArray) -> FloatArray:
        out = np.asarray(values, dtype=np.float64).copy()
        flat = out.reshape(-1)
        for _ in range(self.ulps):
            up = np.arange(flat.size) % 2 == 0
            finite = np.isfinite(flat)
            flat[:] = np.where(finite & up, np.nextafter(flat, np.inf), np.where(finite, np.nextafter(flat, -np.inf),
                                                                                flat))
        return out

    def exp(self, x: FloatArray) -> FloatArray:
        moved = self._moved(np.exp(x))
        return np.where(moved < 0.0, 0.0, moved)  # e^x >= 0

    def log(self, x: FloatArray) -> FloatArray:
        with np.errstate(divide="ignore"):
            exact_zero = np.asarray(x) == 1.0
            return np.where(exact_zero, 0.0, self._moved(np.log(x)))  # ln 1 = 0 in every correct libm

    def log_scalar(self, x: float) -> float:
        return float(self.log(np.array([x], dtype=np.float64))[0])

    def power(self, base: float, exponent: float) -> float:
        exact = math.pow(base, exponent)
        if float(exponent).is_integer() and float(base) == 2.0:
            return exact  # a power of two: exact in every correct pow
        return float(self._moved(np.array([exact], dtype=np.float64))[0])

    def _order(self, n: int) -> npt.NDArray[np.int64]:
        if self.sums == "reverse":
            return np.arange(n - 1, -1, -1, dtype=np.int64)
        return np.asarray(data_rng(self.seed + n).permutation(n), dtype=np.int64)

    def _fold(self, row: Sequence[float] | FloatArray) -> float:
        terms = [float(v) for v in row]
        acc = 0.0
        for i in self._order(len(terms)):
            acc += terms[int(i)]
        return acc

    def total(self, values: FloatArray | Iterable[float]) -> float:
        if isinstance(values, np.ndarray):
            return self._fold(values.ravel().tolist())
        return self._fold(list(values))

    def sum_axes(self, array: FloatArray, axes: tuple[int, ...]) -> FloatArray:
        return _sum_rows(np.asarray(array, dtype=np.float64), axes, self._fold)


FAST: Final[Kernel] = _Fast()
SPECIFIED: Final[Kernel] = _Specified()

_CURRENT: ContextVar[Kernel] = ContextVar("dpstream_arithmetic_kernel", default=FAST)


def kernel() -> Kernel:
    """The kernel in force (default :data:`FAST`)."""
    return _CURRENT.get()


@contextlib.contextmanager
def using(k: Kernel) -> Iterator[Kernel]:
    """Run a block under the kernel ``k``."""
    token = _CURRENT.set(k)
    try:
        yield k
    finally:
        _CURRENT.reset(token)


# -- decisions ------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Decision:
    """One branch taken on a computed quantity.

    ``value`` is the quantity, ``boundary`` the threshold it was compared with (for a floor or ceiling, the nearest
    integer), ``distance`` = |value - boundary| (computed exactly where the quantity is a rational), ``band`` the
    rounding band of the quantity's own evaluation (both the reference's and another correct one: twice the error
    bound), and ``inherits``: the quantity is computed from the run's sums, so the case's release error bound adds to
    the band (the error model decides, ``dpstream.catalog.error_model``).
    """

    what: str
    value: float
    boundary: float
    distance: float
    band: float
    inherits: bool = False

    def ambiguous(self, slack: float = 0.0) -> bool:
        """Within rounding of its boundary: another correct evaluation may branch the other way. A quantity that is
        exact in every correct evaluation (band and slack 0) is never ambiguous, even on its boundary."""
        band = self.band + (slack if self.inherits else 0.0)
        return band > 0.0 and self.distance <= band

    def to_json(self) -> dict[str, object]:
        return {"what": self.what, "value": self.value, "boundary": self.boundary, "distance": self.distance,
                "band": self.band, "inherits": self.inherits}


@dataclass(frozen=True)
class Step:
    """The operand sizes of one step of a long computation (``what`` names it, e.g. ``"003-mw"``: one
    multiplicative-weights step with its mass N, its largest |exponent| A and |log weight| L over n cells, and its
    lowest log weight relative to the largest, ``low``), noted so
    that the error model bounds the case by the sizes the run really had."""

    what: str
    sizes: tuple[tuple[str, float], ...]

    def get(self, name: str) -> float:
        return dict(self.sizes)[name]


@dataclass
class Notes:
    """What :func:`recording` collects: the decisions taken and the steps whose operand sizes were noted."""

    decisions: list[Decision]
    steps: list[Step]


_RECORDER: ContextVar[Notes | None] = ContextVar("dpstream_decisions", default=None)


@contextlib.contextmanager
def recording() -> Iterator[Notes]:
    """Note every decision taken, and every step's operand sizes, in the block (filled as the block runs)."""
    notes = Notes([], [])
    token = _RECORDER.set(notes)
    try:
        yield notes
    finally:
        _RECORDER.reset(token)


def recording_active() -> bool:
    """Whether decisions are being noted (callers with cached results note theirs again only then)."""
    return _RECORDER.get() is not None


def _note(decision: Decision) -> None:
    notes = _RECORDER.get()
    if notes is not None:
        notes.decisions.append(decision)


def note_step(what: str, **sizes: float) -> None:
    """Note the operand sizes of one step (only inside :func:`recording`)."""
    notes = _RECORDER.get()
    if notes is not None:
        notes.steps.append(Step(what, tuple((k, float(v)) for k, v in sizes.items())))


def above(what: str, value: float, threshold: float, band: float, *, inherits: bool = False) -> bool:
    """``value > threshold``, noted as a decision with the rounding ``band`` of the compared quantity."""
    if _RECORDER.get() is not None:
        _note(Decision(what, float(value), float(threshold), abs(float(value) - float(threshold)), float(band),
                       inherits))
    return value > threshold


def _integer_decision(what: str, x: float | Fraction, band: float, inherits: bool) -> None:
    if _RECORDER.get() is None:
        return
    exact = Fraction(x)
    nearest = round(exact)
    _note(Decision(what, float(exact), float(nearest), float(abs(exact - nearest)), float(band), inherits))


def ceil_of(what: str, x: float | Fraction, band: float, *, inherits: bool = False) -> int:
    """ceil(x) on the exact value of ``x``, noted as a decision at the nearest integer (a quantity within ``band``
    of an integer may be rounded to either side of it by another correct evaluation)."""
    _integer_decision(what, x, band, inherits)
    return math.ceil(x)


def floor_of(what: str, x: float | Fraction, band: float, *, inherits: bool = False) -> int:
    """floor(x), noted like :func:`ceil_of`."""
    _integer_decision(what, x, band, inherits)
    return math.floor(x)
