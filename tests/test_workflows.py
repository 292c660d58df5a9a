"""The workflows themselves, run step by step as GitHub's runner would (tests/actions.py).

Each test builds a bare origin with this project's layout (tests/gitworld.py), plays pull
requests and merges on it as GitHub does (refs/pull/N/head and refs/pull/N/merge), and runs
.github/workflows/plan.yml and submit.yml with realistic event payloads and `GITHUB_*` files:
`run:` steps under bash, the github-script step under node against a stand-in GitHub API
(tests/fake_github.py), Beaker calls against the fake Beaker. Concurrency groups are modelled by
`Queue`, which keeps one running and one pending run per group, as GitHub does.
"""

from __future__ import annotations

import dataclasses

import pytest

from tests.conftest import PROJECT
from tests.fake_beaker.server import FakeBeaker
from tests.github_world import GitHub, Queue, needs_node, succeeded
from tests.gitworld import git
from tests.helpers import head
from tests.webhook import Webhook

pytestmark = [pytest.mark.slow, needs_node]

GRID = (
    head("grid")
    + """\
    command: [python, train.py, "--lr={lr}", "--wd={wd}", "--seed={seed}"]
params:
  grid:
    lr: [0.1, 0.01]
    wd: [0.0]
    seed: [1, 2]
"""
)
MORE_LR = GRID.replace("[0.1, 0.01]", "[0.1, 0.01, 0.001]")
MORE_SEEDS = GRID.replace("[1, 2]", "[1, 2, 3]")


def _names(fake: FakeBeaker) -> set[str]:
    return set(fake.count_by_name())


def _grid_names(text: str) -> set[str]:
    return {word.strip("`") for word in text.split() if word.strip("`").startswith("grid-")}


def _plus(text: str) -> set[str]:
    """The experiments a plan comment shows as `+`."""
    return {_grid_names(line).pop() for line in text.splitlines() if line.startswith("| `+`")}


# -- nothing runs that no one reviewed ----------------------------------------------------------


def test_two_pull_requests_submit_only_reviewed_points_and_hold_back_the_cross_term(
    github: GitHub,
) -> None:
    github.land(1, {"sweeps/grid.yaml": GRID})
    assert len(_names(github.beaker)) == 4

    plans = {}
    for number, text in ((2, MORE_LR), (3, MORE_SEEDS)):
        jobs = github.plan(number, github.open_pull(number, {"sweeps/grid.yaml": text})).run()
        succeeded(jobs, "plan")
        (plans[number],) = github.api.bodies(number)
        assert "Plan: 2 to submit, 4 already submitted" in plans[number]

    succeeded(github.merge(2).run(), "reviewed", "submit")
    calls = len(github.api.requests)
    jobs = github.merge(3).run()
    succeeded(jobs, "reviewed", "submit")
    # GitHub calls: the merge's pull request, the recent merges, one comment list each of the
    # three; the heads come with git, no call per file.
    assert len(github.api.requests[calls:]) == 1 + 1 + 3

    created = _names(github.beaker)
    assert len(created) == 4 + 2 + 2  # not 9: the cross-term lr=0.001, seed=3 waits
    assert created == _plus(github.api.bodies(1)[0]) | _plus(plans[2]) | _plus(plans[3])
    summary = jobs["submit"].summary
    assert "Not in a reviewed plan" in summary and "lr=0.001 wd=0.0 seed=3" in summary
    assert jobs["submit"].annotations("warning")
    held_table = summary[
        summary.index("Not in a reviewed plan") : summary.index("## Sweep submission")
    ]
    (held,) = _grid_names(held_table)
    assert held not in created and held not in plans[2] + plans[3]

    # A dispatch that says so submits it; a plain schedule run does not.
    succeeded(github.schedule().run(), "reviewed", "submit")
    assert held not in _names(github.beaker)
    succeeded(github.dispatch(unreviewed="true").run(), "reviewed", "submit")
    assert held in _names(github.beaker) and set(github.beaker.count_by_name().values()) == {1}


