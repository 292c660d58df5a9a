"""The `advance:` key: who approves a stepping search's rounds (`runner.core.search.Advance`).

`advance: auto` (or `{mode: auto, max_gpu_hours: N}`) lets the schedule advance every round
inside the envelope the manifest's pull request approved; `review` (the default) keeps a pull
request per round. Only a search that steps has rounds: an adaptive sample or a halving.
"""

from __future__ import annotations

from collections.abc import Callable

from runner.core.marks import Document, KeyPath
from runner.core.search import Advance, Mode, Search

ADVANCE: KeyPath = ("advance",)


def parse_advance(
    doc: Document, search: Search, add: Callable[[KeyPath, str, bool], None]
) -> Advance:
    """The key's value, from a schema-valid document; `add(path, message, key)` takes the
    problem of an `auto` on a search without rounds."""
    raw = doc.data.get("advance")
    if raw is None:
        return Advance()
    if isinstance(raw, str):
        advance = Advance(Mode(raw))
    else:
        hours = raw.get("max_gpu_hours")
        advance = Advance(Mode(raw["mode"]), None if hours is None else float(hours))
    if advance.mode.auto and not search.steps:
        said = (
            f"auto needs a search with rounds, and {search.method} has none: an"
            " adaptive sample (method tpe or gp) or params.fidelity (a successive halving)"
        )
        add(ADVANCE, said, True)
    if advance.max_gpu_hours is not None and not advance.mode.auto:
        said = "max_gpu_hours bounds an automatic search: it needs mode: auto"
        add((*ADVANCE, "max_gpu_hours"), said, True)
    return advance
