"""4. Submission throughput against the fake Beaker with added latency. 5. Re-running a sweep.

The fake runs in its own process (`python -m tests.fake_beaker`), so its CPU does not share the
runner's GIL; on a small machine the two still share the cores, and the CPU each used is
reported. The runner side is `runner.submit.Submitter` over `BeakerBackend`, as `submit` drives
it; the plan is built before the clock starts.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import resource
import ssl
import subprocess
import time
import urllib.request
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from runner import ledger
from runner.backends.beaker import BeakerBackend
from runner.plan import catalog
from runner.report.progress import Progress
from runner.submit import Options, Outcome, OutcomeStatus, Submitter
from tests.benchmarks.common import (
    PROJECT,
    WORKSPACE,
    Config,
    Row,
    count,
    manifest_text,
    python,
    seconds,
    verdict,
    write_sweep,
)

LATENCY = 0.05
CONCURRENCY = (1, 4, 16, 32)
POINTS = 1_000
QUICK_POINTS = 100
TARGET = 0.80
TARGET_AT = 16


@dataclass(frozen=True)
class Server:
    pid: int
    env: Mapping[str, str]

    def _get(self, path: str) -> Any:
        context = ssl.create_default_context(cafile=self.env["REQUESTS_CA_BUNDLE"])
        url = self.env["BEAKER_ADDR"] + path
        with urllib.request.urlopen(url, context=context, timeout=30) as reply:
            return json.load(reply)

    def stats(self) -> Counter[str]:
        return Counter(self._get("/_fake/stats")["calls"])

    def connections(self) -> int:
        """HTTPS connections that carried a create so far: each cost a TCP and TLS handshake."""
        return int(self._get("/_fake/connections")["posting"])

    def cpu_seconds(self) -> float:
        fields = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


# `python -m tests.fake_beaker ARGS`, with TCP_NODELAY on its HTTPS replies. Without it, each
# reply (headers, then body: two writes) waits out the client's delayed ACK, ~40 ms a create on
# Linux, which a real server (Go's net/http sets TCP_NODELAY) does not add.
_SERVE = """\
from tests.fake_beaker import http_api
from tests.fake_beaker.cli import main
http_api._Handler.disable_nagle_algorithm = True
raise SystemExit(main({args!r}))
"""


@contextlib.contextmanager
def fake_beaker(config: Config, latency: float) -> Iterator[Server]:
    """A standalone fake Beaker process; its client env is set in os.environ meanwhile."""
    log = (config.workdir / "fake-beaker.log").open("w")
    args = ["--latency", str(latency), "--workspace", WORKSPACE]
    process = subprocess.Popen(
        python("-c", _SERVE.format(args=args)),
        cwd=PROJECT,
        stdout=subprocess.PIPE,
        stderr=log,
        text=True,
    )
    saved = dict(os.environ)
    try:
        assert process.stdout is not None
        env = json.loads(process.stdout.readline())
        os.environ.update(env)
        yield Server(process.pid, env)
    finally:
        os.environ.clear()
        os.environ.update(saved)
        process.terminate()
        process.wait(timeout=30)
        log.close()


def _own_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


@dataclass(frozen=True)
class Run:
    seconds: float
    outcomes: list[Outcome]
    calls: Counter[str]
    runner_cpu: float
    server_cpu: float
    connections: int = 0


def submit(server: Server, root: Path, concurrency: int) -> Run:
    """Plan (untimed), then time one Submitter run and count the API calls it made."""
    plans = catalog.load(root, []).plans()
    backend = BeakerBackend()
    options = Options(root=root, commit="0" * 40, concurrency=concurrency)
    progress = Progress(io.StringIO(), io.StringIO(), live=False)
    try:
        before, connections = server.stats(), server.connections()
        cpu, server_cpu = _own_cpu(), server.cpu_seconds()
        started = time.perf_counter()
        outcomes = Submitter(backend, options, progress).run(plans)
        elapsed = time.perf_counter() - started
        cpu, server_cpu = _own_cpu() - cpu, server.cpu_seconds() - server_cpu
        calls, connections = server.stats() - before, server.connections() - connections
    finally:
        backend.close()
    return Run(elapsed, outcomes, calls, cpu, server_cpu, connections)


def rerun(server: Server, root: Path) -> Run:
    """A whole re-run as `submit` does it: load, plan, connect, submit; timed end to end."""
    before, cpu, server_cpu = server.stats(), _own_cpu(), server.cpu_seconds()
    started = time.perf_counter()
    plans = catalog.load(root, []).plans()
    backend = BeakerBackend()
    options = Options(root=root, commit="0" * 40, concurrency=8)
    try:
        outcomes = Submitter(backend, options, Progress(io.StringIO(), io.StringIO())).run(plans)
    finally:
        backend.close()
    elapsed = time.perf_counter() - started
    cpu, server_cpu = _own_cpu() - cpu, server.cpu_seconds() - server_cpu
    return Run(elapsed, outcomes, server.stats() - before, cpu, server_cpu)


def calls_text(calls: Counter[str]) -> str:
    creates = calls.get("http:create", 0)
    others = ", ".join(f"{k} {v}" for k, v in sorted(calls.items()) if k != "http:create")
    return f"{creates} creates" + (f"; {others}" if others else "; no other call")


def run(config: Config) -> list[Row]:
    points = QUICK_POINTS if config.quick else POINTS
    shape = (10, 10, points // 100)
    rows: list[Row] = []
    with fake_beaker(config, LATENCY) as server:
        last_root = None
        for concurrency in CONCURRENCY:
            name = f"tp-c{concurrency}"
            root = config.workdir / name
            write_sweep(root, name, manifest_text(name, shape, max_points=points))
            result = submit(server, root, concurrency)
            assert all(o.status == OutcomeStatus.CREATED for o in result.outcomes), _failures(
                result
            )
            rows.append(_throughput_row(config, points, concurrency, result))
            last_root = root
        assert last_root is not None
        rows += _rerun_rows(config, server, last_root, points)
    return rows


def _failures(run: Run) -> str:
    bad = [
        o for o in run.outcomes if o.status not in (OutcomeStatus.CREATED, OutcomeStatus.ADOPTED)
    ]
    return f"{len(bad)} not submitted, e.g. {bad[0].error if bad else ''}"


def _throughput_row(config: Config, points: int, concurrency: int, run: Run) -> Row:
    rate = points / run.seconds
    bound = concurrency / LATENCY  # points/s if each point cost one round trip and nothing else
    trips = sum(run.calls.values()) / points
    share = rate / bound
    met = share >= TARGET if concurrency == TARGET_AT else None
    config.note(
        f"Submit c={concurrency}: {calls_text(run.calls)} ({trips:.2f} latency-bearing calls per"
        f" point) over {run.connections} HTTPS connection(s); CPU used: runner"
        f" {run.runner_cpu:.2f} s ({run.runner_cpu / points * 1e3:.1f} ms a point), fake server"
        f" {run.server_cpu:.2f} s, in {run.seconds:.2f} s of wall time on {os.cpu_count()} cores."
    )
    return Row(
        "4",
        f"submit {count(points)} points, {LATENCY * 1e3:g} ms latency, concurrency {concurrency}",
        f"{rate:.1f} points/s ({seconds(run.seconds)})",
        f"latency bound N×RTT/c: {bound:g} points/s; with {trips:.2f} calls/point:"
        f" {bound / trips:.0f} points/s",
        f"{share:.0%} (of the {trips:.2f}-call bound: {share * trips:.0%})",
        f"≥ {TARGET:.0%} at c={TARGET_AT}" if concurrency == TARGET_AT else "",
        "" if met is None else verdict(met),
    )


def _rerun_rows(config: Config, server: Server, root: Path, points: int) -> list[Row]:
    intact = rerun(server, root)
    assert not intact.outcomes, "a fully submitted sweep had points to submit"
    path = ledger.ledger_path(root, root.name)
    path.rename(path.with_suffix(".lost"))  # the ledger commit never landed
    lost = rerun(server, root)
    adopted = sum(o.status == OutcomeStatus.ADOPTED for o in lost.outcomes)
    assert adopted == points, _failures(lost)
    config.note(
        f"Re-run with the ledger lost: {adopted} points adopted by listing; CPU used: runner"
        f" {lost.runner_cpu:.2f} s, fake server {lost.server_cpu:.2f} s. The standalone fake"
        " pages listings 50 experiments at a time."
    )
    return [
        Row(
            "5",
            f"re-run a fully submitted {count(points)}-point sweep (ledger intact)",
            f"{seconds(intact.seconds)}; {calls_text(intact.calls)}",
            "target: zero creates",
            "",
            "0 creates",
            verdict(intact.calls.get("http:create", 0) == 0),
        ),
        Row(
            "5",
            f"re-run a fully submitted {count(points)}-point sweep (ledger lost)",
            f"{seconds(lost.seconds)}; {calls_text(lost.calls)}",
            f"one call per point would be {count(points)} look-ups",
            "",
            "0 creates, listing",
            verdict(
                lost.calls.get("http:create", 0) == 0 and sum(lost.calls.values()) < points / 10
            ),
        ),
    ]