def test_editing_a_merged_plan_comment_approves_nothing_nobody_reviewed(github: GitHub) -> None:
    """GitHub keeps a comment's author when a maintainer edits it, so the text proves nothing:
    pins added to a merged pull request's comment (here the held-back cross-term's) and a head
    commit rewritten to main's approve nothing; the reviewed job recomputes each pull request's
    points from its head commit and takes only those its comment shows."""
    from runner.plan import catalog
    from runner.repo import review

    succeeded(github.plan(1, github.open_pull(1, {"sweeps/grid.yaml": GRID})).run(), "plan")
    succeeded(github.merge(1).run(), "reviewed", "submit")
    for number, text in ((2, MORE_LR), (3, MORE_SEEDS)):
        succeeded(
            github.plan(number, github.open_pull(number, {"sweeps/grid.yaml": text})).run(), "plan"
        )
    for number in (2, 3):
        succeeded(github.merge(number).run(), "reviewed", "submit")
    assert len(_names(github.beaker)) == 8  # the cross-term lr=0.001, seed=3 is held back

    main = github.world.clone("maintainer")
    (grid,) = [p for p in catalog.load(main, []).plans() if p.pending]
    (plain,) = review.pins([grid])  # the cross-term's, as a plan would pin it (a digest) ...
    cross = frozenset(map(review.token, grid.pending))
    forged = review.pin_lines([plain, dataclasses.replace(plain, tokens=cross)])  # ... and listed
    assert forged.count("tokens=") == 1
    comment = github.api.comments[3][0]
    assert comment["user"]["login"] == "github-actions[bot]"  # an edit keeps the author
    original = comment["body"]
    comment["body"] = original + forged  # the pins a maintainer adds by editing
    jobs = github.schedule().run()
    succeeded(jobs, "reviewed", "submit")
    assert len(_names(github.beaker)) == 8 and "Not in a reviewed plan" in jobs["submit"].summary

    head = review.planned_head(original)
    comment["body"] = original.replace(head, github.world.head("main")) + forged
    jobs = github.schedule().run()
    succeeded(jobs, "reviewed", "submit")
    assert len(_names(github.beaker)) == 8
    assert "#3 approves nothing: its plan comment is of" in jobs["reviewed"].summary


def test_a_stale_plan_approves_only_what_it_showed_even_if_the_merge_run_was_dropped(
    github: GitHub,
) -> None:
    sha = github.open_pull(1, {"sweeps/grid.yaml": GRID})
    succeeded(github.plan(1, sha).run(), "plan")
    github.merge(1)  # its run is dropped
    sha = github.open_pull(2, {"sweeps/grid.yaml": MORE_SEEDS})
    succeeded(github.plan(2, sha).run(), "plan")  # planned before anything was submitted
    jobs = github.merge(2).run()
    succeeded(jobs, "reviewed", "submit")
    # PR 1's four points and PR 2's two are reviewed (PR 1 is a recent merge); nothing else.
    assert len(_names(github.beaker)) == 6
    assert "Not in a reviewed plan" not in jobs["submit"].summary


def test_a_plan_comment_edited_by_a_person_approves_nothing(github: GitHub) -> None:
    sha = github.open_pull(1, {"sweeps/grid.yaml": GRID})
    succeeded(github.plan(1, sha).run(), "plan")
    (body,) = github.api.bodies(1)
    github.api.comments[1][0]["user"]["login"] = "someone"  # not the workflow's comment
    jobs = github.merge(1).run()
    succeeded(jobs, "reviewed", "submit")
    assert _names(github.beaker) == set() and body.count("| `+` |") == 4
    assert jobs["submit"].summary.count("| `grid` |") == 4


# -- the plan comment -----------------------------------------------------------------------------


def test_the_comment_shows_changed_sweeps_in_full_and_the_rest_in_one_line(github: GitHub) -> None:
    sha = github.open_pull(1, {"sweeps/grid.yaml": GRID})
    jobs = github.plan(1, sha).run()
    succeeded(jobs, "plan")
    (body,) = github.api.bodies(1)
    assert body.count("\n### `") == 1 and "### `grid`" in body
    drafts = len(list((PROJECT / "sweeps").glob("*.yaml")))
    assert f"{drafts} other sweep(s) this pull request does not change ({drafts} draft)" in body
    assert body.count("| `+`") == 4 and body.count("\n| ") == 5  # grid's rows, no draft's
    assert jobs["plan"].summary.count(body) == 1

    github.open_pull(1, {"sweeps/grid.yaml": MORE_SEEDS})
    succeeded(github.plan(1, github.remerge(1)).run(), "plan")
    assert github.api.bodies(1) != [body] and len(github.api.bodies(1)) == 1  # updated in place


