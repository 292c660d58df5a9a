"""Releases (.github/workflows/release.yml, .github/release.py, CHANGELOG.md): the version comes
from the tag, the notes from the changelog, and the release workflow's jobs, run step by step,
build distributions that pass its checks before anything is published.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.actions import Environment, Job, Run, Step, workflow
from tests.builds import child_env, ok, tagged_source
from tests.conftest import PROJECT
from tests.gitworld import git

SCRIPT = PROJECT / ".github" / "release.py"
RELEASE = workflow("release.yml")
CHANGELOG = """\
# Changelog

## [Unreleased]

### Fixed

- Something not released yet.

## [0.3.0] - 2027-01-02

### Added

- The third release.

## [0.2.0]

- Undated.

## [0.1.1] - 2026-12-01

## [0.1.0] - 2026-11-26

### Added

- The first release.

[Unreleased]: https://github.com/allenai/beaker-sweep-runner/compare/v0.3.0...HEAD
[0.3.0]: https://github.com/allenai/beaker-sweep-runner/releases/tag/v0.3.0
"""


def _release(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`python .github/release.py ARGS` in a checkout at root, as the workflow runs it."""
    script = root / ".github" / "release.py"
    if not script.exists():
        script.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(SCRIPT, script)
    return subprocess.run(
        [sys.executable, str(script), *args], cwd=root, capture_output=True, text=True
    )


# -- the notes and the version ------------------------------------------------------------------


def test_the_notes_are_the_tags_section_without_the_next_one_or_the_links(tmp_path: Path) -> None:
    (tmp_path / "CHANGELOG.md").write_text(CHANGELOG)
    first = _release(tmp_path, "notes", "v0.1.0")
    assert (first.returncode, first.stdout) == (0, "### Added\n\n- The first release.\n")
    third = _release(tmp_path, "notes", "v0.3.0")
    assert (third.returncode, third.stdout) == (0, "### Added\n\n- The third release.\n")
    assert _release(tmp_path, "latest").stdout == "0.3.0\n"


@pytest.mark.parametrize(
    ("tag", "says"),
    [
        ("v0.4.0", "CHANGELOG.md has no section `## [0.4.0] - YYYY-MM-DD`"),
        ("v0.2.0", "`## [0.2.0]` has no date"),
        ("v0.1.1", "the section of 0.1.1 is empty"),
        ("0.3.0", "'0.3.0' is not a release tag: vX.Y.Z"),
        ("v0.3", "'v0.3' is not a release tag"),
    ],
)
def test_a_tag_without_its_dated_section_stops_the_release_in_one_line(
    tmp_path: Path, tag: str, says: str
) -> None:
    (tmp_path / "CHANGELOG.md").write_text(CHANGELOG)
    done = _release(tmp_path, "notes", tag)
    assert done.returncode == 1 and done.stdout == ""
    assert len(done.stderr.splitlines()) == 1 and says in done.stderr, done.stderr


def test_the_changelog_has_a_dated_latest_release_that_readme_and_docs_install() -> None:
    """README's install line, the docs' examples and the first Unreleased entries all follow the
    newest release in CHANGELOG.md (docs/releasing.md says to update them together)."""
    latest = _release(PROJECT, "latest")
    assert latest.returncode == 0, latest.stderr
    version = latest.stdout.strip()
    assert _release(PROJECT, "notes", f"v{version}").returncode == 0
    pages = [PROJECT / "README.md", *sorted((PROJECT / "docs").glob("*.md"))]
    pins = {
        (page.name, pin)
        for page in pages
        for pin in re.findall(
            r"(?:beaker-sweep-runner@|rev: |beaker-sweep-runner==)v?(\d+\.\d+\.\d+)",
            page.read_text(),
        )
    }
    assert ("README.md", version) in pins
    assert {pin for _, pin in pins} == {version}, pins


