"""Protocol programs with one planted mistake that the shipped known-answer vectors never see, for the differential
mode's tests: the reference (`dpstream serve`), except in one corner of one algorithm.

    python mistaken_program.py MISTAKE

MISTAKE:

* ``unit-coordinate`` (001-alg1, 001-alg2, 001-alg3, 001-alg6): a point with a coordinate equal to 1 is lost (its
  child index floor(x beta) = beta falls outside the tree; the docs: "the last part keeps the upper bound 1"). The
  vectors' coordinates lie in [0.001, 0.999].
* ``privtree-binary-scale`` (001-alg5): with ``lambda_rule`` "proof" or "printed", the constant (2 beta - 1)/(beta - 1)
  of the scale is taken for beta = 2 whatever the fanout. The vectors with these rules have fanout 2.
* ``offline-default-fitter`` (000-alg1): a missing ``A_Dataset`` is taken as "mw" (003-alg1's default) instead of
  000-alg1's "mw-all". Every vector gives ``A_Dataset``.
* ``tree-levels-above-64`` (001-alg10): for T = 2^k + 1 with k >= 6 the scale has one level too many (a table of
  levels that is off by one past 64). The vectors stop at T = 33.

Every mistake changes the draw requests or the releases of some valid case; the differential mode should convict it
with a small shrunk case (tests/conformance/test_differential.py).
"""

from __future__ import annotations

import math
import sys
from typing import Any

from dpstream.conformance.serve import Server
from dpstream.noise import NoiseSource

MISTAKE = sys.argv[1] if len(sys.argv) > 1 else "unit-coordinate"
STREAMS = ("001-alg1", "001-alg2", "001-alg3", "001-alg6")


def _without_unit_coordinates(batch: Any) -> Any:
    """The batch without its points that have a coordinate equal to 1 (and their moves)."""
    if not isinstance(batch, dict) or not isinstance(batch.get("points"), list) or not isinstance(
            batch.get("moves"), list) or len(batch["points"]) != len(batch["moves"]):
        return batch
    kept = [(p, m) for p, m in zip(batch["points"], batch["moves"], strict=True)
            if not (isinstance(p, list) and 1.0 in p)]
    return {"points": [p for p, _ in kept], "moves": [m for _, m in kept]}


class MistakenServer(Server):
    """The reference server with :data:`MISTAKE` planted."""

    def _build(self, noise: NoiseSource) -> Any:
        assert self._entry is not None
        anchor, raw = self._entry.anchor, dict(self._raw_params)
        if MISTAKE == "privtree-binary-scale" and anchor == "001-alg5" and raw.get("lambda_rule") in ("proof",
                                                                                                       "printed"):
            beta = int(raw.get("fanout", 2))
            raw["epsilon"] = raw["epsilon"] * (2 * beta - 1) / (3 * (beta - 1))  # lambda = 3/eps or 6/eps
        elif MISTAKE == "offline-default-fitter" and anchor == "000-alg1" and "A_Dataset" not in raw:
            raw["A_Dataset"] = "mw"
        elif MISTAKE == "tree-levels-above-64" and anchor == "001-alg10":
            T = raw["T"]
            if T > 64 and (T - 1) & (T - 2) == 0:
                levels = math.floor(math.log2(T)) + 1
                raw["epsilon"] = raw["epsilon"] * levels / (levels + 1)  # scale (levels + 1)/eps
        return self._entry.make(raw, noise)

    def handle(self, message: Any) -> dict[str, Any] | None:
        if (MISTAKE == "unit-coordinate" and isinstance(message, dict) and message.get("op") == "step"
                and self._entry is not None and self._entry.anchor in STREAMS):
            message = {**message, "input": _without_unit_coordinates(message.get("input"))}
        return super().handle(message)


def main() -> int:
    def write(text: str) -> None:
        sys.stdout.write(text)
        sys.stdout.flush()

    MistakenServer(sys.stdin.readline, write).loop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
