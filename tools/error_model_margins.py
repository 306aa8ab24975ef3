"""How much of each error-model bound the reference's own re-orderings use (docs/conformance.md, "The error model").

Every known-answer vector of the corpus is replayed by the reference under the ordinary arithmetic and under two
perturbed ones (another correct evaluation order: sums reversed or shuffled, exp/log/pow off by 1 or 4 ulps,
multiplicative weights in log space), and per entry the largest ratio of a difference to its tolerance is printed:
releases (|got - expected| / the vector's release tolerance) and draw parameters (|requested - tape's| / the
vector's draw tolerance). A ratio above 1 would be a correct order the model rejects; the planted mistakes of
tests/catalog/test_error_model.py lie orders of magnitude above 1.

    .venv/bin/python tools/error_model_margins.py
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any

from dpstream.arithmetic import FAST, Kernel, PerturbedKernel, using
from dpstream.catalog import entry
from dpstream.catalog.codecs import Tolerance, features_of
from dpstream.insecure import TapeReplay
from dpstream.noise import DrawKind, Params
from dpstream.tape import Tape
from dpstream.vectors.corpus import known_answer
from dpstream.vectors.generate import run_inputs

KERNELS: tuple[Kernel, ...] = (FAST, PerturbedKernel("reverse", 1, True), PerturbedKernel("shuffle", 4, False, 3))


class _Measuring(TapeReplay):
    """A replay that accepts any float parameter and records the largest ratio of a difference to ``tolerance``."""

    def __init__(self, tape: Tape, tolerance: Tolerance) -> None:
        super().__init__(tape, 1.0, math.inf)
        self.tolerance = tolerance
        self.worst = 0.0

    def _draw(self, site: str, kind: DrawKind, params: Params) -> Any:
        recorded = self.tape.by_site()[site]
        for key, value in params.items():
            mine = value if isinstance(value, list) else [value]
            theirs = recorded.params[key] if isinstance(recorded.params[key], list) else [recorded.params[key]]
            for a, b in zip(mine, theirs, strict=True):
                if isinstance(a, float) and a != b:
                    limit = self.tolerance.absolute + self.tolerance.relative * abs(float(b))
                    self.worst = max(self.worst, abs(a - float(b)) / limit if limit > 0 else math.inf)
        return super()._draw(site, kind, params)


def margins(k: Kernel) -> dict[str, tuple[float, float]]:
    worst: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])
    with using(k):
        for v in known_answer():
            replay = _Measuring(v.tape, v.draw_tolerance)
            got = run_inputs(entry(v.algorithm), v.params, v.inputs, replay)
            ratios = [abs(a - b) / v.tolerance.absolute if v.tolerance.absolute > 0 else (0.0 if a == b else math.inf)
                      for a, b in zip(features_of(v.expected), features_of(got), strict=True)
                      if not (math.isnan(a) and math.isnan(b))]
            row = worst[v.algorithm]
            row[0] = max(row[0], max(ratios, default=0.0))
            row[1] = max(row[1], replay.worst)
    return {a: (w[0], w[1]) for a, w in sorted(worst.items())}


def main() -> None:
    results = {k.name: margins(k) for k in KERNELS}
    anchors = sorted(next(iter(results.values())))
    print("largest |difference| / tolerance over the corpus, releases / draw parameters")
    print(f"{'entry':14s}" + "".join(f"  {name[:38]:>38s}" for name in results))
    for a in anchors:
        print(f"{a:14s}" + "".join(f"  {r[a][0]:>18.3g} / {r[a][1]:<17.3g}" for r in results.values()))


if __name__ == "__main__":
    main()
