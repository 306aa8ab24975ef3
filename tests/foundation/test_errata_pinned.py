"""Every erratum of docs/errata/ is pinned by a property test (``@pins("E-...")`` with an ``@example`` of the
erratum's case, in property_tests/), or listed below as documentation-only with the reason."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from dpstream.testing import ERRATUM_ID, pins

ROOT = Path(__file__).resolve().parents[2]

DOCUMENTATION_ONLY: dict[str, str] = {
    "E-hypercube-6": "wording of the proof of Lemma 3.3 ('parallel' for sequential composition); the budget eps_r and "
                     "the code are as printed (proofs/proof_sparse_counting.py::test_budget_arithmetic)",
    "E-hypercube-10": "algebra slips in the proof of Lemma 4.3, an accuracy lemma whose conclusion holds; no code "
                      "computes it (corrected identities in sympy: proofs/proof_hypercube_lemma43.py)",
    "E-hypercube-14": "typos in eq. (2.1) and in Lemma 3.4's n_r; no code reads either (the W_1 code computes the "
                      "coupling form, tests/hypercube/test_wasserstein.py)",
    "E-longitudinal-11": "notation of Corollary 3.3 (C_s^t under a max over s, t): read per bin; "
                         "bounds.corollary_3_3_bound takes the bin's count and its algebra is checked by "
                         "proofs/proof_longitudinal_fixed_window.py::test_corollary_3_3_algebra",
    "E-tabular-9": "constants in the proof of Theorem 5.1 (eq (18), u(k*)); no code computes them (sympy: "
                   "proofs/proof_tabular_streaming_mwem.py)",
}


def documented_errata() -> list[str]:
    ids: list[str] = []
    for fragment in sorted((ROOT / "docs" / "errata").glob("*.md")):
        ids += re.findall(r"^## (E-[a-z]+-\d+):", fragment.read_text(encoding="utf-8"), flags=re.M)
    return ids


def _decorator_name(node: ast.expr) -> str:
    target = node.func if isinstance(node, ast.Call) else node
    if isinstance(target, ast.Attribute):
        return target.attr
    return target.id if isinstance(target, ast.Name) else ""


def pinned_tests() -> dict[str, list[str]]:
    """Erratum id -> the property tests (file::function) that pin it, read from the source (decorators)."""
    out: dict[str, list[str]] = {}
    for path in sorted((ROOT / "property_tests").glob("test_*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for fn in ast.walk(tree):
            if not isinstance(fn, ast.FunctionDef):
                continue
            names = [_decorator_name(d) for d in fn.decorator_list]
            for d in fn.decorator_list:
                if isinstance(d, ast.Call) and _decorator_name(d) == "pins":
                    where = f"{path.name}::{fn.name}"
                    assert fn.name.startswith("test_") and "given" in names, f"{where}: @pins needs a @given test"
                    assert "example" in names, f"{where}: @pins needs an @example of the erratum's case"
                    for arg in d.args:
                        assert isinstance(arg, ast.Constant) and isinstance(arg.value, str), where
                        out.setdefault(arg.value, []).append(where)
    return out


def test_every_erratum_is_pinned_or_documentation_only() -> None:
    documented = documented_errata()
    assert len(documented) == len(set(documented)) >= 51
    pinned = pinned_tests()
    unknown = sorted((set(pinned) | set(DOCUMENTATION_ONLY)) - set(documented))
    assert not unknown, f"pinned or allow-listed ids that no docs/errata fragment defines: {unknown}"
    both = sorted(set(pinned) & set(DOCUMENTATION_ONLY))
    assert not both, f"pinned and allow-listed at once: {both}"
    missing = [e for e in documented if e not in pinned and e not in DOCUMENTATION_ONLY]
    assert not missing, f"errata without an @example-pinned property test (or a reason to have none): {missing}"
    assert all(len(reason) > 40 for reason in DOCUMENTATION_ONLY.values())


def test_pins_marks_the_function_and_refuses_bad_ids() -> None:
    @pins("E-counters-1", "E-audit-2")
    def f() -> None:
        """A stand-in."""

    assert f.pinned_errata == ("E-counters-1", "E-audit-2")  # type: ignore[attr-defined]
    assert ERRATUM_ID.fullmatch("E-longitudinal-10") and not ERRATUM_ID.fullmatch("E-counters")
    for bad in ((), ("E-counters",), ("counters-1",)):
        with pytest.raises(ValueError):
            pins(*bad)
