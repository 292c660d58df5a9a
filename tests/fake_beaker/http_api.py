"""The HTTPS half of the fake: ``POST /api/v3/workspaces/{id}/experiments``, stats and a count
of the connections creates arrived on (``GET /_fake/connections``), which shows whether a client
reuses its connections or pays a TLS handshake per request.

Error bodies are ``{"message": ...}``, which beaker-py's ``http_request`` parses: 409 becomes
BeakerExperimentConflict, other 4xx with a message BeakerError("[code=N] message"), 5xx with a
message requests' HTTPError(message), and a body without a message the original HTTPError.
"""

from __future__ import annotations

import contextlib
import json
import re
import socket
import ssl
import struct
import sys
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from .faults import DEFAULT_MESSAGES, CallCounter, CreateFault, FaultPlan
from .records import ApiError
from .state import State

CREATE_PATH = re.compile(r"^/api/v3/workspaces/(?P<workspace>[^/]+)/experiments$")
STATS_PATH = "/_fake/stats"
CONNECTIONS_PATH = "/_fake/connections"


@dataclass(frozen=True)
class Reply:
    status: int
    body: bytes
    content_type: str = "application/json"
    retry_after: str | None = None
    then: str = "send"  # "send", "reset" (close without answering), "late", "garbled", "cut"
    delay: float = 0.0


def _json_reply(status: int, payload: Any, **kwargs: Any) -> Reply:
    return Reply(status=status, body=json.dumps(payload).encode(), **kwargs)


def _fault_reply(fault: CreateFault) -> Reply:
    message = fault.message if fault.message is not None else DEFAULT_MESSAGES.get(fault.status)
    retry_after = fault.retry_after_header()
    if message:
        return _json_reply(fault.status, {"message": message}, retry_after=retry_after)
    text = f"fake beaker: injected {fault.status}".encode()
    return Reply(fault.status, text, content_type="text/plain", retry_after=retry_after)


class CreateEndpoint:
    """Decides the reply to each request; the handler below only moves bytes."""

    def __init__(self, state: State, faults: FaultPlan, calls: CallCounter) -> None:
        self.state = state
        self.faults = faults
        self.calls = calls

    def stats(self) -> Reply:
        return _json_reply(
            200,
            {"calls": dict(self.calls.snapshot()), "experiments": len(self.state.experiments())},
        )

    def create(self, path: str, authorization: str | None, body: bytes) -> Reply:
        url = urlsplit(path)
        match = CREATE_PATH.match(url.path)
        if match is None:
            return _json_reply(404, {"message": f"no route for POST {url.path}"})
        self.calls.add("http:create")
        scheme, _, token = (authorization or "").partition(" ")
        author = self.state.user_for_token(token) if scheme == "Bearer" else None
        if author is None:
            return _json_reply(401, {"message": "missing or invalid token"})
        fault = self.faults.next_create_fault()
        if fault is not None and fault.kind == "status":
            return _fault_reply(fault)
        wait = self.faults.admit_create()
        if wait is not None:
            return _fault_reply(CreateFault("status", status=429, retry_after=wait))
        names = parse_qs(url.query).get("name")
        try:
            record = self.state.create_experiment(
                match["workspace"], names[-1] if names else None, body, author
            )
        except ApiError as e:
            reply = _json_reply(e.status, {"message": e.message})
        else:
            reply = _json_reply(
                200,
                {
                    "id": record.id,
                    "name": record.name,
                    "fullName": record.full_name,
                    "workspace": record.workspace,
                    "author": record.author,
                },
            )
        if fault is not None:
            return Reply(reply.status, reply.body, then=fault.kind, delay=fault.delay)
        return reply


class _Handler(BaseHTTPRequestHandler):
    """One instance per TCP (and so TLS) connection; HTTP/1.1 keeps it for many requests."""

    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # else small replies wait ~40 ms on a delayed ACK
    timeout = 60
    server: ApiServer
    _posted = False

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        path = urlsplit(self.path).path
        if path == STATS_PATH:
            self._send(self.server.endpoint.stats())
        elif path == CONNECTIONS_PATH:
            self._send(_json_reply(200, {"posting": self.server.posting_connections}))
        else:
            self._send(_json_reply(404, {"message": "not found"}))

    def do_POST(self) -> None:
        if not self._posted:
            self._posted = True
            self.server.count_posting_connection()
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if (latency := self.server.endpoint.faults.latency) > 0:
            self.server.stopping.wait(latency)
        reply = self.server.endpoint.create(self.path, self.headers.get("Authorization"), body)
        if reply.then == "reset":
            # Committed; now drop the connection with an RST and no response.
            self.close_connection = True
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        if reply.then == "late":
            self.server.stopping.wait(reply.delay)
        if reply.then == "garbled":
            reply = Reply(200, b"<html><body>Welcome</body></html>", content_type="text/html")
        if reply.then == "cut":
            # Promise the whole body, send half of it, then close: an IncompleteRead.
            self.close_connection = True
            self._send(reply, length=len(reply.body) + 64, cut=len(reply.body) // 2)
            with contextlib.suppress(OSError):
                self.connection.shutdown(socket.SHUT_RDWR)
            return
        self._send(reply)

    def _send(self, reply: Reply, length: int | None = None, cut: int | None = None) -> None:
        try:
            self.send_response(reply.status)
            self.send_header("Content-Type", reply.content_type)
            self.send_header("Content-Length", str(len(reply.body) if length is None else length))
            if reply.retry_after is not None:
                self.send_header("Retry-After", reply.retry_after)
            self.end_headers()
            self.wfile.write(reply.body if cut is None else reply.body[:cut])
            self.wfile.flush()
        except OSError:  # the client gave up (late reply) or the server is stopping
            self.close_connection = True


class ApiServer(ThreadingHTTPServer):
    """A threaded HTTPS server that can drop every open connection when stopped."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(
        self,
        port: int,
        endpoint: CreateEndpoint,
        context: ssl.SSLContext,
        stopping: threading.Event,
    ) -> None:
        self.endpoint = endpoint
        self.stopping = stopping
        self._open: set[socket.socket] = set()
        self._open_lock = threading.Lock()
        self.posting_connections = 0
        """Connections that carried at least one POST: each paid a TCP and a TLS handshake."""
        super().__init__(("127.0.0.1", port), _Handler)
        # Handshakes happen on first read, in the handler thread, so accept() never blocks.
        self.socket = context.wrap_socket(
            self.socket, server_side=True, do_handshake_on_connect=False
        )

    def get_request(self) -> tuple[Any, Any]:
        conn, addr = self.socket.accept()
        with self._open_lock:
            self._open.add(conn)
        return conn, addr

    @property
    def open_connections(self) -> int:
        with self._open_lock:
            return len(self._open)

    def count_posting_connection(self) -> None:
        with self._open_lock:
            self.posting_connections += 1

    def shutdown_request(self, request: Any) -> None:
        with self._open_lock:
            self._open.discard(request)
        super().shutdown_request(request)

    def handle_error(self, request: Any, client_address: Any) -> None:
        # Clients vanish (read timeouts, resets, stop()); only a real bug deserves a traceback.
        if not isinstance(sys.exc_info()[1], OSError):
            super().handle_error(request, client_address)

    def drop_connections(self) -> None:
        with self._open_lock:
            connections, self._open = list(self._open), set()
        for conn in connections:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)


def server_context(cert_chain_path: str, key_path: str) -> ssl.SSLContext:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert_chain_path, key_path)
    return context
