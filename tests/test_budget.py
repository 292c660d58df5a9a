"""The budget policy (runner/plan/policy.py, runner/plan/budget.py, runner/plan/holds.py): its
schema, what breaches it, the approval label, the base branch's copy in force, and holding back unapproved points on merge."""

from __future__ import annotations

import dataclasses
import functools
import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from runner.cli import main
from runner.commands.plan_comment import policy_at
from runner.core.errors import ManifestError
from runner.plan import Held, SweepPlan, budget, holds, policy
from runner.plan.catalog import load
from runner.plan.policy import Policy
from runner.repo import review
from runner.report.comment import budget_markdown
from runner.report.held import held_markdown
from tests.gitworld import commit_all, git
from tests.helpers import write_manifest

GPU = """\
version: 1
name: gpu
beaker:
  workspace: ai2/sweeps-test
  budget: ai2/sweeps-budget
  clusters: [ai2/test-cluster, ai2/jupiter]
  priority: high
  timeout: 24h
tasks:
  - image: {beaker: org/image}
    command: [python, train.py, "--lr={lr}"]
    replicas: 2
    resources: {gpus: 8}
params:
  grid:
    lr: [0.1, 0.01]
"""
POLICY = """\
version: 1
max_gpu_hours_per_sweep: 500
max_gpu_hours_per_merge: 700
max_gpus_per_point: 8
approval_priorities: [urgent, high]
approval_clusters: [ai2/jupiter]
"""


def _plans(root: Path, text: str = GPU, policy_text: str | None = POLICY) -> list[SweepPlan]:
    write_manifest(root, text, "gpu.yaml")
    if policy_text is not None:
        write_manifest(root, policy_text, "policy.yaml")
    return load(root).plans()


def test_each_limit_is_one_breach_on_the_manifest_line_that_causes_it(tmp_path: Path) -> None:
    plans = _plans(tmp_path)
    found = budget.breaches(plans, policy.read(tmp_path))
    # 2 points x 2 replicas x 8 GPUs x 24 h = 768 GPU-hours.
    messages = sorted(b.problem.message for b in found)
    assert messages == [
        "a point of sweep gpu holds 16 GPUs, over max_gpus_per_point 8 (sweeps/policy.yaml)",
        "cluster ai2/jupiter needs approval (sweeps/policy.yaml)",
        "priority high needs approval (sweeps/policy.yaml)",
        "sweep gpu may use 768 GPU-hours, over max_gpu_hours_per_sweep 500 (sweeps/policy.yaml)",
        "this merge may use 768 GPU-hours, over max_gpu_hours_per_merge 700 (sweeps/policy.yaml)",
    ]
    assert len(found) == 5 and {b.sweep for b in found} == {"gpu"}
    by_field = {b.problem.field: b.problem for b in found}
    assert by_field["beaker.timeout"].line == 8 and by_field["beaker.priority"].line == 7
    assert by_field["beaker.clusters[1]"].line == 6
    assert by_field["tasks[0].resources.gpus"].line == 13


def test_expected_runtime_is_what_the_limits_judge_where_declared(tmp_path: Path) -> None:
    text = GPU.replace("  timeout: 24h\n", "  timeout: 24h\n  expected_runtime: 10h\n")
    rules = policy.parse("version: 1\nmax_gpu_hours_per_sweep: 500\n")
    assert budget.breaches(_plans(tmp_path, text, None), rules) == []  # 320 expected
    assert len(budget.breaches(_plans(tmp_path, GPU, None), rules)) == 1  # 768 up to


def test_no_policy_blocks_nothing_and_drafts_are_never_judged(tmp_path: Path) -> None:
    assert budget.breaches(_plans(tmp_path, GPU, None), policy.read(tmp_path)) == []
    draft = GPU.replace("name: gpu", "name: gpu\ndraft: true")
    assert budget.breaches(_plans(tmp_path, draft), policy.read(tmp_path)) == []


