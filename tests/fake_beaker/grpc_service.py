"""The gRPC half of the fake: a BeakerServicer over the fake's State, plus an interceptor.

Clusters (ListClusters, GetCluster, ResolveClusterName) are served by grpc_clusters.py.
RPCs not overridden here keep the generated base class's UNIMPLEMENTED answer (grpc also logs
"Exception calling application" for them; that is the base class raising NotImplementedError).

beaker-py retries UNAVAILABLE forever, every 2 s, on every unary RPC whose request type starts
with Get, List or Resolve (ServiceClient._retriable, ``expected_errors``). So an injected
UNAVAILABLE on e.g. GetWorkload costs the client 2 s per injected failure and then succeeds;
while the server is stopped such calls never return. Only RPCs outside that set (none that
this fake implements) surface BeakerServerUnavailableError to the caller.

Mutations (CreateGroup, UpdateGroup, DeleteGroups, CancelWorkloads, RestartExperimentTasks,
UpdateWorkload) are not retried: UNAVAILABLE there reaches the caller as
BeakerServerUnavailableError. Groups are served by grpc_groups.py, restarts, cancels and logs
by grpc_lifecycle.py; UpdateWorkload (a job rewriting its description, a rename in the UI) here.
"""

from __future__ import annotations

from typing import Any

import grpc
from beaker import beaker_pb2 as pb2

from . import messages
from .grpc_clusters import ClustersMixin
from .grpc_common import descending, given, seconds
from .grpc_groups import GroupsMixin
from .grpc_lifecycle import LifecycleMixin
from .interceptor import FaultInterceptor
from .records import Experiment

__all__ = ["FakeBeakerServicer", "FaultInterceptor"]


def _filter_workloads(items: list[Experiment], opts: Any) -> list[Experiment]:
    """Apply ListWorkloadsRequest.Opts filters (organization_id is ignored) and sort order."""
    if opts.HasField("workspace_id"):
        items = [e for e in items if e.workspace_id == opts.workspace_id]
    if opts.HasField("author_id"):
        items = [e for e in items if opts.author_id in (e.author_id, e.author)]
    if opts.HasField("name_or_description_substring"):
        needle = opts.name_or_description_substring.casefold()
        items = [e for e in items if needle in f"{e.name}\n{e.description}".casefold()]
    if opts.workload_type == pb2.WorkloadType.WORKLOAD_TYPE_ENVIRONMENT:
        items = []
    if opts.statuses:
        wanted = set(opts.statuses)
        items = [e for e in items if messages.WORKLOAD_STATUS[e.status] in wanted]
    if opts.HasField("job_finalized"):
        items = [e for e in items if e.finalized == opts.job_finalized]
    if opts.HasField("created_before"):
        items = [e for e in items if e.created < seconds(opts.created_before)]
    if opts.HasField("created_after"):
        items = [e for e in items if e.created > seconds(opts.created_after)]
    return items[::-1] if descending(opts.sort_clause) else items


