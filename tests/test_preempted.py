"""A point the platform ended, on the fake Beaker over beaker-py's real wire protocols: a plain
`submit` resumes each point Beaker preempted or lost to a node failure, exactly once per
preemption (a lost reply is looked up, a killed runner's intent counted), counted as
`preemptions` and never as a restart or a failure; `--restart-failed` leaves a timeout and a
preemption alone; `status` says why each point ended; a point Beaker could not schedule stops
the sweep's new points with one line naming what no cluster meets."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from runner import ledger
from runner.apply import ApplyOptions, apply
from runner.backends import ExperimentState
from runner.cli import main
from runner.operate.preempted import ResumeVerdict
from runner.plan import catalog
from tests.background import wait_for
from tests.conftest import PROJECT
from tests.fake_backend import FakeBackend
from tests.fake_beaker.cancelations import TEXTS
from tests.fake_beaker.server import FakeBeaker
from tests.helpers import SWEEP, Quiet, write_manifest

PREEMPTIBLE = SWEEP.replace(
    "  clusters: [ai2/test-cluster]\n",
    "  clusters: [ai2/test-cluster]\n  timeout: 2h\n  auto_resume: false\n",
)
"""The six-point sweep, each point's task with a 2-hour timeout and not resumed by Beaker."""
assert "auto_resume: false" in PREEMPTIBLE


def _run(root: Path, *args: str) -> int:
    return main(["-C", str(root), *args])


def _names(root: Path, sweep: str = "exact") -> list[str]:
    [plan] = [p for p in catalog.load(root, []).plans() if p.sweep.name == sweep]
    return [row.name for row in plan.rows]


def _entries(root: Path, sweep: str = "exact") -> dict[str, ledger.Entry]:
    read = ledger.read(ledger.ledger_path(root, sweep), sweep)
    return {e.experiment: e for e in read.entries.values()}


def _status(root: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, dict[str, object]]:
    capsys.readouterr()
    assert _run(root, "status", "--backend", "beaker", "--format", "json") == 0
    [sweep] = json.loads(capsys.readouterr().out)["sweeps"]
    return {str(p["experiment"]): p for p in sweep["points"]} | {"": {"note": sweep["note"]}}


@pytest.fixture
def six(tmp_path: Path, fake_beaker: FakeBeaker) -> tuple[Path, list[str]]:
    """The six points submitted and running, then: two preempted (one by a higher-priority job
    of the same author), one past its timeout, one failed, one canceled with `cancel`, one
    succeeded. `max_restarts: 1`, `max_failures: 1`."""
    write_manifest(tmp_path, "max_restarts: 1\nmax_failures: 1\n" + PREEMPTIBLE, "exact.yaml")
    assert _run(tmp_path, "submit", "--backend", "beaker") == 0
    names = _names(tmp_path)
    for name in names:
        fake_beaker.set_job_status(name, "running")
    first, second, slow, crash, stopped, fine = names
    fake_beaker.preempt(first)
    fake_beaker.preempt(second, "user_preemption")
    fake_beaker.time_out(slow)
    fake_beaker.set_job_status(crash, "failed", exit_code=3)
    assert _run(tmp_path, "cancel", "sweeps/exact.yaml", "--points", stopped, "--yes") == 0
    fake_beaker.set_job_status(fine, "succeeded")
    return tmp_path, names