def test_problems_are_annotations_on_the_changed_lines(github: GitHub) -> None:
    bad = GRID.replace("name: grid", "name: grid\ndraft: maybe")
    jobs = github.plan(1, github.open_pull(1, {"sweeps/grid.yaml": bad})).run()
    assert jobs["plan"].outcome == "failure"
    (annotation,) = jobs["plan"].annotations()
    assert annotation.startswith("::error file=sweeps/grid.yaml,line=3,col=8::draft")
    (body,) = github.api.bodies(1)
    assert "sweeps/grid.yaml:3:8: draft" in body


def test_900_problems_make_a_capped_comment_that_replaces_the_old_plan(github: GitHub) -> None:
    sha = github.open_pull(1, {"sweeps/grid.yaml": GRID})
    succeeded(github.plan(1, sha).run(), "plan")
    bad = {f"sweeps/broken-{i:03}.yaml": f"version: 1\nname: b{i}\n" for i in range(900)}
    jobs = github.plan(1, github.open_pull(1, bad)).run()
    assert jobs["plan"].outcome == "failure"
    problems = len(jobs["plan"].annotations())
    assert problems >= 900
    (body,) = github.api.bodies(1)
    assert (
        len(body) <= 65_536 and "more problem(s)" in body and f"**{problems} problem(s)**" in body
    )
    assert "beaker-sweep-runner:reviewed" not in body  # the old plan's pins are gone


def test_a_plan_that_fails_or_is_refused_replaces_the_stale_comment(github: GitHub) -> None:
    sha = github.open_pull(1, {"sweeps/grid.yaml": GRID})
    succeeded(github.plan(1, sha).run(), "plan")
    # A broken ledger: plan-comment fails before writing anything.
    broken = {"sweeps/grid.yaml": GRID, "sweeps/ledger/grid.jsonl": "{not json\n"}
    jobs = github.plan(1, github.open_pull(1, broken)).run()
    assert jobs["plan"].outcome == "failure"
    (body,) = github.api.bodies(1)
    assert "The plan failed: see the job" in body and "/actions/runs/" in body
    assert "beaker-sweep-runner:reviewed" not in body

    # GitHub refuses the body (here a stand-in that allows only 300 characters).
    import tests.fake_github as fake_github

    succeeded(github.plan(1, github.open_pull(1, {"sweeps/grid.yaml": GRID})).run(), "plan")
    limit, fake_github.COMMENT_LIMIT = fake_github.COMMENT_LIMIT, 300
    try:
        jobs = github.plan(1, github.open_pull(1, {"sweeps/grid.yaml": MORE_SEEDS})).run()
    finally:
        fake_github.COMMENT_LIMIT = limit
    assert (
        jobs["plan"].outcome == "failure" and "refused the plan comment (422)" in jobs["plan"].log
    )
    (body,) = github.api.bodies(1)
    assert "The plan failed" in body


def test_the_required_check_reports_on_a_pull_request_that_changes_no_manifest(
    github: GitHub,
) -> None:
    jobs = github.plan(1, github.open_pull(1, {"NOTES.md": "notes\n"})).run()
    succeeded(jobs, "plan")
    assert "nothing to plan" in jobs["plan"].summary and jobs["plan"].pip == []
    assert github.api.bodies(1) == []  # no comment for nothing

    jobs = github.plan(2, github.open_pull(2, {"sweeps/grid.yaml": GRID})).run()
    succeeded(jobs, "plan")
    install = ["-m", "pip", "install", "--quiet"]
    assert jobs["plan"].pip == [  # the hashed locks, then the runner alone, from the action's repo
        [*install, "--require-hashes", "--no-deps", "-r", str(PROJECT / "requirements.txt")],
        [*install, "--require-hashes", "--no-deps", "-r", str(PROJECT / "requirements-build.txt")],
        [*install, "--no-deps", "--no-build-isolation", str(PROJECT)],
    ]
    assert "beaker-sweep-runner:reviewed" in github.api.bodies(2)[0]
    # A later push takes the sweep out again: the old plan (and its pins) is not left up.
    succeeded(github.plan(2, github.open_pull(2, {"NOTES.md": "y\n"})).run(), "plan")
    (body,) = github.api.bodies(2)
    assert "changes no manifest" in body and "beaker-sweep-runner:reviewed" not in body


def test_a_fork_pull_request_plans_into_the_summary_only(github: GitHub) -> None:
    jobs = github.plan(1, github.open_pull(1, {"sweeps/grid.yaml": GRID}), "someone/fork").run()
    succeeded(jobs, "plan")
    assert github.api.bodies(1) == [] and "### `grid`" in jobs["plan"].summary


# -- secrets, dispatch and queueing ---------------------------------------------------------------


