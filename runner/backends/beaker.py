"""The Beaker backend: the only module that imports beaker-py.

It turns a rendered spec document into beaker-py's `BeakerExperimentSpec` (checking that the
round trip through beaker-py's types loses nothing), creates experiments by name, looks them up,
lists them in bulk, and translates beaker-py's and requests' errors into the three kinds the
submit protocol understands.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import threading
import warnings
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar

import grpc
import requests
from beaker import Beaker, BeakerExperimentSpec
from beaker import beaker_pb2 as pb2
from beaker.config import Config
from beaker.exceptions import (
    BeakerConfigurationError,
    BeakerError,
    BeakerExperimentConflict,
    BeakerNotFoundError,
    BeakerPermissionsError,
    BeakerServerError,
    BeakerWorkloadNotFound,
    BeakerWorkspaceNotFound,
)

from runner.backends import Experiment, NameTaken, Rejected, Transient
from runner.errors import SubmitError
from runner.model import Sweep
from runner.spec import Rendered

T = TypeVar("T")
KEY_IN_DESCRIPTION = re.compile(r"\[sweep-key ([0-9a-f]{64})\]")
STATES = {
    "STATUS_SUBMITTED": "queued",
    "STATUS_QUEUED": "queued",
    "STATUS_READY_TO_START": "queued",
    "STATUS_INITIALIZING": "running",
    "STATUS_RUNNING": "running",
    "STATUS_STOPPING": "running",
    "STATUS_UPLOADING_RESULTS": "running",
    "STATUS_SUCCEEDED": "succeeded",
    "STATUS_FAILED": "failed",
    "STATUS_CANCELED": "canceled",
}
TOKEN_HELP = (
    "no Beaker token found: set BEAKER_TOKEN (in CI: a repository secret) or run `beaker config set"
    " user_token ...` to write ~/.beaker/config.yml"
)


class _Client(Beaker):
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
            _retry_after(response) if response.status_code in (429, 503) else None
        )

    @classmethod
    def last_retry_after(cls) -> float | None:
        return getattr(cls.retry_after, "value", None)


class SpecMismatch(Exception):
    """beaker-py's types would silently change the spec (e.g. drop a field it does not know)."""


def to_beaker_spec(document: Mapping[str, Any]) -> BeakerExperimentSpec:
    """The typed spec for a rendered document, refusing any lossy conversion."""
    return _round_trip(document)[0]