def test_status_says_why_each_of_six_points_ended(
    six: tuple[Path, list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    root, (first, second, slow, crash, stopped, fine) = six
    seen = _status(root, capsys)
    ended = {name: seen[name]["ended"] for name in (first, second, slow, crash, stopped, fine)}
    assert {n: e and e["cause"] for n, e in ended.items()} == {  # type: ignore[index]
        first: "preempted",
        second: "preempted",
        slow: "timed-out",
        crash: "failed",
        stopped: "canceled",
        fine: "succeeded",
    }
    assert ended[first] == {
        "cause": "preempted",
        "why": "preempted 1x",
        "text": TEXTS["system_preemption"],
        "timeout": 7200.0,
        "resumes": True,  # pending: the next plain submit resumes it
    }
    assert seen[first]["state"] == "canceled" and seen[first]["preemptions"] == 1
    assert ended[second]["text"] == TEXTS["user_preemption"]  # type: ignore[index]
    assert ended[slow]["why"] == "timed out after its timeout of 2h00m"  # type: ignore[index]
    assert ended[slow]["resumes"] is False  # type: ignore[index]
    assert (ended[crash]["why"], seen[crash]["exit_code"]) == ("exit 3", 3)  # type: ignore[index]
    assert ended[stopped]["why"] == "canceled with `cancel`"  # type: ignore[index]
    assert seen[stopped]["canceled_at"]
    assert ended[fine]["why"] == ""  # type: ignore[index]
    assert all(seen[n]["restarts"] == 0 for n in (first, second, slow, crash, stopped, fine))
    # The failure budget counts the failure and the timeout: never a preemption, nor a cancel.
    assert "stopped: 2 failed (max_failures 1)" in str(seen[""]["note"])

    assert _run(root, "status", "--backend", "beaker") == 0
    table = capsys.readouterr().out
    assert "canceled (preempted 1x, resumed by the next submit)" in table
    assert "canceled (timed out after its timeout of 2h00m)" in table
    assert "canceled (canceled on request)" in table
    assert "6 point(s): 2 preempted, 1 timed-out, 1 failed, 1 canceled, 1 succeeded" in table

    assert _run(root, "report", "--backend", "beaker", "--format", "json") == 0  # the same
    [page] = json.loads(capsys.readouterr().out)["sweeps"]
    reported = {p["experiment"]: p["ended"] for p in page["points"]}
    assert reported == {name: seen[name]["ended"] for name in reported}
    assert _run(root, "report", "--backend", "beaker", "--output", str(root / "page")) == 0
    shown = (root / "page" / "exact.md").read_text(encoding="utf-8")
    assert "canceled (preempted 1x, resumed by the next submit)" in shown


def test_a_plain_submit_resumes_exactly_the_preempted_points_once_each(
    six: tuple[Path, list[str]], fake_beaker: FakeBeaker, capsys: pytest.CaptureFixture[str]
) -> None:
    root, (first, second, slow, crash, stopped, fine) = six
    fake_beaker.lose_reply("RestartExperimentTasks")  # the first resume commits, its reply lost
    fake_beaker.reset_calls()
    capsys.readouterr()

    assert _run(root, "submit", "--backend", "beaker") == 0  # the schedule's: no flag

    restarts = {n: fake_beaker.restarts(n) for n in (first, second, slow, crash, stopped, fine)}
    assert restarts == {first: 1, second: 1, slow: 0, crash: 0, stopped: 0, fine: 0}
    assert fake_beaker.calls["RestartExperimentTasks"] == 2  # looked up, never sent again
    assert {fake_beaker.experiment(n).status for n in (first, second)} == {"queued"}
    entries = _entries(root)
    for name in (first, second):
        assert (entries[name].preemptions, entries[name].restarts) == (1, 0)
        assert not entries[name].resuming
    err = capsys.readouterr().err
    assert f"resumed exact/{first}: preempted ({TEXTS['system_preemption']})" in err
    assert "canceled -> queued (preemptions: 1)" in err
    assert "Resume: 2 resumed" in err

    fake_beaker.reset_calls()
    assert _run(root, "submit", "--backend", "beaker") == 0  # queued again: nothing to do
    assert "RestartExperimentTasks" not in fake_beaker.calls

    # Preempted again, a point is resumed again: a preemption is not one of `max_restarts: 1`.
    for again in range(2, 4):
        fake_beaker.set_job_status(first, "running")
        fake_beaker.preempt(first)
        assert _run(root, "submit", "--backend", "beaker") == 0
        assert fake_beaker.restarts(first) == again
        assert (_entries(root)[first].preemptions, _entries(root)[first].restarts) == (again, 0)
    assert fake_beaker.restarts(second) == 1

    # `--restart-failed` restarts the failure, never the timeout (its line names the timeout).
    capsys.readouterr()
    assert _run(root, "submit", "--backend", "beaker", "--restart-failed") == 0
    assert (fake_beaker.restarts(crash), fake_beaker.restarts(slow)) == (1, 0)
    err = capsys.readouterr().err
    assert (
        f"skipped exact/{slow}: timed out after its timeout of 2h00m: a restart would run into it"
        " again; raise `beaker.timeout`"
    ) in err
    assert _entries(root)[crash].restarts == 1


def test_a_dry_run_says_what_it_would_resume_and_resumes_nothing(
    six: tuple[Path, list[str]], fake_beaker: FakeBeaker, capsys: pytest.CaptureFixture[str]
) -> None:
    root, (first, second, *_) = six
    capsys.readouterr()
    assert _run(root, "submit", "--backend", "beaker", "--dry-run") == 0
    err = capsys.readouterr().err
    assert f"would resume exact/{first}: preempted" in err
    assert f"would resume exact/{second}: preempted" in err
    assert "Resume (dry run, nothing resumed): 2 would resume" in err
    assert fake_beaker.restarts(first) == fake_beaker.restarts(second) == 0
    assert _entries(root)[first].preemptions == 0


def test_beakers_own_resume_is_left_alone_and_counted(
    tmp_path: Path, fake_beaker: FakeBeaker, capsys: pytest.CaptureFixture[str]
) -> None:
    """With `auto_resume` Beaker queues a preempted point again by itself: the runner restarts
    nothing, and counts the preemption in the ledger once a look read it (a fresh process's
    look, the schedule's, reads it once the point has ended)."""
    text = PREEMPTIBLE.replace("auto_resume: false", "auto_resume: true")
    write_manifest(tmp_path, text, "exact.yaml")
    assert _run(tmp_path, "submit", "--backend", "beaker") == 0
    name = _names(tmp_path)[0]
    fake_beaker.set_job_status(name, "running")
    fake_beaker.preempt(name)  # queued again, by Beaker
    assert _run(tmp_path, "submit", "--backend", "beaker") == 0
    assert fake_beaker.restarts(name) == 0
    fake_beaker.set_job_status(name, "failed", exit_code=2)  # its second attempt crashes
    capsys.readouterr()
    assert _run(tmp_path, "submit", "--backend", "beaker") == 0
    assert fake_beaker.restarts(name) == 0
    entry = _entries(tmp_path)[name]
    assert (entry.preemptions, entry.restarts) == (1, 0)  # counted, never restarted
    err = capsys.readouterr().err
    assert f"counted exact/{name}: failed: Beaker resumed it by itself" in err
    seen = _status(tmp_path, capsys)[name]
    assert seen["preemptions"] == 1 and seen["ended"]["cause"] == "failed"  # type: ignore[index]
    assert _run(tmp_path, "submit", "--backend", "beaker") == 0
    assert "counted" not in capsys.readouterr().err  # once


def test_max_preemptions_leaves_a_point_as_it_is_and_says_why(
    tmp_path: Path, fake_beaker: FakeBeaker, capsys: pytest.CaptureFixture[str]
) -> None:
    write_manifest(tmp_path, "max_preemptions: 1\n" + PREEMPTIBLE, "exact.yaml")
    assert _run(tmp_path, "submit", "--backend", "beaker") == 0
    name = _names(tmp_path)[0]
    for _ in range(2):
        fake_beaker.set_job_status(name, "running")
        fake_beaker.preempt(name)
        assert _run(tmp_path, "submit", "--backend", "beaker") == 0
    assert fake_beaker.restarts(name) == 1  # the first preemption resumed, the second not
    assert fake_beaker.experiment(name).status == "canceled"
    err = capsys.readouterr().err
    assert f"capped exact/{name}: preempted 2x; max_preemptions 1 reached: left as it is" in err
    seen = _status(tmp_path, capsys)[name]
    assert seen["ended"]["resumes"] is False  # type: ignore[index]
    assert _run(tmp_path, "status", "--backend", "beaker") == 0
    assert "canceled (preempted 2x, max_preemptions reached)" in capsys.readouterr().out
    # A person's `--restart-failed` leaves it too; naming it runs it again (as a restart).
    assert _run(tmp_path, "submit", "--backend", "beaker", "--restart-failed") == 0
    assert fake_beaker.restarts(name) == 1
    assert _run(tmp_path, "submit", "--backend", "beaker", "--restart", "--points", name) == 0
    assert fake_beaker.restarts(name) == 2 and _entries(tmp_path)[name].restarts == 1


def test_preemptions_do_not_spend_the_failure_budget_of_a_capped_sweep(
    tmp_path: Path, fake_beaker: FakeBeaker
) -> None:
    """`max_failures: 1`, `max_running: 2`: both points running are preempted, lose their node
    and are resumed (each holding its slot again); the sweep is not stopped: once they succeed,
    the next submit creates the next two points."""
    text = "max_failures: 1\nmax_running: 2\n" + PREEMPTIBLE
    write_manifest(tmp_path, text, "exact.yaml")
    assert _run(tmp_path, "submit", "--backend", "beaker") == 0
    first, second, third, fourth, *_ = _names(tmp_path)
    assert set(fake_beaker.count_by_name()) == {first, second}
    for name in (first, second):
        fake_beaker.set_job_status(name, "running")
    fake_beaker.preempt(first)
    fake_beaker.fail_node(second, "node_unhealthy")
    assert _run(tmp_path, "submit", "--backend", "beaker") == 0
    assert fake_beaker.restarts(first) == fake_beaker.restarts(second) == 1
    assert set(fake_beaker.count_by_name()) == {first, second}  # the slots are theirs again
    entries = _entries(tmp_path)
    assert entries[first].preemptions == entries[second].preemptions == 1
    for name in (first, second):
        fake_beaker.set_job_status(name, "succeeded")
    assert _run(tmp_path, "submit", "--backend", "beaker") == 0
    assert set(fake_beaker.count_by_name()) == {first, second, third, fourth}


def test_a_point_that_could_not_be_scheduled_stops_the_next_submit_in_one_line(
    tmp_path: Path, fake_beaker: FakeBeaker, capsys: pytest.CaptureFixture[str]
) -> None:
    text = "max_running: 1\n" + PREEMPTIBLE.replace(
        "  timeout: 2h\n", "  timeout: 2h\n  priority: high\n"
    )
    write_manifest(tmp_path, text, "exact.yaml")
    assert _run(tmp_path, "submit", "--backend", "beaker") == 0
    first = _names(tmp_path)[0]
    why = "no cluster has 8 GPUs of this type free at priority high"
    fake_beaker.cannot_schedule(first, why)
    capsys.readouterr()

    assert _run(tmp_path, "submit", "--backend", "beaker") == 0  # a stop, not a failure
    out = capsys.readouterr()
    assert len(fake_beaker.count_by_name()) == 1  # the next point was not created
    assert "Traceback" not in out.err
    line = next(line for line in out.err.splitlines() if "could not be scheduled" in line)
    assert line.startswith(f"exact: stopped: {first} could not be scheduled (Beaker: {why})")
    assert "cluster ai2/test-cluster, priority high" in line
    assert line.endswith("no new points are created (none is canceled)")
    assert fake_beaker.restarts(first) == 0  # neither resumed nor restarted
    seen = _status(tmp_path, capsys)
    assert seen[first]["ended"]["why"] == f"could not be scheduled: {why}"  # type: ignore[index]
    assert "could not be scheduled" in str(seen[""]["note"])


@pytest.mark.slow
def test_a_runner_killed_between_a_resume_and_its_record_has_it_counted_not_resent(
    tmp_path: Path, fake_beaker: FakeBeaker
) -> None:
    """The resume is committed on Beaker, its reply held back, and the runner SIGKILLed before
    it records anything: the intent written ahead makes the next submit count that resume, and
    never send it again."""
    write_manifest(tmp_path, PREEMPTIBLE, "exact.yaml")
    assert _run(tmp_path, "submit", "--backend", "beaker") == 0
    name = _names(tmp_path)[0]
    fake_beaker.set_job_status(name, "running")
    fake_beaker.preempt(name)
    fake_beaker.hold_reply("RestartExperimentTasks", 10)
    argv = [sys.executable, "-m", "runner", "-C", str(tmp_path), "submit", "--backend", "beaker"]
    runner = subprocess.Popen(argv, cwd=PROJECT, env=dict(os.environ), text=True)
    try:
        wait_for(lambda: fake_beaker.restarts(name) == 1, "the resume to be committed")
    finally:
        runner.send_signal(signal.SIGKILL)
        runner.wait()
    killed = _entries(tmp_path)[name]
    assert killed.preemptions == 0 and killed.resuming  # only the intent was written

    for _ in range(2):
        assert _run(tmp_path, "submit", "--backend", "beaker") == 0
    assert fake_beaker.restarts(name) == 1  # counted once, never sent again
    entry = _entries(tmp_path)[name]
    assert (entry.preemptions, entry.restarts, entry.resuming) == (1, 0, "")


def test_a_resume_waits_for_a_max_running_slot_and_goes_before_new_points(
    tmp_path: Path,
) -> None:
    """On the fake at the port: the sweep's slots are held (one by an experiment of a point the
    ledger has not recorded yet), so the preempted point waits, and says so; once one frees, the
    next submit resumes it before it creates a new point."""
    write_manifest(tmp_path, "max_running: 2\n" + PREEMPTIBLE, "exact.yaml")
    backend = FakeBackend()
    plans = lambda: catalog.load(tmp_path, ()).plans()  # noqa: E731
    assert apply(plans(), backend, ApplyOptions(tmp_path), Quiet()).exit_code == 0
    first, second, third, *_ = _names(tmp_path)
    assert set(backend.made) == {first, second}
    backend.preempt(first)
    (plan,) = plans()
    point = next(r.rendered for r in plan.rows if r.name == third)
    assert point is not None
    backend.create(plan.sweep, point)  # someone else's run of the third point holds a slot

    applied = apply(plans(), backend, ApplyOptions(tmp_path), Quiet())
    assert [(r.name, r.verdict) for r in applied.resumes] == [(first, ResumeVerdict.WAITING)]
    assert applied.resumes[0].detail == "waiting: max_running 2 (2 queued or running)"
    assert backend.restarted[first] == 0 and applied.outcomes == ()  # nothing created

    backend.end(second, ExperimentState.SUCCEEDED)
    applied = apply(plans(), backend, ApplyOptions(tmp_path), Quiet())
    assert [(r.name, r.verdict) for r in applied.resumes] == [(first, ResumeVerdict.RESUMED)]
    assert backend.restarted[first] == 1
    assert len(backend.made) == 3  # the freed slot went to the resume, not a new point