def test_a_git_archive_of_a_tag_carries_its_version(tmp_path: Path) -> None:
    """How a research repository's workflow gets the actions: GitHub's tarball of the tag, which
    install.sh builds without git. setuptools-scm reads the version from .git_archival.txt."""
    source = tagged_source(tmp_path, "v4.5.6")
    archive = tmp_path / "action.tar"
    git(source, "archive", "--format=tar", "--prefix=action/", "-o", str(archive), "v4.5.6")
    with tarfile.open(archive) as tar:
        tar.extractall(tmp_path, filter="data")
    env = child_env(tmp_path / "home")
    assert "v4.5.6" in (tmp_path / "action" / ".git_archival.txt").read_text()
    said = ok([sys.executable, "-m", "setuptools_scm"], tmp_path / "action", env)
    assert said.strip() == "4.5.6"
    # A commit after the tag is a development version of it, never a guessed next release.
    (source / "NOTES.md").write_text("after the release\n")
    git(source, "add", "-A")
    git(source, "commit", "--quiet", "-m", "after")
    after = ok([sys.executable, "-m", "setuptools_scm"], source, env).strip()
    assert re.fullmatch(r"4\.5\.6\.post1\.dev1\+g[0-9a-f]+", after), after


# -- the workflow, run step by step ------------------------------------------------------------


def test_only_the_publish_job_may_mint_a_token_and_only_in_the_pypi_environment() -> None:
    document = yaml.safe_load(RELEASE.read_text())
    assert document[True] == {"push": {"tags": ["v*"]}}  # YAML 1.1 reads `on` as True
    assert document["permissions"] == {}
    jobs = document["jobs"]
    tokens = {name for name, job in jobs.items() if "id-token" in job.get("permissions", {})}
    assert tokens == {"publish"} and jobs["publish"]["permissions"] == {"id-token": "write"}
    assert jobs["publish"]["environment"]["name"] == "pypi"
    assert jobs["build"]["permissions"] == {"contents": "read"}
    assert jobs["github-release"]["needs"] == "publish"


class _Actions:
    """The `uses:` of release.yml: a checkout of the tagged source, artifacts kept between jobs,
    and the PyPI upload recorded (what it was given), never made."""

    def __init__(self, source: Path, store: Path) -> None:
        self.source, self.store = source, store
        self.published: list[str] = []

    def handlers(self) -> dict[str, Any]:
        return {
            "actions/checkout": self.checkout,
            "actions/setup-python": self.setup_python,
            "actions/upload-artifact": self.upload,
            "actions/download-artifact": self.download,
            "pypa/gh-action-pypi-publish": self.publish,
        }

    def checkout(self, step: Step) -> None:
        assert step.with_ == {"persist-credentials": "false", "fetch-depth": "0"}
        tag = step.env["GITHUB_REF"].removeprefix("refs/tags/")
        git(step.workspace.parent, "clone", "--quiet", str(self.source), step.workspace.name)
        git(step.workspace, "checkout", "--quiet", "--detach", tag)

    def setup_python(self, step: Step) -> None:
        assert step.with_ == {"python-version": "3.11"}

    def upload(self, step: Step) -> None:
        assert step.with_["if-no-files-found"] == "error"
        shutil.copytree(step.workspace / step.with_["path"], self.store / step.with_["name"])

    def download(self, step: Step) -> None:
        shutil.copytree(self.store / step.with_["name"], step.workspace / step.with_["path"])

    def publish(self, step: Step) -> None:
        packages = step.workspace / step.with_["packages-dir"]
        self.published = sorted(p.name for p in packages.iterdir())


def _run_release(tmp_path: Path, tag: str, actions: _Actions) -> dict[str, Job]:
    run = Run(
        workflow=RELEASE,
        event="push",
        payload={"ref": f"refs/tags/{tag}"},
        ref=f"refs/tags/{tag}",
        sha=git(actions.source, "rev-parse", tag),
        tmp=tmp_path / "run",
        uses=actions.handlers(),
        environments={"pypi": Environment((tag,), {})},
        repository="allenai/beaker-sweep-runner",
    )
    return run.run()


