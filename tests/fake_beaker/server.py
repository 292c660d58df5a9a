"""FakeBeaker: the gRPC and HTTPS halves on 127.0.0.1, sharing one State and one FaultPlan."""

from __future__ import annotations

import shutil
import tempfile
import threading
from collections import Counter
from concurrent import futures
from pathlib import Path
from types import TracebackType
from typing import Any

import grpc
import yaml
from beaker import beaker_pb2_grpc

from .certs import CertBundle, default_bundle
from .faults import CallCounter, CreateFault, FaultPlan
from .grpc_service import FakeBeakerServicer, FaultInterceptor
from .http_api import ApiServer, CreateEndpoint, server_context
from .records import Experiment
from .state import State


class FakeBeaker:
    """A Beaker that beaker-py can talk to unmodified, with count-exact fault injection.

    Start it (or use it as a context manager), point a client at :attr:`env`, and inspect what
    the client did through :meth:`experiments` and :attr:`calls`. :meth:`stop` closes both
    listeners and drops open connections; :meth:`restart` listens again on the same ports with
    the state kept; :meth:`close` stops for good and deletes the config directory.
    """

    def __init__(
        self,
        *,
        user: str = "fake-user",
        token: str = "fake-token",
        org: str = "ai2",
        page_size: int = 5,
        latency: float = 0.0,
        certs: CertBundle | None = None,
        workdir: Path | None = None,
        grpc_workers: int = 32,
    ) -> None:
        self.token = token
        self.page_size = page_size
        self.grpc_workers = grpc_workers
        self.certs = certs or default_bundle()
        self._owns_workdir = workdir is None
        self.workdir = Path(tempfile.mkdtemp(prefix="fake-beaker-")) if workdir is None else workdir
        self._state = State(user, org)
        self._faults = FaultPlan(latency)
        self._calls = CallCounter()
        self._stopping = threading.Event()
        self._lock = threading.RLock()
        self._http: ApiServer | None = None
        self._http_thread: threading.Thread | None = None
        self._grpc: Any = None
        self._executor: futures.ThreadPoolExecutor | None = None
        self.http_port = 0
        self.grpc_port = 0

    # Lifecycle.

    def start(self) -> FakeBeaker:
        """Listen on ephemeral ports the first time, on the same ports after :meth:`stop`."""
        with self._lock:
            if self.running:
                raise RuntimeError("fake beaker is already running")
            self._stopping.clear()
            self._start_grpc()
            self._start_http()
            self._write_config()
        return self

    def restart(self) -> None:
        self.stop()
        self.start()

    def stop(self) -> None:
        with self._lock:
            if not self.running:
                return
            self._stopping.set()  # wakes handlers sleeping on latency or a late reply
            assert self._http is not None and self._http_thread is not None
            self._http.shutdown()
            self._http.server_close()
            self._http.drop_connections()
            self._http_thread.join()
            self._grpc.stop(grace=None).wait()
            assert self._executor is not None
            self._executor.shutdown(wait=False)
            self._http = self._http_thread = self._grpc = self._executor = None

    def close(self) -> None:
        self.stop()
        if self._owns_workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)

    def __enter__(self) -> FakeBeaker:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    @property
    def running(self) -> bool:
        return self._http is not None

    def _start_grpc(self) -> None:
        self._executor = futures.ThreadPoolExecutor(
            max_workers=self.grpc_workers, thread_name_prefix="fake-beaker-grpc"
        )
        interceptor = FaultInterceptor(self._calls, self._faults, self.token, self._stopping)
        server = grpc.server(
            self._executor, interceptors=[interceptor], options=[("grpc.so_reuseport", 0)]
        )
        beaker_pb2_grpc.add_BeakerServicer_to_server(
            FakeBeakerServicer(self._state, self.page_size), server
        )
        credentials = grpc.ssl_server_credentials([(self.certs.key_pem, self.certs.cert_chain_pem)])
        self.grpc_port = server.add_secure_port(f"127.0.0.1:{self.grpc_port}", credentials)
        server.start()
        self._grpc = server

    def _start_http(self) -> None:
        endpoint = CreateEndpoint(self._state, self._faults, self._calls, self.token)
        context = server_context(str(self.certs.cert_chain_path), str(self.certs.key_path))
        self._http = ApiServer(self.http_port, endpoint, context, self._stopping)
        self.http_port = self._http.server_address[1]
        self._http_thread = threading.Thread(
            target=self._http.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="fake-beaker-http",
            daemon=True,
        )
        self._http_thread.start()

    # What a client needs.

    @property
    def agent_address(self) -> str:
        return f"https://127.0.0.1:{self.http_port}"

    @property
    def rpc_address(self) -> str:
        return f"127.0.0.1:{self.grpc_port}"

    @property
    def config_path(self) -> Path:
        return self.workdir / "beaker-config.yml"

    def _write_config(self) -> None:
        # beaker-py reads rpc_address only from the config file (there is no env var for it).
        self.workdir.mkdir(parents=True, exist_ok=True)
        config = {
            "user_token": self.token,
            "agent_address": self.agent_address,
            "rpc_address": self.rpc_address,
            "default_org": self._state.default_org,
        }
        self.config_path.write_text(yaml.safe_dump(config, sort_keys=True))

    @property
    def env(self) -> dict[str, str]:
        """Variables a client process needs; ``BEAKER_CONFIG`` keeps ~/.beaker/config.yml out."""
        if not self.http_port:
            raise RuntimeError("start the fake beaker before reading its env")
        return {
            "BEAKER_TOKEN": self.token,
            "BEAKER_ADDR": self.agent_address,
            "BEAKER_CONFIG": str(self.config_path),
            **self.certs.client_env(),
        }

    # State.

    @property
    def user(self) -> str:
        return self._state.user.name

    def add_workspace(self, full_name: str) -> str:
        """Add a workspace ``org/name`` (idempotent); returns its id."""
        return self._state.add_workspace(full_name).id

    def experiments(self) -> list[Experiment]:
        """Every created experiment, in creation order."""
        return self._state.experiments()

    def count_by_name(self) -> Counter[str]:
        return self._state.count_by_name()

    def set_job_status(self, experiment_id: str, status: str, exit_code: int | None = None) -> None:
        """Move the experiment's jobs to queued/running/succeeded/failed/canceled.

        ``exit_code`` defaults to 0 for succeeded and 1 for failed, and stays unset otherwise.
        """
        self._state.set_job_status(experiment_id, status, exit_code)

    @property
    def calls(self) -> Counter[str]:
        """A snapshot: calls by gRPC method name (e.g. ``GetWorkload``) and ``http:create``."""
        return self._calls.snapshot()

    def reset_calls(self) -> None:
        self._calls.reset()

    @property
    def posting_connections(self) -> int:
        """HTTPS connections (each a TCP and TLS handshake) that carried at least one POST,
        since the server last started; also at ``GET /_fake/connections``."""
        return self._http.posting_connections if self._http is not None else 0

    @property
    def open_connections(self) -> int:
        """HTTPS connections open now (a client's close reaches the server a moment later)."""
        return self._http.open_connections if self._http is not None else 0

    # Faults. Each applies to the next ``times`` matching calls, across threads, exactly.

    @property
    def latency(self) -> float:
        return self._faults.latency

    @latency.setter
    def latency(self, seconds: float) -> None:
        """Added before handling every gRPC call and every create (not /_fake/stats)."""
        self._faults.latency = seconds

    def fail_creates(
        self,
        status: int,
        times: int = 1,
        *,
        retry_after: float | None = None,
        message: str | None = None,
    ) -> None:
        """Answer the next creates with ``status``, committing nothing.

        429 gets ``Retry-After: 1`` unless ``retry_after`` says otherwise. The body is
        ``{"message": message}``; by default 429 and 500 carry a message and 502/503 a plain
        text body (pass ``message=""`` to force plain text).
        """
        if status == 429 and retry_after is None:
            retry_after = 1.0
        fault = CreateFault("status", status=status, message=message, retry_after=retry_after)
        self._faults.add_create_faults(fault, times)

    def reset_after_commit(self, times: int = 1) -> None:
        """Commit the next creates, then close their connections without a response."""
        self._faults.add_create_faults(CreateFault("reset"), times)

    def reply_late_after_commit(self, delay: float, times: int = 1) -> None:
        """Commit the next creates, then hold the response for ``delay`` seconds."""
        self._faults.add_create_faults(CreateFault("late", delay=delay), times)

    def garble_after_commit(self, times: int = 1) -> None:
        """Commit the next creates, then answer 200 with an HTML page instead of the experiment."""
        self._faults.add_create_faults(CreateFault("garbled"), times)

    def fail_rpc(self, rpc: str, code: Any, times: int = 1) -> None:
        """Fail the next ``times`` calls of gRPC method ``rpc`` with ``code`` (grpc.StatusCode)."""
        if not callable(getattr(beaker_pb2_grpc.BeakerServicer, rpc, None)):
            raise ValueError(f"{rpc!r} is not a Beaker RPC")
        self._faults.add_rpc_faults(rpc, code, times)

    def unavailable(self, rpc: str, times: int = 1) -> None:
        self.fail_rpc(rpc, grpc.StatusCode.UNAVAILABLE, times)

    def rate_limit(self, per_second: float | None) -> None:
        """Admit at most ``per_second`` creates in any 1 s window; 429 + Retry-After beyond."""
        self._faults.set_rate_limit(per_second)

    def clear_faults(self) -> None:
        """Drop queued faults and the rate limit (latency stays)."""
        self._faults.clear()
