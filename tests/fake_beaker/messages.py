"""Builds beaker-py's real protobuf messages (beaker_pb2) from the fake's records."""

from __future__ import annotations

import json
from typing import Any

from beaker import beaker_pb2 as pb2

from .records import Experiment, GroupRecord, JobRecord, TaskRecord, UserRecord, WorkspaceRecord

WORKLOAD_STATUS = {
    "queued": pb2.WorkloadStatus.STATUS_QUEUED,
    "running": pb2.WorkloadStatus.STATUS_RUNNING,
    "succeeded": pb2.WorkloadStatus.STATUS_SUCCEEDED,
    "failed": pb2.WorkloadStatus.STATUS_FAILED,
    "canceled": pb2.WorkloadStatus.STATUS_CANCELED,
}


def timestamp(seconds: float) -> dict[str, int]:
    """A google.protobuf.Timestamp in the mapping form message constructors accept."""
    nanos = round(seconds * 1e9)
    return {"seconds": nanos // 1_000_000_000, "nanos": nanos % 1_000_000_000}


def user(record: UserRecord) -> pb2.User:
    return pb2.User(id=record.id, name=record.name, display_name=record.name)


def organization(org_id: str, name: str) -> pb2.Organization:
    return pb2.Organization(id=org_id, name=name, display_name=name)


def priority(word: str) -> Any:
    """`urgent` as Beaker's JobPriority (unspecified for "")."""
    return pb2.JobPriority.Value(f"JOB_PRIORITY_{word.upper()}") if word else 0


def workspace(record: WorkspaceRecord, author: UserRecord) -> pb2.Workspace:
    # Workspace.name is the full "org/name" (beaker-py builds the URL /ws/{name} from it).
    return pb2.Workspace(
        id=record.id,
        name=record.full_name,
        created=timestamp(record.created),
        owner_org=organization(record.org_id, record.org),
        author_user=user(author),
        maximum_workload_priority=priority(record.maximum_priority),
    )


def _container_spec(task: TaskRecord) -> pb2.ContainerSpec:
    spec: dict[str, Any] = json.loads(task.spec)
    image = spec.get("image") or {}
    env = [
        pb2.EnvironmentVariable(name=v["name"], secret_reference=v["secret"])
        if v.get("secret") is not None
        else pb2.EnvironmentVariable(name=v["name"], literal=str(v.get("value", "")))
        for v in spec.get("envVars") or []
    ]
    gpus = int((spec.get("resources") or {}).get("gpuCount") or 0)
    return pb2.ContainerSpec(
        resource_request=pb2.ResourceRequest(gpu_count=gpus),
        image_id=image.get("beaker") or "",
        docker_reference=image.get("docker") or "",
        command=[str(c) for c in spec.get("command") or []],
        arguments=[str(a) for a in spec.get("arguments") or []],
        environment_variables=env,
        result_path=(spec.get("result") or {}).get("path") or "",
    )


AUTO_RESUME = True
"""The server's default for a task whose spec leaves `autoResume` out: enabled, as gantry 3.7's
`--no-auto-resume` documents it."""


def auto_resume(task_record: TaskRecord) -> bool:
    """Whether Beaker resumes the task's preempted jobs: its spec's `context.autoResume`, else
    the server's default."""
    context = json.loads(task_record.spec).get("context") or {}
    return bool(context["autoResume"]) if "autoResume" in context else AUTO_RESUME


def _duration(nanos: Any) -> dict[str, int] | None:
    """A spec's duration (nanoseconds) as a google.protobuf.Duration mapping; None if unset."""
    if not isinstance(nanos, int) or isinstance(nanos, bool) or nanos <= 0:
        return None
    return {"seconds": nanos // 1_000_000_000, "nanos": nanos % 1_000_000_000}


def _system_details(task_record: TaskRecord) -> pb2.SystemDetails:
    """The task's priority, the clusters it may run on, its timeout, minimum runtime and
    whether it is resumed after a preemption, as its spec asked."""
    spec: dict[str, Any] = json.loads(task_record.spec)
    context = spec.get("context") or {}
    clusters = (spec.get("constraints") or {}).get("cluster") or []
    kind = pb2.JobPlacementConstraintType.JOB_PLACEMENT_CONSTRAINT_TYPE_CLUSTER
    return pb2.SystemDetails(
        priority=priority(str(context.get("priority") or "")),
        placement_constraints=[pb2.JobPlacementConstraint(type=kind, values=clusters)]
        if clusters
        else [],
        timeout=_duration(spec.get("timeout")),
        min_runtime=_duration(context.get("minRuntime")),
        auto_resume=auto_resume(task_record),
    )


def task(record: Experiment, task_record: TaskRecord) -> pb2.Task:
    return pb2.Task(
        id=task_record.id,
        experiment_id=record.id,
        name=task_record.name,
        author_id=record.author_id,
        created=timestamp(record.created),
        container_spec=_container_spec(task_record),
        system_details=_system_details(task_record),
        status=WORKLOAD_STATUS[record.task_status(task_record.id)],
    )


def workload(record: Experiment) -> pb2.Workload:
    fields: dict[str, Any] = {}
    if record.status == "canceled":
        # Why the experiment is canceled: the words of the job whose cancel ended it.
        ended = [j for j in record.current_jobs() if j.status == "canceled"]
        first = min(ended, key=lambda j: j.status_changed)
        fields.update(canceled=timestamp(record.status_changed), canceled_for=first.canceled_for)
    experiment = pb2.Experiment(
        id=record.id,
        name=record.name,
        author_id=record.author_id,
        workspace_id=record.workspace_id,
        description=record.description,
        tasks=[task(record, t) for t in record.tasks],
        created=timestamp(record.created),
        **fields,
    )
    return pb2.Workload(experiment=experiment, status=WORKLOAD_STATUS[record.status])


def cancelation_code(name: str) -> Any:
    """`system_preemption` (beaker-py's BeakerCancelationCode name) as Beaker's CancelationCode."""
    return pb2.CancelationCode.Value(f"CANCELATION_CODE_{name.upper()}")


def job_status(record: JobRecord) -> pb2.JobStatus:
    """Timestamps, exit code and a cancel's code and words, set the way Beaker sets them for
    each stage."""
    created, changed = timestamp(record.created), timestamp(record.status_changed)
    fields: dict[str, Any] = {"status": WORKLOAD_STATUS[record.status], "created": created}
    if record.started is not None:
        started = timestamp(record.started)
        fields.update(scheduled=started, started=started)
    if record.status in ("succeeded", "failed"):
        fields.update(exited=changed, finalized=changed)
    if record.status == "failed":
        fields.update(failed=changed, message=f"exited with code {record.exit_code}")
    if record.status == "canceled":
        fields.update(
            canceled=changed,
            finalized=changed,
            canceled_code=cancelation_code(record.canceled_code or "manual"),
            canceled_for=record.canceled_for,
        )
    if record.failed_scheduling_message:
        fields["failed_scheduling_message"] = record.failed_scheduling_message
    if record.exit_code is not None:
        fields["exit_code"] = record.exit_code
    return pb2.JobStatus(**fields)


def job(record: Experiment, job_record: JobRecord) -> pb2.Job:
    task_record = record.task(job_record.task_id)
    suffix = f"-r{job_record.replica}" if job_record.replicas > 1 else ""
    system = _system_details(task_record)
    if job_record.replicas > 1:
        system.replica_group_details.CopyFrom(
            pb2.ReplicaGroupDetails(
                id=task_record.group or f"{task_record.id}-{job_record.attempt}",
                size=job_record.replicas,
                rank=job_record.replica,
                is_leader_replica=job_record.replica == 0,
            )
        )
    return pb2.Job(
        id=job_record.id,
        task_id=task_record.id,
        name=f"{record.name or record.id}-{task_record.name}{suffix}",
        author_id=record.author_id,
        workspace_id=record.workspace_id,
        workload_id=record.id,
        status=job_status(job_record),
        container_spec=_container_spec(task_record),
        system_details=system,
        workspace_reference=record.workspace,
        author_reference=record.author,
        workload_created=timestamp(record.created),
        retry_ancestor_id=job_record.retry_ancestor,
    )


def group(record: GroupRecord) -> pb2.Group:
    return pb2.Group(
        id=record.id,
        name=record.name,
        full_name=record.full_name,
        description=record.description,
        workspace_id=record.workspace_id,
        author_id=record.author.id,
        created=timestamp(record.created),
        modified=timestamp(record.modified),
    )


def metric(name: str, value: Any) -> Any:
    """A TaskMetrics.Metric; ``value`` goes into its google.protobuf.Value by type."""
    kind = pb2.GroupParameter.GroupParameterType.GROUP_PARAMETER_METRIC
    out = pb2.TaskMetrics.Metric(group_parameter=pb2.GroupParameter(type=kind, name=name))
    if value is None:
        out.value.null_value = 0  # NULL_VALUE
    elif isinstance(value, bool):
        out.value.bool_value = value
    elif isinstance(value, (int, float)):
        out.value.number_value = float(value)
    else:
        out.value.string_value = str(value)
    return out


def task_metrics(record: Experiment, task_record: TaskRecord, values: dict[str, Any]) -> Any:
    return pb2.TaskMetrics(
        task_id=task_record.id,
        task_name=task_record.name,
        experiment_id=record.id,
        experiment_name=record.name,
        task_status=WORKLOAD_STATUS[record.task_status(task_record.id)],
        metrics=[metric(name, value) for name, value in sorted(values.items())],
    )
