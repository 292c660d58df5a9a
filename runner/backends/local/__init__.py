"""The local backend: each point's tasks run as processes on this machine, as on Beaker.

`create` runs a point to completion in the calling worker thread (the submit protocol already
bounds how many run at once) and additionally waits for enough of this machine's CPUs and GPUs.
Runs live in `.runs/<sweep>/<experiment>/` (see `runner.backends.local.rundir`) and are recorded in the local
ledger beside them, never in the committed Beaker ledger: when the run starts (`on_start`, as a
Beaker create is recorded, so `status` shows it running) and again when it ends. Lookups read
the run directories: only finished runs count as existing for adoption; a point another runner
is running is waited for, and a run a crashed or stopped runner left is run again (`resume`).
"""

from __future__ import annotations

import contextlib
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from runner.backends import (
    NO_RECORD,
    Canceled,
    Capability,
    Experiment,
    Group,
    Listing,
    LogQuery,
    NameTaken,
    Recorded,
    Rejected,
    Results,
    StartHook,
    Usage,
    WriteAhead,
)
from runner.backends import NOTHING_RECORDED as NOTHING
from runner.backends.health import Health
from runner.backends.local import logs as logfiles
from runner.backends.local.launches import replica_plans
from runner.backends.local.machine import Machine, ReplicaPlan, assign_gpus
from runner.backends.local.processes import cancel_run, stop_leftovers
from runner.backends.local.rundir import (
    FAILED,
    RUNNING,
    Replica,
    RunDir,
    RunState,
    Stopping,
    elapsed_seconds,
    new_state,
)
from runner.backends.local.states import as_experiment, seen
from runner.backends.local.supervisor import Supervisor
from runner.backends.local.sweepdir import LAYOUT as LAYOUT
from runner.backends.local.sweepdir import SweepDir, local_checkpoint
from runner.backends.local.usage import run_usage
from runner.core.errors import BackendError, RunnerError
from runner.core.model import Rendered, Sweep
from runner.ledger import Layout


