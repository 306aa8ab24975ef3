"""Pictures of a witness for the reports: the histogram of its statistic on f and on f', the event marked.

The search keeps, for every event it carries to the held-out split, the held-out runs per bin of the event's
statistic on f and on f' (:class:`dpstream.audit.search.Certified`, ``histogram``). A report shows the best one (and
every certified one) as a text histogram, which fits a terminal and a Markdown file, and as a PNG when matplotlib
is installed (``pip install 'dpstream[plot]'``).
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from dpstream.files import write_figure

__all__ = ["ROWS", "text_block", "witness_histogram", "witness_png", "witnesses_of"]

ROWS = 16
BAR = 24
WIDTH = 100


def witnesses_of(details: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    """The witnesses an outcome's details hold: (title, witness data with ``histogram``), the search's best first,
    then the design pair's test's (a Renyi test's bins), then the aimed search's (transcript mode)."""
    out = []
    for key, title in (("witness", "witness"), ("composed_event", "pair test witness"),
                       ("aimed_search", "aimed search witness")):
        data = details.get(key)
        if key != "witness" and isinstance(data, Mapping):
            data = data.get("witness")
        if isinstance(data, Mapping) and isinstance(data.get("histogram"), Mapping):
            out.append((title, data))
    return out


def _number(x: Any) -> float:
    return float(x) if isinstance(x, int | float) else {"inf": math.inf, "-inf": -math.inf}.get(str(x), math.nan)


def _rows(hist: Mapping[str, Any]) -> list[tuple[str, int, int, bool]]:
    """(bin label, runs on f, runs on f', in the event) for about :data:`ROWS` rows (adjacent bins merged)."""
    edges = [_number(e) for e in hist["edges"]]
    on_f, on_fp = list(hist["f"]), list(hist["f_prime"])
    c, kind, upper = _number(hist["threshold"]), str(hist.get("kind", "threshold")), bool(hist.get("upper", True))
    # the edges hold the threshold itself, so no bin straddles it
    bins = []
    for i in range(len(on_f)):
        lo = edges[i - 1] if i > 0 else -math.inf
        hi = edges[i] if i < len(edges) else math.inf
        if kind == "atom":
            inside = lo <= c < hi
        elif upper:
            inside = lo >= c
        else:
            inside = hi <= c
        bins.append((lo, hi, int(on_f[i]), int(on_fp[i]), inside))
    used = [b for b in bins if b[2] or b[3]] or bins
    first, last = bins.index(used[0]), bins.index(used[-1])
    bins = bins[first:last + 1]
    group = max(1, math.ceil(len(bins) / ROWS))
    rows = []
    for start in range(0, len(bins), group):
        for chunk in _split(bins[start:start + group]):  # never merged across the event's boundary
            lo, hi = chunk[0][0], chunk[-1][1]
            rows.append((f"[{lo:.4g}, {hi:.4g})", sum(b[2] for b in chunk), sum(b[3] for b in chunk), chunk[0][4]))
    return rows


def _split(part: list[tuple[float, float, int, int, bool]]) -> list[list[tuple[float, float, int, int, bool]]]:
    chunks: list[list[tuple[float, float, int, int, bool]]] = []
    for b in part:
        if chunks and chunks[-1][-1][4] == b[4]:
            chunks[-1].append(b)
        else:
            chunks.append([b])
    return chunks


def witness_histogram(data: Mapping[str, Any], title: str = "witness") -> list[str]:
    """The witness as text: its event and counts, then one row per bin of its statistic with the held-out runs on
    f and on f' as bars; rows inside the event are marked ``<- event``."""
    hist = data["histogram"]
    rows = _rows(hist)
    counts = data.get("counts", {})
    top = max([1, *(max(r[1], r[2]) for r in rows)])
    width = max(len(r[0]) for r in rows) if rows else 10
    if "rho_lower_bound" in data:  # a Renyi test: every bin counts, none is an event
        head = (f"{title}: {data.get('event', '')}. Held-out runs per bin, {counts.get('runs')} per input; "
                f"{_bound(data)}")
    else:
        head = (f"{title}: {data.get('event', '')}. Held-out runs in the event: {counts.get('favoured')} of "
                f"{counts.get('runs')} on the favoured input ({data.get('favours')}), {counts.get('other')} of "
                f"{counts.get('runs')} on the other; {_bound(data)}")
    lines = [*textwrap.wrap(head, WIDTH), f"{'bin':<{width}}  {'runs on f':<{BAR + 7}}  runs on f'"]
    for label, a, b, inside in rows:
        bar_a = "#" * round(BAR * a / top)
        bar_b = "#" * round(BAR * b / top)
        mark = "  <- event" if inside else ""
        lines.append(f"{label:<{width}}  {bar_a:<{BAR}} {a:>6}  {bar_b:<{BAR}} {b:>6}{mark}")
    return lines


def _bound(data: Mapping[str, Any]) -> str:
    """The certified lower bound of a witness against its claim (rho for a Renyi test, eps otherwise)."""
    if "rho_lower_bound" in data:
        return (f"rho lower bound {_shown(data.get('rho_lower_bound'))} vs claimed "
                f"{_shown(data.get('claimed_rho'))}")
    return f"eps lower bound {_shown(data.get('eps_lower_bound'))} vs claimed {_shown(data.get('claimed_eps'))}"


def _shown(x: Any) -> str:
    return f"{x:.4g}" if isinstance(x, float) else str(x)


def witness_png(data: Mapping[str, Any], path: Path, title: str = "witness") -> bool:
    """The witness as a PNG (two histograms, the event's threshold marked); False when matplotlib is missing."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    hist = data["histogram"]
    edges = [_number(e) for e in hist["edges"]]
    if len(edges) < 2:
        return False
    inner_f, inner_fp = list(hist["f"])[1:-1], list(hist["f_prime"])[1:-1]
    fig, ax = plt.subplots(figsize=(7, 3.6))
    ax.stairs(inner_f, edges, label=f"f ({sum(hist['f'])} runs)", linewidth=1.5)
    ax.stairs(inner_fp, edges, label=f"f' ({sum(hist['f_prime'])} runs)", linewidth=1.5, linestyle="--")
    c = _number(hist["threshold"])
    if math.isfinite(c):
        ax.axvline(c, color="black", linewidth=1)
    counts = data.get("counts", {})
    where = (f"{counts.get('runs')} held-out runs per input" if "rho_lower_bound" in data else
             f"in the event: {counts.get('favoured')} vs {counts.get('other')} of {counts.get('runs')}")
    ax.set_title(f"{title}: {str(data.get('event', ''))[:90]}\n{where}; {_bound(data)}", fontsize=8)
    ax.set_xlabel("statistic of the witness (held-out runs)")
    ax.set_ylabel("runs")
    ax.legend(fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    write_figure(fig, path)
    plt.close(fig)
    return True


def text_block(lines: Sequence[str]) -> list[str]:
    return ["```", *lines, "```"]
