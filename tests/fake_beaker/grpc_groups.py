"""Group RPCs: CreateGroup, GetGroup, UpdateGroup, DeleteGroups, ListGroups,
ListGroupTaskMetrics and GetGroupMetricsExport.

beaker-py 2.8.1 has no ResolveGroupName (``resolve_group_id`` refuses "a/b" and passes
anything else through as an id), so a group is found by id or by listing.
"""

from __future__ import annotations

import csv
import io
from typing import Any

from beaker import beaker_pb2 as pb2

from . import messages
from .grpc_common import ServicerBase, descending, given
from .records import Experiment, GroupRecord, TaskRecord

TaskRow = tuple[Experiment, TaskRecord]


def _filter_groups(groups: list[GroupRecord], opts: Any) -> list[GroupRecord]:
    """ListGroupsRequest.Opts filters (organization_id is ignored) and sort order."""
    if opts.HasField("workspace_id"):
        groups = [g for g in groups if g.workspace_id == opts.workspace_id]
    if opts.HasField("author_id"):
        groups = [g for g in groups if opts.author_id in (g.author.id, g.author.name)]
    if opts.HasField("name_or_description_substring"):
        needle = opts.name_or_description_substring.casefold()
        groups = [g for g in groups if needle in f"{g.name}\n{g.description}".casefold()]
    field = opts.sort_clause.WhichOneof("sort_by") or "name"
    groups.sort(key=lambda g: g.name if field == "name" else getattr(g, field))
    return groups[::-1] if descending(opts.sort_clause) else groups


class GroupsMixin(ServicerBase):
    def _group(self, group_id: str, context: Any) -> GroupRecord:
        return self._found(self.groups.get(group_id), context, f"group {group_id!r}")

    def _task_rows(self, group: GroupRecord) -> list[TaskRow]:
        """Every task of every experiment in the group, in the order they were added."""
        records = [self.state.experiment(exp_id) for exp_id in group.experiment_ids]
        return [(r, t) for r in records if r is not None for t in r.tasks]

    def CreateGroup(self, request: pb2.CreateGroupRequest, context: Any) -> pb2.CreateGroupResponse:
        caller = self._caller(context)
        record = self._or_abort(
            context,
            lambda: self.groups.create(
                request.workspace_id,
                request.name,
                request.description,
                request.experiment_ids,
                caller,
            ),
        )
        return pb2.CreateGroupResponse(group=messages.group(record))

    def GetGroup(self, request: pb2.GetGroupRequest, context: Any) -> pb2.GetGroupResponse:
        return pb2.GetGroupResponse(group=messages.group(self._group(request.group_id, context)))

    def UpdateGroup(self, request: pb2.UpdateGroupRequest, context: Any) -> pb2.UpdateGroupResponse:
        record = self._or_abort(
            context,
            lambda: self.groups.update(
                request.group_id,
                name=given(request, "name"),
                description=given(request, "description"),
                add_experiment_ids=request.add_experiment_ids,
                archived=given(request, "archived"),
            ),
        )
        return pb2.UpdateGroupResponse(group=messages.group(record))

    def DeleteGroups(
        self, request: pb2.DeleteGroupsRequest, context: Any
    ) -> pb2.DeleteGroupsResponse:
        self._or_abort(context, lambda: self.groups.delete(request.group_ids))
        return pb2.DeleteGroupsResponse()

    def ListGroups(self, request: pb2.ListGroupsRequest, context: Any) -> pb2.ListGroupsResponse:
        page, token = self._listing(
            request, lambda opts: _filter_groups(self.groups.all(), opts), lambda g: g.id, context
        )
        return pb2.ListGroupsResponse(
            groups=[messages.group(g) for g in page], next_page_token=token
        )

    def ListGroupTaskMetrics(
        self, request: pb2.ListGroupTaskMetricsRequest, context: Any
    ) -> pb2.ListGroupTaskMetricsResponse:
        def rows(opts: Any) -> list[TaskRow]:
            found = self._task_rows(self._group(opts.group_id, context))
            field = opts.sort_clause.WhichOneof("sort_by")
            if field == "experiment_name":
                found.sort(key=lambda row: (row[0].name, row[1].name))
            elif field == "task_name":
                found.sort(key=lambda row: (row[1].name, row[0].name))
            return found[::-1] if descending(opts.sort_clause) else found

        page, token = self._listing(request, rows, lambda row: row[1].id, context)
        return pb2.ListGroupTaskMetricsResponse(
            task_metrics=[
                messages.task_metrics(r, t, self.telemetry.metrics(t.id)) for r, t in page
            ],
            next_page_token=token,
        )

    def GetGroupMetricsExport(
        self, request: pb2.GetGroupMetricsExportRequest, context: Any
    ) -> pb2.GetGroupMetricsExportResponse:
        """CSV: experiment id and name, task name and status, then one column per metric."""
        rows = self._task_rows(self._group(request.group_id, context))
        values = [self.telemetry.metrics(t.id) for _, t in rows]
        names = sorted({name for v in values for name in v})
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(["experiment_id", "experiment_name", "task_name", "status", *names])
        for (record, task), metrics in zip(rows, values, strict=True):
            status = record.task_status(task.id)
            writer.writerow(
                [record.id, record.name, task.name, status, *(metrics.get(n, "") for n in names)]
            )
        return pb2.GetGroupMetricsExportResponse(csv_data=out.getvalue())
