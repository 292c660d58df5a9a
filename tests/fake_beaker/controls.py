"""FakeBeaker's test-facing controls, as mixins: fault injection, and lifecycle state
(users, name scope, job statuses, metrics, logs, restart and cancel counts)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import grpc
from beaker import beaker_pb2_grpc

from . import lifecycle
from .faults import CreateFault, FaultPlan
from .groups import GroupStore
from .records import Experiment, GroupRecord, JobRecord, TaskRecord
from .state import NameScope, State
from .telemetry import Telemetry


def _rpc_name(rpc: str) -> str:
    if not callable(getattr(beaker_pb2_grpc.BeakerServicer, rpc, None)):
        raise ValueError(f"{rpc!r} is not a Beaker RPC")
    return rpc


class FaultControls:
    """Each fault applies to the next ``times`` matching calls, across threads, exactly."""

    _faults: FaultPlan

    @property
    def latency(self) -> float:
        """Seconds added before handling every gRPC call and every create (not /_fake/stats);
        settable while running (e.g. after an untimed set-up)."""
        return self._faults.latency

    @latency.setter
    def latency(self, seconds: float) -> None:
        self._faults.latency = seconds

    def fail_creates(
        self,
        status: int,
        times: int = 1,
        *,
        retry_after: float | None = None,
        message: str | None = None,
    ) -> None:
        """Answer the next creates with ``status``, committing nothing.

        429 gets ``Retry-After: 1`` unless ``retry_after`` says otherwise. The body is
        ``{"message": message}``; by default 429 and 500 carry a message and 502/503 a plain
        text body (pass ``message=""`` to force plain text).
        """
        if status == 429 and retry_after is None:
            retry_after = 1.0
        fault = CreateFault("status", status=status, message=message, retry_after=retry_after)
        self._faults.add_create_faults(fault, times)

    def reset_after_commit(self, times: int = 1) -> None:
        """Commit the next creates, then close their connections without a response."""
        self._faults.add_create_faults(CreateFault("reset"), times)

    def reply_late_after_commit(self, delay: float, times: int = 1) -> None:
        """Commit the next creates, then hold the response for ``delay`` seconds."""
        self._faults.add_create_faults(CreateFault("late", delay=delay), times)

    def garble_after_commit(self, times: int = 1) -> None:
        """Commit the next creates, then answer 200 with an HTML page instead of the experiment."""
        self._faults.add_create_faults(CreateFault("garbled"), times)

    def cut_reply_after_commit(self, times: int = 1) -> None:
        """Commit the next creates, then send status and headers with a Content-Length larger
        than the half body that follows, and close: requests raises ChunkedEncodingError."""
        self._faults.add_create_faults(CreateFault("cut"), times)

    def fail_rpc(self, rpc: str, code: Any, times: int = 1, *, after: int = 0) -> None:
        """Fail the next ``times`` calls of gRPC method ``rpc`` with ``code`` (grpc.StatusCode),
        committing nothing. Unary and server-streaming (StreamJobLogs) methods alike. ``after``:
        the next ``after`` calls of it are answered first (to fail the third listing of a run,
        not its first)."""
        self._faults.add_rpc_faults(_rpc_name(rpc), code, times, after)

    def lose_reply(self, rpc: str, times: int = 1) -> None:
        """The next ``times`` calls of unary ``rpc`` that succeed commit their change, then the
        client gets UNAVAILABLE instead of the reply (e.g. CreateGroup, UpdateGroup,
        CancelWorkloads, RestartExperimentTasks; a failing call does not use one up)."""
        self._faults.add_lost_replies(_rpc_name(rpc), times)

    def hold_reply(self, rpc: str, seconds: float, times: int = 1) -> None:
        """The next ``times`` calls of unary ``rpc`` that succeed commit their change, then wait
        ``seconds`` before replying: the window in which a test kills the runner."""
        self._faults.add_held_replies(_rpc_name(rpc), seconds, times)

    def cut_log_stream(self, after_lines: int, times: int = 1) -> None:
        """The next ``times`` StreamJobLogs calls end with UNAVAILABLE after ``after_lines``
        lines (if the job has more); beaker-py's job.logs resumes from the last timestamp."""
        self._faults.add_log_cuts(after_lines, times)

    def empty_listing(self, times: int = 1) -> None:
        """The next ``times`` ListWorkloads calls answer no workloads at all, as a listing taken
        just before another runner's creates landed would (the race of two accounts)."""
        self._faults.add_empty_listings(times)

    def unavailable(self, rpc: str, times: int = 1, *, after: int = 0) -> None:
        self.fail_rpc(rpc, grpc.StatusCode.UNAVAILABLE, times, after=after)

    def rate_limit(self, per_second: float | None) -> None:
        """Admit at most ``per_second`` creates in any 1 s window; 429 + Retry-After beyond."""
        self._faults.set_rate_limit(per_second)

    def clear_faults(self) -> None:
        """Drop queued faults and the rate limit (latency stays)."""
        self._faults.clear()


