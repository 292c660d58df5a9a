"""The gRPC half of the fake: a BeakerServicer over the fake's State, plus an interceptor.

RPCs not overridden here keep the generated base class's UNIMPLEMENTED answer (grpc also logs
"Exception calling application" for them; that is the base class raising NotImplementedError).

beaker-py retries UNAVAILABLE forever, every 2 s, on every unary RPC whose request type starts
with Get, List or Resolve (ServiceClient._retriable, ``expected_errors``). So an injected
UNAVAILABLE on e.g. GetWorkload costs the client 2 s per injected failure and then succeeds;
while the server is stopped such calls never return. Only RPCs outside that set (none that
this fake implements) surface BeakerServerUnavailableError to the caller.
"""

from __future__ import annotations

import base64
import threading
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import grpc
from beaker import beaker_pb2 as pb2
from beaker import beaker_pb2_grpc

from . import messages
from .faults import CallCounter, FaultPlan
from .records import Experiment
from .state import State

T = TypeVar("T")
TOKEN_PREFIX = "fake-page:"


def _query(request: Any) -> tuple[Any, str]:
    """A list request's options and the id of the last item already returned.

    In ListWorkloadsRequest and ListJobsRequest, ``next_page_token`` and ``options`` share the
    oneof ``opts``: a follow-up request carries only the token, so the token must carry the
    query. Like the real service, the fake encodes the options into its (opaque) tokens.
    """
    if request.WhichOneof("opts") != "next_page_token":
        return request.options, ""
    token = request.next_page_token
    encoded, _, after = token.removeprefix(TOKEN_PREFIX).rpartition(".")
    if not token.startswith(TOKEN_PREFIX) or not encoded or not after:
        raise ValueError(f"invalid page token {token!r}")
    options = type(request.options).FromString(base64.urlsafe_b64decode(encoded))
    return options, after


def _page(
    items: Sequence[T], cursor: Callable[[T], str], options: Any, after: str, size: int
) -> tuple[list[T], str]:
    """The page of ``items`` following the item whose cursor is ``after``, and the next token."""
    keys = [cursor(item) for item in items]
    if after and after not in keys:
        raise ValueError(f"invalid page token: no item {after!r}")
    start = keys.index(after) + 1 if after else 0
    page = list(items[start : start + size])
    if not page or start + size >= len(items):
        return page, ""
    encoded = base64.urlsafe_b64encode(options.SerializeToString()).decode()
    return page, f"{TOKEN_PREFIX}{encoded}.{cursor(page[-1])}"


def _descending(sort_clause: Any) -> bool:
    return bool(sort_clause.sort_order == pb2.SortOrder.SORT_ORDER_DESCENDING)


def _seconds(ts: Any) -> float:
    return float(ts.seconds) + ts.nanos / 1e9


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
        items = [e for e in items if e.created < _seconds(opts.created_before)]
    if opts.HasField("created_after"):
        items = [e for e in items if e.created > _seconds(opts.created_after)]
    return items[::-1] if _descending(opts.sort_clause) else items


