"""What a search starts from and weighs, as a manifest says it (`runner.manifest.known`,
`runner.manifest.aims`, `runner.plan.sources`): known points checked against the space and
placed first, byte for byte; objectives, constraints and warm-start sources checked by
`validate`, each problem one line naming file:line:col and the field."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from runner import yaml12
from runner.cli import main
from runner.core.aims import Aim, Aims, Goal
from runner.core.errors import Exit
from runner.core.locked import Locked
from runner.core.sample import Distribution, Kind, Method, Sample
from runner.manifest import Locks
from runner.manifest.lock import lock_path
from runner.plan import catalog
from runner.search.points import Result, Told
from runner.search.rounds import RoundVerdict, SoFar, next_round
from tests.conftest import PROJECT
from tests.helpers import head, write_manifest

SPACE = """\
    space:
      optim: {choice: [adamw, sgd]}
      lr: {log_uniform: [1e-5, 1e-2]}
      momentum: {uniform: [0.8, 0.99], when: {optim: sgd}}
      layers: {int: [2, 8]}
"""


def _sweep(name: str, sample: str, method: str = "tpe") -> str:
    task = '    command: [python, train.py, "--optim={optim}", "--lr={lr}", "--layers={layers}",'
    task += ' "--momentum={momentum?none}"]\n'
    adaptive = "    batch: 4\n    metric: loss\n" if method == "tpe" else ""
    return (
        head(name, draft=True)
        + task
        + f"params:\n  sample:\n    method: {method}\n    n: 8\n{adaptive}"
        + sample
        + SPACE
    )


def _errors(root: Path, capsys: pytest.CaptureFixture[str]) -> list[str]:
    assert main(["-C", str(root), "validate"]) == Exit.USER_ERROR
    return [line for line in capsys.readouterr().err.splitlines() if line]


@pytest.mark.parametrize(
    ("point", "said"),
    [
        ("{optim: adamw, lr: 0.5, layers: 4}", "params.sample.enqueue[0].lr: 0.5 is outside"),
        ("{optim: lion, lr: 3.0e-4, layers: 4}", "enqueue[0].optim: 'lion' is not one of"),
        ("{optim: adamw, lr: 3.0e-4, layers: 4.5}", "enqueue[0].layers: 4.5 is not an integer"),
        ("{optim: adamw, lr: 3.0e-4}", "params.sample.enqueue[0]: missing 'layers'"),
        (
            "{optim: adamw, lr: 3.0e-4, layers: 4, momentum: 0.9}",
            "enqueue[0].momentum: 'momentum' exists only when optim: sgd",
        ),
        ("{optim: sgd, lr: 3.0e-4, layers: 4}", "params.sample.enqueue[0]: missing 'momentum'"),
        ("{optim: adamw, lr: 3.0e-4, layers: 4, wd: 0.1}", "'wd' is not a sampled parameter"),
    ],
)
def test_a_known_point_outside_the_space_is_one_line_naming_its_place(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], point: str, said: str
) -> None:
    write_manifest(tmp_path, _sweep("known", f"    enqueue: [{point}]\n"), "known.yaml")
    errors = _errors(tmp_path, capsys)
    found = [e for e in errors if said in e]
    assert len(found) == 1, errors
    assert re.match(r"^sweeps/known\.yaml:\d+:\d+: ", found[0])
    assert "Traceback" not in "\n".join(errors)


def test_two_known_points_alike_and_more_than_n_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    point = "{optim: adamw, lr: 3.0e-4, layers: 4}"
    text = _sweep("known", f"    enqueue: [{point}, {point}]\n").replace("n: 8", "n: 1")
    write_manifest(tmp_path, text, "known.yaml")
    errors = "\n".join(_errors(tmp_path, capsys))
    assert "params.sample.enqueue[1]: the same point as enqueue[0]" in errors
    assert "params.sample.n: n=1 is fewer than the 1" not in errors  # one point is left
    text = text.replace(f", {point}]", ", {optim: adamw, lr: 3.0e-4, layers: 5}]")
    write_manifest(tmp_path, text, "known.yaml")
    assert "params.sample.n: n=1 is fewer than the 2 enqueued point(s)" in "\n".join(
        _errors(tmp_path, capsys)
    )


@pytest.mark.parametrize("method", ["sobol", "tpe"])
def test_known_points_are_the_first_points_of_the_lock_byte_for_byte(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], method: str
) -> None:
    """As written, not rounded to `digits` (3.1416e-4 keeps its five digits), the first points
    of a drawn lock, round 0 of an adaptive one; the plan marks them (enqueued)."""
    known = "{optim: sgd, lr: 3.1416e-4, layers: 3, momentum: 0.9}, {optim: adamw, lr: 0.001, layers: 8}"
    text = _sweep("known", f"    digits: 2\n    enqueue: [{known}]\n", method)
    path = write_manifest(tmp_path, text, "known.yaml")
    argv = ["lock"] if method == "sobol" else ["propose", "--backend", "local"]
    assert main(["-C", str(tmp_path), *argv]) == 0
    lock = lock_path(path).read_text()
    rows = json.loads(lock)["points"]
    assert rows[:2] == [["sgd", 0.00031416, 0.9, 3], ["adamw", 0.001, None, 8]]
    assert '    ["sgd", 0.00031416, 0.9, 3],\n    ["adamw", 0.001, null, 8],' in lock
    assert json.loads(lock)["enqueued"] == 2 and len(rows) == (8 if method == "sobol" else 4)
    assert len({json.dumps(r) for r in rows}) == len(rows)  # never drawn or proposed again
    capsys.readouterr()
    assert main(["-C", str(tmp_path), "expand", "--plan"]) == 0
    plan = capsys.readouterr().out
    marked = [line for line in plan.splitlines() if "(enqueued)" in line]
    assert len(marked) == 2 and "lr=0.00031416" in marked[0] and "lr=0.001 " in marked[1]


def test_a_lock_from_before_known_points_still_reads(tmp_path: Path) -> None:
    """A section without `enqueue` or `seed_from` has the digest it had: its lock stays valid."""
    text = _sweep("plain", "", "sobol")
    write_manifest(tmp_path, text, "plain.yaml")
    assert main(["-C", str(tmp_path), "lock"]) == 0
    lock = (tmp_path / "sweeps" / "plain.lock.json").read_text()
    assert '"enqueued"' not in lock and '"seeds"' not in lock
    assert main(["-C", str(tmp_path), "validate"]) == 0


@pytest.mark.parametrize(
    ("lines", "said"),
    [
        (
            '    constraints: ["peak_mem_gb < 78"]\n',
            "params.sample.constraints[0]: 'peak_mem_gb < 78' is not a constraint",
        ),
        ("    goal: [minimize, maximize]\n", "params.sample.goal: 2 goal(s) for 1 metric(s)"),
        (
            "    seed_from: [{sweep: elsewhere}]\n",
            "params.sample.seed_from[0].sweep: no sweep named 'elsewhere' in this repository",
        ),
        (
            "    seed_from: [{sweep: searched}]\n",
            "sweep 'searched' is this search itself",
        ),
        (
            "    seed_from: [{sweep: other}]\n",
            "sweep 'other' reports accuracy, not loss",
        ),
    ],
)
def test_objectives_constraints_and_sources_are_checked_by_validate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], lines: str, said: str
) -> None:
    other = _sweep("other", "", "tpe").replace("metric: loss", "metric: accuracy")
    write_manifest(tmp_path, other, "other.yaml")
    write_manifest(tmp_path, _sweep("searched", lines), "searched.yaml")
    errors = _errors(tmp_path, capsys)
    found = [e for e in errors if said in e]
    assert len(found) == 1, errors
    assert re.match(r"^sweeps/searched\.yaml:\d+:\d+: ", found[0])


@pytest.mark.parametrize(
    "source",
    [
        "version: 1\nname: other\nparams: [x]\n",
        "version: 1\nname: other\nparams: {sample: {metric: 3, constraints: [1, {a: b}]}}\n",
    ],
)
def test_a_source_that_is_not_a_valid_manifest_is_said_in_its_own_lines_not_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], source: str
) -> None:
    """A warm start's source is read as YAML only, so its shapes are whatever was written."""
    write_manifest(tmp_path, source, "other.yaml")
    write_manifest(tmp_path, _sweep("searched", "    seed_from: [{sweep: other}]\n"), "s.yaml")
    errors = _errors(tmp_path, capsys)
    assert any(e.startswith("sweeps/other.yaml:") for e in errors), errors
    assert not any("unexpected error" in e for e in errors), errors


