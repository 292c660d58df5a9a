"""Where experiments run. The planner and the submit protocol only know this interface.

A backend creates one experiment per point under its deterministic name and can look an
experiment up by that name. It translates its own failures into those of `failures` (each a
`runner.core.errors.BackendError` with its exit code), which is all the retry protocol in
`runner.submit` needs to know.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from runner.backends.endings import EndCause as EndCause
from runner.backends.endings import Ended as Ended
from runner.backends.failures import Canceled as Canceled
from runner.backends.failures import NameTaken as NameTaken
from runner.backends.failures import NotStarted as NotStarted
from runner.backends.failures import Rejected as Rejected
from runner.backends.failures import Transient as Transient
from runner.backends.health import Health
from runner.backends.records import NO_RECORD as NO_RECORD
from runner.backends.records import NOTHING_RECORDED as NOTHING_RECORDED
from runner.backends.records import Recorded as Recorded
from runner.backends.records import WriteAhead as WriteAhead
from runner.backends.records import recorded as recorded
from runner.core.model import Rendered, Sweep
from runner.core.values import StrEnum
from runner.ledger import Layout


class ExperimentState(StrEnum):
    """An experiment's state, in the port's words (each adapter maps its own onto these)."""

    QUEUED = "queued"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    CANCELED = "canceled"
    UNKNOWN = "unknown"

    @property
    def live(self) -> bool:
        """Queued or running: it holds (or waits for) machines, and can be canceled."""
        return self in (ExperimentState.QUEUED, ExperimentState.RUNNING)

    @property
    def restartable(self) -> bool:
        """Failed or canceled: `--restart-failed` may restart its failed tasks in place."""
        return self in (ExperimentState.FAILED, ExperimentState.CANCELED)

    @property
    def final(self) -> bool:
        """Succeeded, failed or canceled: it ended, and its state will not change by itself."""
        return self in (ExperimentState.SUCCEEDED, ExperimentState.FAILED, ExperimentState.CANCELED)


class BackendKind(StrEnum):
    """Which backend `--backend` asks for (`open_backend`); code asks for capabilities."""

    BEAKER = "beaker"
    LOCAL = "local"


class Capability(StrEnum):
    """What a backend does beyond the port's calls; code asks for these, never for a kind."""

    RUNS_DRAFTS = "runs-drafts"
    """Draft sweeps run here (this machine only); elsewhere they are never submitted."""
    SHARED = "shared"
    """Shared, billed machines: reviewed-plan pins apply and a submit has a default deadline."""
    RESUMES = "resumes"
    """`create` waits for a run another runner is running, and resumes a stale one: so only
    finished runs are adopted instead of created (`runner.observe.looks.chosen`)."""
    RERUNS = "reruns"
    """`restart` of a point named by `--restart --points` reruns its finished run, a succeeded
    one too, and a `code:` point at the commit checked out now (this machine's runs are its own
    to repeat; a Beaker restart reruns the experiment as it was)."""
    LOCAL_LOGS = "local-logs"
    """Its logs are files on this machine: reading a whole one costs no call, so `report`
    reads every run's reporting lines for its learning curves, `--live` or not."""


def runs(backend: Backend, sweep: Sweep) -> bool:
    """Whether this backend runs the sweep's points: a draft's only where drafts run (this
    machine); anywhere else a draft is never submitted."""
    return not sweep.draft or Capability.RUNS_DRAFTS in backend.capabilities


@dataclass(frozen=True)
class Experiment:
    """An experiment as the backend reports it."""

    name: str
    id: str
    url: str
    key: str | None
    """The point's key, told by what the job cannot change: the ledger's record of this id
    (`Recorded`) or the SWEEP_POINT_KEY env var of the experiment's spec; None: no point's."""
    state: ExperimentState = ExperimentState.UNKNOWN
    exit_code: int | None = None
    metrics: Mapping[str, object] = field(default_factory=dict)
    seconds: float | None = None
    """How long it ran (or has been running), when the backend knows without a call of its own."""
    description: str = ""
    """What the job says of itself (Beaker: the description it may rewrite, less ours)."""
    unfinished: bool = False
    """Shown as canceled, but its runner stopped or died before it finished (the local backend,
    `Capability.RESUMES`): the next submit resumes it. A run `cancel` stopped is not."""
    ended: Ended | None = None
    """Why it ended (or, queued or running again, why its latest attempt did); None where the
    backend does not know (yet) without a call of its own."""


