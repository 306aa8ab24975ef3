"""The JavaScript and Rust examples (examples/conformance/js, examples/conformance/rust) speak the protocol.

Written from the public docs alone (issue 22, part 3): 001-alg10 and 001-alg5 in tape and own mode, with the bulk op
``runs``. Every test of a language is skipped, with the reason, when its toolchain is missing (``node`` >= 18;
``cargo``). The Rust program is built with ``cargo build --offline --release`` into the project's own, git-ignored
``examples/conformance/rust/target`` (the folder its README builds into), so only the first build compiles (about
4 s on 2 cores) and later ones are no-ops. ``dpstream conform`` checks them as it checks any program: known-answer and
must-reject here, the (harness-bound, about 20 s) statistical runs under ``slow``. ``--as-printed`` (001-alg10's
printed scale log2(T)/eps) is the deliberately broken variant each check must catch.

The statistical tests state their false-alarm probability; all seeds are fixed.
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest

from dpstream.testing import load_script

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "conformance"
CRATE = EXAMPLES / "rust"
TARGET = CRATE / "target"
helpers: ModuleType = load_script(Path(__file__).resolve().parent / "example_programs.py")


def _node() -> tuple[str, ...]:
    return (helpers.node_or_skip("JS example"), str(EXAMPLES / "js" / "example.js"))


def _rust() -> tuple[str, ...]:
    helpers.cargo_build(CRATE, "Rust example")
    return (str(TARGET / "release" / "dpstream-example"),)


@pytest.fixture(scope="module", params=["js", "rust"])
def program(request: pytest.FixtureRequest) -> tuple[str, ...]:
    """The example's command line (the Rust one built first)."""
    return _node() if request.param == "js" else _rust()


def test_a_second_rust_build_compiles_nothing() -> None:
    """The build is incremental: once built, cargo only checks the sources' fingerprints."""
    helpers.cargo_build(CRATE, "Rust example")
    again = helpers.cargo_build(CRATE, "Rust example")
    assert "Compiling" not in again.stderr and "Finished" in again.stderr, again.stderr


def test_hello_lists_both_algorithms_modes_and_runs(program: tuple[str, ...]) -> None:
    helpers.check_hello(program)


def test_conform_known_answer_and_must_reject_pass(program: tuple[str, ...]) -> None:
    helpers.check_vectors_pass(program)


def test_conform_finds_the_printed_scale_in_known_answer_mode(program: tuple[str, ...]) -> None:
    helpers.check_as_printed_deviates(program)


def test_refused_messages_change_nothing(program: tuple[str, ...]) -> None:
    helpers.check_refusals_change_nothing(program)


def test_own_mode_is_seeded_and_runs_are_independent(program: tuple[str, ...]) -> None:
    helpers.check_seeded(program)


@pytest.mark.parametrize("as_printed", [False, True])
def test_own_mode_counter_noise_is_laplace_of_the_stated_scale(program: tuple[str, ...], as_printed: bool) -> None:
    helpers.check_counter_noise(program, as_printed)  # false-alarm probability 1e-6 (docstring there)


def test_own_mode_privtree_split_probability(program: tuple[str, ...]) -> None:
    helpers.check_privtree_split_probability(program)  # false-alarm probability 1e-6 (docstring there)


@pytest.mark.slow
def test_conform_statistical_counter_passes(program: tuple[str, ...]) -> None:
    """Quick statistical run of 001-alg10: exit 0 (false-alarm probability: the harness's budget, 1e-3)."""
    report = helpers.statistical(program)
    assert report.exit_status == 0, [o.message for o in report.outcomes][:3]
    assert len(report.outcomes) == 2


@pytest.mark.slow
def test_conform_certifies_the_printed_scale_in_statistical_mode(program: tuple[str, ...]) -> None:
    """``--as-printed`` in own mode: the noise is too small for eps-DP, a violation is certified (exit 2)."""
    assert helpers.statistical((*program, helpers.AS_PRINTED)).exit_status == 2
