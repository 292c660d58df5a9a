"""Restart, cancel and logs on the local backend: real processes, real run directories."""

from __future__ import annotations

import contextlib
import fcntl
import itertools
import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from runner import ledger
from runner.backends.local import LAYOUT
from runner.backends.local.processes import process_started
from runner.backends.local.rundir import (
    STOP_ALL,
    Replica,
    RunDir,
    new_state,
    with_replica,
)
from runner.backends.local.supervisor import Launch, Supervisor
from runner.cli import main
from runner.core.errors import Exit
from runner.plan import catalog
from tests.background import WAIT, Command, Sink, wait_for
from tests.conftest import PROJECT
from tests.helpers import head, write_manifest

pytestmark = pytest.mark.slow

# Prints its rank; replica 1 fails on the first run only, once the others have printed (a
# failing replica stops its siblings).
TASK = """\
import os, pathlib, sys, time
rank = os.environ["BEAKER_REPLICA_RANK"]
for i in range(3):
    print(f"rank {rank} line {i}", flush=True)
pathlib.Path(f"printed-{rank}").write_text("x")
marker = pathlib.Path("failed-once")
if rank == "1" and not marker.exists():
    while not all(pathlib.Path(f"printed-{r}").exists() for r in "02"):
        time.sleep(0.01)
    marker.write_text("x")
    sys.exit(5)
"""

SWEEP = (
    head("replicas", draft=True)
    + """\
    command: [python, task.py]
    replicas: 3
params:
  grid:
    lr: [0.1]
"""
)


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("PYTHONPATH", str(PROJECT))
    (tmp_path / "task.py").write_text(TASK)
    write_manifest(tmp_path, SWEEP, "replicas.yaml")
    return tmp_path


def _run(root: Path, *args: str) -> int:
    return main(["-C", str(root), *args])


def _entry(root: Path) -> ledger.Entry:
    [entry] = ledger.read(root / ".runs" / "replicas" / "ledger.jsonl", "replicas").entries.values()
    return entry


