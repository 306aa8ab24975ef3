"""001-alg8, the Simple counter, speaking the dpstream conformance protocol v1 (docs/conformance.md).

A complete outside implementation: `dpstream conform -- python3 simple_counter.py`. Own mode draws
Laplace noise by inversion of Python's `random` (NOT float-safe: an example, not for releasing data).
"""

import json
import math
import random
import sys
from typing import Any


def say(message: dict[str, Any]) -> None:
    print(json.dumps(message), flush=True)


def noise(run: dict[str, Any], t: int) -> float:  # Lap(1/eps): asked from the harness (tape) or drawn here
    if run["tape"]:
        say({"draw": {"site": f"001-alg8 L4 t={t}", "kind": "laplace", "params": {"scale": run["b"]}}})
        return float(json.loads(sys.stdin.readline())["value"])
    u = run["rng"].random() - 0.5
    return float(-run["b"] * math.copysign(math.log(1 - 2 * abs(u)), u))


def step(run: dict[str, Any], x: Any) -> float:  # validate first, draw second, change state last
    if type(x) not in (int, float) or not abs(x) <= 2**53 - 1 or run["t"] >= run["T"]:  # NaN fails too
        raise ValueError(f"input must be a number within +-(2^53 - 1) and the horizon, got {x!r}")
    run["g"] += x + noise(run, run["t"] + 1)
    run["t"] += 1
    return float(run["g"])


def handle(m: dict[str, Any], run: dict[str, Any]) -> dict[str, Any]:
    if m["op"] == "hello":
        return {"protocol": 1, "implementation": "example-python", "algorithms": ["001-alg8"], "modes": ["tape", "own"]}
    if m["op"] == "init":
        run.clear()
        p = m["params"]
        eps, T = p.get("epsilon"), p.get("T", 0)  # T is optional: absent (0 here) means no horizon
        if (m["algorithm"] != "001-alg8" or set(p) - {"epsilon", "T"} or type(eps) not in (int, float)
                or not math.isfinite(eps) or eps <= 0 or type(T) not in (int, float) or not math.isfinite(T)
                or not float(T).is_integer() or (T < 1 and "T" in p)):  # numbers by value: T = 16.0 is the integer 16
            raise ValueError("unknown algorithm or invalid parameters")
        run.update(b=1 / eps, T=int(T) or math.inf, t=0, g=0.0, tape=m["noise"] == "tape", rng=random.Random(m["seed"]))
        return {"ok": True}
    if m["op"] == "step":
        return {"release": step(run, m["input"])}
    if m["op"] == "run":  # a fresh run with the same parameters; the generator is not reseeded
        fresh = {**run, "t": 0, "g": 0.0}
        return {"releases": [step(fresh, x) for x in m["inputs"]]}
    raise ValueError(f"unknown op {m['op']!r}")


run: dict[str, Any] = {}
for line in sys.stdin:
    try:
        say(handle(json.loads(line), run))
    except (ValueError, KeyError, TypeError) as error:
        say({"error": str(error)})
