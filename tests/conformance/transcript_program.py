"""A protocol program for the transcript mode's tests: ``dpstream serve`` (which speaks transcript mode), with one
deliberate fault in what transcript mode reports or does, chosen on the command line.

    python transcript_program.py FAULT

FAULT (transcript mode only; tape and own mode are the reference's):

* ``none``: the reference;
* ``drop-site``: the first draw of every run is not reported (a missing draw);
* ``lie``: the first reported value is not the value used (the report is dishonest: 1 added to it);
* ``wrong-params``: the first draw is reported with its scale doubled (a mis-stated parameter);
* ``unseeded``: the seed of ``init`` is ignored (every init starts a new generator from a counter);
* ``no-draws``: the replies carry no ``draws``.
"""

from __future__ import annotations

import sys
from typing import Any

from dpstream.conformance.serve import Server
from dpstream.insecure import InsecureSeededNoise

FAULT = sys.argv[1] if len(sys.argv) > 1 else "none"


def _fault(draws: list[dict[str, Any]]) -> list[dict[str, Any]]:
    if not draws:
        return draws
    if FAULT == "drop-site":
        return draws[1:]
    first = dict(draws[0])
    if FAULT == "lie" and isinstance(first["value"], int | float) and not isinstance(first["value"], bool):
        first["value"] = first["value"] + 1
    elif FAULT == "wrong-params" and "scale" in first["params"]:
        first["params"] = {**first["params"], "scale": 2 * first["params"]["scale"]}
    return [first, *draws[1:]]


class FaultyServer(Server):
    """The reference server with the fault applied to every transcript reply."""

    inits = 0

    def handle(self, message: Any) -> dict[str, Any] | None:
        reply = super().handle(message)
        if isinstance(message, dict) and message.get("op") == "init" and FAULT == "unseeded" and self._own is not None:
            FaultyServer.inits += 1
            self._own = InsecureSeededNoise(10_000 + FaultyServer.inits)
        if reply is None or self._mode != "transcript":
            return reply
        if FAULT == "no-draws":
            reply.pop("draws", None)
        elif "draws" in reply and "runs" in reply:
            reply["draws"] = [_fault(d) for d in reply["draws"]]
        elif "draws" in reply:
            reply["draws"] = _fault(reply["draws"])
        return reply


def main() -> int:
    def write(text: str) -> None:
        sys.stdout.write(text)
        sys.stdout.flush()

    FaultyServer(sys.stdin.readline, write).loop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
