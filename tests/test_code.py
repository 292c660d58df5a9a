"""`code:` on a task: the experiment runs the sweep repository's code at the commit that
submitted it, on the fake Beaker (the commit and repository in every spec, the ledger and
`status`) and locally (a clone of the commit, so an edit after committing does not run)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from runner import ledger
from runner.cli import main
from tests.fake_beaker.server import FakeBeaker
from tests.gitworld import World, commit_all, git, make_world, write
from tests.helpers import head

CODED = (
    head("coded")
    + """\
    code:
      setup: ["pip install -e ."]
    command: [python, train.py, "--lr={lr}"]
params:
  grid:
    lr: [0.1, 0.2, 0.3]
"""
)


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> World:
    monkeypatch.delenv("GITHUB_REPOSITORY", raising=False)
    return make_world(tmp_path)


def _run(root: Path, *args: str) -> int:
    return main(["-C", str(root), *args])


def _pushed(world: World) -> Path:
    clone = world.clone("research")
    write(clone, "sweeps/coded.yaml", CODED)
    commit_all(clone, "A sweep that runs this repository's code")
    git(clone, "push", "--quiet", "origin", "main")
    return clone


def test_each_experiment_runs_the_commit_that_submitted_it(
    world: World, fake_beaker: FakeBeaker, capsys: pytest.CaptureFixture[str]
) -> None:
    clone = _pushed(world)
    head = git(clone, "rev-parse", "HEAD")
    assert _run(clone, "submit", "sweeps/coded.yaml", "--backend", "beaker") == 0
    made = fake_beaker.experiments()
    assert len(made) == 3
    for experiment in made:
        env = experiment.env_vars
        assert env["SWEEP_CODE_COMMIT"] == head and env["SWEEP_CODE_REPO"] == str(world.origin)
        command = experiment.spec["tasks"][0]["command"]
        assert command[:2] == ["bash", "-c"] and command[3:5] == ["sweep-code", "python"]
        assert "pip install -e ." in command[2] and 'checkout -q "$SWEEP_CODE_COMMIT"' in command[2]
    entries = ledger.read(ledger.ledger_path(clone, "coded"), "coded").entries.values()
    assert {e.commit for e in entries} == {head}
    capsys.readouterr()
    assert (
        _run(clone, "status", "sweeps/coded.yaml", "--backend", "beaker", "--format", "json") == 0
    )
    points = json.loads(capsys.readouterr().out)["sweeps"][0]["points"]
    assert [p["commit"] for p in points] == [head] * 3

    # A later commit is an input of the next submit, not a drift of these points.
    write(clone, "train.py", "print('v2')\n")
    commit_all(clone, "New training code")
    assert _run(clone, "expand", "--plan", "sweeps/coded.yaml") == 0
    out = capsys.readouterr().out
    assert "Plan: 0 to submit, 3 already submitted, 0 drifted" in out
    assert "code: this repository at the commit that submits" in out


@pytest.mark.parametrize(
    "repo",
    ["allenai/open-instruct", "allenai/.github", "https://github.com/allenai/open-instruct.git"],
)
def test_code_repo_takes_owner_name_or_an_https_url(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], repo: str
) -> None:
    body = CODED.replace("      setup:", f"      repo: {repo}\n      setup:")
    write(tmp_path, "sweeps/coded.yaml", body)
    assert _run(tmp_path, "validate", "sweeps/coded.yaml") == 0, capsys.readouterr().err


@pytest.mark.parametrize("change", ["dirty", "unpushed"])
def test_a_dirty_tree_or_an_unpushed_commit_is_refused_before_anything_is_created(
    world: World, fake_beaker: FakeBeaker, capsys: pytest.CaptureFixture[str], change: str
) -> None:
    clone = _pushed(world)
    write(clone, "train.py", "print('edited')\n")
    if change == "unpushed":
        commit_all(clone, "Not pushed yet")
    else:
        git(clone, "add", "train.py")  # tracked, then edited again: differs from the commit
        commit_all(clone, "Tracked")
        git(clone, "push", "--quiet", "origin", "main")
        write(clone, "train.py", "print('edited again')\n")
    capsys.readouterr()
    assert _run(clone, "submit", "sweeps/coded.yaml", "--backend", "beaker") == 1
    err = capsys.readouterr().err.strip()
    expected = "differ from the commit" if change == "dirty" else "is on no remote branch"
    assert expected in err and "\n" not in err and "Traceback" not in err
    assert fake_beaker.experiments() == []


@pytest.mark.slow
def test_a_local_run_runs_the_committed_code_not_the_edited_file(
    world: World, capsys: pytest.CaptureFixture[str]
) -> None:
    clone = world.clone("local")
    write(
        clone,
        "sweeps/coded.yaml",
        "draft: true\n" + CODED.replace("pip install -e .", "echo ok > setup.txt"),
    )
    write(
        clone,
        "train.py",
        """\
        import json, os
        VERSION = "committed"
        out = os.environ["RESULTS_DIR"]
        os.makedirs(out, exist_ok=True)
        metrics = {"version": VERSION, "setup": open("setup.txt").read().strip()}
        json.dump(metrics, open(os.path.join(out, "metrics.json"), "w"))
        """,
    )
    write(clone, ".gitignore", ".runs/\n")
    head = commit_all(clone, "Local sweep with code")
    write(clone, "train.py", (clone / "train.py").read_text().replace("committed", "edited"))
    capsys.readouterr()
    assert _run(clone, "submit", "sweeps/coded.yaml", "--backend", "local") == 0
    warned = [line for line in capsys.readouterr().err.splitlines() if "differ" in line]
    assert (
        warned
        == [  # named once, as Beaker refuses it; the runs go ahead without the edit
            f"warning: code: tracked files differ from the commit {head[:12]} (train.py); the runs"
            " clone the commit, so they run without these changes (as on Beaker, which refuses"
            " them): commit them to run them"
        ]
    )
    assert _run(clone, "status", "sweeps/coded.yaml", "--backend", "local", "--format", "json") == 0
    points = json.loads(capsys.readouterr().out)["sweeps"][0]["points"]
    assert [p["metrics"] for p in points] == [{"version": "committed", "setup": "ok"}] * 3
    assert [p["commit"] for p in points] == [head] * 3

    # Fix, commit, run again: the next submit runs nothing (the commit is not in the key);
    # status says which points ran another commit than HEAD, and the command that reruns them.
    fixed = commit_all(clone, "The edit, committed")
    assert _run(clone, "submit", "sweeps/coded.yaml", "--backend", "local") == 0
    assert _run(clone, "status", "sweeps/coded.yaml", "--backend", "local") == 0
    out = capsys.readouterr().out
    assert out.count(f"succeeded (code {head[:12]}, not HEAD {fixed[:12]})") == 3
    first = points[0]["experiment"]
    assert (
        f"note: 3 point(s) ran a commit other than HEAD {fixed[:12]}; the next submit does not"
        " run them again (the commit is not part of a point's key): `submit --restart --points"
        f" {first} "
    ) in out
    restart = ["submit", "sweeps/coded.yaml", "--restart", "--points", first]
    assert _run(clone, *restart, "--backend", "local") == 0
    capsys.readouterr()
    assert _run(clone, "status", "sweeps/coded.yaml", "--backend", "local", "--format", "json") == 0
    points = json.loads(capsys.readouterr().out)["sweeps"][0]["points"]
    assert [p["commit"] for p in points] == [fixed, head, head]
    assert [p["metrics"]["version"] for p in points] == ["edited", "committed", "committed"]
    assert points[0]["restarts"] == 1
