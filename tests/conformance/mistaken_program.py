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

Mistakes that show only in larger cases than the vectors and the first fresh cases hold:

* ``privtree-depth-6`` (001-alg5): for a tree of depth D >= 6 the "general" scale is (D - 1)/eps instead of D/eps
  (a loop bound off by one past depth 5). The vectors stop at D = 4.
* ``cumulative-step-40`` (002-alg2): from the 40th step of a run on, the first individual's report is read flipped
  (a buffer that wraps at 40). The vectors stop at T = 9.
* ``tabular-step-20`` (003-alg2): from the 20th step of a run on, the last record a step adds is lost. The vectors
  stop at 5 steps.

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
        elif MISTAKE == "privtree-depth-6" and anchor == "001-alg5" and raw["D"] >= 6 and raw.get(
                "lambda_rule", "general") == "general":
            raw["epsilon"] = raw["epsilon"] * raw["D"] / (raw["D"] - 1)  # lambda = (D - 1)/eps
        elif MISTAKE == "tree-levels-above-64" and anchor == "001-alg10":
            T = raw["T"]
            if T > 64 and (T - 1) & (T - 2) == 0:
                levels = math.floor(math.log2(T)) + 1
                raw["epsilon"] = raw["epsilon"] * levels / (levels + 1)  # scale (levels + 1)/eps
        return self._entry.make(raw, noise)

    steps = 0

    def handle(self, message: Any) -> dict[str, Any] | None:
        op = message.get("op") if isinstance(message, dict) else None
        if op == "init":
            self.steps = 0
        anchor = self._entry.anchor if self._entry is not None else None
        if op == "step" and isinstance(message, dict):
            self.steps += 1
            value = message.get("input")
            if MISTAKE == "unit-coordinate" and anchor in STREAMS:
                message = {**message, "input": _without_unit_coordinates(value)}
            elif MISTAKE == "cumulative-step-40" and anchor == "002-alg2" and self.steps >= 40 and isinstance(
                    value, list) and value and value[0] in (0, 1):
                message = {**message, "input": [1 - value[0], *value[1:]]}
            elif MISTAKE == "tabular-step-20" and anchor == "003-alg2" and self.steps >= 20 and isinstance(
                    value, dict) and isinstance(value.get("added"), list) and value["added"]:
                message = {**message, "input": {**value, "added": value["added"][:-1]}}
        reply = super().handle(message)
        if op == "step" and isinstance(reply, dict) and "error" in reply:
            self.steps -= 1  # a refused step is no step
        return reply


def main() -> int:
    def write(text: str) -> None:
        sys.stdout.write(text)
        sys.stdout.flush()

    MistakenServer(sys.stdin.readline, write).loop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
