"""The local backend end to end: real sweeps whose tasks really run as processes here."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from runner import ledger
from runner.backends.local import LAYOUT
from runner.cli import main
from runner.core.errors import Exit
from runner.examples import toy_trainer
from tests.background import wait_for
from tests.conftest import PROJECT
from tests.helpers import write_manifest

pytestmark = pytest.mark.slow

HEADER = """\
version: 1
name: {name}
draft: true
beaker:
  workspace: ai2/local-tests
  clusters: [ai2/test-cluster]
"""

# Appends "start"/"done" lines to counter.txt, so a test can count how often each point ran.
# Sleeps argv[1] seconds on a point's first start only (a restarted point finishes at once).
COUNTING_TASK = """\
import os, pathlib, sys, time
name = os.environ["BEAKER_EXPERIMENT_ID"]
counter = pathlib.Path("counter.txt")
first = f"start {name} " not in (counter.read_text() if counter.exists() else "")
with counter.open("a") as f:
    f.write(f"start {name} {os.getpid()}\\n")
time.sleep(float(sys.argv[1]) if first else 0)
with counter.open("a") as f:
    f.write(f"done {name}\\n")
sys.exit(int(sys.argv[2]))
"""

SHOW_ENV = """\
import json, os, pathlib, sys
names = [n for n in os.environ if n.startswith(("BEAKER_", "SWEEP_")) or n in (
    "RESULTS_DIR", "GREETING", "PRESENT_SECRET", "ABSENT_SECRET")]
out = pathlib.Path(os.environ["RESULTS_DIR"]) / f"env-{os.environ['BEAKER_REPLICA_RANK']}.json"
out.write_text(json.dumps({
    "env": {n: os.environ[n] for n in names},
    "argv": sys.argv[1:], "cwd": os.getcwd(), "executable": sys.executable, "prefix": sys.prefix,
}))
"""


@pytest.fixture(autouse=True)
def _importable(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tasks run `python -m runner.examples...` from a temporary root: as after `pip install`."""
    paths = [str(PROJECT), *filter(None, [os.environ.get("PYTHONPATH")])]
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(paths))


def _sweep(root: Path, name: str, body: str) -> Path:
    return write_manifest(root, HEADER.format(name=name) + body, f"{name}.yaml")


def _counting_sweep(root: Path, name: str, sleeps: str, codes: str = "[0]") -> None:
    (root / "count.py").write_text(COUNTING_TASK)
    _sweep(
        root,
        name,
        f"""\
tasks:
  - image: {{beaker: org/image}}
    command: [python, count.py, "{{sleep}}", "{{code}}"]
params:
  grid:
    sleep: {sleeps}
    code: {codes}
""",
    )


def _submit(root: Path, *extra: str) -> int:
    return main(["-C", str(root), "submit", "--backend", "local", *extra])


def _states(root: Path, sweep: str) -> dict[str, dict[str, Any]]:
    runs = root / ".runs" / sweep
    return {
        p.name: json.loads((p / "state.json").read_text()) for p in runs.iterdir() if p.is_dir()
    }


def _counter(root: Path) -> list[str]:
    path = root / "counter.txt"
    return path.read_text().splitlines() if path.exists() else []


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}/stat").exists() and " Z " not in Path(f"/proc/{pid}/stat").read_text()


