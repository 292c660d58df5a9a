"""A search that starts from what is known and weighs what it costs: a warm start from another
sweep's finished points (`seed_from`, copied into the lock at round 0), two objectives and
constraints given to Optuna's samplers. The sweeps run on the local backend in a git repository
of their own, as a user's would; the search's effect is measured in-process on Branin."""

from __future__ import annotations

import json
import random
import statistics
from dataclasses import replace
from pathlib import Path

import pytest

from runner.cli import main
from runner.core.aims import Aim, Aims, Bound, Constraint, Goal
from runner.core.locked import Locked, Seed, Seeds
from runner.core.sample import Distribution, Kind, Method, Sample
from runner.examples.objectives import BRANIN_MIN, branin, curve, zdt1
from runner.manifest.seeds import LeftOut, Seeding
from runner.report.rounds import Listed, seeding_lines, seeding_text
from runner.search.points import Result, Told
from runner.search.rounds import Next, RoundVerdict, SoFar, next_round
from tests.gitworld import git
from tests.helpers import BRANIN_SEARCH, OBJECTIVE_HEAD

OLD = OBJECTIVE_HEAD.format(name="old") + BRANIN_SEARCH.replace(
    "method: tpe", "method: sobol"
).replace(
    "x1: {uniform: [-5, 10]}",
    "x1: {uniform: [-5, 12]}",  # some points outside the new space
).replace("n: 12", "n: 16").replace("    batch: 4\n    metric: value\n", "")
NEW = OBJECTIVE_HEAD.format(name="new") + BRANIN_SEARCH.replace(
    "    seed: 0\n", "    seed: 0\n    seed_from: [{sweep: old}]\n"
)


def _run(root: Path, *args: str) -> int:
    return main(["-C", str(root), *args])


