"""A team's urgent allocation and the workspace's maximum priority, at submit, on the wire fake:
one listing of the workspace's queued and running work, points that would not fit wait (as under
max_running) and later submits create them as GPUs free; an urgent merge into a workspace capped
at `high` is refused before anything is created."""

from __future__ import annotations

import json
from pathlib import Path

import grpc
import pytest

from runner import ledger
from runner.cli import main
from runner.core.errors import Exit
from runner.core.model import Priority
from runner.plan import HoldReason, catalog
from runner.plan.allocation import allot
from runner.plan.policy import Allotment
from tests.fake_beaker.server import FakeBeaker
from tests.gitworld import commit_all, git
from tests.helpers import eight_gpus, write_manifest

URGENT = eight_gpus(
    "urgent",
    "  clusters: [ai2/jupiter]\n  priority: urgent\n  timeout: 4h\n",
    "[0.4, 0.3, 0.2, 0.1]",
)
POLICY = "version: 1\npriority_allocation: {ai2/jupiter: {urgent: 72}}\n"
WORKSPACE = "ai2/sweeps-test"


def _run(root: Path, *args: str) -> int:
    return main(["-C", str(root), *args])


def _names(root: Path) -> list[str]:
    (plan,) = catalog.load(root, []).plans()
    return [row.name for row in plan.rows]


def _team(fake: FakeBeaker, jobs: int = 6, gpus: int = 10) -> list[str]:
    """The team's urgent work already on ai2/jupiter: `jobs` jobs of `gpus` GPUs each."""
    made = [
        fake.run_workload(
            WORKSPACE, f"team-{i}", gpus=gpus, priority="urgent", clusters=["ai2/jupiter"]
        )
        for i in range(jobs)
    ]
    return [m.name for m in made]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    write_manifest(tmp_path, URGENT, "urgent.yaml")
    (tmp_path / "sweeps" / "policy.yaml").write_text(POLICY)
    return tmp_path


def test_with_60_of_72_urgent_gpus_taken_one_point_of_four_is_created_and_three_wait(
    root: Path, fake_beaker: FakeBeaker, capsys: pytest.CaptureFixture[str]
) -> None:
    team = _team(fake_beaker)  # 60 GPUs
    order = _names(root)
    fake_beaker.reset_calls()
    assert _run(root, "submit", "--backend", "beaker") == Exit.OK
    assert list(fake_beaker.count_by_name()) == [*team, order[0]]
    err = capsys.readouterr().err
    assert err.count("waiting: urgent allocation ai2/jupiter: 68 of 72 GPUs in use") >= 3
    assert "3 waiting: urgent allocation ai2/jupiter" in err  # the sweep's summary line
    calls = fake_beaker.calls
    assert calls["ListWorkloads"] >= 2  # the allocation's listing (pages of 5), then the look
    assert calls["GetWorkspace"] == 1  # the maximum priority and the create share it

    assert _run(root, "submit", "--backend", "beaker") == Exit.OK  # nothing freed: nothing new
    assert len(fake_beaker.count_by_name()) == len(team) + 1

    fake_beaker.set_job_status(team[0], "succeeded")  # 50 + 8 of ours: one more fits
    assert _run(root, "submit", "--backend", "beaker") == Exit.OK
    assert [n for n in fake_beaker.count_by_name() if n in order] == order[:2]

    for name in team[1:3]:  # 30 + 16 of ours: both others fit
        fake_beaker.set_job_status(name, "failed")
    assert _run(root, "submit", "--backend", "beaker") == Exit.OK
    assert sorted(n for n in fake_beaker.count_by_name() if n in order) == sorted(order)
    assert set(fake_beaker.count_by_name().values()) == {1}


def test_other_priorities_and_clusters_do_not_count(root: Path, fake_beaker: FakeBeaker) -> None:
    for i, (priority, cluster) in enumerate([("high", "ai2/jupiter"), ("urgent", "ai2/ceres")]):
        fake_beaker.run_workload(
            WORKSPACE, f"other-{i}", gpus=64, priority=priority, clusters=[cluster]
        )
    assert _run(root, "submit", "--backend", "beaker") == Exit.OK
    assert len(fake_beaker.count_by_name()) == 2 + 4


def test_a_point_that_lists_several_clusters_counts_against_each(
    root: Path, fake_beaker: FakeBeaker
) -> None:
    (root / "sweeps" / "policy.yaml").write_text(
        "version: 1\npriority_allocation:\n  ai2/jupiter: {urgent: 72}\n  ai2/ceres: {urgent: 16}\n"
    )
    write_manifest(root, URGENT.replace("[ai2/jupiter]", "[ai2/jupiter, ai2/ceres]"), "urgent.yaml")
    assert _run(root, "submit", "--backend", "beaker") == Exit.OK
    assert len(fake_beaker.count_by_name()) == 2  # ceres's 16 GPUs: two points of 8


