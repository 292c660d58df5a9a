"""Restart and logs on the local backend: real processes, real run directories."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

from runner import ledger
from runner.cli import main
from tests.conftest import PROJECT
from tests.helpers import write_manifest

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

SWEEP = """\
version: 1
name: replicas
draft: true
beaker:
  workspace: ai2/local-tests
  clusters: [ai2/test-cluster]
tasks:
  - image: {beaker: org/image}
    command: [python, task.py]
    replicas: 3
params:
  grid:
    lr: [0.1]
"""


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
    assert _run(root, "submit", *sweep) == 0
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
