"""The GitOps loop end to end, on real git and the fake Beaker: plan on a PR, submit on merge.

Each test runs the very commands the workflows run (.github/workflows/plan.yml and submit.yml)
in a clone that plays the CI checkout, with GitHub's environment variables set.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from runner import ledger
from runner.cli import main
from runner.commands.gitops import read_pins
from runner.core.errors import RunnerError
from runner.core.retry import RetryPolicy
from runner.plan import COMMENT_MARKER
from runner.repo import review
from runner.repo.gitrepo import push
from tests.conftest import PROJECT
from tests.fake_beaker.server import FakeBeaker
from tests.gitworld import (
    World,
    commit_all,
    git,
    github_env,
    make_world,
    merge_sweep,
    write,
)
from tests.helpers import POINTS, SWEEP

LEDGER = "sweeps/ledger/exact.jsonl"
SUBMIT = ["submit", "--commit", "--push", "--github-event"]
PUSH_EVENT = {"ref": "refs/heads/main"}


@pytest.fixture
def world(tmp_path: Path) -> World:
    return make_world(tmp_path)


@pytest.fixture
def sleeps(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """Backoff between push attempts, recorded instead of slept."""
    waits: list[float] = []
    monkeypatch.setattr(
        push,
        "PUSH_POLICY",
        RetryPolicy(attempts=6, initial_wait=2.0, max_wait=30.0, sleep=waits.append),
    )
    return waits


def origin_ledger(world: World) -> ledger.Ledger:
    return ledger.parse(world.show(LEDGER), LEDGER, "exact")


def assert_recorded_once(world: World, fake: FakeBeaker) -> None:
    """One experiment per point on Beaker, one ledger entry per point on origin/main."""
    counts = fake.count_by_name()
    assert len(counts) == POINTS and set(counts.values()) == {1}, counts
    entries = origin_ledger(world).entries.values()
    assert sorted(e.experiment for e in entries) == sorted(counts)
    assert {e.id for e in entries} == {x.id for x in fake.experiments()}
    assert all(e.url.endswith(e.id) for e in entries)
    assert len(world.show(LEDGER).splitlines()) == POINTS + 1


def test_merge_submits_each_point_once_and_commits_the_urls_back(
    world: World, fake_beaker: FakeBeaker, monkeypatch: pytest.MonkeyPatch, sleeps: list[float]
) -> None:
    merge = merge_sweep(world)
    ci = world.ci_checkout("ci")
    summary, output = github_env(monkeypatch, world.tmp / "gh", "push", PUSH_EVENT)

    assert main(["-C", str(ci), *SUBMIT]) == 0

    assert_recorded_once(world, fake_beaker)  # the shipped examples are drafts: not submitted
    assert world.message() == "Record 6 Beaker experiments for exact (6) [skip ci]"
    assert world.files_changed() == [LEDGER]
    assert world.head("main^") == merge and sleeps == []
    urls = [e.url for e in origin_ledger(world).entries.values()]
    assert all(url in summary.read_text() for url in urls)
    assert f"commit={world.head()}" in output.read_text()


def test_rerun_on_an_unchanged_main_submits_nothing_and_commits_nothing(
    world: World, fake_beaker: FakeBeaker, monkeypatch: pytest.MonkeyPatch
) -> None:
    merge_sweep(world)
    github_env(monkeypatch, world.tmp / "gh", "push", PUSH_EVENT)
    assert main(["-C", str(world.ci_checkout("ci-1")), *SUBMIT]) == 0
    before = world.head()
    fake_beaker.reset_calls()
    ci = world.ci_checkout("ci-2")
    assert main(["-C", str(ci), *SUBMIT]) == 0
    assert fake_beaker.calls.get("http:create", 0) == 0
    assert world.head() == before == git(ci, "rev-parse", "HEAD")


def test_a_push_in_between_is_replayed_on_top_and_nothing_is_lost(
    world: World,
    fake_beaker: FakeBeaker,
    monkeypatch: pytest.MonkeyPatch,
    sleeps: list[float],
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    merge_sweep(world)
    ci = world.ci_checkout("ci")  # checked out before the other push: its push is rejected
    person = world.clone("person")
    write(person, "NOTES.md", "A person pushed this while the sweep was being submitted.\n")
    theirs = commit_all(person, "Notes")
    git(person, "push", "--quiet", "origin", "main")
    github_env(monkeypatch, world.tmp / "gh", "push", PUSH_EVENT)

    assert main(["-C", str(ci), *SUBMIT]) == 0

    assert len(sleeps) == 1  # one rejected push, one backoff, then success
    # Said as what happened, not as git's "error: failed to push some refs".
    assert "origin moved, merged and pushed again" in capsys.readouterr().err
    assert "failed to push" not in caplog.text
    assert world.head("main^") == theirs  # on top of their commit: no merge, no force
    assert "A person pushed this" in world.show("NOTES.md")
    assert world.files_changed() == [LEDGER] and "[skip ci]" in world.message()
    assert_recorded_once(world, fake_beaker)


def _submit_process(checkout: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "runner", "-C", str(checkout), "submit", "--commit", "--push"],
        cwd=PROJECT,
        env=dict(os.environ),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.mark.slow
def test_two_submit_runs_at_once_leave_one_experiment_and_one_entry_per_point(
    world: World, fake_beaker: FakeBeaker, monkeypatch: pytest.MonkeyPatch
) -> None:
    merge_sweep(world)
    checkouts = [world.ci_checkout(f"ci-{i}") for i in range(2)]
    monkeypatch.setenv("CI", "true")
    fake_beaker.latency = 0.05
    procs = [_submit_process(c) for c in checkouts]
    results = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], results
    assert_recorded_once(world, fake_beaker)
    ledger_commits = git(world.origin, "log", "--format=%s", "main", "--", LEDGER).splitlines()
    assert 1 <= len(ledger_commits) <= 2 and all("[skip ci]" in s for s in ledger_commits)


def test_a_ledger_commit_that_never_landed_is_rebuilt_by_the_next_run(
    world: World, fake_beaker: FakeBeaker, monkeypatch: pytest.MonkeyPatch, sleeps: list[float]
) -> None:
    merge_sweep(world)
    hook = world.origin / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\necho 'protected branch hook declined' >&2\nexit 1\n")
    hook.chmod(0o755)
    github_env(monkeypatch, world.tmp / "gh", "push", PUSH_EVENT)
    merged = world.head()

    assert main(["-C", str(world.ci_checkout("ci-1")), *SUBMIT]) == 1
    assert len(fake_beaker.count_by_name()) == POINTS and world.head() == merged
    assert sleeps == []  # a refusal is not a race: no retry

    hook.unlink()
    fake_beaker.reset_calls()
    assert main(["-C", str(world.ci_checkout("ci-2")), *SUBMIT]) == 0
    assert fake_beaker.calls.get("http:create", 0) == 0  # adopted by name, not created again
    assert_recorded_once(world, fake_beaker)


def test_plan_on_a_pr_branch_shows_new_points_then_drift_and_orphans(
    world: World, fake_beaker: FakeBeaker, monkeypatch: pytest.MonkeyPatch
) -> None:
    dev = world.clone("dev")
    git(dev, "checkout", "--quiet", "-b", "add-exact")
    write(dev, "sweeps/exact.yaml", SWEEP)
    commit_all(dev, "Add the exact sweep")
    summary, _ = github_env(monkeypatch, world.tmp / "gh-pr", "pull_request", {"number": 1})
    comment = world.tmp / "plan.md"

    assert main(["-C", str(dev), "plan-comment", "--output", str(comment)]) == 0
    text = comment.read_text()
    assert text.startswith(COMMENT_MARKER) and summary.read_text() == text
    assert "Plan: 6 to submit, 0 already submitted, 0 drifted, 0 orphaned\n" in text
    examples = len(list((PROJECT / "sweeps").glob("*.yaml")))  # all shipped as drafts
    assert text.count("draft: never submitted to Beaker") == examples

    merge_sweep(world)
    github_env(monkeypatch, world.tmp / "gh", "push", PUSH_EVENT)
    assert main(["-C", str(world.ci_checkout("ci")), *SUBMIT]) == 0

    git(dev, "checkout", "--quiet", "main")
    git(dev, "pull", "--quiet", "--ff-only", "origin", "main")
    git(dev, "checkout", "--quiet", "-b", "edit-exact")
    edited = SWEEP.replace("0.001]", "0.0003]").replace("org/image", "org/image-v2")
    write(dev, "sweeps/exact.yaml", edited)
    commit_all(dev, "Edit the exact sweep")
    github_env(monkeypatch, world.tmp / "gh-pr2", "pull_request", {"number": 2})

    assert main(["-C", str(dev), "plan-comment", "--output", str(comment)]) == 0
    text = comment.read_text()
    assert "Plan: 2 to submit, 0 already submitted, 4 drifted, 2 orphaned\n" in text
    exact = text[text.index("### `exact`") :].split("###")[1]
    assert [exact.count(f"| `{s}` |") for s in "+~-="] == [2, 4, 2, 0]


def test_submit_refuses_manifests_that_differ_from_head_before_creating_anything(
    world: World,
    fake_beaker: FakeBeaker,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    merge_sweep(world)
    ci = world.ci_checkout("ci")
    write(ci, "sweeps/exact.yaml", SWEEP.replace("seed: [1, 2]", "seed: [1, 2, 3]"))
    github_env(monkeypatch, world.tmp / "gh", "push", PUSH_EVENT)
    assert main(["-C", str(ci), *SUBMIT]) == 1
    assert "sweeps/exact.yaml" in capsys.readouterr().err
    assert fake_beaker.count_by_name() == {}


def test_commit_takes_only_the_ledgers_and_leaves_other_work_alone(
    world: World, fake_beaker: FakeBeaker
) -> None:
    merge_sweep(world)
    clone = world.clone("laptop")
    write(clone, "scratch.txt", "untracked\n")
    write(clone, "README.md", "edited, not staged\n")
    write(clone, "staged.txt", "staged\n")
    git(clone, "add", "staged.txt")
    assert main(["-C", str(clone), "submit", "--commit"]) == 0
    assert git(clone, "show", "--name-only", "--format=", "HEAD").splitlines() == [LEDGER]
    status = git(clone, "status", "--porcelain").splitlines()
    assert sorted(status) == [" M README.md", "?? scratch.txt", "A  staged.txt"]


def test_a_github_rerun_from_the_original_sha_rewrites_nothing_and_pushes_nothing(
    world: World, fake_beaker: FakeBeaker, monkeypatch: pytest.MonkeyPatch, sleeps: list[float]
) -> None:
    merged = merge_sweep(world)
    github_env(monkeypatch, world.tmp / "gh", "push", PUSH_EVENT)
    assert main(["-C", str(world.ci_checkout("ci-1")), *SUBMIT]) == 0
    recorded, head = world.show(LEDGER), world.head()
    rerun = world.clone("ci-rerun")  # "Re-run jobs" checks out the original SHA again,
    git(rerun, "reset", "--quiet", "--hard", merged)  # now behind the ledger commit
    fake_beaker.reset_calls()

    assert main(["-C", str(rerun), *SUBMIT]) == 0  # adopts every point

    assert fake_beaker.calls.get("http:create", 0) == 0
    assert world.head() == head and world.show(LEDGER) == recorded  # no commit, no rewrite


def test_read_pins_reads_the_reviewed_file_and_says_when_it_cannot(tmp_path: Path) -> None:
    """`submit --reviewed FILE`: the pins the reviewed job wrote, or one line naming the file."""
    pins = [review.Pin("exact", 6, "0" * 64, frozenset())]
    written = tmp_path / "reviewed.txt"
    written.write_text(review.pin_lines(pins), encoding="utf-8")
    assert read_pins(written) == pins
    with pytest.raises(RunnerError, match=r"cannot read the reviewed plans at .*missing\.txt"):
        read_pins(tmp_path / "missing.txt")
