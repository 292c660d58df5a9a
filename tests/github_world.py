"""A repository on a stand-in GitHub, for running workflow files step by step (tests/actions.py).

`GitHub` plays pull requests and merges on a bare origin as GitHub does (refs/pull/N/head and
refs/pull/N/merge) and starts workflow runs with realistic event payloads: `uses:` steps are
handled here (checkout, setup-python, github-script under node against tests/fake_github.py),
this repository's composite actions by tests/actions.py. `Queue` models concurrency groups.
"""

from __future__ import annotations

import itertools
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.actions import Environment, Job, Run, Step
from tests.conftest import PROJECT
from tests.fake_beaker.server import FakeBeaker
from tests.fake_github import FakeGitHub
from tests.gitworld import World, commit_all, git, make_world, write

REPOSITORY = "ai2/sweeps"
needs_node = pytest.mark.skipif(
    shutil.which("node") is None, reason="the github-script step needs node"
)
"""The mark of a test that runs a workflow: its github-script steps run under node."""


@dataclass
class GitHub:
    """The repository on 'GitHub': origin, the API stand-in, and the workflow runs made."""

    world: World
    api: FakeGitHub
    beaker: FakeBeaker
    runs: Iterator[int] = field(default_factory=lambda: itertools.count(1))
    dev: Path | None = None
    secrets: dict[str, str] = field(default_factory=dict)
    """More secrets of the `beaker` environment (BEAKER_TOKEN is always there)."""
    workflows: Path = PROJECT / ".github" / "workflows"
    """Where the workflow files run come from: this project's, or a research repository's."""
    plan_workflow: str = "plan.yml"
    submit_workflow: str = "submit.yml"
    """What actions/upload-artifact uploaded, by name: a copy of its directory."""

    def _dev(self) -> Path:
        if self.dev is None:
            self.dev = self.world.clone("dev")
        git(self.dev, "checkout", "--quiet", "main")
        git(self.dev, "pull", "--quiet", "--ff-only", "origin", "main")
        return self.dev

    def open_pull(self, number: int, files: dict[str, str]) -> str:
        """A pull request changing files; its merge ref as GitHub computes it (the merge sha)."""
        dev = self._dev()
        git(dev, "checkout", "--quiet", "-B", f"pr-{number}")
        for path, text in files.items():
            write(dev, path, text)
        commit_all(dev, f"Pull request {number}")
        git(dev, "push", "--quiet", "--force", "origin", f"HEAD:refs/pull/{number}/head")
        merge = self.remerge(number)
        self.api.pulls[number]["head"] = git(dev, "rev-parse", f"pr-{number}")
        return merge

    def land(self, number: int, files: dict[str, str]) -> None:
        """A pull request changing ``files`` is planned and merged, and its submit run succeeds."""
        succeeded(self.plan(number, self.open_pull(number, files)).run(), "plan")
        succeeded(self.merge(number).run(), "reviewed", "submit")

    def remerge(self, number: int) -> str:
        dev = self._dev()
        git(dev, "checkout", "--quiet", "--detach", "origin/main")
        git(dev, "merge", "--quiet", "--no-ff", f"pr-{number}", "-m", f"Merge {number}")
        git(dev, "push", "--quiet", "--force", "origin", f"HEAD:refs/pull/{number}/merge")
        self.api.pulls.setdefault(number, {"number": number, "merged_at": None, "commits": []})
        return git(dev, "rev-parse", "HEAD")

    def merge(self, number: int) -> Run:
        """Merge the pull request into main; the push run it triggers."""
        dev = self._dev()
        before = git(dev, "rev-parse", "HEAD")
        message = f"Merge pull request #{number}"
        git(dev, "merge", "--quiet", "--no-ff", f"pr-{number}", "-m", message)
        git(dev, "push", "--quiet", "origin", "main")
        after = git(dev, "rev-parse", "HEAD")
        self.api.merged(number, after)
        payload = {
            "ref": "refs/heads/main",
            "before": before,
            "after": after,
            "commits": [{"id": after, "message": message}],
            "head_commit": {"id": after},
        }
        return self.run(self.submit_workflow, "push", payload, "refs/heads/main", after)

    def plan(
        self, number: int, sha: str, head_repo: str = REPOSITORY, labels: tuple[str, ...] = ()
    ) -> Run:
        if number in self.api.pulls:
            self.api.pulls[number]["labels"] = list(labels)  # as the pull request has them now
        payload = {
            "action": "labeled" if labels else "synchronize",
            "number": number,
            "pull_request": {
                "number": number,
                "head": {
                    "repo": {"full_name": head_repo},
                    "sha": self.api.pulls.get(number, {}).get("head", ""),
                },
                "base": {"ref": "main"},
                "labels": [{"name": label} for label in labels],
            },
        }
        return self.run(
            self.plan_workflow, "pull_request", payload, f"refs/pull/{number}/merge", sha
        )

    def dispatch(self, ref: str = "refs/heads/main", **inputs: str) -> Run:
        sha = self.world.head(ref.removeprefix("refs/heads/"))
        return self.run(self.submit_workflow, "workflow_dispatch", {"inputs": inputs}, ref, sha)

    def propose(self, dispatch: bool = False) -> Run:
        """A run of the Propose workflow: scheduled, or dispatched by hand."""
        if dispatch:
            return self.run(
                "propose.yml", "workflow_dispatch", {"inputs": {}}, "refs/heads/main", ""
            )
        return self.run(
            "propose.yml", "schedule", {"schedule": "17 * * * *"}, "refs/heads/main", ""
        )

    def schedule(self) -> Run:
        return self.run(
            self.submit_workflow, "schedule", {"schedule": "*/15 * * * *"}, "refs/heads/main", ""
        )

    def run(self, name: str, event: str, payload: dict[str, Any], ref: str, sha: str) -> Run:
        number = next(self.runs)
        payload = {"repository": {"default_branch": "main", "full_name": REPOSITORY}, **payload}
        tmp = self.world.tmp / f"run-{number}"
        return Run(
            workflow=self.workflows / name,
            event=event,
            payload=payload,
            ref=ref,
            sha=sha,
            tmp=tmp,
            uses={
                "actions/checkout": self._checkout,
                "actions/setup-python": _setup_python,
                "actions/github-script": self._github_script,
                "actions/cache": _cache,
                "actions/upload-artifact": _upload_artifact,
                "actions/upload-pages-artifact": _upload_pages_artifact,
                "actions/deploy-pages": _deploy_pages,
            },
            environments={
                "beaker": Environment(
                    ("main",), {"BEAKER_TOKEN": self.beaker.token, **self.secrets}
                )
            },
            repository=REPOSITORY,
            run_id=number,
            api_url=self.api.url,
            token=self.api.token,
        )

    def _checkout(self, step: Step) -> None:
        """What actions/checkout does: fetch the event's commit (at the depth asked), check it
        out (a branch for branch refs, detached for pull requests)."""
        workspace, env = step.workspace, step.env
        workspace.mkdir(parents=True)
        git(workspace, "init", "--quiet")
        git(workspace, "remote", "add", "origin", self.world.origin.as_uri())
        ref, sha = env["GITHUB_REF"], env["GITHUB_SHA"] or self.world.head()
        depth = step.with_.get("fetch-depth", "1")
        if ref.startswith("refs/heads/"):
            branch = ref.removeprefix("refs/heads/")
            tracking = f"refs/remotes/origin/{branch}"
            checkout = ["-B", branch, tracking]
        else:
            tracking = "refs/remotes/pull/merge"
            checkout = ["--detach", tracking]
        fetch = [
            "fetch",
            "--quiet",
            "--no-tags",
            f"--depth={depth}",
            "origin",
            f"+{sha}:{tracking}",
        ]
        git(workspace, *fetch)
        git(workspace, "checkout", "--quiet", "--force", *checkout)
        assert step.with_.get("persist-credentials") in ("true", "false")

    def _github_script(self, step: Step) -> None:
        script = step.workspace.parent / "github-script.js"
        script.write_text(step.with_["script"])
        done = subprocess.run(
            ["node", str(PROJECT / "tests" / "github_script.js"), str(script)],
            cwd=step.workspace if step.workspace.exists() else step.workspace.parent,
            env={**step.env, "SCRIPT_TOKEN": self.api.token},
            capture_output=True,
            text=True,
            timeout=60,
        )
        step.job.log += done.stdout + done.stderr
        assert done.returncode == 0, done.stdout + done.stderr


