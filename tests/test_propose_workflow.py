"""The Propose workflow run step by step (tests/actions.py) against the fake Beaker and the
stand-in GitHub: one pull request per sweep and round, updated in place by later runs, never a
second one when the reply of its creation is lost, and none once a round's was closed unmerged."""

from __future__ import annotations

import json

import pytest

from runner import ledger
from runner.cli import main
from tests.github_world import GitHub, needs_node, succeeded
from tests.gitworld import git
from tests.helpers import BRANIN_SEARCH, halving, head

pytestmark = [pytest.mark.slow, needs_node]

SEARCH = head("search") + BRANIN_SEARCH


def _round_0_submitted(github: GitHub) -> None:
    """The author proposes round 0 locally (no results needed), opens a pull request with the
    manifest and its lock, and merges it; the points finish with their metric."""
    dev = github.world.clone("author")
    (dev / "sweeps" / "search.yaml").write_text(SEARCH)
    assert main(["-C", str(dev), "propose", "--backend", "local"]) == 0
    lock = (dev / "sweeps" / "search.lock.json").read_text()
    github.land(1, {"sweeps/search.yaml": SEARCH, "sweeps/search.lock.json": lock})
    entries = ledger.read(ledger.ledger_path(github.world.clone("look"), "search"), "search")
    assert len(entries.entries) == 4
    for i, entry in enumerate(sorted(entries.entries.values(), key=lambda e: e.experiment)):
        github.beaker.set_job_status(entry.experiment, "succeeded")
        github.beaker.set_metrics(entry.experiment, {"value": 10.0 + i})


def _round_pulls(github: GitHub) -> list[dict[str, object]]:
    return [
        p
        for p in github.api.pulls.values()
        if str(p.get("head_ref", "")).startswith("sweep-propose/")
    ]


def test_a_finished_round_opens_one_pull_request_and_a_rerun_updates_it(github: GitHub) -> None:
    _round_0_submitted(github)
    jobs = github.propose().run()
    succeeded(jobs, "propose", "pull-requests")
    assert any("requirements-adaptive.txt" in " ".join(call) for call in jobs["propose"].pip)
    (pull,) = _round_pulls(github)
    branch = str(pull["head_ref"])
    assert branch.startswith("sweep-propose/search-") and branch.endswith("-round-1")
    assert pull["title"] == "Propose round 1 of search (4 point(s))"
    body = str(pull["body"])
    assert "Best so far: value 10 at" in body
    # the round before, each point with its result, for the reviewer
    results = body.split("Results of round 0:\n\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert results[0] == "| x1 | x2 | value |" and len(results) == 2 + 4
    assert sorted(float(r.rsplit("|", 2)[1]) for r in results[2:]) == [10.0, 11.0, 12.0, 13.0]
    assert "Proposed in round 1:" in body
    lock = json.loads(git(github.world.origin, "show", f"{branch}:sweeps/search.lock.json"))
    assert lock["rounds"] == [0] * 4 + [1] * 4
    head = git(github.world.origin, "rev-parse", branch)

    succeeded(github.propose().run(), "propose", "pull-requests")  # same results: the same round
    assert len(_round_pulls(github)) == 1  # updated in place, not a second one
    assert git(github.world.origin, "rev-parse", branch) == head  # nothing new to push


def test_a_lost_reply_never_opens_a_second_pull_request_and_closing_one_stops_the_search(
    github: GitHub,
) -> None:
    _round_0_submitted(github)
    github.api.lose_pull_creates = 1
    jobs = github.propose().run()
    assert jobs["pull-requests"].outcome == "failure"  # the reply was lost: the job says so
    assert len(_round_pulls(github)) == 1  # but the pull request exists
    succeeded(github.propose().run(), "propose", "pull-requests")
    (pull,) = _round_pulls(github)  # found and updated, not made again

    pull["state"] = "closed"  # closed unmerged: the search stops
    jobs = github.propose().run()
    succeeded(jobs, "propose", "pull-requests")
    assert len(_round_pulls(github)) == 1
    assert "was closed unmerged, so this search is stopped" in jobs["pull-requests"].log
    succeeded(
        github.propose(dispatch=True).run(), "propose", "pull-requests"
    )  # dispatched: on again
    assert [p["state"] for p in _round_pulls(github)] == ["closed", "open"]


def test_a_finished_rung_opens_its_pull_request_with_the_rung_table(github: GitHub) -> None:
    """A successive halving (a grid with `params.fidelity`, no lock yet): rung 0 lands with
    the manifest; once its points finish, Propose opens the rung's pull request."""
    text = halving("halving")
    github.land(1, {"sweeps/halving.yaml": text})
    entries = ledger.read(ledger.ledger_path(github.world.clone("look"), "halving"), "halving")
    assert len(entries.entries) == 9  # rung 0: every configuration at 100 steps
    for i, entry in enumerate(sorted(entries.entries.values(), key=lambda e: e.experiment)):
        github.beaker.set_job_status(entry.experiment, "succeeded")
        github.beaker.set_metrics(entry.experiment, {"loss": 1.0 + i / 10})
    succeeded(github.propose().run(), "propose", "pull-requests")
    (pull,) = _round_pulls(github)
    assert pull["title"] == "Propose rung 1 of halving (3 point(s), steps=300)"
    assert str(pull["head_ref"]).endswith("-rung-1")
    body = str(pull["body"])
    table = body.split("Rung 0 (steps=100):\n\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert table[0] == "| rank | experiment | lr | wd | loss | promoted |" and len(table) == 11
    assert [row.rsplit("|", 3)[1:3] for row in table[2:]] == [
        [f" {1.0 + i / 10:g} ", " **yes** " if i < 3 else " no "] for i in range(9)
    ]
    assert "The cut-off: the top 3 of 9 go on" in body and "the last of them has loss 1.2" in body
    assert "Rung 1 (steps=300): 3 point(s), 18 GPU-hours expected in all:" in body
    branch = str(pull["head_ref"])
    lock = json.loads(git(github.world.origin, "show", f"{branch}:sweeps/halving.lock.json"))
    assert [k for k, _ in lock["rungs"]["points"]] == [1, 1, 1]