@pytest.mark.parametrize(
    ("text", "where"),
    [
        (
            "version: 1\nmax_gpu_hours_per_sweep: lots\n",
            "policy.yaml:2:26: max_gpu_hours_per_sweep",
        ),
        ("version: 1\nmax_gpus: 8\n", "policy.yaml:2:1: max_gpus: unknown field"),
        ("version: 1\napproval_priorities: [soon]\n", "policy.yaml:2:23: approval_priorities[0]"),
        ("version: 2\n", "policy.yaml:1:10: version: must be 1"),
    ],
)
def test_a_bad_policy_is_one_file_line_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, where: str
) -> None:
    _plans(tmp_path, GPU, text)
    assert main(["-C", str(tmp_path), "validate"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"sweeps/{where}"), err
    with pytest.raises(ManifestError):
        policy.read(tmp_path)


def test_the_policy_file_is_not_taken_for_a_manifest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _plans(tmp_path)
    assert [s.name for s in load(tmp_path).sweeps] == ["gpu"]
    assert main(["-C", str(tmp_path), "validate"]) == 0
    assert "1 manifest(s) valid" in capsys.readouterr().err


def test_the_approval_travels_in_the_pins(tmp_path: Path) -> None:
    plans = _plans(tmp_path)
    rules = policy.read(tmp_path)
    verdict = budget.Verdict(rules, tuple(budget.breaches(plans, rules)), approved=True)
    pins = review.parse_pins(review.pin_lines(review.approve_pins(review.pins(plans), verdict)))
    assert [p.approved for p in pins] == [True]
    assert "approved" not in review.pin_lines(review.pins(plans))
    assert review.parse_pins(review.pin_lines(review.pins(plans)))[0].approved is False


def _unapproved(plans: Sequence[SweepPlan], found: Sequence[review.Pin], rules: Policy) -> Held:
    """What a submit with these pins holds back over the budget: the points of its over-budget
    sweeps that no approved pin covers."""
    approved = [p for p in found if p.approved]
    unapproved = functools.partial(review.uncovered, found=approved)
    breached = budget.breaches(plans, rules)
    over = {b.sweep for b in breached}
    return holds.hold_unapproved(plans, over, [str(b.problem) for b in breached], unapproved)


def test_on_merge_over_budget_points_need_an_approved_pin(tmp_path: Path) -> None:
    plans = _plans(tmp_path)
    rules = policy.read(tmp_path)
    unapproved = review.pins(plans)
    held = _unapproved(plans, unapproved, rules)
    assert len(held.held) == 2 and held.plans[0].to_submit == ()
    approved = [dataclasses.replace(p, approved=True) for p in unapproved]
    assert _unapproved(plans, approved, rules).held == ()
    # An approved plan covers the points it showed, not a third one added later: the pins the
    # reviewed job hands on (review.approvals) name the two it approved, a partial set.
    (bigger,) = _plans(tmp_path, GPU.replace("[0.1, 0.01]", "[0.1, 0.01, 0.5]"))
    assert len(_unapproved([bigger], approved, rules).held) == 3  # digest: all or none
    shown = frozenset(review.token(r) for r in plans[0].pending)
    merged = [review.Pin(bigger.sweep.name, 2, review.NO_DIGEST, shown, approved=True)]
    result = _unapproved([bigger], review.approvals([bigger], merged), rules)
    assert [dict(r.params)["lr"] for _, r in result.held] == [0.5]
    assert "Held back: over the budget policy" in held_markdown(result)


def test_a_pull_request_is_judged_by_its_base_branch_policy(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "--quiet", "--initial-branch=main")
    git(repo, "config", "user.email", "t@example.com")
    git(repo, "config", "user.name", "T")
    _plans(repo)
    base = commit_all(repo, "base")
    plans = _plans(repo, GPU, "version: 1\nmax_gpu_hours_per_sweep: 100000\n")  # raised
    verdict = budget.judge(plans, policy_at(repo, base), labels=())
    assert verdict.blocked and len(verdict.breaches) == 5
    assert f"sweeps/policy.yaml@{base}" in verdict.breaches[0].problem.message
    assert budget.judge(plans, policy_at(repo, None), ()).breaches == ()  # the working tree's
    labeled = budget.judge(plans, policy_at(repo, base), ["sweep-budget-approved"])
    assert labeled.approved and not labeled.blocked
    assert "approved** by the label `sweep-budget-approved`" in budget_markdown(labeled)


def test_plan_comment_fails_with_one_annotation_per_breach_and_passes_labeled(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _plans(tmp_path)
    event = tmp_path / "event.json"
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_EVENT_PATH", str(event))
    monkeypatch.setenv("GITHUB_EVENT_NAME", "pull_request")
    logs = {}
    for labels, code in (([], 1), (["other"], 1), (["sweep-budget-approved"], 0)):
        pull = {"pull_request": {"labels": [{"name": n} for n in labels]}}
        event.write_text(json.dumps(pull), encoding="utf-8")
        out = tmp_path / "comment.md"
        assert main(["-C", str(tmp_path), "plan-comment", "--output", str(out)]) == code
        printed = capsys.readouterr().out.splitlines()
        logs[code] = [line for line in printed if line.startswith("::error")]
        assert len(logs[code]) == (5 if code else 0)
        assert ("approved=budget" in out.read_text()) == (code == 0)
    assert (
        "::error file=sweeps/gpu.yaml,line=8,col=12::beaker.timeout: sweep gpu may use 768 GPU-hours"
        in "\n".join(logs[1])
    )


def test_points_waiting_under_max_running_count_toward_the_limits(tmp_path: Path) -> None:
    capped = GPU + "max_running: 1\n"
    rules = policy.parse("version: 1\nmax_gpu_hours_per_sweep: 500\n")
    (plan,) = _plans(tmp_path, capped, None)
    assert len(plan.to_submit) == 1  # the other point waits for the cap
    (breach,) = budget.breaches([plan], rules)
    assert "may use 768 GPU-hours" in breach.problem.message


def test_a_merge_queue_run_shows_the_breaches_without_blocking(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _plans(tmp_path)
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"merge_group": {"head_sha": "abc"}}), encoding="utf-8")
    monkeypatch.setenv("GITHUB_EVENT_PATH", str(event))
    monkeypatch.setenv("GITHUB_EVENT_NAME", "merge_group")
    out = tmp_path / "comment.md"
    assert main(["-C", str(tmp_path), "plan-comment", "--output", str(out)]) == 0
    assert "over the policy" in out.read_text()