def _setup_python(step: Step) -> None:
    assert step.with_ == {"python-version": "3.11"}  # the Tests workflow's Python


def _cache(step: Step) -> None:
    """actions/cache of pip's cache: keyed by the sha256 of the lock the install step uses."""
    import hashlib
    import platform

    assert step.with_["path"] == "~/.cache/pip", step.with_
    path = step.env.get("GITHUB_ACTION_PATH", "")  # propose and submit install Optuna too
    adaptive = step.env.get("SWEEP_RUNNER_EXTRAS") == "adaptive" or any(
        name in path for name in ("propose", "submit")
    )
    lock = PROJECT / ("requirements-adaptive.txt" if adaptive else "requirements.txt")
    build = PROJECT / "requirements-build.txt"  # installed after it by install.sh
    digest = hashlib.sha256(lock.read_bytes() + build.read_bytes()).hexdigest()
    key = f"sweep-runner-pip-Linux-py{platform.python_version()}-{digest}"
    assert step.with_["key"] == key, (step.with_["key"], key)
    step.job.caches.append(key)


def _upload_artifact(step: Step) -> None:
    """actions/upload-artifact: a copy of the directory, by the artifact's name."""

    source = Path(step.with_["path"])
    target = step.workspace.parent / "artifacts" / step.with_["name"]
    if source.exists():
        shutil.copytree(source, target, dirs_exist_ok=step.with_.get("overwrite") == "true")
        step.job.artifacts[step.with_["name"]] = target
    else:
        assert step.with_.get("if-no-files-found") == "ignore", step.with_