def test_secrets_reach_only_the_submit_job_on_the_default_branch(github: GitHub) -> None:
    github.open_pull(1, {"sweeps/grid.yaml": GRID})
    github.merge(1)  # its run is not run here
    git(github._dev(), "push", "--quiet", "origin", "main:wip")
    jobs = github.dispatch("refs/heads/wip").run()
    assert jobs["submit"].outcome == "failure" and "not allowed to deploy" in jobs["submit"].log
    assert _names(github.beaker) == set()

    jobs = github.dispatch("refs/heads/wip", dry_run="true").run()
    succeeded(jobs, "dry-run")
    assert jobs["reviewed"].outcome == jobs["submit"].outcome == "skipped"
    assert jobs["dry-run"].secrets == {} and "Sweep plan (dry run)" in jobs["dry-run"].summary
    assert _names(github.beaker) == set()


def test_a_dry_run_never_takes_the_pending_place_of_a_merge(github: GitHub) -> None:
    queue = Queue()
    sha = github.open_pull(1, {"sweeps/grid.yaml": GRID})
    succeeded(github.plan(1, sha).run(), "plan")
    queue.trigger(github.merge(1))  # running
    sha = github.open_pull(2, {"sweeps/other.yaml": GRID.replace("name: grid", "name: other")})
    succeeded(github.plan(2, sha).run(), "plan")
    queue.trigger(github.merge(2))  # pending
    queue.trigger(github.dispatch(dry_run="true"))  # a group of its own: runs at once
    queue.trigger(github.dispatch(dry_run="true"))
    assert queue.cancelled == []
    queue.drain()
    assert len(_names(github.beaker)) == 8  # both merges submitted


def test_a_dropped_merge_run_is_repaired_by_the_schedule(github: GitHub) -> None:
    queue = Queue()
    sha = github.open_pull(1, {"sweeps/grid.yaml": GRID})
    succeeded(github.plan(1, sha).run(), "plan")
    queue.trigger(github.merge(1))
    sha = github.open_pull(2, {"sweeps/other.yaml": GRID.replace("name: grid", "name: other")})
    succeeded(github.plan(2, sha).run(), "plan")
    queue.trigger(github.merge(2))  # pending ...
    queue.trigger(github.dispatch(manifests="sweeps/grid.yaml"))  # ... and replaced by this
    assert [r.event for r in queue.cancelled] == ["push"]
    queue.drain()
    assert len(_names(github.beaker)) == 4  # PR 2's sweep waits
    queue.trigger(github.schedule())
    queue.drain()
    assert len(_names(github.beaker)) == 8
    assert {n.split("-")[0] for n in _names(github.beaker)} == {"grid", "other"}


# -- the budget policy ----------------------------------------------------------------------------

GPU_GRID = GRID.replace(
    "  clusters: [ai2/test-cluster]\n", "  clusters: [ai2/test-cluster]\n  timeout: 24h\n"
).replace("    command: [python", "    resources: {gpus: 8}\n    command: [python")
POLICY = "version: 1\nmax_gpu_hours_per_sweep: 500\n"


def test_over_budget_fails_the_plan_until_labeled_and_an_unapproved_merge_is_held_back(
    github: GitHub,
) -> None:
    sha = github.open_pull(1, {"sweeps/policy.yaml": POLICY})
    succeeded(github.plan(1, sha).run(), "plan")
    github.merge(1)  # its submit run has nothing to do
    # 4 points x 8 GPUs x 24 h = 768 GPU-hours; the pull request also raises the limit, but the
    # base branch's policy is the one in force.
    raised = "version: 1\nmax_gpu_hours_per_sweep: 5000\n"
    sha = github.open_pull(2, {"sweeps/grid.yaml": GPU_GRID, "sweeps/policy.yaml": raised})
    jobs = github.plan(2, sha).run()
    assert jobs["plan"].outcome == "failure" and jobs["plan"].steps["plan"]["outcome"] == "failure"
    (error,) = jobs["plan"].annotations()
    assert error.startswith("::error file=sweeps/grid.yaml,line=7,col=12::beaker.timeout: sweep")
    assert "768 GPU-hours, over max_gpu_hours_per_sweep 500 (sweeps/policy.yaml@" in error
    (body,) = github.api.bodies(2)
    assert "This merge may use up to **768** GPU-hours; expected 768." in body
    assert "**Budget: over the policy (1 breach(es)).**" in body and "approved=budget" not in body

    jobs = github.plan(2, sha, labels=("sweep-budget-approved",)).run()
    succeeded(jobs, "plan")
    (body,) = github.api.bodies(2)
    assert "approved** by the label `sweep-budget-approved`" in body and "approved=budget" in body
    succeeded(github.merge(2).run(), "reviewed", "submit")
    assert len(_names(github.beaker)) == 4

    # Merged without the label (an admin override): the points wait, listed as held back.
    bigger = GPU_GRID.replace("name: grid", "name: big").replace("timeout: 24h", "timeout: 200h")
    sha = github.open_pull(3, {"sweeps/big.yaml": bigger})
    assert github.plan(3, sha).run()["plan"].outcome == "failure"
    jobs = github.merge(3).run()
    succeeded(jobs, "reviewed", "submit")
    assert len(_names(github.beaker)) == 4
    summary = jobs["submit"].summary
    assert "Held back: over the budget policy, not approved" in summary
    assert "6 400 GPU-hours, over max_gpu_hours_per_sweep 5 000" in summary
    assert summary.count("| `big` |") == 4
    assert "0 point(s) waiting (max_running, or a sweep's stop), 4 held back" in summary  # not
    assert "Nothing to submit" not in summary  # "every point is already recorded", as it said


