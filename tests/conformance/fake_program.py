"""A small protocol program for the harness's own tests: 001-alg8 (Simple counter) in tape mode, with
one deliberate fault chosen on the command line. Standard library only, like an outside implementation.

    python fake_program.py FAULT

FAULT: ``none`` (correct), ``crash-on-step`` (exits at the second step), ``garbage`` (prints a non-JSON
line as its release), ``hang`` (never answers a step), ``bad-hello`` (hello without "modes"),
``accept-everything`` (no validation of params or inputs), ``wrong-scale`` (asks for Lap(2/eps)),
``extra-draw`` (asks for one more site per step), ``exit-1`` (exits with status 1 at end of input),
``ka-mistake`` (exactly one known-answer mistake: a run with T = 1 releases 1e-6 too much), ``crash-on-T1``
(exits at the step of a run with T = 1), ``sticky-epsilon`` (the first init accepted after a refused one ignores
its epsilon and asks for Lap(1)), ``dirty-after-refusal`` (the first init accepted after a refused one starts
its sum at 1 instead of 0),
``no-horizon-is-1`` (a missing T is taken as T = 1, so a second step is refused: every shipped vector gives T),
``crash-always`` (answers hello, then writes a line to stderr and exits at any other request), ``ignore-signals``
(correct, but ignores SIGINT and SIGTERM and never exits at end of input: only a kill stops it), ``slow`` (correct,
but waits 0.05 s before every answer).

With ``FAKE_STARTS=FILE`` in the environment every start appends a line to FILE (tests count restarts).
"""

from __future__ import annotations

import json
import math
import os
import signal
import sys
import time

FAULT = sys.argv[1] if len(sys.argv) > 1 else "none"
if os.environ.get("FAKE_STARTS"):
    with open(os.environ["FAKE_STARTS"], "a", encoding="utf-8") as starts:
        starts.write(f"{os.getpid()}\n")
if FAULT == "ignore-signals":
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)


def say(message: dict[str, object]) -> None:
    if FAULT == "slow":
        time.sleep(0.05)
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def ask(site: str, scale: float) -> float:
    say({"draw": {"site": site, "kind": "laplace", "params": {"scale": scale}}})
    return float(json.loads(sys.stdin.readline())["value"])


def valid_params(params: object) -> str | None:
    if FAULT == "accept-everything":
        return None
    if not isinstance(params, dict) or set(params) - {"epsilon", "T"}:
        return "params must be {epsilon, T}"
    eps, T = params.get("epsilon"), params.get("T")
    if isinstance(eps, bool) or not isinstance(eps, int | float) or not math.isfinite(eps) or eps <= 0:
        return "epsilon must be a finite number > 0"
    if "T" in params and (isinstance(T, bool) or not isinstance(T, int | float) or not math.isfinite(T)
                          or not float(T).is_integer() or T < 1):  # JSON numbers by value: 4.0 is the integer 4
        return "T must be an integer >= 1"
    return None


def main() -> int:
    state: dict[str, float] = {}
    steps = 0
    refused = False  # the last init was refused (for the faults that misbehave after a refusal)
    for line in sys.stdin:
        message = json.loads(line)
        op = message.get("op")
        if op == "hello":
            hello: dict[str, object] = {"protocol": 1, "implementation": f"fake-{FAULT}", "algorithms": ["001-alg8"],
                                        "modes": ["tape"]}
            if FAULT == "bad-hello":
                del hello["modes"]
            say(hello)
        elif FAULT == "crash-always":
            sys.stderr.write(f"fake-crash-always: cannot handle {op!r}, giving up\n")
            return 7
        elif op == "init":
            problem = valid_params(message.get("params"))
            if problem or message.get("algorithm") != "001-alg8":
                refused = True
                say({"error": problem or "unknown algorithm"})
                continue
            params = message["params"] if isinstance(message.get("params"), dict) else {}
            eps, T = params.get("epsilon"), params.get("T")
            no_horizon = 1.0 if FAULT == "no-horizon-is-1" else math.inf
            state = {"eps": float(eps) if isinstance(eps, int | float) and eps > 0 else 1.0,
                     "T": float(T) if isinstance(T, int | float) else no_horizon, "t": 0, "g": 0.0}
            if refused and FAULT == "sticky-epsilon":
                state["eps"] = 1.0
            if refused and FAULT == "dirty-after-refusal":
                state["g"] = 1.0
            refused = False
            say({"ok": True})
        elif op == "step":
            x = message.get("input")
            if FAULT != "accept-everything" and (isinstance(x, bool) or not isinstance(x, int | float)
                                                 or not abs(x) <= 2**53 - 1 or state["t"] >= state["T"]):
                say({"error": "input must be a number within +-(2^53 - 1), within the horizon"})
                continue
            steps += 1
            if FAULT == "crash-on-step" and steps == 2:
                return 3
            if FAULT == "hang":
                time.sleep(3600)
            if FAULT == "crash-on-T1" and state["T"] == 1:
                return 3
            t = int(state["t"]) + 1
            scale = (2.0 if FAULT == "wrong-scale" else 1.0) / state["eps"]
            z = ask(f"001-alg8 L4 t={t}", scale)
            if FAULT == "extra-draw":
                ask(f"001-alg8 L5 t={t}", scale)
            if FAULT == "garbage":
                sys.stdout.write("release: 3.0\n")
                sys.stdout.flush()
                continue
            number = x if isinstance(x, int | float) and abs(x) <= 1e308 else 0  # accept-everything: garbage in
            state["t"], state["g"] = t, state["g"] + (float(number) + z)
            say({"release": state["g"] + (1e-6 if FAULT == "ka-mistake" and state["T"] == 1 else 0.0)})
        else:
            say({"error": f"unknown op {op!r}"})
    if FAULT == "ignore-signals":
        while True:
            time.sleep(1)
    return 1 if FAULT == "exit-1" else 0


if __name__ == "__main__":
    sys.exit(main())