@dataclass(frozen=True)
class Group:
    """A sweep's group: one place on the backend that gathers every experiment of the sweep."""

    name: str
    url: str
    members: int = 0
    """Experiments in it after the call that returned this (those it could see)."""
    added: int = 0
    """Experiments that call added."""
    created: bool = False


@dataclass(frozen=True)
class Results:
    """What a backend reports about a sweep's experiments, gathered in bulk."""

    group: Group | None
    """None when the sweep has no group (yet, or it opted out)."""
    experiments: Mapping[str, Experiment]
    """By experiment name; only those that exist."""
    note: str = ""
    """Why part of it is missing (e.g. the group could not be read), or empty."""
    copies: Mapping[str, tuple[Experiment, ...]] = field(default_factory=dict)
    """Names that more than one experiment has (two accounts each created the point, where names
    are unique per author), every copy, oldest first; seen in the same listing."""


@dataclass(frozen=True)
class Usage:
    """What an experiment's jobs held (`Backend.usage`)."""

    gpu_seconds: float
    """Over every job (each replica of each task, each restart): from its start to its end (to
    now while it runs) × the GPUs it held."""
    jobs: int
    """The jobs that started."""


GROUP_NAME_LIMIT = 128


def group_name(sweep: Sweep) -> str:
    """The sweep's group name: `<sweep>-rev<revision>` (a valid Beaker name, at most 128).

    The revision is part of it because bumping it re-runs every point under new names: one group
    per revision keeps each group a set of comparable runs, one per point, instead of putting
    two runs of the same parameters side by side with nothing to tell them apart.
    """
    suffix = f"-rev{sweep.revision}"
    return sweep.name[: GROUP_NAME_LIMIT - len(suffix)] + suffix


class Listing(StrEnum):
    """How `experiments` lists a sweep: soon, or in few calls."""

    SOON = "soon"
    """As soon as it can: a submit's look (Beaker lists a big sweep by 16 narrower listings at
    once, more calls than one listing's pages)."""
    FEW_CALLS = "few-calls"
    """In as few calls as it can: a look repeated for hours (`wait`), one paged listing."""


@dataclass(frozen=True)
class LogQuery:
    """Which job's logs `logs` reads: one replica of one task of the point's experiment."""

    task: str | None = None
    """None: the first task."""
    replica: int = 0
    tail: int | None = None
    """Only the last N lines."""
    follow: bool = False
    """Keep reading until the job finishes."""
    recorded: str = ""
    """The experiment id the ledger records for the point: its logs, even once renamed."""


