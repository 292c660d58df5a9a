"""The automatic rounds' decisions, as the lock keeps them (its `decisions` key).

A search that advances inside its reviewed envelope (`advance: auto`) writes, with each round it
appends to the lock and before any of its points is created, one record: what it read (the
commit, and each point it was told, with its key, row, result and values), how it chose (a
halving: each rung ranked and its cut-off; an adaptive search: the sampler's seed) and what it
chose. The lock's digest covers them like every other section (an accident is caught on load);
`runner.locking.replay` recomputes each one from the manifest (a forgery is caught there). A
round without a record is one a person merged.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from runner.core.locked import Cutoff, Decision, Heard
from runner.core.values import checked

DECISIONS = "decisions"
"""The lock's key."""


def decisions_json(decisions: Sequence[Decision]) -> dict[str, Any]:
    """The key's value: one record a line (`runner.manifest.lock` writes a list's items so)."""
    return {"rounds": [_record(d) for d in decisions]}


def _record(d: Decision) -> dict[str, Any]:
    out: dict[str, Any] = {
        "round": d.round,
        "of": d.of,
        "ledger": d.ledger,
        "before": d.before,
        "envelope": d.envelope,
        "gpu_hours": d.gpu_hours,
        "told": [
            [h.key, h.name, list(h.row), h.result, list(h.values), list(h.excess)] for h in d.told
        ],
        "chose": [[k, list(row)] for k, row in d.chose],
    }
    if d.cuts:
        out["cuts"] = [[c.rung, c.ended, c.kept, list(c.ranked)] for c in d.cuts]
    if d.seed is not None:
        out["seed"] = d.seed
    return out


def parse_decisions(data: Mapping[str, Any]) -> tuple[Decision, ...]:
    """The key's value; ValueError (or KeyError, TypeError) for one `decisions_json` did not
    write."""
    return tuple(_decision(raw) for raw in data["rounds"])


def _decision(raw: Mapping[str, Any]) -> Decision:
    hours = raw["gpu_hours"]
    if hours is not None and not (isinstance(hours, int | float) and math.isfinite(hours)):
        raise ValueError("gpu_hours is a number or null")
    seed = raw.get("seed")
    return Decision(
        round=_int(raw["round"]),
        of=str(raw["of"]),
        ledger=str(raw["ledger"]),
        before=_int(raw["before"]),
        told=tuple(_heard(item) for item in raw["told"]),
        chose=tuple((_int(k), _row(row)) for k, row in raw["chose"]),
        envelope=str(raw["envelope"]),
        gpu_hours=None if hours is None else float(hours),
        cuts=tuple(
            Cutoff(_int(rung), tuple(str(k) for k in ranked), _int(ended), _int(kept))
            for rung, ended, kept, ranked in raw.get("cuts", ())
        ),
        seed=None if seed is None else _int(seed),
    )


def _heard(item: Sequence[Any]) -> Heard:
    key, name, row, result, values, excess = item
    if not isinstance(result, str):
        raise TypeError("a result is its name")  # which names: `runner.locking.decision`
    return Heard(
        str(key),
        str(name),
        _row(row),
        str(result),
        tuple(float(v) for v in values),
        tuple(float(v) for v in excess),
    )


def _row(row: Sequence[Any]) -> tuple[Any, ...]:
    return tuple(None if v is None else checked(v) for v in row)


def _int(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError("a whole number")
    return value
