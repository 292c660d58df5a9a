"""The package as users install it: a wheel built from this tree, installed in a fresh virtual
environment, used from a research repository elsewhere; and the pre-commit hook, which installs
it the same way. Every other test runs on the editable install, which hides missing package data.

Dependencies come from the package index through pip's own cache (the real user's, not the
test's HOME), so a warm run takes seconds per install; with an empty cache they download, in an
environment without the fake Beaker's CA (tests/builds.py). The tests print how long they took:
figures, not asserts.
"""

from __future__ import annotations

import os
import sys
import sysconfig
import tarfile
import time
import zipfile
from pathlib import Path

import pytest

from tests.builds import TRUST, child_env, ok, run, tagged_source
from tests.conftest import PROJECT
from tests.fake_beaker.certs import CertBundle
from tests.gitworld import git
from tests.helpers import head

pytestmark = pytest.mark.slow

TAG = "v9.8.7"
"""The tag the source is built at: the version comes from it (setuptools-scm)."""

# A research repository's own package named `runner`: `python -m runner` there imports it.
SHADOW = 'raise ImportError("the research repository\'s own runner package was imported")\n'
TRAIN = """\
import json, os, pathlib, sys
lr = float(sys.argv[1].split("=", 1)[1])
out = pathlib.Path(os.environ["RESULTS_DIR"]) / "metrics.json"
out.write_text(json.dumps({"final_loss": round(1 / lr, 3)}))
"""
TASK = """\
    command: [python, train.py]
    arguments: ["--lr={lr}"]
params:
  grid:
    lr: [0.1, 0.5]
"""
SAMPLED = (
    head("search", draft=True)
    + """\
    command: [python, train.py]
    arguments: ["--lr={lr}"]
params:
  sample:
    method: random
    n: 2
    seed: 0
    space:
      lr: {uniform: [0.1, 0.5]}
"""
)
BROKEN = """\
version: 1
name: broken
beaker:
  workspace: ai2/research
  clusters: [ai2/test-cluster]
tasks:
  - image: {beaker: org/image}
    command: [python, train.py]
    replicas: many
"""


def _research_repo(root: Path) -> Path:
    (root / "runner").mkdir(parents=True)
    (root / "runner" / "__init__.py").write_text(SHADOW)
    (root / "train.py").write_text(TRAIN)
    (root / "sweeps").mkdir()
    (root / "sweeps" / "demo.yaml").write_text(head("demo", draft=True) + TASK)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "research code and a first sweep")
    return root


def _check_contents(dist: Path) -> Path:
    """The wheel holds every data file of the package tree and every schema; the sdist, every
    schema (the wheel is built from it, so it holds the rest). Returns the wheel."""
    (wheel,) = dist.glob("*.whl")
    (sdist,) = dist.glob("*.tar.gz")
    shipped = set(zipfile.ZipFile(wheel).namelist())
    tree = (PROJECT / "runner").rglob("*")
    data = [p for p in tree if p.is_file() and p.suffix not in (".py", ".pyc")]
    assert {p.relative_to(PROJECT).as_posix() for p in data} - shipped == set()
    schemas = sorted(p.name for p in (PROJECT / "schemas").glob("*.json"))
    assert schemas and {f"runner/schemas/{s}" for s in schemas} <= shipped
    with tarfile.open(sdist) as archive:
        in_sdist = {Path(*Path(n).parts[1:]).as_posix() for n in archive.getnames()}
    assert {f"schemas/{s}" for s in schemas} <= in_sdist
    return wheel


