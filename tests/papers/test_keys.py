"""A paper is one unit: its key is registered once (``fedtheory.papers.LEDGER``) and every layer reads it."""
from __future__ import annotations

import ast
from pathlib import Path

import fedtheory
from fedtheory import claims
from fedtheory.papers import LEDGER, LEDGER_KEYS, PAPER_KEYS
from fedtheory.report.html import NOTEBOOKS

PACKAGE = Path(fedtheory.__file__).resolve().parent
REGISTRY = PACKAGE / "papers" / "__init__.py"
#: Static lists that hold paper keys as other things' names, with why.
NOT_PAPER_LISTS = {
    "conformance/families/__init__.py": "the conformance families, named after algorithms (fedred, efl, docofl, "
                                        "ofediq are algorithms too); the kit checks implementations, not papers",
}


def test_every_layer_reads_the_one_registry():
    assert claims.PAPERS == LEDGER_KEYS
    assert PAPER_KEYS == tuple(k for k in LEDGER_KEYS if (PACKAGE / "papers" / f"{k}.py").exists())
    assert set(NOTEBOOKS) == set(LEDGER_KEYS)
    for key in LEDGER_KEYS:
        assert (PACKAGE / "claims" / key / "__init__.py").exists(), key


def test_the_notebooks_named_exist():
    notebooks = PACKAGE.parent / "notebooks"
    if notebooks.is_dir():  # a source checkout
        for k in LEDGER:
            assert (notebooks / k.notebook).exists(), k.notebook


def _static_key_lists(source: str) -> list[int]:
    """Lines of tuple/list/set literals (or dict keys) holding four or more ledger keys as strings."""
    keys = set(LEDGER_KEYS)
    lines = []
    for node in ast.walk(ast.parse(source)):
        items = node.elts if isinstance(node, (ast.Tuple, ast.List, ast.Set)) else \
            node.keys if isinstance(node, ast.Dict) else []
        found = {e.value for e in items if isinstance(e, ast.Constant) and e.value in keys}
        if len(found) >= 4:
            lines.append(node.lineno)
    return lines


def test_no_other_static_list_of_paper_keys():
    offenders = {str(p.relative_to(PACKAGE)): lines for p in sorted(PACKAGE.rglob("*.py"))
                 if p != REGISTRY and str(p.relative_to(PACKAGE)) not in NOT_PAPER_LISTS
                 and (lines := _static_key_lists(p.read_text()))}
    assert not offenders, f"paper keys listed outside fedtheory/papers/__init__.py (read LEDGER instead): {offenders}"


def test_the_rule_finds_a_static_list():
    assert _static_key_lists('KEYS = ("fedelasticnet", "docofl", "fedred", "ofediq")') == [1]
    assert _static_key_lists('X = {"classic": 1, "efl": 2, "neural": 3, "docofl": 4}') == [1]
    assert _static_key_lists('runs = ("docofl", "efl", "fedred", "fedavg")') == []  # algorithm names, three keys
