"""Acting on a running sweep on the fake Beaker: restart, the max_running cap, cancel and logs,
driven through the CLI over beaker-py's real wire protocols, with lost replies."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from beaker import Beaker, BeakerExperimentSpec

from runner import ledger
from runner.backends.beaker import BeakerBackend
from runner.cli import main
from runner.core.retry import RetryPolicy
from runner.ledger.store import LedgerStore
from runner.plan import catalog
from runner.repo.gitrepo import push
from tests.background import Command, Sink, wait_for
from tests.conftest import PROJECT
from tests.fake_beaker.fixtures import DEFAULT_WORKSPACE
from tests.fake_beaker.server import FakeBeaker
from tests.gitworld import git, github_env, make_world, merge_sweep, write
from tests.helpers import POINTS, SWEEP, write_manifest


def _run(root: Path, *args: str) -> int:
    return main(["-C", str(root), *args])


def _names(root: Path) -> list[str]:
    """The experiment names of the sweep's points, in manifest order."""
    [plan] = [p for p in catalog.load(root, []).plans() if p.sweep.name == "exact"]
    return [row.name for row in plan.rows if row.status != "-"]


def _entries(root: Path) -> dict[str, ledger.Entry]:
    read = ledger.read(ledger.ledger_path(root, "exact"), "exact")
    return {e.experiment: e for e in read.entries.values()}


# -- restart ----------------------------------------------------------------------------------


@pytest.fixture
def one_restart(tmp_path: Path, fake_beaker: FakeBeaker) -> Path:
    """The six-point sweep with `max_restarts: 1`, submitted to the fake Beaker."""
    write_manifest(tmp_path, "max_restarts: 1\n" + SWEEP, "exact.yaml")
    assert _run(tmp_path, "submit", "--backend", "beaker") == 0
    return tmp_path