def test_a_warm_starts_sources_are_checked_from_the_documents_already_loaded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each manifest is parsed once per command: naming the sources reads no file again."""
    grid = head("grid", draft=True) + "    command: [python, t.py, '{lr}']\n"
    write_manifest(tmp_path, grid + "params:\n  grid:\n    lr: [0.1]\n", "grid.yaml")
    text = _sweep("searched", "    seed_from: [{sweep: grid, commit: any}]\n")
    write_manifest(tmp_path, text, "searched.yaml")
    read: list[Path] = []
    real = yaml12.load_file

    def counted(path: Path, shown: str) -> Any:
        read.append(path)
        return real(path, shown)

    monkeypatch.setattr(yaml12, "load_file", counted)
    cat = catalog.load(tmp_path, (), Locks.MAY_BE_STALE)
    assert not cat.problems and sorted(cat.loaded) == ["grid", "searched"]
    assert read == []


def test_a_manifest_that_cannot_be_read_is_one_line_beside_a_warm_start(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_manifest(tmp_path, _sweep("searched", "    seed_from: [{sweep: searched}]\n"), "s.yaml")
    (tmp_path / "sweeps" / "b.yaml").mkdir()
    errors = _errors(tmp_path, capsys)
    assert any(e.startswith("sweeps/b.yaml:") and "cannot read" in e for e in errors), errors
    assert not any("unexpected error" in e for e in errors), errors


def test_a_source_that_declares_no_metric_or_reports_gpu_hours_is_accepted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A grid without `stop_when` may report anything (its points are read when seeding); every
    sweep reports the built-in `gpu_hours`."""
    grid = (
        head("grid", draft=True)
        + "    command: [python, t.py, '{lr}']\nparams:\n  grid:\n    lr: [0.1]\n"
    )
    write_manifest(tmp_path, grid, "grid.yaml")
    text = _sweep("searched", "    seed_from: [{sweep: grid, commit: any}]\n").replace(
        "metric: loss", "metric: [loss, gpu_hours]"
    )
    write_manifest(tmp_path, text, "searched.yaml")
    assert main(["-C", str(tmp_path), "propose", "--backend", "local"]) == 0
    assert main(["-C", str(tmp_path), "validate"]) == 0, capsys.readouterr().err