class FakeBeakerServicer(beaker_pb2_grpc.BeakerServicer):
    def __init__(self, state: State, page_size: int) -> None:
        self.state = state
        self.page_size = page_size

    def _size(self, requested: int) -> int:
        return min(requested or self.page_size, self.page_size)

    def _experiment(self, experiment_id: str, context: Any) -> Experiment:
        record = self.state.experiment(experiment_id)
        if record is None:
            context.abort(grpc.StatusCode.NOT_FOUND, f"workload {experiment_id!r} not found")
        assert record is not None
        return record

    # Users and organizations.

    def GetUser(self, request: pb2.GetUserRequest, context: Any) -> pb2.GetUserResponse:
        me = self.state.user
        if request.HasField("user_id") and request.user_id not in (me.id, me.name):
            context.abort(grpc.StatusCode.NOT_FOUND, f"user {request.user_id!r} not found")
        return pb2.GetUserResponse(user=messages.user(me))

    def ResolveUserName(
        self, request: pb2.ResolveUserNameRequest, context: Any
    ) -> pb2.ResolveUserNameResponse:
        if request.user_name != self.state.user.name:
            context.abort(grpc.StatusCode.NOT_FOUND, f"user {request.user_name!r} not found")
        return pb2.ResolveUserNameResponse(user_id=self.state.user.id)

    def ResolveOrganizationName(
        self, request: pb2.ResolveOrganizationNameRequest, context: Any
    ) -> pb2.ResolveOrganizationNameResponse:
        org_id = self.state.org_id(request.organization_name)
        if org_id is None:
            context.abort(grpc.StatusCode.NOT_FOUND, "organization not found")
        return pb2.ResolveOrganizationNameResponse(organization_id=org_id)

    def GetOrganization(
        self, request: pb2.GetOrganizationRequest, context: Any
    ) -> pb2.GetOrganizationResponse:
        name = self.state.org_name(request.organization_id)
        if name is None:
            context.abort(grpc.StatusCode.NOT_FOUND, "organization not found")
        assert name is not None
        org_id = self.state.org_id(name) or ""
        return pb2.GetOrganizationResponse(organization=messages.organization(org_id, name))

    # Workspaces.

    def GetWorkspace(
        self, request: pb2.GetWorkspaceRequest, context: Any
    ) -> pb2.GetWorkspaceResponse:
        record = self.state.workspace(request.workspace_id)
        if record is None:
            context.abort(grpc.StatusCode.NOT_FOUND, "workspace not found")
        assert record is not None
        return pb2.GetWorkspaceResponse(workspace=messages.workspace(record, self.state.user))

    def ResolveWorkspaceName(
        self, request: pb2.ResolveWorkspaceNameRequest, context: Any
    ) -> pb2.ResolveWorkspaceNameResponse:
        record = self.state.resolve_workspace(request.owner_name, request.workspace_name)
        if record is None:
            context.abort(grpc.StatusCode.NOT_FOUND, "workspace not found")
        assert record is not None
        return pb2.ResolveWorkspaceNameResponse(workspace_id=record.id)

    # Workloads and experiments.

    def GetWorkload(self, request: pb2.GetWorkloadRequest, context: Any) -> pb2.GetWorkloadResponse:
        record = self._experiment(request.workload_id, context)
        return pb2.GetWorkloadResponse(workload=messages.workload(record))

    def ResolveWorkloadName(
        self, request: pb2.ResolveWorkloadNameRequest, context: Any
    ) -> pb2.ResolveWorkloadNameResponse:
        record = self.state.resolve_experiment(request.author_name, request.workload_name)
        if record is None:
            context.abort(grpc.StatusCode.NOT_FOUND, "workload not found")
        assert record is not None
        return pb2.ResolveWorkloadNameResponse(workload_id=record.id)

    def ListWorkloads(
        self, request: pb2.ListWorkloadsRequest, context: Any
    ) -> pb2.ListWorkloadsResponse:
        try:
            opts, after = _query(request)
            items = _filter_workloads(self.state.experiments(), opts)
            page, token = _page(items, lambda e: e.id, opts, after, self._size(opts.page_size))
        except ValueError as e:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(e))
        return pb2.ListWorkloadsResponse(
            workloads=[messages.workload(e) for e in page], next_page_token=token
        )

    def GetExperimentYamlSpec(
        self, request: pb2.GetExperimentYamlSpecRequest, context: Any
    ) -> pb2.GetExperimentYamlSpecResponse:
        record = self._experiment(request.experiment_id, context)
        # JSON is YAML; sending the posted bytes back keeps them exactly as submitted.
        return pb2.GetExperimentYamlSpecResponse(experiment_spec=record.spec_json)

    # Jobs: one per task, created with the experiment, status set by the test.

    def GetJob(self, request: pb2.GetJobRequest, context: Any) -> pb2.GetJobResponse:
        record = self.state.experiment_for_job(request.job_id)
        if record is None:
            context.abort(grpc.StatusCode.NOT_FOUND, f"job {request.job_id!r} not found")
        assert record is not None
        task = next(t for t in record.tasks if t.job_id == request.job_id)
        return pb2.GetJobResponse(job=messages.job(record, task, record.workspace))

    def ListJobs(self, request: pb2.ListJobsRequest, context: Any) -> pb2.ListJobsResponse:
        try:
            opts, after = _query(request)
            jobs = self._filter_jobs(opts)
            page, token = _page(jobs, lambda j: j.id, opts, after, self._size(opts.page_size))
        except ValueError as e:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(e))
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
            messages.job(r, t, r.workspace)
            for r in records
            for t in r.tasks
            if not opts.HasField("task_id") or t.id == opts.task_id
        ]
        if opts.HasField("finalized"):
            jobs = [j for j in jobs if j.status.HasField("finalized") == opts.finalized]
        if _descending(opts.sort_clause):
            jobs.reverse()
        return jobs


class FaultInterceptor(grpc.ServerInterceptor):
    """Counts every unary call, adds latency, checks the token, then injects queued faults."""

    def __init__(
        self, calls: CallCounter, faults: FaultPlan, token: str, stopping: threading.Event
    ) -> None:
        self.calls = calls
        self.faults = faults
        self.token = token
        self.stopping = stopping

    def intercept_service(self, continuation: Any, handler_call_details: Any) -> Any:
        handler = continuation(handler_call_details)
        if handler is None or handler.unary_unary is None:
            return handler
        rpc = handler_call_details.method.rsplit("/", 1)[-1]
        metadata = dict(handler_call_details.invocation_metadata or ())
        inner = handler.unary_unary

        def behavior(request: Any, context: Any) -> Any:
            self.calls.add(rpc)
            if (latency := self.faults.latency) > 0:
                self.stopping.wait(latency)
            scheme, _, token = str(metadata.get("authorization", "")).partition(" ")
            if scheme.lower() != "bearer" or token != self.token:
                context.abort(grpc.StatusCode.UNAUTHENTICATED, "missing or invalid token")
            if (code := self.faults.next_rpc_fault(rpc)) is not None:
                context.abort(code, f"fake beaker: injected {code.name} on {rpc}")
            return inner(request, context)

        return grpc.unary_unary_rpc_method_handler(
            behavior,
            request_deserializer=handler.request_deserializer,
            response_serializer=handler.response_serializer,
        )
