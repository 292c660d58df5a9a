"""Why the points a states-only look saw canceled were canceled (`wait`'s looks list states
only, and a listing says why only of what is running): read for each such experiment once, by
one `results` of just those names, and kept while its state stays the same. So `wait` tells a
preempted point (which the next submit resumes: pending) from a timed-out or canceled one, at
the cost of one read per point that is canceled, not one per point per interval. A failed one
failed (Beaker cancels, not fails, a job it preempts or whose node it lost)."""

from __future__ import annotations

import dataclasses

from runner.backends import Backend, Ended, ExperimentState, Results, recorded
from runner.plan import SweepPlan

Seen = tuple[str, ExperimentState]
"""An experiment's id and the state it was seen in."""


class EndingsRead:
    """What was read of why each experiment ended, by id and state, across one command's looks."""

    def __init__(self, backend: Backend) -> None:
        self.backend = backend
        self._read: dict[Seen, Ended | None] = {}

    def filled(self, plan: SweepPlan, found: Results) -> Results:
        """`found` (a look's states) with why each canceled experiment was canceled: from an
        earlier read of it in the same state, else read now (one `results` of the sweep's names
        that need it; none for a point `cancel` canceled, which says why)."""
        canceled = {r.experiment for r in plan.rows if r.entry is not None and r.entry.canceled}
        wanted = [
            name
            for name, e in found.experiments.items()
            if e.ended is None
            and e.state == ExperimentState.CANCELED
            and name not in canceled
            and (e.id, e.state) not in self._read
        ]
        if wanted:
            names = set(wanted)
            mine = recorded(r.record for r in plan.rows if r.experiment in names)
            read = self.backend.results(plan.sweep, wanted, mine).experiments
            for name in wanted:
                seen, again = found.experiments[name], read.get(name)
                same = again is not None and again.id == seen.id and again.state == seen.state
                self._read[(seen.id, seen.state)] = again.ended if same and again else None
        experiments = {
            name: dataclasses.replace(e, ended=self._read.get((e.id, e.state)))
            if e.ended is None and (e.id, e.state) in self._read
            else e
            for name, e in found.experiments.items()
        }
        return dataclasses.replace(found, experiments=experiments)