# -- notifications --------------------------------------------------------------------------------


def test_the_webhook_hears_each_event_once_across_two_scheduled_runs(
    github: GitHub, webhook: Webhook
) -> None:
    github.secrets["SWEEP_SLACK_WEBHOOK"] = webhook.url
    github.land(1, {"sweeps/grid.yaml": GRID})
    assert webhook.received == []  # nothing has finished or failed yet
    for i, exp in enumerate(github.beaker.experiments()):
        github.beaker.set_job_status(exp.id, "failed" if i == 0 else "succeeded")
        github.beaker.set_metrics(exp.id, {"loss": 2.0 - i / 10})
    first = github.schedule().run()
    succeeded(first, "reviewed", "submit")
    assert len(webhook.taken) == 2
    assert any("Sweep `grid` finished: 3 succeeded, 1 failed" in t for t in webhook.taken)
    assert "sweeps/ledger/grid.jsonl" in github.world.files_changed()  # the records are pushed
    succeeded(github.schedule().run(), "reviewed", "submit")
    assert len(webhook.received) == 2


def test_a_failing_webhook_leaves_the_scheduled_run_green(github: GitHub, webhook: Webhook) -> None:
    github.secrets["SWEEP_SLACK_WEBHOOK"] = webhook.url
    webhook.mode = "fail"
    github.land(1, {"sweeps/grid.yaml": GRID})
    for exp in github.beaker.experiments():
        github.beaker.set_job_status(exp.id, "failed")
    jobs = github.schedule().run()
    succeeded(jobs, "reviewed", "submit")
    assert webhook.received and not webhook.taken
    assert "notification webhook: not delivered" in jobs["submit"].log


def _live(fake: FakeBeaker) -> int:
    states = {fake.experiment(name).status for name in fake.count_by_name()}
    assert states <= {"queued", "running", "succeeded"}, states
    return sum(
        fake.experiment(name).status in ("queued", "running") for name in fake.count_by_name()
    )


def test_a_capped_sweep_merged_through_its_plan_is_topped_up_to_every_point(
    github: GitHub,
) -> None:
    """The plan comment shows all 6 points, 4 waiting under max_running 2; the merge submits 2,
    and each scheduled run after a slot frees submits the next ones: all 6 in the end, each
    once, never more than 2 queued or running."""
    capped = "max_running: 2\n" + GRID.replace("[0.1, 0.01]", "[0.1, 0.01, 0.001]")
    github.land(1, {"sweeps/grid.yaml": capped})
    assert len(_names(github.beaker)) == 2
    for total in (2, 4, 6):
        assert len(_names(github.beaker)) == total and _live(github.beaker) <= 2
        idle = github.schedule().run()  # no slot free: nothing new, and it says why
        succeeded(idle, "reviewed", "submit")
        assert len(_names(github.beaker)) == total
        if total < 6:
            assert f"Nothing submitted now: {6 - total} point(s) waiting" in idle["submit"].summary
        for name in _names(github.beaker):
            github.beaker.set_job_status(name, "succeeded")
        jobs = github.schedule().run()
        succeeded(jobs, "reviewed", "submit")
        assert "held back" not in jobs["submit"].log
    assert len(_names(github.beaker)) == 6
    assert set(github.beaker.count_by_name().values()) == {1}
