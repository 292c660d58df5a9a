"""The house's cheap signals, read from the code: modules and functions over a size, functions
taking a `bool`, imports made inside functions. tests/test_architecture.py bounds them; the
benchmarks print them (`python -m tests.benchmarks --only signals`)."""

from __future__ import annotations

import ast
from pathlib import Path


def oversized(root: Path, module_lines: int, function_lines: int) -> list[str]:
    """Modules over `module_lines` and functions over `function_lines` under `root`."""
    found = []
    for path in sorted(root.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        name = str(path.relative_to(root.parent))
        if len(text.splitlines()) > module_lines:
            found.append(f"{name}: {len(text.splitlines())} lines")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > function_lines:
                    found.append(f"{name}:{node.lineno}: {node.name} is {length} lines")
    return found


def bool_parameters(root: Path) -> list[str]:
    """Each function under root with a parameter annotated `bool` or `bool | None`."""
    found = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            given = [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]
            if any(
                a.annotation and ast.unparse(a.annotation) in ("bool", "bool | None") for a in given
            ):
                found.append(f"{path.relative_to(root).as_posix()}:{node.lineno}: {node.name}")
    return found


def function_imports(root: Path) -> list[str]:
    """Each `import runner…` inside a function under root, as `path:line: module`."""
    found = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for inner in ast.walk(node):
                if isinstance(inner, ast.ImportFrom) and (inner.module or "").startswith("runner"):
                    found.append(
                        f"{path.relative_to(root).as_posix()}:{inner.lineno}: {inner.module}"
                    )
                elif isinstance(inner, ast.Import):
                    found += [
                        f"{path.relative_to(root).as_posix()}:{inner.lineno}: {a.name}"
                        for a in inner.names
                        if a.name.startswith("runner")
                    ]
    return sorted(set(found))
