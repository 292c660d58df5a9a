"""`gpu_hours`, measured (`runner.observe.usage`): on Beaker, (exited - started) × GPUs summed
over every job of a point (each replica, each restart), by one job listing per task of each
finished point, made only where a reader needs it, with the listing's faults; locally, wall
time × the declared GPUs. Usable as any metric: status, `--best`, stop_when."""

from __future__ import annotations

import dataclasses
import json
import re
import subprocess
from pathlib import Path
from typing import Any

import grpc
import pytest

from runner.backends.local.rundir import Replica, RunDir, RunState, elapsed_seconds
from runner.backends.local.usage import run_usage
from runner.cli import main
from runner.core.errors import Exit
from tests.fake_beaker.server import FakeBeaker
from tests.helpers import head, write_manifest

GPUS, REPLICAS = 4, 2
SWEEP = (
    head("hours")
    + f"""\
    command: [python, train.py, "--lr={{lr}}"]
    resources: {{gpus: {GPUS}}}
    replicas: {REPLICAS}
params:
  grid:
    lr: [0.1, 0.01, 0.001]
"""
)
T0 = 1_700_000_000.0


def _status(root: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> Any:
    capsys.readouterr()
    assert main(["-C", str(root), "status", "--backend", "beaker", "--format", "json", *extra]) == 0
    return json.loads(capsys.readouterr().out)


def _hours(data: Any) -> dict[str, object]:
    points = data["sweeps"][0]["points"]
    return {p["experiment"]: p["metrics"].get("gpu_hours") for p in points}


@pytest.fixture
def ran(tmp_path: Path, fake_beaker: FakeBeaker) -> tuple[Path, list[str]]:
    """Three points: one whose replicas ran 1 h and 30 min; one that failed after 15 min on
    each replica, was restarted and then ran 45 min on each; one still running."""
    write_manifest(tmp_path, SWEEP, "hours.yaml")
    assert main(["-C", str(tmp_path), "submit", "--backend", "beaker"]) == 0
    first, second, third = (e.name for e in fake_beaker.experiments())
    fake_beaker.set_job_status(first, "succeeded", replica=0, started=T0, at=T0 + 3600)
    fake_beaker.set_job_status(first, "succeeded", replica=1, started=T0, at=T0 + 1800)
    fake_beaker.set_job_status(second, "failed", exit_code=3, started=T0, at=T0 + 900)
    assert main(["-C", str(tmp_path), "submit", "--backend", "beaker", "--restart-failed"]) == 0
    fake_beaker.set_job_status(second, "succeeded", started=T0 + 1000, at=T0 + 1000 + 2700)
    fake_beaker.set_job_status(third, "running", started=T0)
    return tmp_path, [first, second, third]


def test_gpu_hours_is_each_jobs_time_times_its_gpus_over_replicas_and_restarts(
    ran: tuple[Path, list[str]], fake_beaker: FakeBeaker, capsys: pytest.CaptureFixture[str]
) -> None:
    root, (first, second, third) = ran
    expected = {
        first: (3600 + 1800) * GPUS / 3600,  # (exited - started) × GPUs, per replica
        second: (2 * 900 + 2 * 2700) * GPUS / 3600,  # the failed attempt counts too
    }
    jobs = {n: fake_beaker.jobs(n) for n in (first, second)}
    truth = {
        n: sum((j.status_changed - (j.started or 0)) * GPUS for j in found) / 3600
        for n, found in jobs.items()
    }
    assert truth == expected and len(jobs[second]) == 2 * REPLICAS
    fake_beaker.reset_calls()
    data = _status(root, capsys)
    assert "gpu_hours" not in json.dumps(data)  # plain status never measures
    plain = fake_beaker.calls["ListJobs"]  # (the metrics' replica ranks: one a task)
    listings = fake_beaker.calls["ListWorkloads"]
    fake_beaker.reset_calls()
    capsys.readouterr()
    argv = ["-C", str(root), "status", "--backend", "beaker", "--best", "gpu_hours", "--max"]
    assert main(argv) == 0
    said = capsys.readouterr().out
    assert said.startswith(f"hours: best gpu_hours (max) = 8 at {second}")
    # One job listing per task (a replica is a task of its own on Beaker) of each finished point.
    assert fake_beaker.calls["ListJobs"] == plain + 2 * REPLICAS
    assert fake_beaker.calls["ListWorkloads"] == listings  # the tasks from status's own listing
    fake_beaker.reset_calls()
    data = _status(root, capsys, "--plot", "gpu_hours", "--output", str(root / "g.md"))
    hours = _hours(data)
    assert hours == {
        first: pytest.approx(expected[first]),
        second: pytest.approx(expected[second]),
        third: None,
    }
    assert hours[first] == pytest.approx(6.0) and hours[second] == pytest.approx(8.0)


def test_report_against_a_revision_measures_gpu_hours_then_as_now(
    ran: tuple[Path, list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    """`report --metric gpu_hours --against REV`: the points at REV are measured too."""
    root, (first, second, _) = ran
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-qm", "ran"]):
        subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)
    capsys.readouterr()
    argv = ["-C", str(root), "report", "--backend", "beaker"]
    argv += ["--metric", "gpu_hours", "--goal", "minimize"]
    assert main([*argv, "--against", "HEAD", "--format", "json"]) == 0
    (sweep,) = json.loads(capsys.readouterr().out)["sweeps"]
    hours = {p["experiment_now"]: (p["then"], p["now"]) for p in sweep["pairs"]}
    assert hours[first] == (pytest.approx(6.0), pytest.approx(6.0))
    assert hours[second] == (pytest.approx(8.0), pytest.approx(8.0))


@pytest.mark.slow  # beaker-py waits before it retries the unavailable listing
def test_a_sweep_judged_by_gpu_hours_measures_it_and_a_listing_fault_is_retried_or_said(
    ran: tuple[Path, list[str]], fake_beaker: FakeBeaker, capsys: pytest.CaptureFixture[str]
) -> None:
    root, (_, second, _) = ran
    write_manifest(root, SWEEP + "stop_when: {metric: gpu_hours, above: 7}\n", "hours.yaml")
    fake_beaker.unavailable("ListJobs", times=1)  # beaker-py retries an unavailable listing
    data = _status(root, capsys)
    assert _hours(data)[second] == pytest.approx(8.0)
    assert f"stopped: {second} reached gpu_hours 8" in data["sweeps"][0]["note"]
    fake_beaker.fail_rpc("ListJobs", grpc.StatusCode.PERMISSION_DENIED, times=50)
    capsys.readouterr()
    assert main(["-C", str(root), "status", "--backend", "beaker"]) == Exit.REJECTED
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "jobs of hours-" in err, err
    assert "Traceback" not in err


def test_locally_gpu_hours_is_wall_time_times_the_declared_gpus_over_each_attempt(
    tmp_path: Path,
) -> None:
    run = RunDir(tmp_path / "hours-abc")
    run.path.mkdir()
    replicas = (Replica("main", 0, "r0.log", gpus=4), Replica("main", 1, "r1.log", gpus=4))
    state = RunState("hours", "hours-abc", "k", "failed", 1, "here", "2026-01-01T00:00:00Z")
    run.write(_ended(state, "2026-01-01T00:15:00Z", replicas))
    run.archive()  # a restart keeps the attempt before it
    run.write(_ended(state, "2026-01-01T00:45:00Z", replicas))
    used = run_usage(run)
    assert used is not None and used.jobs == 4
    assert used.gpu_seconds / 3600 == pytest.approx((900 + 2700) * 8 / 3600)


def _ended(state: RunState, at: str, replicas: tuple[Replica, ...]) -> RunState:
    return dataclasses.replace(state, finished_at=at, replicas=replicas)


def test_locally_gpu_hours_counts_milliseconds_and_a_state_in_whole_seconds_still_reads(
    tmp_path: Path,
) -> None:
    run = RunDir(tmp_path / "hours-abc")
    run.path.mkdir()
    replicas = (Replica("main", 0, "r0.log", gpus=4),)
    state = RunState("hours", "hours-abc", "k", "failed", 1, "here", "2026-01-01T00:00:00.250Z")
    run.write(_ended(state, "2026-01-01T00:00:01.500Z", replicas))
    run.archive()
    older = dataclasses.replace(state, started_at="2026-01-01T00:00:00Z")  # written before
    run.write(_ended(older, "2026-01-01T00:00:02Z", replicas))
    used = run_usage(run)
    assert used is not None and used.gpu_seconds == pytest.approx((1.25 + 2) * 4)


def test_a_local_run_records_its_start_and_end_to_the_millisecond(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = head("quick", draft=True) + (
        "    command: [python, -c, 'print(1)']\n    resources: {gpus: 2}\nparams:\n  grid:\n"
        "    seed: [1]\n"
    )
    write_manifest(tmp_path, text.replace("{beaker: org/image}", "{docker: python:3.12}"))
    assert main(["-C", str(tmp_path), "submit", "--backend", "local"]) == 0
    (run,) = [RunDir(p) for p in (tmp_path / ".runs" / "quick").iterdir() if p.is_dir()]
    state = run.read()
    assert state is not None and state.finished_at is not None
    stamps = [state.started_at, state.finished_at]
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", s) for s in stamps), stamps
    capsys.readouterr()
    args = ["-C", str(tmp_path), "report", "--backend", "local", "--format", "json"]
    assert main([*args, "--metric", "gpu_hours", "--goal", "minimize"]) == 0
    (point,) = json.loads(capsys.readouterr().out)["sweeps"][0]["points"]
    seconds = elapsed_seconds(state.started_at, state.finished_at)
    assert seconds is not None and point["metrics"]["gpu_hours"] == pytest.approx(
        seconds * 2 / 3600
    )
    assert seconds != round(seconds) or seconds == 0  # not whole seconds (a 1 ms coincidence aside)