def _round_trip(document: Mapping[str, Any]) -> tuple[BeakerExperimentSpec, dict[str, Any]]:
    """The typed spec and its JSON (what beaker-py sends), checked to equal the document."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # 'preemptible' is deprecated but valid
        spec = BeakerExperimentSpec.from_json(json.loads(json.dumps(document)))
        back: dict[str, Any] = spec.to_json()
    if _canonical(back) != _canonical(document):
        raise SpecMismatch(
            f"beaker-py does not round-trip this spec: {_canonical(document)} != {_canonical(back)}"
        )
    return spec, back


def _canonical(doc: Mapping[str, Any]) -> str:
    return json.dumps(doc, sort_keys=True)


def has_credentials() -> bool:
    """Whether beaker-py would find a token (env var or its config file)."""
    if os.environ.get("BEAKER_TOKEN"):
        return True
    try:
        return bool(Config.from_env().user_token)
    except (BeakerConfigurationError, BeakerError, OSError, ValueError):
        return False


class BeakerBackend:
    kind = "beaker"

    def __init__(self, http_timeout: float | None = None) -> None:
        if not has_credentials():
            raise SubmitError(TOKEN_HELP)
        try:
            self.client = _Client(Config.from_env(), check_for_upgrades=False)
        except (BeakerConfigurationError, BeakerError) as exc:
            raise SubmitError(f"cannot configure the Beaker client: {exc}") from None
        if http_timeout is not None:
            self.client.TIMEOUT = http_timeout  # type: ignore[misc]  # beaker-py reads self.TIMEOUT
        self._workspaces: dict[str, pb2.Workspace] = {}
        self._author: str | None = None

    def close(self) -> None:
        self.client.close()

    # -- helpers -------------------------------------------------------------------------------

    def _call(self, what: str, call: Callable[[], T]) -> T:
        try:
            return call()
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
                    f"{what}: HTTP {status}", status != 429, _retry_after(exc.response)
                ) from None
            raise Rejected(f"{what}: HTTP {status}: {exc}") from None
        except requests.exceptions.ConnectTimeout:
            raise Transient(f"{what}: connect timeout", maybe_committed=False) from None
        except (requests.exceptions.ConnectionError, requests.exceptions.Timeout) as exc:
            raise Transient(
                f"{what}: {type(exc).__name__}: connection lost or reply late"
            ) from None
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
                    retry_after=_Client.last_retry_after(),
                ) from None
            raise Rejected(f"{what}: {text}") from None

    def _workspace(self, name: str) -> pb2.Workspace:
        if name not in self._workspaces:
            self._workspaces[name] = self._call(
                f"workspace {name}", lambda: self.client.workspace.get(name)
            )
        return self._workspaces[name]

    def author(self) -> str:
        if self._author is None:
            self._author = self._call("current user", lambda: self.client.user_name)
        return self._author

    def _experiment(self, workload: pb2.Workload) -> Experiment:
        exp = workload.experiment
        match = KEY_IN_DESCRIPTION.search(exp.description)
        state = STATES.get(pb2.WorkloadStatus.Name(workload.status), "unknown")
        return Experiment(
            exp.name,
            exp.id,
            self.client.workload.url(workload),
            match.group(1) if match else None,
            state,
        )

    # -- Backend -------------------------------------------------------------------------------

    def create(self, sweep: Sweep, point: Rendered) -> Experiment:
        """beaker-py's `experiment.create` without its second round trip.

        beaker-py POSTs the spec, reads only `id` from the reply and then fetches the whole
        workload over gRPC, which doubles the latency of every create. Everything an
        `Experiment` needs is known without it: the name and key we sent, the id from
        the reply, the URL from the id, and the state of a just-created experiment. The POST
        itself is beaker-py's own `http_request`, exactly as `create` calls it, so the token,
        headers, timeout, retries and error mapping are beaker-py's.
        """
        try:
            _, spec_json = _round_trip(point.spec)  # spec.to_json() once: it is costly
        except (SpecMismatch, TypeError, ValueError) as exc:
            raise Rejected(f"invalid spec for {point.name}: {exc}") from None
        workspace = self._workspace(sweep.placement.workspace)
        self.client.hold_session()
        what = f"create {point.name}"

        def post() -> str:
            reply = self.client.experiment.http_request(
                f"workspaces/{workspace.id}/experiments",
                method="POST",
                query={"name": point.name},
                data=spec_json,
                exceptions_for_status={409: BeakerExperimentConflict(point.name)},
            )
            try:
                experiment_id = reply.json()["id"]
            except (ValueError, KeyError, TypeError):
                experiment_id = None
            if not isinstance(experiment_id, str) or not experiment_id:
                # A 2xx means it was probably created: the next attempt looks the name up.
                raise Transient(f"{what}: reply {reply.status_code} carries no experiment id")
            return experiment_id

        experiment_id = self._call(what, post)
        url = self.client.experiment.url(pb2.Experiment(id=experiment_id))
        return Experiment(point.name, experiment_id, url, point.key, "queued")

    def find(self, sweep: Sweep, name: str) -> Experiment | None:
        author = self.author()

        def get() -> pb2.Workload | None:
            try:
                return self.client.workload.get(f"{author}/{name}")
            except (BeakerWorkloadNotFound, BeakerNotFoundError):
                return None

        workload = self._call(f"look up {author}/{name}", get)
        return None if workload is None else self._experiment(workload)

    def existing(self, sweep: Sweep, names: Iterable[str]) -> Mapping[str, Experiment]:
        wanted = set(names)
        workspace = self._workspace(sweep.placement.workspace)
        org = sweep.placement.workspace.split("/", 1)[0]

        def listing() -> dict[str, Experiment]:
            found = {}
            for workload in self.client.workload.list(
                org=org,  # type: ignore[arg-type]  # beaker-py resolves an org name too
                workspace=workspace,
                name_or_description=sweep.name,
            ):
                if workload.experiment.name in wanted:
                    found[workload.experiment.name] = self._experiment(workload)
            return found

        return self._call(f"list experiments of {sweep.name}", listing)

    def states(self, sweep: Sweep, names: Iterable[str]) -> Mapping[str, Experiment]:
        """One paged listing for the states; one job call per finished experiment for its exit code."""
        found = self.existing(sweep, names)
        return {name: self._with_exit_code(exp) for name, exp in found.items()}

    def _with_exit_code(self, experiment: Experiment) -> Experiment:
        if experiment.state not in ("succeeded", "failed"):
            return experiment

        def latest() -> int | None:
            workload = self.client.workload.get(experiment.id)
            job = self.client.workload.get_latest_job(workload)
            if job is None or not job.status.HasField("exited"):
                return None
            return int(job.status.exit_code)

        code = self._call(f"job of {experiment.name}", latest)
        return dataclasses.replace(experiment, exit_code=code)


def _retry_after(response: requests.Response | None) -> float | None:
    if response is None:
        return None
    value = response.headers.get("Retry-After")
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None
