"""Wraps every RPC handler: counts calls, adds latency, authenticates, injects faults."""

from __future__ import annotations

import threading
from typing import Any

import grpc

from .faults import CallCounter, FaultPlan
from .state import State


class FaultInterceptor(grpc.ServerInterceptor):
    """Counts every unary and server-streaming call, adds latency, checks the token against the
    fake's users, then injects queued faults: a status instead of handling the call, or (for
    unary calls) a lost reply: the handler commits, then the client gets UNAVAILABLE."""

    def __init__(
        self, calls: CallCounter, faults: FaultPlan, state: State, stopping: threading.Event
    ) -> None:
        self.calls = calls
        self.faults = faults
        self.state = state
        self.stopping = stopping

    def _admit(self, rpc: str, metadata: dict[str, Any], context: Any) -> None:
        self.calls.add(rpc)
        if (latency := self.faults.latency) > 0:
            self.stopping.wait(latency)
        scheme, _, token = str(metadata.get("authorization", "")).partition(" ")
        if scheme.lower() != "bearer" or self.state.user_for_token(token) is None:
            context.abort(grpc.StatusCode.UNAUTHENTICATED, "missing or invalid token")
        if (code := self.faults.next_rpc_fault(rpc)) is not None:
            context.abort(code, f"fake beaker: injected {code.name} on {rpc}")

    def intercept_service(self, continuation: Any, handler_call_details: Any) -> Any:
        handler = continuation(handler_call_details)
        if handler is None:
            return handler
        rpc = handler_call_details.method.rsplit("/", 1)[-1]
        metadata = dict(handler_call_details.invocation_metadata or ())
        if handler.unary_unary is not None:
            return self._unary(handler, rpc, metadata)
        if handler.unary_stream is not None:
            return self._stream(handler, rpc, metadata)
        return handler

    def _unary(self, handler: Any, rpc: str, metadata: dict[str, Any]) -> Any:
        inner = handler.unary_unary

        def behavior(request: Any, context: Any) -> Any:
            self._admit(rpc, metadata, context)
            response = inner(request, context)
            held = self.faults.next_held_reply(rpc)
            if held:
                self.stopping.wait(held)  # committed; the reply waits (until the fake stops)
            if self.faults.next_lost_reply(rpc):
                context.abort(
                    grpc.StatusCode.UNAVAILABLE, f"fake beaker: reply lost after {rpc} committed"
                )
            return response

        return grpc.unary_unary_rpc_method_handler(
            behavior,
            request_deserializer=handler.request_deserializer,
            response_serializer=handler.response_serializer,
        )

    def _stream(self, handler: Any, rpc: str, metadata: dict[str, Any]) -> Any:
        inner = handler.unary_stream

        def behavior(request: Any, context: Any) -> Any:
            self._admit(rpc, metadata, context)
            yield from inner(request, context)

        return grpc.unary_stream_rpc_method_handler(
            behavior,
            request_deserializer=handler.request_deserializer,
            response_serializer=handler.response_serializer,
        )
