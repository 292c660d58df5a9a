"""beaker-py's, requests' and gRPC's errors translated into the three the submit protocol knows.

Every call the backend makes goes through `call`, so each failure is classified in one place:
`Transient` (worth retrying; `maybe_committed` when the request may have taken effect),
`NameTaken` (409) and `Rejected` (a client error, never retried).
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
    BeakerWorkspaceNotFound,
)

from runner.backends import NameTaken, Rejected, Transient
from runner.backends.beaker.client import Client, retry_after_seconds

T = TypeVar("T")


def call(what: str, fn: Callable[[], T]) -> T:
    try:
        return fn()
    except BeakerExperimentConflict:
        raise NameTaken(what) from None
    except BeakerWorkspaceNotFound as exc:
        raise Rejected(f"{what}: workspace not found: {exc}") from None
    except BeakerPermissionsError as exc:
        raise Rejected(f"{what}: permission denied: {exc}") from None
    except BeakerServerError as exc:
        raise Transient(f"{what}: Beaker server error: {exc}") from None
    except requests.exceptions.HTTPError as exc:
        status = exc.response.status_code if exc.response is not None else None
        if status is not None and (status >= 500 or status == 429):
            raise Transient(
                f"{what}: HTTP {status}", status != 429, retry_after_seconds(exc.response)
            ) from None
        raise Rejected(f"{what}: HTTP {status}: {exc}") from None
    except requests.exceptions.ConnectTimeout:
        raise Transient(f"{what}: connect timeout", maybe_committed=False) from None
    except (requests.exceptions.ConnectionError, requests.exceptions.Timeout) as exc:
        raise Transient(f"{what}: {type(exc).__name__}: connection lost or reply late") from None
    except grpc.RpcError as exc:
        code = exc.code() if isinstance(exc, grpc.Call) else None
        if code in (
            grpc.StatusCode.UNAVAILABLE,
            grpc.StatusCode.DEADLINE_EXCEEDED,
            grpc.StatusCode.RESOURCE_EXHAUSTED,
        ):
            raise Transient(f"{what}: gRPC {code.name}") from None
        raise Rejected(f"{what}: gRPC {code}: {exc}") from None
    except BeakerError as exc:
        text = str(exc)
        if text.startswith("[code=429]"):
            raise Transient(
                f"{what}: rate limited ({text})",
                maybe_committed=False,
                retry_after=Client.last_retry_after(),
            ) from None
        raise Rejected(f"{what}: {text}") from None
