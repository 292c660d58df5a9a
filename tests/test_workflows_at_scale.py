"""The workflows at the size where GitHub's limits bite (tests/actions.py runs them step by step).

One pull request adds 60 sweeps of 96 points (5 760 points): its plan comment must fit in
GitHub's 65 536 characters (the stand-in refuses more with GitHub's 422), its Plan job must
succeed, and its merge must create every point, none held back, with a reviewed job whose
GitHub calls do not grow with the files under sweeps/. A sweep whose file is over 1 MB (which
GitHub's contents API returns empty) is reviewed like any other.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
import yaml

from runner.plan import COMMENT_MARKER
from tests.conftest import PROJECT
from tests.github_world import GitHub, needs_node, succeeded
from tests.gitworld import git
from tests.helpers import head

pytestmark = [pytest.mark.slow, needs_node]

SWEEPS, POINTS = 60, 96
TASK = """\
    command: [python, train.py, "--lr={{lr}}", "--wd={{wd}}", "--seed={{seed}}", "--family={i}"]
params:
  grid:
    lr: [0.1, 0.03, 0.01, 0.003]
    wd: [0.0, 0.1, 0.01, 0.001]
    seed: [1, 2, 3, 4, 5, 6]
"""


def _manifest(i: int) -> str:
    return head(f"family-{i:02}") + TASK.format(i=i)


def _family(count: int) -> dict[str, str]:
    return {f"sweeps/family-{i:02}.yaml": _manifest(i) for i in range(count)}


def test_a_merge_of_5760_points_is_planned_in_one_comment_and_submitted_whole(
    github: GitHub,
) -> None:
    started = time.monotonic()
    jobs = github.plan(1, github.open_pull(1, _family(SWEEPS))).run()
    planned = time.monotonic() - started
    succeeded(jobs, "plan")
    (body,) = github.api.bodies(1)
    assert len(body) <= 65_536 and "The plan failed" not in body
    assert body.startswith(f"{COMMENT_MARKER}\n## Sweep plan\n\n**{SWEEPS * POINTS}** to submit,")
    assert body.count("beaker-sweep-runner:reviewed sweep=") == SWEEPS  # one pin line a sweep
    assert "`sweep-plan` artifact" in body  # the tables are cut: where the rest is
    whole = json.loads((jobs["plan"].artifacts["sweep-plan"] / "sweep-plan.json").read_text())
    family = [s for s in whole["sweeps"] if s["name"].startswith("family-")]
    assert sum(len(s["points"]) for s in family) == SWEEPS * POINTS
    assert jobs["plan"].summary.count("| `+` ") == SWEEPS * POINTS  # every point

    calls = len(github.api.requests)
    started = time.monotonic()
    jobs = github.merge(1).run()
    merged = time.monotonic() - started
    succeeded(jobs, "reviewed", "submit")
    made = github.api.requests[calls:]
    counts = github.beaker.count_by_name()
    assert len(counts) == SWEEPS * POINTS and set(counts.values()) == {1}
    assert "Not in a reviewed plan" not in jobs["submit"].summary
    files = git(github.world.origin, "ls-tree", "-r", "--name-only", "main", "sweeps").split()
    assert len(files) >= 2 * SWEEPS and len(made) <= 30, made
    print(
        f"\n{SWEEPS}x{POINTS} points: plan comment {len(body)} characters, Plan job {planned:.0f} s;"
        f" merge run {merged:.0f} s; {len(made)} GitHub REST calls with {len(files)} files"
        f" under sweeps/ ({', '.join(sorted({m + ' ' + p.split('?')[0] for m, p in made}))})"
    )


def test_a_sweep_file_over_1_mb_is_reviewed_from_git_not_the_contents_api(github: GitHub) -> None:
    """GitHub's contents API returns a file over 1 MB with `"content": ""` (encoding "none"):
    read that way, a big manifest or lock defines no point and all of its points are held back.
    The reviewed job reads the merged head with git, so its size does not matter."""
    import urllib.request

    notes = "".join(
        f"# run {i}: notes kept with the sweep, line after line\n" for i in range(24_000)
    )
    big = _manifest(0) + notes
    assert len(big.encode()) > 1_048_576
    head_of = github.open_pull(1, {"sweeps/family-00.yaml": big})
    succeeded(github.plan(1, head_of).run(), "plan")
    head = github.api.pulls[1]["head"]
    request = urllib.request.Request(
        f"{github.api.url}/repos/{github.api.repository}/contents/sweeps/family-00.yaml?ref={head}",
        headers={"Authorization": f"Bearer {github.api.token}"},
    )
    with urllib.request.urlopen(request) as reply:
        found = json.loads(reply.read())
    assert (found["encoding"], found["content"]) == ("none", "")  # what the old reader decoded

    jobs = github.merge(1).run()
    succeeded(jobs, "reviewed", "submit")
    assert len(github.beaker.count_by_name()) == POINTS
    assert "Not in a reviewed plan" not in jobs["submit"].summary


def test_a_plan_too_long_to_show_fails_the_plan_job_next_to_plan_failed(
    github: GitHub, tmp_path: Path
) -> None:
    """The comment step of the plan action, given a plan over 65 536 characters (a runner that
    broke its promise): the comment says the plan failed and the job fails, never green."""
    action = yaml.safe_load((PROJECT / ".github/actions/plan/action.yml").read_text())
    (comment,) = [s for s in action["runs"]["steps"] if s.get("name") == "Update the plan comment"]
    text = f"{COMMENT_MARKER}\n## Sweep plan\n\n" + "x" * 70_000
    write = f"printf '%s' '{text}' > \"$RUNNER_TEMP/sweep-plan.md\""
    checkout = {"uses": "actions/checkout@v4", "with": {"persist-credentials": "false"}}
    steps = [checkout, {"run": write}, {**comment, "env": {"PLANNED": "true"}}]
    workflow = {
        "on": "pull_request",
        "concurrency": {"group": "g"},
        "jobs": {"plan": {"steps": steps}},
    }
    (tmp_path / "workflows").mkdir()
    (tmp_path / "workflows" / "plan.yml").write_text(yaml.safe_dump(workflow))
    github.workflows = tmp_path / "workflows"
    jobs = github.plan(1, github.open_pull(1, _family(1))).run()
    assert jobs["plan"].outcome == "failure"
    assert f"the plan comment is {len(text)} characters, over GitHub's 65536" in jobs["plan"].log
    (body,) = github.api.bodies(1)
    assert "The plan failed: see the job" in body