@pytest.fixture
def ran_old(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A repository whose sweep `old` (16 Sobol points of Branin, x1 up to 12) has run."""
    monkeypatch.setenv("PYTHONPATH", str(Path(__file__).resolve().parents[1]))
    (tmp_path / "sweeps").mkdir()
    (tmp_path / "sweeps" / "old.yaml").write_text(OLD)
    (tmp_path / "train.py").write_text("# the code the points run\n")
    (tmp_path / ".gitignore").write_text(".runs/\n")  # as `init` writes it
    git(tmp_path, "init", "-q", "-b", "main")
    assert _run(tmp_path, "lock", "sweeps/old.yaml") == 0
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-qm", "old")
    assert _run(tmp_path, "submit", "sweeps/old.yaml") == 0
    return tmp_path


@pytest.mark.slow
def test_a_warm_start_copies_what_it_learned_into_the_lock_and_lists_what_it_left_out(
    ran_old: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = ran_old
    (root / "sweeps" / "new.yaml").write_text(NEW)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "new")  # only sweeps/ changed: the same code
    capsys.readouterr()
    assert _run(root, "propose", "sweeps/new.yaml", "--backend", "local") == 0
    err = capsys.readouterr().err
    lock = json.loads((root / "sweeps" / "new.lock.json").read_text())
    seeds = lock["seeds"]
    assert seeds["metrics"] == ["value"]
    inside = [p for p in seeds["points"] if p[2][0] <= 10]
    assert len(inside) == len(seeds["points"]) >= 12, err  # the Sobol points with x1 <= 10
    left = 16 - len(seeds["points"])
    assert f"warm start: {len(seeds['points'])} prior point(s)" in err
    assert f"left out {left}: old/old-" in err and "outside the space: x1: " in err
    for sweep, key, row, (value,) in seeds["points"]:
        assert sweep == "old" and len(key) == 64 and value == pytest.approx(branin(*row))
    text = (root / "sweeps" / "new.lock.json").read_text()
    assert _run(root, "validate") == 0

    # A later change to the other sweep changes nothing here: the lock holds what was used.
    (root / "sweeps" / "old.yaml").write_text(OLD.replace("n: 16", "n: 24"))
    assert _run(root, "lock", "sweeps/old.yaml") == 0
    assert _run(root, "submit", "sweeps/old.yaml") == 0
    assert _run(root, "submit", "sweeps/new.yaml") == 0
    assert _run(root, "propose", "sweeps/new.yaml", "--backend", "local") == 0
    after = (root / "sweeps" / "new.lock.json").read_text()
    assert json.loads(after)["rounds"] == [0] * 4 + [1] * 4  # round 1 proposed from the lock
    assert _seeds_block(after) == _seeds_block(text) and json.loads(after)["seeds"] == seeds


def _seeds_block(text: str) -> str:
    """The lock's `seeds` key as written, byte for byte."""
    start = text.index('  "seeds": {')
    return text[start : text.index("\n  },\n", start)]


@pytest.mark.slow
def test_commit_same_learns_only_from_points_that_ran_this_code(
    ran_old: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = ran_old
    (root / "train.py").write_text("# the code, changed since the old points ran\n")
    (root / "sweeps" / "new.yaml").write_text(NEW)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "new code")
    capsys.readouterr()
    assert _run(root, "propose", "sweeps/new.yaml", "--backend", "local") == 0
    err = capsys.readouterr().err
    assert json.loads((root / "sweeps" / "new.lock.json").read_text())["seeds"]["points"] == []
    assert "warm start: 0 prior point(s) (none)" in err
    assert "left out 16: old/old-" in err and "another commit (" in err

    (root / "sweeps" / "new.yaml").write_text(
        NEW.replace("{sweep: old}", "{sweep: old, commit: any}")
    )
    assert _run(root, "propose", "sweeps/new.yaml", "--backend", "local") == 0
    seeded = json.loads((root / "sweeps" / "new.lock.json").read_text())["seeds"]["points"]
    assert len(seeded) >= 12


SPACE = (
    Distribution("x1", Kind.UNIFORM, (-5.0, 10.0)),
    Distribution("x2", Kind.UNIFORM, (0.0, 15.0)),
)

VALUE = Aims((Aim("value", Goal.MINIMIZE),))


def _gap_after_round_1(seed: int, prior: Seeds | None) -> float:
    """A TPE search of Branin in rounds of 8, with or without prior points: the best gap to the
    optimum among its own 16 points."""
    sample = Sample(Method.TPE, 16, seed, 4, SPACE, batch=8)
    seeding = None if prior is None else Seeding(prior)
    step = next_round(sample, VALUE, None, SoFar(seeding=seeding))
    lock = Locked(sample.digest, step.rows, step.rounds, seeds=prior)
    told = tuple(Told(r, Result.DONE, branin(*r)) for r in step.rows)  # type: ignore[arg-type]
    step = next_round(sample, VALUE, lock, SoFar(told))
    values = [branin(*r) for r in step.rows]  # type: ignore[arg-type]
    return min(values) - BRANIN_MIN


def _prior(seed: int) -> Seeds:
    """16 finished points of another sweep: a random sample of the same space."""
    draw = random.Random(1000 + seed)
    rows = [(round(draw.uniform(-5, 10), 3), round(draw.uniform(0, 15), 3)) for _ in range(16)]
    return Seeds(
        ("value",), tuple(Seed("old", f"k{i}", r, (branin(*r),)) for i, r in enumerate(rows))
    )


def test_sixteen_prior_points_lower_the_median_gap_after_round_1_over_ten_seeds() -> None:
    warm = [_gap_after_round_1(seed, _prior(seed)) for seed in range(10)]
    cold = [_gap_after_round_1(seed, None) for seed in range(10)]
    print(
        f"median gap after round 1: warm {statistics.median(warm):.3f}, cold {statistics.median(cold):.3f}"
    )
    assert statistics.median(warm) < statistics.median(cold)


def _later_share_right_of_5(constrained: bool, seed: int) -> float:
    """A TPE search of Branin in 4 rounds of 8, told (or not) that `x1 >= 5` must hold (x1 is
    reported as a metric): the share of rounds 2 and 3 with x1 >= 5."""
    limits = (Constraint("x1", Bound.AT_LEAST, 5.0),) if constrained else ()
    sample = Sample(Method.TPE, 32, seed, 4, SPACE, batch=8)
    aims = Aims(VALUE.objectives, limits)
    step = next_round(sample, aims, None, SoFar())
    for _ in range(3):
        told = tuple(
            Told(r, Result.DONE, branin(*r), excess=tuple(c.excess(float(r[0])) for c in limits))  # type: ignore[arg-type]
            for r in step.rows
        )
        step = next_round(sample, aims, Locked(sample.digest, step.rows, step.rounds), SoFar(told))
    later = [float(r[0]) for r, k in zip(step.rows, step.rounds, strict=True) if k >= 2]  # type: ignore[arg-type]
    return sum(x >= 5 for x in later) / len(later)


def test_a_constraint_steers_the_proposals_to_where_it_holds() -> None:
    """Branin's three minima lie at x1 = -3.1, 3.1 and 9.4: told that x1 >= 5 must hold, TPE
    proposes there (Optuna reads each trial's constraint values)."""
    steered = statistics.mean(_later_share_right_of_5(True, seed) for seed in range(3))
    free = statistics.mean(_later_share_right_of_5(False, seed) for seed in range(3))
    assert steered >= 0.75 and free <= 0.4, (steered, free)


def test_two_objectives_propose_from_a_multi_objective_study_and_keep_a_pareto_set() -> None:
    """ZDT1 (both minimised) with `f1 <= 0.3`: there is no one best point but a set, of
    feasible points only."""
    space = tuple(Distribution(f"x{i}", Kind.UNIFORM, (0.0, 1.0)) for i in range(1, 4))
    aims = (Aim("f1", Goal.MINIMIZE), Aim("f2", Goal.MINIMIZE))
    limit = Constraint("f1", Bound.AT_MOST, 0.3)
    sample = Sample(Method.TPE, 24, 0, 4, space, batch=8)
    both = Aims(aims, (limit,))
    step = next_round(sample, both, None, SoFar())
    for _ in range(2):
        told = []
        for row in step.rows:
            f1, f2 = zdt1([float(v) for v in row])  # type: ignore[arg-type]
            told.append(Told(row, Result.DONE, f1, values=(f1, f2), excess=(limit.excess(f1),)))
        locked = Locked(sample.digest, step.rows, step.rounds)
        step = next_round(sample, both, locked, SoFar(tuple(told)))
    assert len(step.rows) == 24 and len(set(step.rows)) == 24
    assert step.best is None and step.front
    assert all(t.feasible and float(t.row[0]) <= 0.3 for t in step.front)  # type: ignore[arg-type]
    values = [t.values for t in step.front]
    assert all(
        not (a[0] <= b[0] and a[1] <= b[1] and a != b) for a in values for b in values
    )  # no member of the set dominates another


HALVED = (
    (Path(__file__).resolve().parents[1] / "sweeps" / "halving.yaml")
    .read_text()
    .replace("x2: [0.1, 0.5, 0.9]", "x2: [0.5]")
    .replace("x3: [0.1, 0.5, 0.9]", "x3: [0.5]")
)
"""The committed halving of the learning curve at 3 configurations: rungs of 3, 1, 1 and 1
points at 100, 300, 900 and 2 700 steps."""
FROM_HALVING = (
    OBJECTIVE_HEAD.format(name="after")
    + """\
    command: [python, -m, runner.examples.objectives, curve, --metric, loss]
    arguments: [--x1, "{x1}", --x2, "{x2}", --x3, "{x3}", "--steps=2700"]
params:
  sample:
    method: tpe
    n: 8
    batch: 4
    metric: loss
    seed_from: [{sweep: halving, commit: any}]
    space:
      x1: {uniform: [0, 1]}
      x2: {uniform: [0, 1]}
      x3: {uniform: [0, 1]}
"""
)


@pytest.mark.slow
def test_a_warm_start_from_a_halving_learns_its_full_length_points_only_and_lists_every_other(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """13 priors at 30, 90 and 270 steps were taken as equals, and the left-out list was cut to
    `and 12 more`: now only the last rung's points are priors, each other point is left out
    with its rung, in the pull request and, with --verbose, on propose's lines."""
    monkeypatch.setenv("PYTHONPATH", str(Path(__file__).resolve().parents[1]))
    (tmp_path / "sweeps").mkdir()
    (tmp_path / "sweeps" / "halving.yaml").write_text(HALVED)
    for _ in range(4):  # rung 0, then each promotion and its run
        assert _run(tmp_path, "submit", "sweeps/halving.yaml") == 0
        assert _run(tmp_path, "propose", "sweeps/halving.yaml") == 0
    assert "halving complete: rung 3 (steps=2700) is the last" in capsys.readouterr().err
    (tmp_path / "sweeps" / "after.yaml").write_text(FROM_HALVING)
    outputs = tmp_path / "outputs"
    monkeypatch.setenv("GITHUB_OUTPUT", str(outputs))
    assert _run(tmp_path, "propose", "sweeps/after.yaml", "--verbose") == 0
    err = capsys.readouterr().err.splitlines()
    lock = json.loads((tmp_path / "sweeps" / "after.lock.json").read_text())
    (prior,) = lock["seeds"]["points"]  # the one point of rung 3, at 2 700 steps
    assert prior[0] == "halving" and prior[3] == [pytest.approx(curve(prior[2], 2700))]
    assert "sweeps/after.yaml: warm start: 1 prior point(s) (1 from halving)" in err
    at = err.index("sweeps/after.yaml: left out 5:")
    listed = err[at + 1 : at + 6]
    whys = sorted(line.split(": ", 2)[2] for line in listed)
    assert whys == [
        *["rung 0 of 3 (steps=100): a shorter run than the full length (steps=2700)"] * 3,
        "rung 1 of 3 (steps=300): a shorter run than the full length (steps=2700)",
        "rung 2 of 3 (steps=900): a shorter run than the full length (steps=2700)",
    ]
    assert (
        "sweeps/after.yaml: halving is a successive halving: only its last rung's points"
        " (steps=2700) are priors, its shorter rungs' are left out" in err
    )
    assert not any("steps, rung" in line for line in err)  # the budget is not "unread"
    body = outputs.read_text()
    assert body.count("a shorter run than the full length") == 5
    assert "past what GitHub's body holds" not in body


def test_propose_names_a_few_left_out_points_verbose_every_one_and_the_pull_request_all() -> None:
    left = tuple(LeftOut("old", f"old-{i:03}", "not finished (failed)") for i in range(400))
    step = Next(RoundVerdict.PROPOSED, 0, (), (), seeding=Seeding(Seeds(("value",), ()), left))
    (_, short) = seeding_lines(step)
    assert short.endswith(
        "old/old-004: not finished (failed); and 395 more (propose --verbose lists every one)"
    )
    every = seeding_lines(step, Listed.EVERY)
    assert every[1:] == [
        "left out 400:",
        *(f"  old/old-{i:03}: not finished (failed)" for i in range(400)),
    ]
    text = seeding_text(step)
    assert all(f"| `old` | `old-{i:03}` | not finished (failed) |" in text for i in range(400))
    many = replace(step, seeding=Seeding(Seeds(("value",), ()), left * 10))
    cut = seeding_text(many)  # 4 000 rows: as many as GitHub's body holds, and the rest said
    listed = cut.count("| not finished (failed) |")
    assert 400 < listed < 4000 and len(cut) < 45_000
    assert f"…and {4000 - listed} more, past what GitHub's body holds" in cut
