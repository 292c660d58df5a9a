"""Each point of an observation as a search is told it (`runner.search.points.Told`): finished
with every objective's value and how far it breaks each constraint, failed (ended without a
metric the sweep judges it by), or still pending. One telling for every search: an adaptive
search's round, a halving's rung, the Optuna study `report` writes. A point preempted (or that
lost its node) that a plain `submit` resumes is pending, not failed: a rung waits for it and
Optuna is not told a failed trial (`PointResult.has_ended`). Pure.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from runner.backends import ExperimentState
from runner.core.aims import Aims
from runner.observe.model import Absent, Observation
from runner.search.judged import judged
from runner.search.points import Result, Told


def told(results: Observation, names: Sequence[str], aims: Aims | None = None) -> tuple[Told, ...]:
    """Each submitted point, its row the values of `names` (None where absent), judged by
    `aims` (the sweep's, by default): a point not submitted, or recorded but gone, is left out
    (a search reads the lock for those)."""
    aims = aims or results.search.aims
    out = []
    for p in results.points:
        if isinstance(p.state, Absent):
            continue
        params = dict(p.params)
        row = tuple(params.get(n) for n in names)
        if p.state == ExperimentState.SUCCEEDED:
            said = judged(aims, row, p.number)
        else:
            said = Told(row, Result.FAILED if p.has_ended else Result.PENDING)
        out.append(dataclasses.replace(said, key=p.key, name=p.experiment))
    return tuple(out)