def test_restart_failed_restarts_once_under_a_lost_reply_and_records_it(
    repo: Path, fake_beaker: FakeBeaker, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _run(repo, "submit", "--backend", "beaker") == 0
    failed, canceled, done, *_ = _names(repo)
    fake_beaker.set_job_status(failed, "failed", exit_code=3)
    fake_beaker.set_job_status(canceled, "canceled")
    fake_beaker.set_job_status(done, "succeeded")
    before = {e.experiment: e for e in _entries(repo).values()}
    fake_beaker.lose_reply("RestartExperimentTasks")  # the first restart commits, its reply is lost
    fake_beaker.reset_calls()

    assert _run(repo, "submit", "--backend", "beaker", "--restart-failed") == 0

    assert (fake_beaker.restarts(failed), fake_beaker.restarts(canceled)) == (1, 1)
    assert fake_beaker.restarts(done) == 0
    assert fake_beaker.calls["RestartExperimentTasks"] == 2  # looked up, never sent again
    assert len(fake_beaker.experiments()) == POINTS  # restarted in place: no new experiment
    assert fake_beaker.experiment(failed).status == "queued"
    after = _entries(repo)
    for name in (failed, canceled):  # same key, name, URL; the restart counted
        assert (after[name].url, after[name].id) == (before[name].url, before[name].id)
        assert after[name].restarts == 1 and after[name].restarted_at
    assert after[done].restarts == 0 and after[done] == before[done]
    err = capsys.readouterr().err
    assert f"restarted exact/{failed}: failed -> queued (restarts: 1)" in err
    assert "Restart: 2 restarted, 0 skipped, 0 failed" in err

    assert _run(repo, "expand", "--plan") == 0  # the plan shows it
    assert "restarted 1x" in capsys.readouterr().out


def test_max_restarts_bounds_restarts_per_point(
    one_restart: Path, fake_beaker: FakeBeaker, capsys: pytest.CaptureFixture[str]
) -> None:
    name = _names(one_restart)[0]
    for _ in range(3):
        fake_beaker.set_job_status(name, "failed")
        assert _run(one_restart, "submit", "--backend", "beaker", "--restart-failed") == 0
    assert fake_beaker.restarts(name) == 1
    assert _entries(one_restart)[name].restarts == 1
    assert "failed; max_restarts 1 reached" in capsys.readouterr().err


def test_a_restart_beaker_refuses_fails_the_run_and_records_nothing(
    repo: Path, fake_beaker: FakeBeaker, capsys: pytest.CaptureFixture[str]
) -> None:
    import grpc

    assert _run(repo, "submit", "--backend", "beaker") == 0
    name = _names(repo)[0]
    fake_beaker.set_job_status(name, "failed")
    fake_beaker.fail_rpc("RestartExperimentTasks", grpc.StatusCode.PERMISSION_DENIED)
    assert _run(repo, "submit", "--backend", "beaker", "--restart-failed") == 4  # rejected
    assert fake_beaker.restarts(name) == 0 and _entries(repo)[name].restarts == 0
    assert f"failed exact/{name}:" in capsys.readouterr().err


# -- the max_running cap ----------------------------------------------------------------------


def test_a_capped_sweep_tops_up_in_manifest_order_as_points_finish(
    tmp_path: Path, fake_beaker: FakeBeaker, capsys: pytest.CaptureFixture[str]
) -> None:
    write_manifest(tmp_path, "max_running: 2\n" + SWEEP, "exact.yaml")
    order = _names(tmp_path)

    assert _run(tmp_path, "expand", "--plan") == 0  # offline: the most the next submit starts
    out = capsys.readouterr().out
    assert out.count("waiting: 2/2 running") == POINTS - 2
    assert "max_running 2: 4 waiting (not checked)" in out

    assert _run(tmp_path, "submit", "--backend", "beaker") == 0
    assert sorted(fake_beaker.count_by_name()) == sorted(order[:2])
    assert _run(tmp_path, "submit", "--backend", "beaker") == 0  # both still queued: nothing
    assert len(fake_beaker.count_by_name()) == 2
    assert "max_running 2: 4 waiting (2 running now)" in capsys.readouterr().err

    fake_beaker.set_job_status(order[0], "succeeded")
    fake_beaker.set_job_status(order[1], "running")
    assert _run(tmp_path, "submit", "--backend", "beaker") == 0
    assert sorted(fake_beaker.count_by_name()) == sorted(order[:3])
    for name in order[1:3]:
        fake_beaker.set_job_status(name, "failed")  # finished, failed or not, frees its slot
    assert _run(tmp_path, "submit", "--backend", "beaker") == 0
    assert sorted(fake_beaker.count_by_name()) == sorted(order[:5])
    for name in order[3:5]:
        fake_beaker.set_job_status(name, "succeeded")
    assert _run(tmp_path, "submit", "--backend", "beaker") == 0
    assert set(fake_beaker.count_by_name().values()) == {1} and len(_entries(tmp_path)) == POINTS


def test_points_whose_names_are_taken_hold_no_slot_of_the_cap(
    tmp_path: Path, fake_beaker: FakeBeaker, capsys: pytest.CaptureFixture[str]
) -> None:
    """max_running 2 and the first two points' names held by someone else's experiments:
    those two are refused on their own line each run, and the free slots go to points that
    can run, so the sweep does not stall (it used to count the two as its own, running)."""
    write_manifest(tmp_path, "max_running: 2\n" + SWEEP, "exact.yaml")
    order = _names(tmp_path)
    for name in order[:2]:
        _foreign(name, "not this sweep's")

    assert _run(tmp_path, "submit", "--backend", "beaker") == 4  # the two clashes: rejected
    err = capsys.readouterr().err
    assert all(f"{name}" in err for name in order[:2])
    mine = {e.experiment for e in _entries(tmp_path).values()}
    assert mine == set(order[2:4])  # the next two in manifest order got the slots

    assert _run(tmp_path, "submit", "--backend", "beaker") == 4  # both still queued: full
    assert {e.experiment for e in _entries(tmp_path).values()} == set(order[2:4])
    for name in order[2:4]:
        fake_beaker.set_job_status(name, "succeeded")
    assert _run(tmp_path, "submit", "--backend", "beaker") == 4
    assert {e.experiment for e in _entries(tmp_path).values()} == set(order[2:])


def test_one_restart_failed_of_a_capped_guarded_sweep_lists_it_once_per_phase(
    tmp_path: Path, fake_beaker: FakeBeaker, capsys: pytest.CaptureFixture[str]
) -> None:
    """The restarts, the cap, the stops and the adoption read one observation of the sweep;
    the duplicate check after the creates one more: 2 listings, the organization resolved once
    (it was 5 listings and 3 resolutions)."""
    write_manifest(tmp_path, "max_running: 2\nmax_failures: 4\n" + SWEEP, "exact.yaml")
    order = _names(tmp_path)
    assert _run(tmp_path, "submit", "--backend", "beaker") == 0
    fake_beaker.set_job_status(order[0], "failed", exit_code=3)
    fake_beaker.set_job_status(order[1], "succeeded")
    fake_beaker.reset_calls()

    assert _run(tmp_path, "submit", "--backend", "beaker", "--restart-failed") == 0
    calls = fake_beaker.calls
    assert (fake_beaker.restarts(order[0]), sorted(fake_beaker.count_by_name())) == (
        1,
        sorted(order[:3]),
    )  # restarted in place, and the one free slot taken by the next point
    assert calls["ListWorkloads"] <= 2
    assert calls["ResolveOrganizationName"] <= 1
    assert "Restart: 1 restarted, 0 skipped, 0 failed" in capsys.readouterr().err


# -- cancel -----------------------------------------------------------------------------------


def _foreign(name: str, description: str) -> str:
    """An experiment created by someone else, in the same workspace, with beaker-py directly."""
    with Beaker.from_env(check_for_upgrades=False) as client:
        spec = BeakerExperimentSpec.new(docker_image="python:3.11", command=["true"])
        spec.description = description
        workspace = client.workspace.get(DEFAULT_WORKSPACE)
        return client.experiment.create(name=name, spec=spec, workspace=workspace).experiment.id


def test_cancel_asks_for_yes_and_touches_only_the_sweeps_experiments(
    repo: Path, fake_beaker: FakeBeaker, capsys: pytest.CaptureFixture[str]
) -> None:
    names = _names(repo)
    _foreign(names[0], "exact, but not ours")  # holds a point's name without its key
    _foreign("exact-lookalike", "exact sweep lookalike")  # listed with the sweep's experiments
    assert _run(repo, "submit", "--backend", "beaker") == 4  # the first point's name is taken
    fake_beaker.set_job_status(names[1], "succeeded")  # finished: nothing to cancel
    fake_beaker.set_job_status(names[2], "running")
    fake_beaker.reset_calls()
    capsys.readouterr()

    assert _run(repo, "cancel", "sweeps/exact.yaml", "--backend", "beaker") == 2
    out = capsys.readouterr()
    assert out.out.startswith("Would cancel 4 experiment(s):")
    assert sorted(n for n in names if n in out.out) == sorted(names[2:])
    assert "pass --yes" in out.err and fake_beaker.calls.get("CancelWorkloads", 0) == 0

    fake_beaker.lose_reply("CancelWorkloads")  # committed, reply lost: looked up, not resent
    assert _run(repo, "cancel", "sweeps/exact.yaml", "--backend", "beaker", "--yes") == 0
    assert fake_beaker.calls["CancelWorkloads"] == 1
    assert capsys.readouterr().out.startswith("Canceled 4 experiment(s):")
    for name in names[2:]:
        assert fake_beaker.cancels(name) == 1 and fake_beaker.experiment(name).status == "canceled"
    assert fake_beaker.cancels(names[0]) == fake_beaker.cancels("exact-lookalike") == 0
    assert fake_beaker.cancels(names[1]) == 0
    entries = _entries(repo)
    assert all(entries[n].canceled_at for n in names[2:]) and not entries[names[1]].canceled_at

    # Points canceled on request are not restarted by --restart-failed.
    assert _run(repo, "submit", "--backend", "beaker", "--restart-failed") == 4  # the clash
    assert all(fake_beaker.restarts(n) == 0 for n in names[2:])
    assert "canceled with `cancel`" in capsys.readouterr().err


def test_cancel_orphans_or_named_points_only(
    repo: Path, fake_beaker: FakeBeaker, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _run(repo, "submit", "--backend", "beaker") == 0
    names = _names(repo)
    write_manifest(repo, SWEEP.replace("lr: [0.1, 0.01, 0.001]", "lr: [0.1, 0.01]"), "exact.yaml")
    orphans = sorted(set(names) - set(_names(repo)))
    assert len(orphans) == 2
    assert _run(repo, "cancel", "sweeps/exact.yaml", "--orphans", "--yes") == 0
    assert [n for n in names if fake_beaker.cancels(n)] == [n for n in names if n in orphans]

    key = _entries(repo)[names[0]].key
    # docs/commands.md's form: the PATH after the names (argparse would read it as one more name)
    assert _run(repo, "cancel", "--points", key[:10], "sweeps/exact.yaml", "--yes") == 0
    assert fake_beaker.cancels(names[0]) == 1 and fake_beaker.cancels(names[1]) == 0
    capsys.readouterr()
    assert _run(repo, "cancel", "sweeps/exact.yaml", "--points", "nope", "--yes") == 1
    assert capsys.readouterr().err.count("\n") == 1


# -- logs -------------------------------------------------------------------------------------

MULTI = """\
version: 1
name: multi
beaker:
  workspace: ai2/sweeps-test
  budget: ai2/test-budget
  clusters: [ai2/test-cluster]
tasks:
  - name: train
    image: {beaker: org/image}
    command: [python, train.py, "--lr={lr}"]
    replicas: 3
  - name: eval
    image: {beaker: org/image}
    command: [python, eval.py]
params:
  grid:
    lr: [0.1]
"""


@pytest.mark.parametrize("replica_tasks", [True, False], ids=["replicas-as-tasks", "one-task"])
def test_logs_select_the_replica_and_task_and_say_when_not_started(
    tmp_path: Path, fake_beaker: FakeBeaker, capsys: pytest.CaptureFixture[str], replica_tasks: bool
) -> None:
    """On Beaker a task's replicas are tasks of their own (named and listed in no rank order),
    or, as this fake once modelled it, one task with a job per replica: right on both."""
    fake_beaker.replica_tasks = replica_tasks
    write_manifest(tmp_path, MULTI, "multi.yaml")
    assert _run(tmp_path, "submit", "--backend", "beaker") == 0
    [name] = [row.name for row in catalog.load(tmp_path, []).plans()[0].rows]
    key = catalog.load(tmp_path, []).plans()[0].rows[0].key
    capsys.readouterr()

    assert _run(tmp_path, "logs", name, "--backend", "beaker") == 1
    err = capsys.readouterr().err
    assert err == f"no logs yet: {name} task train replica 0: its job" + err.split("its job")[1]
    assert err.rstrip().endswith("has not started yet (queued)")

    fake_beaker.set_job_status(name, "running")
    for replica in range(3):
        fake_beaker.set_logs(
            name, [f"train {replica} step {i}\n" for i in range(5)], "train", replica
        )
    fake_beaker.set_logs(name, ["eval done\n"], task="eval")
    assert (
        _run(tmp_path, "logs", key[:8], "--replica", "2", "--tail", "2", "--backend", "beaker") == 0
    )
    assert capsys.readouterr().out == "train 2 step 3\ntrain 2 step 4\n"
    assert _run(tmp_path, "logs", name, "--task", "eval", "--backend", "beaker") == 0
    assert capsys.readouterr().out == "eval done\n"

    assert _run(tmp_path, "logs", name, "--replica", "3", "--backend", "beaker") == 1
    assert "has 3 replica(s): choose --replica 0 to 2" in capsys.readouterr().err
    assert _run(tmp_path, "logs", name, "--task", "nope", "--backend", "beaker") == 1
    assert "no task 'nope' (its tasks: train, eval)" in capsys.readouterr().err


@pytest.mark.parametrize("replica_tasks", [True, False], ids=["replicas-as-tasks", "one-task"])
def test_a_failed_multi_node_point_shows_the_failing_replica_and_restarts_it(
    tmp_path: Path, fake_beaker: FakeBeaker, capsys: pytest.CaptureFixture[str], replica_tasks: bool
) -> None:
    """Replica 1 of 3 exits 7, the others are canceled by Beaker's failure propagation: status
    shows exit 7 (not the first task's code), and a restart reruns the point once."""
    fake_beaker.replica_tasks = replica_tasks
    write_manifest(tmp_path, MULTI, "multi.yaml")
    assert _run(tmp_path, "submit", "--backend", "beaker") == 0
    [name] = [row.name for row in catalog.load(tmp_path, []).plans()[0].rows]
    fake_beaker.set_job_status(name, "succeeded", task="eval")
    fake_beaker.set_job_status(name, "canceled", task="train")
    fake_beaker.set_job_status(name, "failed", exit_code=7, task="train", replica=1)
    capsys.readouterr()

    assert _run(tmp_path, "status", "--backend", "beaker", "--format", "json") == 0
    [point] = json.loads(capsys.readouterr().out)["sweeps"][0]["points"]
    assert (point["state"], point["exit_code"]) == ("failed", 7)

    assert _run(tmp_path, "submit", "--backend", "beaker", "--restart-failed") == 0
    assert fake_beaker.restarts(name) == 1
    fake_beaker.set_job_status(name, "running", task="train")
    fake_beaker.set_logs(name, ["second attempt\n"], "train", 1)
    capsys.readouterr()
    assert _run(tmp_path, "logs", name, "--replica", "1", "--backend", "beaker") == 0
    assert capsys.readouterr().out == "second attempt\n"


def test_logs_of_a_restarted_point_are_its_latest_jobs(
    repo: Path, fake_beaker: FakeBeaker, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _run(repo, "submit", "--backend", "beaker") == 0
    name = _names(repo)[0]
    fake_beaker.set_logs(name, ["first attempt\n"])
    fake_beaker.set_job_status(name, "failed")
    assert _run(repo, "submit", "--backend", "beaker", "--restart-failed") == 0
    fake_beaker.set_job_status(name, "running")
    fake_beaker.set_logs(name, ["second attempt\n"])
    capsys.readouterr()
    assert _run(repo, "logs", name, "--backend", "beaker") == 0
    assert capsys.readouterr().out == "second attempt\n"


def test_status_json_reports_restarts_and_cancellations(
    repo: Path, fake_beaker: FakeBeaker, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _run(repo, "submit", "--backend", "beaker") == 0
    first, second, *_ = _names(repo)
    fake_beaker.set_job_status(first, "failed")
    assert _run(repo, "submit", "--backend", "beaker", "--restart-failed") == 0
    assert _run(repo, "cancel", "sweeps/exact.yaml", "--points", second, "--yes") == 0
    capsys.readouterr()
    assert _run(repo, "status", "--backend", "beaker", "--format", "json") == 0
    points = {
        p["experiment"]: p for p in json.loads(capsys.readouterr().out)["sweeps"][0]["points"]
    }
    assert points[first]["restarts"] == 1 and points[first]["canceled_at"] is None
    assert points[second]["restarts"] == 0 and points[second]["canceled_at"]


def test_the_readme_example_sweep_loads_with_its_cap_and_restart_bound(tmp_path: Path) -> None:
    text = (PROJECT / "docs" / "lifecycle.md").read_text(encoding="utf-8")
    section = text.split("# Acting on a running sweep", 1)[1]
    example = section.split("```yaml\n", 1)[1].split("```", 1)[0]
    write_manifest(tmp_path, example, "lr.yaml")
    [plan] = catalog.load(tmp_path, []).plans()
    assert (plan.sweep.limits.max_running, plan.sweep.limits.max_restarts) == (2, 3)
    assert len(plan.to_submit) == 2 and plan.cap is not None and plan.waiting == 2


@pytest.mark.slow
def test_logs_follow_prints_every_line_once_in_order_until_the_job_ends(
    repo: Path, fake_beaker: FakeBeaker, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert _run(repo, "submit", "--backend", "beaker") == 0
    name = _names(repo)[0]
    fake_beaker.set_job_status(name, "running")
    fake_beaker.set_logs(name, ["line 0\n", "line 1\n"])
    fake_beaker.cut_log_stream(after_lines=3)  # resumed from the last line's time: no repeats
    out = Sink()
    monkeypatch.setattr(sys, "stdout", out)

    follower = Command(repo, "logs", name, "--follow", "--backend", "beaker")
    wait_for(lambda: out.text() == "line 0\nline 1\n", "the lines already written")
    fake_beaker.append_logs(name, [f"line {i}\n" for i in range(2, 5)])
    wait_for(lambda: "line 4\n" in out.text(), "the lines written while following")
    assert follower.running  # the job runs: still following
    fake_beaker.append_logs(name, ["line 5\n"])
    fake_beaker.set_job_status(name, "succeeded")

    assert follower.join() == 0
    assert out.text() == "".join(f"line {i}\n" for i in range(6))


# -- restart --dry-run ------------------------------------------------------------------------


def test_restart_failed_dry_run_lists_what_it_would_restart_and_skip_and_restarts_nothing(
    one_restart: Path, fake_beaker: FakeBeaker, capsys: pytest.CaptureFixture[str]
) -> None:
    failed, canceled, spent, done, *_ = _names(one_restart)
    fake_beaker.set_job_status(spent, "failed")
    assert _run(one_restart, "submit", "--backend", "beaker", "--restart-failed") == 0
    fake_beaker.set_job_status(spent, "failed")  # failed again, its one restart spent
    fake_beaker.set_job_status(canceled, "running")
    assert _run(one_restart, "cancel", "sweeps/exact.yaml", "--points", canceled, "--yes") == 0
    fake_beaker.set_job_status(failed, "failed", exit_code=2)
    fake_beaker.set_job_status(done, "succeeded")
    ledger_before = ledger.ledger_path(one_restart, "exact").read_text()
    fake_beaker.reset_calls()
    capsys.readouterr()

    # No PATH and the auto backend: still looked up on Beaker, which has the credentials.
    assert _run(one_restart, "submit", "--restart-failed", "--dry-run") == 0

    assert fake_beaker.calls.get("RestartExperimentTasks", 0) == 0
    assert fake_beaker.calls.get("http:create", 0) == 0
    assert [fake_beaker.restarts(n) for n in (failed, canceled, spent)] == [0, 0, 1]
    assert ledger.ledger_path(one_restart, "exact").read_text() == ledger_before
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith("would ")]
    canceled_at = _entries(one_restart)[canceled].canceled_at
    assert sorted(lines) == sorted(
        [
            f"would restart exact/{failed}: failed (restarts: 0)",
            f"would skip exact/{canceled}: canceled with `cancel` at {canceled_at}: left alone"
            " (restarts: 0)",
            f"would skip exact/{spent}: failed; max_restarts 1 reached (restarts: 1)",
        ]
    )
    assert (
        "Restart (dry run, nothing restarted): 1 would restart, 2 would skip, 0 would fail" in err
    )


# -- cancel of an experiment the ledger lost --------------------------------------------------


def test_cancel_records_an_experiment_missing_from_the_ledger_so_restart_leaves_it(
    repo: Path, fake_beaker: FakeBeaker, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _run(repo, "submit", "--backend", "beaker") == 0
    lost, kept, *_ = _names(repo)
    path = ledger.ledger_path(repo, "exact")
    whole = ledger.read(path, "exact")
    # The ledger write of `lost` never happened (the runner was killed before it).
    path.write_text(
        ledger.render(
            ledger.Ledger("exact", {k: e for k, e in whole.entries.items() if e.experiment != lost})
        )
    )
    for name in (lost, kept):
        fake_beaker.set_job_status(name, "running")
    capsys.readouterr()

    assert _run(repo, "cancel", "sweeps/exact.yaml", "--points", lost, kept, "--yes") == 0

    said = capsys.readouterr()
    assert "Canceled 2 experiment(s):" in said.out
    assert "still has" not in said.err  # `lost` is recorded now: no submit creates it again
    entries = _entries(repo)
    recorded, original = (
        entries[lost],
        next(e for e in whole.entries.values() if e.experiment == lost),
    )
    assert recorded.canceled_at and entries[kept].canceled_at
    assert (recorded.key, recorded.id, recorded.url) == (original.key, original.id, original.url)
    assert dict(recorded.params) == dict(original.params)
    for _ in range(2):  # the first would adopt it had cancel not recorded it; then restart it
        assert _run(repo, "submit", "--backend", "beaker", "--restart-failed") == 0
    assert fake_beaker.restarts(lost) == fake_beaker.restarts(kept) == 0
    assert fake_beaker.count_by_name()[lost] == 1
    assert _entries(repo)[lost].canceled_at == recorded.canceled_at
    assert f"skipped exact/{lost}: canceled with `cancel`" in capsys.readouterr().err


# -- cancel --commit --push -------------------------------------------------------------------

LEDGER = "sweeps/ledger/exact.jsonl"


@pytest.mark.slow
def test_cancel_commit_push_commits_only_the_ledger_and_rebuilds_a_raced_push(
    tmp_path: Path,
    fake_beaker: FakeBeaker,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    waits: list[float] = []
    monkeypatch.setattr(push, "PUSH_POLICY", RetryPolicy(attempts=6, sleep=waits.append))
    world = make_world(tmp_path)
    merge_sweep(world)
    assert _run(world.ci_checkout("ci"), "submit", "--commit", "--push") == 0
    ours, theirs = world.ci_checkout("ours"), world.ci_checkout("theirs")
    restarted, canceled, *_ = _names(ours)
    fake_beaker.set_job_status(restarted, "failed")
    fake_beaker.set_job_status(canceled, "running")
    # Another run records a restart in the same ledger and pushes first: ours is then rejected.
    assert _run(theirs, "submit", "--restart-failed", "--commit", "--push") == 0
    their_commit = world.head()
    write(ours, "README.md", "A local edit that is not the runner's to commit.\n")
    fake_beaker.reset_calls()
    capsys.readouterr()

    assert (
        _run(
            ours, "cancel", "sweeps/exact.yaml", "--points", canceled, "--yes", "--commit", "--push"
        )
        == 0
    )

    assert fake_beaker.calls["CancelWorkloads"] == 1 and fake_beaker.cancels(canceled) == 1
    assert "origin moved, merged and pushed again" in capsys.readouterr().err
    assert len(waits) == 1  # one rejected push, rebuilt on their commit, pushed
    assert world.head("main^") == their_commit and world.head() == git(ours, "rev-parse", "HEAD")
    assert world.files_changed() == [LEDGER] and "[skip ci]" in world.message()
    on_origin = {
        e.experiment: e for e in ledger.parse(world.show(LEDGER), LEDGER, "exact").entries.values()
    }
    assert on_origin[canceled].canceled_at and not on_origin[restarted].canceled_at
    assert on_origin[restarted].restarts == 1  # their record kept beside ours
    assert set(on_origin) == set(_names(ours))
    assert "A local edit" in (ours / "README.md").read_text()  # left as it was, uncommitted
    assert git(ours, "status", "--porcelain") == " M README.md"


def test_a_dispatched_restart_failed_dry_run_without_credentials_says_it_did_not_check(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("BEAKER_TOKEN", raising=False)  # the dry-run job has no secrets
    inputs = {"inputs": {"dry_run": "true", "restart_failed": "true"}}
    github_env(monkeypatch, repo / "gh", "workflow_dispatch", inputs)
    assert _run(repo, "submit", "--dry-run", "--github-event") == 0
    err = capsys.readouterr().err
    assert "--restart-failed: which points failed is not checked in this dry run" in err
    assert "would restart" not in err and "Plan: 6 to submit" in err


@pytest.mark.slow
def test_cancel_commit_refuses_an_uncommitted_manifest_before_canceling_anything(
    tmp_path: Path, fake_beaker: FakeBeaker, capsys: pytest.CaptureFixture[str]
) -> None:
    world = make_world(tmp_path)
    merge_sweep(world)
    ours = world.ci_checkout("ours")
    assert _run(ours, "submit", "--commit") == 0
    running = _names(ours)[0]
    fake_beaker.set_job_status(running, "running")
    manifest = ours / "sweeps" / "exact.yaml"
    manifest.write_text(manifest.read_text() + "# edited, not committed\n")
    fake_beaker.reset_calls()
    capsys.readouterr()
    assert _run(ours, "cancel", "sweeps/exact.yaml", "--yes", "--commit") == 1
    assert "sweeps/exact.yaml" in capsys.readouterr().err
    assert fake_beaker.calls.get("CancelWorkloads", 0) == 0
    assert fake_beaker.experiment(running).status == "running"


@pytest.mark.parametrize(
    "command",
    [
        ["status", "--backend", "beaker"],
        ["cancel", "sweeps/exact.yaml", "--backend", "beaker", "--yes"],
        ["submit", "--backend", "beaker", "--restart-failed"],
    ],
    ids=["status", "cancel", "restart-failed"],
)
def test_a_listing_beaker_refuses_is_one_error_line_and_exit_4_not_a_crash(
    repo: Path, fake_beaker: FakeBeaker, capsys: pytest.CaptureFixture[str], command: list[str]
) -> None:
    """Look-ups made before anything is changed (a status, the targets of a cancel or a restart)
    used to end as 'unexpected error' (exit 3) when Beaker refused them."""
    import grpc

    assert _run(repo, "submit", "--backend", "beaker") == 0
    fake_beaker.fail_rpc("ListWorkloads", grpc.StatusCode.PERMISSION_DENIED, times=10)
    capsys.readouterr()
    assert _run(repo, *command) == 4
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("error: ") and "PERMISSION_DENIED" in err[-1]
    assert not any("unexpected error" in line for line in err)
    assert fake_beaker.calls.get("CancelWorkloads", 0) == 0
    assert fake_beaker.calls.get("RestartExperimentTasks", 0) == 0


# -- a renamed experiment_name ----------------------------------------------------------------


def test_a_renamed_experiment_name_is_found_by_every_lifecycle_command(
    tmp_path: Path, fake_beaker: FakeBeaker, capsys: pytest.CaptureFixture[str]
) -> None:
    """A template edit renames the points (shown as `~`), never their experiments: status,
    the cap, a restart, logs and cancel all go by the experiment the ledger recorded."""
    write_manifest(tmp_path, "max_running: 4\n" + SWEEP, "exact.yaml")
    assert _run(tmp_path, "submit", "--backend", "beaker") == 0
    recorded = {e.key: e.experiment for e in _entries(tmp_path).values()}
    assert len(recorded) == 4
    renamed = 'max_running: 4\nexperiment_name: "renamed-lr{lr}-s{seed}"\n' + SWEEP
    write_manifest(tmp_path, renamed, "exact.yaml")
    [plan] = catalog.load(tmp_path, []).plans()
    new_name = {r.key: r.name for r in plan.rows}
    assert all(new_name[k] != old for k, old in recorded.items())  # every point renamed
    first_key, first = next(iter(recorded.items()))
    capsys.readouterr()

    assert _run(tmp_path, "status", "--backend", "beaker", "--format", "json") == 0
    points = json.loads(capsys.readouterr().out)["sweeps"][0]["points"]
    states = {p["key"]: p["state"] for p in points}
    assert [states[k] for k in recorded] == ["queued"] * 4  # none "missing"

    assert _run(tmp_path, "submit", "--backend", "beaker") == 0  # 4 live under the old names
    assert len(fake_beaker.experiments()) == 4  # the cap holds: nothing new

    fake_beaker.set_job_status(first, "failed", exit_code=3)
    assert _run(tmp_path, "submit", "--backend", "beaker", "--restart-failed") == 0
    assert fake_beaker.restarts(first) == 1 and _entries(tmp_path)[first].restarts == 1

    fake_beaker.set_job_status(first, "running")
    fake_beaker.set_logs(first, ["step 1\n"])
    capsys.readouterr()
    for ref in (first, new_name[first_key], first_key[:10]):  # old name, new name, key prefix
        assert _run(tmp_path, "logs", ref, "--backend", "beaker") == 0, ref
        assert capsys.readouterr().out == "step 1\n"

    assert _run(tmp_path, "cancel", "sweeps/exact.yaml", "--backend", "beaker", "--yes") == 0
    assert all(fake_beaker.cancels(old) == 1 for old in recorded.values())
    assert all(e.canceled_at for e in _entries(tmp_path).values())


def test_a_cancel_retry_claims_only_what_its_request_canceled(
    repo: Path, fake_beaker: FakeBeaker
) -> None:
    """CancelWorkloads fails (nothing committed); one experiment succeeds before the retry.
    The retry must not count it canceled: not among those canceled, no canceled_at in the
    ledger. The backend is given its retry policy (whose wait lets the experiment finish)."""
    import grpc

    from runner.operate import cancels

    assert _run(repo, "submit", "--backend", "beaker") == 0
    done, *others = _names(repo)
    fake_beaker.fail_rpc("CancelWorkloads", grpc.StatusCode.UNAVAILABLE)
    meanwhile = RetryPolicy(sleep=lambda s: fake_beaker.set_job_status(done, "succeeded"))
    plans = catalog.load(repo, []).plans()
    backend = BeakerBackend(policy=meanwhile)
    try:
        targets = cancels.cancel_targets(backend, plans, orphans=False, points=())
        canceled = cancels.cancel(backend, targets, LedgerStore(repo))
    finally:
        backend.close()

    assert sorted(t.row.name for t in canceled) == sorted(others)
    entries = _entries(repo)
    assert not entries[done].canceled_at and all(entries[n].canceled_at for n in others)
    assert fake_beaker.experiment(done).status == "succeeded"


# -- crashes between a call and its record ----------------------------------------------------


def _process(root: Path, *args: str) -> subprocess.Popen[str]:
    """The runner as its own process, to be killed."""
    argv = [sys.executable, "-m", "runner", "-C", str(root), *args]
    return subprocess.Popen(argv, cwd=PROJECT, env=dict(os.environ), text=True)


def _restarting(root: Path, fake: FakeBeaker, held: float) -> tuple[str, subprocess.Popen[str]]:
    """The first point failed, and a runner in its own process restarting it: Beaker commits
    the restart and holds its reply `held` seconds. Returns the point's name and the runner."""
    name = _names(root)[0]
    fake.set_job_status(name, "failed")
    fake.hold_reply("RestartExperimentTasks", held)
    return name, _process(root, "submit", "--backend", "beaker", "--restart-failed")


@pytest.mark.slow
def test_a_runner_killed_between_a_restart_and_its_record_keeps_max_restarts(
    one_restart: Path, fake_beaker: FakeBeaker
) -> None:
    """The restart is committed on Beaker, its reply held back, and the runner SIGKILLed before
    it records anything: the intent written ahead makes the next run count that restart, so
    `max_restarts: 1` still means one restart on Beaker."""
    name, runner = _restarting(one_restart, fake_beaker, held=10)
    try:
        wait_for(lambda: fake_beaker.restarts(name) == 1, "the restart to be committed")
    finally:
        runner.send_signal(signal.SIGKILL)
        runner.wait()
    killed = _entries(one_restart)[name]
    assert killed.restarts == 0 and killed.restarting  # only the intent was written
    fake_beaker.set_job_status(name, "failed")  # the restarted job fails too

    for _ in range(2):
        assert _run(one_restart, "submit", "--backend", "beaker", "--restart-failed") == 0
    assert fake_beaker.restarts(name) == 1  # counted once, never sent again
    entry = _entries(one_restart)[name]
    assert entry.restarts == 1 and not entry.restarting


@pytest.mark.slow
def test_a_runner_killed_between_a_cancel_and_its_record_has_it_recorded_next_run(
    repo: Path, fake_beaker: FakeBeaker
) -> None:
    """Killed after Beaker canceled everything, before the ledger said so: the next `cancel`
    records what the interrupted one did, so `--restart-failed` leaves the points alone."""
    assert _run(repo, "submit", "--backend", "beaker") == 0
    names = _names(repo)
    fake_beaker.hold_reply("CancelWorkloads", 10)
    runner = _process(repo, "cancel", "sweeps/exact.yaml", "--backend", "beaker", "--yes")
    try:
        canceled = lambda: all(fake_beaker.experiment(n).status == "canceled" for n in names)  # noqa: E731
        wait_for(canceled, "the cancel to be committed")
    finally:
        runner.send_signal(signal.SIGKILL)
        runner.wait()
    assert not any(e.canceled_at for e in _entries(repo).values())

    assert _run(repo, "cancel", "sweeps/exact.yaml", "--backend", "beaker", "--yes") == 0
    entries = _entries(repo)
    assert all(entries[n].canceled_at and not entries[n].canceling for n in names)
    assert _run(repo, "submit", "--backend", "beaker", "--restart-failed") == 0
    assert all(fake_beaker.restarts(n) == 0 for n in names)


def test_a_broken_ledger_of_one_sweep_does_not_stop_logs_of_another(
    repo: Path, fake_beaker: FakeBeaker, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _run(repo, "submit", "--backend", "beaker") == 0
    name = _names(repo)[0]
    write_manifest(repo, SWEEP.replace("name: exact", "name: other"), "other.yaml")
    broken = ledger.ledger_path(repo, "other")
    broken.write_text("this is not a ledger\n", encoding="utf-8")
    fake_beaker.set_job_status(name, "running")
    fake_beaker.set_logs(name, ["step 1\n"])
    capsys.readouterr()

    assert _run(repo, "logs", name, "--backend", "beaker") == 0
    out = capsys.readouterr()
    assert out.out == "step 1\n"
    assert "warning: left out: " in out.err and "other.jsonl:1" in out.err


@pytest.mark.slow
def test_a_second_runner_restarting_the_same_point_sees_the_first_ones_restart(
    one_restart: Path, fake_beaker: FakeBeaker
) -> None:
    """Two runners restart one failed point at once: the first's request is committed (its
    reply still on the way); the second finds its intent and the new jobs, and sends nothing."""
    name, first = _restarting(one_restart, fake_beaker, held=2)
    try:
        wait_for(lambda: fake_beaker.restarts(name) == 1, "the first restart to be committed")
        assert _run(one_restart, "submit", "--backend", "beaker", "--restart-failed") == 0
    finally:
        assert first.wait(timeout=60) == 0
    assert fake_beaker.restarts(name) == 1 and fake_beaker.calls["RestartExperimentTasks"] == 1
    entry = _entries(one_restart)[name]
    assert entry.restarts == 1 and not entry.restarting


def test_status_resolves_the_organization_once_however_many_points_failed(
    repo: Path, fake_beaker: FakeBeaker, capsys: pytest.CaptureFixture[str]
) -> None:
    """beaker-py's get_latest_job resolves the organization by name on every call: one extra
    RPC per failed point. The runner resolves each organization once per run."""
    assert _run(repo, "submit", "--backend", "beaker") == 0
    names = _names(repo)
    fake_beaker.reset_calls()
    assert _run(repo, "status", "--backend", "beaker") == 0  # nothing failed: no job looked up
    baseline = fake_beaker.calls["ResolveOrganizationName"]
    for name in names:
        fake_beaker.set_job_status(name, "failed", exit_code=2)
    fake_beaker.reset_calls()
    capsys.readouterr()
    assert _run(repo, "status", "--backend", "beaker", "--format", "json") == 0
    points = json.loads(capsys.readouterr().out)["sweeps"][0]["points"]
    assert [p["exit_code"] for p in points] == [2] * len(names)
    assert fake_beaker.calls["ListJobs"] == len(names)
    assert fake_beaker.calls["ResolveOrganizationName"] <= baseline + 1  # not one per point


def test_restart_points_runs_a_canceled_point_again_exactly_once(
    repo: Path, fake_beaker: FakeBeaker, capsys: pytest.CaptureFixture[str]
) -> None:
    """A point canceled with `cancel` is left alone by --restart-failed; `--restart --points`
    names it and runs it again, in place, once under a lost reply, and records it."""
    assert _run(repo, "submit", "--backend", "beaker") == 0
    chosen, other, *_ = _names(repo)
    assert _run(repo, "cancel", "sweeps/exact.yaml", "--points", chosen, other, "--yes") == 0
    assert _run(repo, "submit", "--backend", "beaker", "--restart-failed") == 0
    assert fake_beaker.restarts(chosen) == 0  # canceled on purpose: left alone

    fake_beaker.lose_reply("RestartExperimentTasks")
    fake_beaker.reset_calls()
    capsys.readouterr()
    argv = ["submit", "--backend", "beaker", "--restart", "--points", chosen, "sweeps/exact.yaml"]
    assert _run(repo, *argv) == 0  # docs/commands.md's form: the PATH after the names
    assert fake_beaker.restarts(chosen) == 1 and fake_beaker.calls["RestartExperimentTasks"] == 1
    assert fake_beaker.restarts(other) == 0  # not named
    assert len(fake_beaker.experiments()) == POINTS  # in place
    entry = _entries(repo)[chosen]
    assert entry.restarts == 1 and entry.canceled is None and entry.canceled_at is None
    assert f"restarted exact/{chosen}: canceled -> queued (restarts: 1)" in capsys.readouterr().err

    fake_beaker.set_job_status(chosen, "failed")  # it is a sweep point like any other again
    assert _run(repo, "submit", "--backend", "beaker", "--restart-failed") == 0
    assert fake_beaker.restarts(chosen) == 2

    assert _run(repo, "submit", "--backend", "beaker", "--points", chosen) == 1  # not alone
    assert "--restart and --points go together" in capsys.readouterr().err
    assert _run(repo, "submit", "--backend", "beaker", "--restart", "--points", "nope") == 1
    assert "no point is named 'nope'" in capsys.readouterr().err


def test_restart_points_leaves_a_succeeded_beaker_point_alone(
    repo: Path, fake_beaker: FakeBeaker, capsys: pytest.CaptureFixture[str]
) -> None:
    """Only the local backend reruns a succeeded point (`Capability.RERUNS`): a Beaker restart
    restarts failed tasks, so a succeeded experiment is skipped with the reason."""
    assert _run(repo, "submit", "--backend", "beaker") == 0
    chosen, *_ = _names(repo)
    fake_beaker.set_job_status(chosen, "succeeded")
    capsys.readouterr()
    assert _run(repo, "submit", "--backend", "beaker", "--restart", "--points", chosen) == 0
    assert fake_beaker.restarts(chosen) == 0
    assert "succeeded: only a failed or canceled experiment restarts" in capsys.readouterr().err


def test_a_multi_node_point_reports_the_metrics_of_rank_0_of_its_first_task(
    tmp_path: Path, fake_beaker: FakeBeaker, capsys: pytest.CaptureFixture[str]
) -> None:
    """Replicas as tasks, listed highest rank first: rank 2 also reported metrics. The point's
    metrics are rank 0's, found by the rank on its job, not by the task listed first."""
    write_manifest(tmp_path, MULTI, "multi.yaml")
    assert _run(tmp_path, "submit", "--backend", "beaker") == 0
    [name] = [row.name for row in catalog.load(tmp_path, []).plans()[0].rows]
    fake_beaker.set_job_status(name, "succeeded")
    fake_beaker.set_metrics(name, {"loss": 9.0}, "train", replica=2)
    fake_beaker.set_metrics(name, {"loss": 0.5}, "train", replica=0)
    capsys.readouterr()
    assert _run(tmp_path, "status", "--backend", "beaker", "--format", "json") == 0
    [point] = json.loads(capsys.readouterr().out)["sweeps"][0]["points"]
    assert point["metrics"] == {"loss": 0.5}
