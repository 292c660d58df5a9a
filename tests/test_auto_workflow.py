"""An automatic search (`advance: auto`) in the workflows, run step by step (tests/actions.py)
against the fake Beaker and the stand-in GitHub: merged once, it reaches its last rung through
scheduled Submit runs alone, each rung one commit on main (its lock and its ledger); a rung past
its envelope is left to a pull request that Propose opens, and a reviewed edit of the envelope
lets the schedule go on. The envelope's approval outlives the recent merges' window: the reviewed
job finds the pull request that last changed the manifest."""

from __future__ import annotations

import json

import pytest

from runner.repo.github import RECENT_PULLS
from tests.github_world import GitHub, needs_node, succeeded
from tests.gitworld import git
from tests.helpers import halving

pytestmark = [pytest.mark.slow, needs_node]

AUTO = halving() + "advance: auto\n"
LOSS = [0.9, 0.4, 0.7, 0.5, 0.8, 0.45, 0.6, 0.3, 0.35]
"""Each rung-0 point's loss, in the order the fake Beaker made them."""


def _finish(github: GitHub, rung: int, base: float = 0.0) -> None:
    """Every point of `rung` succeeds; rung 0's with LOSS, later ones ranked by their order."""
    for i, exp in enumerate(github.beaker.experiments()):
        if f"--steps={100 * 3**rung}" not in exp.spec["tasks"][0]["command"]:
            continue
        github.beaker.set_job_status(exp.id, "succeeded")
        loss = LOSS[i] if rung == 0 else base + i / 100
        github.beaker.set_metrics(exp.id, {"loss": loss})


def _log(github: GitHub) -> list[str]:
    """main's commit subjects, newest first."""
    return git(github.world.origin, "log", "--format=%s", "main").splitlines()


def _changed(github: GitHub, rev: str = "main") -> set[str]:
    return set(git(github.world.origin, "show", "--name-only", "--format=", rev).splitlines())


def test_a_merged_automatic_halving_reaches_its_last_rung_through_scheduled_runs_alone(
    github: GitHub,
) -> None:
    github.land(1, {"sweeps/halving.yaml": AUTO})
    (comment,) = github.api.bodies(1)
    assert "Automatic search (advance: auto): merging approves its envelope" in comment
    assert " envelope=" in comment  # the pin carries the envelope's digest
    assert len(github.beaker.experiments()) == 9
    merged = len(_log(github))

    for number in range(100, 100 + RECENT_PULLS):  # #1 falls out of the recent merges' window
        github.api.merged(number, f"{number:040x}")
    _finish(github, 0)
    jobs = github.schedule().run()
    succeeded(jobs, "reviewed", "submit")
    assert "#1 (1 sweep(s))" in jobs["reviewed"].summary  # found as its manifest's last change
    assert "approved by its reviewed envelope" in jobs["submit"].log
    assert len(github.beaker.experiments()) == 12
    assert _log(github)[0].startswith(
        "Advance halving: rung 1 inside the reviewed envelope; record 3 Beaker experiments"
    )
    assert _changed(github) == {"sweeps/halving.lock.json", "sweeps/ledger/halving.jsonl"}

    succeeded(github.schedule().run(), "reviewed", "submit")  # rung 1 runs: nothing to commit
    assert len(_log(github)) == merged + 1

    _finish(github, 1)
    succeeded(github.schedule().run(), "reviewed", "submit")
    assert len(github.beaker.experiments()) == 13
    assert _log(github)[0].startswith("Advance halving: rung 2 inside the reviewed envelope")
    lock = json.loads(git(github.world.origin, "show", "main:sweeps/halving.lock.json"))
    assert [r["round"] for r in lock["decisions"]["rounds"]] == [1, 2]
    assert [k for k, _ in lock["rungs"]["points"]] == [1, 1, 1, 2]

    _finish(github, 2)
    jobs = github.schedule().run()
    succeeded(jobs, "reviewed", "submit")
    assert "halving complete" in jobs["submit"].log
    assert len(_log(github)) == merged + 2  # each rung one commit, nothing more
    succeeded(github.propose().run(), "propose")  # inside its envelope: no pull request
    assert not [p for p in github.api.pulls.values() if p.get("head_ref")]


def test_a_rung_past_the_envelope_waits_for_a_pull_request_and_an_edited_envelope_goes_on(
    github: GitHub,
) -> None:
    capped = halving() + "advance: {mode: auto, max_gpu_hours: 40}\n"  # rungs 0 and 1: 36
    github.land(1, {"sweeps/halving.yaml": capped})
    _finish(github, 0)
    succeeded(github.schedule().run(), "reviewed", "submit")
    assert len(github.beaker.experiments()) == 12
    before = _log(github)

    _finish(github, 1)
    jobs = github.schedule().run()
    succeeded(jobs, "reviewed", "submit")
    assert "round 2 would leave the envelope: 54 GPU-hours" in jobs["submit"].log
    assert len(github.beaker.experiments()) == 12 and _log(github) == before

    jobs = github.propose().run()  # past the envelope: the rung is a pull request, as in review
    succeeded(jobs, "propose", "pull-requests")
    (pull,) = [p for p in github.api.pulls.values() if p.get("head_ref")]
    assert pull["title"] == "Propose rung 2 of halving (1 point(s), steps=900)"

    raised = capped.replace("max_gpu_hours: 40", "max_gpu_hours: 60")  # a reviewed edit
    github.land(3, {"sweeps/halving.yaml": raised})  # its plan pins the new envelope
    assert len(github.beaker.experiments()) == 13  # the merge's own run advanced it
    assert _log(github)[0].startswith("Advance halving: rung 2 inside the reviewed envelope")