class Backend(Protocol):
    layout: Layout
    """Where the runs it makes are recorded (`runner.ledger.store.LedgerStore`): the committed
    ledgers for Beaker, this machine's run directories for the local backend."""
    capabilities: frozenset[Capability]
    health: Health
    """Whether the service answers, and the waits its calls sit out (`runner.backends.health`)."""

    def create(self, sweep: Sweep, point: Rendered) -> Experiment:
        """Create the point's experiment under point.name; never under another name."""
        ...

    def experiments(
        self,
        sweep: Sweep,
        names: Iterable[str],
        recorded: Recorded = NOTHING_RECORDED,
        listing: Listing = Listing.SOON,
    ) -> Mapping[str, Sequence[Experiment]]:
        """Every experiment of each name that has one (a recorded one by its id, even renamed),
        whoever created it, oldest first, with its state (an exit code only where it costs no
        call of its own) and its key (`recorded`'s, else its spec's), in bulk: not one call per
        name (`listing`: as soon, or in as few calls, as the backend can). Where names are
        unique per author, two accounts can each create a point (`runner.submit.duplicates`).
        A look-up by name is the oldest of a list of one."""
        ...

    def restart(
        self, sweep: Sweep, point: Rendered, experiment: Experiment, ahead: WriteAhead = NO_RECORD
    ) -> Experiment | None:
        """Restart a failed or canceled experiment's failed tasks in place, exactly once (a
        request whose reply was lost is looked up, never sent twice). The restarted experiment;
        None when there was nothing to restart (it is not failed or canceled).

        Write-ahead (`ahead`): `intent` is called with the experiment's job generation (an opaque
        token) before the request is sent, so the caller can record it. Given that token as `since`
        (a run that recorded it was interrupted), an experiment whose generation has moved on
        is returned as restarted without sending anything: that restart took effect."""
        ...

    def cancel(self, sweep: Sweep, experiments: Sequence[Experiment]) -> list[str]:
        """Cancel those of experiments (these very ids, never another of the same name) still
        queued or running, in bulk, exactly once (a request whose reply was lost is looked up,
        never sent twice); the names of those it canceled. `cancel` asks it for a point's
        experiments, the duplicate check for the newer copy this run created."""
        ...

    def logs(self, sweep: Sweep, name: str, query: LogQuery) -> Iterator[str]:
        """The log lines of one replica's latest job; NotStarted before it has started."""
        ...

    def ensure_group(self, sweep: Sweep, experiment_ids: Sequence[str]) -> Group:
        """The sweep's group, found or created exactly once, with every one of experiment_ids
        in it (adding only those missing, in batches). Raises Transient or Rejected."""
        ...

    def results(
        self, sweep: Sweep, names: Iterable[str], recorded: Recorded = NOTHING_RECORDED
    ) -> Results:
        """State, exit code, duration, metrics, why it ended (`Experiment.ended`) and what the
        job says of the named experiments (of a name, the one whose id is `recorded`, else the
        oldest), and the sweep's group: in a number of calls that grows with pages and with the
        experiments that ended without succeeding, never with those running."""
        ...

    def usage(self, sweep: Sweep, experiments: Sequence[Experiment]) -> Mapping[str, Usage]:
        """What each of these experiments' jobs held, by experiment id (one not found is left
        out): every job that started, restarts included. One job listing per task of each
        experiment: the readers ask only for finished points whose GPU-hours they need
        (`runner.observe.usage`)."""
        ...

    def close(self) -> None: ...


StartHook = Callable[[Sweep, Rendered, Experiment], None]


@runtime_checkable
class RunsInCreate(Protocol):
    """A backend whose `create` returns only when the run has ended (the local one). It calls
    `on_start` (from the creating thread) once the run has started, so the submitter records it
    then, as it records a Beaker create: `status` shows it running while it runs."""

    on_start: StartHook | None

    def stop_starting(self, sweep: Sweep) -> None:
        """`cancel` of a whole sweep: a submit running its points here starts no more of them
        (each raises `Canceled`); a submit started later runs them as usual."""

    def will_start(self, sweep: Sweep, names: Sequence[str]) -> None:
        """A submit is about to run these points (before its first create): `starting` names
        them until it ends, for a `wait` in another process (a run is recorded as it starts)."""

    def starting(self, sweep: Sweep) -> frozenset[str]:
        """The points of the sweep that submits running now are to run, started or not."""


@runtime_checkable
class SeesCheckpoints(Protocol):
    """A backend that keeps the storage a halving's checkpoints live on here (the local one:
    `.runs/<sweep>/checkpoints/`); Beaker's (weka, datasets) is never read."""

    def has_checkpoint(self, sweep: Sweep, path: str) -> bool:
        """Whether something is at `path`, a checkpoint path as a spec gives it (a file, or a
        directory with something in it): not whether it is a whole checkpoint."""
