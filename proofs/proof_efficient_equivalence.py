"""Proof note — section C.1: Algorithm 6/7 (001-alg6, 001-alg7) releases what Algorithm 1/3 releases.

Claim
-----
Fed the same stream and the same noise (a tape keyed by the same sites), Algorithm 6/7 and the naive
Algorithm 3 (with Simple counters of budget eps/2; Algorithm 1 has the same law) select the same
T(t) and release the same G(v, t) on the vertices of T(t), at every t.

Proof
-----
Let D_t(v) = sum_{t' <= t, v in L(T(t'))} d(v, t') (for counters: C_v's current output; this is C_n(v)).
Ext_T is linear, so the naive G(., t) = sum_{t'<=t} Ext_T(d(., t')) = Ext_T(D_t), i.e.

    G(u, t) = sum_{v strict ancestor of u} D_t(v) beta^{-(depth u - depth v)} + D_t(u)
              + sum_{v strict descendant of u} D_t(v)
            = C_a(u) + C_n(u) + C_d(u),

with C_a, C_d the closed forms of (10) and (11) [checked symbolically below on full trees].

Code (reference/dpstream/phdstream/efficient.py, ``EfficientPHDStream._algorithm7``)
-----------------------------------------------------------------------------------
* ``[001-alg7 L11]`` ``C_a[v] = (C_a(p) + C_n(p)) / part.beta`` (p the parent, top-down in BFS order): (10);
* ``[001-alg7 L12]`` ``s = C_a(v) + C_n(v) + C_d(v)``; ``[001-alg7 L13]``-``[001-alg7 L14]`` b(v) on s + H(v);
* ``[001-alg7 L15]`` the draw at ``privtree_site(v, t)``, the site of 001-alg5 L11;
* ``[001-alg7 L20]`` ``C_n[v] = self.counters.get(v).stage(H).release`` for the leaves of T(t);
* ``[001-alg7 L25]`` ``C_d[v] = sum(C_d(w) + C_n(w) for w in part.children(v))`` popping the stack: (11);
* ``[001-alg6 L7]`` the released G(v) = C_a(v) + C_n(v) + C_d(v).

Invariants of Algorithm 7 (by induction over t):
(I1) C_d(v) = sum of D_t over the strict descendants of v, for *every* v. D_t changes only at leaves
     of T(t); their ancestors are exactly the split vertices of T(t), which L23-L25 update bottom-up
     (the stack pops deeper vertices first, since BFS pushes by non-decreasing depth).
(I2) C_a(v) is correct for every v in T(t) after step t: L11 recomputes it top-down (BFS: the parent
     first) from the parent's C_a and C_n, and the parent's C_n does not change at step t (a split
     vertex is not a leaf). Vertices outside T(t) may hold stale C_a; they are recomputed by L11 when
     next visited, before being read.
When v is visited at step t, s(v) = C_a(v) + C_n(v) + C_d(v) uses C_n(v) = D_{t-1}(v) (L20 comes after
the decision) and C_d(v) = descendants' D_{t-1} (they are visited later), so s(v) = G(v, t-1) and
b(v) of L13 equals Algorithm 5's b(v) on G(., t-1) + nabla F(., t). L15 draws at the site of Algorithm 5
L11, so the decisions agree and T(t) is the same; L20 steps the same counter C_v with the same input,
so D_t agrees; by (I1), (I2) the released values agree. Floating point: the two algorithms add the same
numbers in different orders; the property test compares with relative tolerance 1e-9 (and the trees
exactly). With as_printed L3 / L20 the scales differ from Algorithm 1's (E-phdstream-6): no equivalence.

Checks below: (10)/(11) give Ext_T symbolically on full trees; then the code: the state of
``EfficientPHDStream`` after every step satisfies (I1) and (I2) with D_t = C_n, its releases are Ext_T(D_t)
on T(t), and replaying its tape through the naive ``PHDStream`` (Algorithm 3, Simple counters) gives the
same trees and values.
"""

from __future__ import annotations

import math

import numpy as np
import sympy as sp

from dpstream.insecure import InsecureSeededNoise, TapeRecorder, TapeReplay
from dpstream.noise import data_rng
from dpstream.phdstream import EfficientPHDStream, HypercubePartition, PHDStream, PointEvents
from dpstream.phdstream.partition import Node, Partition