@pytest.fixture
def fake_gh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """`gh` on PATH: records its arguments and the notes file it was given."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "gh.log"
    gh = bin_dir / "gh"
    gh.write_text(
        "#!/usr/bin/env bash\n"
        f'printf "%s\\n" "GH_REPO=$GH_REPO" "$@" > "{log}"\n'
        f'cp release/notes.md "{tmp_path}/gh-notes.md"\n'
    )
    gh.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{child_env(tmp_path)['PATH']}")
    return log


@pytest.mark.slow
def test_a_tag_builds_checks_publishes_and_releases_with_its_notes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake_gh: Path
) -> None:
    # The jobs (and pip in them) run as on GitHub: no fake CA, no token, not this venv.
    (tmp_path / "home").mkdir()
    clean = child_env(tmp_path / "home")
    for name in set(os.environ) - set(clean):
        monkeypatch.delenv(name)
    for name, value in clean.items():
        monkeypatch.setenv(name, value)
    actions = _Actions(tagged_source(tmp_path, "v0.1.0"), tmp_path / "artifacts")
    jobs = _run_release(tmp_path, "v0.1.0", actions)

    assert [j.outcome for j in jobs.values()] == ["success"] * 3, jobs["build"].log
    assert "the wheel works" in jobs["build"].log
    install = ["-m", "pip", "install", "--quiet", "--require-hashes", "--no-deps", "-r"]
    assert jobs["build"].pip == [[*install, "requirements-build.txt"]]
    assert actions.published == [
        "beaker_sweep_runner-0.1.0-py3-none-any.whl",
        "beaker_sweep_runner-0.1.0.tar.gz",
    ]
    args = fake_gh.read_text().splitlines()
    assert args[:6] == [
        "GH_REPO=allenai/beaker-sweep-runner",
        "release",
        "create",
        "v0.1.0",
        "--verify-tag",
        "--title",
    ]
    assert sorted(Path(a).name for a in args if a.startswith("release/dist/")) == actions.published
    notes = (tmp_path / "gh-notes.md").read_text()
    assert notes == _release(PROJECT, "notes", "v0.1.0").stdout and "### Added" in notes

    # The same distributions named for another tag fail the check: nothing would be published.
    wrong = _release(tmp_path / "run" / "work-build", "check", "v0.1.1", "release/dist")
    assert wrong.returncode == 1 and "not ['beaker_sweep_runner-0.1.1" in wrong.stderr


def test_a_tag_without_its_changelog_section_builds_and_publishes_nothing(
    tmp_path: Path, fake_gh: Path
) -> None:
    actions = _Actions(tagged_source(tmp_path, "v0.0.9"), tmp_path / "artifacts")
    jobs = _run_release(tmp_path, "v0.0.9", actions)
    assert [j.outcome for j in jobs.values()] == ["failure", "skipped", "skipped"]
    assert "CHANGELOG.md has no section `## [0.0.9]" in jobs["build"].log
    assert jobs["build"].pip == [] and actions.published == [] and not fake_gh.exists()


def test_a_tag_off_main_builds_and_publishes_nothing(tmp_path: Path, fake_gh: Path) -> None:
    source = tagged_source(tmp_path, "v0.0.8")
    git(source, "switch", "--quiet", "-c", "side")
    (source / "NOTES.md").write_text("not on main\n")
    git(source, "add", "-A")
    git(source, "commit", "--quiet", "-m", "a side branch")
    git(source, "tag", "-a", "v0.1.0", "-m", "v0.1.0")  # a section exists: only the branch is wrong
    actions = _Actions(source, tmp_path / "artifacts")
    jobs = _run_release(tmp_path, "v0.1.0", actions)
    assert [j.outcome for j in jobs.values()] == ["failure", "skipped", "skipped"]
    assert "::error::v0.1.0 is not a commit of main" in jobs["build"].log
    assert actions.published == [] and not fake_gh.exists()


@pytest.mark.slow
def test_the_actions_install_a_tags_tarball_as_that_version(tmp_path: Path) -> None:
    """What a research repository's workflow runs: GitHub's tarball of this repository at a tag
    (a git archive, no .git), and install.sh in a fresh virtual environment: the hash-pinned
    locks, then the runner built without build isolation; it reports the tag's version."""
    source = tagged_source(tmp_path, "v4.5.6")
    archive = tmp_path / "action.tar"
    git(source, "archive", "--format=tar", "--prefix=action/", "-o", str(archive), "v4.5.6")
    with tarfile.open(archive) as tar:
        tar.extractall(tmp_path, filter="data")
    (tmp_path / "home").mkdir()
    env = child_env(tmp_path / "home")
    venv = tmp_path / "venv"
    ok([sys.executable, "-m", "venv", venv], tmp_path, env)
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env['PATH']}"
    install = tmp_path / "action" / ".github" / "actions" / "install.sh"
    ok(["bash", install], tmp_path, env)
    assert ok([venv / "bin" / "sweep-runner", "--version"], tmp_path, env) == "sweep-runner 4.5.6\n"
