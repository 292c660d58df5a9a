"""`report`: a sweep's results page from the same observation as `status`. The acceptance sweep
(sweeps/bowl.yaml: loss = 10 (x - 0.3)^2 + 0.001 y on a 6 x 4 grid) runs for real on the local
backend; the page, its CSV, its images and its JSON are read back, with fANOVA and without
Optuna, with PNG images and without matplotlib."""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from runner.analysis import findings
from runner.cli import main
from runner.commands.report import ReportArgs, aim
from runner.core.aims import Aim, Aims, Goal
from runner.core.errors import RunnerError
from runner.core.sample import Distribution, Kind, Method, Sample
from runner.core.search import Adaptive, Search
from runner.observe.model import ROUND, Observation, PointResult, point_state
from runner.report import charts, page, plot
from runner.search import ranking
from runner.search.ranking import Estimator
from tests.charts import check_xychart, image_checks
from tests.conftest import PROJECT
from tests.fake_beaker.server import FakeBeaker
from tests.helpers import SWEEP, head, write_manifest

XS = [0.0, 0.1, 0.2, 0.3, 0.4, 0.5]
YS = [1, 2, 3, 4]


@pytest.fixture(scope="module")
def bowl(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """sweeps/bowl.yaml submitted and run to the end on the local backend."""
    root = tmp_path_factory.mktemp("bowl")
    (root / "sweeps").mkdir()
    shutil.copy(PROJECT / "sweeps" / "bowl.yaml", root / "sweeps" / "bowl.yaml")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PYTHONPATH", str(PROJECT))
        assert main(["-C", str(root), "submit", "sweeps/bowl.yaml", "--backend", "local"]) == 0
    return root


def _report(root: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> str:
    capsys.readouterr()
    argv = ["-C", str(root), "report", "--backend", "local", "--metric", "loss", *extra]
    assert main([*argv, "--goal", "minimize"]) == 0
    return capsys.readouterr().out


def _json(root: Path, capsys: pytest.CaptureFixture[str]) -> Any:
    (sweep,) = json.loads(_report(root, capsys, "--format", "json"))["sweeps"]
    return sweep


def test_the_page_names_the_best_point_links_two_pngs_and_a_csv_of_every_point(
    bowl: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "report"
    assert _report(bowl, capsys, "--output", str(out)) == ""  # the files say it all
    text = (out / "bowl.md").read_text()
    assert len(text) < page.LIMIT
    best = text.split("### Best point\n\n", 1)[1].splitlines()[0]
    assert "`loss` = **0.001** at `x=0.3 y=1`" in best
    images = [
        line[line.index("](") + 2 : -1] for line in text.splitlines() if line.startswith("![")
    ]
    assert images == ["bowl-parallel.png", "bowl-progress.png"]
    for name in images:
        image_checks(out / name)
    assert "[CSV](bowl.csv)" in text and "```mermaid" not in text
    rows = list(csv.DictReader(io.StringIO((out / "bowl.csv").read_text())))
    assert len(rows) == 24 and {r["state"] for r in rows} == {"succeeded"}
    assert {(float(r["param.x"]), int(r["param.y"])) for r in rows} == {
        (x, y) for x in XS for y in YS
    }
    for r in rows:
        x, y = float(r["param.x"]), int(r["param.y"])
        assert float(r["metric.loss"]) == pytest.approx(10 * (x - 0.3) ** 2 + 0.001 * y)
        assert r["url"].startswith("file://") and r["commit"]


def _acceptance(sweep: Any, method: Estimator) -> None:
    assert sweep["best"]["params"] == {"x": 0.3, "y": 1}
    importance = sweep["importance"]
    assert importance["method"] == method
    values = importance["values"]
    assert values["x"] >= 0.8 and values["x"] > values["y"]
    assert sum(values.values()) == pytest.approx(1, abs=0.05)
    assert len(sweep["points"]) == 24 and len(sweep["top"]) == 10


def test_json_gives_the_best_point_and_fanova_importance(
    bowl: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("sklearn")
    _acceptance(_json(bowl, capsys), Estimator.FANOVA)


def test_without_optuna_importance_is_the_main_effects_share_and_meets_the_same_bar(
    bowl: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "optuna", None)  # as if the [adaptive] extra were missing
    sweep = _json(bowl, capsys)
    _acceptance(sweep, Estimator.VARIANCE)


def test_without_matplotlib_the_page_draws_mermaid_charts_and_writes_no_image(
    bowl: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    out = tmp_path / "report"
    _report(bowl, capsys, "--output", str(out))
    assert sorted(p.name for p in out.iterdir()) == ["bowl.csv", "bowl.md", "index.html"]
    text = (out / "bowl.md").read_text()
    printed = _report(bowl, capsys)  # without --output: the page on stdout, with no CSV link
    assert printed.count("```mermaid") == text.count("```mermaid") and "[CSV]" not in printed
    blocks = [b.split("```", 1)[0] for b in text.split("```mermaid\n")[1:]]
    assert len(blocks) >= 2 and 'y-axis "best loss so far"' in blocks[0]
    for block in blocks:
        check_xychart(block)


# -- the findings, pure ------------------------------------------------------------------------


def _point(
    i: int, params: dict[str, Any], state: str, loss: float | None, **more: float
) -> PointResult:
    metrics = {**({} if loss is None else {"loss": loss}), **more}
    return PointResult(
        "=",
        f"s-{i}",
        f"k{i}",
        tuple(params.items()),
        point_state(state),
        None,
        None,
        metrics,
        f"u/{i}",
    )


def _results(
    points: list[PointResult],
    axes: tuple[str, ...] = ("x", "y"),
    sample: Sample | None = None,
    objective: Aim | None = None,
) -> Observation:
    aims = Aims((objective or Aim("loss", Goal.MINIMIZE),))
    search = Search() if sample is None else Search(Adaptive(sample), aims)
    return Observation("s", "sweeps/s.yaml", False, axes, tuple(points), search=search)


def test_failed_running_and_unsubmitted_points_are_shown_never_dropped() -> None:
    points = [
        _point(i, {"x": x, "y": y}, "succeeded", 10 * (x - 0.3) ** 2 + 0.001 * y)
        for i, (x, y) in enumerate((x, y) for x in XS for y in YS)
    ]
    points[3] = _point(3, {"x": 0.0, "y": 4}, "failed", None)
    points[7] = _point(7, {"x": 0.1, "y": 4}, "running", 0.5)  # a metric while running
    points[9] = _point(9, {"x": 0.2, "y": 2}, "not submitted", None)
    f = findings.find(_results(points), "loss", Goal.MINIMIZE)
    assert len(f.ranked) == 21 and f.best is not None and f.best.experiment == "s-12"
    text = page.markdown(f, {})
    assert "### Not finished (3)" in text
    for name, state in (("s-3", "failed"), ("s-7", "running"), ("s-9", "not submitted")):
        assert re.search(rf"\| `{name}` +\| {state} ", text), name
    data = json.loads(page.render_json([f]))["sweeps"][0]
    assert [p["state"] for p in data["points"]] == [p.state for p in points]


def test_too_few_finished_points_are_not_judged() -> None:
    points = [_point(i, {"x": i / 10, "y": i}, "succeeded", float(i)) for i in range(4)]
    points.append(_point(4, {"x": 0.9, "y": 9}, "failed", None))
    for estimator in Estimator:
        imp = findings.find(_results(points), "loss", Goal.MINIMIZE, estimator).importance
        assert imp.judged == () and imp.note == (
            "too few finished points to judge (4; 5 needed for 2 parameter(s))"
        )
        assert [s.name for s in imp.shares] == ["x", "y"]  # listed, with why
    text = page.markdown(findings.find(_results(points), "loss", Goal.MINIMIZE), {})
    assert "_Not judged: too few finished points to judge (4; 5 needed" in text


def test_main_effects_give_a_noise_parameter_nothing_and_bin_sampled_values() -> None:
    rows = [(x / 50, (x * 7919) % 13) for x in range(50)]  # x sampled (unique); y arbitrary
    values = [r[0] ** 2 for r in rows]
    imp = ranking.main_effects(["x", "y"], rows, values)
    assert dict(imp.shares)["x"] > 0.95 and imp.method == Estimator.VARIANCE
    flat = ranking.main_effects(["x", "y"], rows, [1.0] * 50)
    assert flat.shares == () and "same value" in flat.note


def test_an_adaptive_search_progresses_by_round_and_keeps_its_log_axis() -> None:
    points = [
        _point(i, {"lr": lr, ROUND: k}, "succeeded", loss)
        for i, (lr, k, loss) in enumerate(
            [(1e-4, 0, 3.0), (1e-2, 0, 2.0), (1e-3, 1, 2.5), (3e-3, 1, 1.0), (5e-3, 2, 1.5)]
        )
    ]
    space = (Distribution("lr", Kind.LOG_UNIFORM, (1e-4, 1e-1)),)
    sample = Sample(Method.TPE, 8, 0, 4, space, batch=2)
    results = _results(points, ("lr", ROUND), sample, Aim("loss", Goal.MAXIMIZE))
    assert findings.defaults(results, None) == "loss"
    f = findings.find(results, "loss", Goal.MINIMIZE)
    assert f.by_round and f.params == ("lr",) and f.log == ("lr",)
    assert [(s.x, s.value, s.best) for s in f.progress] == [
        (0, 2.0, 2.0),
        (1, 1.0, 1.0),
        (2, 1.5, 1.0),
    ]
    check_xychart(page_chart(f))


def page_chart(f: findings.Findings) -> str:
    return charts.mermaid(charts.progress_chart(f)).split("```mermaid\n")[1].split("```")[0]


def test_the_page_stays_under_githubs_limit_for_thousands_of_points() -> None:
    long = "v" * 150
    points = [
        _point(i, {"x": i, "y": f"{long}{i}"}, "failed" if i % 2 else "succeeded", float(i))
        for i in range(5000)
    ]
    f = findings.find(_results(points), "loss", Goal.MINIMIZE)
    text = page.markdown(f, {})
    assert len(text) < page.LIMIT
    assert "### Not finished (2500)" in text and "more: see the CSV or `status`" in text
    # the best so far stays; the chart of 2 500 points by x would pass the limit alone
    assert text.count("```mermaid") == 1 and page.LEFT_OUT in text


def test_a_page_too_long_even_then_is_cut_with_a_note() -> None:
    wide = {f"p{j}": f"{j}" + "w" * 190 for j in range(100)}
    points = [_point(i, {**wide, "x": i}, "succeeded", float(i)) for i in range(10)]
    f = findings.find(_results(points, ("x", *wide)), "loss", Goal.MINIMIZE)
    text = page.markdown(f, {})
    assert len(text) < page.LIMIT and text.endswith(page.CUT)


def test_a_metric_no_point_has_is_a_one_line_error_and_writes_nothing(
    bowl: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "report"
    argv = [
        "-C",
        str(bowl),
        "report",
        "--backend",
        "local",
        "--metric",
        "los",
        "--output",
        str(out),
    ]
    assert main(argv) == 1
    captured = capsys.readouterr()
    assert captured.err == "error: no point has a numeric metric 'los' (metrics: loss)\n"
    assert captured.out == "" and not out.exists()


@pytest.mark.parametrize("option", ["--output", "--optuna-storage"])
def test_an_output_that_cannot_be_written_is_one_line_exit_1(
    bowl: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], option: str
) -> None:
    """An --output that is a file (or a study under one) is the user's to fix, not a bug."""
    taken = tmp_path / "taken"
    taken.write_text("mine\n")
    target = taken if option == "--output" else taken / "study.db"
    argv = ["-C", str(bowl), "report", "--backend", "local"]
    argv += ["--metric", "loss", "--goal", "minimize"]
    assert main([*argv, option, str(target)]) == 1
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith(f"error: cannot write {target}: ")
    assert taken.read_text() == "mine\n"


def _comparable(page_text: str) -> str:
    """The page with run directories shortened as the docs show them, and table padding
    collapsed (it depends on the length of the run directory's path)."""
    shown = re.sub(r"file://\S*?/\.runs/bowl/", "file:///…/", page_text)
    return re.sub(r"-+", "-", re.sub(r" +", " ", shown))


def test_the_docs_show_the_page_this_command_makes_with_its_images(
    bowl: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("sklearn")  # the docs' page was made with fANOVA
    out = tmp_path / "report"
    _report(bowl, capsys, "--output", str(out))
    made = (out / "bowl.md").read_text().replace("](bowl", "](report/bowl")
    docs = (PROJECT / "docs" / "results.md").read_text(encoding="utf-8")
    shown = docs.split("<!-- report:start -->\n", 1)[1].split("<!-- report:end -->", 1)[0]
    assert _comparable(shown) == _comparable(made)
    for name in ("bowl-parallel.png", "bowl-progress.png"):
        image_checks(PROJECT / "docs" / "report" / name)
    rows = list(csv.DictReader(io.StringIO((PROJECT / "docs" / "report" / "bowl.csv").read_text())))
    assert len(rows) == 24


@pytest.mark.parametrize("name", ["study.db", "study.log"])
def test_optuna_storage_writes_the_sweep_as_a_study_the_dashboard_opens(
    bowl: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    optuna = pytest.importorskip("optuna")
    path = tmp_path / name
    for _ in range(2):  # written again, the study is replaced, not doubled
        _report(bowl, capsys, "--format", "json", "--optuna-storage", str(path))
    if name.endswith(".db"):
        storage: Any = f"sqlite:///{path}"
    else:
        from optuna.storages.journal import JournalFileBackend

        storage = optuna.storages.JournalStorage(JournalFileBackend(str(path)))
    study = optuna.load_study(study_name="bowl", storage=storage)
    assert len(study.trials) == 24 and study.best_params == {"x": 0.3, "y": 1}
    assert study.best_value == pytest.approx(0.001)


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("study.db", "not a database\n"),
        ("study.log", "not a journal\n"),
        ("study.log", "{}\n"),
        ("study.log", '{"op_code": 99}\n'),
    ],
)
def test_optuna_storage_that_is_another_kind_of_file_is_one_line_exit_1_and_kept(
    bowl: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, text: str
) -> None:
    pytest.importorskip("optuna")
    path = tmp_path / name
    path.write_text(text)
    argv = ["-C", str(bowl), "report", "--backend", "local"]
    argv += ["--metric", "loss", "--goal", "minimize"]
    capsys.readouterr()
    assert main([*argv, "--format", "json", "--optuna-storage", str(path)]) == 1
    lines = capsys.readouterr().err.splitlines()
    assert lines[-1] == f"error: {path}: not an Optuna SQLite database or journal file"
    assert [line for line in lines if "error" in line] == lines[-1:]
    assert path.read_text() == text


def test_optuna_storage_without_optuna_is_refused_before_anything_is_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "optuna", None)
    argv = ["-C", str(tmp_path), "report", "--optuna-storage", str(tmp_path / "s.db")]
    assert main(argv) == 1  # no sweeps/ here: the extra is checked first
    assert capsys.readouterr().err == (
        "error: --optuna-storage needs Optuna: pip install 'beaker-sweep-runner[adaptive]'\n"
    )


def test_a_study_is_told_finished_failed_and_pending_points_and_skips_unsubmitted_ones() -> None:
    from runner.search.points import Result

    points = [
        _point(0, {"x": 0.1, "y": 1}, "succeeded", 0.5),
        _point(1, {"x": 0.2, "y": 1}, "succeeded", None),  # no metric: a failed trial
        _point(2, {"x": 0.3, "y": 1}, "failed", None),
        _point(3, {"x": 0.4, "y": 1}, "running", 0.1),
        _point(4, {"x": 0.5, "y": 1}, "not submitted", None),
    ]
    f = findings.find(_results(points), "loss", Goal.MINIMIZE)
    assert [(t.row, t.result, t.value) for t in findings.told_findings(f)] == [
        ((0.1, 1), Result.DONE, 0.5),
        ((0.2, 1), Result.FAILED, None),
        ((0.3, 1), Result.FAILED, None),
        ((0.4, 1), Result.PENDING, None),
    ]
    assert [d.kind for d in f.space] == ["uniform", "int"]


def test_an_absent_conditional_parameter_has_its_own_labelled_place_below_the_axis() -> None:
    heights, ticks = charts.axis_positions([0.9, None, 0.99, None], log=False)
    assert heights[0] == 0 and heights[2] == 1  # the present values span the axis as before
    assert heights[1] == heights[3] == charts.ABSENT_AT < 0
    assert ticks[-1] == (charts.ABSENT_AT, "(absent)")
    assert charts.axis_positions([None], log=False) == (
        [charts.ABSENT_AT],
        [(charts.ABSENT_AT, "(absent)")],
    )


def test_parallel_coordinates_space_categories_evenly_and_place_log_parameters_by_their_log(
    tmp_path: Path,
) -> None:
    pytest.importorskip("matplotlib")
    heights, ticks = charts.axis_positions([1e-4, 1e-2, 1e-3, 1e-2], log=True)
    assert heights == pytest.approx([0, 1, 0.5, 1])
    assert [t for _, t in ticks] == ["0.0001", "0.001", "0.01 (log)"]
    heights, ticks = charts.axis_positions(["sgd", "adam", "lion", "adam"], log=False)
    assert heights == [0, 0.5, 1, 0.5] and [t for _, t in ticks] == ["sgd", "adam", "lion"]
    space = (
        Distribution("lr", Kind.LOG_UNIFORM, (1e-4, 1e-1)),
        Distribution("opt", Kind.CHOICE, ("sgd", "adam", "lion")),
    )
    sample = Sample(Method.TPE, 12, 0, 4, space, batch=4)
    points = [
        _point(i, {"lr": 10 ** -(1 + i % 4), "opt": ("sgd", "adam", "lion")[i % 3]}, "succeeded", i)
        for i in range(12)
    ]
    f = findings.find(_results(points, ("lr", "opt"), sample), "loss", Goal.MINIMIZE)
    assert f.log == ("lr",)
    plot.parallel(f, tmp_path / "parallel.png")
    plot.progress(f, tmp_path / "progress.png")
    for name in ("parallel.png", "progress.png"):
        image_checks(tmp_path / name)


def test_the_cli_spells_the_goals_of_the_search() -> None:
    from runner.commands.arguments import GOALS

    assert tuple(Goal) == GOALS  # spelled twice only because `--help` loads no search


CONDITIONAL = """\
version: 1
name: cond
draft: true
beaker:
  workspace: ai2/sweep-quickstart
  clusters: [ai2/jupiter]
tasks:
  - name: objective
    image: {docker: python:3.12}
    command: [python, -m, runner.examples.objectives, bowl, --metric, loss]
    arguments: [--x1, "{x}", "--x2={mom}"]
params:
  grid:
    x: [0.0, 0.1, 0.2, 0.3, 0.4, 0.5]
    opt: [adamw, sgd]
    mom: {values: [1, 2], when: {opt: sgd}}
"""


@pytest.mark.parametrize("fanova", [True, False], ids=["fanova", "main-effects"])
def test_a_conditional_parameter_absent_from_a_point_is_judged_and_written_as_absent(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    fanova: bool,
) -> None:
    """Issue 34 meets issue 33: `mom` exists only for sgd; the page, its CSV, its images and
    its JSON are made, and the absent value is neither None nor ''."""
    (tmp_path / "sweeps").mkdir()
    (tmp_path / "sweeps" / "cond.yaml").write_text(CONDITIONAL)
    monkeypatch.setenv("PYTHONPATH", str(PROJECT))
    if fanova:
        pytest.importorskip("sklearn")
    else:
        monkeypatch.setitem(sys.modules, "optuna", None)
    assert main(["-C", str(tmp_path), "submit", "sweeps/cond.yaml", "--backend", "local"]) == 0
    out = tmp_path / "report"
    assert _report(tmp_path, capsys, "--output", str(out)) == ""
    rows = list(csv.DictReader(io.StringIO((out / "cond.csv").read_text())))
    assert len(rows) == 18
    assert {r["param.mom"] for r in rows if r["param.opt"] == "adamw"} == {""}
    assert {r["param.mom"] for r in rows if r["param.opt"] == "sgd"} == {"1", "2"}
    sweep = _json(tmp_path, capsys)
    assert sweep["best"]["params"] == {"x": 0.3, "opt": "adamw"}
    importance = sweep["importance"]
    assert importance["method"] == (Estimator.FANOVA if fanova else Estimator.VARIANCE)
    values = importance["values"]
    assert values["x"] >= 0.8 and values["x"] + values["opt"] == pytest.approx(1, abs=0.05)
    (mom,) = [p for p in importance["parameters"] if p["name"] == "mom"]
    assert mom["condition"] == "when opt: sgd" and mom["points"] == 12  # never dropped
    assert mom["method"] == Estimator.VARIANCE  # 12 points are too few for a forest


# -- --against REV: the metric then and now ---------------------------------------------------

EDITED = SWEEP.replace("lr: [0.1, 0.01, 0.001]", "lr: [0.01, 0.001, 0.0001]")


def _git(root: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True)
    return done.stdout.strip()


def _submit_and_commit(root: Path, fake: FakeBeaker, text: str, loss: float) -> str:
    """The manifest submitted on the fake Beaker, each new experiment finished with `loss` plus
    its lr, and everything committed; the commit."""
    write_manifest(root, text, "exact.yaml")
    before = {e.id for e in fake.experiments()}
    assert main(["-C", str(root), "submit", "--backend", "beaker"]) == 0
    for exp in fake.experiments():
        if exp.id not in before:
            lr = float(json.loads(exp.spec_json)["tasks"][0]["command"][2].split("=")[1])
            fake.set_job_status(exp.id, "succeeded")
            fake.set_metrics(exp.id, {"loss": loss + lr})
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", f"loss {loss}")
    return _git(root, "rev-parse", "HEAD")


def _against(root: Path, rev: str, capsys: pytest.CaptureFixture[str]) -> Any:
    """`report --against rev` run with `-C root` (the sweeps' root, or a directory under it)."""
    capsys.readouterr()
    argv = ["-C", str(root), "report", "--backend", "beaker"]
    argv += ["--metric", "loss", "--goal", "minimize"]
    assert main([*argv, "--against", rev, "--format", "json"]) == 0
    (sweep,) = json.loads(capsys.readouterr().out)["sweeps"]
    return sweep


def _lr(pair: dict[str, Any]) -> float:
    return float(pair["params"]["lr"])


def test_against_a_revision_gives_each_point_then_and_now_and_lists_the_others(
    tmp_path: Path, fake_beaker: FakeBeaker, capsys: pytest.CaptureFixture[str]
) -> None:
    """Three ledger revisions: the grid (loss 1 + lr); lr 0.1 dropped and 0.0001 added (two new
    points, loss 1 + lr); then `revision: 1`, every point run again under new keys with the new
    code (loss 0.5 + lr). Values come from the one bulk look of `report` (never a call per
    point)."""
    _git(tmp_path, "init", "-q", "-b", "main")
    first = _submit_and_commit(tmp_path, fake_beaker, SWEEP, 1.0)
    second = _submit_and_commit(tmp_path, fake_beaker, EDITED, 1.0)
    sweep = _against(tmp_path, first, capsys)  # the same keys: the same experiments
    assert {(_lr(p), p["then"], p["now"], p["change"], p["by_params"]) for p in sweep["pairs"]} == {
        (lr, 1.0 + lr, 1.0 + lr, 0.0, False) for lr in (0.01, 0.001)
    }
    assert len(sweep["pairs"]) == 4
    assert len(sweep["only_then"]) == 2 and len(sweep["only_now"]) == 2  # lr 0.1; lr 0.0001

    bumped = EDITED.replace("name: exact\n", "name: exact\nrevision: 1\n")
    _submit_and_commit(tmp_path, fake_beaker, bumped, 0.5)
    fake_beaker.reset_calls()
    sweep = _against(tmp_path, first, capsys)
    changes = {(_lr(p), p["then"], p["now"]) for p in sweep["pairs"]}
    assert changes == {(lr, 1.0 + lr, 0.5 + lr) for lr in (0.01, 0.001)}
    assert all(p["change"] == pytest.approx(-0.5) and p["by_params"] for p in sweep["pairs"])
    assert all(p["key_then"] != p["key_now"] for p in sweep["pairs"])
    lr_of = {
        e.name: json.loads(e.spec_json)["tasks"][0]["command"][2] for e in fake_beaker.experiments()
    }
    assert {lr_of[e["experiment"]] for e in sweep["only_then"]} == {"--lr=0.1"}
    assert {lr_of[e["experiment"]] for e in sweep["only_now"]} == {"--lr=0.0001"}
    assert len(sweep["only_then"]) == 2 and len(sweep["only_now"]) == 2
    lists = [c for c in fake_beaker.calls if "List" in c or "Get" in c]
    assert len(lists) < 10, fake_beaker.calls  # pages of one look, not one call per point

    capsys.readouterr()
    argv = ["-C", str(tmp_path), "report", "--backend", "beaker"]
    argv += ["--metric", "loss", "--goal", "minimize"]
    assert main([*argv, "--against", second]) == 0
    text = capsys.readouterr().out
    assert f"## `exact` against `{second}`: `loss` (minimize)" in text
    assert text.count("-0.5 (better)") == 6 and "Only at" in text and "Only now" not in text
    assert "6 point(s) paired by their parameters" in text


@pytest.mark.parametrize("under", ["", "ml"])
def test_against_from_under_the_root_reads_the_sweeps_at_the_revision_as_from_the_root(
    tmp_path: Path, fake_beaker: FakeBeaker, capsys: pytest.CaptureFixture[str], under: str
) -> None:
    """`-C sweeps` (or a cd into it) reads the same revision as `-C` the root, the root the
    git top or a directory below it (a monorepo's)."""
    _git(tmp_path, "init", "-q", "-b", "main")
    root = tmp_path / under
    first = _submit_and_commit(root, fake_beaker, SWEEP, 1.0)
    _submit_and_commit(root, fake_beaker, EDITED, 1.0)
    at_root = _against(root, first, capsys)
    assert len(at_root["pairs"]) == 4 and len(at_root["only_then"]) == 2
    assert _against(root / "sweeps", first, capsys) == at_root


def test_against_a_revision_that_is_not_there_is_one_line_exit_1(
    tmp_path: Path, fake_beaker: FakeBeaker, capsys: pytest.CaptureFixture[str]
) -> None:
    _git(tmp_path, "init", "-q", "-b", "main")
    _submit_and_commit(tmp_path, fake_beaker, SWEEP, 1.0)
    capsys.readouterr()
    fake_beaker.reset_calls()
    argv = ["-C", str(tmp_path), "report", "--backend", "beaker", "--against", "nosuchrev"]
    assert main(argv) == 1
    assert capsys.readouterr().err == (
        "error: --against nosuchrev: no such commit in this checkout (fetch it first)\n"
    )
    assert not fake_beaker.calls  # the revision is looked for first: Beaker is never asked


def test_against_alone_judges_no_importance_it_would_not_show(
    tmp_path: Path,
    fake_beaker: FakeBeaker,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The comparison shows no importance: none is judged (fANOVA loads Optuna, scikit-learn
    and fits a forest); with --output, whose pages show it, it is."""
    _git(tmp_path, "init", "-q", "-b", "main")
    rev = _submit_and_commit(tmp_path, fake_beaker, SWEEP, 1.0)
    argv = ["-C", str(tmp_path), "report", "--backend", "beaker", "--against", rev]
    capsys.readouterr()
    assert main(argv) == 0
    shown = capsys.readouterr()

    def judged(*args: object) -> None:
        raise AssertionError("importance judged")

    monkeypatch.setattr(findings, "judge", judged)
    assert main(argv) == 0
    assert capsys.readouterr() == shown
    with pytest.raises(AssertionError, match="importance judged"):
        main(["--debug", *argv, "--output", str(tmp_path / "out")])


def test_a_metric_asked_for_takes_its_goal_from_the_sweep_or_needs_goal() -> None:
    """Issue 46: `--metric accuracy` on a sweep that minimizes loss borrowed minimize and named
    the worst accuracy best; a metric that is not one of the sweep's objectives needs `--goal`."""
    space = (Distribution("x", Kind.UNIFORM, (0.0, 1.0)),)
    sample = Sample(Method.TPE, 8, 0, 4, space, batch=2)
    points = [
        _point(i, {"x": i / 10}, "succeeded", loss, accuracy=acc)
        for i, (loss, acc) in enumerate([(0.3, 0.55), (0.2, 0.91), (0.4, 0.73)])
    ]
    results = _results(points, ("x",), sample, Aim("loss", Goal.MINIMIZE))
    with pytest.raises(RunnerError, match="accuracy is not an objective of sweep s") as caught:
        aim(results, ReportArgs(metric="accuracy"))
    assert "(it is judged by loss (minimize)): pass --goal minimize or --goal maximize" in str(
        caught.value
    )
    assert aim(results, ReportArgs(metric="loss")) == Aim("loss", Goal.MINIMIZE)
    assert aim(results, ReportArgs()) == Aim("loss", Goal.MINIMIZE)
    chosen = aim(results, ReportArgs(metric="accuracy", goal="maximize"))
    assert chosen == Aim("accuracy", Goal.MAXIMIZE)
    page = findings.find(results, chosen.metric, chosen.goal)
    assert page.best is not None and page.best.metrics["accuracy"] == 0.91
    maximizing = _results(points, ("x",), sample, Aim("accuracy", Goal.MAXIMIZE))
    assert aim(maximizing, ReportArgs(metric="accuracy")) == Aim("accuracy", Goal.MAXIMIZE)


def test_with_nothing_finished_report_hints_a_command_that_works_never_metric(
    tmp_path: Path, fake_beaker: FakeBeaker, capsys: pytest.CaptureFixture[str]
) -> None:
    """The hint `pass --metric NAME` led to `no point has a numeric metric`: the hint is now
    what brings a metric (wait for the running points; submit the others), and it works."""
    write_manifest(tmp_path, SWEEP, "exact.yaml")
    argv = ["-C", str(tmp_path), "report", "--backend", "beaker"]
    capsys.readouterr()
    assert main(argv) == 0
    said = capsys.readouterr().err
    assert "--metric" not in said
    assert "no point has finished yet, so there is no metric to rank by (6 not submitted:" in said
    hint = re.search(r"`python -m runner (submit) (\S+)`", said)
    assert hint is not None and hint.group(2) == "sweeps/exact.yaml"
    assert main(["-C", str(tmp_path), hint.group(1), hint.group(2), "--backend", "beaker"]) == 0
    capsys.readouterr()
    assert main(argv) == 0
    said = capsys.readouterr().err
    hint = re.search(r"6 queued or running: `python -m runner (wait) (\S+)`", said)
    assert hint is not None and "--metric" not in said
    for i, exp in enumerate(fake_beaker.experiments()):
        fake_beaker.set_job_status(exp.id, "succeeded")
        fake_beaker.set_metrics(exp.id, {"loss": 1.0 + i})
    waited = [hint.group(1), hint.group(2), "--backend", "beaker", "--interval", "1s"]
    assert main(["-C", str(tmp_path), *waited]) == 0
    capsys.readouterr()
    assert main([*argv, "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["sweeps"][0]["metric"] == "loss"


def test_against_says_why_no_point_pairs(
    tmp_path: Path, fake_beaker: FakeBeaker, capsys: pytest.CaptureFixture[str]
) -> None:
    """Local runs (no committed ledger), parameters all changed, and a sweep not there at REV:
    each says why nothing pairs, instead of `No point is in both` alone."""
    here = tmp_path / "here"
    here.mkdir()
    _git(here, "init", "-q", "-b", "main")
    (here / ".gitignore").write_text(".runs/\n")
    local = head("exact", draft=True).replace("{beaker: org/image}", "{docker: python}") + (
        "    command: [python, -c, 'print(1)', '--lr={lr}']\nparams:\n  grid:\n    lr: [0.1, 0.2]\n"
    )
    write_manifest(here, local, "exact.yaml")
    assert main(["-C", str(here), "submit", "--backend", "local"]) == 0
    _git(here, "add", "-A")
    _git(here, "commit", "-qm", "ran here")
    capsys.readouterr()
    assert main(["-C", str(here), "report", "--backend", "local", "--against", "HEAD"]) == 0
    out = capsys.readouterr().out
    assert "_No point is in both: the ledger at HEAD records no point of exact: nothing had" in out
    assert "or its runs were local (recorded in .runs/, which git does not keep" in out

    there = tmp_path / "there"
    there.mkdir()
    _git(there, "init", "-q", "-b", "main")
    first = _submit_and_commit(there, fake_beaker, SWEEP, 1.0)
    write_manifest(there, SWEEP.replace("lr: [0.1, 0.01, 0.001]", "lr: [0.2, 0.02]"), "exact.yaml")
    (sweep,) = json.loads(_json_against(there, first, capsys))["sweeps"]
    assert sweep["unpaired"] == (
        f"none of the 6 point(s) submitted at {first} has the parameters of one of the 4 point(s)"
        " now"
    )
    write_manifest(there, SWEEP.replace("name: exact", "name: later"), "later.yaml")
    (later,) = json.loads(_json_against(there, first, capsys, "sweeps/later.yaml"))["sweeps"]
    assert (
        later["unpaired"]
        == f"there is no sweep later at {first} (its manifest came later, or was renamed)"
    )
    assert later["pairs"] == []


def _json_against(root: Path, rev: str, capsys: pytest.CaptureFixture[str], *paths: str) -> str:
    capsys.readouterr()
    argv = ["-C", str(root), "report", "--backend", "beaker"]
    argv += ["--against", rev, "--format", "json", *paths]  # nothing to rank now: no --metric
    assert main(argv) == 0
    return capsys.readouterr().out
