"""docs/guarantees.md names, for each invariant, the test that holds it (issue 46): every test it
names exists, so the table cannot point at a test that was renamed or deleted."""

from __future__ import annotations

import ast
import re

from tests.conftest import PROJECT

DOC = PROJECT / "docs" / "guarantees.md"
NAMED = re.compile(r"`(tests/[\w/]+\.py)?::(test_\w+)")


def _named() -> list[tuple[str, str]]:
    """(module, test) of every test the invariants table names; a `::test` alone is of the
    module named before it in the same cell."""
    table = DOC.read_text(encoding="utf-8").split("## Invariants and the tests that hold them", 1)[
        1
    ]
    found = []
    for row in table.splitlines():
        module = ""
        for path, test in NAMED.findall(row):
            module = path or module
            found.append((module, test))
    return found


def test_every_test_the_invariants_name_exists() -> None:
    named = _named()
    assert len(named) >= 20
    missing = []
    for module, test in named:
        tree = ast.parse((PROJECT / module).read_text(encoding="utf-8"))
        defined = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
        if test not in defined:
            missing.append(f"{module}::{test}")
    assert missing == []
