"""One look at a sweep's experiments per phase, which every reader and every step reads.

Before a submit's creates, the restarts, the max_running cap, the stops and the adoption of
existing experiments all ask the same question of the backend: which experiments do the sweep's
names have now. After them, the duplicate check and the notifications ask it again; `status`,
`report` and `propose` ask it once. An `Observer` asks it once per sweep and phase, in one bulk
call: `results` for a sweep whose readers need states and metrics, else `experiments` (`look`);
`observation` joins that look with the plan (`runner.observe.join`). A restart changes what was
seen, so it is told (`restarted`) instead of listing again. A sweep nobody asks about is never
listed.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from runner.backends import (
    NOTHING_RECORDED,
    Backend,
    Experiment,
    Listing,
    Recorded,
    Results,
    recorded,
)
from runner.core.model import Sweep
from runner.observe import resumes, tails, usage
from runner.observe.join import Seen, observation
from runner.observe.live import NO_TAILS, Reading, Tails
from runner.observe.model import Observation
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


def _copies(seen: Observed) -> dict[str, tuple[Experiment, ...]]:
    return {name: tuple(found) for name, found in seen.listed.items() if len(found) > 1}


def _listed(results: Results) -> dict[str, tuple[Experiment, ...]]:
    """Every copy of each name from a results look (`copies` holds the names with several)."""
    return {n: results.copies.get(n) or (e,) for n, e in results.experiments.items()}


def never(plan: SweepPlan) -> bool:
    """A phase whose looks need no results (states and the listing are enough)."""
    return False


def always(plan: SweepPlan) -> bool:
    """A phase whose looks all carry results (the readers: `status`, `report`, `propose`)."""
    return True


@dataclass(frozen=True)
class Context:
    """What a phase's readers read besides what every observation holds (each sweep's search
    is the sweep's own: `Sweep.search`): where local `code:` points rerun at HEAD, the commit
    checked out now; the reporting lines to read; how a plain look lists; the metrics asked for
    by name."""

    head: str = ""
    reading: Reading = NO_TAILS
    """Which points' reporting lines are read from their logs (`runner.observe.tails`)."""
    listing: Listing = Listing.SOON
    """How a look without results lists (`wait`'s, repeated for hours: in few calls)."""
    asked: frozenset[str] = frozenset()
    """Metrics a reader asked for by name (`status --best`, `report --metric`): `gpu_hours`
    among them is measured for every sweep (`runner.observe.usage`)."""


class Observer:
    """The looks of one phase, one per sweep (by name), made on first use."""

    def __init__(
        self,
        backend: Backend,
        wants_results: Callable[[SweepPlan], bool] = always,
        context: Context = Context(),
    ) -> None:
        self.backend = backend
        self.wants_results = wants_results
        """Whether a sweep's look must carry results (its stops, a notification or a reader
        read them), asked of the plan the first look is made for."""
        self.context = context
        self._seen: dict[str, Observed] = {}
        self._observations: dict[str, Observation] = {}

    def look(self, plan: SweepPlan, made: Recorded = NOTHING_RECORDED) -> Observed:
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
            listing = self.context.listing
            seen = Observed(self.backend.experiments(sweep, wanted, mine, listing), None, mine)
        self._seen[sweep.name] = seen
        return seen

    def observation(self, plan: SweepPlan) -> Observation:
        """The sweep's observation: its plan joined with this phase's look (one with results;
        a sweep not looked at yet is asked about its recorded experiments only, and not at all
        when none is recorded)."""
        name = plan.sweep.name
        if name not in self._observations:
            seen = self._seen.get(name)
            found = seen.results if seen is not None else None
            if found is None:
                found = self._results(plan)
            context = self.context
            if usage.wanted(plan.sweep, context.asked):
                found = usage.measured(self.backend, plan.sweep, found)
            read, picked = tails.NOTHING_READ, {}
            if tails.reads(plan.sweep, self.backend, context.reading):
                picked = tails.chosen(found, context.reading.tails)
            if context.reading.tails is not Tails.NONE:  # did a promoted point miss its checkpoint
                picked |= resumes.failed(plan, found)
            if picked:
                read = tails.read(self.backend, plan.sweep, picked)
            read = resumes.checked(self.backend, plan, found, read)
            joined = observation(plan, Seen(found, context.head, read))
            self._observations[name] = joined
        return self._observations[name]

    def states(
        self, plan: SweepPlan, ended: Callable[[SweepPlan, Results], Results] | None = None
    ) -> Observation:
        """The sweep's observation from this phase's look alone, even one without results:
        each point's state (its metrics, exit code and group only where the look has them).
        `wait` reads one each interval, at the cost of one listing; `ended` fills in why the
        look's experiments ended where it does not say (`runner.observe.endings`)."""
        seen = self.look(plan)
        if (found := seen.results) is None:  # of each name, the one `results` would report
            picked = chosen(seen.listed, seen.mine, resumes=False)
            found = Results(None, picked, copies=_copies(seen))
        found = found if ended is None else ended(plan, found)
        return observation(plan, Seen(found, self.context.head))

    def _results(self, plan: SweepPlan) -> Results:
        names = [row.experiment for row in plan.rows if row.entry is not None]
        if not names:
            return Results(None, {})
        mine = recorded(row.record for row in plan.rows)
        found = self.backend.results(plan.sweep, names, mine)
        self._seen[plan.sweep.name] = Observed(_listed(found), found, mine)
        return found

    def restarted(self, sweep: Sweep, experiment: Experiment) -> None:
        """A restart changed what the sweep's look saw."""
        seen = self._seen.get(sweep.name)
        if seen is not None:
            self._seen[sweep.name] = seen.restarted(experiment)
        self._observations.pop(sweep.name, None)

    def forget(self, name: str) -> None:
        """The sweep was planned again (an automatic round added points): look again."""
        self._seen.pop(name, None)
        self._observations.pop(name, None)

    def next_phase(self, wants_results: Callable[[SweepPlan], bool] | None = None) -> Observer:
        """A fresh observer for the next phase (after the creates, what was seen is old)."""
        return Observer(self.backend, wants_results or self.wants_results, self.context)


def records(rows: Iterable[tuple[str, str, str] | None], more: Recorded) -> Recorded:
    """The records of rows and more, as one `Recorded`."""
    base = recorded(rows)
    return Recorded({**base.ids, **more.ids}, {**base.keys, **more.keys})