def _upload_pages_artifact(step: Step) -> None:
    """actions/upload-pages-artifact: the site's directory as the `github-pages` artifact."""
    _upload_artifact(
        Step(
            step.uses,
            {"name": PAGES, "path": step.with_["path"]},
            step.env,
            step.workspace,
            step.job,
        )
    )


def _deploy_pages(step: Step) -> None:
    """actions/deploy-pages: publishes the `github-pages` artifact this job uploaded."""
    assert PAGES in step.job.artifacts, "deploy-pages without upload-pages-artifact"
    step.job.artifacts[DEPLOYED] = step.job.artifacts[PAGES]


PAGES, DEPLOYED = "github-pages", "deployed to GitHub Pages"


@dataclass
class Queue:
    """GitHub's concurrency groups: one running and one pending run per group; a new pending run
    cancels the one pending before it (cancel-in-progress: false leaves the running one alone)."""

    running: dict[str, list[Run]] = field(default_factory=dict)
    pending: dict[str, Run] = field(default_factory=dict)
    cancelled: list[Run] = field(default_factory=list)
    done: list[dict[str, Job]] = field(default_factory=list)

    def trigger(self, run: Run) -> None:
        group = run.concurrency_group()
        if not self.running.get(group):
            self.running[group] = [run]
        else:
            if group in self.pending:
                self.cancelled.append(self.pending[group])
            self.pending[group] = run

    def drain(self) -> None:
        """Finish the running runs, oldest group first, starting each group's pending run."""
        while self.running:
            group = next(iter(self.running))
            self.done.append(self.running.pop(group)[0].run())
            if group in self.pending:
                self.running[group] = [self.pending.pop(group)]


@pytest.fixture
def github(
    tmp_path: Path, fake_beaker: FakeBeaker, monkeypatch: pytest.MonkeyPatch
) -> Iterator[GitHub]:
    world = make_world(tmp_path)
    git(world.origin, "config", "uploadpack.allowAnySHA1InWant", "true")  # as GitHub allows
    api = FakeGitHub(REPOSITORY, origin=world.origin)
    monkeypatch.setenv("GIT_AUTHOR_NAME", "Sweep Tester")
    try:
        yield GitHub(world, api, fake_beaker)
    finally:
        api.close()


def succeeded(jobs: dict[str, Job], *names: str) -> None:
    """Each named job of a workflow run succeeded; else its log."""
    for name in names:
        assert jobs[name].outcome == "success", f"{name}:\n{jobs[name].log}"
