"""`init`: a research repository becomes a sweeps repository, and its workflows work."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from runner.cli import main
from tests.conftest import PROJECT
from tests.fake_beaker.server import FakeBeaker
from tests.fake_github import FakeGitHub
from tests.github_world import REPOSITORY, GitHub, needs_node, succeeded
from tests.gitworld import World, commit_all, git
from tests.helpers import head

WRITTEN = [
    ".github/dependabot.yml",
    ".github/workflows/sweep-plan.yml",
    ".github/workflows/sweep-propose.yml",
    ".github/workflows/sweep-status.yml",
    ".github/workflows/sweep-submit.yml",
    ".gitignore",
    ".pre-commit-config.yaml",
    "schemas/sweep.schema.json",
    "sweeps/example.yaml",
]
SHA = "0123456789abcdef0123456789abcdef01234567"
GRID = (
    "# yaml-language-server: $schema=../schemas/sweep.schema.json\n"
    + head("grid")
    + """\
    command: [python, train.py, "--lr={lr}", "--seed={seed}"]
params:
  grid:
    lr: [0.1, 0.01]
    seed: [1, 2]
"""
)


def _repo(tmp_path: Path) -> Path:
    repo = tmp_path / "research"
    repo.mkdir()
    git(repo, "init", "--quiet", "--initial-branch=main")
    return repo


def _files(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".git" not in p.relative_to(root).parts[:1]
    }


def test_init_writes_a_sweeps_repository_whose_example_validates_and_runs_here(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = _repo(tmp_path)
    assert main(["init", str(repo), "--ref", "v0.1.0"]) == 0
    err = capsys.readouterr().err
    assert sorted(_files(repo)) == WRITTEN
    for name in WRITTEN:
        assert f"wrote  {name}" in err
    for words in ("Environments -> New environment `beaker`", "BEAKER_TOKEN", "SWEEP_DEPLOY_KEY"):
        assert words in err
    assert "SWEEP_PR_TOKEN" in err and '"Plan sweeps" check' in err  # the rounds' pull requests
    schema = (repo / "schemas" / "sweep.schema.json").read_text()  # it names what users run
    assert "`sweep-runner lock`" in schema and "python -m runner" not in schema
    assert "/sweeps/policy.yaml" in err  # the CODEOWNERS suggestion
    assert "pin a commit" in err  # a tag, not a commit: say how to pin
    plan = (repo / ".github/workflows/sweep-plan.yml").read_text()
    assert "allenai/beaker-sweep-runner/.github/actions/plan@v" in plan
    assert main(["-C", str(repo), "validate"]) == 0
    assert "warning" not in capsys.readouterr().err
    assert main(["-C", str(repo), "submit", "sweeps/example.yaml"]) == 0
    assert (repo / ".runs").is_dir()
    status = git(repo, "status", "--porcelain", "--untracked-files=all")
    assert ".runs" not in status and ".gitignore" in status  # the runs are ignored, not staged


def test_init_extends_a_gitignore_once_and_never_replaces_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = _repo(tmp_path)
    mine = "__pycache__/\n*.egg-info\n"
    (repo / ".gitignore").write_text(mine)
    assert main(["init", str(repo)]) == 0
    extended = (repo / ".gitignore").read_text()
    assert extended.startswith(mine) and extended.endswith("\n.runs/\n")
    assert "wrote  .gitignore" in capsys.readouterr().err
    for args in ([], ["--force"]):
        assert main(["init", str(repo), *args]) == 0
        assert (repo / ".gitignore").read_text() == extended  # once, also with --force
    (repo / ".gitignore").write_text("/.runs\n" + mine)  # the user's own line for it
    capsys.readouterr()
    assert main(["init", str(repo)]) == 0
    assert (repo / ".gitignore").read_text() == "/.runs\n" + mine
    assert "unchanged  .gitignore" in capsys.readouterr().err


@pytest.mark.parametrize("image", ["python:3.12-slim", "alpine:3.20", "ghcr.io/x/y:1-alpine"])
def test_a_code_task_on_an_image_without_git_gets_a_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], image: str
) -> None:
    repo = _repo(tmp_path)
    assert main(["init", str(repo)]) == 0
    example = repo / "sweeps/example.yaml"
    coded = example.read_text().replace("    command:", "    code: {}\n    command:", 1)
    example.write_text(coded)
    capsys.readouterr()
    assert main(["-C", str(repo), "validate"]) == 0  # init's own image has git: no warning
    assert "warning" not in capsys.readouterr().err
    example.write_text(coded.replace("docker: python:3.12}", f"docker: {image}}}"))
    assert main(["-C", str(repo), "validate"]) == 0
    (line, _) = capsys.readouterr().err.splitlines()
    assert line.startswith("sweeps/example.yaml:") and ": tasks[0].image.docker: warning: " in line
    assert f"{image} has no git, which code: needs" in line


def test_init_twice_changes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = _repo(tmp_path)
    assert main(["init", str(repo), "--ref", SHA]) == 0
    before = _files(repo)
    capsys.readouterr()
    assert main(["init", str(repo), "--ref", SHA]) == 0
    err = capsys.readouterr().err
    assert _files(repo) == before
    assert err.count("unchanged  ") == len(WRITTEN) and "wrote" not in err
    assert "pin a commit" not in err
    assert f"plan@{SHA}  # v" in (repo / ".github/workflows/sweep-plan.yml").read_text()


def test_an_edited_workflow_is_kept_and_shown_and_force_overwrites_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = _repo(tmp_path)
    assert main(["init", str(repo)]) == 0
    workflow = repo / ".github/workflows/sweep-submit.yml"
    edited = workflow.read_text().replace('cron: "*/15 * * * *"', 'cron: "0 * * * *"')
    workflow.write_text(edited)
    (repo / "sweeps/example.yaml").unlink()
    capsys.readouterr()
    assert main(["init", str(repo)]) == 1
    err = capsys.readouterr().err
    assert "differs, kept  .github/workflows/sweep-submit.yml" in err
    assert "wrote  sweeps/example.yaml" in err  # a missing file is written all the same
    assert '-    - cron: "0 * * * *"' in err and '+    - cron: "*/15 * * * *"' in err
    assert workflow.read_text() == edited
    assert main(["init", str(repo), "--force"]) == 0
    assert 'cron: "*/15 * * * *"' in workflow.read_text()


def test_init_outside_a_repository_root_is_one_line_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    assert main(["init", str(plain)]) == 1
    (line,) = capsys.readouterr().err.splitlines()
    assert line == (
        f"error: {plain} is not the root of a git repository: run `git init` there first"
        " (init writes workflows, which only work at a repository's root)"
    )
    assert not any(plain.iterdir())
    repo = _repo(tmp_path)
    (repo / "sub").mkdir()
    assert main(["init", str(repo / "sub")]) == 1
    assert not any((repo / "sub").iterdir()) and not (repo / ".github").exists()


def test_init_adds_its_hook_to_an_existing_pre_commit_config(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = _repo(tmp_path)
    mine = (
        "default_stages: [pre-commit]\nrepos:\n  - repo: https://github.com/astral-sh/ruff-pre-commit\n"
        "    rev: v0.6.0\n    hooks:\n      - id: ruff\nci:\n  autofix_prs: false\n"
    )
    (repo / ".pre-commit-config.yaml").write_text(mine)
    assert main(["init", str(repo)]) == 0
    merged = (repo / ".pre-commit-config.yaml").read_text()
    assert merged.startswith("default_stages: [pre-commit]\nrepos:\n  # Validate sweep manifests")
    assert "id: validate-sweeps" in merged and "id: ruff" in merged
    assert merged.endswith("ci:\n  autofix_prs: false\n")  # the hook went under repos:, not ci:
    capsys.readouterr()
    assert main(["init", str(repo)]) == 0
    assert (repo / ".pre-commit-config.yaml").read_text() == merged


def _beside_python(tool: str) -> str:
    """A linter the test extra installs beside this interpreter: in its environment's scripts
    directory, which need not be on PATH (a venv's python run without activating it)."""
    found = shutil.which(tool, path=sysconfig.get_path("scripts")) or shutil.which(tool)
    assert found is not None, f"{tool} is installed neither beside {sys.executable} nor on PATH"
    return found


@pytest.mark.slow
def test_the_written_workflows_pass_the_workflow_linters(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    assert main(["init", str(repo), "--ref", SHA]) == 0
    workflows = sorted(str(p) for p in (repo / ".github/workflows").glob("*.yml"))
    check_jsonschema = [sys.executable, "-m", "check_jsonschema", "--builtin-schema"]
    zizmor = [_beside_python("zizmor"), "--offline"]
    linters = [
        [*check_jsonschema, "vendor.github-workflows", *workflows],
        [*check_jsonschema, "vendor.dependabot", str(repo / ".github/dependabot.yml")],
        [*zizmor, str(repo / ".github/workflows")],
        [*zizmor, "--persona", "auditor", str(repo / ".github/workflows")],
    ]
    for argv in linters:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.slow
@needs_node
def test_a_repository_made_by_init_plans_a_pull_request_and_its_merge_submits_every_point_once(
    tmp_path: Path, fake_beaker: FakeBeaker, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The research repository's own workflow files (init's), run step by step: they call this
    repository's actions by commit, as GitHub would fetch them."""
    world = World(tmp_path)
    git(tmp_path, "init", "--quiet", "--bare", "--initial-branch=main", str(world.origin))
    git(world.origin, "config", "uploadpack.allowAnySHA1InWant", "true")
    seed = _repo(tmp_path)
    (seed / "README.md").write_text("# Our research\n")
    assert main(["init", str(seed), "--ref", SHA]) == 0
    commit_all(seed, "sweep-runner init")
    git(seed, "push", "--quiet", str(world.origin), "main")
    monkeypatch.setenv("GIT_AUTHOR_NAME", "Sweep Tester")
    api = FakeGitHub(REPOSITORY, origin=world.origin)
    try:
        github = GitHub(
            world,
            api,
            fake_beaker,
            workflows=seed / ".github" / "workflows",
            plan_workflow="sweep-plan.yml",
            submit_workflow="sweep-submit.yml",
        )
        sha = github.open_pull(1, {"sweeps/grid.yaml": GRID})
        succeeded(github.plan(1, sha).run(), "plan")
        (comment,) = api.bodies(1)
        assert "Plan: 4 to submit" in comment
        jobs = github.merge(1).run()
        succeeded(jobs, "reviewed", "submit")
        assert len(fake_beaker.count_by_name()) == 4
        assert set(fake_beaker.count_by_name().values()) == {1}
        assert world.files_changed() == ["sweeps/ledger/grid.jsonl"]
        assert "[skip ci]" in world.message()
        succeeded(github.schedule().run(), "reviewed", "submit")  # nothing more: each point once
        assert set(fake_beaker.count_by_name().values()) == {1}
    finally:
        api.close()


@pytest.mark.parametrize(
    ("version", "ref"),
    [
        ("0.2.0", "v0.2.0"),  # a release: its own tag
        ("0.2.0rc1", "v0.2.0rc1"),
        ("0.2.0.post1.dev3+g1a2b3c4d", "v0.2.0"),  # 3 commits after v0.2.0: still that release
        ("0.2.0.post1.dev3+g1a2b3c4d.d20261126", "v0.2.0"),  # ... with local edits
        ("0.0.post1.dev224+g6e17279aa", "v0.1.0"),  # no tag yet: the first release, not v0.0
        ("0+unknown", "v0.1.0"),  # a source tree, not installed
    ],
)
def test_init_pins_the_latest_release_at_or_before_the_installed_version(
    version: str, ref: str
) -> None:
    from runner import scaffold

    assert scaffold.release_ref(version) == ref
    settings = scaffold.Settings(ref=SHA, version=version, branch="main")
    assert f"plan@{SHA}  # {ref}\n" in scaffold.wanted(settings)[".github/workflows/sweep-plan.yml"]
    assert f"rev: {SHA}  # frozen: {ref}\n" in scaffold.hook_entry(SHA, version)


def test_before_any_tag_init_pins_the_first_release_the_changelog_records() -> None:
    from runner import scaffold

    first = re.findall(r"^## \[(\d[^\]]*)\]", (PROJECT / "CHANGELOG.md").read_text(), re.M)[-1]
    assert f"v{first}" == scaffold.FIRST_RELEASE


def test_init_by_default_calls_the_tag_of_the_installed_release(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from importlib.metadata import version

    from runner import scaffold

    repo = _repo(tmp_path)
    assert main(["init", str(repo)]) == 0
    installed, built = version("beaker-sweep-runner"), scaffold.built_commit()
    ref = scaffold.default_ref(installed, built)
    assert "+" not in ref and ".dev" not in ref  # a tag or a commit, never a development version
    plan = (repo / ".github/workflows/sweep-plan.yml").read_text()
    assert f"/.github/actions/plan@{ref}" in plan
    if not scaffold.released(installed) and built is not None:  # this editable install
        assert ref == built and f"plan@{built}  # unreleased {installed}\n" in plan


@pytest.mark.parametrize(
    ("version", "commit", "ref"),
    [
        ("0.2.0", SHA, "v0.2.0"),  # a release pins its tag, whatever commit it was built from
        ("0.2.0rc1", SHA, "v0.2.0rc1"),
        ("0.2.0.post1.dev3+g1a2b3c4d", SHA, SHA),  # after v0.2.0: the build's own commit
        ("0.0.post1.dev224+g6e17279aa", SHA, SHA),  # no tag at all: not v0.1.0
        ("0.0.post1.dev224+g6e17279aa", None, "v0.1.0"),  # its commit unknown: as before
        ("0+unknown", None, "v0.1.0"),  # a source tree, not installed
    ],
)
def test_an_unreleased_build_pins_the_commit_it_was_built_from(
    version: str, commit: str | None, ref: str
) -> None:
    from runner import scaffold

    assert scaffold.default_ref(version, commit) == ref
