"""On-demand mutation check of the conformance harness's own comparisons (issue 22, part 4); not part of `make test`.

Each mutant loosens (or otherwise changes) one rule of the release comparison (`dpstream.catalog.codecs.compare`),
of tape mode's judgement of draw requests (`dpstream.conformance.tape_mode`, `dpstream.tape.params_equal`), of the
verdict logic (`dpstream.conformance.outcome`) or of the must-reject accounting (`dpstream.conformance.vector_checks`,
`runner`). The script copies `reference/` into a temporary folder, applies one mutant at a time to the copy (text
replacement; the working tree is never touched), runs the mutant's pin tests against the copy (`PYTHONPATH` puts it
first, for the programs the tests start too) and reports `killed` (a test failed) or `survived`. Exit status 0
when every mutant is killed, 1 when one survived, 2 when a mutant no longer applies (its text is not found exactly
once in the source) or pytest could not run.

    .venv/bin/python tools/mutation_check.py                # every mutant against its pin tests (a few minutes)
    .venv/bin/python tools/mutation_check.py --list
    .venv/bin/python tools/mutation_check.py --only compare-tolerance-1e-3 compare-extra-items \\
        -- tests/conformance/test_conform.py -k "not statistical"    # other tests instead of the pins
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CODECS = "dpstream/catalog/codecs/__init__.py"
TAPE_MODE = "dpstream/conformance/tape_mode.py"
TAPE = "dpstream/tape.py"
OUTCOME = "dpstream/conformance/outcome.py"
CHECKS = "dpstream/conformance/vector_checks.py"
RUNNER = "dpstream/conformance/runner.py"

COMPARE_TESTS = ("tests/catalog/test_compare_pins.py", "tests/conformance/test_draw_pins.py")
DRAW_TESTS = ("tests/conformance/test_draw_pins.py",)
VERDICT_TESTS = ("tests/conformance/test_verdict_pins.py",)
ACCOUNTING_TESTS = ("tests/conformance/test_must_reject_accounting.py",)


@dataclass(frozen=True)
class Mutant:
    name: str
    path: str  # relative to reference/
    edits: tuple[tuple[str, str], ...]  # (text, replacement), each text found exactly once
    tests: tuple[str, ...]
    what: str


def _m(name: str, path: str, tests: tuple[str, ...], what: str, *edits: tuple[str, str]) -> Mutant:
    return Mutant(name, path, edits, tests, what)


LIMIT = "limit = tolerance.absolute + tolerance.relative * abs(expected)"
LENGTH = "if len(expected) != len(got):"
STRICT = ("zip(expected, got, strict=True)", "zip(expected, got, strict=False)")
KEYS = "if set(expected) != set(got):"

MUTANTS: tuple[Mutant, ...] = (
    # ------------------------------------------------------------------ release comparison
    _m("compare-tolerance-1e-3", CODECS, COMPARE_TESTS, "any release within 1e-3 accepted (named in the issue)",
       (LIMIT, "limit = max(1e-3, tolerance.absolute + tolerance.relative * abs(expected))")),
    _m("compare-extra-items", CODECS, COMPARE_TESTS, "a list with extra items accepted (named in the issue)",
       (LENGTH, "if len(expected) > len(got):"), STRICT),
    _m("compare-missing-items", CODECS, COMPARE_TESTS, "a list with missing items accepted",
       (LENGTH, "if len(expected) < len(got):"), STRICT),
    _m("compare-nested-lists-unchecked", CODECS, COMPARE_TESTS, "lists below the top level not compared",
       ('diff = compare(e, g, tolerance, f"{where}[{i}]")',
        'diff = None if isinstance(e, list) else compare(e, g, tolerance, f"{where}[{i}]")')),
    _m("compare-boundary-exclusive", CODECS, COMPARE_TESTS, "the tolerance boundary excluded",
       ("gap <= limit", "gap < limit")),
    _m("compare-relative-doubled", CODECS, COMPARE_TESTS, "the relative tolerance doubled",
       (LIMIT, "limit = tolerance.absolute + 2 * tolerance.relative * abs(expected)")),
    _m("compare-relative-to-got", CODECS, COMPARE_TESTS, "the relative tolerance taken of the larger of the two",
       (LIMIT, "limit = tolerance.absolute + tolerance.relative * max(abs(expected), abs(float(got)))")),
    _m("compare-integer-within-tolerance", CODECS, COMPARE_TESTS, "an integer expected matched within the "
       "tolerance by a float (the rule before this change)",
       ("if isinstance(expected, int):", "if isinstance(expected, int) and isinstance(got, int):")),
    _m("compare-nan-accepted", CODECS, COMPARE_TESTS, "NaN matches (a comparison that NaN does not fail)",
       ("if math.isfinite(gap) and gap <= limit:", "if not gap > limit:")),
    _m("compare-extra-keys", CODECS, COMPARE_TESTS, "an object with extra keys accepted",
       (KEYS, "if not set(expected) <= set(got):")),
    _m("compare-missing-keys", CODECS, COMPARE_TESTS, "an object with missing keys accepted",
       (KEYS, "if not set(got) <= set(expected):"), ("for key in expected:", "for key in set(expected) & set(got):")),
    _m("compare-booleans-are-numbers", CODECS, COMPARE_TESTS, "booleans taken for numbers",
       ("return isinstance(value, int | float) and not isinstance(value, bool)",
        "return isinstance(value, int | float)")),
    _m("compare-types-ignored", CODECS, COMPARE_TESTS, "other values compared without their type (true == 1)",
       ("return None if expected == got and type(expected) is type(got) else",
        "return None if expected == got else")),
    _m("compare-spelling-matters", CODECS, COMPARE_TESTS, "a number must have the expected's type (2 for 2.0 fails)",
       ("if not _is_number(got):", "if not _is_number(got) or type(got) is not type(expected):")),
    _m("known-answer-fixed-tolerance", CHECKS, DRAW_TESTS, "the known-answer check ignores the vector's tolerance",
       ("diff = compare(want, reply.value, tolerance)", "diff = compare(want, reply.value, Tolerance(1e-3, 1e-3))")),
    # ------------------------------------------------------------------ draw requests
    _m("draws-tolerance-1e-3", TAPE_MODE, DRAW_TESTS, "the vector's draw tolerance loosened to 1e-3 relative",
       ("params_equal(checked[k], recorded.params[k], self.tolerance.relative, self.tolerance.absolute)",
        "params_equal(checked[k], recorded.params[k], 1e-3, self.tolerance.absolute)")),
    _m("draws-tolerance-bit-exact", TAPE_MODE, DRAW_TESTS, "bit equality demanded (an evaluation-order difference "
       "flagged)", ("params_equal(checked[k], recorded.params[k], self.tolerance.relative, self.tolerance.absolute)",
                    "params_equal(checked[k], recorded.params[k], 0.0, 0.0)")),
    _m("draws-tolerance-relative-only", TAPE, DRAW_TESTS, "the absolute part of the draw tolerance dropped (a zero "
       "score must be bit-exact)", ("return math.isfinite(gap) and gap <= atol + rtol * abs(b)",
                                    "return math.isfinite(gap) and gap <= rtol * abs(b)")),
    _m("draws-tolerance-ignored", CHECKS, DRAW_TESTS, "the known-answer check ignores the vector's draw tolerance",
       ("answerer = TapeAnswerer(vector.tape, vector.draw_tolerance)\n    releases: list[Any] = []",
        "answerer = TapeAnswerer(vector.tape)\n    releases: list[Any] = []")),
    _m("draws-repeated-ignored", TAPE_MODE, DRAW_TESTS, "a site asked twice ignored",
       ("if site in self.used:", "if site in self.used and False:")),
    _m("draws-unexpected-ignored", TAPE_MODE, DRAW_TESTS, "a site not on the tape ignored",
       ('self.issues.append(DrawIssue(self.step, site, "unexpected-site", None, f"{kind.value} {checked}"))',
        "pass")),
    _m("draws-missing-ignored", TAPE_MODE, DRAW_TESTS, "a site never asked ignored",
       ("return [d.site for d in self.tape.draws if d.site not in self.used]", "return []")),
    _m("draws-kind-ignored", TAPE_MODE, DRAW_TESTS, "another kind accepted",
       ("if recorded.kind is not kind:", "if False:")),
    _m("draws-extra-keys-ignored", TAPE_MODE, DRAW_TESTS, "extra parameter keys accepted",
       ("elif set(params) != set(recorded.params):", "elif not set(recorded.params) <= set(params):")),
    _m("draws-malformed-ignored", TAPE_MODE, DRAW_TESTS, "a malformed request ignored",
       ('self.issues.append(DrawIssue(self.step, str(site), "malformed", None, f"{draw!r} ({exc})"))', "pass")),
    _m("draws-refused-step-kept", TAPE_MODE, DRAW_TESTS, "the draws of a refused step kept",
       ("self.used.discard(site)", "pass")),
    _m("draws-integers-with-tolerance", TAPE, DRAW_TESTS, "integer parameters compared within the tolerance",
       ("if isinstance(requested, float) or isinstance(recorded, float):", "if not isinstance(requested, str):")),
    _m("draws-list-extra-items", TAPE, DRAW_TESTS, "a list parameter with extra items accepted",
       ("len(requested) == len(recorded)", "len(requested) >= len(recorded)"),
       ("zip(requested, recorded, strict=True)", "zip(requested, recorded, strict=False)")),
    # ------------------------------------------------------------------ verdicts
    _m("verdict-inconclusive-raises", OUTCOME, VERDICT_TESTS, "inconclusive raises the exit status",
       ("Verdict.INCONCLUSIVE: 0", "Verdict.INCONCLUSIVE: 1")),
    _m("verdict-skipped-raises", OUTCOME, VERDICT_TESTS, "skipped raises the exit status",
       ("Verdict.SKIPPED: 0", "Verdict.SKIPPED: 1")),
    _m("verdict-deviation-passes", OUTCOME, VERDICT_TESTS, "a deviation exits 0",
       ("Verdict.DEVIATION: 1", "Verdict.DEVIATION: 0")),
    _m("verdict-violation-as-deviation", OUTCOME, VERDICT_TESTS, "a violation exits 1",
       ("Verdict.VIOLATION: 2", "Verdict.VIOLATION: 1")),
    _m("verdict-best-wins", OUTCOME, VERDICT_TESTS, "the best verdict decides",
       ("return max(found, key=severity)", "return min(found, key=severity)")),
    _m("verdict-first-wins", OUTCOME, VERDICT_TESTS, "the first verdict decides",
       ("return max(found, key=severity)", "return found[0]")),
    _m("verdict-violation-outranks-protocol-error", OUTCOME, VERDICT_TESTS, "a violation outranks a protocol error",
       ("return verdict.exit_code, list(Verdict).index(verdict)",
        "return (9 if verdict is Verdict.VIOLATION else verdict.exit_code), list(Verdict).index(verdict)")),
    _m("verdict-privacy-column-ignored", OUTCOME, VERDICT_TESTS, "an outcome's privacy column ignored",
       ("return worst(v for v in (self.conformance, self.privacy) if v is not None)",
        "return worst(v for v in (self.conformance,) if v is not None)")),
    _m("verdict-tie-order-reversed", OUTCOME, VERDICT_TESTS, "pass ranked above inconclusive and skipped",
       ("list(Verdict).index(verdict)", "-list(Verdict).index(verdict)")),
    # ------------------------------------------------------------------ must-reject accounting
    _m("accounting-replay-difference-counted", CHECKS, ACCOUNTING_TESTS, "a known-answer difference of the "
       "replayed vector counted as a must-reject deviation (the behaviour before this change)",
       ("diff = without.difference(after, follow.tolerance)",
        "diff = outcome.message if outcome.verdict is not Verdict.PASS else None")),
    _m("accounting-usability-unchecked", CHECKS, ACCOUNTING_TESTS, "the replay after a refusal not compared",
       ("diff = without.difference(after, follow.tolerance)", "diff = None")),
    _m("accounting-draws-uncompared", CHECKS, ACCOUNTING_TESTS, "the draw requests of the replays not compared",
       ("if self.draws != other.draws:", "if False:")),
    _m("accounting-releases-uncompared", CHECKS, ACCOUNTING_TESTS, "the releases of the replays not compared",
       ('diff = compare(list(self.releases), list(other.releases), tolerance, "releases")', "diff = None")),
    _m("accounting-refused-step-uncompared", CHECKS, ACCOUNTING_TESTS, "the refused step of the replays ignored",
       ("if self.refused_at != other.refused_at:", "if False:")),
    _m("accounting-acceptance-uncompared", CHECKS, ACCOUNTING_TESTS, "the acceptance of the replays ignored",
       ("if self.accepted != other.accepted:", "if False:")),
    _m("accounting-accepted-invalid-init", CHECKS, ACCOUNTING_TESTS, "invalid parameters accepted without a word",
       ("    if refused is None:\n        return Outcome(mode, alg, vector.id, Verdict.DEVIATION,\n"
        "                       message=f\"invalid parameters accepted",
        "    if False:\n        return Outcome(mode, alg, vector.id, Verdict.DEVIATION,\n"
        "                       message=f\"invalid parameters accepted")),
    _m("accounting-replayed-vector-unreported", RUNNER, ACCOUNTING_TESTS, "without known-answer mode the replayed "
       "vectors are not checked", ("checked = [v for v in vectors if v.id in named]", "checked = []")),
)


def apply(mutant: Mutant, source: str) -> str:
    """``source`` with the mutant's edits; ValueError when an edit's text is not found exactly once or the
    mutated source does not compile (a mutant must change a rule, not break the import)."""
    for text, replacement in mutant.edits:
        count = source.count(text)
        if count != 1:
            raise ValueError(f"{mutant.name}: {text!r} found {count} times in {mutant.path}")
        source = source.replace(text, replacement)
    try:
        compile(source, mutant.path, "exec")
    except SyntaxError as exc:
        raise ValueError(f"{mutant.name}: the mutated {mutant.path} does not compile: {exc}") from exc
    return source


def run_tests(copy: Path, tests: list[str]) -> tuple[int, str]:
    env = {**os.environ, "PYTHONPATH": str(copy), "PYTHONDONTWRITEBYTECODE": "1"}
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-x", "--no-header",
                           *tests], cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    return done.returncode, (lines[-1] if lines else done.stderr.strip()[-300:])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--list", action="store_true", help="list the mutants and exit")
    parser.add_argument("--only", nargs="+", metavar="NAME", help="run only these mutants")
    parser.add_argument("pytest_args", nargs="*", help="after --: tests (and pytest options) instead of the pins")
    args = parser.parse_args(argv)
    mutants = [m for m in MUTANTS if not args.only or m.name in args.only]
    unknown = set(args.only or ()) - {m.name for m in MUTANTS}
    if unknown:
        parser.error(f"unknown mutants: {sorted(unknown)}")
    if args.list:
        for m in mutants:
            print(f"{m.name:45} {m.path:40} {m.what}")
        return 0
    for m in mutants:  # every mutant must apply before anything runs
        try:
            apply(m, (ROOT / "reference" / m.path).read_text(encoding="utf-8"))
        except ValueError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
    with tempfile.TemporaryDirectory(prefix="dpstream-mutants-") as tmp:
        copy = Path(tmp) / "reference"
        shutil.copytree(ROOT / "reference", copy, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        env = {**os.environ, "PYTHONPATH": str(copy)}
        where = subprocess.run([sys.executable, "-c", "import dpstream; print(dpstream.__file__)"], env=env,
                               capture_output=True, text=True, check=True).stdout.strip()
        if not where.startswith(str(copy)):
            print(f"error: the copy does not shadow the installed package ({where})", file=sys.stderr)
            return 2
        baseline, line = run_tests(copy, args.pytest_args or sorted({t for m in mutants for t in m.tests}))
        print(f"unmutated: {'passed' if baseline == 0 else 'FAILED'} ({line})")
        if baseline != 0:
            return 2
        survived: list[str] = []
        broken: list[str] = []
        for m in mutants:
            target = copy / m.path
            original = target.read_text(encoding="utf-8")
            target.write_text(apply(m, original), encoding="utf-8")
            started = time.perf_counter()
            try:
                status, line = run_tests(copy, args.pytest_args or list(m.tests))
            finally:
                target.write_text(original, encoding="utf-8")
            if status == 1 and " error" in line:  # the tests did not run to a failure: not a kill
                status = 3
            verdict = {0: "SURVIVED", 1: "killed"}.get(status, f"error (pytest exit {status})")
            print(f"{verdict:9} {m.name:45} {time.perf_counter() - started:5.1f} s  {m.what}  [{line}]", flush=True)
            (survived if status == 0 else broken if status != 1 else []).append(m.name)
    print(f"{len(mutants) - len(survived) - len(broken)} of {len(mutants)} mutants killed"
          + (f"; survived: {', '.join(survived)}" if survived else "")
          + (f"; errors: {', '.join(broken)}" if broken else ""))
    return 1 if survived else 2 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
