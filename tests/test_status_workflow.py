"""The Status workflow, run step by step (tests/actions.py) after a real merge and submission:
each sweep's results page from `report` lands in the job summary and its directory is uploaded
as the `sweep-report` artifact."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.actions import workflow
from tests.conftest import PROJECT
from tests.github_world import DEPLOYED, GitHub, needs_node, succeeded
from tests.helpers import SWEEP

pytestmark = [pytest.mark.slow, needs_node]

GRID = SWEEP.replace("name: exact", "name: grid")  # the six points the GitOps tests use


def test_the_status_workflow_puts_each_results_page_in_the_summary_and_uploads_it(
    github: GitHub,
) -> None:
    github.land(1, {"sweeps/grid.yaml": GRID})
    for i, exp in enumerate(github.beaker.experiments()):
        if i == 5:
            github.beaker.set_job_status(exp.id, "failed", exit_code=1)
            continue
        github.beaker.set_job_status(exp.id, "succeeded")
        github.beaker.set_metrics(exp.id, {"loss": 1.0 + i / 10})
    github.beaker.reset_calls()
    run = github.run("status.yml", "schedule", {"schedule": "23 */6 * * *"}, "refs/heads/main", "")
    jobs = run.run()
    succeeded(jobs, "status")
    summary = jobs["status"].summary
    assert summary.startswith("## Sweep status")  # status first, then the page
    page = summary[summary.index("## Results: `grid` — `sweeps/grid.yaml`") :]
    counts = page.split("Metric `loss` (minimize). 6 point(s): ", 1)[1].split(";", 1)[0]
    assert sorted(counts.split(", ")) == ["1 failed", "5 succeeded"]
    assert "**`grid-" in page and "`loss` = **1**" in page
    assert "### Not finished (1)" in page and "### Parameter importance" in page
    uploaded = jobs["status"].artifacts["sweep-report"]
    assert (uploaded / "grid.md").read_text() in summary
    assert '"name": "grid"' in (uploaded / "index.html").read_text()  # the web page, with the rest
    assert "github-pages" not in jobs["status"].artifacts  # published only when asked
    assert len((uploaded / "grid.csv").read_text().splitlines()) == 1 + 6
    mutations = {"CreateGroup", "UpdateGroup", "CancelWorkloads", "RestartExperimentTasks"}
    calls = github.beaker.calls
    assert not mutations & set(calls) and "http:create" not in calls  # it only reads


def test_publishing_to_pages_is_an_input_that_deploys_the_web_page(
    github: GitHub, tmp_path: Path
) -> None:
    """The status action's `publish-pages`, set as the workflow's comment says: the job gets
    the two permissions Pages needs and the report directory (index.html first) is deployed."""
    github.land(1, {"sweeps/grid.yaml": GRID})
    for exp in github.beaker.experiments():
        github.beaker.set_job_status(exp.id, "succeeded")
        github.beaker.set_metrics(exp.id, {"loss": 1.0})
    document = yaml.safe_load(workflow("status.yml").read_text())
    job = document["jobs"]["status"]
    job["permissions"].update({"pages": "write", "id-token": "write"})
    job["steps"][-1]["with"]["publish-pages"] = "true"
    (tmp_path / "status.yml").write_text(yaml.safe_dump(document, sort_keys=False))
    github.workflows = tmp_path
    jobs = github.run("status.yml", "workflow_dispatch", {}, "refs/heads/main", "").run()
    succeeded(jobs, "status")
    deployed = jobs["status"].artifacts[DEPLOYED]
    assert (deployed / "index.html").is_file() and (deployed / "grid.md").is_file()
    action = (PROJECT / ".github" / "actions" / "status" / "action.yml").read_text()
    assert "WARNING: a Pages site may be readable beyond the repository's members" in action
