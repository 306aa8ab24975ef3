"""The padding population made explicit (002-npad, 002-debias).

Algorithm 1 adds n_pad "fake" people to every bin of every window histogram
(002-alg1 u3: C_s^t + n_pad). Such a population exists: take a de Bruijn sequence B of order
k over the alphabet (a cyclic sequence of length A^k in which every k-string occurs exactly
once as a cyclic window) and let fake person (r, j), r = 0..A^k-1, j = 1..n_pad, report
B[(r + t) mod A^k] at time t. At every t >= k the A^k rotations show every k-string exactly
once, so the padding's width-k histogram is n_pad in every bin.

Debiasing (Appendix C: "subtract the query answer on the padding data from the query answer
on the complete synthetic data") uses this population. For windows of width w <= k it
subtracts exactly n_pad A^{k-w} per pattern, the paper's "subtract n_pad from each noisy
count" (002-debias); for wider windows (no guarantee, Figure 3's bottom panel) the paper
leaves the padding's answer unspecified and this population is our definition.
"""

from __future__ import annotations

import numpy as np

from dpstream.errors import require_int_at_least
from dpstream.longitudinal.data import IntArray, frozen

__all__ = ["de_bruijn", "padding_matrix"]


def de_bruijn(k: int, alphabet: int = 2) -> list[int]:
    """A cyclic de Bruijn sequence of order k over {0, ..., alphabet-1} (length alphabet^k).

    Built by the "prefer the largest symbol" rule: start from k zeros and append the largest
    symbol whose new k-window has not been seen; the first alphabet^k symbols, read
    cyclically, contain every k-string exactly once (Martin 1934).
    """
    k = require_int_at_least("k", k, 1)
    alphabet = require_int_at_least("alphabet", alphabet, 2)
    seq = [0] * k
    seen = {tuple(seq)}
    while True:
        for symbol in range(alphabet - 1, -1, -1):
            window = (*seq[len(seq) - k + 1:], symbol) if k > 1 else (symbol,)
            if window not in seen:
                seen.add(window)
                seq.append(symbol)
                break
        else:
            break
    return seq[: alphabet**k]


def padding_matrix(k: int, T: int, n_pad: int, alphabet: int = 2) -> IntArray:
    """The (A^k n_pad) x T padding population: n_pad copies of each rotation of the de Bruijn sequence."""
    k = require_int_at_least("k", k, 1)
    T = require_int_at_least("T", T, 1)
    n_pad = require_int_at_least("n_pad", n_pad, 0)
    B = np.asarray(de_bruijn(k, alphabet), dtype=np.int64)
    L = B.size
    rotations = np.array([[B[(r + t) % L] for t in range(1, T + 1)] for r in range(L)], dtype=np.int64)
    return frozen(np.repeat(rotations, n_pad, axis=0).reshape(L * n_pad, T))