def _check(partition: Partition) -> None:
    nodes = list(partition.nodes())
    Dsym = {v: sp.Symbol("D_" + ("r" + "".join(map(str, v)))) for v in nodes}
    beta = partition.beta

    def ext(u: Node) -> sp.Expr:  # Ext_T(D)(u) by the section 3.2 weights
        total = sp.Integer(0)
        for v in nodes:
            if u[:len(v)] == v:
                total += Dsym[v] * sp.Rational(1, beta ** (len(u) - len(v)))
            elif v[:len(u)] == u:
                total += Dsym[v]
        return total

    C_a: dict[Node, sp.Expr] = {(): sp.Integer(0)}
    for v in nodes:  # (10), top-down
        if v:
            C_a[v] = (C_a[v[:-1]] + Dsym[v[:-1]]) / beta
    C_d: dict[Node, sp.Expr] = {}
    for v in reversed(nodes):  # (11), bottom-up
        C_d[v] = sum((C_d[w] + Dsym[w] for w in partition.children(v)), sp.Integer(0))
    for u in nodes:
        assert sp.simplify(C_a[u] + Dsym[u] + C_d[u] - ext(u)) == 0


def test_recursions_10_11_give_ext_binary() -> None:
    _check(HypercubePartition(2, 3))


def test_recursions_10_11_give_ext_ternary() -> None:
    _check(HypercubePartition(1, 2, fanout=3))


def test_efficient_state_keeps_the_invariants_and_equals_the_naive_algorithm() -> None:
    """EfficientPHDStream on a 2-d tree of depth 3 (6 steps of inserts and removals): after each step, with
    D = C_n, (I1) C_d(v) = sum of D over the strict descendants of every v, (I2) C_a(v) = sum over the strict
    ancestors a of D(a) beta^{-(depth v - depth a)} on T(t), G(v) = Ext_T(D)(v) on T(t); the naive PHDStream
    replaying the same tape releases the same T(t) and values."""
    P = HypercubePartition(2, 3)
    nodes = list(P.nodes())
    rng = data_rng(4)
    present: list[list[float]] = []
    batches = []
    for _ in range(6):
        added = (rng.random((int(rng.integers(3, 12)), 2)) ** 2).tolist()
        removed = [present.pop(int(rng.integers(0, len(present)))) for _ in range(min(2, len(present)))]
        present += added
        batches.append(PointEvents.of(added + removed, [1] * len(added) + [-1] * len(removed)))
    recorder = TapeRecorder(InsecureSeededNoise(9))
    eff = EfficientPHDStream(P, 1.0, 0.0, noise=recorder)
    releases = []
    for batch in batches:
        release = eff.step(batch)
        releases.append(release)
        D = {v: eff.C_n.get(v, 0.0) for v in nodes}
        for v in nodes:
            below = math.fsum(D[w] for w in nodes if len(w) > len(v) and w[:len(v)] == v)
            assert math.isclose(eff.C_d.get(v, 0.0), below, rel_tol=1e-9, abs_tol=1e-9)  # (I1)
        for u in release.tree.nodes:
            above = math.fsum(D[u[:i]] / P.beta ** (len(u) - i) for i in range(len(u)))
            assert math.isclose(eff.C_a.get(u, 0.0), above, rel_tol=1e-9, abs_tol=1e-9)  # (I2)
            ext = above + D[u] + math.fsum(D[w] for w in nodes if len(w) > len(u) and w[:len(u)] == u)
            assert math.isclose(release.node_values[u], ext, rel_tol=1e-9, abs_tol=1e-9)
    assert max(len(r.tree) for r in releases) > 1
    with TapeReplay(recorder.tape) as replay:
        naive = PHDStream(P, 1.0, 0.0, noise=replay, counter=eff.counters.factory)
        for batch, ra in zip(batches, releases, strict=True):
            rb = naive.step(batch)
            assert ra.tree == rb.tree
            assert np.allclose([ra.node_values[v] for v in ra.tree.nodes], [rb.node_values[v] for v in ra.tree.nodes],
                               rtol=1e-9, atol=1e-9)
