"""A fake at the port: `runner.backends.Backend` over scripted experiments, in memory.

For the pure protocol tests (apply's steps, restart verdicts, caps, groups, the Submitter), as
pip-tools keeps its `FakeRepository` beside real wheels. The wire-level fake (`tests.fake_beaker`)
stays for `backends/beaker` and the end-to-end tests. Every call is logged in `calls`.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence

from runner.backends import (
    NO_RECORD,
    NOTHING_RECORDED,
    Capability,
    EndCause,
    Ended,
    Experiment,
    ExperimentState,
    Group,
    Listing,
    LogQuery,
    Recorded,
    Rejected,
    Results,
    Usage,
    WriteAhead,
    group_name,
)
from runner.backends.health import Health
from runner.core.model import Rendered, Sweep
from runner.ledger import COMMITTED, Layout


class FakeBackend:
    def __init__(
        self,
        experiments: Iterable[Experiment] = (),
        *,
        layout: Layout = COMMITTED,
        capabilities: Iterable[Capability] = (Capability.SHARED,),
        rejects: Iterable[str] = (),
    ) -> None:
        self.layout = layout
        self.capabilities = frozenset(capabilities)
        self.health = Health("fake", "memory://")
        self.made: dict[str, list[Experiment]] = {}
        """By name, every copy, oldest first."""
        for experiment in experiments:
            self.made.setdefault(experiment.name, []).append(experiment)
        self.rejects = set(rejects)
        """Names whose create is refused (Rejected)."""
        self.groups: dict[str, list[str]] = {}
        self.restarted: Counter[str] = Counter()
        """Restarts sent, by name: the experiment's job generation."""
        self.calls: list[tuple[str, str]] = []
        self.used: dict[str, Usage] = {}
        """What `usage` says of an experiment, by name (none: it is left out)."""
        self.preempted: Counter[str] = Counter()
        """Preemptions by name, as Beaker counts them (`Ended.preemptions`: not a lost node)."""

    def _log(self, call: str, what: str) -> None:
        self.calls.append((call, what))

    def _latest(self, name: str) -> Experiment | None:
        found = self.made.get(name)
        return found[-1] if found else None

    def create(self, sweep: Sweep, point: Rendered) -> Experiment:
        self._log("create", point.name)
        if point.name in self.rejects:
            raise Rejected(f"{point.name}: refused by the script")
        made = Experiment(point.name, f"id-{point.name}", f"fake://{point.name}", point.key)
        made = dataclasses.replace(made, state=ExperimentState.QUEUED)
        self.made.setdefault(point.name, []).append(made)
        return made

    def experiments(
        self,
        sweep: Sweep,
        names: Iterable[str],
        recorded: Recorded = NOTHING_RECORDED,
        listing: Listing = Listing.SOON,
    ) -> Mapping[str, Sequence[Experiment]]:
        self._log("list", sweep.name)
        return {
            n: tuple(
                dataclasses.replace(e, key=recorded.keys.get(e.id, e.key)) for e in self.made[n]
            )
            for n in names
            if n in self.made
        }

    def restart(
        self, sweep: Sweep, point: Rendered, experiment: Experiment, ahead: WriteAhead = NO_RECORD
    ) -> Experiment | None:
        self._log("restart", point.name)
        latest = self._latest(point.name)
        generation = str(self.restarted[point.name])
        if ahead.since and latest is not None and generation != ahead.since:
            return latest  # the interrupted restart took effect
        if latest is None or not latest.state.restartable:
            return None
        ahead.intent(generation)
        self.restarted[point.name] += 1
        restarted = dataclasses.replace(latest, state=ExperimentState.QUEUED)
        self.made[point.name][-1] = restarted
        return restarted

    # -- the platform ending experiments (what tests/fake_beaker/cancelations.py does on the wire)

    def end(self, name: str, state: ExperimentState, **fields: object) -> Experiment:
        """The latest experiment of `name` goes to `state` (with `fields`: `ended`, `metrics`,
        `exit_code`); why it ended is the state's, unless `ended` says otherwise."""
        latest = self.made[name][-1]
        causes = {
            ExperimentState.SUCCEEDED: EndCause.SUCCEEDED,
            ExperimentState.CANCELED: EndCause.CANCELED,
        }
        cause = causes.get(state, EndCause.FAILED)
        why = Ended(cause, preemptions=self.preempted[name]) if state.final else latest.ended
        changed = dataclasses.replace(latest, state=state, ended=why)
        self.made[name][-1] = dataclasses.replace(changed, **fields)  # type: ignore[arg-type]
        return self.made[name][-1]

    def preempt(self, name: str, *, node: bool = False, resume: bool = False) -> Experiment:
        """Beaker preempts the latest experiment of `name` (`node`: its node fails instead):
        canceled, saying why; `resume`: Beaker queues it again by itself (`auto_resume`)."""
        self.preempted[name] += not node
        cause = EndCause.NODE_FAILURE if node else EndCause.PREEMPTED
        text = "its node became unavailable" if node else "preempted for a higher-priority job"
        state = ExperimentState.QUEUED if resume else ExperimentState.CANCELED
        return self.end(name, state, ended=Ended(cause, text, None, self.preempted[name]))

    def cancel(self, sweep: Sweep, experiments: Sequence[Experiment]) -> list[str]:
        self._log("cancel", ",".join(e.name for e in experiments))
        done = []
        for e in experiments:
            latest = self._latest(e.name)
            if latest is not None and latest.state.live:
                self.made[e.name][-1] = dataclasses.replace(latest, state=ExperimentState.CANCELED)
                done.append(e.name)
        return done

    def logs(self, sweep: Sweep, name: str, query: LogQuery) -> Iterator[str]:
        self._log("logs", name)
        yield f"log of {name}"

    def ensure_group(self, sweep: Sweep, experiment_ids: Sequence[str]) -> Group:
        self._log("ensure_group", sweep.name)
        name = group_name(sweep)
        members = self.groups.setdefault(name, [])
        added = [i for i in experiment_ids if i not in members]
        members.extend(added)
        return Group(name, f"fake://groups/{name}", len(members), len(added), not members)

    def results(
        self, sweep: Sweep, names: Iterable[str], recorded: Recorded = NOTHING_RECORDED
    ) -> Results:
        self._log("results", sweep.name)
        listed = self.experiments(sweep, names, recorded)
        return Results(None, {n: found[0] for n, found in listed.items()})

    def usage(self, sweep: Sweep, experiments: Sequence[Experiment]) -> Mapping[str, Usage]:
        self._log("usage", sweep.name)
        return {e.id: self.used[e.name] for e in experiments if e.name in self.used}

    def close(self) -> None:
        self._log("close", "")
