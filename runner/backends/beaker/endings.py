"""Why an experiment ended (`runner.backends.Ended`), read from its jobs: which job ended it, with
what cancelation code (`states.CAUSES`) and words, and how many times it was preempted.

The workload listing carries no job, and beaker-py lists jobs by task only: an experiment's
jobs cost one paged listing per task. So `Endings` lists them for an experiment that ended
without succeeding (the listing `results` made for a failed one's exit code already), and for
a queued or running one only when it went back since this backend's last look (running to
queued, or ended to queued or running: Beaker resumed it, or it was restarted). Everything else
is told from what the listing says, or from what this backend read before: a look that never
saw a running experiment go back learns of its earlier preemptions once it ends.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from beaker import beaker_pb2 as pb2

from runner.backends import EndCause, Ended, ExperimentState
from runner.backends.beaker.client import Client
from runner.backends.beaker.states import CAUSES, SIBLINGS

CANCELED = pb2.WorkloadStatus.STATUS_CANCELED
FAILED = pb2.WorkloadStatus.STATUS_FAILED
SUCCEEDED = pb2.WorkloadStatus.STATUS_SUCCEEDED
FINAL = (CANCELED, FAILED, SUCCEEDED)
Call = Callable[[str, Callable[[], list[pb2.Job]]], list[pb2.Job]]


def jobs(client: Client, workload: pb2.Workload) -> list[pb2.Job]:
    """Every job of every task of the experiment, each task's newest first: one paged listing
    per task."""
    org = client.resolved_org()
    return [j for task in workload.experiment.tasks for j in client.job.list(org=org, task=task)]


def _replica(job: pb2.Job) -> tuple[str, int]:
    return job.task_id, int(job.system_details.replica_group_details.rank)


def _code(job: pb2.Job) -> str:
    """Its cancelation code's name; a code newer than beaker-py's is one without a reason."""
    try:
        return str(pb2.CancelationCode.Name(job.status.canceled_code))
    except ValueError:
        return "CANCELATION_CODE_UNSPECIFIED"


def _ended_at(job: pb2.Job) -> int:
    status = job.status
    stamps = (status.exited, status.canceled, status.finalized)
    return min((int(s.ToNanoseconds()) for s in stamps if s.ToNanoseconds()), default=0)


def _failed(job: pb2.Job) -> bool:
    """The run itself failed: it exited non-zero (or Beaker says failed) without a cancel."""
    status = job.status
    if status.status == CANCELED:
        return False
    return status.status == FAILED or (status.HasField("exited") and status.exit_code != 0)


def deciding_job(found: Sequence[pb2.Job]) -> pb2.Job | None:
    """The job whose end ended the experiment (or its latest attempt that ended): of each
    replica's newest job that ended without succeeding, the first to fail by itself; else the
    first canceled for a reason of its own (not for a job beside it); else the first."""
    newest: dict[tuple[str, int], pb2.Job] = {}
    for job in found:  # each task's newest first
        if job.status.status in FINAL:
            newest.setdefault(_replica(job), job)
    ended = [j for j in newest.values() if j.status.status != SUCCEEDED]
    failed = [j for j in ended if _failed(j)]
    own = failed or [j for j in ended if _code(j) not in SIBLINGS] or ended
    return min(own, key=_ended_at) if own else None


def preemptions(found: Sequence[pb2.Job]) -> int:
    """How many times the experiment was preempted: the most jobs of any one replica canceled
    for a preemption (its own or a sibling's), so the replicas of one attempt count once."""
    counts: dict[tuple[str, int], int] = {}
    for job in found:
        if job.status.status == CANCELED and CAUSES[_code(job)] is EndCause.PREEMPTED:
            counts[_replica(job)] = counts.get(_replica(job), 0) + 1
    return max(counts.values(), default=0)


def timeout(workload: pb2.Workload, task_id: str = "") -> float | None:
    """The timeout (seconds) of the task (by default the first) as the workload listing says."""
    tasks = workload.experiment.tasks
    task = next((t for t in tasks if t.id == task_id), tasks[0] if tasks else None)
    if task is None or not task.system_details.HasField("timeout"):
        return None
    return float(task.system_details.timeout.ToNanoseconds()) / 1e9 or None


def ended(
    workload: pb2.Workload, state: ExperimentState, found: Sequence[pb2.Job]
) -> tuple[Ended | None, pb2.Job | None]:
    """Why the experiment (or, live, its latest attempt that ended) ended, from every job of
    it, and the job that says so (None where none does: it succeeded, or no job ended); no
    `Ended` for a live one none of whose jobs ended."""
    count = preemptions(found)
    job = None if state is ExperimentState.SUCCEEDED else deciding_job(found)
    if job is None and state.live:
        return None, None
    if job is None:
        cause = EndCause.FAILED if state is ExperimentState.FAILED else EndCause.CANCELED
        cause = EndCause.SUCCEEDED if state is ExperimentState.SUCCEEDED else cause
        text = workload.experiment.canceled_for if cause is EndCause.CANCELED else ""
        return Ended(cause, text, timeout(workload), count), None
    status = job.status
    cause = EndCause.FAILED if _failed(job) else CAUSES[_code(job)]
    text = status.canceled_for or status.failed_scheduling_message or status.message
    return Ended(cause, text, timeout(workload, job.task_id), count), job


class Endings:
    """What this backend read of each experiment's end (by id), and the state it last saw it
    in: so a running one is read again only when it went back."""

    def __init__(self, client: Client, call: Call) -> None:
        self.client = client
        self.call = call
        self._seen: dict[str, ExperimentState] = {}
        self._read: dict[str, Ended] = {}

    def known(self, workload: pb2.Workload, state: ExperimentState) -> Ended | None:
        """What is known without a call: a success, or what was read of a live experiment."""
        read = self._read.get(workload.experiment.id)
        if state is ExperimentState.SUCCEEDED:
            count = read.preemptions if read is not None else None
            return Ended(EndCause.SUCCEEDED, "", timeout(workload), count)
        return read if state.live else None

    def look(
        self, workload: pb2.Workload, state: ExperimentState
    ) -> tuple[Ended | None, pb2.Job | None]:
        """Why it ended and the job that says so, listing its jobs only where `known` cannot
        tell: it ended without succeeding, or it went back since the last look."""
        exp_id = workload.experiment.id
        before, self._seen[exp_id] = self._seen.get(exp_id), state
        back = state.live and before not in (None, state, ExperimentState.QUEUED)
        if not (back or state in (ExperimentState.FAILED, ExperimentState.CANCELED)):
            return self.known(workload, state), None
        name = workload.experiment.name or exp_id
        found = self.call(f"jobs of {name}", lambda: jobs(self.client, workload))
        end, job = ended(workload, state, found)
        if end is not None:
            self._read[exp_id] = end
        return end, job


def exited(job: pb2.Job | None) -> tuple[int, float | None] | None:
    """The job's exit code and how long it ran (None: it never started), if it exited."""
    if job is None or not job.status.HasField("exited"):
        return None
    seconds = None
    if job.status.HasField("started"):
        seconds = float(job.status.exited.ToSeconds() - job.status.started.ToSeconds())
    return int(job.status.exit_code), seconds
