"""Checks of the charts the runner draws, shared by the plot and status tests."""

from __future__ import annotations

import re
from pathlib import Path

# -- a strict checker for Mermaid's xychart-beta grammar -------------------------------------
# After mermaid's jison grammar (packages/mermaid/src/diagrams/xychart/parser/xychart.jison):
# a header line, then statements: title TEXT; x-axis TEXT? ("[" TEXT ("," TEXT)* "]" | NUM "-->"
# NUM); y-axis TEXT? (NUM "-->" NUM)?; line/bar TEXT? "[" NUM ("," NUM)* "]". TEXT is a quoted
# string without quotes in it, or a single word; numbers have no exponent.

NUM = r"[+-]?(?:\d+(?:\.\d+)?|\.\d+)"
TEXT = r'(?:"[^"\n]*"|[A-Za-z0-9_.]+)'
LIST_OF = r"\[\s*{item}(?:\s*,\s*{item})*\s*\]"
STATEMENTS = {
    "title": re.compile(r"title\s+(?:\"[^\"\n]*\"|[^\n\"]+)"),
    "x-axis": re.compile(
        rf"x-axis(?:\s+{TEXT})?\s*(?P<band>{LIST_OF.format(item=TEXT)}|{NUM}\s*-->\s*{NUM})"
    ),
    "y-axis": re.compile(rf"y-axis(?:\s+{TEXT})?(?:\s+{NUM}\s*-->\s*{NUM})?"),
    "line": re.compile(rf"line(?:\s+{TEXT})?\s*(?P<data>{LIST_OF.format(item=NUM)})"),
    "bar": re.compile(rf"bar(?:\s+{TEXT})?\s*(?P<data>{LIST_OF.format(item=NUM)})"),
}


def check_xychart(block: str) -> None:
    """Raise AssertionError unless block is a valid xychart-beta diagram whose every line has
    one value per x category."""
    lines = [line.strip() for line in block.strip().splitlines() if line.strip()]
    assert re.fullmatch(r"xychart-beta(?:\s+(?:horizontal|vertical))?", lines[0]), lines[0]
    categories = None
    seen: list[str] = []
    for line in lines[1:]:
        keyword = line.split(None, 1)[0]
        pattern = STATEMENTS.get(keyword)
        assert pattern is not None, f"not an xychart-beta statement: {line!r}"
        match = pattern.fullmatch(line)
        assert match, f"does not parse: {line!r}"
        seen.append(keyword)
        if keyword == "x-axis" and match.group("band").startswith("["):
            categories = len(re.findall(TEXT, match.group("band")))
        if keyword in ("line", "bar"):
            values = re.findall(NUM, match.group("data"))
            assert categories is None or len(values) == categories, line
    assert seen.count("x-axis") <= 1 and seen.count("y-axis") <= 1 and seen.count("title") <= 1
    assert "line" in seen or "bar" in seen


def image_checks(path: Path, size: tuple[int, int] = (500, 800)) -> None:
    """The PNG opens, has the size asked for, and is not blank (many colours, lines drawn)."""
    from matplotlib import image

    pixels = image.imread(path)
    assert pixels.shape[:2] == size
    colours = {tuple(p) for p in pixels.reshape(-1, pixels.shape[2])[::7].tolist()}
    assert len(colours) > 20
    assert float(pixels[..., :3].std()) > 0.05
