"""How a stepping search advances: who approves its rounds (`advance:`,
`runner.core.search.Advance`) and when a halving's rungs promote (`params.fidelity.promotion`).

`advance: auto` (or `{mode: auto, max_gpu_hours: N}`) lets the schedule advance every round
inside the envelope the manifest's pull request approved; `review` (the default) keeps a pull
request per round. Only a search that steps has rounds: an adaptive sample or a halving.
`promotion: async` promotes a rung's points as they end (ASHA) instead of once it has ended.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from runner.core.marks import Document, KeyPath
from runner.core.search import Advance, Halving, Mode, Promotion, Search, Strategy

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


def promoted(doc: Document, strategy: Strategy) -> Strategy:
    """The strategy with its halving's `promotion` (from a schema-valid document)."""
    if not isinstance(strategy, Halving):
        return strategy
    raw = (doc.data.get("params") or {}).get("fidelity") or {}
    return dataclasses.replace(strategy, promotion=Promotion(raw.get("promotion", Promotion.SYNC)))