def _start_runner(root: Path, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "runner", "submit", "--backend", "local", *extra],
        cwd=root,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def _wait_for_starts(root: Path, count: int, runner: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 60
    while sum(line.startswith("start") for line in _counter(root)) < count:
        assert runner.poll() is None and time.monotonic() < deadline, "runner made no progress"
        time.sleep(0.05)


def readme_first_command() -> list[list[str]]:
    """The runner commands of README's first command line, after its install steps."""
    text = (PROJECT / "README.md").read_text(encoding="utf-8")
    line = text.split("# 1.", 1)[1].splitlines()[1]
    return [shlex.split(part) for part in line.split(" && ") if part.startswith("python -m runner")]


def test_quickstart_as_a_newcomer_types_it(project_copy: Path) -> None:
    """README's first command (after the install): no token, not in CI, from the checkout. It
    ends with the table of every point and its metrics, and a plot in the file it names."""
    started = time.monotonic()
    commands = readme_first_command()
    assert [c[3] for c in commands] == ["submit", "status"]
    submit, status = (
        subprocess.run(
            [sys.executable, *command[1:]],
            cwd=project_copy,
            capture_output=True,
            text=True,
            timeout=120,
        )
        for command in commands
    )
    elapsed = time.monotonic() - started
    assert submit.returncode == 0, submit.stderr
    assert "no Beaker credentials found: using the local backend" in submit.stderr
    assert submit.stderr.count("images are not used") == 1
    assert status.returncode == 0, status.stderr
    lines = status.stdout.splitlines()
    group = (project_copy / ".runs" / "quickstart").resolve().as_uri()
    assert lines[0] == f"quickstart (sweeps/quickstart.yaml; group {group})"
    assert lines[1].split() == [
        "experiment", "state", "exit", "time", "params", "final_loss", "seconds", "steps", "url",
    ]  # fmt: skip
    rows = [line.split() for line in lines if line.startswith("=   quickstart-")]
    assert len(rows) == 5
    assert all(row[2:4] == ["succeeded", "0"] for row in rows), status.stdout
    assert all(float(row[7]) > 0 for row in rows)  # final_loss of every point
    assert any("nodes=2" in row for row in rows)
    picture = project_copy / commands[1][commands[1].index("--output") + 1]
    assert f"written to {picture.name}" in status.stderr
    assert picture.stat().st_size > 10_000
    print(f"quickstart took {elapsed:.1f}s")  # a figure, not a timed assertion
    assert not (project_copy / "sweeps" / "ledger").exists()


def test_replicas_get_beakers_environment_contract(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "show_env.py").write_text(SHOW_ENV)
    monkeypatch.setenv("PRESENT_SECRET", "from-the-caller")
    monkeypatch.delenv("ABSENT_SECRET", raising=False)
    _sweep(
        tmp_path,
        "contract",
        """\
tasks:
  - image: {beaker: org/image}
    command: [python, show_env.py]
    arguments: ["--lr={lr}"]
    env: {GREETING: "hello {lr}"}
    secrets: {PRESENT_SECRET: one, ABSENT_SECRET: two}
    replicas: 2
params:
  grid:
    lr: [0.5]
""",
    )
    assert _submit(tmp_path) == 0
    err = capsys.readouterr().err
    assert err.count("secrets are not available locally; not set: ABSENT_SECRET") == 1
    ((name, state),) = _states(tmp_path, "contract").items()
    run = tmp_path / ".runs" / "contract" / name
    assert state["status"] == "succeeded"
    for rank in (0, 1):
        seen = json.loads((run / "results" / f"env-{rank}.json").read_text())
        env = seen["env"]
        assert env["BEAKER_REPLICA_RANK"] == str(rank)
        assert env["BEAKER_REPLICA_COUNT"] == "2"
        assert env["BEAKER_LEADER_REPLICA_HOSTNAME"] == "127.0.0.1"
        assert env["BEAKER_ASSIGNED_GPU_COUNT"] == "0"
        assert env["BEAKER_EXPERIMENT_ID"] == name
        assert env["RESULTS_DIR"] == str(run / "results")
        assert env["SWEEP_PARAM_LR"] == "0.5" and env["SWEEP_EXPERIMENT"] == name
        assert env["GREETING"] == "hello 0.5"
        assert env["PRESENT_SECRET"] == "from-the-caller" and "ABSENT_SECRET" not in env
        assert seen["argv"] == ["--lr=0.5"]
        assert seen["cwd"] == str(tmp_path)
        # The runner's own interpreter, in its environment, however the path to it was spelled.
        assert Path(seen["executable"]).resolve() == Path(sys.executable).resolve()
        assert Path(seen["prefix"]).resolve() == Path(sys.prefix).resolve()
        assert (run / f"replica-{rank}.log").exists()


def test_a_failing_replica_stops_its_sibling(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _sweep(
        tmp_path,
        "failing",
        """\
tasks:
  - image: {beaker: org/image}
    command: [python, -m, runner.examples.toy_trainer]
    arguments: [--steps, 100000, --step-sleep, 0.01, --fail-rank, 1]
    replicas: 2
params:
  grid:
    lr: [0.1]
""",
    )
    started = time.monotonic()
    assert _submit(tmp_path) == Exit.RUNS_FAILED  # recorded: it ran exactly once, and failed
    assert time.monotonic() - started < 20
    ((name, state),) = _states(tmp_path, "failing").items()
    out, err = capsys.readouterr()
    run = tmp_path / ".runs" / "failing" / name
    assert out.splitlines()[0] == f"created {name} {run.as_uri()} failed (exit 3)"
    assert "submitted: 1 of 1 (1 created, 0 adopted); 1 run(s) failed" in err
    assert state["status"] == "failed" and state["exit_code"] == toy_trainer.FAILED
    assert state["cause"] == "main/1"
    assert [r["exit_code"] for r in state["replicas"]] == [128 + signal.SIGTERM, 3]
    assert "replica 0 of 2 (leader 127.0.0.1)" in (run / "replica-0.log").read_text()
    assert "failing on purpose" in (run / "replica-1.log").read_text()
    assert f"run {name} failed: replica main/1 exited 3" in err
    assert main(["-C", str(tmp_path), "status", "--backend", "local", "--format", "json"]) == 0
    (point,) = json.loads(capsys.readouterr().out)["sweeps"][0]["points"]
    assert (point["state"], point["exit_code"]) == ("failed", 3)
    assert point["url"] == run.as_uri()


def test_a_rerun_starts_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _counting_sweep(tmp_path, "again", "[0, 0.01]", "[0, 1]")
    assert _submit(tmp_path) == Exit.RUNS_FAILED
    ran = _counter(tmp_path)
    assert len(ran) == 8 and len(_states(tmp_path, "again")) == 4
    capsys.readouterr()
    assert _submit(tmp_path) == 0
    assert "Plan: 0 to submit, 4 already submitted" in capsys.readouterr().err
    (tmp_path / ".runs" / "again" / "ledger.jsonl").unlink()  # a lost ledger: runs are adopted
    assert _submit(tmp_path) == Exit.RUNS_FAILED  # two of those it adopts had failed
    out = capsys.readouterr().out
    assert out.count("adopted again-") == 4 and out.count(" failed (exit 1)") == 2
    assert _counter(tmp_path) == ran
    statuses = sorted(s["status"] for s in _states(tmp_path, "again").values())
    assert statuses == ["failed", "failed", "succeeded", "succeeded"]


def test_local_runs_never_count_as_beaker_submissions(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _counting_sweep(tmp_path, "apart", "[0]")
    assert _submit(tmp_path) == 0
    local = ledger.read(LAYOUT.path(tmp_path, "apart"), "apart")
    assert len(local.entries) == 1
    assert not (tmp_path / "sweeps" / "ledger").exists()
    capsys.readouterr()
    assert main(["-C", str(tmp_path), "expand", "--plan", "--format", "json"]) == 0
    (point,) = json.loads(capsys.readouterr().out)["sweeps"][0]["points"]
    assert point["status"] == "+"


def test_a_killed_runner_is_resumed_and_every_point_finishes_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _counting_sweep(tmp_path, "resume", "[0, 60, 0.01]")
    runner = _start_runner(tmp_path, "--concurrency", "1")
    _wait_for_starts(tmp_path, 2, runner)
    os.killpg(runner.pid, signal.SIGKILL)  # the runner dies mid-run; its task lives on, orphaned
    runner.wait()
    _, stale, orphan_pid = _counter(tmp_path)[-1].split()
    orphan = int(orphan_pid)
    assert _alive(orphan)
    assert _submit(tmp_path) == 0
    err = capsys.readouterr().err
    assert f"stale run {stale}: its runner (pid {runner.pid}" in err
    assert f"stopped leftover processes of {stale}: [{orphan}]" in err
    for _ in range(100):
        if not _alive(orphan):
            break
        time.sleep(0.05)
    assert not _alive(orphan)
    names = sorted(_states(tmp_path, "resume"))
    assert len(names) == 3
    done = sorted(line for line in _counter(tmp_path) if line.startswith("done"))
    assert done == [f"done {name}" for name in names]  # each point finished exactly once
    starts = [line.split()[1] for line in _counter(tmp_path) if line.startswith("start")]
    assert sorted(starts) == sorted([*names, stale])  # only the stale point started twice
    assert all(s["status"] == "succeeded" for s in _states(tmp_path, "resume").values())
    assert len(ledger.read(LAYOUT.path(tmp_path, "resume"), "resume").entries) == 3


def test_an_interrupted_runner_stops_its_tasks_and_the_next_submit_resumes_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _counting_sweep(tmp_path, "stop", "[60]")
    runner = _start_runner(tmp_path)
    _wait_for_starts(tmp_path, 1, runner)
    runner.send_signal(signal.SIGINT)
    _, err = runner.communicate(timeout=30)
    assert runner.returncode == 130
    assert "stopping 1 local run(s); the next submit resumes them" in err
    ((name, state),) = _states(tmp_path, "stop").items()
    assert state["status"] == "interrupted"
    assert not _alive(int(_counter(tmp_path)[-1].split()[-1]))
    assert _submit(tmp_path) == 0
    assert f"interrupted run {name}: starting it again" in capsys.readouterr().err
    assert [line for line in _counter(tmp_path) if line.startswith("done")] == [f"done {name}"]


def test_status_shows_a_running_point_as_running_with_its_elapsed_time(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Its ledger entry is written when the run starts, as a Beaker create's is: `status` no
    longer shows it `+ not submitted` until it ends."""
    _counting_sweep(tmp_path, "live", "[60]")
    runner = _start_runner(tmp_path)
    try:
        _wait_for_starts(tmp_path, 1, runner)
        path = LAYOUT.path(tmp_path, "live")
        wait_for(lambda: path.exists() and bool(ledger.read(path, "live").entries), "the entry")
        time.sleep(1.1)  # the state file counts whole seconds
        assert main(["-C", str(tmp_path), "status", "--backend", "local", "--format", "json"]) == 0
        (point,) = json.loads(capsys.readouterr().out)["sweeps"][0]["points"]
        assert (point["status"], point["state"], point["exit_code"]) == ("=", "running", None)
        assert point["seconds"] >= 1
    finally:
        runner.send_signal(signal.SIGINT)
        runner.communicate(timeout=30)
    assert runner.returncode == 130


def test_a_second_runner_waits_for_a_point_in_progress_and_adopts_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _counting_sweep(tmp_path, "shared", "[3]")
    first = _start_runner(tmp_path)
    _wait_for_starts(tmp_path, 1, first)
    assert _submit(tmp_path) == 0  # returns only once the first runner's run has finished
    (name,) = _states(tmp_path, "shared")
    captured = capsys.readouterr()
    assert f"{name} is being run by another runner; waiting for it to finish" in captured.err
    assert f"adopted {name}" in captured.out
    assert first.wait(timeout=30) == 0
    assert _counter(tmp_path)[-1] == f"done {name}" and len(_counter(tmp_path)) == 2


def test_a_missing_program_is_refused_and_nothing_is_recorded(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _sweep(
        tmp_path,
        "missing",
        """\
tasks:
  - image: {beaker: org/image}
    command: [no-such-program-for-the-local-backend, --lr, "{lr}"]
params:
  grid:
    lr: [0.1]
""",
    )
    assert _submit(tmp_path) == Exit.REJECTED  # rejected: a rerun would do the same
    assert (
        "cannot run 'no-such-program-for-the-local-backend': not found" in capsys.readouterr().err
    )
    assert not LAYOUT.path(tmp_path, "missing").exists()


@pytest.mark.parametrize("variable", ["CI", "GITHUB_ACTIONS"])
def test_ci_without_credentials_never_falls_back_to_local(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, variable: str
) -> None:
    _counting_sweep(tmp_path, "ci", "[0]")
    monkeypatch.setenv(variable, "true")
    assert main(["-C", str(tmp_path), "submit"]) == 1
    assert not (tmp_path / ".runs").exists() and not _counter(tmp_path)


def test_toy_trainer_reads_env_shards_and_writes_metrics(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RESULTS_DIR", str(tmp_path))
    monkeypatch.setenv("SWEEP_PARAM_LR", "0.03")
    monkeypatch.setenv("SWEEP_PARAM_STEPS", "50")
    assert toy_trainer.main([]) == 0
    metrics = json.loads((tmp_path / "metrics.json").read_text())
    assert metrics["steps"] == 50 and 0 < metrics["final_loss"] < 1
    (tmp_path / "metrics.json").unlink()
    monkeypatch.setenv("BEAKER_REPLICA_RANK", "1")
    monkeypatch.setenv("BEAKER_REPLICA_COUNT", "2")
    assert toy_trainer.main(["--steps", "5"]) == 0
    assert not (tmp_path / "metrics.json").exists()  # only replica 0 reports
    assert toy_trainer.main(["--fail-rank", "1"]) == toy_trainer.FAILED


STAND_IN = """\
#!/bin/sh
# Stands in for {launcher}: records what this replica was given.
printf '%s\\n' "$@" > "$RESULTS_DIR/{launcher}-$BEAKER_REPLICA_RANK.args"
"""


@pytest.mark.parametrize("launcher", ["torchrun", "accelerate"])
def test_a_launcher_runs_each_replica_with_its_rendezvous_and_the_tasks_argv(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, launcher: str
) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    stand_in = bin_dir / launcher
    stand_in.write_text(STAND_IN.format(launcher=launcher))
    stand_in.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    _sweep(
        tmp_path,
        "launch",
        f"""\
tasks:
  - image: {{beaker: org/image}}
    launcher: {launcher}
    command: [train.py, "--lr={{lr}}"]
    arguments: ["two words"]
    replicas: 2
    resources: {{gpus: 1}}  # torchrun asks for GPUs; this machine has none: nproc stays 1
params:
  grid:
    lr: [0.5]
""",
    )
    assert main(["-C", str(tmp_path), "submit", "--backend", "local", "sweeps/launch.yaml"]) == 0
    (results,) = (tmp_path / ".runs" / "launch").glob("*/results")
    got = {rank: (results / f"{launcher}-{rank}.args").read_text().splitlines() for rank in (0, 1)}
    if launcher == "torchrun":
        expected = [
            "--nnodes=2",
            "--node-rank={rank}",
            "--nproc-per-node=1",
            "--master-addr=127.0.0.1",
            "--master-port=29400",
        ]
    else:
        expected = [
            "launch",
            "--num_machines=2",
            "--machine_rank={rank}",
            "--num_processes=2",
            "--main_process_ip=127.0.0.1",
            "--main_process_port=29400",
        ]
    for rank in (0, 1):
        head = [line.format(rank=rank) for line in expected]
        assert got[rank] == [*head, "train.py", "--lr=0.5", "two words"]