class FakeBeakerServicer(GroupsMixin, LifecycleMixin, ClustersMixin):
    """Every RPC the fake serves; the mixins hold groups, the job lifecycle and clusters."""

    # Users and organizations.

    def GetUser(self, request: pb2.GetUserRequest, context: Any) -> pb2.GetUserResponse:
        user = self._caller(context)
        if request.HasField("user_id"):
            found = self.state.find_user(request.user_id)
            user = self._found(found, context, f"user {request.user_id!r}")
        return pb2.GetUserResponse(user=messages.user(user))

    def ResolveUserName(
        self, request: pb2.ResolveUserNameRequest, context: Any
    ) -> pb2.ResolveUserNameResponse:
        user = self.state.find_user(request.user_name)
        if user is None or user.name != request.user_name:
            context.abort(grpc.StatusCode.NOT_FOUND, f"user {request.user_name!r} not found")
        assert user is not None
        return pb2.ResolveUserNameResponse(user_id=user.id)

    def ResolveOrganizationName(
        self, request: pb2.ResolveOrganizationNameRequest, context: Any
    ) -> pb2.ResolveOrganizationNameResponse:
        org_id = self._found(self.state.org_id(request.organization_name), context, "organization")
        return pb2.ResolveOrganizationNameResponse(organization_id=org_id)

    def GetOrganization(
        self, request: pb2.GetOrganizationRequest, context: Any
    ) -> pb2.GetOrganizationResponse:
        name = self._found(self.state.org_name(request.organization_id), context, "organization")
        org_id = self.state.org_id(name) or ""
        return pb2.GetOrganizationResponse(organization=messages.organization(org_id, name))

    # Workspaces.

    def GetWorkspace(
        self, request: pb2.GetWorkspaceRequest, context: Any
    ) -> pb2.GetWorkspaceResponse:
        record = self._found(self.state.workspace(request.workspace_id), context, "workspace")
        return pb2.GetWorkspaceResponse(workspace=messages.workspace(record, self.state.user))

    def ResolveWorkspaceName(
        self, request: pb2.ResolveWorkspaceNameRequest, context: Any
    ) -> pb2.ResolveWorkspaceNameResponse:
        found = self.state.resolve_workspace(request.owner_name, request.workspace_name)
        record = self._found(found, context, "workspace")
        return pb2.ResolveWorkspaceNameResponse(workspace_id=record.id)

    # Workloads and experiments.

    def GetWorkload(self, request: pb2.GetWorkloadRequest, context: Any) -> pb2.GetWorkloadResponse:
        record = self._experiment(request.workload_id, context)
        return pb2.GetWorkloadResponse(workload=messages.workload(record))

    def ResolveWorkloadName(
        self, request: pb2.ResolveWorkloadNameRequest, context: Any
    ) -> pb2.ResolveWorkloadNameResponse:
        found = self.state.resolve_experiment(request.author_name, request.workload_name)
        record = self._found(found, context, "workload")
        return pb2.ResolveWorkloadNameResponse(workload_id=record.id)

    def ListWorkloads(
        self, request: pb2.ListWorkloadsRequest, context: Any
    ) -> pb2.ListWorkloadsResponse:
        if self.faults.next_empty_listing():
            return pb2.ListWorkloadsResponse()
        page, token = self._listing(
            request,
            lambda opts: _filter_workloads(self.state.experiments(), opts),
            lambda e: e.id,
            context,
        )
        workloads = [messages.workload(e) for e in page]
        if not self.state.listed_specs:
            for workload in workloads:
                for task in workload.experiment.tasks:
                    task.ClearField("container_spec")
        return pb2.ListWorkloadsResponse(workloads=workloads, next_page_token=token)

    def UpdateWorkload(
        self, request: pb2.UpdateWorkloadRequest, context: Any
    ) -> pb2.UpdateWorkloadResponse:
        """A new description (a job's progress) or name (a rename in the UI); the id stays."""
        experiment_id = self._experiment(request.workload_id, context).id
        record = self._or_abort(
            context,
            lambda: self.state.update_workload(
                experiment_id,
                name=given(request, "name"),
                description=given(request, "description"),
            ),
        )
        return pb2.UpdateWorkloadResponse(workload=messages.workload(record))

    def GetExperimentYamlSpec(
        self, request: pb2.GetExperimentYamlSpecRequest, context: Any
    ) -> pb2.GetExperimentYamlSpecResponse:
        record = self._experiment(request.experiment_id, context)
        # JSON is YAML; sending the posted bytes back keeps them exactly as submitted.
        return pb2.GetExperimentYamlSpecResponse(experiment_spec=record.spec_json)

    # Jobs: one per replica of each task, created with the experiment and by each restart;
    # statuses set by the test.

    def GetJob(self, request: pb2.GetJobRequest, context: Any) -> pb2.GetJobResponse:
        found = self.state.experiment_for_job(request.job_id)
        record = self._found(found, context, f"job {request.job_id!r}")
        job = next(j for j in record.jobs if j.id == request.job_id)
        return pb2.GetJobResponse(job=messages.job(record, job))

    def ListJobs(self, request: pb2.ListJobsRequest, context: Any) -> pb2.ListJobsResponse:
        page, token = self._listing(request, self._filter_jobs, lambda j: j.id, context)
        return pb2.ListJobsResponse(jobs=page, next_page_token=token)

    def _filter_jobs(self, opts: Any) -> list[pb2.Job]:
        if opts.HasField("environment_id"):
            records: list[Experiment] = []
        elif opts.HasField("task_id"):
            found = self.state.experiment_for_task(opts.task_id)
            records = [] if found is None else [found]
        else:
            records = self.state.experiments()
        jobs = [
            messages.job(r, j)
            for r in records
            for j in r.jobs
            if not opts.HasField("task_id") or j.task_id == opts.task_id
        ]
        if opts.HasField("finalized"):
            jobs = [j for j in jobs if j.status.HasField("finalized") == opts.finalized]
        if descending(opts.sort_clause):
            jobs.reverse()
        return jobs