class LifecycleControls:
    _state: State
    _groups: GroupStore
    _telemetry: Telemetry

    def delete_experiment(self, experiment_id: str) -> None:
        """Delete an experiment (someone did, in Beaker's UI): no listing nor look-up finds it."""
        self._state.delete_experiment(experiment_id)

    # Users and name scope.

    def add_user(self, name: str, token: str | None = None) -> str:
        """Add a user; returns its token (``fake-token-{name}`` unless given). The token a
        request carries selects its author, on gRPC and on create."""
        token = token or f"fake-token-{name}"
        self._state.add_user(name, token)
        return token

    @property
    def name_scope(self) -> NameScope:
        """``"workspace"`` (default): an experiment name is taken for everyone in its
        workspace; ``"author"``: only for its author, so two users may each create ``foo``."""
        return self._state.name_scope

    @name_scope.setter
    def name_scope(self, scope: NameScope) -> None:
        if scope not in ("workspace", "author"):
            raise ValueError(f"name scope must be 'workspace' or 'author', got {scope!r}")
        self._state.name_scope = scope

    # Experiments by reference: an id, "author/name", or a name only one experiment has.

    def experiment(self, ref: str) -> Experiment:
        found = self._state.experiment(ref)
        if found is None and "/" in ref:
            found = self._state.resolve_experiment(*ref.split("/", 1))
        if found is None:
            named = [e for e in self._state.experiments() if e.name == ref]
            if len(named) > 1:
                raise ValueError(
                    f"{len(named)} experiments are called {ref!r}; use id or author/name"
                )
            found = named[0] if named else None
        if found is None:
            raise KeyError(f"no experiment {ref!r}")
        return found

    @property
    def replica_tasks(self) -> bool:
        """True (default): a spec task's replicas are tasks of their own (see State)."""
        return self._state.replica_tasks

    @replica_tasks.setter
    def replica_tasks(self, value: bool) -> None:
        self._state.replica_tasks = value

    @property
    def listed_specs(self) -> bool:
        """True (default): ListWorkloads carries each task's container_spec (see State)."""
        return self._state.listed_specs

    @listed_specs.setter
    def listed_specs(self, value: bool) -> None:
        self._state.listed_specs = value

    def rewrite(
        self, experiment: str, description: str | None = None, *, name: str | None = None
    ) -> Experiment:
        """Change an experiment's description (as a job does: OLMo-core's BeakerCallback,
        gantry) and/or its name (a rename in the UI), keeping its id and spec; what beaker-py's
        ``workload.update`` does over UpdateWorkload, without a call (see that RPC's test)."""
        record = self.experiment(experiment)
        return self._state.update_workload(record.id, name=name, description=description)

    def _tasks(self, record: Experiment, task: str | None) -> list[TaskRecord]:
        """The tasks running spec task ``task`` (its name, or a task's own name or id), or the
        first spec task's: one, or one per replica."""
        wanted = task if task is not None else record.tasks[0].spec_name
        for candidate in record.tasks:
            if wanted in (candidate.name, candidate.id):
                wanted = candidate.spec_name
                break
        found = [t for t in record.tasks if t.spec_name == wanted]
        if not found:
            raise KeyError(f"experiment {record.id} has no task {task!r}")
        return found

    def _task_id(self, record: Experiment, task: str | None, rank: int = 0) -> str:
        """The task of the spec task's replica ``rank`` (its only task when replicas are jobs)."""
        tasks = self._tasks(record, task)
        return next((t.id for t in tasks if t.group and t.rank == rank), tasks[0].id)

    def set_job_status(
        self,
        experiment: str,
        status: str,
        exit_code: int | None = None,
        *,
        task: str | None = None,
        replica: int | None = None,
        started: float | None = None,
        at: float | None = None,
    ) -> None:
        """Move the current jobs (every replica) of every task, or of ``task`` (of its
        ``replica`` only, if given), to queued/running/succeeded/failed/canceled; the
        experiment's status follows.

        ``exit_code`` defaults to 0 for succeeded and 1 for failed, and stays unset otherwise.
        ``started``, ``at``: the jobs' start and this status's time (`time.time()` seconds;
        by default a job that has started keeps its start, and the status begins now), so a
        test knows each job's `exited - started` exactly.
        """
        record = self.experiment(experiment)
        ids = None
        if task is not None or replica is not None:
            tasks = self._tasks(record, task)
            ids = {
                j.id
                for t in tasks
                for j in record.current_jobs(t.id)
                if replica is None or j.replica == replica
            }
        change = lifecycle.set_status(status, exit_code, ids, (started, at))
        self._state.update_experiment(record.id, change)

    def jobs(self, experiment: str) -> list[JobRecord]:
        """Every job of the experiment, old attempts included, in creation order."""
        return list(self.experiment(experiment).jobs)

    def restarts(self, experiment: str) -> int:
        """RestartExperimentTasks calls that restarted this experiment."""
        return self._telemetry.restarts[self.experiment(experiment).id]

    def cancels(self, experiment: str) -> int:
        """Committed CancelWorkloads calls naming this experiment (no-ops on finished ones
        included, so a test can see a second, redundant cancel)."""
        return self._telemetry.cancels[self.experiment(experiment).id]

    # Metrics and logs.

    def set_metrics(
        self, experiment: str, metrics: dict[str, Any], task: str | None = None, replica: int = 0
    ) -> None:
        """Replace the metrics of a task's replica (the first task's rank 0 by default), as
        ListGroupTaskMetrics reports them."""
        record = self.experiment(experiment)
        self._telemetry.set_metrics(self._task_id(record, task, replica), metrics)

    def _job_id(self, experiment: str, task: str | None, replica: int) -> str:
        record = self.experiment(experiment)
        tasks = self._tasks(record, task)
        jobs = [j for t in tasks for j in record.current_jobs(t.id) if j.replica == replica]
        if not jobs:
            raise KeyError(f"no replica {replica}: the task has {tasks[0].replicas}")
        return jobs[0].id

    def set_logs(
        self,
        experiment: str,
        lines: Iterable[str | bytes],
        task: str | None = None,
        replica: int = 0,
    ) -> None:
        """Replace the log of the current job of ``task``'s ``replica``. Each line is one
        JobLog message, sent as given (add your own newlines), timestamps 1 µs+ apart."""
        self._telemetry.add_logs(self._job_id(experiment, task, replica), lines, replace=True)

    def append_logs(
        self,
        experiment: str,
        lines: Iterable[str | bytes],
        task: str | None = None,
        replica: int = 0,
    ) -> None:
        """Like set_logs, but add to the log (a following stream sees the new lines)."""
        self._telemetry.add_logs(self._job_id(experiment, task, replica), lines, replace=False)

    # Groups.

    def groups(self) -> list[GroupRecord]:
        return self._groups.all()
