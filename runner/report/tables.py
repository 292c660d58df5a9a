"""Tables: tabulate (imported on first use), and a direct writer for its common plain case."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from runner.core.values import as_text


def tabulate(
    rows: Sequence[Sequence[Any]], headers: Sequence[str], tablefmt: str = "simple"
) -> str:
    """tabulate, imported on first use: it costs ~45 ms of start-up that most commands never need."""
    from tabulate import tabulate as render

    return str(render(rows, headers=list(headers), tablefmt=tablefmt))


def params_text(params: Sequence[tuple[str, Any]]) -> str:
    return " ".join(f"{k}={as_text(v)}" for k, v in params) or "-"


def simple_table(rows: Sequence[Sequence[str]], headers: Sequence[str]) -> str:
    """Exactly `tabulate(rows, headers, tablefmt="simple")`, written directly when that is padding.

    tabulate inspects every cell for numbers, wide characters and colour codes: about 80 µs a
    row, most of the time of a 10 000-point `expand --plan`. When every cell is printable ASCII
    and each column is either text (a cell tabulate cannot read as a number or a bool) or whole
    numbers written plainly (`16`, `-3`; empty cells allowed), its output is each cell stripped
    and aligned to the column's width (at least the header's plus two): text to the left, whole
    numbers to the right, header included; two spaces apart, lines right-stripped. Any other
    table is left to tabulate.
    """
    plain = all(len(row) == len(headers) for row in rows) and all(
        _plain(cell) for cell in (*headers, *(c for row in rows for c in row))
    )
    columns = list(zip(*rows, strict=True)) if rows and plain else [() for _ in headers]
    kinds = [_kind(column) for column in columns] if plain and rows else []
    if not plain or not rows or None in kinds:
        return tabulate(rows, headers=list(headers), tablefmt="simple")
    cells = [[cell.strip() for cell in column] for column in columns]
    widths = [max([len(h) + 2, *map(len, col)]) for h, col in zip(headers, cells, strict=True)]
    justify = [str.rjust if kind == "int" else str.ljust for kind in kinds]
    lines = [
        "  ".join(j(h, w) for h, w, j in zip(headers, widths, justify, strict=True)).rstrip(),
        "  ".join("-" * w for w in widths),
    ]
    lines += [
        "  ".join(j(c, w) for c, w, j in zip(row, widths, justify, strict=True)).rstrip()
        for row in zip(*cells, strict=True)
    ]
    return "\n".join(lines)


_WHOLE = re.compile(r"^(0|-?[1-9][0-9]*)$")


def _kind(column: Sequence[str]) -> str | None:
    """'text', 'int' (whole numbers, some cells maybe empty), or None: left to tabulate."""
    if any(_text(cell) for cell in column):
        return "text"
    filled = [cell for cell in column if cell != ""]
    if filled and all(_WHOLE.match(cell) for cell in filled):
        return "int"
    return None


def _plain(cell: object) -> bool:
    return isinstance(cell, str) and cell.isascii() and cell.isprintable()


def _text(cell: str) -> bool:
    """Whether tabulate types this cell as text: neither empty, a bool, nor any kind of number."""
    if cell in ("", "True", "False"):
        return False
    try:
        float(cell.replace(",", ""))
    except ValueError:
        return True
    return False