def test_an_urgent_merge_into_a_workspace_capped_at_high_creates_nothing(
    root: Path, fake_beaker: FakeBeaker, capsys: pytest.CaptureFixture[str]
) -> None:
    fake_beaker.set_maximum_priority(WORKSPACE, "high")
    summary = root.parent / "summary.json"
    argv = ["submit", "--backend", "beaker", "--summary-json", str(summary)]
    assert _run(root, *argv) == Exit.REJECTED
    err = capsys.readouterr().err.splitlines()
    (line,) = [line for line in err if line.startswith("error:")]
    assert line == err[-1]  # after the plan and the counts: a refusal stops the run, not a crash
    assert line.startswith("error: sweeps/urgent.yaml:7:13: beaker.priority: priority urgent is")
    assert "above the maximum priority of workspace ai2/sweeps-test (high)" in line
    assert line.endswith("ask the workspace's admins: 4 point(s) not submitted")
    assert "submitted: 0 of 4 (0 created, 0 adopted)" in err
    data = json.loads(summary.read_text())
    assert (data["result"], data["exit_code"], data["stopped"]["kind"]) == ("rejected", 4, "policy")
    assert data["counts"] == {"not-started": 4}
    assert fake_beaker.experiments() == [] and fake_beaker.calls["http:create"] == 0
    assert fake_beaker.calls["ListWorkloads"] == 0  # a refused run reads nothing more
    fake_beaker.set_maximum_priority(WORKSPACE, "urgent")
    assert _run(root, "submit", "--backend", "beaker") == Exit.OK


def test_a_restart_is_reported_and_committed_when_the_allocations_listing_then_fails(
    root: Path, fake_beaker: FakeBeaker, capsys: pytest.CaptureFixture[str]
) -> None:
    """The allocation is counted after the restarts (a restarted point takes GPUs again), so
    its listing can fail once a restart is done: the run stops the documented way (exit 5,
    nothing created) and the restart is still reported, recorded and committed."""
    _team(fake_beaker)  # 60 of 72 GPUs: one point is created, three wait
    git(root, "init", "--quiet", "--initial-branch=main")
    git(root, "add", "sweeps")
    commit_all(root, "Add the urgent sweep and the team's allocation")
    assert _run(root, "submit", "--backend", "beaker", "--commit") == Exit.OK
    restarted = _names(root)[0]
    fake_beaker.set_job_status(restarted, "failed")
    fake_beaker.reset_calls()
    # The sweep's look answers (one call), then Beaker stops answering the allocation's listing.
    fake_beaker.fail_rpc("ListWorkloads", grpc.StatusCode.DEADLINE_EXCEEDED, after=1)
    summary = root.parent / "summary.json"
    argv = ["--restart-failed", "--commit", "--summary-json", str(summary)]
    capsys.readouterr()

    assert _run(root, "submit", "--backend", "beaker", *argv) == Exit.INCOMPLETE

    assert fake_beaker.restarts(restarted) == 1 and fake_beaker.calls["ListWorkloads"] == 2
    assert list(fake_beaker.count_by_name()) == [*(f"team-{i}" for i in range(6)), restarted]
    err = capsys.readouterr().err
    assert f"restarted urgent/{restarted}: failed -> queued (restarts: 1)" in err
    assert "list workloads of ai2/sweeps-test: gRPC DEADLINE_EXCEEDED" in err.splitlines()[-1]
    recorded = ledger.read(ledger.ledger_path(root, "urgent"), "urgent").entries.values()
    assert [e.restarts for e in recorded if e.experiment == restarted] == [1]
    committed = git(root, "show", "HEAD:sweeps/ledger/urgent.jsonl")
    assert committed == ledger.ledger_path(root, "urgent").read_text().rstrip("\n")
    assert git(root, "status", "--porcelain", "sweeps") == ""
    data = json.loads(summary.read_text())
    assert (data["result"], data["stopped"]["kind"]) == ("incomplete", "unreachable")


