"""Lifecycle RPCs: RestartExperimentTasks, CancelWorkloads and StreamJobLogs.

StreamJobLogs is server-streaming. beaker-py's ``job.logs`` retries a stream that ends in
UNAVAILABLE (or INTERNAL "RST_STREAM") forever, 2 s apart, asking again with ``since`` set to
the last line's timestamp + 1 ns and no ``tail_lines``; with ``follow`` it also asks again
until GetJob says the job is finalized. So ``since`` is honoured to the nanosecond here.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import grpc
from beaker import beaker_pb2 as pb2

from . import lifecycle, messages
from .grpc_common import ServicerBase

FOLLOW_POLL = 0.05  # seconds between checks for new lines and a finished job


class LifecycleMixin(ServicerBase):
    def RestartExperimentTasks(
        self, request: pb2.RestartExperimentTasksRequest, context: Any
    ) -> pb2.RestartExperimentTasksResponse:
        experiment_id = self._experiment(request.experiment_id, context).id
        restart = lifecycle.restart(lambda: self.state.new_id("JOB"))
        record = self._or_abort(
            context, lambda: self.state.update_experiment(experiment_id, restart)
        )
        self.telemetry.count_restart(experiment_id)
        return pb2.RestartExperimentTasksResponse(workload=messages.workload(record))

    def CancelWorkloads(
        self, request: pb2.CancelWorkloadsRequest, context: Any
    ) -> pb2.CancelWorkloadsResponse:
        """All or nothing: an unknown id fails the call before anything is canceled. Answers
        the ids that were queued or running (now canceled); finished ones stay as they are."""
        ids = list(dict.fromkeys(request.workload_ids))
        for workload_id in ids:
            self._experiment(workload_id, context)
        canceled, by = [], lifecycle.cancel(self._caller(context).name)
        for workload_id in ids:
            before = self.state.experiment(workload_id)
            self.state.update_experiment(workload_id, by)
            self.telemetry.count_cancel(workload_id)
            if before is not None and not before.finalized:
                canceled.append(workload_id)
        return pb2.CancelWorkloadsResponse(workload_ids=canceled)

    def StreamJobLogs(self, request: pb2.StreamJobLogsRequest, context: Any) -> Iterator[Any]:
        self._found(
            self.state.experiment_for_job(request.job_id), context, f"job {request.job_id!r}"
        )
        since = 0
        if request.HasField("since"):
            since = request.since.seconds * 1_000_000_000 + request.since.nanos
        cut = self.faults.next_log_cut()
        sent, first = 0, True
        while True:
            # Decide before reading, so lines written before the job finished are all sent.
            done = not request.follow or self._job_finalized(request.job_id)
            done = done or self.stopping.is_set() or not context.is_active()
            lines = self.telemetry.logs(request.job_id, since)
            if first and request.tail_lines > 0:
                lines = lines[-request.tail_lines :]
            first = False
            for stamp, message in lines:
                if cut is not None and sent >= cut:
                    context.abort(grpc.StatusCode.UNAVAILABLE, "fake beaker: log stream cut")
                yield pb2.JobLog(timestamp=_timestamp(stamp), message=message)
                sent += 1
                since = stamp + 1
            if done:
                return
            self.telemetry.wait_for_logs(FOLLOW_POLL)

    def _job_finalized(self, job_id: str) -> bool:
        record = self.state.experiment_for_job(job_id)
        return record is not None and any(j.finalized for j in record.jobs if j.id == job_id)


def _timestamp(nanos: int) -> dict[str, int]:
    return {"seconds": nanos // 1_000_000_000, "nanos": nanos % 1_000_000_000}
