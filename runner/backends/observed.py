"""One look at a sweep's experiments per phase of a submit, which every step reads.

Before the creates, the restarts, the max_running cap, the stops and the adoption of existing
experiments all ask the same question of the backend: which experiments do the sweep's names
have now (the local resume asks it of the run directories, before the plan's rows change). After them, the duplicate check and the notifications ask it
again. An `Observer` asks it once per sweep and phase (`observe`), in one bulk call: `results`
for a sweep whose stops need metrics, else `experiments`. A restart changes what was seen, so
it is told (`restarted`) instead of listing again. A sweep no step asks about is never listed.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from runner.backends import (
    NOTHING_RECORDED,
    Backend,
    Experiment,
    Recorded,
    Results,
    recorded,
)
from runner.core.model import Sweep
from runner.plan import SweepPlan

Listed = Mapping[str, Sequence[Experiment]]
"""Every experiment of each name that has one, oldest first (`Backend.experiments`)."""


@dataclass(frozen=True)
class Observed:
    """What the backend showed of one sweep's experiments, at one moment."""

    listed: Listed
    results: Results | None = None
    """States with exit codes, metrics and the group, when the look asked for them."""
    mine: Recorded = field(default_factory=Recorded)
    """The ledger's records the look was made with."""

    def restarted(self, experiment: Experiment) -> Observed:
        """As seen once `experiment` (same id, new state) was restarted."""

        def swap(found: Experiment) -> Experiment:
            if found.id != experiment.id:
                return found
            return dataclasses.replace(found, state=experiment.state, exit_code=None)

        listed = {n: tuple(swap(e) for e in found) for n, found in self.listed.items()}
        results = self.results
        if results is not None:
            found = {n: swap(e) for n, e in results.experiments.items()}
            copies = {n: tuple(swap(e) for e in c) for n, c in results.copies.items()}
            results = dataclasses.replace(results, experiments=found, copies=copies)
        return dataclasses.replace(self, listed=listed, results=results)


def chosen(listed: Listed, mine: Recorded, resumes: bool) -> dict[str, Experiment]:
    """The experiment of each name that a submit adopts instead of creating it: the one whose
    id is recorded, else the oldest, in any state; on a backend that resumes runs, only a
    finished one (canceled on request included, a run left unfinished not)."""
    picked = {
        name: next((e for e in found if e.id in mine.keys), found[0])
        for name, found in listed.items()
        if found
    }
    return {
        name: e
        for name, e in picked.items()
        if not resumes or (not e.state.live and not e.unfinished)
    }


def _listed(results: Results) -> dict[str, tuple[Experiment, ...]]:
    """Every copy of each name from a results look (`copies` holds the names with several)."""
    return {n: results.copies.get(n) or (e,) for n, e in results.experiments.items()}


class Observer:
    """The looks of one phase, one per sweep (by name), made on first use."""

    def __init__(self, backend: Backend, wants_results: Callable[[SweepPlan], bool]) -> None:
        self.backend = backend
        self.wants_results = wants_results
        """Whether a sweep's look must carry results (its stops, or a notification, read them),
        asked of the plan the first look is made for. A look without them leaves a step that
        needs them to ask `results` itself."""
        self._seen: dict[str, Observed] = {}

    def observe(self, plan: SweepPlan, made: Recorded = NOTHING_RECORDED) -> Observed:
        """The sweep's look, at every name of its plan (with the ledger's records, and `made`:
        those of experiments this run created): made now unless this phase made it already."""
        seen = self._seen.get(plan.sweep.name)
        if seen is not None:
            return seen
        sweep, wanted = plan.sweep, list(dict.fromkeys(row.experiment for row in plan.rows))
        mine = records((row.record for row in plan.rows), made)
        if self.wants_results(plan):
            found = self.backend.results(sweep, wanted, mine)
            seen = Observed(_listed(found), found, mine)
        else:
            seen = Observed(self.backend.experiments(sweep, wanted, mine), None, mine)
        self._seen[sweep.name] = seen
        return seen

    def restarted(self, sweep: Sweep, experiment: Experiment) -> None:
        """A restart changed what the sweep's look saw."""
        seen = self._seen.get(sweep.name)
        if seen is not None:
            self._seen[sweep.name] = seen.restarted(experiment)

    def next_phase(self, wants_results: Callable[[SweepPlan], bool] | None = None) -> Observer:
        """A fresh observer for the next phase (after the creates, what was seen is old)."""
        return Observer(self.backend, wants_results or self.wants_results)


def records(rows: Iterable[tuple[str, str, str] | None], more: Recorded) -> Recorded:
    """The records of rows and more, as one `Recorded`."""
    base = recorded(rows)
    return Recorded({**base.ids, **more.ids}, {**base.keys, **more.keys})