def test_a_dry_run_says_why_it_would_be_refused_or_could_not_count(
    root: Path, fake_beaker: FakeBeaker, capsys: pytest.CaptureFixture[str]
) -> None:
    fake_beaker.set_maximum_priority(WORKSPACE, "high")
    assert _run(root, "submit", "--backend", "beaker", "--dry-run") == Exit.REJECTED
    err = capsys.readouterr().err.splitlines()
    assert err[-1].startswith("error: sweeps/urgent.yaml:7:13: beaker.priority: priority urgent")
    assert err[-1].endswith("ask the workspace's admins")
    fake_beaker.set_maximum_priority(WORKSPACE, "urgent")
    fake_beaker.fail_rpc("ListWorkloads", grpc.StatusCode.DEADLINE_EXCEEDED)
    assert _run(root, "submit", "--backend", "beaker", "--dry-run") == Exit.INCOMPLETE
    err = capsys.readouterr().err.splitlines()
    assert err[-1] == "list workloads of ai2/sweeps-test: gRPC DEADLINE_EXCEEDED"
    assert fake_beaker.experiments() == []


@pytest.mark.slow
@pytest.mark.parametrize("fault", ["unavailable", "lost reply"])
def test_a_listing_retried_after_a_fault_is_counted_once(
    root: Path, fake_beaker: FakeBeaker, fault: str
) -> None:
    """The allocation's listing answered twice (beaker-py lists again after UNAVAILABLE, a
    lost reply too) still counts the team's GPUs once: one point created, three waiting."""
    _team(fake_beaker)  # 60 GPUs, in two pages: the first is answered twice
    if fault == "unavailable":
        fake_beaker.unavailable("ListWorkloads")
    else:
        fake_beaker.lose_reply("ListWorkloads")
    assert _run(root, "submit", "--backend", "beaker") == Exit.OK
    ours = [n for n in fake_beaker.count_by_name() if n.startswith("urgent-")]
    assert len(ours) == 1


def test_allot_holds_what_does_not_fit_in_plan_order_and_frees_it_again(root: Path) -> None:
    (plan,) = catalog.load(root, []).plans()
    rules = [Allotment("ai2/jupiter", Priority.URGENT, 72)]
    used = {("ai2/jupiter", Priority.URGENT): 60}
    held = allot([plan], rules, used)
    assert [r.held_for(HoldReason.ALLOCATION) for r in held.plans[0].rows] == [False] + [True] * 3
    again = allot(held.plans, rules, {("ai2/jupiter", Priority.URGENT): 40})
    assert [r.hold for r in again.plans[0].rows] == [None] * 4  # decided again each run
    assert all(r.pending for r in held.plans[0].rows)  # waiting: pins cover them, cost counts


def test_the_plan_comment_names_the_allocation_a_sweep_counts_against_offline(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = root / "comment.md"
    assert _run(root, "plan-comment", "--output", str(out)) == Exit.OK  # no token, no backend
    text = out.read_text()
    assert "**Priority allocation** (sweeps/policy.yaml)" in text
    assert (
        "`urgent`: 4 point(s), 32 GPUs, count against the allocation urgent on ai2/jupiter" in text
    )


def test_a_bad_allocation_is_one_line_naming_the_policy_field(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (root / "sweeps" / "policy.yaml").write_text(
        "version: 1\npriority_allocation: {ai2/jupiter: {urgnet: 72}}\n"
    )
    assert _run(root, "validate") == Exit.USER_ERROR
    (line,) = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert line.startswith("sweeps/policy.yaml:2:37: priority_allocation.ai2/jupiter.urgnet:")
    assert "unknown field 'urgnet' (did you mean 'urgent'?" in line


WAITED_A_DAY = URGENT.replace("  timeout: 4h\n", "  timeout: 1h30m\n  min_runtime: 1h\n")


@pytest.mark.parametrize(
    ("text", "warned"),
    [
        (WAITED_A_DAY, True),
        (WAITED_A_DAY.replace("min_runtime: 1h", "auto_resume: true"), False),  # preemptible
        (WAITED_A_DAY.replace("timeout: 1h30m", "timeout: 2h"), False),  # not a short job
        (WAITED_A_DAY.replace("priority: urgent", "priority: high"), False),
        (WAITED_A_DAY.replace("min_runtime: 1h", "preemptible: false"), True),
    ],
)
def test_validate_warns_of_a_short_urgent_job_that_is_not_preemptible(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, warned: bool
) -> None:
    write_manifest(tmp_path, text, "urgent.yaml")
    assert _run(tmp_path, "validate") == Exit.OK  # a warning, never a refusal
    lines = capsys.readouterr().err.splitlines()
    said = [line for line in lines if "can wait a day" in line]
    assert bool(said) == warned
    if warned:
        assert said[0].startswith("sweeps/urgent.yaml:9:") and ": warning: an urgent job" in said[0]