class LocalBackend:
    layout: Layout = LAYOUT
    capabilities: frozenset[Capability] = frozenset(
        {Capability.RUNS_DRAFTS, Capability.RESUMES, Capability.RERUNS, Capability.LOCAL_LOGS}
    )
    grace = 10.0
    """Seconds between SIGTERM and SIGKILL when replicas are stopped."""

    def __init__(self, root: Path, notify: Callable[[str], None]) -> None:
        self.root = root
        self._notify = notify
        self._machine: Machine | None = None
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._said: set[str] = set()
        self._active = 0
        self._idle = threading.Condition()
        self.health = Health("local", "this machine")  # never down: there is no service
        self.on_start: StartHook | None = None
        """Told when a point's run has started (`runner.backends.RunsInCreate`)."""
        self._opened = time.time()
        """When this runner began: a sweep canceled since starts no more points here."""
        self._marks: list[Path] = []
        """What this runner said it will start (`will_start`), removed when it closes."""

    def run_dir(self, sweep: str, name: str) -> RunDir:
        return SweepDir(self.root, sweep).run(name)

    def say(self, text: str, once: str | None = None) -> None:
        """A note on stderr; with `once`, only the first time that topic comes up."""
        with self._lock:
            if once is not None:
                if once in self._said:
                    return
                self._said.add(once)
        self._notify(text)

    # -- lookups ------------------------------------------------------------------------------

    def _resumable(self, run: RunDir, state: RunState) -> None:
        if state.status == RUNNING:
            text = (
                f"stale run {state.experiment}: its runner (pid {state.runner_pid} on"
                f" {state.runner_host}, started {state.started_at}) is gone; starting it again"
            )
        else:
            text = f"interrupted run {state.experiment}: starting it again"
        self.say(text, once=str(run.path))

    def _states(self, sweep: Sweep, names: Iterable[str]) -> Mapping[str, Experiment]:
        found = {}
        for name in names:
            run = self.run_dir(sweep.name, name)
            state, live = seen(run)
            if state is not None:
                found[name] = as_experiment(run, state, live)
        return found

    # -- groups and results -------------------------------------------------------------------

    def ensure_group(self, sweep: Sweep, experiment_ids: Sequence[str]) -> Group:
        """Here a sweep's runs are already together: its group is its run directory."""
        where = SweepDir(self.root, sweep.name).path
        return Group(sweep.name, where.resolve().as_uri(), members=len(set(experiment_ids)))

    def results(self, sweep: Sweep, names: Iterable[str], recorded: Recorded = NOTHING) -> Results:
        """Each run's state file and results/metrics.json, with how long it ran."""
        wanted = list(names)
        found = {n: e for n, (e,) in self.experiments(sweep, wanted, recorded).items()}
        experiments = {}
        for name, experiment in found.items():
            state = self.run_dir(sweep.name, name).read()
            seconds = elapsed_seconds(state.started_at, state.finished_at) if state else None
            experiments[name] = replace(experiment, seconds=seconds)
        return Results(self.ensure_group(sweep, [e.id for e in found.values()]), experiments)

    def experiments(
        self,
        sweep: Sweep,
        names: Iterable[str],
        recorded: Recorded = NOTHING,
        listing: Listing = Listing.SOON,
    ) -> Mapping[str, Sequence[Experiment]]:
        """One run directory per name, so one experiment: live, finished, or a stale run seen
        as canceled (the next submit resumes it). A run's key is in its state file, which only
        the runner writes; a recorded run id has its recorded key, as on every backend. Each
        look reads the run directories, whatever `listing` asks."""
        return {
            name: (replace(exp, key=recorded.keys.get(exp.id, exp.key)),)
            for name, exp in self._states(sweep, names).items()
        }

    # -- running ------------------------------------------------------------------------------

    def create(self, sweep: Sweep, point: Rendered) -> Experiment:
        if self._stop.is_set():
            raise Rejected(f"{point.name}: the runner is stopping")
        run = self.run_dir(sweep.name, point.name)
        self._check_canceled(run)
        replicas = replica_plans(point, run, self.root, self.say)
        self.say(
            f"local backend: images are not used; tasks run on this machine in {self.root},"
            f" with python = {sys.executable}",
            once="image",
        )
        if run.supervised():
            self.say(f"{point.name} is being run by another runner; waiting for it to finish")
        try:
            with self._busy(), run.claim(self._stop):
                previous = run.read()
                if previous is not None and (previous.finished or previous.key != point.key):
                    raise NameTaken(point.name)
                if previous is not None:
                    self._resumable(run, previous)
                    leftovers = stop_leftovers(previous)
                    if leftovers:
                        self.say(f"stopped leftover processes of {point.name}: {leftovers}")
                run.reset()
                state = self._run(
                    point, run, replicas, lambda s: self._started(sweep, point, run, s)
                )
        except BackendError:
            raise  # already one of the port's failures (NameTaken above)
        except (Stopping, RunnerError, OSError) as exc:
            raise Rejected(f"{point.name}: {exc}") from None
        if state.status == FAILED:
            logs = [r.log for r in state.replicas if f"{r.task}/{r.rank}" == state.cause]
            self.say(
                f"run {point.name} failed: replica {state.cause} exited {state.exit_code}"
                f" (log: {run.path / logs[0] if logs else run.path})"
            )
        return as_experiment(run, state, live=False)

    def restart(
        self, sweep: Sweep, point: Rendered, experiment: Experiment, ahead: WriteAhead = NO_RECORD
    ) -> Experiment | None:
        """Run a finished point again in its run directory (a failed or canceled one; a
        succeeded one when `--restart --points` names it: `Capability.RERUNS`); its earlier
        state, logs and results move to attempt-<n>/. None when the run is not finished (or no
        longer). The run is the experiment's: a point renamed since (`experiment_name` edited)
        keeps its run directory."""
        point = replace(point, name=experiment.name)
        run = self.run_dir(sweep.name, point.name)
        replicas = replica_plans(point, run, self.root, self.say)
        try:
            with self._busy(), run.claim(self._stop):
                previous = run.read()  # under the lock: another runner may have restarted it
                generation = str(len(run.attempts()))  # a restart archives one attempt
                if ahead.since and generation != ahead.since and previous is not None:
                    return as_experiment(run, previous, live=False)  # it took effect
                if previous is None or previous.key != point.key or not previous.finished:
                    return None
                ahead.intent(generation)
                kept = run.archive()
                self.say(f"restarting {point.name}; its earlier attempt is in {kept}")
                run.reset()
                state = self._run(point, run, replicas)
        except BackendError:
            raise  # already one of the port's failures (NameTaken above)
        except (Stopping, RunnerError, OSError) as exc:
            raise Rejected(f"{point.name}: {exc}") from None
        return as_experiment(run, state, live=False)

    def cancel(self, sweep: Sweep, experiments: Sequence[Experiment]) -> list[str]:
        """Stop the replicas of runs another runner is running now (SIGTERM to each process
        group whose recorded start time proves it is still that replica); that runner records
        how they ended. A run counts as canceled when at least one of its replicas was
        signalled: a pid now held by another process (or without a start time) is left alone."""
        return [e.name for e in experiments if cancel_run(self.run_dir(sweep.name, e.name), e.key)]

    def stop_starting(self, sweep: Sweep) -> None:
        SweepDir(self.root, sweep.name).mark_canceled()

    def will_start(self, sweep: Sweep, names: Sequence[str]) -> None:
        with self._lock:
            self._marks.append(SweepDir(self.root, sweep.name).will_start(names))

    def starting(self, sweep: Sweep) -> frozenset[str]:
        return SweepDir(self.root, sweep.name).starting()

    def has_checkpoint(self, sweep: Sweep, path: str) -> bool:
        found = local_checkpoint(SweepDir(self.root, sweep.name).path, path)
        return found.is_file() or (found.is_dir() and any(found.iterdir()))

    def _check_canceled(self, run: RunDir) -> None:
        """Raise Canceled when the run's sweep was canceled since this runner began."""
        sweep = run.path.parent.name
        if SweepDir(self.root, sweep).canceled_since(self._opened):
            raise Canceled(
                f"not started: `cancel` canceled the sweep {sweep} while this"
                " submit ran (the next submit starts it)"
            )

    def logs(self, sweep: Sweep, name: str, query: LogQuery) -> Iterator[str]:
        return logfiles.read(self.run_dir(sweep.name, name), query)

    def _started(self, sweep: Sweep, point: Rendered, run: RunDir, state: RunState) -> None:
        if self.on_start is not None:
            self.on_start(sweep, point, as_experiment(run, state, live=True))

    def _run(
        self,
        point: Rendered,
        run: RunDir,
        replicas: Sequence[ReplicaPlan],
        started: Callable[[RunState], None] = lambda state: None,
    ) -> RunState:
        machine = self.machine()
        cpus = sum(r.cpus for r in replicas)
        gpus = sum(r.gpus for r in replicas)
        if gpus > len(machine.gpus):
            self.say(
                f"{point.name} asks for {gpus} GPU(s) and this machine has {len(machine.gpus)};"
                " points get the GPUs there are (BEAKER_ASSIGNED_GPU_COUNT says how many)",
                once="gpus",
            )
        with machine.reserve(cpus, gpus, self._stop) as ids:
            self._check_canceled(run)  # it may have waited for CPUs or GPUs while canceled
            launches = assign_gpus(replicas, ids, bool(machine.gpus))
            states = tuple(
                Replica(x.task, x.rank, x.log, gpus=r.gpus)
                for x, r in zip(launches, replicas, strict=True)
            )
            state = new_state(run.path.parent.name, point.name, point.key, states)
            return Supervisor(run, state, launches, self.root, self._stop, self.grace).run(started)

    def machine(self) -> Machine:
        with self._lock:
            if self._machine is None:
                self._machine = Machine.detect()
            return self._machine

    @contextlib.contextmanager
    def _busy(self) -> Iterator[None]:
        with self._idle:
            self._active += 1
        try:
            yield
        finally:
            with self._idle:
                self._active -= 1
                self._idle.notify_all()

    def usage(self, sweep: Sweep, experiments: Sequence[Experiment]) -> Mapping[str, Usage]:
        """Each run's wall time × its declared GPUs, over its attempts (no call: files here)."""
        found = {e.id: run_usage(self.run_dir(sweep.name, e.name)) for e in experiments}
        return {i: u for i, u in found.items() if u is not None}

    def close(self) -> None:
        """Stop runs still going (they are recorded as interrupted, to be resumed)."""
        self._stop.set()
        with self._idle:
            if self._active:
                self.say(f"stopping {self._active} local run(s); the next submit resumes them")
            self._idle.wait_for(lambda: self._active == 0, timeout=self.grace + 5)
        for mark in self._marks:  # this runner starts nothing more
            mark.unlink(missing_ok=True)
