"""Tables: tabulate (imported on first use), and a direct writer for its common plain case."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from runner.values import as_text


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
    and every column has a cell that tabulate cannot read as a number (or a bool), its output is
    each cell stripped and left-aligned to the column's width (at least the header's plus two),
    two spaces apart, lines right-stripped. Any other table is left to tabulate.
    """
    plain = all(len(row) == len(headers) for row in rows) and all(
        _plain(cell) for cell in (*headers, *(c for row in rows for c in row))
    )
    columns = list(zip(*rows, strict=True)) if rows and plain else [() for _ in headers]
    if not plain or not all(any(_text(cell) for cell in column) for column in columns if column):
        return tabulate(rows, headers=list(headers), tablefmt="simple")
    cells = [[cell.strip() for cell in column] for column in columns]
    widths = [max([len(h) + 2, *map(len, col)]) for h, col in zip(headers, cells, strict=True)]
    lines = [
        "  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip(),
        "  ".join("-" * w for w in widths),
    ]
    lines += ["  ".join(map(str.ljust, row, widths)).rstrip() for row in zip(*cells, strict=True)]
    return "\n".join(lines)


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
