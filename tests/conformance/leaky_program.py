"""A deliberately leaky protocol program for the statistical mode's tests: the reference (`dpstream serve`), except
that in own mode every run releases ONE count without noise, computed from the run's JSON inputs.

    python leaky_program.py LEAK

LEAK (the count replaced in the releases of ``run`` and ``runs``; ``step`` and tape mode are the reference's):

* ``phdstream-leaf``: 001-alg1/2/3/6, step 2: G(v, 2) of the depth-1 vertex "0" (x_1 < 1/fanout), the true count;
* ``tabular-cell``: 003-*/000-*, step min(2, T): the cell count g_t(0, ..., 0), the true count f_t(0, ..., 0);
* ``longitudinal-count``: 002-alg2, step 2: S^_1 = the individuals with a 1 among their first 2 reports;
  002-alg1, step k: p_0 = the individuals whose first k reports are all 0;
* ``hypercube-region``: 004-alg1, the last step: n'_0 of depth 1 (x_1 < 1/2), the true count;
* ``no-values``: not a leak but a broken release: 001-alg1/2/3/6 releases without ``values`` (a protocol error).

Any of these makes the algorithm non-private (two neighbouring inputs give different exact values); the statistical
mode should certify it (tests/conformance/test_statistical_synthesizers.py).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import Any

from dpstream.conformance.serve import Server

LEAK = sys.argv[1] if len(sys.argv) > 1 else "phdstream-leaf"


def _leaf_count(inputs: Sequence[Any], t: int, fanout: int) -> int:
    """Present points with x_1 < 1/fanout after step t (point batches {"points", "moves"})."""
    return sum(m for batch in inputs[:t] for p, m in zip(batch["points"], batch["moves"], strict=True)
               if p[0] < 1.0 / fanout)


def _cell_count(inputs: Sequence[Any], t: int) -> int:
    """Records equal to (0, ..., 0) after step t (steps {"added", "removed"}, or one dataset)."""
    if inputs and isinstance(inputs[0], list):  # the offline boxes: one dataset
        return sum(1 for r in inputs[0] if not any(r))
    return sum(sum(1 for r in step["added"] if not any(r)) - sum(1 for r in step["removed"] if not any(r))
               for step in inputs[:t])


def leak(anchor: str, params: Mapping[str, Any], inputs: Sequence[Any], releases: list[Any]) -> list[Any]:
    """The releases of one run with the leaked count in place."""
    T = len(inputs)
    if LEAK == "phdstream-leaf" and anchor in ("001-alg1", "001-alg2", "001-alg3", "001-alg6") and T >= 2:
        releases[1]["values"]["0"] = float(_leaf_count(inputs, 2, int(params.get("fanout", 2))))
    elif LEAK == "tabular-cell" and anchor[:3] in ("003", "000"):
        t = min(2, T)
        releases[t - 1][0] = float(_cell_count(inputs, t))
    elif LEAK == "longitudinal-count" and anchor == "002-alg2" and T >= 2:
        releases[1]["S_hat"][1] = sum(1 for i in range(len(inputs[0])) if inputs[0][i] or inputs[1][i])
    elif LEAK == "longitudinal-count" and anchor == "002-alg1":
        k = int(params["k"])
        releases[k - 1]["p"][0] = sum(1 for i in range(len(inputs[0])) if not any(c[i] for c in inputs[:k]))
    elif LEAK == "no-values" and anchor in ("001-alg1", "001-alg2", "001-alg3", "001-alg6"):
        del releases[0]["values"]
    elif LEAK == "hypercube-region" and anchor == "004-alg1" and len(releases[-1]["noisy"]) > 1:
        releases[-1]["noisy"][1][0] = sum(1 for x in inputs if x[0] < 0.5)
    return releases


class LeakyServer(Server):
    """The reference server with :func:`leak` applied to the releases of every ``run`` and ``runs``."""

    def handle(self, message: Any) -> dict[str, Any] | None:
        reply = super().handle(message)
        if not isinstance(message, dict) or reply is None or self._entry is None:
            return reply
        anchor, inputs = self._entry.anchor, message.get("inputs") or []
        if message.get("op") == "run" and "releases" in reply:
            reply["releases"] = leak(anchor, self._raw_params, inputs, reply["releases"])
        elif message.get("op") == "runs" and "runs" in reply:
            reply["runs"] = [leak(anchor, self._raw_params, inputs, r) for r in reply["runs"]]
        return reply


def main() -> int:
    def write(text: str) -> None:
        sys.stdout.write(text)
        sys.stdout.flush()

    LeakyServer(sys.stdin.readline, write).loop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
