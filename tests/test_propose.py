"""Adaptive search (`params.sample.method: tpe`): `propose` appends rounds to the lock from the
results so far, deterministically, within bounds, never repeating a point, one round at a time,
and stops at n, at stop_when and at max_failures. Run on the local backend, as a user would."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from runner.cli import main
from runner.core.aims import Aim, Aims, Goal
from runner.core.sample import Distribution, Kind, Method, Sample
from runner.search.adaptive import propose
from runner.search.points import Result, Told
from tests.conftest import PROJECT
from tests.helpers import (
    BRANIN_SEARCH,
    OBJECTIVE_HEAD,
    head,
    shown_line,
    transcripts,
    write_manifest,
)

LOSS = Aims((Aim("loss", Goal.MINIMIZE),))
BRANIN = OBJECTIVE_HEAD.format(name="branin") + BRANIN_SEARCH
LOCK = "sweeps/branin.lock.json"


def _run(root: Path, *args: str) -> int:
    return main(["-C", str(root), *args])


def _lock(root: Path) -> dict[str, object]:
    data: dict[str, object] = json.loads((root / LOCK).read_text(encoding="utf-8"))
    return data


def test_the_same_lock_and_results_propose_the_same_bytes_in_two_processes(tmp_path: Path) -> None:
    texts = []
    for copy in ("a", "b"):
        root = tmp_path / copy
        write_manifest(root, BRANIN, "branin.yaml")
        argv = [sys.executable, "-m", "runner", "-C", str(root), "propose", "--backend", "local"]
        done = subprocess.run(argv, cwd=PROJECT, capture_output=True, text=True, check=False)
        assert done.returncode == 0, done.stderr
        assert "round 0: proposed 4 point(s), 4 of n=12" in done.stderr
        texts.append((root / LOCK).read_bytes())
    assert texts[0] == texts[1]


def test_points_stay_in_bounds_never_repeat_and_spread_around_pending_ones() -> None:
    space = (
        Distribution("lr", Kind.LOG_UNIFORM, (1e-4, 1e-1)),
        Distribution("layers", Kind.INT, (2, 4)),
        Distribution("act", Kind.CHOICE, ("relu", "gelu")),
    )
    sample = Sample(Method.TPE, 12, 3, 3, space, batch=4)
    told = [Told((1e-3, 2, "relu"), Result.DONE, 0.5), Told((1e-2, 3, "gelu"), Result.PENDING)]
    new = propose(sample, LOSS, told, 10, 1)
    assert len(new) == 10 and len(set(new)) == 10
    assert not {t.row for t in told} & set(new)  # a pending point is never proposed again
    for lr, layers, act in new:
        assert isinstance(lr, float) and 1e-4 <= lr <= 1e-1
        assert layers in (2, 3, 4) and act in ("relu", "gelu")
    assert propose(sample, LOSS, told, 10, 1) == new  # deterministic in-process too
    small = Sample(Method.TPE, 12, 0, 3, (Distribution("k", Kind.INT, (1, 3)),), batch=4)
    assert sorted(propose(small, LOSS, [], 5, 0)) == [(1,), (2,), (3,)]  # the space runs out


@pytest.mark.slow
def test_rounds_wait_for_the_previous_one_and_the_search_ends_at_n(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_manifest(tmp_path, BRANIN, "branin.yaml")
    assert _run(tmp_path, "validate") == 1  # no round yet: the lock is missing
    assert "run python -m runner propose sweeps/branin.yaml" in capsys.readouterr().err
    assert _run(tmp_path, "propose", "--backend", "local") == 0
    first = (tmp_path / LOCK).read_bytes()
    assert _run(tmp_path, "propose", "--backend", "local") == 0  # nothing ran yet
    assert "round 0 has 0 of 4 point(s) finished" in capsys.readouterr().err
    assert (tmp_path / LOCK).read_bytes() == first
    for expected in (1, 2):
        assert _run(tmp_path, "submit", "sweeps/branin.yaml") == 0
        assert _run(tmp_path, "propose", "--backend", "local") == 0
        assert f"round {expected}: proposed 4 point(s)" in capsys.readouterr().err
    lock = _lock(tmp_path)
    assert lock["rounds"] == [0] * 4 + [1] * 4 + [2] * 4
    points = lock["points"]
    assert isinstance(points, list) and len({tuple(p) for p in points}) == 12
    assert _run(tmp_path, "submit", "sweeps/branin.yaml") == 0
    assert _run(tmp_path, "propose", "--backend", "local") == 0
    assert "search complete: 12 of n=12" in capsys.readouterr().err

    # Each point's round is a parameter of the results: the metric by round, as a plot.
    assert _run(tmp_path, "status", "--backend", "local", "--format", "json") == 0
    points = json.loads(capsys.readouterr().out)["sweeps"][0]["points"]
    assert sorted(p["params"]["round"] for p in points) == [0] * 4 + [1] * 4 + [2] * 4
    chart = tmp_path / "by-round.md"
    argv = [
        "status",
        "--backend",
        "local",
        "--plot",
        "value",
        "--by",
        "round",
        "--output",
        str(chart),
    ]
    assert _run(tmp_path, *argv) == 0
    assert "branin: value by round" in chart.read_text()


@pytest.mark.slow
@pytest.mark.parametrize(
    ("limit", "said"),
    [
        ("stop_when: {metric: value, below: 1000}\n", "the search stopped: branin-"),
        ("max_failures: 1\n", "the search stopped: 4 failed (max_failures 1)"),
    ],
)
def test_a_target_stop_or_the_failure_budget_ends_the_search(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], limit: str, said: str
) -> None:
    text = BRANIN + limit
    if "max_failures" in limit:
        text = text.replace(
            "[python, -m, runner.examples.objectives, branin]",
            "[python, -c, 'raise SystemExit(3)']",
        )
        text = text.replace(
            'arguments: [--x1, "{x1}", --x2, "{x2}"]', 'arguments: ["{x1}", "{x2}"]'
        )
    write_manifest(tmp_path, text, "branin.yaml")
    assert _run(tmp_path, "propose", "--backend", "local") == 0
    _run(tmp_path, "submit", "sweeps/branin.yaml")
    before = (tmp_path / LOCK).read_bytes()
    capsys.readouterr()
    assert _run(tmp_path, "propose", "--backend", "local") == 0
    assert said in capsys.readouterr().err
    assert (tmp_path / LOCK).read_bytes() == before


def test_gp_without_pytorch_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    from runner.core.errors import MissingExtra

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "torch" else real(name, *a)
    )
    space = (Distribution("x", Kind.UNIFORM, (0.0, 1.0)),)
    gp = Sample(Method.GP, 16, 0, 4, space, batch=4)
    with pytest.raises(MissingExtra, match="method gp needs PyTorch"):
        propose(gp, LOSS, [Told((0.5,), Result.DONE, 1.0)], 4, 1)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("page", "heading"),
    [("README.md", "## Adaptive search"), ("docs/search.md", "A whole search on this machine")],
)
def test_the_adaptive_run_shown_is_the_run_of_the_committed_sweep(
    tmp_path: Path, page: str, heading: str
) -> None:
    """Every command of the transcript, run as typed in a copy of the committed sweep and its
    round-0 lock, prints every line shown under it (the same points, values and rounds)."""
    (tmp_path / "sweeps").mkdir()
    for name in ("branin.yaml", "branin.lock.json"):
        shutil.copy(PROJECT / "sweeps" / name, tmp_path / "sweeps" / name)
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("BEAKER_", "GITHUB_"))}
    env.pop("CI", None)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    text = (PROJECT / page).read_text(encoding="utf-8")
    steps = transcripts(text[text.index(heading) :], "text")[0]
    assert [c.split()[3] for c, _ in steps][:3] == ["submit", "propose", "submit"]
    for command, shown in steps:
        argv = shlex.split(command)
        assert argv[:3] == ["python", "-m", "runner"], command
        done = subprocess.run(
            [sys.executable, *argv[1:]], cwd=tmp_path, env=env, capture_output=True, text=True
        )
        assert done.returncode == 0, (command, done.stderr)
        printed = {shown_line(line) for line in (done.stdout + done.stderr).splitlines()}
        assert [s for s in shown if shown_line(s) not in printed] == [], (command, done.stdout)


@pytest.mark.slow
def test_edits_between_rounds_continue_the_search_or_start_a_new_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """docs/search.md: growing n or changing batch, metric, goal or proceed continues from the
    lock; changing the space starts a new round 0, and the old points become orphans."""
    write_manifest(tmp_path, BRANIN, "branin.yaml")
    assert _run(tmp_path, "propose", "--backend", "local") == 0
    assert _run(tmp_path, "submit", "sweeps/branin.yaml") == 0
    first = _lock(tmp_path)["points"]
    edited = BRANIN.replace("n: 12", "n: 20").replace("batch: 4", "batch: 2")
    edited = edited.replace("metric: value", "metric: value\n    goal: maximize\n    proceed: 0.5")
    write_manifest(tmp_path, edited, "branin.yaml")
    assert _run(tmp_path, "validate") == 0  # the lock still belongs to the sample
    capsys.readouterr()
    assert _run(tmp_path, "propose", "--backend", "local") == 0
    assert "round 1: proposed 2 point(s), 6 of n=20" in capsys.readouterr().err
    assert _lock(tmp_path)["points"][:4] == first  # type: ignore[index]

    write_manifest(tmp_path, edited.replace("uniform: [-5, 10]", "uniform: [0, 10]"), "branin.yaml")
    assert _run(tmp_path, "validate") == 1
    assert "run python -m runner propose sweeps/branin.yaml" in capsys.readouterr().err
    assert _run(tmp_path, "propose", "--backend", "local") == 0
    assert "round 0: proposed 2 point(s), 2 of n=20" in capsys.readouterr().err
    assert _run(tmp_path, "submit", "--dry-run", "--backend", "local") == 0
    plan = capsys.readouterr().err
    assert (
        plan.count("\n-   branin-") == 4 and plan.count("\n+   branin-") == 2
    )  # old ones orphaned


@pytest.mark.parametrize("kind", ["grid", "drawn sample"])
def test_propose_on_a_sweep_that_has_nothing_to_propose_says_so_and_exits_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    """One line and exit 1 (issue 41's first week: a new user proposes on their grid)."""
    params = (
        "params:\n  grid:\n    lr: [0.1, 0.2]\n"
        if kind == "grid"
        else "params:\n  sample:\n    method: random\n    n: 2\n    seed: 0\n"
        "    space:\n      lr: {uniform: [0.1, 0.5]}\n"
    )
    task = '    command: [python, train.py]\n    arguments: ["--lr={lr}"]\n'
    write_manifest(tmp_path, head("plain", draft=True) + task + params, "plain.yaml")
    if kind != "grid":
        assert _run(tmp_path, "lock") == 0
    capsys.readouterr()
    assert _run(tmp_path, "propose", "sweeps/plain.yaml", "--backend", "local") == 1
    (line,) = capsys.readouterr().err.splitlines()
    assert line == (
        "sweeps/plain.yaml: nothing to propose: only an adaptive search (method tpe or gp) and a"
        " successive halving (params.fidelity) have rounds"
    )


CURVE = (
    (PROJECT / "sweeps" / "halving.yaml")
    .read_text()
    .replace("x2: [0.1, 0.5, 0.9]", "x2: [0.5]")
    .replace("x3: [0.1, 0.5, 0.9]", "x3: [0.5]")
)
"""The committed halving of the learning curve at 3 configurations (rung 0 runs in seconds)."""


@pytest.mark.parametrize("section", ["fidelity", "sample"])
def test_a_metric_no_finished_point_wrote_is_exit_1_naming_the_metrics_that_exist(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], section: str
) -> None:
    """Found after the first rung (or round) rather than as `none to promote`, exit 0."""
    if section == "fidelity":
        text, shown = CURVE.replace("    metric: loss\n", "    metric: val_loss\n"), "halving"
        assert text != CURVE
        field = "params.fidelity.metric"
    else:
        text, shown = BRANIN.replace("metric: value", "metric: valeu"), "branin"
        field = "params.sample.metric"
    path = write_manifest(tmp_path, text, f"{shown}.yaml")
    shown = f"sweeps/{shown}.yaml"
    if section == "sample":
        assert _run(tmp_path, "propose", "--backend", "local") == 0  # round 0: nothing to read
    assert _run(tmp_path, "submit", "--backend", "local") == 0
    lock = path.with_suffix(".lock.json")
    before = lock.read_bytes() if lock.exists() else None
    capsys.readouterr()
    assert _run(tmp_path, "propose", "--backend", "local") == 1
    err = capsys.readouterr().err.strip()
    line = next(n for n, t in enumerate(path.read_text().splitlines(), 1) if "metric: va" in t)
    wrote = "loss, resumed_from, steps_run" if section == "fidelity" else "value"
    missing = "val_loss" if section == "fidelity" else "valeu"
    assert err.startswith(f"{shown}:{line}:") and "\n" not in err
    assert err.endswith(
        f": {field}: no finished point wrote {missing} (of {3 if section == 'fidelity' else 4}"
        f" finished, in metrics.json): they wrote {wrote}; name one of those, or have the job"
        f" write {missing}"
    )
    assert (lock.read_bytes() if lock.exists() else None) == before  # nothing written