def test_two_objectives_and_a_warm_start_need_an_adaptive_method(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = _sweep(
        "drawn", "    metric: [loss, gpu_hours]\n    seed_from: [{sweep: drawn}]\n", "sobol"
    )
    write_manifest(tmp_path, text, "drawn.yaml")
    errors = "\n".join(_errors(tmp_path, capsys))
    assert (
        "params.sample.metric: method sobol draws its points without looking at results" in errors
    )
    assert "params.sample.seed_from: method sobol draws its points" in errors


def test_a_known_point_is_never_proposed_again_however_small_the_space() -> None:
    """Six integers, n=6, rounds of 2: every value once, the known one first (round 0) and
    never again, though TPE would like it (it is the best)."""
    sample = Sample(
        Method.TPE,
        6,
        0,
        4,
        (Distribution("k", Kind.INT, (1, 6)),),
        batch=2,
        enqueue=((3,),),
    )
    loss = Aims((Aim("loss", Goal.MINIMIZE),))
    step = next_round(sample, loss, None, SoFar())
    assert step.new[0] == (3,) and step.number == 0
    while step.verdict is RoundVerdict.PROPOSED and len(step.rows) < sample.n:
        told = tuple(Told(r, Result.DONE, abs(float(r[0] or 0) - 3)) for r in step.rows)
        step = next_round(sample, loss, Locked(sample.digest, step.rows, step.rounds), SoFar(told))
    assert sorted(step.rows) == [(k,) for k in range(1, 7)]
    assert step.rows[0] == (3,) and step.rows.count((3,)) == 1


@pytest.mark.parametrize(("known", "proposed"), [(1, 3), (2, 2), (4, 0), (5, 0)])
def test_round_0_holds_batch_points_the_known_ones_first_as_the_docs_say(
    known: int, proposed: int
) -> None:
    """docs/search.md said `up to batch points besides` the known ones: round 0 holds `batch`
    points in all (or the known ones, when there are more)."""
    sample = Sample(
        Method.TPE,
        12,
        0,
        4,
        (Distribution("k", Kind.INT, (1, 100)),),
        batch=4,
        enqueue=tuple((i,) for i in range(1, known + 1)),
    )
    step = next_round(sample, Aims((Aim("loss", Goal.MINIMIZE),)), None, SoFar())
    assert len(step.new) == max(sample.batch, known) == known + proposed
    assert step.new[:known] == sample.enqueue
    page = " ".join((PROJECT / "docs" / "search.md").read_text().split())
    assert (
        "round 0 of an adaptive search, which holds `batch` points, the known ones and as many"
        in page
    )
    assert "besides them" not in page
