"""beaker-py's client as the backend uses it: credentials read once, HTTP sessions kept per
worker thread, and Retry-After headers remembered."""

from __future__ import annotations

import datetime as dt
import email.utils
import os
import threading
from typing import Any

import requests
from beaker import Beaker
from beaker.config import Config
from beaker.exceptions import BeakerConfigurationError, BeakerError

TOKEN_HELP = (
    "no Beaker token found: set BEAKER_TOKEN (in CI: a repository secret) or run `beaker config set"
    " user_token ...` to write ~/.beaker/config.yml"
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