def test_the_built_wheel_works_from_a_research_repository(
    tmp_path: Path, fake_beaker_ca: CertBundle
) -> None:
    started = time.monotonic()
    env = child_env(tmp_path / "home")
    # The session trusts the fake Beaker's CA; pip, which reaches the package index, must not.
    assert os.environ["REQUESTS_CA_BUNDLE"] == str(fake_beaker_ca.ca_path)
    assert not set(TRUST) & set(env) and "BEAKER_TOKEN" not in env
    dist = tmp_path / "dist"
    ok(
        [sys.executable, "-m", "build", "--no-isolation", "-o", dist, tagged_source(tmp_path, TAG)],
        tmp_path,
        env,
    )
    wheel = _check_contents(dist)
    built = time.monotonic()

    venv = tmp_path / "venv"
    ok([sys.executable, "-m", "venv", "--without-pip", venv], tmp_path, env)
    python, tool = venv / "bin" / "python", venv / "bin" / "sweep-runner"
    ok([sys.executable, "-m", "pip", "--python", python, "install", "-q", wheel], tmp_path, env)
    installed = time.monotonic()
    where = ok([python, "-c", "import runner; print(runner.__file__)"], tmp_path, env).strip()
    purelib = ok(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], tmp_path, env
    )
    assert Path(where).is_relative_to(purelib.strip()) and not Path(where).is_relative_to(PROJECT)
    assert sysconfig.get_paths()["purelib"] != purelib.strip()  # not the test's environment

    repo = _research_repo(tmp_path / "research")
    assert ok([tool, "--version"], repo, env) == f"sweep-runner {TAG[1:]}\n"
    ok([tool, "validate"], repo, env)
    assert ok([tool, "expand", "--plan"], repo, env).count("\n+ ") == 2
    submitted = ok([tool, "submit", "sweeps/demo.yaml"], repo, env)
    assert submitted.count("created demo-") == 2 and "failed" not in submitted
    status = ok([tool, "status", "sweeps/demo.yaml"], repo, env)
    rows = [line.split() for line in status.splitlines() if line.startswith("=   demo-")]
    assert sorted(row[2] for row in rows) == ["succeeded", "succeeded"], status
    assert sorted(row[6] for row in rows) == ["10", "2"]  # final_loss, read from the results dir

    # Without the [plot] extra, a plot is one line and exit 1; no file.
    plot = run([tool, "status", "--plot", "final_loss", "--output", "loss.png"], repo, env)
    assert plot.returncode == 1 and plot.stdout == ""
    assert plot.stderr.splitlines() == [
        "error: plotting to a file needs matplotlib: pip install 'beaker-sweep-runner[plot]'"
    ]
    assert not (repo / "loss.png").exists()

    # A sweep that is not a draft, with no token: one line, exit 1, nothing run.
    (repo / "sweeps" / "real.yaml").write_text(head("real") + TASK)
    real = run([tool, "submit", "sweeps/real.yaml"], repo, env)
    assert real.returncode == 1 and len(real.stderr.splitlines()) == 1
    assert "--backend local" in real.stderr and not (repo / ".runs" / "real").exists()

    # A sampled sweep without its lock: the hint names the installed command.
    (repo / "sweeps" / "search.yaml").write_text(SAMPLED)
    missing = run([tool, "validate"], repo, env)
    assert missing.returncode == 1, missing.stderr
    assert "missing: run sweep-runner lock sweeps/search.yaml to write it" in missing.stderr

    # Why README says "use sweep-runner": `python -m` puts the repository first on sys.path.
    shadowed = run([python, "-m", "runner", "--version"], repo, env)
    assert shadowed.returncode != 0 and "research repository's own runner" in shadowed.stderr
    print(
        f"wheel and sdist built in {built - started:.1f}s, installed in {installed - built:.1f}s,"
        f" commands run in {time.monotonic() - installed:.1f}s"
    )


def test_pre_commit_try_repo_passes_a_valid_manifest_and_names_the_line_of_a_broken_one(
    tmp_path: Path,
) -> None:
    """The hook of .pre-commit-hooks.yaml, installed by pre-commit from this repository (as a
    research repository's .pre-commit-config.yaml would), on a valid and on a broken manifest."""
    started = time.monotonic()
    env = {**child_env(tmp_path / "home"), "PRE_COMMIT_HOME": str(tmp_path / "pre-commit")}
    hook = "validate-sweeps"
    pre_commit: list[str | Path] = [sys.executable, "-m", "pre_commit", "try-repo", PROJECT, hook]
    repo = _research_repo(tmp_path / "research")
    passed = run([*pre_commit, "--all-files"], repo, env)
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "validate sweep manifests" in passed.stdout and "Passed" in passed.stdout
    installed = time.monotonic()

    (repo / "sweeps" / "broken.yaml").write_text(BROKEN)
    git(repo, "add", "-A")
    failed = run([*pre_commit, "--all-files"], repo, env)
    assert failed.returncode == 1 and "Failed" in failed.stdout
    assert "sweeps/broken.yaml:9:15: tasks[0].replicas:" in failed.stdout, failed.stdout
    print(
        f"try-repo: hook installed and passed in {installed - started:.1f}s,"
        f" failed in {time.monotonic() - installed:.1f}s"
    )


def test_init_from_a_build_without_a_tag_pins_the_commit_it_was_built_from(tmp_path: Path) -> None:
    """A development build (no tag: 0.0.post1.devN) is no release, and the release before it
    lacks what it has: `init` writes `@<the whole commit>` and says it is unreleased."""
    env = child_env(tmp_path / "home")
    source = tagged_source(tmp_path, None)
    commit = ok(["git", "rev-parse", "HEAD"], source, env).strip()
    dist = tmp_path / "dist"
    ok(
        [sys.executable, "-m", "build", "--wheel", "--no-isolation", "-o", dist, source],
        tmp_path,
        env,
    )
    (wheel,) = dist.glob("*.whl")
    unpacked = tmp_path / "unpacked"
    zipfile.ZipFile(wheel).extractall(unpacked)
    assert (unpacked / "runner" / "scaffold" / "_build.txt").read_text().splitlines()[
        1
    ] == f"g{commit}"
    repo = tmp_path / "research"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    env["PYTHONPATH"] = str(unpacked)  # the build, ahead of the test's editable install
    code = (
        "import runner, sys; from runner.cli import main; print(runner.__file__); sys.exit(main())"
    )
    done = run([sys.executable, "-c", code, "init", str(repo)], repo, env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(str(unpacked))
    plan = (repo / ".github" / "workflows" / "sweep-plan.yml").read_text()
    assert f"/.github/actions/plan@{commit}  # unreleased 0.0.post1.dev1+g" in plan
    hook = (repo / ".pre-commit-config.yaml").read_text()
    assert f"rev: {commit}  # frozen: unreleased" in hook
    assert "note: this beaker-sweep-runner is unreleased (0.0.post1.dev1+g" in done.stderr
