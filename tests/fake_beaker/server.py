"""FakeBeaker: the gRPC and HTTPS halves on 127.0.0.1, sharing one State and one FaultPlan."""

from __future__ import annotations

import contextlib
import shutil
import socket
import tempfile
import threading
from collections import Counter
from collections.abc import Iterator
from concurrent import futures
from pathlib import Path
from types import TracebackType
from typing import Any

import grpc
import yaml
from beaker import beaker_pb2_grpc

from .cancelations import CancelationControls
from .certs import CertBundle, default_bundle
from .clusters import ClusterStore
from .controls import FaultControls
from .faults import CallCounter, FaultPlan
from .groups import GroupStore
from .grpc_service import FakeBeakerServicer, FaultInterceptor
from .http_api import ApiServer, CreateEndpoint, server_context
from .placement import PlacementControls
from .records import Experiment
from .state import NameScope, State
from .telemetry import Telemetry


class FakeBeaker(FaultControls, CancelationControls, PlacementControls):
    """A Beaker that beaker-py can talk to unmodified, with count-exact fault injection.

    Start it (or use it as a context manager), point a client at :attr:`env`, and inspect what
    the client did through :meth:`experiments` and :attr:`calls`. :meth:`stop` closes both
    listeners and drops open connections (the fake is unreachable: connections are refused);
    :meth:`restart` listens again on the same ports with the state kept (:meth:`outage` does
    both around a block); :meth:`close` stops for good and deletes the config directory.
    Faults are in controls.FaultControls, groups/metrics/logs/restarts in LifecycleControls,
    preemptions, timeouts and every other cancel in cancelations.CancelationControls,
    clusters and workspace priorities in PlacementControls.
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
        name_scope: NameScope = "workspace",
    ) -> None:
        self.token = token
        self.page_size = page_size
        self.grpc_workers = grpc_workers
        self.certs = certs or default_bundle()
        self._owns_workdir = workdir is None
        self.workdir = Path(tempfile.mkdtemp(prefix="fake-beaker-")) if workdir is None else workdir
        self._state = State(user, org, token)
        self._state.name_scope = name_scope
        self._groups = GroupStore(self._state)
        self._clusters = ClusterStore()
        self._telemetry = Telemetry()
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

    @contextlib.contextmanager
    def outage(self) -> Iterator[None]:
        """Unreachable (connections refused) inside the block, back on the same ports after."""
        self.stop()
        try:
            yield
        finally:
            self.start()

    @contextlib.contextmanager
    def unresponsive(self) -> Iterator[None]:
        """Inside the block the HTTPS port accepts no connection: it listens with a full accept
        queue, so a client's connect hangs until its connect timeout (no refusal, no reset).
        Back to normal, on the same ports, after."""
        self.stop()
        port = self.http_port
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", port))
        listener.listen(0)
        fillers = []
        for _ in range(3):  # a backlog of 0 still queues one; further SYNs are dropped
            filler = socket.socket()
            filler.setblocking(False)
            with contextlib.suppress(BlockingIOError):
                filler.connect(("127.0.0.1", port))
            fillers.append(filler)
        try:
            yield
        finally:
            for sock in (*fillers, listener):
                sock.close()
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
        interceptor = FaultInterceptor(self._calls, self._faults, self._state, self._stopping)
        server = grpc.server(
            self._executor, interceptors=[interceptor], options=[("grpc.so_reuseport", 0)]
        )
        servicer = FakeBeakerServicer(
            self._state,
            self.page_size,
            groups=self._groups,
            telemetry=self._telemetry,
            faults=self._faults,
            stopping=self._stopping,
            clusters=self._clusters,
        )
        beaker_pb2_grpc.add_BeakerServicer_to_server(servicer, server)
        credentials = grpc.ssl_server_credentials([(self.certs.key_pem, self.certs.cert_chain_pem)])
        self.grpc_port = server.add_secure_port(f"127.0.0.1:{self.grpc_port}", credentials)
        server.start()
        self._grpc = server

    def _start_http(self) -> None:
        endpoint = CreateEndpoint(self._state, self._faults, self._calls)
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
