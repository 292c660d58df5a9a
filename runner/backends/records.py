"""What a caller tells the port about its own records: the experiments the ledger records for a
sweep's points (`Recorded`), and a restart's write-ahead token (`WriteAhead`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

Intent = Callable[[str], None]
"""Told a restart's write-ahead token before the request is sent (`Backend.restart`)."""


def no_intent(token: str) -> None:
    """The default `intent`: nothing is recorded."""


@dataclass(frozen=True)
class WriteAhead:
    """A restart's write-ahead record (`Backend.restart`): `since`, the token a run that was
    interrupted recorded (empty: none); `intent`, told the token before the request is sent."""

    since: str = ""
    intent: Intent = no_intent


NO_RECORD = WriteAhead()


@dataclass(frozen=True)
class Recorded:
    """The experiments the ledger records for a sweep's points: an experiment whose id is here
    is that point whatever its name or description says now, with no call to prove it again."""

    ids: Mapping[str, str] = field(default_factory=dict)
    """Experiment name (as recorded) -> id: found by id even once renamed in Beaker's UI."""
    keys: Mapping[str, str] = field(default_factory=dict)
    """Experiment id -> the point's key."""


NOTHING_RECORDED = Recorded()


def recorded(records: Iterable[tuple[str, str, str] | None]) -> Recorded:
    """From (experiment name, id, key), None for a point without a record."""
    found = [r for r in records if r]
    return Recorded({n: i for n, i, _ in found}, {i: k for _, i, k in found})