def test_restart_reruns_a_failed_local_point_keeping_its_earlier_logs_and_logs_pick_a_replica(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sweep = ["sweeps/replicas.yaml", "--backend", "local"]
    assert _run(root, "submit", *sweep) == Exit.RUNS_FAILED
    entry = _entry(root)
    run = root / ".runs" / "replicas" / entry.experiment
    assert '"status": "failed"' in (run / "state.json").read_text()
    capsys.readouterr()

    assert _run(root, "logs", entry.experiment, "--replica", "2", "--backend", "local") == 0
    assert capsys.readouterr().out == "".join(f"rank 2 line {i}\n" for i in range(3))
    assert _run(root, "logs", entry.key[:6], "--replica", "1", "--tail", "1") == 0
    assert capsys.readouterr().out == "rank 1 line 2\n"

    assert _run(root, "submit", "--restart-failed", *sweep) == 0
    assert '"status": "succeeded"' in (run / "state.json").read_text()
    earlier = run / "attempt-1"
    assert '"status": "failed"' in (earlier / "state.json").read_text()
    assert sorted(p.name for p in earlier.glob("*.log")) == [f"replica-{r}.log" for r in range(3)]
    assert (earlier / "replica-1.log").read_text() == (run / "replica-1.log").read_text()
    after = _entry(root)
    assert (after.restarts, after.url, after.key) == (1, entry.url, entry.key)

    assert _run(root, "submit", "--restart-failed", *sweep) == 0  # succeeded: nothing to do
    assert not (run / "attempt-2").exists() and _entry(root).restarts == 1


def test_logs_before_a_local_run_and_for_unknown_or_ambiguous_points(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    body = SWEEP.replace("lr: [0.1]", "lr: [" + ", ".join(str(i) for i in range(20)) + "]")
    write_manifest(root, body, "replicas.yaml")
    assert _run(root, "expand", "--plan", "--format", "json") == 0
    points = json.loads(capsys.readouterr().out)["sweeps"][0]["points"]
    keys = sorted(point["key"] for point in points)
    shared = next(a[0] for a, b in itertools.pairwise(keys) if a[0] == b[0])  # 20 > 16
    name = f"replicas-{keys[0][:12]}"
    assert _run(root, "logs", name, "--backend", "local") == 1
    assert capsys.readouterr().err.startswith(
        f"no logs yet: {name} has not started on this machine"
    )
    assert _run(root, "logs", shared, "--backend", "local") == 1
    err = capsys.readouterr().err
    assert f"'{shared}' matches" in err and err.count("\n") == 1
    assert _run(root, "logs", "zz-nothing", "--backend", "local") == 1
    err = capsys.readouterr().err
    assert "no point is named 'zz-nothing'" in err and err.count("\n") == 1


# -- following a run, and cancelling another runner's run -------------------------------------

# Says it waits, waits for the test's go (bounded), then trains for a moment, printing as it goes.
GATE = """\
import pathlib, sys, time
from runner.examples import toy_trainer
print("waiting for go", flush=True)
deadline = time.monotonic() + 120
while not pathlib.Path("go").exists():
    if time.monotonic() > deadline:
        sys.exit("no go after 120 s")
    time.sleep(0.02)
sys.exit(toy_trainer.main(sys.argv[1:]))
"""

FOLLOWED = (
    head("followed", draft=True)
    + """\
    command: [python, gate.py, --steps, "300", --step-sleep, "0.002"]
params:
  grid:
    lr: [0.1]
"""
)

# A slow sweep: one point, two replicas training for about a minute unless stopped.
SLOW = (
    head("slow", draft=True)
    + """\
    command: [python, -m, runner.examples.toy_trainer, --steps, "6000", --step-sleep, "0.01"]
    replicas: 2
params:
  grid:
    lr: [0.1]
"""
)


LOCAL = ("--backend", "local")


def _point(root: Path, sweep: str) -> tuple[str, str, RunDir]:
    """The one point of a sweep: its name, its key and its local run directory."""
    cat = catalog.load(root, [])
    [plan] = [p for p in cat.plans(cat.ledgers(LAYOUT)) if p.sweep.name == sweep]
    [row] = plan.rows
    return row.name, row.key, RunDir(root / ".runs" / sweep / row.name)


@contextlib.contextmanager
def _submitting(root: Path, manifest: str) -> Iterator[subprocess.Popen[bytes]]:
    """Another runner: `submit MANIFEST --backend local` in its own process, stopped at the end."""
    with open(root / "submit.log", "wb") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "runner", "-C", str(root), "submit", manifest, *LOCAL],
            cwd=PROJECT,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        try:
            yield proc
        finally:
            if proc.poll() is None:
                proc.terminate()  # it stops its replicas on SIGTERM
                try:
                    proc.wait(timeout=WAIT)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()


def test_logs_follow_prints_a_local_runs_lines_as_they_come_until_it_ends(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (root / "gate.py").write_text(GATE)
    write_manifest(root, FOLLOWED, "followed.yaml")
    name, _, run = _point(root, "followed")
    log = run.path / "replica-0.log"
    out = Sink()
    with _submitting(root, "sweeps/followed.yaml") as runner:
        wait_for(lambda: log.exists() and "waiting" in log.read_text(), "the run to start")
        monkeypatch.setattr(sys, "stdout", out)
        follower = Command(root, "logs", name, "--follow", "--backend", "local")
        wait_for(lambda: out.text() == "waiting for go\n", "the line written before following")
        assert follower.running
        (root / "go").write_text("")  # the rest is written while the command follows
        assert follower.join() == 0
        assert runner.wait(timeout=WAIT) == 0
    state = run.read()
    assert state is not None and state.status == "succeeded"
    text = out.text()
    assert text == log.read_text()  # every line, once, in order
    lines = text.splitlines()
    assert lines[0] == "waiting for go" and lines[1].startswith("replica 0 of 1")
    assert [line.split(" loss")[0] for line in lines[2:5]] == ["step 100", "step 200", "step 300"]
    assert lines[5].startswith("replica 0 done: final loss") and len(lines) == 6


def test_cancel_stops_another_runners_local_replicas_and_records_it(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_manifest(root, SLOW, "slow.yaml")
    name, key, run = _point(root, "slow")
    cancel = ["cancel", "sweeps/slow.yaml", "--yes", "--backend", "local"]

    def started() -> bool:
        state = run.read()
        return state is not None and all(r.pid_started for r in state.replicas)

    with _submitting(root, "sweeps/slow.yaml") as runner:
        wait_for(started, "both replicas to start")
        state = run.read()
        assert state is not None and len(state.replicas) == 2
        assert _run(root, *cancel) == 0
        # Its run ended, stopped on request: canceled, as on Beaker (not a failed run).
        assert runner.wait(timeout=WAIT) == 0
    said = capsys.readouterr()
    assert said.out.startswith("Canceled 1 run(s) on this machine:") and name in said.out
    assert "was running" in said.out
    assert "still has" not in said.err  # recorded as canceled: not a point left to submit
    for replica in state.replicas:  # stopped: no process has that pid and start time any more
        assert replica.pid is not None and process_started(replica.pid) != replica.pid_started
    final = run.read()
    assert final is not None and final.status == "canceled"
    assert [r.exit_code for r in final.replicas] == [128 + signal.SIGTERM] * 2
    assert f"created {name} {run.url} canceled" in (root / "submit.log").read_text()
    entry = _local_entry(root, "slow")
    assert (entry.experiment, entry.key) == (name, key) and entry.canceled_at
    assert _run(root, "status", "sweeps/slow.yaml", *LOCAL, "--format", "json") == 0
    [point] = json.loads(capsys.readouterr().out)["sweeps"][0]["points"]
    assert (point["state"], point["exit_code"]) == ("canceled", None)

    assert _run(root, "submit", "sweeps/slow.yaml", "--restart-failed", "--backend", "local") == 0
    assert "canceled with `cancel`" in capsys.readouterr().err
    assert not (run.path / "attempt-1").exists() and _local_entry(root, "slow").restarts == 0


# Two replicas that count the SIGTERMs they get and take a second to shut down once they get one.
GRACEFUL = """\
import os, pathlib, signal, time
rank = os.environ["BEAKER_REPLICA_RANK"]
terms = pathlib.Path(f"terms-{rank}")
signal.signal(signal.SIGTERM, lambda *_: terms.open("a").write("TERM\\n"))
pathlib.Path(f"ready-{rank}").write_text("x")
deadline = time.monotonic() + 120
while not terms.exists() and time.monotonic() < deadline:
    time.sleep(0.01)
time.sleep(1.0)  # shutting down; a second SIGTERM would arrive now
"""


def test_a_canceled_replica_gets_one_sigterm_and_its_shutdown_is_canceled_not_failed(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (root / "graceful.py").write_text(GRACEFUL)
    manifest = SLOW.replace("name: slow", "name: graceful").replace(
        '[python, -m, runner.examples.toy_trainer, --steps, "6000", --step-sleep, "0.01"]',
        "[python, graceful.py]",
    )
    write_manifest(root, manifest, "graceful.yaml")
    *_, run = _point(root, "graceful")

    def ready() -> bool:
        state = run.read()
        started = state is not None and all(r.pid_started for r in state.replicas)
        return started and all((root / f"ready-{rank}").exists() for rank in "01")

    with _submitting(root, "sweeps/graceful.yaml") as runner:
        wait_for(ready, "both replicas to handle SIGTERM")
        assert _run(root, "cancel", "sweeps/graceful.yaml", "--yes", *LOCAL) == 0
        assert runner.wait(timeout=WAIT) == 0
    assert [(root / f"terms-{rank}").read_text() for rank in "01"] == ["TERM\n"] * 2
    final = run.read()
    assert final is not None and final.status == "canceled"
    assert [r.exit_code for r in final.replicas] == [0, 0]  # exited cleanly, still canceled


# Three points that each take every CPU of the machine (so they run one at a time: the others
# wait for the CPUs inside the submit), each training for about a minute unless stopped.
QUEUED = (
    SLOW.replace("name: slow", "name: queued")
    .replace("    replicas: 2\n", "    resources: {cpus: 100000}\n")
    .replace("lr: [0.1]", "lr: [0.1, 0.2, 0.3]")
)


def test_cancel_during_a_local_submit_stops_it_from_starting_more_points(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_manifest(root, QUEUED, "queued.yaml")
    runs = root / ".runs" / "queued"

    def states() -> dict[str, str]:
        found = (RunDir(p).read() for p in runs.iterdir() if p.is_dir()) if runs.exists() else ()
        return {s.experiment: s.status for s in found if s is not None}

    def one_running() -> bool:
        return list(states().values()) == ["running"]

    with _submitting(root, "sweeps/queued.yaml") as runner:
        wait_for(one_running, "the first point to run while the others wait for the CPUs")
        capsys.readouterr()
        assert _run(root, "cancel", "sweeps/queued.yaml", *LOCAL) == Exit.WOULD_CHANGE
        would = capsys.readouterr().out
        assert would.startswith("Would cancel 1 run(s) on this machine:")
        assert " running " in would and "was running" not in would  # it runs now
        assert _run(root, "cancel", "sweeps/queued.yaml", "--yes", *LOCAL) == 0
        # Its own exit, not 5 ("Beaker did not answer"): what was asked, the next submit runs them.
        assert runner.wait(timeout=WAIT) == Exit.CANCELED
    err = capsys.readouterr().err
    assert "queued still has 2 point(s) not started: the next submit on this machine starts" in err
    assert "schedule" not in err  # a draft, on this machine: no workflow runs it
    [(first, status)] = states().items()  # nothing more was started
    assert status == "canceled"
    log = _log(root)
    assert f"created {first} " in log and " canceled" in log
    assert log.count(": not started: `cancel` canceled the sweep queued while this submit") == 2
    assert log.count("canceled  not started: `cancel` canceled") == 2  # the final table too
    assert "2 point(s) not started: `cancel` canceled their sweep while this submit ran" in log
    capsys.readouterr()
    assert _run(root, "status", "sweeps/queued.yaml", *LOCAL, "--format", "json") == 0
    points = json.loads(capsys.readouterr().out)["sweeps"][0]["points"]
    assert sorted(p["state"] for p in points) == ["canceled", "not submitted", "not submitted"]


def _log(root: Path) -> str:
    path = root / "submit.log"
    return path.read_text() if path.exists() else ""


def test_cancel_never_signals_a_process_that_reuses_a_recorded_pid(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_manifest(root, SLOW, "slow.yaml")
    name, key, run = _point(root, "slow")
    run.path.mkdir(parents=True)
    sleeper = [sys.executable, "-c", "import time; time.sleep(120)"]
    bystander = subprocess.Popen(sleeper, start_new_session=True)  # holds a recorded pid now
    replica = subprocess.Popen(sleeper, start_new_session=True)
    lock = os.open(run.lock_file, os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)  # as the live runner of this run does
        wait_for(lambda: process_started(bystander.pid) is not None, "the bystander to start")
        reused = Replica("main", 0, "replica-0.log", bystander.pid, 1)  # another start time
        ended = Replica("main", 1, "replica-1.log", exit_code=0)  # not one still starting
        state = new_state("slow", name, key, (reused, ended))
        run.write(state)

        assert _run(root, "cancel", "sweeps/slow.yaml", "--yes", "--backend", "local") == 0
        assert "1 had already finished" in capsys.readouterr().err
        assert not (root / ".runs" / "slow" / "ledger.jsonl").exists()  # nothing canceled

        started = process_started(replica.pid)
        run.write(with_replica(state, 1, pid=replica.pid, pid_started=started, exit_code=None))
        assert _run(root, "cancel", "sweeps/slow.yaml", "--yes", "--backend", "local") == 0
        assert replica.wait(timeout=WAIT) == -signal.SIGTERM
        assert bystander.poll() is None  # never signalled
        assert _local_entry(root, "slow").canceled_at
    finally:
        os.close(lock)
        for proc in (bystander, replica):
            proc.kill()
            proc.wait()


def test_cancel_of_a_run_still_starting_its_replicas_stops_it_before_they_start(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Its runner wrote `running` but no replica's pid yet: there is nothing to signal, and the
    cancel still holds (it was 'had already finished', and the run went on for its minute)."""
    write_manifest(root, SLOW, "slow.yaml")
    name, key, run = _point(root, "slow")
    run.path.mkdir(parents=True)
    replicas = (Replica("main", 0, "replica-0.log"), Replica("main", 1, "replica-1.log"))
    state = new_state("slow", name, key, replicas)
    lock = os.open(run.lock_file, os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)  # as the live runner of this run does
        run.write(state)
        assert _run(root, "cancel", "sweeps/slow.yaml", "--yes", *LOCAL) == 0
        assert "Canceled 1 run(s) on this machine:" in capsys.readouterr().out
        assert run.cancel_signalled() == [STOP_ALL]
        assert _local_entry(root, "slow").canceled_at
    finally:
        os.close(lock)
    # Its runner, reading that, starts no replica and records the run canceled.
    launches = [Launch("main", 0, (sys.executable, "-c", "pass"), {}, "replica-0.log", True)]
    final = Supervisor(run, state, launches, root, threading.Event(), 1.0).run()
    assert final.status == "canceled" and all(r.pid is None for r in final.replicas)


def _local_entry(root: Path, sweep: str) -> ledger.Entry:
    [entry] = ledger.read(root / ".runs" / sweep / "ledger.jsonl", sweep).entries.values()
    return entry
