"""Online selective counting (001-alg4) as a generic meta-algorithm, and Algorithm 3 as its instance."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from dpstream.claims import Measure, Neighbour, PrivacyClaim
from dpstream.counters import SimpleCounter
from dpstream.errors import DPStreamInputError
from dpstream.insecure import InsecureSeededNoise, InsecureZeroNoise
from dpstream.noise import scoped
from dpstream.phdstream import HypercubePartition, PHDStream, PointEvents
from dpstream.phdstream.counters_tree import LeafCounters, PHDStreamTreeWithCounters, PrivTreeSelector
from dpstream.selective_counting import SelectiveCounting, SelectiveRelease, compose_selective_claim


class ParitySelector:
    """A toy M: counter 'even' or 'odd' by the parity of the input (eps_M = 0.3 stated for the test)."""

    def __init__(self) -> None:
        self.seen_history: list[int] = []

    @property
    def claim(self) -> PrivacyClaim:
        return PrivacyClaim.pure(0.3, Neighbour.STREAM_ENTRY, "toy")

    def select(self, t: int, x: int, history: Sequence[SelectiveRelease[Any]]) -> str:
        self.seen_history.append(len(history))
        return "even" if x % 2 == 0 else "odd"


def make(as_printed: bool = False) -> tuple[SelectiveCounting[int, str], ParitySelector]:
    noise = InsecureZeroNoise()
    sel = ParitySelector()
    alg: SelectiveCounting[int, str] = SelectiveCounting(
        sel, lambda l: SimpleCounter(0.5, noise=scoped(noise, l)), PrivacyClaim.pure(0.5, Neighbour.STREAM_ENTRY, "x"),
        as_printed=as_printed)
    return alg, sel


def test_only_the_selected_counter_steps() -> None:
    alg, sel = make()
    out = [alg.step(x) for x in [2, 3, 4, 5, 7]]
    assert [r.l for r in out] == ["even", "odd", "even", "odd", "odd"]
    assert alg.J == {"even": [1, 3], "odd": [2, 4, 5]}
    assert [r.output for r in out] == [2.0, 3.0, 6.0, 8.0, 15.0]  # zero noise: running sums per counter
    assert sel.seen_history == [0, 1, 2, 3, 4]  # default: the whole output history


def test_as_printed_passes_only_the_last_release() -> None:
    alg, sel = make(as_printed=True)
    for x in [1, 2, 3]:
        alg.step(x)
    assert sel.seen_history == [0, 1, 1]


def test_stage_run_draws_several_steps_and_commits_them_together() -> None:
    """An atomic run of consecutive steps: nothing changes until the commit; each step sees the run's earlier
    releases; ``after`` runs between steps; a counter selected twice in one run is refused before any change."""
    alg, sel = make()
    alg.step(1)
    seen: list[int] = []
    run = alg.stage_run(iter([2, 3]), after=lambda r: seen.append(r.t))
    releases = run.release
    assert [(r.t, r.l, r.output) for r in releases] == [(2, "even", 2.0), (3, "odd", 4.0)]
    assert seen == [2, 3] and sel.seen_history == [0, 1, 2]  # the second step saw the first one's release
    odd = alg.counters["odd"]
    assert isinstance(odd, SimpleCounter)
    assert alg.t == 1 and alg.J == {"odd": [1]} and odd.t == 1  # nothing committed yet
    run.commit()
    assert alg.t == 3 and alg.J == {"odd": [1, 3], "even": [2]} and len(alg.releases) == 3
    assert alg.step(5).output == 9.0  # odd counter: 1 + 3 + 5
    with pytest.raises(DPStreamInputError):
        alg.stage_run([7, 9])  # both odd: one counter twice in one run
    assert alg.t == 4 and odd.t == 3


def test_composed_claim_of_theorem_4_2() -> None:
    alg, _ = make()
    c = alg.claim
    assert c.measure is Measure.PURE_DP and c.parameter == pytest.approx(0.8) and c.source == "001-thm4.2"
    z = compose_selective_claim(PrivacyClaim.zcdp(0.1, Neighbour.EVENT, "m"),
                                PrivacyClaim.zcdp(0.2, Neighbour.STREAM_ENTRY, "c"))
    assert z.measure is Measure.ZCDP and z.parameter == pytest.approx(0.3)
    with pytest.raises(DPStreamInputError):
        compose_selective_claim(PrivacyClaim.pure(1, Neighbour.EVENT, "m"),
                                PrivacyClaim.zcdp(0.2, Neighbour.STREAM_ENTRY, "c"))


def test_counter_exceeding_the_declared_claim_is_refused() -> None:
    alg: SelectiveCounting[int, str] = SelectiveCounting(
        ParitySelector(), lambda l: SimpleCounter(2.0, noise=InsecureZeroNoise()),
        PrivacyClaim.pure(0.5, Neighbour.STREAM_ENTRY, "x"))
    with pytest.raises(DPStreamInputError):
        alg.step(1)
    assert alg.t == 0


def test_algorithm_3_is_an_instance_of_algorithm_4() -> None:
    P = HypercubePartition(2, 3)
    alg = PHDStream(P, 1.0, 0.0, noise=InsecureSeededNoise(1), counter=lambda e, n: SimpleCounter(e, noise=n))
    tree = alg.tree
    assert isinstance(tree, PHDStreamTreeWithCounters)
    assert isinstance(tree.selective, SelectiveCounting)
    assert isinstance(tree.selective.selector, PrivTreeSelector)
    for _ in range(3):
        release = alg.step(PointEvents.of([[0.1, 0.2]] * 10 + [[0.8, 0.7]] * 5))
        g = tree.selective.releases[-1]
        assert g.l == release.tree  # l_t = T(t)
        assert isinstance(tree.selective.counters[g.l], LeafCounters)
        assert len(g.output) == len(release.tree.leaves)  # C_{l_t}: the leaf counters L(T(t))
    assert sum(len(ts) for ts in tree.selective.J.values()) == 3
    assert tree.selective.claim.parameter == pytest.approx(1.0)  # eps/2 (PrivTree) + eps/2 (counters)
