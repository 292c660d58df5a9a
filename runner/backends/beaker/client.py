"""beaker-py's client as the backend uses it: credentials read once, HTTP sessions kept per
worker thread, Retry-After headers remembered, beaker-py's own retries made visible, and no use
of it at all outside a gateway call (`runner.backends.beaker.gateway`).

The guard is built into the client: its gRPC stub checks, on every RPC, and its HTTP sessions
check, on every request, that the calling thread is inside a gateway call (`admitted`), else
raise `OutsideGateway`. So a new path that reaches Beaker around the gateway, where the
command's deadline lives, fails in every test that takes it instead of hanging the day Beaker
is down.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import email.utils
import logging
import os
import threading
from collections.abc import Callable, Iterator
from typing import Any, cast

import requests
from beaker import Beaker, beaker_pb2_grpc
from beaker import beaker_pb2 as pb2
from beaker.config import Config
from beaker.exceptions import BeakerConfigurationError, BeakerError
from requests.adapters import HTTPAdapter

TOKEN_HELP = (
    "no Beaker token found: set BEAKER_TOKEN (in CI: the `beaker` environment's secret) or run"
    " `beaker config set user_token ...` to write ~/.beaker/config.yml"
)


def credentials() -> Config | None:
    """beaker-py's configuration when it has a token (env var or config file); else None."""
    try:
        config = Config.from_env()
    except (BeakerConfigurationError, BeakerError, OSError, ValueError):
        return None
    if not config.user_token and os.environ.get("BEAKER_TOKEN"):
        config.user_token = os.environ["BEAKER_TOKEN"]
    return config if config.user_token else None


class OutsideGateway(RuntimeError):
    """The client was used outside a gateway call: a bug, a path around the command's deadline."""


_calling = threading.local()


@contextlib.contextmanager
def admitted(what: str) -> Iterator[None]:
    """Inside: this thread may use the client, for the call `what` (the gateway runs each call
    inside one, on the thread that carries it)."""
    before = getattr(_calling, "what", None)
    _calling.what = what
    try:
        yield
    finally:
        _calling.what = before


def check_admitted(use: str) -> None:
    """OutsideGateway unless this thread is inside a gateway call."""
    if getattr(_calling, "what", None) is None:
        raise OutsideGateway(
            f"{use} outside a gateway call: every Beaker call goes through"
            " runner.backends.beaker.gateway.Gateway (read or once), where the deadline lives"
        )


class Retried(Exception):
    """beaker-py announced a retry of `error`: raised from the announcement, inside its retry
    loop's `except` handler, it ends that loop (the gateway retries on the command's clock)."""

    def __init__(self, error: BaseException) -> None:
        super().__init__(str(error))
        self.error = error


class _GuardedMethod:
    """One of the stub's RPC methods, checked on every call. `_method` is what beaker-py's
    `RpcMethod.name` reads off a method (its bytes path)."""

    def __init__(self, name: str, method: Any) -> None:
        self._name = name
        self._inner = method
        self._method = method._method

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        check_admitted(f"the gRPC call {self._name}")
        return self._inner(*args, **kwargs)


class _GuardedStub:
    """beaker-py's gRPC stub, each of its methods guarded."""

    def __init__(self, stub: beaker_pb2_grpc.BeakerStub) -> None:
        self._stub = stub

    def __getattr__(self, name: str) -> _GuardedMethod:
        return _GuardedMethod(name, getattr(self._stub, name))


class _GuardedAdapter(HTTPAdapter):
    """beaker-py's HTTP adapter (its urllib3 `Retry` and pool size), checked on every request."""

    def send(self, request: requests.PreparedRequest, *args: Any, **kwargs: Any) -> Any:
        check_admitted(f"the HTTP request {request.method} {request.path_url}")
        return super().send(request, *args, **kwargs)


RETRY_LOG = "Request failed with retriable error"
"""How beaker-py's `_log_and_wait` starts the message it logs before each of its retries."""

OnRetry = Callable[[BaseException, float], None]


class _RetryWatcher(logging.Logger):
    """beaker-py's client logger, reduced to one job: hand each retry it announces (error,
    seconds to wait) to a callback, and drop everything else.

    Its level is WARNING, so beaker-py's `isEnabledFor(DEBUG)` checks fail and it never builds
    a debug record nor decodes a reply for one (a DEBUG-level logger cost about 1.3 ms of CPU
    per create). `_log_and_wait` announces retries through `log()`, at whatever level, which is
    caught here before any record is made.
    """

    def __init__(self, on_retry: OnRetry) -> None:
        super().__init__("beaker.sweep-runner", logging.WARNING)
        self.propagate = False
        self.addHandler(logging.NullHandler())  # never logging's last-resort stderr handler
        self.on_retry = on_retry

    def log(self, level: int, msg: object, *args: Any, **kwargs: Any) -> None:
        if not isinstance(msg, str) or not msg.startswith(RETRY_LOG) or len(args) != 3:
            return
        error, seconds = args[1], args[2]
        if isinstance(error, BaseException):
            self.on_retry(error, float(seconds) if isinstance(seconds, (int, float)) else 0.0)


