"""The planning steps that read the backend after the restarts have acted (`runner.apply`):
a read Beaker fails stops the run instead of raising, so what the restarts did is still
reported and committed; and a stopped run reads no more."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from typing import TypeVar

from runner.apply.model import Applied
from runner.backends import Rejected, Transient
from runner.submit import Stop, StopKind

R = TypeVar("R")


def stops_when_unanswered(
    step: Callable[[R, Applied], Applied],
) -> Callable[[R, Applied], Applied]:
    """`step`, doing nothing once the run is stopped, and stopping it (`unanswered`) when
    Beaker fails a read it makes."""

    @functools.wraps(step)
    def reading(run: R, applied: Applied) -> Applied:
        if applied.stop is not None:
            return applied
        try:
            return step(run, applied)
        except (Transient, Rejected) as failed:
            return dataclasses.replace(applied, stop=unanswered(failed))

    return reading


def unanswered(failed: Transient | Rejected) -> Stop:
    """The stop of a run whose planning read Beaker failed: not answered (exit 5, a rerun
    continues), or refused (exit 4, a rerun does the same)."""
    kind = StopKind.UNREACHABLE if isinstance(failed, Transient) else StopKind.POLICY
    return Stop(kind, str(failed))
