"""What every part of the fake's gRPC servicer shares: its stores, paging, caller, errors."""

from __future__ import annotations

import base64
import threading
from collections.abc import Callable, Sequence
from typing import Any, NoReturn, TypeVar

import grpc
from beaker import beaker_pb2 as pb2
from beaker import beaker_pb2_grpc

from .clusters import ClusterStore
from .faults import FaultPlan
from .groups import GroupStore
from .records import ApiError, Experiment, UserRecord
from .state import State
from .telemetry import Telemetry

T = TypeVar("T")
TOKEN_PREFIX = "fake-page:"
GRPC_CODES = {
    400: grpc.StatusCode.INVALID_ARGUMENT,
    404: grpc.StatusCode.NOT_FOUND,
    409: grpc.StatusCode.ALREADY_EXISTS,
    412: grpc.StatusCode.FAILED_PRECONDITION,
}


def query(request: Any) -> tuple[Any, str]:
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


def page(
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


def given(message: Any, field: str) -> Any:
    """An optional field's value, or None where the message leaves it unset."""
    return getattr(message, field) if message.HasField(field) else None


def descending(sort_clause: Any) -> bool:
    return bool(sort_clause.sort_order == pb2.SortOrder.SORT_ORDER_DESCENDING)


def seconds(ts: Any) -> float:
    return float(ts.seconds) + ts.nanos / 1e9


class ServicerBase(beaker_pb2_grpc.BeakerServicer):
    def __init__(
        self,
        state: State,
        page_size: int,
        *,
        groups: GroupStore | None = None,
        telemetry: Telemetry | None = None,
        faults: FaultPlan | None = None,
        stopping: threading.Event | None = None,
        clusters: ClusterStore | None = None,
    ) -> None:
        self.state = state
        self.clusters = clusters or ClusterStore()
        self.page_size = page_size
        self.groups = groups or GroupStore(state)
        self.telemetry = telemetry or Telemetry()
        self.faults = faults or FaultPlan()
        self.stopping = stopping or threading.Event()

    def _size(self, requested: int) -> int:
        return min(requested or self.page_size, self.page_size)

    def _experiment(self, experiment_id: str, context: Any) -> Experiment:
        return self._found(
            self.state.experiment(experiment_id), context, f"workload {experiment_id!r}"
        )

    def _found(self, record: T | None, context: Any, what: str) -> T:
        """``record``; where there is none, the call ends NOT_FOUND: "<what> not found"."""
        if record is None:
            self._abort(context, ApiError(404, f"{what} not found"))
        return record

    def _caller(self, context: Any) -> UserRecord:
        """The user whose token authenticated this call (the interceptor has checked it)."""
        metadata = dict(context.invocation_metadata() or ())
        token = str(metadata.get("authorization", "")).partition(" ")[2]
        return self.state.user_for_token(token) or self.state.user

    def _abort(self, context: Any, error: ApiError) -> NoReturn:
        context.abort(GRPC_CODES.get(error.status, grpc.StatusCode.UNKNOWN), error.message)
        raise AssertionError("unreachable")  # context.abort raises

    def _or_abort(self, context: Any, change: Callable[[], T]) -> T:
        """What ``change()`` returns; an ApiError it raises ends the call with that error."""
        try:
            return change()
        except ApiError as e:
            self._abort(context, e)

    def _listing(
        self,
        request: Any,
        items: Callable[[Any], Sequence[T]],
        cursor: Callable[[T], str],
        context: Any,
    ) -> tuple[list[T], str]:
        """One page of ``items(options)`` for a paged List request, and the next page token."""
        try:
            opts, after = query(request)
            return page(items(opts), cursor, opts, after, self._size(opts.page_size))
        except ValueError as e:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(e))
            raise AssertionError("unreachable") from e
