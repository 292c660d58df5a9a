"""beaker-py's, requests' and gRPC's errors translated into the three the submit protocol knows.

Every call the backend makes goes through `call` (on the gateway's thread that carries it, where
a Retry-After header was noted), so each failure is classified in one place:
`Transient` (worth retrying; `maybe_committed` when the request may have taken effect),
`NameTaken` (409) and `Rejected` (a client error, never retried). The rule for what is left:
any failure after the request may have been sent is ambiguous (the next attempt looks the name
up before it creates again), never "unexpected". Only a failure to connect at all is known not
to have reached Beaker.

| failure                                              | becomes                               |
|------------------------------------------------------|---------------------------------------|
| HTTP 409 (BeakerExperimentConflict)                  | NameTaken                             |
| workspace not found, HTTP 403 / gRPC PERMISSION_DENIED | Rejected                            |
| BeakerServerError (gRPC INTERNAL, UNAVAILABLE, ...)  | Transient, ambiguous                  |
| HTTP 5xx                                             | Transient, ambiguous                  |
| HTTP 429                                             | Transient, not committed, Retry-After |
| other HTTP 4xx (plain text or JSON), gRPC NOT_FOUND  | Rejected                              |
| connect timeout, connection refused                  | Transient, not committed, unreachable |
| reset, read timeout, reply cut mid-body (any other requests error) | Transient, ambiguous    |
| raw gRPC UNAVAILABLE / DEADLINE_EXCEEDED / RESOURCE_EXHAUSTED | Transient, ambiguous         |
| any other raw gRPC error                             | Rejected                              |
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import grpc
import requests
from beaker.exceptions import (
    BeakerError,
    BeakerExperimentConflict,
    BeakerPermissionsError,
    BeakerServerError,
    BeakerServerUnavailableError,
    BeakerWorkspaceNotFound,
)

from runner.backends import NameTaken, Rejected, Transient
from runner.backends.beaker.client import Client, Retried, retry_after_seconds
from runner.core.errors import BackendError

T = TypeVar("T")

_REASONS = (
    ("connection refused", "connection refused"),
    ("failed to connect", "cannot connect"),
    ("name or service not known", "address not found"),
    ("dns resolution failed", "address not found"),
    ("deadline exceeded", "timed out"),
    ("timed out", "timed out"),
)


def unreachable_reason(error: BaseException) -> str | None:
    """Why Beaker could not be reached at all ('connection refused', ...); None when the error
    is a reply Beaker gave, or a connection lost after the request went out."""
    text = str(error).casefold()
    if isinstance(error, requests.exceptions.ConnectTimeout):
        return "connect timeout"
    connect = isinstance(error, requests.exceptions.ConnectionError) and (
        "newconnectionerror" in text or "connection refused" in text
    )
    unavailable = isinstance(error, BeakerServerUnavailableError) or (
        isinstance(error, grpc.Call) and error.code() == grpc.StatusCode.UNAVAILABLE
    )
    if not (connect or unavailable):
        return None
    for needle, reason in _REASONS:
        if needle in text:
            return reason
    return "UNAVAILABLE" if unavailable else "cannot connect"


def call(what: str, fn: Callable[[], T]) -> T:
    """`fn()`, its failure translated (a retry beaker-py announced, `Retried`, as the error it
    retried); what this module does not know passes as it is."""
    try:
        return fn()
    except Retried as retried:
        failure = translate(what, retried.error)
        if failure is None:
            raise
        if isinstance(failure, Transient):
            failure.again = True  # beaker-py judged it worth retrying
        raise failure from None
    except Exception as exc:
        failure = translate(what, exc)
        if failure is None:
            raise
        raise failure from None


def translate(what: str, exc: BaseException) -> BackendError | None:
    """The failure `exc` is, in the submit protocol's words; None for one it does not know."""
    if isinstance(exc, BeakerExperimentConflict):
        return NameTaken(what)
    if isinstance(exc, BeakerWorkspaceNotFound):
        return Rejected(f"{what}: workspace not found: {exc}")
    if isinstance(exc, BeakerPermissionsError):
        return Rejected(f"{what}: permission denied: {exc}")
    if isinstance(exc, BeakerServerError):
        down = unreachable_reason(exc)
        return Transient(f"{what}: Beaker server error: {exc}", unreachable=down)
    if isinstance(exc, requests.exceptions.HTTPError):
        status = exc.response.status_code if exc.response is not None else None
        if status is not None and (status >= 500 or status == 429):
            return Transient(
                f"{what}: HTTP {status}", status != 429, retry_after_seconds(exc.response)
            )
        return Rejected(f"{what}: HTTP {status}: {exc}")
    if isinstance(exc, requests.exceptions.RequestException):
        return _lost(what, exc)
    if isinstance(exc, grpc.RpcError):
        code = exc.code() if isinstance(exc, grpc.Call) else None
        if code in (
            grpc.StatusCode.UNAVAILABLE,
            grpc.StatusCode.DEADLINE_EXCEEDED,
            grpc.StatusCode.RESOURCE_EXHAUSTED,
        ):
            return Transient(f"{what}: gRPC {code.name}", unreachable=unreachable_reason(exc))
        return Rejected(f"{what}: gRPC {code}: {exc}")
    if isinstance(exc, BeakerError):
        text = str(exc)
        if text.startswith("[code=429]"):
            return Transient(
                f"{what}: rate limited ({text})",
                maybe_committed=False,
                retry_after=Client.last_retry_after(),
            )
        return Rejected(f"{what}: {text}")
    return None


def _lost(what: str, exc: requests.exceptions.RequestException) -> Transient:
    """A requests failure without a reply: only a failed connect is known not to have been sent."""
    down = unreachable_reason(exc)
    if down is not None:
        return Transient(f"{what}: {down}", maybe_committed=False, unreachable=down)
    if isinstance(exc, requests.exceptions.ChunkedEncodingError):
        return Transient(f"{what}: reply cut off mid-body ({exc})")
    if isinstance(exc, requests.exceptions.Timeout):
        return Transient(f"{what}: no reply in time ({type(exc).__name__})")
    return Transient(f"{what}: {type(exc).__name__}: connection lost or reply unreadable")
