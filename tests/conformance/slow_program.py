"""The reference (`dpstream serve`), with some answers held back: a correct but slow program, or one that hangs.

    python slow_program.py DELAY OP NTH [NTH ...]

holds the answer to the NTH message whose op is OP (``step``, ``run``, ``runs``, ``init``; counted from 1 over the
whole session) back for DELAY seconds, then writes it: the answer is late, never wrong. Everything else is
``dpstream serve``'s. With ``SLOW_ONCE=FILE`` in the environment only the first copy of the program to start holds
anything (it creates FILE; a copy started later, finding FILE, answers at once). Used by
tests/conformance/test_slow_programs.py (a slow answer is not a broken protocol, and a program that timed out never
poisons the next check).
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from dpstream.conformance.serve import Server, line_reader


def main() -> int:
    delay, op, nths = float(sys.argv[1]), sys.argv[2], {int(n) for n in sys.argv[3:]}
    once = os.environ.get("SLOW_ONCE")
    if once:
        if Path(once).exists():
            nths = set()
        else:
            Path(once).write_text("held", encoding="utf-8")
    read_line = line_reader(sys.stdin.buffer)
    seen = {"count": 0, "hold": False}

    def read() -> str:
        line = read_line()
        try:
            message = json.loads(line) if line.strip() else {}
        except ValueError:
            message = {}
        if isinstance(message, dict) and message.get("op") == op:
            seen["count"] += 1
            seen["hold"] = seen["count"] in nths
        return line

    def write(text: str) -> None:
        if seen["hold"] and not text.startswith('{"draw"'):
            time.sleep(delay)  # the answer to the held message (its draw requests go out at once)
            seen["hold"] = False
        sys.stdout.write(text)
        sys.stdout.flush()

    Server(read, write).loop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