class Client(Beaker):
    """beaker-py's client, plus kept HTTP sessions and the last Retry-After seen on a thread.

    beaker-py keeps one `requests` session per thread, but only while that thread is inside
    `with client:`; otherwise every request builds a session and a TLS connection of its own
    and closes them again (about a quarter of the runner's CPU at 1 000 creates). `hold_session`
    enters (and never leaves) that state on the calling thread. The session lives in beaker-py's
    `threading.local`, so it is closed when its thread ends, or by `close` on the thread that
    calls it. beaker-py turns a 429 into `BeakerError("[code=429] ...")` without the response,
    so the header would be lost; a response hook on each session keeps it.
    """

    retry_after = threading.local()
    _organization_lock = threading.Lock()
    _service_lock = threading.Lock()

    def resolved_org(self, name: str | None = None) -> pb2.Organization:
        """An organization by name (None: the default one), resolved once per client:
        beaker-py's listings, given a name or none, resolve it with an RPC of their own on
        every call (an extra RPC per failed point in `status`, per task in a restart)."""
        if name is None:  # the default one, by its name: one look-up when named as well
            workspace = self.config.default_workspace or ""
            name = self.config.default_org or (
                workspace.split("/", 1)[0] if "/" in workspace else None
            )
        with self._organization_lock:
            if "_resolved" not in self.__dict__:
                self._resolved: dict[str | None, pb2.Organization] = {}
            if name not in self._resolved:
                self._resolved[name] = pb2.Organization(id=self.job.resolve_org_id(name))
            return self._resolved[name]

    def watch_retries(self, on_retry: OnRetry) -> None:
        """Call `on_retry(error, seconds)` before each of beaker-py's own retries.

        beaker-py retries Get/List/Resolve RPCs on UNAVAILABLE without end, 2 s apart, and logs
        each retry on its client's logger before sleeping; that call is the only sign of them.
        This client gets a logger of its own (not registered, so nothing else sees it, and it
        never reaches the root logger) that passes them on.
        """
        self.logger = _RetryWatcher(on_retry)  # beaker-py's services read self.beaker.logger

    @property
    def service(self) -> beaker_pb2_grpc.BeakerStub:
        """beaker-py's stub, refused outside a gateway call and guarded on every RPC (a method
        taken inside one and called after, a listing's later pages, is refused too)."""
        check_admitted("Beaker's gRPC service")
        with self._service_lock:  # one channel, whichever call opens it first
            if self._service is None or "_guarded" not in self.__dict__:
                self._guarded = _GuardedStub(super().service)  # beaker-py opens the channel
            return cast(beaker_pb2_grpc.BeakerStub, self._guarded)

    def _init_http_session(self) -> requests.Session:
        session: requests.Session = super()._init_http_session()
        adapter = session.get_adapter("https://")
        assert isinstance(adapter, HTTPAdapter)
        guarded = _GuardedAdapter(max_retries=adapter.max_retries, pool_maxsize=self.POOL_MAXSIZE)
        session.mount("https://", guarded)
        session.mount("http://", guarded)
        session.hooks["response"].append(self._note_retry_after)
        return session

    def hold_session(self) -> None:
        """Keep this thread's HTTP session (and its connection) open until `release_session`
        (or `close`) on this thread."""
        self.__enter__()  # creates the thread's session unless it has one; never exited here

    def release_session(self) -> None:
        """Close this thread's HTTP session, if it holds one (a gateway's thread, as it ends)."""
        session = getattr(self._thread_local, "http_session", None)
        if session is not None:
            session.close()
        self._thread_local.http_session = None

    @classmethod
    def _note_retry_after(cls, response: requests.Response, *args: Any, **kwargs: Any) -> None:
        cls.retry_after.value = (
            retry_after_seconds(response) if response.status_code in (429, 503) else None
        )

    @classmethod
    def last_retry_after(cls) -> float | None:
        return getattr(cls.retry_after, "value", None)


def retry_after_seconds(response: requests.Response | None) -> float | None:
    """A Retry-After header's delay in seconds (a number or an HTTP date); None without one."""
    if response is None:
        return None
    value = response.headers.get("Retry-After")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.timezone.utc)
    return max(0.0, (when - dt.datetime.now(dt.timezone.utc)).total_seconds())
