"""beaker-py's client as the backend uses it: credentials read once, HTTP sessions kept per
worker thread, Retry-After headers remembered, and beaker-py's own retries made visible."""

from __future__ import annotations

import datetime as dt
import email.utils
import logging
import os
import threading
from collections.abc import Callable
from typing import Any

import requests
from beaker import Beaker
from beaker import beaker_pb2 as pb2
from beaker.config import Config
from beaker.exceptions import BeakerConfigurationError, BeakerError

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

    def _init_http_session(self) -> requests.Session:
        session: requests.Session = super()._init_http_session()
        session.hooks["response"].append(self._note_retry_after)
        return session

    def hold_session(self) -> None:
        """Keep this thread's HTTP session (and its connection) open until `close`."""
        self.__enter__()  # creates the thread's session unless it has one; never exited here

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
